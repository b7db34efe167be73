/* Internal: the OpenMP inline guard and scope settings, registered as one
 * runtime hook of the region primitive (src/executor/participant.h; the
 * registration is at the end of src/openmp/openmp_guard.c). Tests and benchmarks
 * drive the functions below directly.
 *
 * The guard keeps OpenMP regions started inside libcpuexec callbacks to one
 * thread: before each callback it sets omp_set_num_threads(1) and
 * omp_set_max_active_levels(0) in every OpenMP runtime the process has
 * loaded (both: max-active-levels alone deadlocks OpenBLAS, which sizes its
 * work from omp_get_max_threads()), and it restores the thread's own
 * settings when the region ends. With no OpenMP runtime loaded,
 * guard_callback and guard_end are one predictable branch each, and
 * guard_begin adds a per-thread countdown (runtime re-detection, see
 * src/openmp/openmp_runtimes.c).
 *
 * Calling protocol, on every participant of a region (the caller included),
 * on the participant's own thread:
 *
 *     cpuexec__openmp_saved saved;
 *     cpuexec__openmp_guard_begin(&saved);      // once, when it joins
 *     for each range: cpuexec__openmp_guard_callback(); fn(ctx, b, e);
 *     cpuexec__openmp_guard_end(&saved);        // once, when it leaves
 *
 * A nested call that runs inline inside a callback needs no hooks (the
 * enclosing callback is already guarded); calling them is harmless, and
 * begin/end pairs nest. guard_callback drives exactly the runtimes the
 * innermost begin on this thread saved (a thread-local mask), so a runtime
 * found in the middle of a region is never left changed on the thread. */
#ifndef CPUEXEC_SRC_OPENMP_GUARD_H
#define CPUEXEC_SRC_OPENMP_GUARD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cpuexec/executor.h>

#include "core/test_hooks.h"

typedef struct cpuexec__openmp_saved {
  int32_t num_threads[2];       /* per runtime found (libomp, libgomp) */
  int32_t max_active_levels[2];
  uint32_t runtimes;            /* bit r: runtime r was saved (0: none loaded) */
  uint32_t outer_runtimes;      /* the thread's mask before begin, put back by end */
} cpuexec__openmp_saved;

/* A participant joins a region: save this thread's settings. */
void cpuexec__openmp_guard_begin(cpuexec__openmp_saved *saved);
/* Before each callback: (re)apply one thread, no active levels, in the
 * runtimes begin saved (a callback may have called omp_set_num_threads). */
void cpuexec__openmp_guard_callback(void);
/* The participant leaves the region: restore what begin saved. */
void cpuexec__openmp_guard_end(const cpuexec__openmp_saved *saved);

/* A scope installs exec on this thread: top-level OpenMP regions follow
 * exec's effective threads and spin policy until the scope is left.
 * saved has 4 slots owned by the scope. Entering inside a callback changes
 * nothing (the guard owns the settings there). */
void cpuexec__openmp_scope_enter(cpuexec_executor *exec, int32_t saved[4]);
void cpuexec__openmp_scope_leave(const int32_t saved[4]);

/* The same as scope_enter with the numbers given: threads (0 leaves the
 * thread count alone) and libomp's block time in ms (-1 leaves it alone). */
void cpuexec__openmp_scope_apply(uint32_t threads, int blocktime_ms, int32_t saved[4]);
/* libomp block time (ms) that never spins longer than spin allows. */
int cpuexec__openmp_blocktime_for(const cpuexec_resolved_spin *spin);

#if CPUEXEC_TEST_HOOKS
extern _Atomic int cpuexec__test_guards_off;
#endif

#endif
