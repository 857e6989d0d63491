/* A well-formed plugin whose create refuses, with a message: the host reports it, naming the
 * vehicle. */
#include <stdio.h>
#include "fieldproof/stacks/plugin_api.hpp"
FIELDPROOF_STACK_DECLARE_ABI();
__attribute__((visibility("default"))) fieldproof_stack_v1* fieldproof_stack_create(
    const char* vehicle, const char* params, const fieldproof_grid_v1* map, char* error,
    size_t size) {
  (void)params, (void)map;
  snprintf(error, size, "refuses_plugin: no parameters fit %s", vehicle);
  return NULL;
}
