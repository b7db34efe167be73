/* A libcpuexec executor as pthreadpool's struct pthreadpool_executor
 * (cpuexec/compat/pthreadpool_executor.h): libcpuexec-pthreadpool's
 * pthreadpool_create_v2() given it runs every item of each parallelize
 * family on the executor's threads (the caller and its workers), both of
 * them, exactly once, starting no thread; num_threads is the executor's
 * workers; the context rejects a foreign executor with a message; a serial
 * executor lends none. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cpuexec.h>
#include <cpuexec/compat/pthreadpool_executor.h>
#include <cpuexec/foreign.h>
#include <pthreadpool.h>

#include "support/executors.h"
#include "support/test_util.h"
#include "support/threads.h"

/* ---- where the items ran -------------------------------------------------- */
typedef struct items {
  size_t count;
  atomic_int *hits;
  int threads[2];       /* the executor's threads: the caller, its worker */
  atomic_int outside;   /* items on any other thread */
  atomic_uint arrived;  /* bit k: threads[k] ran an item */
  bool rendezvous;      /* each thread's first item waits for the other */
} items;

static int gettid_now(void) { return test_thread_id(); }

static void item(items *it, size_t flat) {
  int tid = gettid_now(), k = tid == it->threads[0] ? 0 : tid == it->threads[1] ? 1 : -1;
  if (k < 0) atomic_fetch_add(&it->outside, 1);
  else if (!(atomic_fetch_or(&it->arrived, 1u << k) & (1u << k)) && it->rendezvous)
    while (atomic_load(&it->arrived) != 3u) sched_yield(); /* the other thread has started: it will arrive */
  if (flat < it->count) atomic_fetch_add(&it->hits[flat], 1);
}

#define I 37u
#define J 23u
#define K 5u
static void f1(void *c, size_t i) { item(c, i); }
static void f1t(void *c, size_t t, size_t i) { (void)t; item(c, i); }
static void f1tile(void *c, size_t i, size_t n) { for (size_t x = i; x < i + n; x++) item(c, x); }
static void f2(void *c, size_t i, size_t j) { item(c, i * J + j); }
static void f2tile(void *c, size_t i, size_t j, size_t ni, size_t nj) {
  for (size_t x = i; x < i + ni; x++)
    for (size_t y = j; y < j + nj; y++) item(c, x * J + y);
}
static void f3tile(void *c, size_t i, size_t j, size_t k, size_t nj, size_t nk) {
  for (size_t y = j; y < j + nj; y++)
    for (size_t z = k; z < k + nk; z++) item(c, (i * J + y) * K + z);
}

typedef struct family {
  const char *name;
  size_t count;
  void (*run)(pthreadpool_t pool, items *it);
} family;

static void r1(pthreadpool_t p, items *it) { pthreadpool_parallelize_1d(p, f1, it, I, 0); }
static void r1t(pthreadpool_t p, items *it) { pthreadpool_parallelize_1d_with_thread(p, f1t, it, I, 0); }
static void r1tile(pthreadpool_t p, items *it) { pthreadpool_parallelize_1d_tile_1d(p, f1tile, it, I, 4, 0); }
static void r1dyn(pthreadpool_t p, items *it) { pthreadpool_parallelize_1d_tile_1d_dynamic(p, f1tile, it, I, 3, 0); }
static void r2(pthreadpool_t p, items *it) { pthreadpool_parallelize_2d(p, f2, it, I, J, 0); }
static void r2tile(pthreadpool_t p, items *it) { pthreadpool_parallelize_2d_tile_2d(p, f2tile, it, I, J, 4, 5, 0); }
static void r2dyn(pthreadpool_t p, items *it) {
  pthreadpool_parallelize_2d_tile_2d_dynamic(p, f2tile, it, I, J, 2, 3, PTHREADPOOL_FLAG_DONT_SPIN_WORKERS);
}
static void r3tile(pthreadpool_t p, items *it) { pthreadpool_parallelize_3d_tile_2d(p, f3tile, it, I, J, K, 4, 2, 0); }

static const family families[] = {
    {"1d", I, r1},
    {"1d_with_thread", I, r1t},
    {"1d_tile_1d", I, r1tile},
    {"1d_tile_1d_dynamic", I, r1dyn},
    {"2d", I * J, r2},
    {"2d_tile_2d", I * J, r2tile},
    {"2d_tile_2d_dynamic", I * J, r2dyn},
    {"3d_tile_2d", I * J * K, r3tile},
};
#define FAMILIES (sizeof families / sizeof families[0])

static int note_tid(void *ctx, int64_t begin, int64_t end) {
  (void)end;
  ((int *)ctx)[begin] = gettid_now();
  return 0;
}

/* ---- every family on the session's threads ----------------------------------- */
static int families_on_the_executor(void *arg) {
  cpuexec_executor *exec = arg;
  int tids[2] = {0, 0};
  assert_int_equal(cpuexec_parallel_for_flags(exec, 2, 1, tids, note_tid, 0, CPUEXEC_FOR_EVERY_PARTICIPANT), 0);
  cpuexec_pthreadpool_context *ctx = NULL;
  assert_int_equal(cpuexec_pthreadpool_context_create(NULL, &ctx), 0); /* the installed executor */
  assert_int_equal(cpuexec_pthreadpool_num_threads(ctx), 1);
  struct pthreadpool_executor ops = {cpuexec_pthreadpool_num_threads, cpuexec_pthreadpool_schedule};
  pthreadpool_t pool = pthreadpool_create_v2(&ops, ctx, 0);
  assert_non_null(pool);
  assert_int_equal(pthreadpool_get_threads_count(pool), 2);
  int before = task_baseline();
  for (size_t f = 0; f < FAMILIES; f++)
    for (int rendezvous = 1; rendezvous >= 0; rendezvous--) {
      items it;
      memset(&it, 0, sizeof it);
      it.count = families[f].count;
      it.hits = calloc(it.count, sizeof *it.hits);
      assert_non_null(it.hits);
      it.threads[0] = gettid_now();
      it.threads[1] = tids[0] == it.threads[0] ? tids[1] : tids[0];
      it.rendezvous = rendezvous;
      families[f].run(pool, &it);
      for (size_t e = 0; e < it.count; e++)
        if (atomic_load(&it.hits[e]) != 1)
          fail_msg("%s: item %zu ran %d times", families[f].name, e, atomic_load(&it.hits[e]));
      if (atomic_load(&it.outside) != 0)
        fail_msg("%s: %d items ran off the session's threads", families[f].name, atomic_load(&it.outside));
      /* With the rendezvous both threads ran items: the worker was lent. */
      if (rendezvous && atomic_load(&it.arrived) != 3u)
        fail_msg("%s: items ran on threads %#x of {caller, worker} only", families[f].name, atomic_load(&it.arrived));
      free(it.hits);
    }
  assert_int_equal(task_count(), before); /* no thread started */
  pthreadpool_destroy(pool);
  cpuexec_pthreadpool_context_destroy(ctx);
  return 0;
}

static void every_family_runs_on_the_sessions_threads(void **state) {
  (void)state;
  cpuexec_session *s = test_session(2);
  assert_int_equal(cpuexec_session_run(s, cpuexec_session_executor(s), families_on_the_executor), 0);
  cpuexec_session_destroy(s);
}

/* ---- the context ------------------------------------------------------------------ */
static int foreign_run(void *pool, int64_t count, void *arg, cpuexec_range_fn fn) {
  (void)pool;
  return fn(arg, 0, count);
}

static void the_context_follows_its_executor(void **state) {
  (void)state;
  cpuexec_executor *three = test_executor(3), *one = test_executor(1);
  cpuexec_pthreadpool_context *ctx = NULL;
  assert_int_equal(cpuexec_pthreadpool_context_create(three, &ctx), 0);
  assert_int_equal(cpuexec_pthreadpool_num_threads(ctx), 2);
  struct pthreadpool_executor ops = {cpuexec_pthreadpool_num_threads, cpuexec_pthreadpool_schedule};
  pthreadpool_t pool = pthreadpool_create_v2(&ops, ctx, 8);
  assert_int_equal(pthreadpool_get_threads_count(pool), 3);
  pthreadpool_destroy(pool);
  cpuexec_pthreadpool_context_destroy(ctx);
  /* A serial executor lends no thread: a one-thread pool. */
  assert_int_equal(cpuexec_pthreadpool_context_create(one, &ctx), 0);
  assert_int_equal(cpuexec_pthreadpool_num_threads(ctx), 0);
  pool = pthreadpool_create_v2(&ops, ctx, 8);
  assert_int_equal(pthreadpool_get_threads_count(pool), 1);
  pthreadpool_destroy(pool);
  cpuexec_pthreadpool_context_destroy(ctx);
  /* Wrong input, with a message naming it. */
  assert_int_equal(cpuexec_pthreadpool_context_create(three, NULL), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "out"));
  cpuexec_foreign_executor_ops fops;
  cpuexec_foreign_executor_ops_init(&fops);
  fops.run_ranges = foreign_run;
  fops.effective_threads = 2;
  cpuexec_executor *foreign = NULL;
  assert_int_equal(cpuexec_executor_create_foreign(&fops, NULL, &foreign), 0);
  ctx = (cpuexec_pthreadpool_context *)&fops;
  assert_int_equal(cpuexec_pthreadpool_context_create(foreign, &ctx), CPUEXEC_ENOTSUP);
  assert_null(ctx);
  assert_non_null(strstr(cpuexec_error_message(), "foreign"));
  assert_int_equal(cpuexec_pthreadpool_num_threads(NULL), 0);
  cpuexec_pthreadpool_schedule(NULL, NULL, NULL); /* ignored */
  cpuexec_pthreadpool_context_destroy(NULL);
  assert_int_equal(cpuexec_executor_release(foreign), 0);
  assert_int_equal(cpuexec_executor_release(one), 0);
  assert_int_equal(cpuexec_executor_release(three), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_family_runs_on_the_sessions_threads),
      cmocka_unit_test(the_context_follows_its_executor),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
