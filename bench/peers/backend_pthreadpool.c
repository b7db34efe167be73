/* libcpuexec benchmarks: the pthreadpool backend.
 *
 * pthreadpool_parallelize_1d_tile_1d with tile = chunk: a pool of
 * `participants` threads (the caller is one of them), default flags. */
#include "driver.h"

#include <pthreadpool.h>
#include <stdio.h>

const char bench_backend_name[] = "pthreadpool";

static pthreadpool_t pool;

typedef struct tile_ctx {
  bench_range_fn body;
  void *ctx;
} tile_ctx;

static void run_tile(void *arg, size_t start, size_t tile) {
  const tile_ctx *t = arg;
  t->body(t->ctx, (int64_t)start, (int64_t)(start + tile));
}

int bench_backend_init(unsigned participants, char *err, size_t err_size) {
  pool = pthreadpool_create(participants);
  if (pool == NULL) {
    snprintf(err, err_size, "pthreadpool_create(%u) failed", participants);
    return 1;
  }
  if (pthreadpool_get_threads_count(pool) != participants) {
    snprintf(err, err_size, "the pool has %zu threads", pthreadpool_get_threads_count(pool));
    return 1;
  }
  return 0;
}

void bench_backend_describe(char *buf, size_t size) {
  snprintf(buf, size, "pthreadpool_create(%zu), parallelize_1d_tile_1d, flags 0", pthreadpool_get_threads_count(pool));
}

/* The two-pools variant: one more pool of the same size. */
void *bench_backend_pool_open(unsigned participants) {
  pthreadpool_t p = pthreadpool_create(participants);
  if (p && pthreadpool_get_threads_count(p) != participants) {
    pthreadpool_destroy(p);
    p = NULL;
  }
  return p;
}

void bench_backend_pool_for(void *p, int64_t n, int64_t chunk, bench_range_fn body, void *ctx) {
  tile_ctx t = {body, ctx};
  pthreadpool_parallelize_1d_tile_1d(p, run_tile, &t, (size_t)n, (size_t)chunk, 0);
}

void bench_backend_pool_close(void *p) { pthreadpool_destroy(p); }

void bench_backend_for(int64_t n, int64_t chunk, bench_range_fn body, void *ctx) {
  tile_ctx t = {body, ctx};
  pthreadpool_parallelize_1d_tile_1d(pool, run_tile, &t, (size_t)n, (size_t)chunk, 0);
}

void bench_backend_fini(void) { pthreadpool_destroy(pool); }
