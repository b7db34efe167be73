/* The kernel after migration: cpuexec_parallel_for, no OpenMP
 * (doc/migrating-openmp.md, step 4). */
#include <stdlib.h>

#include <cpuexec.h>
#include <cpuexec/compat/omp_migrate.h>

#include "openmp_kernel.h"

static double blur_row(const double *row, double *scratch, double *out, int64_t cols) {
  for (int64_t c = 0; c < cols; c++) {
    double left = row[c > 0 ? c - 1 : 0], right = row[c + 1 < cols ? c + 1 : cols - 1];
    scratch[c] = left + 2 * row[c] + right;
  }
  double sum = 0;
  for (int64_t c = 0; c < cols; c++) {
    out[c] = scratch[c];
    sum += scratch[c];
  }
  return sum;
}

/* Step 1: what the loop body reads and writes, in one struct. */
typedef struct blur_ctx {
  const double *in;
  double *out;
  int64_t cols;
  double *scratch;               /* one row per participant */
  cpuexec_omp_partial *partials; /* reduction(+:total): one per participant */
} blur_ctx;

/* Step 2: the loop body, unchanged but for omp_get_thread_num(). */
CPUEXEC_RANGE_FN(blur_range, blur_ctx, c, r) {
  uint32_t me = cpuexec_omp_thread_num();
  double *mine = c->scratch + (size_t)me * (size_t)c->cols;
  c->partials[me].value += blur_row(c->in + r * c->cols, mine, c->out + r * c->cols, c->cols);
}

int blur_rows_cpuexec(cpuexec_executor *exec, const double *in, double *out, int64_t rows, int64_t cols,
                      double *total) {
  /* Step 3: scratch and partials sized for the most participants. */
  uint32_t most = cpuexec_omp_max_participants(exec);
  blur_ctx c = {in, out, cols, malloc((size_t)most * (size_t)cols * sizeof(double)),
                calloc(most, sizeof(cpuexec_omp_partial))};
  int rc = (c.scratch == NULL || c.partials == NULL) ? CPUEXEC_ENOMEM
                                                     : cpuexec_parallel_for(exec, rows, 1, &c, blur_range, 0);
  /* Step 4: the reduction's combine, in participant order. */
  double sum = 0;
  for (uint32_t p = 0; rc == 0 && p < most; p++)
    sum += c.partials[p].value;
  if (rc == 0)
    *total = sum;
  free(c.scratch);
  free(c.partials);
  return rc;
}
