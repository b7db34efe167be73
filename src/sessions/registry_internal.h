/* Internal: what sessions need from the registry beyond the public API. */
#ifndef CPUEXEC_SRC_REGISTRY_INTERNAL_H
#define CPUEXEC_SRC_REGISTRY_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cpuexec/registry.h>

#include "core/test_hooks.h"

/* 0, or the error (with its message recorded again for the calling thread)
 * of a malformed CPUEXEC_REGISTRY read when the process registry was made:
 * sessions on the process registry report it, as they report a malformed
 * CPUEXEC_POLICY. */
int cpuexec__registry_default_environment_error(void);

/* Test hook (the test build only, core/test_hooks.h): the clock idle
 * retention is timed by (nanoseconds, monotonic); NULL, the default, is
 * cpuexec__os_now_ns. A test sets it to move time by hand instead of
 * sleeping through a retention. */
typedef uint64_t (*cpuexec__clock_fn)(void);
#if CPUEXEC_TEST_HOOKS
extern _Atomic(cpuexec__clock_fn) cpuexec__test_registry_clock;
#endif

/* Test hook (the test build only): while above 0, making the process
 * registry fails as an allocation would, and the count goes down by one
 * per attempt. */
#if CPUEXEC_TEST_HOOKS
extern _Atomic int cpuexec__test_registry_alloc_fails;
#endif

#endif
