/* A foreign pool that breaks the contract by returning from run_ranges
 * while a call it started is still running (include/cpuexec/foreign.h):
 * cpuexec_parallel_for reports CPUEXEC_ESTATE naming the mistake, and only
 * after that call has finished, so no thread touches the caller's memory
 * once it returns. The callback is held on a latch that the library's test
 * hook opens when it has seen the early return; nothing waits on time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include <cpuexec/foreign.h>

#include "executor/executor_internal.h"
#include "support/test_util.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool started, released, finished; /* under lock */

static void set(bool *flag) {
  pthread_mutex_lock(&lock);
  *flag = true;
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&lock);
}

static void await(const bool *flag) {
  pthread_mutex_lock(&lock);
  while (!*flag) pthread_cond_wait(&cond, &lock);
  pthread_mutex_unlock(&lock);
}

/* The caller's callback: held until the library has seen the early return. */
static int held(void *ctx, int64_t begin, int64_t end) {
  (void)ctx, (void)begin, (void)end;
  set(&started);
  await(&released);
  pthread_mutex_lock(&lock);
  finished = true;
  pthread_mutex_unlock(&lock);
  return 0;
}

static void seen_early_return(struct cpuexec_executor *exec) {
  (void)exec;
  set(&released);
}

/* The faulty pool: runs every participant on a thread of its own and
 * returns as soon as the first callback has started. */
typedef struct range_job {
  void *arg;
  int64_t count;
  cpuexec_range_fn fn;
} range_job;

static pthread_t runner;
static range_job job;

static void *run_job(void *p) {
  range_job *j = p;
  j->fn(j->arg, 0, j->count);
  return NULL;
}

static int returns_early(void *pool, int64_t count, void *arg, cpuexec_range_fn fn) {
  (void)pool;
  job = (range_job){arg, count, fn};
  if (pthread_create(&runner, NULL, run_job, &job) != 0) return CPUEXEC_ETHREAD;
  await(&started);
  return 0;
}

static void an_early_return_is_reported_after_the_call_finished(void **state) {
  (void)state;
  cpuexec_foreign_executor_ops ops;
  cpuexec_foreign_executor_ops_init(&ops);
  ops.effective_threads = 2;
  ops.run_ranges = returns_early;
  cpuexec_executor *exec = NULL;
  assert_int_equal(cpuexec_executor_create_foreign(&ops, NULL, &exec), 0);
  atomic_store(&cpuexec__test_foreign_returned_early, seen_early_return);
  int rc = cpuexec_parallel_for(exec, 2, 1, NULL, held, 0);
  /* Read before anything else can change it: the call waited for the
   * callback the pool left running. */
  pthread_mutex_lock(&lock);
  bool done = finished;
  pthread_mutex_unlock(&lock);
  atomic_store(&cpuexec__test_foreign_returned_early, NULL);
  assert_true(done);
  assert_int_equal(rc, CPUEXEC_ESTATE);
  assert_non_null(strstr(cpuexec_error_message(), "returned while calls of fn were still running"));
  assert_int_equal(pthread_join(runner, NULL), 0);
  cpuexec_executor_release(exec);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(an_early_return_is_reported_after_the_call_finished),
  };
  return cmocka_run_group_tests_name("foreign pool returning early", tests, NULL, NULL);
}
