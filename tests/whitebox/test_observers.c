/* The dispatch observers (cpuexec/counters.h): a bounded list, each with
 * its own context, beside the single-observer wrapper; the grace rule (no
 * call after a removal returns), shown with latches and the removal's test
 * hook, never with time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "executor/observers.h"
#include "support/test_util.h"

typedef struct tally {
  _Atomic int announced, completed;
} tally;

static void count(void *ctx, const cpuexec_dispatch_event *ev) {
  tally *t = ctx;
  atomic_fetch_add(ev->completed ? &t->completed : &t->announced, 1);
}

static int nothing(void *ctx, int64_t begin, int64_t end) { return 0; }

static void the_list_is_bounded_and_each_observer_has_its_context(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  tally t[CPUEXEC_DISPATCH_OBSERVERS_MAX + 1], wrapped;
  memset(t, 0, sizeof t);
  memset(&wrapped, 0, sizeof wrapped);
  for (int i = 0; i < CPUEXEC_DISPATCH_OBSERVERS_MAX; i++)
    assert_int_equal(cpuexec_dispatch_observer_add(&t[i], count, i % 2 ? CPUEXEC_OBSERVE_COMPLETION : 0), 0);
  assert_int_equal(cpuexec_dispatch_observer_add(&t[CPUEXEC_DISPATCH_OBSERVERS_MAX], count, 0), CPUEXEC_ECAPACITY);
  assert_non_null(strstr(cpuexec_error_message(), "8 observers are added already"));
  /* The wrapper has a place of its own: it works with the list full. */
  cpuexec_dispatch_observer_set(&wrapped, count);
  assert_int_equal(cpuexec_dispatch_observer_add(&t[0], count, 0), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "already added"));
  assert_int_equal(cpuexec_dispatch_observer_add(&t[0], NULL, 0), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_dispatch_observer_add(&t[8], count, 0x4), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "unknown bits 0x4"));
  assert_int_equal(cpuexec_parallel_for(exec, 4, 1, NULL, nothing, 0), 0);
  for (int i = 0; i < CPUEXEC_DISPATCH_OBSERVERS_MAX; i++) {
    assert_int_equal(atomic_load(&t[i].announced), 1);
    assert_int_equal(atomic_load(&t[i].completed), i % 2);
  }
  assert_int_equal(atomic_load(&t[CPUEXEC_DISPATCH_OBSERVERS_MAX].announced), 0);
  assert_int_equal(atomic_load(&wrapped.announced), 1);
  assert_int_equal(atomic_load(&wrapped.completed), 0);
  /* A removal frees a place; the removed one is called no more. */
  assert_int_equal(cpuexec_dispatch_observer_remove(&t[3], count), 0);
  assert_int_equal(cpuexec_dispatch_observer_remove(&t[3], count), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "none was added"));
  assert_int_equal(cpuexec_dispatch_observer_add(&t[CPUEXEC_DISPATCH_OBSERVERS_MAX], count, 0), 0);
  cpuexec_dispatch_observer_set(NULL, NULL);
  assert_int_equal(cpuexec_parallel_for(exec, 4, 1, NULL, nothing, 0), 0);
  assert_int_equal(atomic_load(&t[3].announced), 1);
  assert_int_equal(atomic_load(&t[CPUEXEC_DISPATCH_OBSERVERS_MAX].announced), 1);
  assert_int_equal(atomic_load(&wrapped.announced), 1);
  for (int i = 0; i <= CPUEXEC_DISPATCH_OBSERVERS_MAX; i++)
    if (i != 3) assert_int_equal(cpuexec_dispatch_observer_remove(&t[i], count), 0);
  assert_int_equal(cpuexec__observers_now(), 0);
  cpuexec_executor_release(exec);
}

/* Adding or removing from inside an observer would wait for itself. */
static _Atomic int inner_add_rc, inner_remove_rc;
static void meddle(void *ctx, const cpuexec_dispatch_event *ev) {
  atomic_store(&inner_add_rc, cpuexec_dispatch_observer_add(ctx, count, 0));
  atomic_store(&inner_remove_rc, cpuexec_dispatch_observer_remove(ctx, meddle));
  cpuexec_dispatch_observer_set(ctx, count); /* ignored */
}

static void observers_cannot_change_the_list_from_inside(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  tally t = {0};
  assert_int_equal(cpuexec_dispatch_observer_add(&t, meddle, 0), 0);
  assert_int_equal(cpuexec_parallel_for(exec, 4, 1, NULL, nothing, 0), 0);
  assert_int_equal(atomic_load(&inner_add_rc), CPUEXEC_EBUSY);
  assert_int_equal(atomic_load(&inner_remove_rc), CPUEXEC_EBUSY);
  assert_int_equal(cpuexec__observers_now(), 1u << 0);
  assert_int_equal(cpuexec_dispatch_observer_remove(&t, meddle), 0);
  cpuexec_executor_release(exec);
}

/* ---- the grace rule -------------------------------------------------------- */

/* A one-shot latch. */
typedef struct latch {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int open;
} latch;
#define LATCH_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0}
static void latch_open(latch *l) {
  pthread_mutex_lock(&l->lock);
  l->open = 1;
  pthread_cond_broadcast(&l->cond);
  pthread_mutex_unlock(&l->lock);
}
static void latch_wait(latch *l) {
  pthread_mutex_lock(&l->lock);
  while (!l->open) pthread_cond_wait(&l->cond, &l->lock);
  pthread_mutex_unlock(&l->lock);
}

static latch entered = LATCH_INIT, release = LATCH_INIT;
/* What the main thread waits for once the remover runs: the remover sleeps
 * waiting for the held call (the hook) or it returned (a broken rule). */
static pthread_mutex_t remover_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t remover_cond = PTHREAD_COND_INITIALIZER;
static int remover_waits, remover_returned;
static _Atomic int held_calls, returned_while_held;

static void held(void *ctx, const cpuexec_dispatch_event *ev) {
  atomic_fetch_add(&held_calls, 1);
  latch_open(&entered);
  latch_wait(&release);
  pthread_mutex_lock(&remover_lock);
  if (remover_returned) atomic_store(&returned_while_held, 1);
  pthread_mutex_unlock(&remover_lock);
}

static void remover_sleeps(void) {
  pthread_mutex_lock(&remover_lock);
  remover_waits = 1;
  pthread_cond_broadcast(&remover_cond);
  pthread_mutex_unlock(&remover_lock);
}

static void *dispatch_once(void *arg) {
  cpuexec_parallel_for(arg, 4, 1, NULL, nothing, 0);
  return NULL;
}

static _Atomic int remove_rc = 1;
static void *remove_held(void *arg) {
  atomic_store(&remove_rc, cpuexec_dispatch_observer_remove(arg, held));
  pthread_mutex_lock(&remover_lock);
  remover_returned = 1;
  pthread_cond_broadcast(&remover_cond);
  pthread_mutex_unlock(&remover_lock);
  return NULL;
}

static void a_removal_returns_only_after_the_calls_in_flight(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2), *other = test_executor(2);
  int ctx;
  assert_int_equal(cpuexec_dispatch_observer_add(&ctx, held, 0), 0);
  atomic_store(&cpuexec__test_observer_retiring, remover_sleeps);
  pthread_t caller, remover;
  assert_int_equal(pthread_create(&caller, NULL, dispatch_once, exec), 0);
  latch_wait(&entered); /* a call of `held` is in flight, held */
  assert_int_equal(pthread_create(&remover, NULL, remove_held, &ctx), 0);
  pthread_mutex_lock(&remover_lock);
  while (!remover_waits && !remover_returned) pthread_cond_wait(&remover_cond, &remover_lock);
  int returned_early = remover_returned;
  pthread_mutex_unlock(&remover_lock);
  if (returned_early) {
    latch_open(&release);
    pthread_join(caller, NULL);
    pthread_join(remover, NULL);
    fail_msg("cpuexec_dispatch_observer_remove returned while a call of the observer was in flight");
  }
  /* The removal waits: the observer is no longer live, so a call that
   * starts now does not reach it. */
  assert_int_equal(cpuexec_parallel_for(other, 4, 1, NULL, nothing, 0), 0);
  assert_int_equal(atomic_load(&held_calls), 1);
  latch_open(&release);
  pthread_join(caller, NULL);
  pthread_join(remover, NULL);
  atomic_store(&cpuexec__test_observer_retiring, NULL);
  assert_int_equal(atomic_load(&remove_rc), 0);
  assert_int_equal(atomic_load(&returned_while_held), 0);
  assert_int_equal(cpuexec_parallel_for(exec, 4, 1, NULL, nothing, 0), 0);
  assert_int_equal(atomic_load(&held_calls), 1);
  cpuexec_executor_release(exec);
  cpuexec_executor_release(other);
}

/* Many threads dispatch while others add and remove: every call reaches an
 * observer only while it is added (its tally is checked against a flag the
 * adder holds), and each removal leaves it uncalled. */
#define CHURN_ROUNDS 2000
static _Atomic int churn_stop, churn_bad;
typedef struct churned {
  _Atomic int live;
  _Atomic int calls;
} churned;
static void churn_observer(void *ctx, const cpuexec_dispatch_event *ev) {
  churned *c = ctx;
  if (!atomic_load(&c->live)) atomic_store(&churn_bad, 1);
  atomic_fetch_add(&c->calls, 1);
}
static void *churn_dispatch(void *arg) {
  while (!atomic_load(&churn_stop)) cpuexec_parallel_for(arg, 4, 1, NULL, nothing, 0);
  return NULL;
}

static void observers_come_and_go_while_regions_run(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  pthread_t callers[3];
  for (int i = 0; i < 3; i++) assert_int_equal(pthread_create(&callers[i], NULL, churn_dispatch, exec), 0);
  churned c[4];
  memset(c, 0, sizeof c);
  for (int round = 0; round < CHURN_ROUNDS; round++) {
    churned *o = &c[round % 4];
    atomic_store(&o->live, 1);
    assert_int_equal(cpuexec_dispatch_observer_add(o, churn_observer, CPUEXEC_OBSERVE_COMPLETION), 0);
    if (round % 4 == 3)
      for (int k = 0; k < 4; k++) {
        assert_int_equal(cpuexec_dispatch_observer_remove(&c[k], churn_observer), 0);
        atomic_store(&c[k].live, 0); /* after the removal returned: any later call is a bug */
      }
  }
  atomic_store(&churn_stop, 1);
  for (int i = 0; i < 3; i++) pthread_join(callers[i], NULL);
  assert_int_equal(atomic_load(&churn_bad), 0);
  assert_int_equal(cpuexec__observers_now(), 0);
  cpuexec_executor_release(exec);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_list_is_bounded_and_each_observer_has_its_context),
      cmocka_unit_test(observers_cannot_change_the_list_from_inside),
      cmocka_unit_test(a_removal_returns_only_after_the_calls_in_flight),
      cmocka_unit_test(observers_come_and_go_while_regions_run),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
