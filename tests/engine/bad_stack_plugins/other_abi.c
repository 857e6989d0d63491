/* A plugin built for another ABI version (2): refused before it is loaded. */
#include <stddef.h>
#include <stdint.h>
__attribute__((visibility("default"))) const uint32_t fieldproof_stack_abi_version = 2;
__attribute__((visibility("default"))) void* fieldproof_stack_create(const char* v, const char* p,
                                                                     const void* m, char* e,
                                                                     size_t n) {
  (void)v, (void)p, (void)m, (void)e, (void)n;
  return NULL;
}
