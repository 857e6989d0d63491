/* An entry point but no ABI constant (a plugin from before the constant, or not ours). */
#include <stddef.h>
__attribute__((visibility("default"))) void* fieldproof_stack_create(const char* v, const char* p,
                                                                     const void* m, char* e,
                                                                     size_t n) {
  (void)v, (void)p, (void)m, (void)e, (void)n;
  return NULL;
}
