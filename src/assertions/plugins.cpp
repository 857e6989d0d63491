// (being written: issue 6)
#include "fieldproof/assertions/checker.hpp"
