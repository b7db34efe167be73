/* The legacy free ParallelFor: standalone (one process-wide pool from
 * CPUEXEC_POLICY), inside a session (the session's executor and thread
 * count), nested (inline), and in a forked child (the pool rebuilt
 * silently). main() sets CPUEXEC_POLICY before the first call. Every case
 * runs under the test runner's timeout; the fork case also has its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <cmocka.h>

#include <cpuexec.h>

#include <cpuexec/compat/parallel_for.h>
#include "support/test_util.h"
#include "support/rendezvous.h"

#define PROCESS_THREADS 3
#define TOTAL 4096

typedef struct coverage {
  atomic_int hits[TOTAL];
  atomic_uint participants; /* bit per participant index */
  atomic_int bad_ranges;
  _Atomic uint64_t arrived; /* rendezvous.h: every participant observed */
  /* Set when other callers share the pool at once: their regions share the
   * workers, so a participant must not wait for the others of its region
   * (cpuexec/executor.h), and no rendezvous is made. */
  bool concurrent;
} coverage;

static void cover(void *ctx, int64_t begin, int64_t end) {
  coverage *c = ctx;
  if (!c->concurrent) test_rendezvous(&c->arrived);
  if (begin < 0 || end > TOTAL || begin >= end) atomic_fetch_add(&c->bad_ranges, 1);
  for (int64_t i = begin; i < end && i < TOTAL; i++) atomic_fetch_add(&c->hits[i], 1);
  atomic_fetch_or(&c->participants, 1u << cpuexec_participant_index());
}

/* 0 when every index was covered exactly once and the ranges were sane. */
static int coverage_errors(coverage *c) {
  int errors = atomic_load(&c->bad_ranges);
  for (int i = 0; i < TOTAL; i++) errors += atomic_load(&c->hits[i]) != 1;
  return errors;
}

static coverage *new_coverage(void) {
  coverage *c = calloc(1, sizeof *c);
  assert_non_null(c);
  return c;
}

static unsigned popcount(unsigned v) { return (unsigned)__builtin_popcount(v); }

/* ---- standalone ---------------------------------------------------------- */

static void standalone_calls_share_one_process_wide_pool(void **state) {
  (void)state;
  int baseline = task_baseline();
  assert_int_equal(cpuexec_registry_live_pools(cpuexec_registry_default()), 0);
  assert_null(cpuexec_executor_current());
  for (int round = 0; round < 5; round++) {
    coverage *c = new_coverage();
    assert_int_equal(ParallelFor(TOTAL, 16, c, cover), 0);
    assert_int_equal(coverage_errors(c), 0);
    assert_int_equal(popcount(atomic_load(&c->participants)), PROCESS_THREADS);
    free(c);
    /* Created once, from CPUEXEC_POLICY, and never a second one. */
    assert_int_equal(cpuexec_registry_live_pools(cpuexec_registry_default()), 1);
    assert_int_equal(wait_task_count(baseline + PROCESS_THREADS - 1), baseline + PROCESS_THREADS - 1);
  }
  assert_int_equal(ParallelForThreadCount(), PROCESS_THREADS);
}

static void *standalone_from_thread(void *arg) {
  atomic_int *failures = arg;
  for (int i = 0; i < 20; i++) {
    coverage *c = calloc(1, sizeof *c);
    if (c) c->concurrent = true;
    if (!c || ParallelFor(TOTAL, 64, c, cover) != 0 || coverage_errors(c) != 0) atomic_fetch_add(failures, 1);
    free(c);
  }
  return NULL;
}

static void concurrent_standalone_callers_use_the_same_pool(void **state) {
  (void)state;
  atomic_int failures = 0;
  pthread_t t[4];
  for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&t[i], NULL, standalone_from_thread, &failures), 0);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  assert_int_equal(atomic_load(&failures), 0);
  assert_int_equal(cpuexec_registry_live_pools(cpuexec_registry_default()), 1);
}

static void bad_arguments_run_nothing(void **state) {
  (void)state;
  coverage *c = new_coverage();
  assert_int_equal(ParallelFor(TOTAL, 1, c, NULL), CPUEXEC_EINVAL);
  assert_int_equal(ParallelFor(0, 1, c, cover), 0);
  assert_int_equal(ParallelFor(-5, 1, c, cover), 0);
  for (int i = 0; i < TOTAL; i++) assert_int_equal(atomic_load(&c->hits[i]), 0);
  free(c);
}

/* ---- in a session -------------------------------------------------------- */

typedef struct session_probe {
  uint32_t thread_count;
  coverage *c;
  int rc;
} session_probe;

static int legacy_kernel(void *arg) {
  session_probe *p = arg;
  p->thread_count = ParallelForThreadCount();
  p->rc = ParallelFor(TOTAL, 16, p->c, cover);
  return 0;
}

/* The legacy kernel follows the session's thread count, not the process
 * pool's, over a matrix of counts. */
static void inside_a_session_the_session_executor_and_count_are_used(void **state) {
  (void)state;
  for (int32_t threads = 1; threads <= 4; threads++) {
    cpuexec_policy policy;
    cpuexec_policy_init(&policy);
    policy.num_threads = threads;
    policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
    cpuexec_session *s = NULL;
    assert_int_equal(cpuexec_session_create(&policy, &s), 0);
    session_probe p = {0, new_coverage(), -1};
    assert_int_equal(cpuexec_session_run(s, &p, legacy_kernel), 0);
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.thread_count, threads);
    assert_int_equal(coverage_errors(p.c), 0);
    if (popcount(atomic_load(&p.c->participants)) != (unsigned)threads)
      fail_msg("%d threads: %u participants ran", threads, popcount(atomic_load(&p.c->participants)));
    free(p.c);
    cpuexec_session_destroy(s);
  }
  assert_int_equal(ParallelForThreadCount(), PROCESS_THREADS); /* outside again */
}

/* ---- nested -------------------------------------------------------------- */

typedef struct nested {
  coverage *inner;
  atomic_int not_inline;
} nested;

typedef struct inner_ctx {
  nested *n;
  pthread_t outer_thread;
  int64_t base;
} inner_ctx;

static void inner_range(void *ctx, int64_t begin, int64_t end) {
  inner_ctx *ic = ctx;
  if (!pthread_equal(pthread_self(), ic->outer_thread)) atomic_fetch_add(&ic->n->not_inline, 1);
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&ic->n->inner->hits[ic->base + i], 1);
}

static void outer_range(void *ctx, int64_t begin, int64_t end) {
  nested *n = ctx;
  for (int64_t b = begin; b < end; b++) {
    inner_ctx ic = {n, pthread_self(), b * 64};
    if (ParallelFor(64, 4, &ic, inner_range) != 0) atomic_fetch_add(&n->not_inline, 100);
  }
}

static void nested_calls_run_inline_on_the_calling_thread(void **state) {
  (void)state;
  nested n = {new_coverage(), 0};
  assert_int_equal(ParallelFor(TOTAL / 64, 1, &n, outer_range), 0);
  assert_int_equal(atomic_load(&n.not_inline), 0);
  assert_int_equal(coverage_errors(n.inner), 0);
  free(n.inner);
}

#if !TEST_ON_WINDOWS /* fork(): Windows has none */
/* ---- fork ---------------------------------------------------------------- */

static int serial_session_body(void *arg) { return ParallelFor(TOTAL, 16, arg, cover); }

/* What the child checks without starting a thread (see support/threads.h): the
 * inherited pool is forgotten and a serial session's kernel runs. */
static int child_checks_without_threads(void) {
  if (cpuexec_registry_live_pools(cpuexec_registry_default()) != 0) return 30;
  cpuexec_policy serial;
  cpuexec_policy_init(&serial);
  serial.num_threads = 1;
  serial.affinity_policy = CPUEXEC_AFFINITY_NONE;
  cpuexec_session *s = NULL;
  if (cpuexec_session_create(&serial, &s) != 0) return 31;
  coverage *c = calloc(1, sizeof *c);
  if (!c) return 32;
  if (cpuexec_session_run(s, c, serial_session_body) != 0 || coverage_errors(c) != 0) return 33;
  free(c);
  cpuexec_session_destroy(s);
  return 0;
}

static int child_uses_a_fresh_pool(void) {
  /* Nothing may be printed: the rebuild is silent. stderr goes to a file
   * the child checks at the end. */
  char path[] = "/tmp/cpuexec-compat-fork-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 20;
  unlink(path);
  fflush(stderr);
  if (dup2(fd, 2) < 0) return 21;
  int rc = child_checks_without_threads();
  if (rc != 0) return rc;
  if (TEST_CHILD_MAY_START_THREADS) {
    if (ParallelForThreadCount() != PROCESS_THREADS) return 22;
    coverage *c = calloc(1, sizeof *c);
    if (!c) return 23;
    if (ParallelFor(TOTAL, 16, c, cover) != 0) return 24;
    if (coverage_errors(c) != 0) return 25;
    if (popcount(atomic_load(&c->participants)) != PROCESS_THREADS) return 26;
    free(c);
    if (cpuexec_registry_live_pools(cpuexec_registry_default()) != 1) return 27;
  }
  fflush(stderr);
  if (lseek(fd, 0, SEEK_END) != 0) return 28;
  return 0;
}

static void a_forked_child_rebuilds_the_pool_silently(void **state) {
  (void)state;
  coverage *c = new_coverage();
  assert_int_equal(ParallelFor(TOTAL, 16, c, cover), 0); /* the parent's pool exists */
  free(c);
  for (int i = 0; i < 2; i++) assert_int_equal(run_in_child(child_uses_a_fresh_pool, 20), 0);
  c = new_coverage();
  assert_int_equal(ParallelFor(TOTAL, 16, c, cover), 0); /* and still works */
  assert_int_equal(coverage_errors(c), 0);
  free(c);
}
#endif /* !TEST_ON_WINDOWS */

int main(void) {
  setenv("CPUEXEC_POLICY", "num_threads=3,affinity_policy=none", 1);
  const struct CMUnitTest standalone[] = {
      cmocka_unit_test(standalone_calls_share_one_process_wide_pool),
      cmocka_unit_test(concurrent_standalone_callers_use_the_same_pool),
      cmocka_unit_test(bad_arguments_run_nothing),
  };
  const struct CMUnitTest in_session[] = {
      cmocka_unit_test(inside_a_session_the_session_executor_and_count_are_used),
      cmocka_unit_test(nested_calls_run_inline_on_the_calling_thread),
      TEST_UNIX_ONLY(a_forked_child_rebuilds_the_pool_silently, "fork(): Windows has none"),
  };
  int failed = 0;
  failed += cmocka_run_group_tests_name("ParallelFor standalone", standalone, NULL, NULL);
  failed += cmocka_run_group_tests_name("ParallelFor in sessions, nested, forked", in_session, NULL, NULL);
  return failed != 0;
}
