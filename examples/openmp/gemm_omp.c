/* gemm before migration: one `#pragma omp parallel for` (doc/migrating-openmp.md). */
#include "kernels.h"

void kernel_gemm_omp(int ni, int nj, int nk, double alpha, double beta, double *C, const double *A, const double *B) {
  int i, j, k;
#pragma omp parallel for private(j, k)
  for (i = 0; i < ni; i++) {
    for (j = 0; j < nj; j++)
      C[i * nj + j] *= beta;
    for (k = 0; k < nk; k++)
      for (j = 0; j < nj; j++)
        C[i * nj + j] += alpha * A[i * nk + k] * B[k * nj + j];
  }
}
