/* Calibrates the cost model of cpuexec_plan_parallel_for (src/plan.c) on
 * this machine and shows what counters cost.
 *
 * Prints the measured constants next to the ones compiled in
 * (tools/info_plan.c: dispatch, bytes from memory and from cache, cycles),
 *   per_participant_ns slope of the region cost from 2 to N participants
 *                      (N = 8 here: on a 2-core machine an oversubscribed,
 *                      upper-bound figure)
 * and the dispatch cost with counters off, with counters on, and with an
 * observer set. Every number is the median of several timed blocks, so a
 * busy machine moves it less; re-run it a few times. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cpuexec.h>

#include "../tools/info_plan.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return v[n / 2];
}

static int empty(void *ctx, int64_t begin, int64_t end) {
  (void)ctx, (void)begin, (void)end;
  return 0;
}

/* The process default policy (CPUEXEC_POLICY) with `threads`; more threads
 * than cores need affinity_policy=none. */
static cpuexec_executor *make(int threads, bool unpinned) {
  cpuexec_policy policy;
  if (cpuexec_policy_from_environment(&policy) != 0) cpuexec_policy_init(&policy);
  policy.num_threads = threads;
  if (unpinned) policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
  cpuexec_resolved *r = NULL;
  cpuexec_executor *e = NULL;
  if (cpuexec_resolve(&policy, NULL, &r) != 0 || cpuexec_executor_create(r, &e) != 0) {
    fprintf(stderr, "executor-calibrate: %s\n", cpuexec_last_error());
    exit(1);
  }
  cpuexec_resolved_destroy(r);
  return e;
}

/* ns per call of parallel_for(total, grain 1, participants). */
static double region_ns(cpuexec_executor *e, int64_t total, uint32_t participants) {
  enum { BLOCKS = 31, CALLS = 2000 };
  double t[BLOCKS];
  for (int b = 0; b < BLOCKS; b++) {
    double t0 = now_ns();
    for (int i = 0; i < CALLS; i++) cpuexec_parallel_for(e, total, 1, NULL, empty, participants);
    t[b] = (now_ns() - t0) / CALLS;
  }
  return median(t, BLOCKS);
}

static void observe(void *user, const cpuexec_dispatch_event *ev) {
  (void)ev;
  ++*(uint64_t *)user;
}

int main(void) {
  /* The planner's constants, measured and compiled in (tools/info_plan.c;
   * `cpuexec-info --bench` prints the same table). */
  if (info_plan_calibrate(stdout) != 0) return 1;

  cpuexec_executor *two = make(2, false), *eight = make(8, true);
  double eight_ns = region_ns(eight, 8, 8), eight_two_ns = region_ns(eight, 2, 2);
  printf("per_participant_ns  %8.1f   (8 participants %.1f ns, 2 participants %.1f ns, on %s)\n",
         (eight_ns - eight_two_ns) / 6.0, eight_ns, eight_two_ns,
         "an 8-thread executor: on fewer than 8 cores an oversubscribed upper bound");

  double off = region_ns(two, 2, 2);
  cpuexec_executor_enable_counters(two);
  double on = region_ns(two, 2, 2);
  uint64_t seen = 0;
  cpuexec_set_dispatch_observer(observe, &seen);
  double observed = region_ns(two, 2, 2);
  cpuexec_set_dispatch_observer(NULL, NULL);
  printf("region, counters off %7.1f ns; counters on %7.1f ns; counters on + observer %7.1f ns (%llu events)\n",
         off, on, observed, (unsigned long long)seen);
  cpuexec_executor_destroy(two);
  cpuexec_executor_destroy(eight);
  return 0;
}
