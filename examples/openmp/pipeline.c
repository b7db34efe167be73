/* A program mid-migration (doc/migrating-openmp.md): it runs gemm, then
 * jacobi_2d, then atax, each migrated when named on the command line and
 * as its OpenMP original otherwise; once outside any session and once in a
 * 2-thread session. Run it with CPUEXEC_OPENMP_REPORT=- and the report
 * lists the kernels still on OpenMP: the ones not named. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cpuexec.h>

#include "kernels.h"

enum { N = 96, TSTEPS = 4 };

typedef struct arrays {
  double A[N * N], B[N * N], C[N * N], x[N], y[N], tmp[N], norm;
  int migrated[3]; /* gemm, jacobi_2d, atax */
} arrays;

static int run_kernels(void *arg) {
  arrays *a = arg;
  int rc = 0;
  if (a->migrated[0])
    rc = kernel_gemm(N, N, N, 1.5, 0.75, a->C, a->A, a->B);
  else
    kernel_gemm_omp(N, N, N, 1.5, 0.75, a->C, a->A, a->B);
  if (rc == 0 && a->migrated[1])
    rc = kernel_jacobi_2d(TSTEPS, N, a->A, a->B);
  else if (rc == 0)
    kernel_jacobi_2d_omp(TSTEPS, N, a->A, a->B);
  if (rc == 0 && a->migrated[2])
    rc = kernel_atax(N, N, a->A, a->x, a->y, a->tmp, &a->norm);
  else if (rc == 0)
    kernel_atax_omp(N, N, a->A, a->x, a->y, a->tmp, &a->norm);
  return rc;
}

int main(int argc, char **argv) {
  static const char *const names[3] = {"gemm", "jacobi_2d", "atax"};
  arrays *a = calloc(1, sizeof *a);
  if (a == NULL)
    return 1;
  for (int i = 1; i < argc; i++) {
    int k = 0;
    while (k < 3 && strcmp(argv[i], names[k]) != 0)
      k++;
    if (k == 3) {
      fprintf(stderr, "usage: %s [gemm] [jacobi_2d] [atax] (the kernels to run migrated)\n", argv[0]);
      return 2;
    }
    a->migrated[k] = 1;
  }
  for (int i = 0; i < N * N; i++)
    a->A[i] = a->B[i] = a->C[i] = (double)(i % 7) / 7;
  for (int i = 0; i < N; i++)
    a->x[i] = (double)(i % 3);
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = 2;
  policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
  cpuexec_session *session = NULL;
  int rc = run_kernels(a);
  if (rc == 0)
    rc = cpuexec_session_create(&policy, &session);
  if (rc == 0)
    rc = cpuexec_session_run(session, a, run_kernels);
  if (rc != 0)
    fprintf(stderr, "pipeline: %s\n", cpuexec_error_message());
  else
    printf("pipeline: sum of squares %.6g\n", a->norm);
  cpuexec_session_destroy(session);
  free(a);
  return rc == 0 ? 0 : 1;
}
