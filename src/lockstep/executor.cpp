#include "fieldproof/lockstep/executor.hpp"
