/* One OpenMP kernel mid-migration (doc/migrating-openmp.md): the OpenMP
 * version runs at top level, then inside libcpuexec callbacks (kept inline
 * by the guard), then the migrated version replaces it. Prints the totals
 * (equal) and exits non-zero if they differ. Run it under
 * `cpuexec-info --openmp-report examples/openmp_migration` to see which
 * OpenMP kernels are left to migrate. */
#include <stdio.h>
#include <stdlib.h>

#include <cpuexec.h>

#include "openmp_kernel.h"

enum { ROWS = 512, COLS = 256, BLOCKS = 8 };

typedef struct blocks_ctx {
  const double *in;
  double *out;
  double totals[BLOCKS];
} blocks_ctx;

/* An unmigrated caller: each callback runs the OpenMP kernel on its block. */
static int openmp_per_block(void *arg, int64_t begin, int64_t end) {
  blocks_ctx *b = arg;
  for (int64_t k = begin; k < end; k++) {
    int64_t first = k * (ROWS / BLOCKS);
    b->totals[k] = blur_rows_openmp(b->in + first * COLS, b->out + first * COLS, ROWS / BLOCKS, COLS);
  }
  return 0;
}

int main(void) {
  double *in = malloc(sizeof(double) * ROWS * COLS), *out = malloc(sizeof(double) * ROWS * COLS);
  if (in == NULL || out == NULL)
    return 1;
  for (int64_t i = 0; i < ROWS * COLS; i++)
    in[i] = (double)(i % 17);
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
  policy.num_threads = 2;
  cpuexec_resolved *resolved = NULL;
  cpuexec_executor *exec = NULL;
  if (cpuexec_policy_resolve(&policy, NULL, &resolved) != 0 || cpuexec_executor_create(resolved, &exec) != 0) {
    fprintf(stderr, "openmp_migration: %s\n", cpuexec_error_message());
    return 1;
  }
  double top = blur_rows_openmp(in, out, ROWS, COLS);
  blocks_ctx b = {in, out, {0}};
  int rc = cpuexec_parallel_for(exec, BLOCKS, 1, &b, openmp_per_block, 0);
  double in_callbacks = 0;
  for (int k = 0; k < BLOCKS; k++)
    in_callbacks += b.totals[k];
  double migrated = 0;
  if (rc == 0)
    rc = blur_rows_cpuexec(exec, in, out, ROWS, COLS, &migrated);
  printf("OpenMP top level: %.0f\nOpenMP in callbacks: %.0f\nmigrated: %.0f\n", top, in_callbacks, migrated);
  cpuexec_executor_release(exec);
  cpuexec_resolved_destroy(resolved);
  free(in);
  free(out);
  return rc == 0 && top == migrated && in_callbacks == migrated ? 0 : 1;
}
