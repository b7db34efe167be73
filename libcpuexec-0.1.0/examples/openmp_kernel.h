/* The kernel of doc/migrating-openmp.md, before and after. Both blur each
 * row of in (rows x cols) with the taps 1 2 1 into out, through a
 * per-thread scratch row, and return the sum of out. */
#ifndef CPUEXEC_EXAMPLES_OPENMP_KERNEL_H
#define CPUEXEC_EXAMPLES_OPENMP_KERNEL_H

#include <stdint.h>

#include <cpuexec/executor.h>

/* Before: #pragma omp parallel for reduction(+:total), omp_get_thread_num(). */
double blur_rows_openmp(const double *in, double *out, int64_t rows, int64_t cols);
/* After: cpuexec_parallel_for on exec (NULL: serial on the caller).
 * Returns 0 and sets *total, or a CPUEXEC_E* code. */
int blur_rows_cpuexec(cpuexec_executor *exec, const double *in, double *out, int64_t rows, int64_t cols,
                      double *total);

#endif
