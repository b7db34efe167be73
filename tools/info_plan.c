/* Planner calibration (see info_plan.h). Each figure is the median of
 * several timed blocks, so a busy machine moves it less; run it a few
 * times. The executor is the process default policy (CPUEXEC_POLICY) with
 * 2 threads: the 2-participant region is the one figure a 2-core machine
 * can measure; per_participant_ns, bandwidth_participants and cached_bytes
 * need a bigger machine (doc/performance.md says how to measure them). */
#include "info_plan.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cpuexec.h>

#define BLOCKS 15

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

/* ns per call of parallel_for(2, grain 1, participants). */
static double region_ns(cpuexec_executor *e, uint32_t participants) {
  enum { CALLS = 2000 };
  double t[BLOCKS];
  for (int b = 0; b < BLOCKS; b++) {
    double t0 = now_ns();
    for (int i = 0; i < CALLS; i++) cpuexec_parallel_for(e, 2, 1, NULL, empty, participants);
    t[b] = (now_ns() - t0) / CALLS;
  }
  return median(t, BLOCKS);
}

/* ns per byte of y += 2x over n floats (12 bytes each), one participant. */
static double axpy_ns_per_byte(float *x, float *y, int64_t n, int reps) {
  double t[BLOCKS];
  for (int b = 0; b < BLOCKS; b++) {
    double t0 = now_ns();
    for (int r = 0; r < reps; r++)
      for (int64_t i = 0; i < n; i++) y[i] += 2.0f * x[i];
    t[b] = (now_ns() - t0) / (12.0 * (double)n * reps);
  }
  return median(t, BLOCKS);
}

static double ns_per_cycle(void) {
  double t[BLOCKS];
  for (int b = 0; b < BLOCKS; b++) {
    uint64_t v = 1, k = 7;
    double t0 = now_ns();
    for (int i = 0; i < 10000000; i++) {
#if defined(__x86_64__)
      __asm__ volatile("add %1, %0" : "+r"(v) : "r"(k));
#elif defined(__aarch64__)
      __asm__ volatile("add %0, %0, %1" : "+r"(v) : "r"(k));
#else
      __asm__ volatile("" : "+r"(v));
      v += k;
#endif
    }
    t[b] = (now_ns() - t0) / 1e7;
    if (v == 0) t[b] = 0;
  }
  return median(t, BLOCKS);
}

int info_plan_calibrate(FILE *out) {
  cpuexec_policy policy;
  if (cpuexec_policy_from_environment(&policy) != 0) cpuexec_policy_init(&policy);
  policy.num_threads = 2;
  cpuexec_resolved *r = NULL;
  cpuexec_executor *e = NULL;
  if (cpuexec_policy_resolve(&policy, NULL, &r) != 0 || cpuexec_executor_create(r, &e) != 0) {
    fprintf(out, "plan calibration: no 2-thread executor: %s\n", cpuexec_error_message());
    cpuexec_resolved_destroy(r);
    return 1;
  }
  double inline_ns = region_ns(e, 1), two_ns = region_ns(e, 2);
  cpuexec_executor_release(e);
  cpuexec_resolved_destroy(r);

  enum { BIG = 16 << 20, SMALL = 16 << 10 };
  float *x = malloc(BIG * sizeof *x), *y = calloc(BIG, sizeof *y);
  double memory = -1, cached = -1;
  if (x && y) {
    for (int i = 0; i < BIG; i++) x[i] = (float)(i & 7);
    memory = axpy_ns_per_byte(x, y, BIG, 1);
    cached = axpy_ns_per_byte(x, y, SMALL, 64);
  }
  free(x);
  free(y);
  double cycle = ns_per_cycle();

  fprintf(out, "planner calibration (src/executor/plan.c's model), measured here; the compiled-in values are in\n"
               "src/executor/plan_model.h (CPUEXEC__PLAN_*): copy these there to recalibrate\n");
  fprintf(out, "  %-26s %9.1f   (2-participant empty region %.1f ns - inline call %.1f ns)\n",
          "dispatch_ns + 1 worker", two_ns - inline_ns, two_ns, inline_ns);
  fprintf(out, "  %-26s %9.3f   (one participant, y += 2x over 16M floats)\n", "ns_per_byte_memory", memory);
  fprintf(out, "  %-26s %9.3f   (the same over 16K floats, in cache)\n", "ns_per_byte_cached", cached);
  fprintf(out, "  %-26s %9.3f   (dependent adds)\n", "ns_per_cycle", cycle);
  fprintf(out, "  (per_participant_ns, bandwidth_participants, cached_bytes: a bigger machine, doc/performance.md)\n");
  return 0;
}
