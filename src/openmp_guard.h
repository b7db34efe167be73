/* Internal: the OpenMP hooks the executor and scopes call.
 *
 * The guard keeps OpenMP regions started inside libcpuexec callbacks to one
 * thread: before each callback it sets omp_set_num_threads(1) and
 * omp_set_max_active_levels(0) in every OpenMP runtime the process has
 * loaded, and it restores the thread's own settings when the region ends.
 * With no OpenMP runtime loaded every hook is a predictable branch. */
#ifndef CPUEXEC_SRC_OPENMP_GUARD_H
#define CPUEXEC_SRC_OPENMP_GUARD_H

#include <stdbool.h>
#include <stdint.h>

#include <cpuexec/executor.h>

typedef struct cpuexec__openmp_saved {
  int32_t num_threads[2];       /* per runtime found (libomp, libgomp) */
  int32_t max_active_levels[2];
  bool saved;
} cpuexec__openmp_saved;

/* A participant joins a region: save this thread's settings. */
void cpuexec__openmp_guard_begin(cpuexec__openmp_saved *saved);
/* Before each callback: (re)apply one thread, no active levels. */
void cpuexec__openmp_guard_callback(void);
/* The participant leaves the region: restore what begin saved. */
void cpuexec__openmp_guard_end(const cpuexec__openmp_saved *saved);

/* A scope installs exec on this thread: top-level OpenMP regions follow
 * exec's effective threads and spin policy until the scope is left.
 * saved has 4 slots owned by the scope. */
void cpuexec__openmp_scope_enter(cpuexec_executor *exec, int32_t saved[4]);
void cpuexec__openmp_scope_leave(const int32_t saved[4]);

#endif
