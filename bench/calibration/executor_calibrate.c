/* Calibrates the cost model of cpuexec_parallel_for_plan (src/executor/plan.c) on
 * this machine and shows what counters cost.
 *
 * Prints the measured constants next to the ones compiled in:
 *   dispatch_ns        median of (a 2-participant region with an empty body)
 *                      minus (the same call admitted 1 participant, inline)
 *   per_participant_ns slope of the region cost from 2 to N participants
 *                      (N = 8 here: on a 2-core machine an oversubscribed,
 *                      upper-bound figure)
 *   ns_per_byte        one participant streaming y += a*x over 16M floats
 *                      (12 bytes per element)
 *   ns_per_cycle       a chain of dependent integer adds (one cycle each)
 * and the dispatch cost with counters off, with counters on, and with an
 * observer set. Every number is the median of several timed blocks, so a
 * busy machine moves it less; re-run it a few times. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cpuexec.h>
#include "../clock.h"
#include "../stats.h"

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
  if (cpuexec_policy_resolve(&policy, NULL, &r) != 0 || cpuexec_executor_create(r, &e) != 0) {
    fprintf(stderr, "executor-calibrate: %s\n", cpuexec_error_message());
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
    double t0 = bench_now_ns();
    for (int i = 0; i < CALLS; i++) cpuexec_parallel_for(e, total, 1, NULL, empty, participants);
    t[b] = (bench_now_ns() - t0) / CALLS;
  }
  return bench_median(t, BLOCKS);
}

typedef struct axpy {
  const float *x;
  float *y;
} axpy;

static int axpy_body(void *ctx, int64_t begin, int64_t end) {
  axpy *a = ctx;
  for (int64_t i = begin; i < end; i++) a->y[i] += 2.0f * a->x[i];
  return 0;
}

static void observe(void *user, const cpuexec_dispatch_event *ev) {
  (void)ev;
  ++*(uint64_t *)user;
}

int main(void) {
  cpuexec_executor *two = make(2, false), *eight = make(8, true);
  double inline_ns = region_ns(two, 2, 1);
  double two_ns = region_ns(two, 2, 2);
  double eight_ns = region_ns(eight, 8, 8), eight_two_ns = region_ns(eight, 2, 2);
  printf("dispatch_ns         %8.1f   (2-participant region %.1f ns, inline call %.1f ns)\n", two_ns - inline_ns,
         two_ns, inline_ns);
  printf("per_participant_ns  %8.1f   (8 participants %.1f ns, 2 participants %.1f ns, on %s)\n",
         (eight_ns - eight_two_ns) / 6.0, eight_ns, eight_two_ns, "an 8-thread executor");

  enum { N = 16 << 20, REPS = 7 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  if (!x || !y) return 1;
  for (int i = 0; i < N; i++) x[i] = (float)(i & 7), y[i] = 0.0f;
  axpy a = {x, y};
  double t[REPS];
  for (int r = 0; r < REPS; r++) {
    double t0 = bench_now_ns();
    axpy_body(&a, 0, N);
    t[r] = (bench_now_ns() - t0) / (12.0 * N);
  }
  printf("ns_per_byte         %8.3f   (one participant, y += a*x over 16M floats: ns_per_byte_memory)\n",
         bench_median(t, REPS));
  /* The same over 16K floats, repeated: the data stays in cache. */
  for (int r = 0; r < REPS; r++) {
    double t0 = bench_now_ns();
    for (int k = 0; k < 64; k++) axpy_body(&a, 0, 16 << 10);
    t[r] = (bench_now_ns() - t0) / (12.0 * (16 << 10) * 64);
  }
  printf("ns_per_byte_cached  %8.3f   (the same over 16K floats, in cache)\n", bench_median(t, REPS));
  free(x);
  free(y);

  for (int r = 0; r < REPS; r++) {
    uint64_t v = 1, k = 7;
    double t0 = bench_now_ns();
    for (int i = 0; i < 100000000; i++) __asm__ volatile("add %1, %0" : "+r"(v) : "r"(k));
    t[r] = (bench_now_ns() - t0) / 1e8;
    if (v == 0) printf("!");
  }
  printf("ns_per_cycle        %8.3f   (dependent adds)\n", bench_median(t, REPS));

  double off = region_ns(two, 2, 2);
  cpuexec_executor_counters_enable(two);
  double on = region_ns(two, 2, 2);
  uint64_t seen = 0;
  cpuexec_dispatch_observer_set(&seen, observe);
  double observed = region_ns(two, 2, 2);
  cpuexec_dispatch_observer_set(NULL, NULL);
  printf("region, counters off %7.1f ns; counters on %7.1f ns; counters on + observer %7.1f ns (%llu events)\n",
         off, on, observed, (unsigned long long)seen);
  cpuexec_executor_release(two);
  cpuexec_executor_release(eight);
  return 0;
}
