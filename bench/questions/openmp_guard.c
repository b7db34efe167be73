/* The inline guard's cost, and an OpenMP region inline in a callback,
 * measured through the public API only.
 *
 *   inline call           cpuexec_parallel_for of one range on the caller
 *                         (a one-participant region), with libomp (and
 *                         libgomp, when loaded) present: the guard's begin,
 *                         per-callback and end steps plus the call itself.
 *   raw setters           the two omp_set_* calls made directly: the floor
 *                         the guard adds to (on a loaded machine both move
 *                         together; compare the ratio).
 *   region in callback    an empty #pragma omp parallel (clang, libomp, the
 *                         tool live: four OMPT callbacks per region) run
 *                         inside a callback, so inline.
 *                         Budget: 150 ns. Most of it is libomp's: run with
 *                         CPUEXEC_OMPT=off for the region without a tool;
 *                         any live tool, even one registering no callback,
 *                         switches on libomp's OMPT bookkeeping (~35 ns per
 *                         region on a 2.3 GHz Xeon VM), ours adds ~6 ns.
 *   region, serialized    the same region on a plain thread with both
 *                         settings already at one thread (the tool still
 *                         live): the ratio shows what being in a callback adds.
 *   region, no tool       the region in a callback again, in a child run
 *                         with CPUEXEC_OMPT=off (the tool declines): the
 *                         ratio is what detection costs per region.
 * Each figure is the median of 7 timed batches. Usage: bench_openmp_guard [iterations] */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cpuexec.h>
#include "../clock.h"
#include "../stats.h"

/* The OpenMP kernels, built by clang with libomp (tests/support/openmp_kernels.c;
 * see mk/openmp.am): declared here so the bench includes public headers
 * only. */
int kernel_parallel(int *team);
void kernel_empty_region(void);
void kernel_set_num_threads(int n);
void kernel_set_max_active_levels(int n);

#define BATCHES 7
static long iterations = 200000;

static double median(double *v) { return bench_median(v, BATCHES); }

static int empty_range(void *arg, int64_t begin, int64_t end) {
  (void)arg, (void)begin, (void)end;
  return 0;
}

/* One range on the caller: cpuexec_parallel_for with max_participants 1. */
static double bench_inline_call(cpuexec_executor *exec) {
  double v[BATCHES];
  for (int b = 0; b < BATCHES; b++) {
    double t0 = bench_now_ns();
    for (long i = 0; i < iterations; i++)
      if (cpuexec_parallel_for(exec, 1, 1, NULL, empty_range, 1) != 0) abort();
    v[b] = (bench_now_ns() - t0) / (double)iterations;
  }
  return median(v);
}

static double bench_raw_setters(void) {
  double v[BATCHES];
  for (int b = 0; b < BATCHES; b++) {
    double t0 = bench_now_ns();
    for (long i = 0; i < iterations; i++) {
      kernel_set_num_threads(1);
      kernel_set_max_active_levels(0);
    }
    v[b] = (bench_now_ns() - t0) / (double)iterations;
  }
  return median(v);
}

static double region_ns;
static int regions_in_callback(void *arg, int64_t begin, int64_t end) {
  (void)arg, (void)begin, (void)end;
  double v[BATCHES];
  int team = 0;
  kernel_parallel(&team); /* checked: the guard keeps it to one thread */
  for (int b = 0; b < BATCHES; b++) {
    double t0 = bench_now_ns();
    for (long i = 0; i < iterations; i++)
      kernel_empty_region();
    v[b] = (bench_now_ns() - t0) / (double)iterations;
  }
  region_ns = median(v);
  return team == 1 ? 0 : 1;
}

static double bench_region_serialized(void) {
  double v[BATCHES];
  kernel_set_num_threads(1);
  kernel_set_max_active_levels(0);
  for (int b = 0; b < BATCHES; b++) {
    double t0 = bench_now_ns();
    for (long i = 0; i < iterations; i++)
      kernel_empty_region();
    v[b] = (bench_now_ns() - t0) / (double)iterations;
  }
  return median(v);
}

/* The region in a callback, timed by a child with the tool declined; 0
 * when the child could not run. */
static double region_without_tool(void) {
  char self[1024], command[1200];
  ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0)
    return 0;
  self[length] = '\0';
  snprintf(command, sizeof command, "CPUEXEC_OMPT=off '%s' %ld --region-only", self, iterations);
  FILE *child = popen(command, "r");
  double ns = 0;
  if (child == NULL)
    return 0;
  if (fscanf(child, "%lf", &ns) != 1)
    ns = 0;
  return pclose(child) == 0 ? ns : 0;
}

int main(int argc, char **argv) {
  if (argc > 1)
    iterations = atol(argv[1]);
  bool region_only = argc > 2 && strcmp(argv[2], "--region-only") == 0;
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = 2;
  policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
  cpuexec_resolved *resolved = NULL;
  cpuexec_executor *exec = NULL;
  if (cpuexec_policy_resolve(&policy, NULL, &resolved) != 0 || cpuexec_executor_create(resolved, &exec) != 0) {
    fprintf(stderr, "bench_openmp_guard: %s\n", cpuexec_error_message());
    return 1;
  }
  cpuexec_resolved_destroy(resolved);
  int team = 0;
  kernel_parallel(&team); /* start libomp (and the tool) outside the timing */
  if (region_only) {
    int rc = cpuexec_parallel_for(exec, 1, 1, NULL, regions_in_callback, 1);
    printf("%.1f\n", region_ns);
    cpuexec_executor_release(exec);
    return rc == 0 ? 0 : 1;
  }
  cpuexec_openmp_state s;
  cpuexec_openmp_status_get(&s);
  printf("OpenMP: %s\n", s.reason);
  double guard = bench_inline_call(exec);
  double raw = bench_raw_setters();
  if (cpuexec_parallel_for(exec, 1, 1, NULL, regions_in_callback, 1) != 0) {
    fprintf(stderr, "bench_openmp_guard: a region in a callback got more than one thread\n");
    return 1;
  }
  double serialized = bench_region_serialized();
  double no_tool = region_without_tool();
  printf("%-34s %8.1f ns\n", "inline call (guard and call)", guard);
  printf("%-34s %8.1f ns   ratio inline-call/raw %.2f\n", "raw omp_set_* pair", raw, guard / raw);
  printf("%-34s %8.1f ns   (budget 150 ns)\n", "inline OpenMP region in a callback", region_ns);
  printf("%-34s %8.1f ns   ratio in-callback/serialized %.2f\n", "serialized region, plain thread", serialized,
         region_ns / serialized);
  if (no_tool > 0)
    printf("%-34s %8.1f ns   ratio with-tool/without %.2f\n", "region in a callback, no tool", no_tool,
           region_ns / no_tool);
  cpuexec_executor_release(exec);
  return 0;
}
