#include "fieldproof/lockstep/inprocess.hpp"
