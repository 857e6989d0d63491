#include "fieldproof/lockstep/coordinator.hpp"
