/* Two threads calling into one pool at once (two sessions sharing a
 * compatible pool): what a call that finds the pool busy should do
 * (seed 000: "measure and document whether one active region at a time is
 * acceptable").
 *   shared   what the executor does: the second call runs at once in a
 *            region of its own beside the first, and the workers join
 *            whichever region has work (src/executor/region_lanes.h);
 *            before the multi-region scheduler it waited for the pool;
 *   inline   the alternative: the second caller runs its loop on its own
 *            thread (emulated here: the second thread calls the body
 *            itself), so the two run side by side, one thread more than
 *            the pool has;
 *   2 pools  each thread on its own pool.
 * Each thread runs regions of `work` ns of arithmetic per region (split
 * over the indices), back to back, and then again with as much serial work
 * on the calling thread between regions (an inference's operators that do
 * not run in parallel); the figure is the median wall time per region pair
 * (both threads' regions done) over 7 repetitions. Usage:
 * bench_busy_pool [threads] (default 2; affinity none). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <cpuexec.h>
#include "../clock.h"
#include "../stats.h"

#define REPEATS 7
#define INDICES 64

static double ns_per_unit; /* one unit of spin_work, measured */

static void spin_work(long units) {
  volatile unsigned long x = 1;
  for (long u = 0; u < units; u++)
    for (int i = 0; i < 32; i++) x = x * 6364136223846793005ul + 1442695040888963407ul;
}

typedef struct job {
  cpuexec_executor *exec; /* NULL: run the loop on the calling thread */
  long units_per_index;
  long serial_units; /* serial work before each region */
  long regions;
  pthread_barrier_t *start;
  int failures;
} job;

static int body(void *ctx, int64_t begin, int64_t end) {
  const job *j = ctx;
  spin_work(j->units_per_index * (long)(end - begin));
  return 0;
}

static void *caller(void *arg) {
  job *j = arg;
  pthread_barrier_wait(j->start);
  for (long r = 0; r < j->regions; r++) {
    spin_work(j->serial_units);
    if (cpuexec_parallel_for(j->exec, INDICES, 1, j, body, 0) != 0) j->failures++;
  }
  return NULL;
}

/* Median time per region (both callers running) in microseconds. */
static double run(cpuexec_executor *a, cpuexec_executor *b, double work_ns, double serial_ns, int *failures) {
  long units = (long)(work_ns / ns_per_unit / INDICES + 0.5);
  if (units < 1) units = 1;
  long serial = (long)(serial_ns / ns_per_unit + 0.5);
  long regions = (long)(20e6 / (work_ns + serial_ns + 2000)); /* about 20 ms per repetition */
  double samples[REPEATS];
  for (int r = 0; r < REPEATS; r++) {
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 3);
    job ja = {a, units, serial, regions, &start, 0}, jb = {b, units, serial, regions, &start, 0};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, caller, &ja);
    pthread_create(&tb, NULL, caller, &jb);
    pthread_barrier_wait(&start);
    double t0 = bench_now_ns();
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    samples[r] = (bench_now_ns() - t0) / (double)regions / 1e3;
    pthread_barrier_destroy(&start);
    *failures += ja.failures + jb.failures;
  }
  return bench_median(samples, REPEATS);
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  double t0 = bench_now_ns();
  spin_work(200000);
  ns_per_unit = (bench_now_ns() - t0) / 200000;

  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = threads;
  policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
  cpuexec_resolved *resolved = NULL;
  cpuexec_executor *shared = NULL, *own = NULL;
  if (cpuexec_policy_resolve(&policy, NULL, &resolved) != 0 || cpuexec_executor_create(resolved, &shared) != 0 ||
      cpuexec_executor_create(resolved, &own) != 0) {
    fprintf(stderr, "bench_busy_pool: %s\n", cpuexec_error_message());
    return 1;
  }
  int failures = 0;
  printf("bench_busy_pool: two callers, %d threads per pool, affinity none, us per region (median of %d)\n",
         threads, REPEATS);
  printf("  %10s %10s %10s %10s %10s %14s %14s\n", "work us", "serial us", "shared", "inline", "2 pools",
         "shared/inline", "shared/2 pools");
  static const double work_ns[] = {1e3, 1e4, 1e5, 1e6};
  for (int with_serial = 0; with_serial < 2; with_serial++) {
    for (size_t w = 0; w < sizeof work_ns / sizeof work_ns[0]; w++) {
      double serial_ns = with_serial ? work_ns[w] : 0;
      double wait = run(shared, shared, work_ns[w], serial_ns, &failures);
      double in_line = run(shared, NULL, work_ns[w], serial_ns, &failures);
      double two = run(shared, own, work_ns[w], serial_ns, &failures);
      printf("  %10.0f %10.0f %10.2f %10.2f %10.2f %14.2f %14.2f\n", work_ns[w] / 1e3, serial_ns / 1e3, wait,
             in_line, two, wait / in_line, wait / two);
    }
  }
  cpuexec_executor_release(own);
  cpuexec_executor_release(shared);
  cpuexec_resolved_destroy(resolved);
  if (failures) fprintf(stderr, "bench_busy_pool: %d calls failed\n", failures);
  return failures != 0;
}
