/* The registry when a pool fails to start: the refused acquire reports the
 * executor's error, leaves no entry, thread or capacity behind, concurrent
 * acquirers waiting for that pool try again themselves, and the next
 * acquire starts the pool normally. Uses the executor's thread-creation
 * failure hook, so it links the convenience library. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include <cpuexec.h>

#include "executor/executor_internal.h"
#include "support/test_util.h"

static cpuexec_resolved *resolve_threads(int32_t threads) {
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = threads;
  p.affinity_policy = CPUEXEC_AFFINITY_NONE;
  cpuexec_resolved *r = NULL;
  assert_int_equal(cpuexec_policy_resolve(&p, NULL, &r), 0);
  return r;
}

static void a_failed_start_leaves_nothing_behind(void **state) {
  (void)state;
  int baseline = task_baseline();
  cpuexec_registry_options o;
  cpuexec_registry_options_init(&o);
  o.capacity = 1;
  cpuexec_registry *reg = NULL;
  assert_int_equal(cpuexec_registry_create(&o, &reg), 0);
  cpuexec_resolved *r = resolve_threads(4);
  cpuexec_executor *e = NULL;
  atomic_store(&cpuexec__test_fail_thread_create_at, 2);
  assert_int_equal(cpuexec_registry_acquire(reg, r, &e), CPUEXEC_ETHREAD);
  atomic_store(&cpuexec__test_fail_thread_create_at, 0);
  assert_null(e);
  assert_int_equal(cpuexec_registry_live_pools(reg), 0);
  assert_int_equal(wait_task_count(baseline), baseline);
  /* Its capacity was given back: the one slot takes the retry. */
  assert_int_equal(cpuexec_registry_acquire(reg, r, &e), 0);
  assert_int_equal(wait_task_count(baseline + 3), baseline + 3);
  cpuexec_executor_release(e);
  cpuexec_resolved_destroy(r);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
  assert_int_equal(wait_task_count(baseline), baseline);
}

typedef struct racer {
  cpuexec_registry *reg;
  cpuexec_resolved *r;
  pthread_barrier_t *start;
  int rc;
  cpuexec_executor *e;
} racer;

static void *race_acquire(void *arg) {
  racer *x = arg;
  pthread_barrier_wait(x->start);
  x->rc = cpuexec_registry_acquire(x->reg, x->r, &x->e);
  return NULL;
}

/* Acquirers racing for one key get one pool; with the start failing, each
 * reports the failure (a waiter retries the start itself) and nothing is
 * left over. */
static void racing_acquirers_share_one_start(void **state) {
  (void)state;
  enum { RACERS = 6 };
  int baseline = task_baseline();
  cpuexec_registry *reg = NULL;
  assert_int_equal(cpuexec_registry_create(NULL, &reg), 0);
  cpuexec_resolved *r = resolve_threads(3);
  for (int failing = 0; failing < 2; failing++) {
    atomic_store(&cpuexec__test_fail_thread_create_at, failing ? 1 : 0);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, RACERS);
    racer x[RACERS];
    pthread_t t[RACERS];
    for (int i = 0; i < RACERS; i++) {
      x[i] = (racer){reg, r, &start, -100, NULL};
      assert_int_equal(pthread_create(&t[i], NULL, race_acquire, &x[i]), 0);
    }
    for (int i = 0; i < RACERS; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    atomic_store(&cpuexec__test_fail_thread_create_at, 0);
    for (int i = 0; i < RACERS; i++) {
      if (failing) {
        assert_int_equal(x[i].rc, CPUEXEC_ETHREAD);
        assert_null(x[i].e);
      } else {
        assert_int_equal(x[i].rc, 0);
        assert_ptr_equal(x[i].e, x[0].e);
      }
    }
    if (!failing) {
      assert_int_equal(cpuexec_registry_live_pools(reg), 1);
      assert_int_equal(wait_task_count(baseline + 2), baseline + 2); /* one pool started, not one per racer */
      for (int i = 0; i < RACERS; i++) cpuexec_executor_release(x[i].e);
    }
    assert_int_equal(cpuexec_registry_live_pools(reg), 0);
    assert_int_equal(wait_task_count(baseline), baseline);
  }
  cpuexec_resolved_destroy(r);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
}


int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_failed_start_leaves_nothing_behind),
      cmocka_unit_test(racing_acquirers_share_one_start),
  };
  return cmocka_run_group_tests_name("registry start failures", tests, NULL, NULL);
}
