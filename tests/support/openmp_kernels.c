/* See openmp_kernels.h. Compiled with an OpenMP compiler only. */
#include "openmp_kernels.h"

#include <omp.h>

int kernel_parallel(int *team) {
  int ran = 0, size = 0;
#pragma omp parallel
  {
#pragma omp atomic
    ran++;
#pragma omp single
    size = omp_get_num_threads();
  }
  *team = size;
  return ran;
}

double kernel_parallel_for_sum(const double *x, int64_t n, int *team) {
  double sum = 0;
  int size = 0;
#pragma omp parallel for reduction(+ : sum)
  for (int64_t i = 0; i < n; i++) {
    if (i == 0)
      size = omp_get_num_threads();
    sum += x[i];
  }
  *team = size;
  return sum;
}

int kernel_num_threads4(int *team) {
  int ran = 0, size = 0;
#pragma omp parallel num_threads(4)
  {
#pragma omp atomic
    ran++;
#pragma omp single
    size = omp_get_num_threads();
  }
  *team = size;
  return ran;
}

void kernel_empty_region(void) {
#pragma omp parallel
  {
    __asm__ volatile("" ::: "memory");
  }
}

void kernel_set_num_threads(int n) { omp_set_num_threads(n); }
int kernel_get_max_threads(void) { return omp_get_max_threads(); }
int kernel_get_max_active_levels(void) { return omp_get_max_active_levels(); }
void kernel_set_max_active_levels(int n) { omp_set_max_active_levels(n); }
