/* The tests' foreign pool (foreign_pool.h). Every field but the worker
 * thread ids (written before the workers start) is guarded by mutex. */
#include "foreign_pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct foreign_pool {
  pthread_mutex_t run_lock; /* one run at a time */
  pthread_mutex_t mutex;
  pthread_cond_t wake;
  pthread_cond_t done;
  uint32_t threads;
  uint64_t generation;
  uint32_t pending;
  int first_error;
  bool stopping;
  int64_t count;
  void *arg;
  cpuexec_range_fn fn;
  pthread_t caller;
  bool running;
  pthread_t *workers; /* workers[k - 1] runs index k */
};

typedef struct worker_arg {
  foreign_pool *pool;
  uint32_t index;
} worker_arg;

static void *worker_main(void *p) {
  worker_arg *w = p;
  foreign_pool *pool = w->pool;
  uint32_t index = w->index;
  free(w);
  uint64_t seen = 0;
  pthread_mutex_lock(&pool->mutex);
  for (;;) {
    while (!pool->stopping && pool->generation == seen) pthread_cond_wait(&pool->wake, &pool->mutex);
    if (pool->stopping) break;
    seen = pool->generation;
    if ((int64_t)index >= pool->count) continue;
    void *arg = pool->arg;
    cpuexec_range_fn fn = pool->fn;
    pthread_mutex_unlock(&pool->mutex);
    int rc = fn(arg, index, index + 1);
    pthread_mutex_lock(&pool->mutex);
    if (rc != 0 && pool->first_error == 0) pool->first_error = rc;
    if (--pool->pending == 0) pthread_cond_signal(&pool->done);
  }
  pthread_mutex_unlock(&pool->mutex);
  return NULL;
}

foreign_pool *foreign_pool_create(uint32_t threads) {
  foreign_pool *pool = calloc(1, sizeof *pool);
  if (!pool) return NULL;
  pthread_mutex_init(&pool->run_lock, NULL);
  pthread_mutex_init(&pool->mutex, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pthread_cond_init(&pool->done, NULL);
  pool->threads = threads;
  pool->workers = calloc(threads, sizeof *pool->workers);
  for (uint32_t k = 1; k < threads; k++) {
    worker_arg *w = malloc(sizeof *w);
    w->pool = pool;
    w->index = k;
    pthread_create(&pool->workers[k - 1], NULL, worker_main, w);
  }
  return pool;
}

void foreign_pool_destroy(foreign_pool *pool) {
  if (!pool) return;
  pthread_mutex_lock(&pool->mutex);
  pool->stopping = true;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);
  for (uint32_t k = 1; k < pool->threads; k++) pthread_join(pool->workers[k - 1], NULL);
  free(pool->workers);
  pthread_cond_destroy(&pool->done);
  pthread_cond_destroy(&pool->wake);
  pthread_mutex_destroy(&pool->mutex);
  pthread_mutex_destroy(&pool->run_lock);
  free(pool);
}

int foreign_pool_run_ranges(void *p, int64_t count, void *arg, cpuexec_range_fn fn) {
  foreign_pool *pool = p;
  if (count <= 0) return 0;
  if (count > pool->threads) return CPUEXEC_EINVAL; /* more than the pool was made for */
  pthread_mutex_lock(&pool->run_lock);
  pthread_mutex_lock(&pool->mutex);
  pool->count = count;
  pool->arg = arg;
  pool->fn = fn;
  pool->first_error = 0;
  pool->pending = (uint32_t)count - 1;
  pool->caller = pthread_self();
  pool->running = true;
  pool->generation++;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);
  int rc = fn(arg, 0, 1);
  pthread_mutex_lock(&pool->mutex);
  while (pool->pending > 0) pthread_cond_wait(&pool->done, &pool->mutex);
  if (rc == 0) rc = pool->first_error;
  pool->running = false;
  pthread_mutex_unlock(&pool->mutex);
  pthread_mutex_unlock(&pool->run_lock);
  return rc;
}

int foreign_pool_index_of_self(foreign_pool *pool) {
  pthread_t self = pthread_self();
  for (uint32_t k = 1; k < pool->threads; k++)
    if (pthread_equal(self, pool->workers[k - 1])) return (int)k;
  pthread_mutex_lock(&pool->mutex);
  int index = pool->running && pthread_equal(self, pool->caller) ? 0 : -1;
  pthread_mutex_unlock(&pool->mutex);
  return index;
}

uint64_t foreign_pool_runs(foreign_pool *pool) {
  pthread_mutex_lock(&pool->mutex);
  uint64_t runs = pool->generation;
  pthread_mutex_unlock(&pool->mutex);
  return runs;
}

cpuexec_executor *foreign_pool_executor(foreign_pool *pool) {
  cpuexec_foreign_executor_ops ops;
  cpuexec_foreign_executor_ops_init(&ops);
  ops.effective_threads = pool->threads;
  ops.run_ranges = foreign_pool_run_ranges;
  cpuexec_executor *exec = NULL;
  return cpuexec_executor_create_foreign(&ops, pool, &exec) == 0 ? exec : NULL;
}
