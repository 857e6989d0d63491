/* The in-process stack plugin ABI, version 1: what the engine dlopens. Plain C, so a plugin can
 * be built by any compiler and the engine never shares C++ types with it.
 *
 * A plugin is a shared library exporting the constant fieldproof_stack_abi_version
 * (FIELDPROOF_STACK_DECLARE_ABI() below) and
 *
 *   fieldproof_stack_v1* fieldproof_stack_create(const char* vehicle, const char* params_json,
 *                                                const fieldproof_grid_v1* map,
 *                                                char* error, size_t error_size);
 *
 * which returns a stack (or NULL, with a message in `error`), driven through its function table:
 *
 *   void* so = dlopen("libfieldproof_ugv_nav_plugin.so", RTLD_NOW | RTLD_LOCAL);
 *   auto create = (fieldproof_stack_create_fn)dlsym(so, FIELDPROOF_STACK_CREATE_SYMBOL);
 *   fieldproof_stack_v1* s = create("ugv1", "{\"controller\":{\"max_linear\":0.8}}", &grid,
 *                                   err, sizeof err);
 *   if (!s || s->abi_version != FIELDPROOF_STACK_ABI_VERSION) ...
 *   s->set_wall_clock(s, my_wall_now, my_ctx);         // optional: the steady clock otherwise
 *   for (size_t i = 0; i < s->subscription_count(s); ++i) subscribe(s->subscription(s, i));
 *   s->deliver(s, topic, stamp_ns, type, payload, size);   // each delivered message, in order
 *   s->tick(s, now_ns);                                     // at s->next_tick_ns(s)
 *   s->drain(s, publish, ctx);                              // outputs, in order
 *   s->destroy(s);
 *
 * Contracts. Times are int64 nanoseconds of simulated time (the wall clock: nanoseconds on a
 * monotonic line). Calls on one stack must be serialised by the host (no internal locking);
 * different stacks are independent. Strings passed in are copied; pointers returned (last_error,
 * subscription) stay valid until the next call on the same stack. Payloads are protobuf
 * encodings of the named types (ignition.msgs.*, fieldproof.msgs.*). Bad input (an unknown
 * topic, a payload that does not parse, bad params) is a non-zero return and a message in
 * last_error, never a crash. The stack is deterministic given its inputs; only the lifecycle
 * manager's heartbeat watchdog reads the wall clock, and check_wall lets a host run it while
 * simulated time stands still (its outputs are stamped at the last simulated time seen).
 * fieldproof's host gives a following stack (sim, realtime) the wall clock through
 * set_wall_clock and calls check_wall every 250 ms of wall time; a regulating stack (lockstep,
 * unpaced runs) gets simulated time as its "wall" clock and no check_wall calls, so a loaded
 * machine cannot fail it through a watchdog.
 *
 * The reference stack's params are UgvNavOptions as JSON (ugv_nav_stack.hpp:
 * parse_ugv_nav_options); "vehicle" there is overridden by the `vehicle` argument.
 */
#ifndef FIELDPROOF_STACKS_PLUGIN_API_HPP_
#define FIELDPROOF_STACKS_PLUGIN_API_HPP_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FIELDPROOF_STACK_ABI_VERSION 1u
#define FIELDPROOF_STACK_CREATE_SYMBOL "fieldproof_stack_create"
#define FIELDPROOF_STACK_ABI_SYMBOL "fieldproof_stack_abi_version"

/* Every plugin says which ABI it was built for with one constant, read by the engine from the
 * library file without loading it (fieldproof validate runs no code of a stack). Put
 *   FIELDPROOF_STACK_DECLARE_ABI();
 * once, at file scope, in one source file of the plugin. */
#ifdef __cplusplus
#define FIELDPROOF_STACK_DECLARE_ABI()                                                            \
  extern "C" __attribute__((visibility("default"))) const uint32_t fieldproof_stack_abi_version;  \
  extern "C" __attribute__((visibility("default"))) const uint32_t fieldproof_stack_abi_version = \
      FIELDPROOF_STACK_ABI_VERSION
#else
#define FIELDPROOF_STACK_DECLARE_ABI()                                                 \
  __attribute__((visibility("default"))) const uint32_t fieldproof_stack_abi_version = \
      FIELDPROOF_STACK_ABI_VERSION
#endif

/* The static map: a row-major occupancy grid (world::OccupancyGrid's layout): cell (ix, iy) at
 * cells[iy * width + ix] covers [origin_x + ix*resolution, ...) in x and likewise in y; 0 is
 * free, anything else occupied. Copied at create. */
typedef struct fieldproof_grid_v1 {
  double resolution;
  double origin_x;
  double origin_y;
  int32_t width;
  int32_t height;
  const uint8_t* cells;
} fieldproof_grid_v1;

typedef void (*fieldproof_stack_emit_fn)(void* user, const char* topic, int64_t stamp_ns,
                                         const char* type, const char* payload,
                                         size_t payload_size);
typedef int64_t (*fieldproof_wall_now_fn)(void* user);

typedef struct fieldproof_stack_v1 fieldproof_stack_v1;
struct fieldproof_stack_v1 {
  uint32_t abi_version; /* FIELDPROOF_STACK_ABI_VERSION */
  uint32_t struct_size; /* sizeof(fieldproof_stack_v1) as the plugin was built */
  void* impl;           /* the plugin's own state */

  /* The message of the last failed call ("" if none). */
  const char* (*last_error)(fieldproof_stack_v1* self);
  /* Topics the stack takes input on. */
  size_t (*subscription_count)(fieldproof_stack_v1* self);
  const char* (*subscription)(fieldproof_stack_v1* self, size_t index);
  /* Replaces the wall clock (the default reads the steady clock). 0 on success. */
  int (*set_wall_clock)(fieldproof_stack_v1* self, fieldproof_wall_now_fn now, void* user);
  /* A message on one of the subscribed topics. 0 when taken. */
  int (*deliver)(fieldproof_stack_v1* self, const char* topic, int64_t stamp_ns, const char* type,
                 const char* payload, size_t payload_size);
  /* The control loop at simulated time now_ns; a call before next_tick_ns does nothing. */
  int (*tick)(fieldproof_stack_v1* self, int64_t now_ns);
  int64_t (*next_tick_ns)(fieldproof_stack_v1* self);
  /* The wall-clock watchdog alone (a host's wall timer while the world is paused). */
  int (*check_wall)(fieldproof_stack_v1* self);
  /* Hands every pending output to emit, in order; returns how many. */
  size_t (*drain)(fieldproof_stack_v1* self, fieldproof_stack_emit_fn emit, void* user);
  /* The host is ending: aborts the active goal and deactivates (drain to see it). */
  int (*shutdown)(fieldproof_stack_v1* self, int64_t now_ns, const char* reason);
  /* Frees the stack; self is invalid afterwards. */
  void (*destroy)(fieldproof_stack_v1* self);
};

typedef fieldproof_stack_v1* (*fieldproof_stack_create_fn)(const char* vehicle,
                                                           const char* params_json,
                                                           const fieldproof_grid_v1* map,
                                                           char* error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* FIELDPROOF_STACKS_PLUGIN_API_HPP_ */
