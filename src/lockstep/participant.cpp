#include "fieldproof/lockstep/participant.hpp"
