/* libcpuexec-pthreadpool: an application's struct pthreadpool_executor as
 * the extra threads of a pool (pthreadpool_create_v2).
 *
 * The executor offers only schedule(task): run it once, later, on one of its
 * threads. It becomes a libcpuexec foreign executor whose run_ranges(count)
 * is one borrow: the caller reserves participant 0, schedules count - 1
 * tasks, and then every thread that runs (the caller and each task that
 * starts) claims participants from one counter and runs them, so a task the
 * executor starts late (or never, before the caller is done) costs nothing:
 * the caller runs the participants nobody claimed, as libcpuexec's take-over
 * rule wants. The caller waits only for participants already claimed by
 * borrowed threads that are running them.
 *
 * A borrow lives on the heap with one reference per scheduled task plus the
 * caller's, because a task may start after run_ranges returned, even after
 * the pool is destroyed: it then finds no participant left, drops its
 * reference and returns, touching nothing but the borrow. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "engine_private.h"

typedef struct pp_borrow {
  atomic_int refs;       /* the caller's and one per scheduled task; the last frees */
  atomic_int_fast64_t next; /* the next participant to claim; any thread, relaxed */
  int64_t count;         /* participants of the region; immutable */
  void *arg;             /* libcpuexec's region, valid until the caller returns */
  cpuexec_range_fn fn;
  atomic_int_fast64_t finished; /* participants whose fn returned (acq_rel: publishes their writes) */
  atomic_int rc;         /* the first non-zero value of fn (0: none) */
  pthread_mutex_t lock;  /* with done: the caller's wait for the last finished participant */
  pthread_cond_t done;
} pp_borrow;

static void pp_borrow_drop(pp_borrow *b) {
  if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) {
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->done);
    free(b);
  }
}

/* Runs participant i. The thread that finishes the last one wakes the
 * caller, under the lock the caller checks `finished` under. */
static void pp_borrow_run(pp_borrow *b, int64_t i) {
  int rc = b->fn(b->arg, i, i + 1);
  if (rc != 0) {
    int none = 0;
    atomic_compare_exchange_strong_explicit(&b->rc, &none, rc, memory_order_relaxed, memory_order_relaxed);
  }
  if (atomic_fetch_add_explicit(&b->finished, 1, memory_order_acq_rel) + 1 == b->count) {
    pthread_mutex_lock(&b->lock);
    pthread_cond_signal(&b->done);
    pthread_mutex_unlock(&b->lock);
  }
}

/* Participants claimed by this thread until none is left. */
static void pp_borrow_claim(pp_borrow *b) {
  for (;;) {
    int64_t i = atomic_fetch_add_explicit(&b->next, 1, memory_order_relaxed);
    if (i >= b->count)
      return;
    pp_borrow_run(b, i);
  }
}

/* The task handed to schedule(). */
static void pp_borrowed_thread(void *context) {
  pp_borrow *b = context;
  pp_borrow_claim(b);
  pp_borrow_drop(b);
}

static int pp_app_run_ranges(void *pool, int64_t count, void *arg, cpuexec_range_fn fn) {
  struct pthreadpool_executor ops;
  void *context;
  cpuexec__pp_app_get(pool, &ops, &context);
  pp_borrow *b = malloc(sizeof *b);
  if (b == NULL || pthread_mutex_init(&b->lock, NULL) != 0) {
    free(b);
    return cpuexec_error_report(CPUEXEC_ENOMEM, "pthreadpool executor: no memory for a call's borrowed threads");
  }
  if (pthread_cond_init(&b->done, NULL) != 0) {
    pthread_mutex_destroy(&b->lock);
    free(b);
    return cpuexec_error_report(CPUEXEC_ENOMEM, "pthreadpool executor: no condition variable for a call");
  }
  atomic_init(&b->refs, (int)count); /* the caller's and count - 1 tasks' */
  atomic_init(&b->next, 1);          /* participant 0 is the caller's */
  b->count = count;
  b->arg = arg;
  b->fn = fn;
  atomic_init(&b->finished, 0);
  atomic_init(&b->rc, 0);
  for (int64_t k = 1; k < count; k++)
    ops.schedule(context, b, pp_borrowed_thread);
  pp_borrow_run(b, 0);
  pp_borrow_claim(b);
  if (atomic_load_explicit(&b->finished, memory_order_acquire) < count) {
    pthread_mutex_lock(&b->lock);
    while (atomic_load_explicit(&b->finished, memory_order_acquire) < count)
      pthread_cond_wait(&b->done, &b->lock);
    pthread_mutex_unlock(&b->lock);
  }
  int rc = atomic_load_explicit(&b->rc, memory_order_relaxed);
  pp_borrow_drop(b);
  return rc;
}

cpuexec_executor *cpuexec__pp_app_executor(pthreadpool_t pool, size_t threads) {
  cpuexec_foreign_executor_ops ops;
  cpuexec_foreign_executor_ops_init(&ops);
  ops.effective_threads = threads > INT32_MAX ? INT32_MAX : (int32_t)threads;
  ops.run_ranges = pp_app_run_ranges;
  cpuexec_executor *exec = NULL;
  if (cpuexec_executor_create_foreign(&ops, pool, &exec) != 0)
    return NULL;
  return exec;
}
