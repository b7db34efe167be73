/* Internal: what sessions need from the registry beyond the public API. */
#ifndef CPUEXEC_SRC_REGISTRY_INTERNAL_H
#define CPUEXEC_SRC_REGISTRY_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cpuexec/registry.h>

/* Adds one lease to exec when a registry shares it (the matching
 * cpuexec_executor_release() drops it) and returns true. Returns false for an
 * unshared executor from cpuexec_executor_create(), which cannot be
 * reference counted: its creator keeps it alive. The caller must already
 * hold (or run under) a lease on exec, so the pool cannot be stopping. */
bool cpuexec__registry_retain(cpuexec_executor *exec);

/* Test hook: the clock idle retention is measured on (nanoseconds,
 * monotonic); NULL, the default, is cpuexec__os_now_ns. A test sets it to
 * move time by hand instead of sleeping through a retention. */
typedef uint64_t (*cpuexec__clock_fn)(void);
extern _Atomic(cpuexec__clock_fn) cpuexec__registry_clock;

#endif
