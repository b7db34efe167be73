/* The legacy ParallelFor never skips work (issue 13): a transient
 * pthread_create failure is retried with a backoff counted in calls (fault
 * injected with the executor's thread-creation hook), a grain of 0 or below
 * runs as 1, an executor inherited across fork() runs the loop serially,
 * and a default policy that cannot be placed still gets a pool. White-box:
 * links the convenience library for the hook. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include <cpuexec.h>

#include <cpuexec/compat/parallel_for.h>
#include "executor/executor_internal.h"
#include "support/test_util.h"

extern _Atomic unsigned cpuexec__test_legacy_pool_attempts;

#define TOTAL 1000

typedef struct coverage {
  atomic_int hits[TOTAL];
  atomic_int bad_ranges;
} coverage;

static void cover(void *ctx, int64_t begin, int64_t end) {
  coverage *c = ctx;
  if (begin < 0 || end > TOTAL || begin >= end) atomic_fetch_add(&c->bad_ranges, 1);
  for (int64_t i = begin; i < end && i < TOTAL; i++) atomic_fetch_add(&c->hits[i], 1);
}

static int coverage_errors(coverage *c) {
  int errors = atomic_load(&c->bad_ranges);
  for (int i = 0; i < TOTAL; i++) errors += atomic_load(&c->hits[i]) != 1;
  return errors;
}

/* One call: every index exactly once, whatever it returns. */
static int covered_call(int64_t grain) {
  coverage *c = calloc(1, sizeof *c);
  assert_non_null(c);
  int rc = ParallelFor(TOTAL, grain, c, cover);
  assert_int_equal(coverage_errors(c), 0);
  free(c);
  return rc;
}

/* Attempts are made on calls 1, 3, 6, 11 of a failing run: after the k-th
 * failed attempt 2^(k-1) calls run serially. Every call covers the loop. */
static void transient_thread_failure_is_retried_with_backoff(void **state) {
  (void)state;
  atomic_store(&cpuexec__test_fail_thread_create_at, 1);
  static const unsigned attempts_after[] = {1, 1, 2, 2, 2, 3, 3, 3, 3, 3};
  for (unsigned call = 0; call < 10; call++) {
    int rc = covered_call(16);
    assert_int_equal(rc, CPUEXEC_ETHREAD);
    if (atomic_load(&cpuexec__test_legacy_pool_attempts) != attempts_after[call])
      fail_msg("call %u: %u attempts, want %u", call + 1, atomic_load(&cpuexec__test_legacy_pool_attempts),
               attempts_after[call]);
  }
  /* Threads are available again: calls 11.. go on serially until the gap
   * of 4 is over, then the pool is made and the call returns 0. */
  atomic_store(&cpuexec__test_fail_thread_create_at, 0);
  assert_int_equal(covered_call(16), 0);
  assert_int_equal(atomic_load(&cpuexec__test_legacy_pool_attempts), 4);
  assert_int_equal(ParallelForThreadCount(), 2);
  assert_int_equal(covered_call(16), 0);
  assert_int_equal(atomic_load(&cpuexec__test_legacy_pool_attempts), 4); /* made once */
}

static void grain_below_one_runs_as_one(void **state) {
  (void)state;
  for (int64_t grain = 0; grain >= -3; grain -= 3) {
    coverage *c = calloc(1, sizeof *c);
    assert_non_null(c);
    assert_int_equal(ParallelFor(TOTAL, grain, c, cover), 0);
    assert_int_equal(coverage_errors(c), 0);
    free(c);
  }
}

#if !TEST_ON_WINDOWS /* fork(): Windows has none */
/* In a forked child the scope's executor is the parent's: the loop runs on
 * the child's calling thread and EFORKED says it could not run on it. */
static int child_in_inherited_scope(void) {
  coverage *c = calloc(1, sizeof *c);
  if (!c) return 10;
  int rc = ParallelFor(TOTAL, 16, c, cover);
  if (rc != CPUEXEC_EFORKED) return 11;
  if (!strstr(cpuexec_error_message(), "ran serially")) return 12;
  if (coverage_errors(c) != 0) return 13;
  free(c);
  return 0;
}

static void inherited_scope_after_fork_runs_serially(void **state) {
  (void)state;
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = 2;
  p.affinity_policy = CPUEXEC_AFFINITY_NONE;
  cpuexec_session *s;
  assert_int_equal(cpuexec_session_create(&p, &s), 0);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(cpuexec_session_executor(s), &scope), 0);
  assert_int_equal(run_in_child(child_in_inherited_scope, 20), 0);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  cpuexec_session_destroy(s);
}
#endif /* !TEST_ON_WINDOWS */

/* CPUEXEC_NUM_THREADS above the physical cores with the pinning default:
 * a session is refused, the legacy pool runs anyway (unpinned). Run in a
 * fresh process, since the default resolution is made once per process. */
static void unplaceable_default_still_gets_a_legacy_pool(void **state) {
  (void)state;
  cpuexec_topology *t;
  assert_int_equal(cpuexec_topology_load(NULL, &t), 0);
  char want[16], self[4096];
  snprintf(want, sizeof want, "%u", cpuexec_topology_core_count(t) + 1);
  cpuexec_topology_destroy(t);
  assert_int_equal(test_self_path(self, sizeof self), 0);
  static const char *const unset[] = {"CPUEXEC_POLICY", "OMP_NUM_THREADS", NULL};
  const char *argv[] = {self, "--child", want, NULL};
  assert_int_equal(test_spawn(self, argv, unset, "CPUEXEC_NUM_THREADS", want), 0);
}

static int unplaceable_child(int32_t want) {
  cpuexec_session *s;
  if (cpuexec_session_create(NULL, &s) == 0) {
    /* Placement of implicit defaults may be unpinned in this build. */
    cpuexec_session_destroy(s);
  }
  coverage *c = calloc(1, sizeof *c);
  if (!c) return 20;
  if (ParallelFor(TOTAL, 16, c, cover) != 0) return 21;
  if (coverage_errors(c) != 0) return 22;
  free(c);
  if (ParallelForThreadCount() != want) return 23;
  return 0;
}

/* Four callers while pthread_create fails, then after it recovers: retries
 * rewrite the pool's error detail while other callers report it (a data
 * race ThreadSanitizer saw before the detail was read under the pool's
 * lock). A fresh process, so the pool is made in it. */
#define RACE_CALLERS 4
#define RACE_CALLS 60
static pthread_barrier_t race_phase;
static atomic_int race_errors;

static void *race_caller(void *arg) {
  (void)arg;
  for (int phase = 0; phase < 2; phase++) {
    for (int i = 0; i < RACE_CALLS; i++) {
      coverage *c = calloc(1, sizeof *c);
      if (!c) abort();
      int rc = ParallelFor(TOTAL, 16, c, cover);
      if (coverage_errors(c) != 0) atomic_fetch_add(&race_errors, 1);
      /* While failing, the error names the thread failure. */
      if (rc != 0 && (rc != CPUEXEC_ETHREAD || cpuexec_error_message()[0] == '\0'))
        atomic_fetch_add(&race_errors, 1);
      free(c);
    }
    pthread_barrier_wait(&race_phase);
    pthread_barrier_wait(&race_phase);
  }
  return NULL;
}

static int racing_child(void) {
  atomic_store(&cpuexec__test_fail_thread_create_at, 1);
  pthread_barrier_init(&race_phase, NULL, RACE_CALLERS + 1);
  pthread_t t[RACE_CALLERS];
  for (int i = 0; i < RACE_CALLERS; i++)
    if (pthread_create(&t[i], NULL, race_caller, NULL) != 0) return 60;
  pthread_barrier_wait(&race_phase); /* every caller made its failing calls */
  atomic_store(&cpuexec__test_fail_thread_create_at, 0);
  pthread_barrier_wait(&race_phase);
  pthread_barrier_wait(&race_phase); /* ... and its calls after recovery */
  pthread_barrier_wait(&race_phase);
  for (int i = 0; i < RACE_CALLERS; i++) pthread_join(t[i], NULL);
  if (atomic_load(&race_errors) != 0) return 61;
  /* The backoff skips at most RETRY_GAP_MAX (1024) calls before the next
   * attempt, which now succeeds. */
  for (int call = 0; call <= 1025 && ParallelForThreadCount() != 2; call++) {
    coverage *c = calloc(1, sizeof *c);
    if (!c) return 63;
    (void)ParallelFor(TOTAL, 16, c, cover);
    if (coverage_errors(c) != 0) return 64;
    free(c);
  }
  if (ParallelForThreadCount() != 2) return 62;
  return 0;
}

static void four_callers_through_a_failing_start_and_its_recovery(void **state) {
  (void)state;
  char self[4096];
  assert_int_equal(test_self_path(self, sizeof self), 0);
  const char *argv[] = {self, "--race", NULL};
  assert_int_equal(test_spawn(self, argv, NULL, NULL, NULL), 0);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--child") == 0) return unplaceable_child((int32_t)atoi(argv[2]));
  if (argc == 2 && strcmp(argv[1], "--race") == 0) return racing_child();
  setenv("CPUEXEC_POLICY", "num_threads=2,affinity_policy=none", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(transient_thread_failure_is_retried_with_backoff),
      cmocka_unit_test(grain_below_one_runs_as_one),
      TEST_UNIX_ONLY(inherited_scope_after_fork_runs_serially, "fork(): Windows has none"),
      cmocka_unit_test(unplaceable_default_still_gets_a_legacy_pool),
      cmocka_unit_test(four_callers_through_a_failing_start_and_its_recovery),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
