/* TEMPORARY (openmp branch only): weak stand-ins for what the executor and
 * resolution areas define, so this branch links on its own. Strong
 * definitions from those areas replace them; this file is deleted when the
 * executor branch is merged. */
#include <cpuexec/executor.h>
#include <cpuexec/resolve.h>

#include "thread_state.h"

__attribute__((weak)) __thread cpuexec__thread_state cpuexec__tls;

__attribute__((weak)) uint32_t cpuexec_executor_effective_threads(const cpuexec_executor *exec) {
  (void)exec;
  return 1;
}
__attribute__((weak)) const cpuexec_resolved *cpuexec_executor_policy(const cpuexec_executor *exec) {
  (void)exec;
  return NULL;
}
__attribute__((weak)) cpuexec_resolved_spin cpuexec_resolved_spin_behaviour(const cpuexec_resolved *resolved) {
  (void)resolved;
  cpuexec_resolved_spin spin = {CPUEXEC_SPIN_PARK_IMMEDIATELY, 0, 0, false};
  return spin;
}
