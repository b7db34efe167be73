/* jacobi-2d before migration: one parallel region, two `omp for` loops per
 * time step, loops from 1 (doc/migrating-openmp.md). */
#include "kernels.h"

void kernel_jacobi_2d_omp(int tsteps, int n, double *A, double *B) {
  int t, i, j;
#pragma omp parallel private(t, i, j)
  {
    for (t = 0; t < tsteps; t++) {
#pragma omp for
      for (i = 1; i < n - 1; i++)
        for (j = 1; j < n - 1; j++)
          B[i * n + j] = 0.2 * (A[i * n + j] + A[i * n + j - 1] + A[i * n + j + 1] + A[(i - 1) * n + j] +
                                A[(i + 1) * n + j]);
#pragma omp for
      for (i = 1; i < n - 1; i++)
        for (j = 1; j < n - 1; j++)
          A[i * n + j] = 0.2 * (B[i * n + j] + B[i * n + j - 1] + B[i * n + j + 1] + B[(i - 1) * n + j] +
                                B[(i + 1) * n + j]);
    }
  }
}
