/* A resolution's lifetime and its read accessors (resolve.h); resolve.c
 * builds it. */
#include "resolved.h"

#include <stdlib.h>

void cpuexec__resolved_free(cpuexec_resolved *r) {
  for (size_t i = 0; i < r->diagnostic_count; i++)
    free(r->diagnostics[i]);
  free(r->diagnostics);
  free(r->worker_processors);
  free(r->sharing_key);
  free(r);
}

const cpuexec_resolved *cpuexec__resolved_retain(const cpuexec_resolved *resolved) {
  if (resolved != NULL)
    atomic_fetch_add_explicit(&((cpuexec_resolved *)resolved)->refcount, 1, memory_order_relaxed);
  return resolved;
}

/* The last reference frees; acq_rel so every reader's accesses happen
 * before the free. */
CPUEXEC_EXPORT void cpuexec_resolved_destroy(cpuexec_resolved *resolved) {
  if (resolved != NULL && atomic_fetch_sub_explicit(&resolved->refcount, 1, memory_order_acq_rel) == 1)
    cpuexec__resolved_free(resolved);
}

CPUEXEC_EXPORT const cpuexec_policy *cpuexec_resolved_request(const cpuexec_resolved *resolved) {
  return resolved != NULL ? &resolved->request : NULL;
}

CPUEXEC_EXPORT int32_t cpuexec_resolved_effective_threads(const cpuexec_resolved *resolved) {
  return resolved != NULL ? (int32_t)resolved->effective_threads : 0;
}

CPUEXEC_EXPORT int32_t cpuexec_resolved_caller_processor(const cpuexec_resolved *resolved) {
  return resolved != NULL ? resolved->caller_processor : -1;
}

CPUEXEC_EXPORT const int32_t *cpuexec_resolved_worker_processors(const cpuexec_resolved *resolved,
                                                                 int32_t *count) {
  if (count != NULL)
    *count = resolved != NULL ? (int32_t)resolved->worker_processor_count : 0;
  return resolved != NULL ? resolved->worker_processors : NULL;
}

CPUEXEC_EXPORT bool cpuexec_resolved_uses_smt(const cpuexec_resolved *resolved) {
  return resolved != NULL && resolved->uses_smt;
}

CPUEXEC_EXPORT bool cpuexec_resolved_uses_efficiency_cores(const cpuexec_resolved *resolved) {
  return resolved != NULL && resolved->uses_efficiency_cores;
}

CPUEXEC_EXPORT bool cpuexec_resolved_allows_nesting(const cpuexec_resolved *resolved) {
  return resolved != NULL && resolved->allow_nested;
}

CPUEXEC_EXPORT cpuexec_resolved_spin cpuexec_resolved_spin_behaviour(const cpuexec_resolved *resolved) {
  cpuexec_resolved_spin none = {.policy = CPUEXEC_SPIN_PARK_IMMEDIATELY};
  return resolved != NULL ? resolved->spin : none;
}

CPUEXEC_EXPORT size_t cpuexec_resolved_diagnostic_count(const cpuexec_resolved *resolved) {
  return resolved != NULL ? resolved->diagnostic_count : 0;
}

CPUEXEC_EXPORT const char *cpuexec_resolved_diagnostic(const cpuexec_resolved *resolved, size_t index) {
  return resolved != NULL && index < resolved->diagnostic_count ? resolved->diagnostics[index] : NULL;
}

CPUEXEC_EXPORT const char *cpuexec_resolved_sharing_key(const cpuexec_resolved *resolved) {
  return resolved != NULL ? resolved->sharing_key : NULL;
}
