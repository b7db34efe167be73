/* OpenMP kernels called from libcpuexec callbacks, with real runtimes.
 *
 * One source, three programs (mk/openmp.am):
 *   test_openmp_clang        kernels from clang -fopenmp=libomp, libomp
 *   test_openmp_gcc_libomp   kernels from gcc -fopenmp, linked with -lomp
 *   test_openmp_libgomp      kernels from gcc -fopenmp, libgomp (no OMPT)
 * In every program the regions run inline (team size 1), no OpenMP worker
 * thread starts, results are right, and the caller's own settings come
 * back. Under libomp the tool also counts every region exactly and the
 * report names the kernels; under libgomp the status says why it cannot. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <cpuexec.h>

#include "support/test_util.h"
#include "support/foreign_pool.h"
#include "support/openmp_tsan.h"
#include "support/openmp_kernels.h"

/* What the tool can count: nothing under libgomp or without the tool. */
#if defined(EXPECT_LIBGOMP) || !CPUEXEC_WITH_OMPT
#define EXPECT_NO_COUNTS 1
#endif

#define THREADS 4
#define ITEMS 64

static cpuexec_executor *exec;

typedef struct kernels_ctx {
  double x[ITEMS];
  int ran_parallel[ITEMS], team_parallel[ITEMS];
  double sums[ITEMS];
  int team_for[ITEMS];
  int ran_four[ITEMS], team_four[ITEMS];
  int max_threads_at_entry[ITEMS], max_levels_at_entry[ITEMS];
  uint32_t participant[ITEMS];
  bool set_eight; /* each callback ends with omp_set_num_threads(8) */
} kernels_ctx;

static int run_kernels(void *arg, int64_t begin, int64_t end) {
  kernels_ctx *c = arg;
  /* What the guard set up for this callback (-1: not a callback's first index). */
  c->max_threads_at_entry[begin] = kernel_get_max_threads();
  c->max_levels_at_entry[begin] = kernel_get_max_active_levels();
  for (int64_t i = begin; i < end; i++) {
    if (i > begin)
      c->max_threads_at_entry[i] = c->max_levels_at_entry[i] = -1;
    c->participant[i] = cpuexec_participant_index();
    c->ran_parallel[i] = kernel_parallel(&c->team_parallel[i]);
    c->sums[i] = kernel_parallel_for_sum(c->x, i + 1, &c->team_for[i]);
    c->ran_four[i] = kernel_num_threads4(&c->team_four[i]);
  }
  if (c->set_eight) /* legacy code that leaves its setting behind */
    kernel_set_num_threads(8);
  return 0;
}

static void check_kernels(const kernels_ctx *c) {
  for (int i = 0; i < ITEMS; i++) {
    if (c->max_threads_at_entry[i] != -1) {
      assert_int_equal(c->max_threads_at_entry[i], 1);
      assert_int_equal(c->max_levels_at_entry[i], 0);
    }
    assert_int_equal(c->ran_parallel[i], 1);
    assert_int_equal(c->team_parallel[i], 1);
    assert_true(c->sums[i] == (double)(i + 1) * (i + 2) / 2);
    assert_int_equal(c->team_for[i], 1);
    assert_int_equal(c->ran_four[i], 1);
    assert_int_equal(c->team_four[i], 1);
  }
}

static void run_region(kernels_ctx *c) {
  for (int i = 0; i < ITEMS; i++)
    c->x[i] = i + 1;
  /* Every participant must run kernels, so each one's guard is tested:
   * nobody takes over a late worker's range (executor.h). */
  assert_int_equal(cpuexec_parallel_for_flags(exec, ITEMS, 1, c, run_kernels, 0, CPUEXEC_FOR_EVERY_PARTICIPANT), 0);
}

static void kernels_in_callbacks_run_inline_on_every_participant(void **state) {
  (void)state;
  cpuexec_openmp_counters_reset();
  int tasks_before = task_baseline();
  static kernels_ctx c;
  memset(&c, 0, sizeof c);
  run_region(&c);
  check_kernels(&c);
  /* Every admitted participant runs at least one range (the flag). */
  for (uint32_t p = 0; p < THREADS; p++) {
    bool seen = false;
    for (int i = 0; i < ITEMS; i++)
      seen = seen || c.participant[i] == p;
    assert_true(seen);
  }
  assert_int_equal(wait_task_count(tasks_before), tasks_before);
  cpuexec_openmp_counters n;
  assert_int_equal(cpuexec_openmp_counters_get(&n), 0);
  assert_int_equal(n.openmp_workers_created, 0);
#ifdef EXPECT_NO_COUNTS
  assert_int_equal(n.regions_in_callbacks, 0); /* nothing to count with */
#else
  assert_int_equal(n.regions_in_callbacks, 3 * ITEMS);
  assert_int_equal(n.regions_inline, 3 * ITEMS);
  assert_int_equal(n.regions_multithreaded, 0);
  assert_int_equal(n.toplevel_regions_in_sessions + n.toplevel_regions_outside, 0);
#endif
}

/* The guard is a runtime hook of the region primitive: it runs on every
 * participant of an application's own pool as well (a plain-pthreads pool,
 * tests/support/foreign_pool.c), and gives the caller its settings back. */
static void kernels_run_inline_on_every_participant_of_a_foreign_pool(void **state) {
  (void)state;
  foreign_pool *pool = foreign_pool_create(THREADS);
  cpuexec_executor *foreign = foreign_pool_executor(pool);
  assert_non_null(foreign);
  int threads = kernel_get_max_threads(), levels = kernel_get_max_active_levels();
  kernel_set_num_threads(3);
  kernel_set_max_active_levels(2);
  cpuexec_openmp_counters_reset();
  int tasks_before = task_baseline();
  static kernels_ctx c;
  memset(&c, 0, sizeof c);
  c.set_eight = true;
  for (int i = 0; i < ITEMS; i++)
    c.x[i] = i + 1;
  assert_int_equal(cpuexec_parallel_for(foreign, ITEMS, 1, &c, run_kernels, 0), 0);
  check_kernels(&c);
  for (uint32_t p = 0; p < THREADS; p++) {
    bool seen = false;
    for (int i = 0; i < ITEMS; i++)
      seen = seen || c.participant[i] == p;
    assert_true(seen);
  }
  assert_int_equal(kernel_get_max_threads(), 3);
  assert_int_equal(kernel_get_max_active_levels(), 2);
  assert_int_equal(wait_task_count(tasks_before), tasks_before);
  cpuexec_openmp_counters n;
  assert_int_equal(cpuexec_openmp_counters_get(&n), 0);
  assert_int_equal(n.openmp_workers_created, 0);
#ifndef EXPECT_NO_COUNTS
  assert_int_equal(n.regions_in_callbacks, 3 * ITEMS);
  assert_int_equal(n.regions_inline, 3 * ITEMS);
#endif
  kernel_set_num_threads(threads);
  kernel_set_max_active_levels(levels);
  cpuexec_executor_release(foreign);
  foreign_pool_destroy(pool);
}

static void omp_set_num_threads_in_a_callback_does_not_leak_into_the_next(void **state) {
  (void)state;
  int tasks_before = task_baseline();
  static kernels_ctx c;
  memset(&c, 0, sizeof c);
  c.set_eight = true;
  for (int round = 0; round < 3; round++) {
    run_region(&c);
    check_kernels(&c); /* every callback started at 1 thread, 0 levels */
  }
  assert_int_equal(wait_task_count(tasks_before), tasks_before);
}

static void callers_own_settings_come_back_after_the_region(void **state) {
  (void)state;
  int threads = kernel_get_max_threads(), levels = kernel_get_max_active_levels();
  kernel_set_num_threads(3);
  kernel_set_max_active_levels(2);
  static kernels_ctx c;
  memset(&c, 0, sizeof c);
  run_region(&c);
  check_kernels(&c);
  assert_int_equal(kernel_get_max_threads(), 3);
  assert_int_equal(kernel_get_max_active_levels(), 2);
  kernel_set_num_threads(threads);
  kernel_set_max_active_levels(levels);
}

static void status_names_the_runtime_and_whether_detection_is_live(void **state) {
  (void)state;
  cpuexec_openmp_state s;
  assert_int_equal(cpuexec_openmp_status_get(&s), 0);
  assert_true(s.guard_active);
  assert_non_null(s.reason);
  assert_true(strlen(s.reason) > 10);
#ifdef EXPECT_LIBGOMP
  assert_false(s.libomp_loaded);
  assert_true(s.libgomp_loaded);
  assert_int_equal(s.detection, CPUEXEC_OPENMP_NO_OMPT);
  assert_false(s.live);
  assert_non_null(strstr(s.reason, "libgomp"));
#elif !CPUEXEC_WITH_OMPT
  assert_true(s.libomp_loaded);
  assert_int_equal(s.detection, CPUEXEC_OPENMP_DECLINED);
  assert_false(s.live);
  assert_non_null(strstr(s.reason, "--disable-ompt"));
#else
  assert_true(s.libomp_loaded);
  assert_int_equal(s.detection, CPUEXEC_OPENMP_LIVE);
  assert_true(s.live);
  assert_non_null(strstr(s.libomp_path, "libomp"));
#endif
  assert_int_equal(cpuexec_openmp_status_get(NULL), CPUEXEC_EINVAL);
}

static void report_names_each_kernel_with_its_counts(void **state) {
  (void)state;
  cpuexec_openmp_counters_reset();
  static kernels_ctx c;
  memset(&c, 0, sizeof c);
  run_region(&c);
  size_t n = 0;
  assert_int_equal(cpuexec_openmp_report_get(NULL, 0, &n), 0);
#ifdef EXPECT_NO_COUNTS
  assert_int_equal(n, 0);
#else
  assert_int_equal(n, 3);
  cpuexec_openmp_report_entry entries[3];
  assert_int_equal(cpuexec_openmp_report_get(entries, 3, &n), 0);
  const char *names[] = {"kernel_parallel", "kernel_parallel_for_sum", "kernel_num_threads4"};
  for (int k = 0; k < 3; k++) {
    bool found = false;
    for (size_t i = 0; i < n; i++) {
      if (strcmp(entries[i].function, names[k]) != 0)
        continue;
      found = true;
      assert_int_equal(entries[i].inline_in_callbacks, ITEMS);
      assert_int_equal(entries[i].multithreaded_in_callbacks, 0);
      assert_int_equal(entries[i].max_actual_threads, 1);
      assert_true(entries[i].max_requested_threads >= 1);
    }
    if (!found)
      fail_msg("report lacks %s", names[k]);
  }
  for (size_t i = 0; i < n; i++)
    if (strcmp(entries[i].function, "kernel_num_threads4") == 0)
      assert_int_equal(entries[i].max_requested_threads, 4);
  char text[4096];
  int length = cpuexec_openmp_report_describe(text, sizeof text);
  assert_true(length > 0 && (size_t)length < sizeof text);
  assert_non_null(strstr(text, "kernel_parallel_for_sum"));
  assert_int_equal(cpuexec_openmp_report_describe(NULL, 0), length);
#endif
}

static void top_level_regions_outside_sessions_are_not_touched(void **state) {
  (void)state;
  /* Run last: this starts real OpenMP workers on the main thread. */
  cpuexec_openmp_counters_reset();
  kernel_set_num_threads(2);
  int team = 0;
  assert_int_equal(kernel_parallel(&team), 2);
  assert_int_equal(team, 2);
#ifndef EXPECT_NO_COUNTS
  cpuexec_openmp_counters n;
  cpuexec_openmp_counters_get(&n);
  assert_int_equal(n.toplevel_regions_outside, 1);
  assert_int_equal(n.regions_in_callbacks, 0);
  assert_int_equal(n.openmp_workers_created, 1);
#endif
}

static int group_setup(void **state) {
  (void)state;
  exec = test_executor(THREADS);
  return exec == NULL;
}

static int group_teardown(void **state) {
  (void)state;
  cpuexec_executor_release(exec);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kernels_in_callbacks_run_inline_on_every_participant),
      cmocka_unit_test(kernels_run_inline_on_every_participant_of_a_foreign_pool),
      cmocka_unit_test(omp_set_num_threads_in_a_callback_does_not_leak_into_the_next),
      cmocka_unit_test(callers_own_settings_come_back_after_the_region),
      cmocka_unit_test(status_names_the_runtime_and_whether_detection_is_live),
      cmocka_unit_test(report_names_each_kernel_with_its_counts),
      cmocka_unit_test(top_level_regions_outside_sessions_are_not_touched),
  };
#if defined(EXPECT_LIBGOMP)
  const char *group = "openmp_guard_libgomp";
#elif defined(KERNELS_FROM_GCC)
  const char *group = "openmp_guard_gcc_kernels_on_libomp";
#else
  const char *group = "openmp_guard_clang_kernels_on_libomp";
#endif
  return cmocka_run_group_tests_name(group, tests, group_setup, group_teardown);
}
