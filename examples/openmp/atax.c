/* atax after migration (doc/migrating-openmp.md): three calls, and the
 * reduction as one partial sum per participant, added up after the call. */
#include <stdlib.h>

#include <cpuexec.h>
#include <cpuexec/compat/omp_migrate.h>

#include "kernels.h"

typedef struct atax_context {
  int m, n;
  const double *A, *x;
  double *y, *tmp;
  cpuexec_omp_partial *sums; /* reduction(+ : sum): one per participant */
} atax_context;

/* `omp for nowait`: a call like the others (its return waits, which
 * OpenMP's nowait did not need; the result is the same). */
static int atax_clear_y(void *context, int64_t begin, int64_t end) {
  const atax_context *ctx = context;
  double *y = ctx->y;
  int j;
  for (j = (int)begin; j < (int)end; j++)
    y[j] = 0;
  return 0;
}

static int atax_tmp(void *context, int64_t begin, int64_t end) {
  const atax_context *ctx = context;
  const int n = ctx->n;
  const double *A = ctx->A, *x = ctx->x;
  double *tmp = ctx->tmp;
  int i, j;
  for (i = (int)begin; i < (int)end; i++) {
    tmp[i] = 0;
    for (j = 0; j < n; j++)
      tmp[i] += A[i * n + j] * x[j];
  }
  return 0;
}

/* `omp for reduction(+ : sum)`: the range's sum goes to this participant's
 * partial (a participant may run several ranges of one call). */
static int atax_y(void *context, int64_t begin, int64_t end) {
  const atax_context *ctx = context;
  const int m = ctx->m, n = ctx->n;
  const double *A = ctx->A, *tmp = ctx->tmp;
  double *y = ctx->y;
  int i, j;
  double sum = 0;
  for (j = (int)begin; j < (int)end; j++) {
    for (i = 0; i < m; i++)
      y[j] += A[i * n + j] * tmp[i];
    sum += y[j] * y[j];
  }
  ctx->sums[cpuexec_participant_index()].value += sum;
  return 0;
}

int kernel_atax(int m, int n, const double *A, const double *x, double *y, double *tmp, double *norm) {
  cpuexec_executor *exec;
  int rc = cpuexec_kernel_executor("kernel_atax", CPUEXEC_EXECUTOR_SUPPORTED, &exec);
  if (rc != 0)
    return rc;
  int32_t participants = cpuexec_executor_effective_threads(exec);
  atax_context ctx = {m, n, A, x, y, tmp, calloc((size_t)participants, sizeof(cpuexec_omp_partial))};
  if (ctx.sums == NULL)
    return CPUEXEC_ENOMEM;
  rc = cpuexec_parallel_for(exec, n, 1, &ctx, atax_clear_y, 0);
  if (rc == 0)
    rc = cpuexec_parallel_for(exec, m, 1, &ctx, atax_tmp, 0);
  if (rc == 0)
    rc = cpuexec_parallel_for(exec, n, 1, &ctx, atax_y, 0);
  if (rc == 0) {
    double sum = 0;
    for (int32_t p = 0; p < participants; p++)
      sum += ctx.sums[p].value;
    *norm = sum;
  }
  free(ctx.sums);
  return rc;
}
