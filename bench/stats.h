/* The benchmarks' statistics over samples: sorting and the median. One
 * copy for every program under bench/. */
#ifndef CPUEXEC_BENCH_STATS_H
#define CPUEXEC_BENCH_STATS_H

#include <stddef.h>
#include <stdlib.h>

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts v[0 .. n) in rising order. */
static inline void bench_sort(double *v, size_t n) { qsort(v, n, sizeof *v, bench_cmp_double); }

/* The median of v[0 .. n) (n >= 1; for even n the mean of the middle
 * two); sorts v. */
static inline double bench_median(double *v, size_t n) {
  bench_sort(v, n);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
