/* atax before migration: one parallel region, a `nowait` loop, and a
 * reduction (doc/migrating-openmp.md). */
#include "kernels.h"

void kernel_atax_omp(int m, int n, const double *A, const double *x, double *y, double *tmp, double *norm) {
  int i, j;
  double sum = 0;
#pragma omp parallel private(i, j)
  {
#pragma omp for nowait
    for (j = 0; j < n; j++)
      y[j] = 0;
#pragma omp for
    for (i = 0; i < m; i++) {
      tmp[i] = 0;
      for (j = 0; j < n; j++)
        tmp[i] += A[i * n + j] * x[j];
    }
#pragma omp for reduction(+ : sum)
    for (j = 0; j < n; j++) {
      for (i = 0; i < m; i++)
        y[j] += A[i * n + j] * tmp[i];
      sum += y[j] * y[j];
    }
  }
  *norm = sum;
}
