/* Internal: what sessions need from the registry beyond the public API. */
#ifndef CPUEXEC_SRC_REGISTRY_INTERNAL_H
#define CPUEXEC_SRC_REGISTRY_INTERNAL_H

#include <cpuexec/registry.h>

/* Adds one lease to exec when a registry shares it (the matching
 * cpuexec_executor_release() drops it) and returns true. Returns false for an
 * unshared executor from cpuexec_executor_create(), which cannot be
 * reference counted: its creator keeps it alive. The caller must already
 * hold (or run under) a lease on exec, so the pool cannot be stopping. */
bool cpuexec__registry_retain(cpuexec_executor *exec);

#endif
