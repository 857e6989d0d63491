// (being written: issue 6)
#include <gtest/gtest.h>
