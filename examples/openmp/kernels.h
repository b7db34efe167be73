/* The kernels of doc/migrating-openmp.md, each as its OpenMP original
 * (name_omp, in name_omp.c, built by an OpenMP compiler) and migrated to
 * cpuexec_parallel_for (name, in name.c, built without OpenMP). The migrated
 * kernel keeps the original's parameters, so its callers do not change; it
 * returns 0, or the library's CPUEXEC_E* code with cpuexec_error_message()
 * saying why (kernel_atax: CPUEXEC_ENOMEM when its partial sums could not be
 * allocated).
 * Matrices are row-major: X[i * columns + j]. */
#ifndef CPUEXEC_EXAMPLES_OPENMP_KERNELS_H
#define CPUEXEC_EXAMPLES_OPENMP_KERNELS_H

/* C = alpha A B + beta C; C is ni x nj, A ni x nk, B nk x nj. */
void kernel_gemm_omp(int ni, int nj, int nk, double alpha, double beta, double *C, const double *A, const double *B);
int kernel_gemm(int ni, int nj, int nk, double alpha, double beta, double *C, const double *A, const double *B);

/* tsteps sweeps of a 5-point average over the inside of the n x n grids A
 * and B (B from A, then A from B); the border is never written. */
void kernel_jacobi_2d_omp(int tsteps, int n, double *A, double *B);
int kernel_jacobi_2d(int tsteps, int n, double *A, double *B);

/* tmp = A x, y = A^T tmp (A is m x n), and *norm = the sum of y[j]^2. */
void kernel_atax_omp(int m, int n, const double *A, const double *x, double *y, double *tmp, double *norm);
int kernel_atax(int m, int n, const double *A, const double *x, double *y, double *tmp, double *norm);

#endif
