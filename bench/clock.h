/* The benchmarks' clock: CLOCK_MONOTONIC (or another clock) in nanoseconds,
 * as a double so differences divide without casts. One copy for every
 * program under bench/. */
#ifndef CPUEXEC_BENCH_CLOCK_H
#define CPUEXEC_BENCH_CLOCK_H

#include <time.h>

static inline double bench_clock_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline double bench_now_ns(void) { return bench_clock_ns(CLOCK_MONOTONIC); }

#endif
