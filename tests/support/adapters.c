/* Helpers shared by the adapter tests (declared in adapters.h). */
#define TEST_UTIL_SECOND_FILE 1
#include "test_util.h"
#include "rendezvous.h"

#include <stdlib.h>
#include <time.h>

int test_executor_create(uint32_t threads, test_owned_executor *out) {
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = (int32_t)threads;
  policy.spin_policy = CPUEXEC_SPIN_PARK_IMMEDIATELY;
  policy.spin_budget = 0;
  policy.affinity_policy = CPUEXEC_AFFINITY_NONE; /* more threads than this machine has cores */
  out->resolved = NULL;
  out->exec = NULL;
  int rc = cpuexec_policy_resolve(&policy, NULL, &out->resolved);
  if (rc != 0)
    return rc;
  rc = cpuexec_executor_create(out->resolved, &out->exec);
  if (rc != 0) {
    cpuexec_resolved_destroy(out->resolved);
    out->resolved = NULL;
  }
  return rc;
}

void test_executor_destroy(test_owned_executor *t) {
  if (t->exec != NULL)
    cpuexec_executor_release(t->exec);
  if (t->resolved != NULL)
    cpuexec_resolved_destroy(t->resolved);
  t->exec = NULL;
  t->resolved = NULL;
}

/* The pool: a generation counter under one mutex. run bumps the generation
 * and waits for `finished` to reach the worker count; each worker runs the
 * job once per generation. Every field is guarded by mutex. */
struct test_pool {
  pthread_mutex_t mutex;
  pthread_cond_t wake;
  pthread_cond_t done;
  uint32_t workers;
  uint64_t generation;
  uint32_t finished;
  int first_error;
  bool stopping;
  void *ctx;
  cpuexec_worker_job_fn job;
  pthread_t *threads;
  uint32_t *ids;
};

typedef struct pool_worker_arg {
  test_pool *pool;
  uint32_t id;
} pool_worker_arg;

static void *pool_worker(void *arg) {
  pool_worker_arg *w = arg;
  test_pool *pool = w->pool;
  uint64_t seen = 0;
  pthread_mutex_lock(&pool->mutex);
  for (;;) {
    while (!pool->stopping && pool->generation == seen)
      pthread_cond_wait(&pool->wake, &pool->mutex);
    if (pool->stopping)
      break;
    seen = pool->generation;
    void *ctx = pool->ctx;
    cpuexec_worker_job_fn job = pool->job;
    pthread_mutex_unlock(&pool->mutex);
    int rc = job(ctx, w->id, pool->workers);
    pthread_mutex_lock(&pool->mutex);
    if (rc != 0 && pool->first_error == 0)
      pool->first_error = rc;
    if (++pool->finished == pool->workers)
      pthread_cond_signal(&pool->done);
  }
  pthread_mutex_unlock(&pool->mutex);
  free(w);
  return NULL;
}

test_pool *test_pool_create(uint32_t workers) {
  test_pool *pool = calloc(1, sizeof *pool);
  if (pool == NULL)
    return NULL;
  pthread_mutex_init(&pool->mutex, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pthread_cond_init(&pool->done, NULL);
  pool->workers = workers;
  pool->threads = calloc(workers, sizeof *pool->threads);
  for (uint32_t i = 0; i < workers; i++) {
    pool_worker_arg *w = malloc(sizeof *w);
    w->pool = pool;
    w->id = i;
    pthread_create(&pool->threads[i], NULL, pool_worker, w);
  }
  return pool;
}

void test_pool_destroy(test_pool *pool) {
  pthread_mutex_lock(&pool->mutex);
  pool->stopping = true;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);
  for (uint32_t i = 0; i < pool->workers; i++)
    pthread_join(pool->threads[i], NULL);
  free(pool->threads);
  pthread_cond_destroy(&pool->done);
  pthread_cond_destroy(&pool->wake);
  pthread_mutex_destroy(&pool->mutex);
  free(pool);
}

int test_pool_run(void *arg, void *ctx, cpuexec_worker_job_fn job) {
  test_pool *pool = arg;
  pthread_mutex_lock(&pool->mutex);
  pool->ctx = ctx;
  pool->job = job;
  pool->finished = 0;
  pool->first_error = 0;
  pool->generation++;
  pthread_cond_broadcast(&pool->wake);
  while (pool->finished < pool->workers)
    pthread_cond_wait(&pool->done, &pool->mutex);
  int rc = pool->first_error;
  pthread_mutex_unlock(&pool->mutex);
  return rc;
}

cpuexec_job_pool test_pool_as_job_pool(test_pool *pool) { return (cpuexec_job_pool){test_pool_run, pool}; }

void test_coverage_init(test_coverage *c, int64_t count) {
  c->count = count;
  /* Huge totals are checked by their ranges only. */
  c->hits = count > 0 && count <= (1 << 22) ? calloc((size_t)count, sizeof *c->hits) : NULL;
  atomic_init(&c->callbacks, 0);
  atomic_init(&c->next_range, 0);
  atomic_init(&c->arrived, 0);
  c->wait_for_all = 0;
}

void test_coverage_free(test_coverage *c) {
  free(c->hits);
  c->hits = NULL;
}

int test_coverage_record(void *ctx, int64_t begin, int64_t end) {
  test_coverage *c = ctx;
  if (c->wait_for_all)
    test_rendezvous(&c->arrived);
  atomic_fetch_add(&c->callbacks, 1);
  unsigned slot = atomic_fetch_add(&c->next_range, 1);
  if (slot < TEST_MAX_RANGES) {
    c->range_begin[slot] = begin;
    c->range_end[slot] = end;
    c->range_thread[slot] = pthread_self();
  }
  if (c->hits != NULL)
    for (int64_t i = begin; i < end; i++)
      atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
  return 0;
}

int test_coverage_exact(const test_coverage *c) {
  if (c->hits != NULL) {
    for (int64_t i = 0; i < c->count; i++)
      if (atomic_load(&c->hits[i]) != 1)
        return 0;
    return 1;
  }
  /* By ranges: sorted by begin they must tile [0, count). */
  unsigned n = atomic_load(&c->next_range);
  if (n > TEST_MAX_RANGES)
    return 0;
  int64_t at = 0;
  for (unsigned k = 0; k < n; k++) {
    unsigned found = n;
    for (unsigned j = 0; j < n; j++)
      if (c->range_begin[j] == at && c->range_end[j] > at)
        found = j;
    if (found == n)
      return 0;
    at = c->range_end[found];
  }
  return at == c->count;
}

unsigned test_coverage_threads(const test_coverage *c) {
  unsigned n = atomic_load(&c->next_range);
  if (n > TEST_MAX_RANGES)
    n = TEST_MAX_RANGES;
  unsigned distinct = 0;
  for (unsigned i = 0; i < n; i++) {
    unsigned j = 0;
    while (j < i && !pthread_equal(c->range_thread[j], c->range_thread[i]))
      j++;
    distinct += j == i;
  }
  return distinct;
}
