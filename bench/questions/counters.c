/* libcpuexec benchmarks: what the counters and the dispatch observer cost
 * per region (the counters' merge criterion: disabled counters cost nothing
 * measurable).
 *
 * An empty 2-participant region (total 2, grain 1: one index each), back to
 * back, on three executors of the same policy: counters never enabled,
 * counters enabled, counters enabled with a process-wide observer set. The
 * blocks of the three alternate, so a busy machine's drifts hit them alike;
 * each block is one sample, ns per region. Rows (backend "libcpuexec"):
 *   counters_off       counters off
 *   counters_on        counters on, beside the same run's off samples
 *                      (backend "libcpuexec-off"), so its ratio is on / off
 *   counters_observer  counters on + observer, beside the off samples too
 * While counters are off a region tests one pointer, the executor's counter
 * block, NULL. What that costs is the counters_off row beside backend
 * "libcpuexec-no-counters": this program built with
 * BENCH_COUNTERS_COMPILED_OUT on the library with counting compiled out
 * (mk/bench.am), which runs the same blocks and prints only that row.
 *
 * Speaks bench/run.sh's table protocol (table_args.h). */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cpuexec.h>
#include "../clock.h"
#include "table_args.h"

static _Atomic uint64_t hits;
static int body(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  atomic_fetch_add_explicit(&hits, (uint64_t)(end - begin), memory_order_relaxed);
  return 0;
}

static _Atomic uint64_t events;
static void observe(void *ctx, const cpuexec_dispatch_event *ev) {
  (void)ctx;
  (void)ev;
  atomic_fetch_add_explicit(&events, 1, memory_order_relaxed);
}

static cpuexec_executor *make(unsigned participants) {
  char text[64];
  snprintf(text, sizeof text, "num_threads=%u", participants);
  cpuexec_policy policy;
  cpuexec_resolved *r = NULL;
  cpuexec_executor *e = NULL;
  if (cpuexec_policy_parse(text, &policy) != 0 || cpuexec_policy_resolve(&policy, NULL, &r) != 0 ||
      cpuexec_executor_create(r, &e) != 0) {
    printf("FAIL counters: %s: %s\n", text, cpuexec_error_message());
    exit(1);
  }
  cpuexec_resolved_destroy(r);
  return e;
}

/* ns per region over one block of `calls` back-to-back regions. */
static double block(cpuexec_executor *e, unsigned participants, int calls) {
  double t0 = bench_now_ns();
  for (int c = 0; c < calls; c++)
    if (cpuexec_parallel_for(e, participants, 1, NULL, body, 0) != 0) {
      printf("FAIL counters: cpuexec_parallel_for: %s\n", cpuexec_error_message());
      exit(1);
    }
  return (bench_now_ns() - t0) / calls;
}

int main(int argc, char **argv) {
  table_args args = table_args_parse(argc, argv);
  if (!args.measure) return 0;
  unsigned participants = args.participants;
  bool smoke = args.smoke, quick = args.quick;
  int blocks = smoke ? 2 : quick ? 10 : 30, calls = smoke ? 10 : 2000;

  cpuexec_executor *off = make(participants), *on = make(participants), *observed = make(participants);
  if (cpuexec_executor_counters_enable(on) != 0 || cpuexec_executor_counters_enable(observed) != 0) {
    printf("FAIL counters: enable: %s\n", cpuexec_error_message());
    return 1;
  }
  for (int w = 0; w < 3; w++) block(off, participants, calls / 2), block(on, participants, calls / 2);
  double *v = calloc((size_t)blocks * 3, sizeof *v);
  if (!v) return 1;
  for (int b = 0; b < blocks; b++) {
    v[3 * b] = block(off, participants, calls);
    v[3 * b + 1] = block(on, participants, calls);
    cpuexec_dispatch_observer_set(NULL, observe);
    v[3 * b + 2] = block(observed, participants, calls);
    cpuexec_dispatch_observer_set(NULL, NULL);
  }
  /* Every region ran each index once, and the observer saw each of its own. */
  uint64_t regions = (uint64_t)(6 * (calls / 2) + 3 * blocks * calls);
  if (atomic_load(&hits) != regions * participants || atomic_load(&events) != (uint64_t)blocks * calls) {
    printf("FAIL counters: %llu indices and %llu events, expected %llu and %llu\n",
           (unsigned long long)atomic_load(&hits), (unsigned long long)atomic_load(&events),
           (unsigned long long)(regions * participants), (unsigned long long)blocks * calls);
    return 1;
  }
  cpuexec_counters c;
#ifdef BENCH_COUNTERS_COMPILED_OUT
  if (cpuexec_executor_counters_get(on, &c) != 0 || c.dispatches != 0) {
    printf("FAIL counters: the library without counting counted %llu dispatches\n",
           (unsigned long long)c.dispatches);
    return 1;
  }
  for (int b = 0; b < blocks; b++) printf("M libcpuexec-no-counters counters_off ns %.6g\n", v[3 * b]);
#else
  if (cpuexec_executor_counters_get(on, &c) != 0 || c.dispatches == 0) {
    printf("FAIL counters: the enabled executor counted no dispatch\n");
    return 1;
  }
  for (int b = 0; b < blocks; b++) printf("M libcpuexec counters_off ns %.6g\n", v[3 * b]);
  for (int b = 0; b < blocks; b++)
    printf("M libcpuexec counters_on ns %.6g\nM libcpuexec-off counters_on ns %.6g\n", v[3 * b + 1], v[3 * b]);
  for (int b = 0; b < blocks; b++)
    printf("M libcpuexec counters_observer ns %.6g\nM libcpuexec-off counters_observer ns %.6g\n", v[3 * b + 2],
           v[3 * b]);
#endif
  if (smoke) printf("# bench_counters: smoke ok\n");
  free(v);
  cpuexec_executor_release(off);
  cpuexec_executor_release(on);
  cpuexec_executor_release(observed);
  return 0;
}
