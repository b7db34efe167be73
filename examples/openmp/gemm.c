/* gemm after migration (doc/migrating-openmp.md): the loop body of
 * gemm_omp.c, verbatim, in a range function. */
#include <cpuexec.h>

#include "kernels.h"

typedef struct gemm_context {
  int nj, nk;
  double alpha, beta;
  double *C;
  const double *A, *B;
} gemm_context;

static int gemm_rows(void *context, int64_t begin, int64_t end) {
  const gemm_context *ctx = context;
  const int nj = ctx->nj, nk = ctx->nk;
  const double alpha = ctx->alpha, beta = ctx->beta;
  double *C = ctx->C;
  const double *A = ctx->A, *B = ctx->B;
  int i, j, k;
  for (i = (int)begin; i < (int)end; i++) {
    for (j = 0; j < nj; j++)
      C[i * nj + j] *= beta;
    for (k = 0; k < nk; k++)
      for (j = 0; j < nj; j++)
        C[i * nj + j] += alpha * A[i * nk + k] * B[k * nj + j];
  }
  return 0;
}

int kernel_gemm(int ni, int nj, int nk, double alpha, double beta, double *C, const double *A, const double *B) {
  cpuexec_executor *exec;
  int rc = cpuexec_kernel_executor("kernel_gemm", CPUEXEC_EXECUTOR_SUPPORTED, &exec);
  if (rc != 0)
    return rc;
  gemm_context ctx = {nj, nk, alpha, beta, C, A, B};
  return cpuexec_parallel_for(exec, ni, 1, &ctx, gemm_rows, 0);
}
