/* The entry point exported as data instead of a function (it would crash a host that calls it). */
#include "fieldproof/stacks/plugin_api.hpp"
FIELDPROOF_STACK_DECLARE_ABI();
__attribute__((visibility("default"))) const char fieldproof_stack_create[16] = "not code";
