/* Private to the compat adapters (not installed): the one header through
 * which they reach the library beneath the public API, for three things
 * only: the region primitive (executor/participant.h), reporting a failure
 * through cpuexec_error_message() (core/error.h: cpuexec__fail), and reading
 * an adapter's own variable with the environment's one rule (core/env.h:
 * CPUEXEC_LIBRARIES_REPORT, compat/libraries.c), and finding which module
 * defines a symbol through the OS layer's loader (os/loader.h: the
 * libraries' status, compat/libraries.c; dlsym and dladdr stay in src/os/).
 *
 * How adapter callbacks enter a region. The adapters use the region
 * primitive with its one rule, as the executor does:
 *   - a callback an adapter runs itself (a serial path, on the caller, also
 *     when nested) is a region of one participant, 0 of 1, with the
 *     installed executor kept,
 *     so nested calls inside it run inline, the runtime hooks (the OpenMP
 *     inline guard among them) run, and the OMPT tool attributes OpenMP
 *     regions to it;
 *   - a callback that wraps one the executor runs for the adapter is inside
 *     that region already: it runs as it is, keeping the participant's
 *     index and count;
 *   - a callback found running outside any region (on a thread of a range
 *     executor written by the application) enters one as participant 0 of
 *     1: its thread gets the same hooks and nesting rule. A job pool knows
 *     its worker ids and enters as worker_id of worker_count instead
 *     (compat/job_pool.c). */
#ifndef CPUEXEC_COMPAT_ADAPTER_PRIVATE_H
#define CPUEXEC_COMPAT_ADAPTER_PRIVATE_H

#include "core/env.h"
#include "core/error.h"
#include "executor/participant.h"
#include "os/loader.h"

/* True inside any libcpuexec callback on this thread: parallel adapters run
 * one block inline. */
static inline bool cpuexec__compat_nested(void) { return cpuexec__participant_nested(); }

/* A serial path: fn(ctx, begin, end) on the calling thread as a region of
 * one participant (0 of 1, as the executor runs a nested or one-participant
 * call), and what fn returned. */
static inline int cpuexec__compat_run_serial(void *ctx, cpuexec_range_fn fn, int64_t begin, int64_t end) {
  return cpuexec__participant_call(NULL, 0, 1, ctx, fn, begin, end);
}

/* A wrapper's call of the kernel's callback: as it is inside a region,
 * else in a region of one participant; returns what fn returned. */
static inline int cpuexec__compat_call_in_region(void *ctx, cpuexec_range_fn fn, int64_t begin, int64_t end) {
  if (cpuexec__participant_nested()) return fn(ctx, begin, end);
  return cpuexec__participant_call(NULL, 0, 1, ctx, fn, begin, end);
}

#endif
