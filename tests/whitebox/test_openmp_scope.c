/* Unmigrated OpenMP under a session: while an executor is installed on a
 * thread (outside callbacks), top-level OpenMP regions the thread starts use
 * the executor's effective thread count, and libomp's block time follows
 * its spin policy; both come back when the scope is left. Drives the scope
 * hooks directly (src/openmp/openmp_guard.h), then through cpuexec_session_run. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include <cpuexec.h>

#include "support/test_util.h"
#include "support/openmp_tsan.h"
#include "openmp/openmp_guard.h"
#include "support/openmp_kernels.h"
#include "executor/thread_state.h"

static int (*get_blocktime)(void);
static void (*set_blocktime)(int);

/* After the scope: the application's own settings (5 threads, block time
 * 150) are back, and the one top-level region was counted as in a session
 * (when the tool is built in), none outside. */
static void assert_restored_and_counted_once(void) {
  assert_int_equal(kernel_get_max_threads(), 5);
  assert_int_equal(get_blocktime(), 150);
  cpuexec_openmp_counters n;
  cpuexec_openmp_counters_get(&n);
#if CPUEXEC_WITH_OMPT
  assert_int_equal(n.toplevel_regions_in_sessions, 1);
#else
  assert_int_equal(n.toplevel_regions_in_sessions, 0);
#endif
  assert_int_equal(n.toplevel_regions_outside, 0);
}

static void top_level_regions_in_a_scope_use_the_executor_threads_then_restore(void **state) {
  (void)state;
  static const struct {
    uint32_t threads;
    cpuexec_spin_policy spin;
    uint64_t budget;
    int blocktime_ms;
  } rows[] = {
      {3, CPUEXEC_SPIN_PARK_IMMEDIATELY, 0, 0},
      {2, CPUEXEC_SPIN_FIXED_DURATION, 5000000, 5},  /* 5 ms */
      {3, CPUEXEC_SPIN_FIXED_DURATION, 50000, 0},    /* 50 us: rounds down to parking */
      {2, CPUEXEC_SPIN_FIXED_ITERATIONS, 1000, 0},
  };
  kernel_set_num_threads(5);
  set_blocktime(150);
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    cpuexec_executor *exec = test_executor_spin(rows[i].threads, rows[i].spin, rows[i].budget);
    cpuexec_openmp_counters_reset();
    int32_t saved[4];
    cpuexec__openmp_scope_enter(exec, saved);
    cpuexec__tls.installed = exec; /* what a scope does */
    assert_int_equal(kernel_get_max_threads(), (int)rows[i].threads);
    assert_int_equal(get_blocktime(), rows[i].blocktime_ms);
    int team = 0;
    assert_int_equal(kernel_parallel(&team), (int)rows[i].threads);
    assert_int_equal(team, (int)rows[i].threads);
    cpuexec__tls.installed = NULL;
    cpuexec__openmp_scope_leave(saved);
    assert_restored_and_counted_once();
    cpuexec_executor_release(exec);
  }
}

typedef struct session_seen {
  int team, ran, max_threads, blocktime;
} session_seen;

static int top_level_openmp(void *arg) {
  session_seen *seen = arg;
  seen->max_threads = kernel_get_max_threads();
  seen->blocktime = get_blocktime();
  seen->ran = kernel_parallel(&seen->team);
  return 0;
}

static void a_session_run_gives_top_level_openmp_its_threads_then_restores(void **state) {
  (void)state;
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = 3;
  policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
  policy.spin_policy = CPUEXEC_SPIN_FIXED_DURATION;
  policy.spin_budget = 2000000; /* 2 ms: libomp's block time becomes 2 */
  cpuexec_session *session = NULL;
  assert_int_equal(cpuexec_session_create(&policy, &session), 0);
  uint32_t threads = cpuexec_executor_effective_threads(cpuexec_session_executor(session));
  kernel_set_num_threads(5);
  set_blocktime(150);
  cpuexec_openmp_counters_reset();
  session_seen seen = {0, 0, 0, 0};
  assert_int_equal(cpuexec_session_run(session, &seen, top_level_openmp), 0);
  assert_int_equal(seen.max_threads, (int)threads);
  assert_int_equal(seen.blocktime, 2);
  assert_int_equal(seen.team, (int)threads);
  assert_int_equal(seen.ran, (int)threads);
  assert_restored_and_counted_once();
  cpuexec_session_destroy(session);
}

static int touch(void *arg, int64_t begin, int64_t end) {
  (void)begin, (void)end;
  int32_t *saved = arg;
  /* A scope entered inside a callback changes nothing: the guard owns it. */
  cpuexec__openmp_scope_enter(cpuexec__tls.installed, saved);
  return kernel_get_max_threads() == 1 ? 0 : 1;
}

static void a_scope_entered_inside_a_callback_leaves_the_guard_alone(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  int32_t saved[4] = {0, 0, 0, -1};
  assert_int_equal(cpuexec_parallel_for(exec, 1, 1, saved, touch, 1), 0);
  assert_int_equal(saved[3], 0); /* nothing saved, so leave restores nothing */
  cpuexec_executor_release(exec);
}

static int setup(void **state) {
  (void)state;
  *(void **)&get_blocktime = dlsym(RTLD_DEFAULT, "kmp_get_blocktime");
  *(void **)&set_blocktime = dlsym(RTLD_DEFAULT, "kmp_set_blocktime");
  return get_blocktime == NULL || set_blocktime == NULL;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(top_level_regions_in_a_scope_use_the_executor_threads_then_restore),
      cmocka_unit_test(a_scope_entered_inside_a_callback_leaves_the_guard_alone),
      cmocka_unit_test(a_session_run_gives_top_level_openmp_its_threads_then_restores),
  };
  return cmocka_run_group_tests_name("openmp_scope", tests, setup, NULL);
}
