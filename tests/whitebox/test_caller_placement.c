/* Placement after changes (seed 000: explicit caller affinity "fails
 * explicitly if the process CPU set changed after resolution"; "report
 * every failed pin"): every processor that could not be pinned is named at
 * creation and in the registry's placement check; the caller's cached pin
 * is checked again when it was moved or the placement generation moved,
 * re-pinned when its processor is still usable and refused naming it when
 * not; and the caller stays pinned after a region (cpuexec/executor.h,
 * "The caller's placement"). The CPU-set changes are made on the test's
 * own threads with sched_setaffinity, as `taskset -a -p` makes them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#ifndef _WIN32
#include <pthread.h>
#include <sched.h>
#endif
#include <cmocka.h>

#include "executor/executor_internal.h"
#include "executor/executor_lease.h"
#include "os/os.h"
#include "os/placement_generation.h"
#include "support/test_util.h"

#ifdef _WIN32
TEST_PROGRAM_NOT_ON_WINDOWS("the CPU-set changes are made with sched_setaffinity and pthread_setaffinity_np")
#else

/* The first two processors this thread may use; false (the case is
 * skipped, saying why) when there are fewer or the backend cannot pin. */
static bool two_processors(int *a, int *b) {
  cpu_set_t set;
  *a = *b = -1;
  if (!cpuexec__os_has_affinity() || sched_getaffinity(0, sizeof set, &set) != 0) return false;
  for (int cpu = 0; cpu < CPU_SETSIZE && *b < 0; cpu++)
    if (CPU_ISSET(cpu, &set)) *(*a < 0 ? a : b) = cpu;
  return *b >= 0;
}

static cpu_set_t only(int a, int b) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(a, &set);
  if (b >= 0) CPU_SET(b, &set);
  return set;
}

/* The processor a thread is pinned to alone, or -1. */
static int pinned_to(pthread_t thread) {
  cpu_set_t set;
  if (pthread_getaffinity_np(thread, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1) return -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
    if (CPU_ISSET(cpu, &set)) return cpu;
  return -1;
}

static cpuexec_executor *pinned_executor(uint32_t threads, const int32_t *workers, bool pin_caller, int32_t caller,
                                         int want_rc) {
  cpuexec_resolved *r = test_resolved(threads);
  r->worker_processors = calloc(threads - 1, sizeof(int32_t));
  for (uint32_t k = 0; k + 1 < threads; k++) r->worker_processors[k] = workers[k];
  r->worker_processor_count = threads - 1;
  r->pin_caller = pin_caller;
  r->caller_processor = caller;
  cpuexec_executor *exec = NULL;
  int rc = cpuexec_executor_create(r, &exec);
  cpuexec_resolved_destroy(r);
  if (rc != want_rc) fail_msg("create: rc %d, expected %d (%s)", rc, want_rc, cpuexec_error_message());
  return exec;
}

static int count(void *ctx, int64_t begin, int64_t end) {
  atomic_fetch_add((_Atomic int64_t *)ctx, end - begin);
  return 0;
}

static void every_failed_worker_pin_is_named_at_creation(void **state) {
  (void)state;
  int a, b;
  if (!two_processors(&a, &b)) skip();
  /* Worker 1's processor is fine; workers 2 and 3 name processors this
   * process does not have. */
  const int32_t workers[] = {a, 1000, 1001};
  cpuexec_executor *exec = pinned_executor(4, workers, false, -1, CPUEXEC_EAFFINITY);
  assert_null(exec);
  const char *m = cpuexec_error_message();
  assert_non_null(strstr(m, "2 worker pins"));
  assert_non_null(strstr(m, "processor 1000 (worker thread 2"));
  assert_non_null(strstr(m, "processor 1001 (worker thread 3"));
}

static void the_placement_check_names_every_moved_worker_and_repins_when_it_can(void **state) {
  (void)state;
  int a, b;
  if (!two_processors(&a, &b)) skip();
  const int32_t workers[] = {a, b};
  cpuexec_executor *exec = pinned_executor(3, workers, false, -1, 0);
  assert_int_equal(cpuexec__executor_check_placement(exec), 0);
  /* Both workers moved off their processors: both are named. */
  cpu_set_t to_b = only(b, -1), to_a = only(a, -1), both = only(a, b);
  assert_int_equal(pthread_setaffinity_np(exec->workers[0].thread, sizeof to_b, &to_b), 0);
  assert_int_equal(pthread_setaffinity_np(exec->workers[1].thread, sizeof to_a, &to_a), 0);
  assert_int_equal(cpuexec__executor_check_placement(exec), CPUEXEC_EAFFINITY);
  char expect[2][64];
  snprintf(expect[0], sizeof expect[0], "%d (worker 1", a);
  snprintf(expect[1], sizeof expect[1], "%d (worker 2", b);
  assert_non_null(strstr(cpuexec_error_message(), expect[0]));
  assert_non_null(strstr(cpuexec_error_message(), expect[1]));
  assert_non_null(strstr(cpuexec_error_message(), "processors"));
  /* The set grew back: both are pinned again. */
  assert_int_equal(pthread_setaffinity_np(exec->workers[0].thread, sizeof both, &both), 0);
  assert_int_equal(pthread_setaffinity_np(exec->workers[1].thread, sizeof both, &both), 0);
  assert_int_equal(cpuexec__executor_check_placement(exec), 0);
  assert_int_equal(pinned_to(exec->workers[0].thread), a);
  assert_int_equal(pinned_to(exec->workers[1].thread), b);
  /* Widened again, and neither processor takes a pin now: both named. */
  assert_int_equal(pthread_setaffinity_np(exec->workers[0].thread, sizeof both, &both), 0);
  assert_int_equal(pthread_setaffinity_np(exec->workers[1].thread, sizeof both, &both), 0);
  atomic_store(&cpuexec__test_pin_refused, (1ull << a) | (1ull << b));
  int rc = cpuexec__executor_check_placement(exec);
  atomic_store(&cpuexec__test_pin_refused, 0);
  assert_int_equal(rc, CPUEXEC_EAFFINITY);
  assert_non_null(strstr(cpuexec_error_message(), "could not be pinned again"));
  assert_non_null(strstr(cpuexec_error_message(), expect[0]));
  assert_non_null(strstr(cpuexec_error_message(), expect[1]));
  cpuexec_executor_release(exec);
}

/* The caller cases run on the test's own thread (CMocka's assertions
 * must fail there): each starts from the thread's original CPU set, and
 * says placement changed, so the pin a previous case left cached is
 * looked at again. */
typedef struct caller_case {
  int a, b;
} caller_case;

static cpu_set_t original;

static void on_this_thread(void (*body)(caller_case *, cpuexec_executor *)) {
  caller_case c;
  assert_int_equal(sched_setaffinity(0, sizeof original, &original), 0);
  cpuexec__placement_changed();
  if (!two_processors(&c.a, &c.b)) skip();
  const int32_t workers[] = {c.b};
  cpuexec_executor *exec = pinned_executor(2, workers, true, c.a, 0);
  body(&c, exec);
  cpuexec_executor_release(exec);
  assert_int_equal(sched_setaffinity(0, sizeof original, &original), 0);
}

static void run_all(cpuexec_executor *exec) {
  _Atomic int64_t n = 0;
  assert_int_equal(cpuexec_parallel_for(exec, 64, 1, (void *)&n, count, 0), 0);
  assert_int_equal(atomic_load(&n), 64);
}

static void stays_pinned(caller_case *c, cpuexec_executor *exec) {
  assert_int_not_equal(pinned_to(pthread_self()), c->a);
  run_all(exec);
  /* The chosen rule: the caller keeps its pin after the region. */
  assert_int_equal(pinned_to(pthread_self()), c->a);
  run_all(exec);
  assert_int_equal(pinned_to(pthread_self()), c->a);
}

static void the_caller_stays_pinned_after_a_region(void **state) {
  (void)state;
  on_this_thread(stays_pinned);
}

static void refused_then_repinned(caller_case *c, cpuexec_executor *exec) {
  run_all(exec);
  /* The processor leaves the thread's set: the kernel moves the thread
   * at once, and the next region refuses, naming the processor. */
  cpu_set_t to_b = only(c->b, -1), both = only(c->a, c->b);
  assert_int_equal(sched_setaffinity(0, sizeof to_b, &to_b), 0);
  _Atomic int64_t n = 0;
  assert_int_equal(cpuexec_parallel_for(exec, 64, 1, (void *)&n, count, 0), CPUEXEC_EAFFINITY);
  assert_int_equal(atomic_load(&n), 0); /* nothing ran */
  char expect[64];
  snprintf(expect, sizeof expect, "processor %d left", c->a);
  assert_non_null(strstr(cpuexec_error_message(), expect));
  /* Still refused: the thread was not moved back. */
  assert_int_equal(cpuexec_parallel_for(exec, 64, 1, (void *)&n, count, 0), CPUEXEC_EAFFINITY);
  assert_int_equal(pinned_to(pthread_self()), c->b);
  /* The processor is usable again: the next region pins the caller again. */
  assert_int_equal(sched_setaffinity(0, sizeof both, &both), 0);
  run_all(exec);
  assert_int_equal(pinned_to(pthread_self()), c->a);
}

static void a_caller_whose_processor_left_its_set_is_refused_then_repinned(void **state) {
  (void)state;
  on_this_thread(refused_then_repinned);
}

static void repinned_on_generation(caller_case *c, cpuexec_executor *exec) {
  run_all(exec);
  assert_int_equal(pinned_to(pthread_self()), c->a);
  /* The set grows while the thread stays where it is: only the placement
   * generation can tell (here, the process topology read again). */
  cpu_set_t both = only(c->a, c->b);
  assert_int_equal(sched_setaffinity(0, sizeof both, &both), 0);
  uint64_t before = cpuexec__placement_generation();
  assert_int_equal(cpuexec_topology_refresh(), 0);
  assert_true(cpuexec__placement_generation() != before);
  run_all(exec);
  assert_int_equal(pinned_to(pthread_self()), c->a);
}

static void a_widened_caller_is_pinned_again_when_the_generation_moves(void **state) {
  (void)state;
  on_this_thread(repinned_on_generation);
}

int main(void) {
  if (sched_getaffinity(0, sizeof original, &original) != 0) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_failed_worker_pin_is_named_at_creation),
      cmocka_unit_test(the_placement_check_names_every_moved_worker_and_repins_when_it_can),
      cmocka_unit_test(the_caller_stays_pinned_after_a_region),
      cmocka_unit_test(a_caller_whose_processor_left_its_set_is_refused_then_repinned),
      cmocka_unit_test(a_widened_caller_is_pinned_again_when_the_generation_moves),
  };
  return cmocka_run_group_tests_name("caller placement", tests, NULL, NULL);
}
#endif
