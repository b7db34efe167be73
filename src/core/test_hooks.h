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
 * build only. A gauge (cpuexec__test_gauge) counts the threads inside some
 * stretch of code now and keeps the most there ever were at once, so a
 * test reads a bound's high-water mark instead of racing to sample it:
 * CPUEXEC__TEST_GAUGE_ENTER(gauge) and CPUEXEC__TEST_GAUGE_LEAVE(gauge)
 * bracket the stretch in the test build and are nothing in the shipped one;
 * the _IF forms count only when `cond` holds, and the shipped build does
 * not evaluate it. */
#ifndef CPUEXEC_SRC_CORE_TEST_HOOKS_H
#define CPUEXEC_SRC_CORE_TEST_HOOKS_H

#include <stdatomic.h>
#include <stdint.h>

#ifndef CPUEXEC_TEST_HOOKS
#define CPUEXEC_TEST_HOOKS 0
#endif

typedef struct cpuexec__test_gauge {
  _Atomic uint32_t now;  /* threads inside now */
  _Atomic uint32_t most; /* the most at once since a test zeroed it */
} cpuexec__test_gauge;

#if CPUEXEC_TEST_HOOKS
#define CPUEXEC__TEST_HOOK(hook, otherwise) atomic_load(&(hook))
#define CPUEXEC__TEST_COUNT(counter) ((void)atomic_fetch_add_explicit(&(counter), 1, memory_order_relaxed))
static inline void cpuexec__test_gauge_enter(cpuexec__test_gauge *g) {
  uint32_t now = atomic_fetch_add_explicit(&g->now, 1, memory_order_relaxed) + 1;
  uint32_t most = atomic_load_explicit(&g->most, memory_order_relaxed);
  while (now > most &&
         !atomic_compare_exchange_weak_explicit(&g->most, &most, now, memory_order_relaxed, memory_order_relaxed)) {
  }
}
#define CPUEXEC__TEST_GAUGE_ENTER(gauge) cpuexec__test_gauge_enter(&(gauge))
#define CPUEXEC__TEST_GAUGE_LEAVE(gauge) ((void)atomic_fetch_sub_explicit(&(gauge).now, 1, memory_order_relaxed))
#define CPUEXEC__TEST_GAUGE_ENTER_IF(cond, gauge) ((cond) ? CPUEXEC__TEST_GAUGE_ENTER(gauge) : (void)0)
#define CPUEXEC__TEST_GAUGE_LEAVE_IF(cond, gauge) ((cond) ? CPUEXEC__TEST_GAUGE_LEAVE(gauge) : (void)0)
#else
#define CPUEXEC__TEST_HOOK(hook, otherwise) (otherwise)
#define CPUEXEC__TEST_COUNT(counter) ((void)0)
#define CPUEXEC__TEST_GAUGE_ENTER(gauge) ((void)0)
#define CPUEXEC__TEST_GAUGE_LEAVE(gauge) ((void)0)
#define CPUEXEC__TEST_GAUGE_ENTER_IF(cond, gauge) ((void)0)
#define CPUEXEC__TEST_GAUGE_LEAVE_IF(cond, gauge) ((void)0)
#endif

#endif
