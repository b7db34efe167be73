/* libcpuexec benchmarks: latency after gaps under other policies (issue 9).
 *
 * bench/peers/driver.c measures every backend with its default set-up. This
 * program adds, for libcpuexec only, the policies where waiting for a late
 * worker used to cost most: the latency rows with affinity_policy=none
 * (backend "libcpuexec-none", the same metric names, so they sit next to the
 * peers), and fixed_duration spin budgets of 0.5, 2 and 20 ms, pinned and
 * unpinned. For each policy it reports worst_region, the largest p99 over
 * the four gap rows of (call time - serial body time), and, for all of them
 * together, worst_region_all (backend "libcpuexec"): the figure the target
 * "no region slower than 3x its serial body + 50 us at p99 in any gap row"
 * is checked against (the body is a few nanoseconds, so about 50 us).
 * "libcpuexec-every" prints the gap rows under participation=every_participant
 * (doc/deviations.md quotes them against libcpuexec-none).
 *
 * Speaks bench/run.sh's table protocol (table_args.h; the body has no
 * delay). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cpuexec.h>
#include "../clock.h"
#include "../stats.h"
#include "table_args.h"

static unsigned participants = 2;
static _Atomic unsigned hits[64];

static void sleep_ns(double ns) {
  struct timespec ts = {(time_t)(ns / 1e9), (long)((long long)ns % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
  }
}

/* The latency body of bench/peers/driver.c: count each index once. */
static int body(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  for (int64_t i = begin; i < end; i++) atomic_fetch_add_explicit(&hits[i], 1, memory_order_relaxed);
  return 0;
}

static double body_us(void) {
  double best = 1e30;
  for (int t = 0; t < 20; t++) {
    double t0 = bench_now_ns();
    for (int r = 0; r < 100; r++) body(NULL, 0, participants);
    double per = (bench_now_ns() - t0) / 100.0;
    if (per < best) best = per;
  }
  return best / 1e3;
}

typedef struct config {
  const char *backend; /* row name */
  const char *policy;  /* cpuexec_policy_parse text, num_threads added */
  bool latency_rows;   /* print every sample as lat_gap* rows */
  bool waits_for_all;  /* the strict rule: waits for wake-ups by design, kept out of worst_region_all */
} config;

static const config configs[] = {
    {"libcpuexec-default", "", false, false},
    {"libcpuexec-none", "affinity_policy=none", true, false},
    {"libcpuexec-fd500us", "spin_policy=fixed_duration,spin_budget=500us", false, false},
    {"libcpuexec-fd500us-none", "spin_policy=fixed_duration,spin_budget=500us,affinity_policy=none", false, false},
    {"libcpuexec-fd2ms", "spin_policy=fixed_duration,spin_budget=2ms", false, false},
    {"libcpuexec-fd2ms-none", "spin_policy=fixed_duration,spin_budget=2ms,affinity_policy=none", false, false},
    {"libcpuexec-fd20ms", "spin_policy=fixed_duration,spin_budget=20ms", false, false},
    {"libcpuexec-fd20ms-none", "spin_policy=fixed_duration,spin_budget=20ms,affinity_policy=none", false, false},
    /* The strict participation rule: what waiting for every admitted worker
     * costs after each gap, beside libcpuexec-none (the take-over rule). */
    {"libcpuexec-every", "participation=every_participant,affinity_policy=none", true, true},
};

static int fail(const char *what, const char *backend) {
  printf("FAIL %s: %s: %s\n", backend, what, cpuexec_error_message());
  return 1;
}

/* Runs the four gap rows on one policy; returns its worst_region or < 0. */
static double run_config(const config *c, const int samples[4], double serial_us) {
  static const char *const names[] = {"lat_gap0", "lat_gap50us", "lat_gap1ms", "lat_gap10ms"};
  static const double gaps[] = {0, 50e3, 1e6, 10e6};
  char text[256];
  snprintf(text, sizeof text, "num_threads=%u%s%s", participants, c->policy[0] ? "," : "", c->policy);
  cpuexec_policy policy;
  cpuexec_resolved *resolved = NULL;
  cpuexec_executor *exec = NULL;
  if (cpuexec_policy_parse(text, &policy) != 0 || cpuexec_policy_resolve(&policy, NULL, &resolved) != 0 ||
      cpuexec_executor_create(resolved, &exec) != 0) {
    cpuexec_resolved_destroy(resolved);
    return fail(text, c->backend), -1;
  }
  double worst = 0;
  double *v = calloc((size_t)samples[0] + 1, sizeof *v);
  for (int g = 0; g < 4; g++) {
    memset((void *)hits, 0, sizeof hits);
    unsigned calls = 0;
    for (int w = 0; w < 20; w++, calls++) cpuexec_parallel_for(exec, participants, 1, NULL, body, 0);
    double end = bench_now_ns();
    for (int j = 0; j < samples[g]; j++, calls++) {
      if (gaps[g] >= 1e6)
        sleep_ns(gaps[g]);
      else
        while (bench_now_ns() < end + gaps[g]) {
        }
      double t0 = bench_now_ns();
      int rc = cpuexec_parallel_for(exec, participants, 1, NULL, body, 0);
      end = bench_now_ns();
      if (rc != 0) return fail("cpuexec_parallel_for", c->backend), -1;
      v[j] = (end - t0) / 1e3;
    }
    for (unsigned i = 0; i < participants; i++)
      if (hits[i] != calls) {
        printf("FAIL %s: index %u ran %u times, expected %u\n", c->backend, i, hits[i], calls);
        return -1;
      }
    if (c->latency_rows)
      for (int j = 0; j < samples[g]; j++) printf("M %s %s us %.6g\n", c->backend, names[g], v[j]);
    bench_sort(v, (size_t)samples[g]);
    int k = (int)(0.99 * samples[g] + 0.999) - 1;
    double p99 = v[k < 0 ? 0 : k] - serial_us;
    if (p99 > worst) worst = p99;
  }
  free(v);
  cpuexec_executor_release(exec);
  cpuexec_resolved_destroy(resolved);
  return worst;
}

int main(int argc, char **argv) {
  table_args args = table_args_parse(argc, argv);
  if (!args.measure) return 0;
  participants = args.participants;
  static const int full[4] = {400, 100, 60, 15}, fast[4] = {200, 50, 30, 8}, smoke[4] = {5, 2, 2, 1};
  bool is_smoke = args.smoke, quick = args.quick;
  const int *samples = is_smoke ? smoke : quick ? fast : full;
  double serial_us = body_us(), all = 0;
  for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
    double w = run_config(&configs[c], samples, serial_us);
    if (w < 0) return 1;
    printf("M %s worst_region us %.6g\n", configs[c].backend, w);
    if (w > all && !configs[c].waits_for_all) all = w;
  }
  printf("M libcpuexec worst_region_all us %.6g\n", all);
  if (is_smoke) printf("# bench_latency: smoke ok\n");
  return 0;
}
