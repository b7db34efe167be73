/* Cost per region of carrying the caller's floating-point control state to
 * the workers (CPUEXEC_FOR_INHERIT_FP_ENV): the same empty 2-way
 * region with and without the flag, interleaved over 9 rounds; the median
 * per region of each and their difference. Usage: bench_fpenv [regions]
 * (default 200000; num_threads=2, affinity_policy=none so it runs anywhere).
 * The region figures move with the machine's load: compare the two rows of
 * one run. Run by `make bench` (once, after the table); public API only. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cpuexec.h>
#include "../stats.h"

#define ROUNDS 9

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int body(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  (void)begin;
  (void)end;
  return 0;
}

static double per_region(cpuexec_executor *exec, long regions, uint32_t flags) {
  uint64_t t0 = now_ns();
  for (long i = 0; i < regions; i++)
    if (cpuexec_parallel_for_flags(exec, 2, 1, NULL, body, 0, flags) != 0) return -1;
  return (double)(now_ns() - t0) / (double)regions;
}

int main(int argc, char **argv) {
  long regions = argc > 1 ? atol(argv[1]) : 200000;
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = 2;
  p.affinity_policy = CPUEXEC_AFFINITY_NONE;
  cpuexec_session *s;
  if (regions < 1 || cpuexec_session_create(&p, &s) != 0) {
    fprintf(stderr, "bench_fpenv: %s\n", regions < 1 ? "regions must be at least 1" : cpuexec_error_message());
    return 1;
  }
  cpuexec_executor *exec = cpuexec_session_executor(s);
  double plain[ROUNDS], carried[ROUNDS];
  per_region(exec, regions / 10 + 1, CPUEXEC_FOR_INHERIT_FP_ENV); /* warm up */
  for (int r = 0; r < ROUNDS; r++) {
    plain[r] = per_region(exec, regions, 0);
    carried[r] = per_region(exec, regions, CPUEXEC_FOR_INHERIT_FP_ENV);
  }
  bench_sort(plain, ROUNDS);
  bench_sort(carried, ROUNDS);
  double loads[3] = {0, 0, 0};
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf %lf %lf", &loads[0], &loads[1], &loads[2]) != 3) loads[0] = loads[1] = loads[2] = 0;
    fclose(f);
  }
  printf("bench_fpenv: 2 participants, empty body, %ld regions x %d interleaved rounds, load %.2f %.2f %.2f\n",
         regions, ROUNDS, loads[0], loads[1], loads[2]);
  printf("  region, workers keep their own FP state          %8.1f ns\n", plain[ROUNDS / 2]);
  printf("  region, caller's FP state carried (flag)         %8.1f ns\n", carried[ROUNDS / 2]);
  printf("  cost of carrying it, per region                  %8.1f ns\n", carried[ROUNDS / 2] - plain[ROUNDS / 2]);
  cpuexec_session_destroy(s);
  return 0;
}
