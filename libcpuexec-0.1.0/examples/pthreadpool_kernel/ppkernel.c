/* ppkernel: see ppkernel.h. Only <pthreadpool.h> and POSIX are used. */
#include <stdatomic.h>
#include <stdlib.h>

#include <pthreadpool.h>

#include "ppkernel.h"

#define PPK_TILE_ROWS 8
#define PPK_TILE_COLS 64

struct ppk_context {
  pthreadpool_t pool;
};

ppk_context *ppk_create(size_t threads) {
  ppk_context *context = malloc(sizeof *context);
  if (context == NULL)
    return NULL;
  context->pool = pthreadpool_create(threads);
  if (context->pool == NULL) {
    free(context);
    return NULL;
  }
  return context;
}

void ppk_destroy(ppk_context *context) {
  if (context != NULL) {
    pthreadpool_destroy(context->pool);
    free(context);
  }
}

size_t ppk_threads(const ppk_context *context) { return pthreadpool_get_threads_count(context->pool); }

typedef struct axpby_job {
  size_t cols;
  float alpha;
  const float *a, *b;
  float *out;
  unsigned long generation; /* this call's number */
  atomic_size_t threads;    /* distinct threads that ran tiles */
} axpby_job;

static atomic_ulong ppk_generation;

static void axpby_tile(void *p, size_t row, size_t col, size_t rows, size_t cols) {
  axpby_job *job = p;
  /* Count each thread once per call. */
  static __thread unsigned long counted;
  if (counted != job->generation) {
    counted = job->generation;
    atomic_fetch_add(&job->threads, 1);
  }
  for (size_t r = row; r < row + rows; r++)
    for (size_t c = col; c < col + cols; c++) {
      size_t i = r * job->cols + c;
      job->out[i] = job->alpha * job->a[i] + job->b[i];
    }
}

size_t ppk_axpby(ppk_context *context, size_t rows, size_t cols, float alpha, const float *a, const float *b,
                 float *out) {
  axpby_job *job = calloc(1, sizeof *job);
  if (job == NULL)
    return 0;
  job->cols = cols;
  job->alpha = alpha;
  job->a = a;
  job->b = b;
  job->out = out;
  job->generation = atomic_fetch_add(&ppk_generation, 1) + 1;
  pthreadpool_parallelize_2d_tile_2d(context->pool, axpby_tile, job, rows, cols, PPK_TILE_ROWS, PPK_TILE_COLS, 0);
  size_t seen = atomic_load(&job->threads);
  free(job);
  return seen;
}
