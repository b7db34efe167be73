/* The kernel before migration: OpenMP (doc/migrating-openmp.md, step 0). */
#include <omp.h>
#include <stdlib.h>

#include "openmp_kernel.h"

/* out[r][c] = in[r][c-1] + 2 in[r][c] + in[r][c+1] (edges clamped), built in
 * a scratch row first (as a real kernel would for a multi-pass filter). */
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

double blur_rows_openmp(const double *in, double *out, int64_t rows, int64_t cols) {
  int threads = omp_get_max_threads();
  double *scratch = malloc((size_t)threads * (size_t)cols * sizeof *scratch);
  if (scratch == NULL)
    return -1;
  double total = 0;
#pragma omp parallel for reduction(+ : total) schedule(static)
  for (int64_t r = 0; r < rows; r++) {
    double *mine = scratch + (size_t)omp_get_thread_num() * (size_t)cols;
    total += blur_row(in + r * cols, mine, out + r * cols, cols);
  }
  free(scratch);
  return total;
}
