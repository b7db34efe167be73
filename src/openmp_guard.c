/* Placeholder until the OpenMP interop lands: no runtime is driven yet.
 * The OpenMP interop work replaces this file. */
#include "openmp_guard.h"

void cpuexec__openmp_guard_begin(cpuexec__openmp_saved *saved) { saved->saved = false; }
void cpuexec__openmp_guard_callback(void) {}
void cpuexec__openmp_guard_end(const cpuexec__openmp_saved *saved) { (void)saved; }
void cpuexec__openmp_scope_enter(cpuexec_executor *exec, int32_t saved[4]) {
  (void)exec;
  (void)saved;
}
void cpuexec__openmp_scope_leave(const int32_t saved[4]) { (void)saved; }
