/* TEMPORARY: reference counting of resolutions until resolve.c lands.
 * Both are weak, so the real definitions replace them when both are linked;
 * this file is deleted when the topology work is merged. */
#include <stdlib.h>

#include "resolved.h"

__attribute__((weak)) const cpuexec_resolved *cpuexec__resolved_retain(const cpuexec_resolved *resolved) {
  atomic_fetch_add(&((cpuexec_resolved *)resolved)->refcount, 1);
  return resolved;
}

__attribute__((weak)) CPUEXEC_EXPORT void cpuexec_resolved_destroy(cpuexec_resolved *resolved) {
  if (resolved && atomic_fetch_sub(&resolved->refcount, 1) == 1) {
    free(resolved->worker_processors);
    free(resolved);
  }
}
