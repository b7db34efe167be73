/* jacobi-2d after migration (doc/migrating-openmp.md): each `omp for` is
 * one cpuexec_parallel_for call, whose return is the loop's barrier. */
#include <cpuexec.h>

#include "kernels.h"

typedef struct jacobi_2d_context {
  int n;
  double *A, *B;
} jacobi_2d_context;

/* The first `omp for`: i from 1 to n - 2 is index i - 1 of the call. */
static int jacobi_2d_b_from_a(void *context, int64_t begin, int64_t end) {
  const jacobi_2d_context *ctx = context;
  const int n = ctx->n;
  double *A = ctx->A, *B = ctx->B;
  int i, j;
  for (i = 1 + (int)begin; i < 1 + (int)end; i++)
    for (j = 1; j < n - 1; j++)
      B[i * n + j] = 0.2 * (A[i * n + j] + A[i * n + j - 1] + A[i * n + j + 1] + A[(i - 1) * n + j] +
                            A[(i + 1) * n + j]);
  return 0;
}

/* The second `omp for`. */
static int jacobi_2d_a_from_b(void *context, int64_t begin, int64_t end) {
  const jacobi_2d_context *ctx = context;
  const int n = ctx->n;
  double *A = ctx->A, *B = ctx->B;
  int i, j;
  for (i = 1 + (int)begin; i < 1 + (int)end; i++)
    for (j = 1; j < n - 1; j++)
      A[i * n + j] = 0.2 * (B[i * n + j] + B[i * n + j - 1] + B[i * n + j + 1] + B[(i - 1) * n + j] +
                            B[(i + 1) * n + j]);
  return 0;
}

int kernel_jacobi_2d(int tsteps, int n, double *A, double *B) {
  cpuexec_executor *exec;
  int rc = cpuexec_kernel_executor("kernel_jacobi_2d", CPUEXEC_EXECUTOR_SUPPORTED, &exec);
  jacobi_2d_context ctx = {n, A, B};
  int t;
  for (t = 0; rc == 0 && t < tsteps; t++) {
    rc = cpuexec_parallel_for(exec, n - 2, 1, &ctx, jacobi_2d_b_from_a, 0);
    if (rc == 0)
      rc = cpuexec_parallel_for(exec, n - 2, 1, &ctx, jacobi_2d_a_from_b, 0);
  }
  return rc;
}
