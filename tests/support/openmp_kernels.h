/* OpenMP kernels the interop tests call from libcpuexec callbacks. The same
 * source is compiled by clang -fopenmp=libomp and by gcc -fopenmp (then
 * linked with -lomp, or with libgomp), so each test program gets its
 * runtime from how it is linked, not from the test's own compiler. Each
 * kernel reports the team size its region got. */
#ifndef CPUEXEC_TESTS_OPENMP_KERNELS_H
#define CPUEXEC_TESTS_OPENMP_KERNELS_H

#include <stdint.h>

/* #pragma omp parallel: returns how many threads ran the body. */
int kernel_parallel(int *team);
/* #pragma omp parallel for reduction(+:sum) over x[0..n). */
double kernel_parallel_for_sum(const double *x, int64_t n, int *team);
/* #pragma omp parallel num_threads(4): returns how many threads ran it. */
int kernel_num_threads4(int *team);
/* An empty #pragma omp parallel: the cost of a region itself (bench). */
void kernel_empty_region(void);
/* omp_set_num_threads(n) on the calling thread, as legacy code does. */
void kernel_set_num_threads(int n);
int kernel_get_max_threads(void);
int kernel_get_max_active_levels(void);
void kernel_set_max_active_levels(int n);

#endif
