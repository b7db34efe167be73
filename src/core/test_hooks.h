/* Internal: test hooks, compiled only into the white-box test build.
 *
 * A test hook is a cpuexec__test_* global that a white-box test sets to
 * steer the library (fail a thread creation, hold a worker, move a clock)
 * or reads to observe it (a count of attempts). Hooks exist only where
 * CPUEXEC_TEST_HOOKS is defined: the mk/ fragments compile the files that hold one
 * (cpuexec_hooked_sources) twice, with the macro into
 * libcpuexec_whitebox.la, which the tests of tests/whitebox/ link, and
 * without it into libcpuexec.la, which ships. The shipped library thus has
 * no hook symbol and its paths (the worker's among them) read none:
 * tests/check-test-hooks.sh proves it with nm.
 *
 * In a file that holds a hook:
 *   #if CPUEXEC_TEST_HOOKS
 *   _Atomic int cpuexec__test_thing;           (and its extern in the header,
 *   #endif                                      under the same #if)
 *   ... CPUEXEC__TEST_HOOK(cpuexec__test_thing, 0) ...
 * CPUEXEC__TEST_HOOK(hook, otherwise) is the hook's value in the test
 * build and `otherwise` (a constant) in the shipped one, so the branch it
 * feeds folds away; CPUEXEC__TEST_COUNT(counter) adds one in the test
 * build only. */
#ifndef CPUEXEC_SRC_CORE_TEST_HOOKS_H
#define CPUEXEC_SRC_CORE_TEST_HOOKS_H

#include <stdatomic.h>

#ifndef CPUEXEC_TEST_HOOKS
#define CPUEXEC_TEST_HOOKS 0
#endif

#if CPUEXEC_TEST_HOOKS
#define CPUEXEC__TEST_HOOK(hook, otherwise) atomic_load(&(hook))
#define CPUEXEC__TEST_COUNT(counter) ((void)atomic_fetch_add_explicit(&(counter), 1, memory_order_relaxed))
#else
#define CPUEXEC__TEST_HOOK(hook, otherwise) (otherwise)
#define CPUEXEC__TEST_COUNT(counter) ((void)0)
#endif

#endif
