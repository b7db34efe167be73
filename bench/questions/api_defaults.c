/* Rows for bench/run.sh's table (its protocol: "M <backend> <metric> <unit>
 * <value>"), about the defaults of issue 10:
 *   - session_per_request_retained: create a session (from a resolution made
 *     once) on a registry with idle retention, run an empty body in it,
 *     destroy it: what an engine that builds a session per request pays for
 *     the session once the pool exists, its regions aside (target in
 *     bench/targets.txt: under 5 us);
 *   - session_per_request_cold: the same on a registry without retention, so
 *     each request starts and stops the workers (the cost retention removes);
 *   - region_default_unpinned / region_pinned: an empty 2-participant
 *     parallel_for on the default (unpinned) policy and on
 *     affinity_policy=physical_cores, so the table shows what pinning buys or
 *     costs on this machine (README, "Pinned or not").
 * Each sample is the mean over a batch, in ns per operation.
 * usage: bench_api_defaults [--mode=round|smoke] [--quick] [--delay-len=N (ignored)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cpuexec.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int empty_range(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  (void)begin;
  (void)end;
  return 0;
}

typedef struct request {
  cpuexec_session_options options;
  int failures;
} request;

static int request_body(void *ctx) {
  (void)ctx;
  return cpuexec_executor_current() != NULL ? 0 : 1;
}

static void one_request(request *r) {
  cpuexec_session *s = NULL;
  if (cpuexec_session_create_with_options(&r->options, &s) != 0 || cpuexec_session_run(s, NULL, request_body) != 0)
    r->failures++;
  cpuexec_session_destroy(s);
}

static double per_request_ns(request *r, long n) {
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++) one_request(r);
  return (double)(now_ns() - t0) / (double)n;
}

static double per_region_ns(cpuexec_executor *exec, long n, int *failures) {
  uint64_t t0 = now_ns();
  for (long i = 0; i < n; i++)
    if (cpuexec_parallel_for(exec, 2, 1, NULL, empty_range, 0) != 0) (*failures)++;
  return (double)(now_ns() - t0) / (double)n;
}

static int executor_for(cpuexec_affinity_policy affinity, cpuexec_executor **out) {
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = 2;
  p.affinity_policy = affinity;
  cpuexec_resolved *r = NULL;
  int rc = cpuexec_policy_resolve(&p, NULL, &r);
  if (rc == 0) rc = cpuexec_executor_create(r, out);
  cpuexec_resolved_destroy(r);
  return rc;
}

int main(int argc, char **argv) {
  bool smoke = false, quick = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--mode=smoke") == 0) smoke = true;
    else if (strcmp(argv[i], "--quick") == 0) quick = true;
  }
  long requests = smoke ? 50 : quick ? 5000 : 20000;
  long cold_requests = smoke ? 5 : quick ? 50 : 200;
  long regions = smoke ? 100 : quick ? 20000 : 100000;
  int samples = smoke ? 1 : 5;

  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = 2;
  cpuexec_registry_options ro;
  cpuexec_registry_options_init(&ro);
  ro.idle_retention_ns = 60ull * 1000000000u; /* longer than the run */
  cpuexec_registry *retained = NULL, *cold = NULL;
  cpuexec_resolved *resolved = NULL;
  if (cpuexec_policy_resolve(&policy, NULL, &resolved) != 0 || cpuexec_registry_create(&ro, &retained) != 0 ||
      cpuexec_registry_create(NULL, &cold) != 0) {
    fprintf(stderr, "bench_api_defaults: %s\n", cpuexec_error_message());
    return 1;
  }
  request warm = {.failures = 0}, unretained = {.failures = 0};
  cpuexec_session_options_init(&warm.options);
  warm.options.resolved = resolved;
  warm.options.registry = retained;
  unretained.options = warm.options;
  unretained.options.registry = cold;
  one_request(&warm); /* the pool exists from here on, parked while idle */

  cpuexec_executor *unpinned = NULL, *pinned = NULL;
  int rc_unpinned = executor_for(CPUEXEC_AFFINITY_NONE, &unpinned);
  int rc_pinned = executor_for(CPUEXEC_AFFINITY_PHYSICAL_CORES, &pinned);
  if (rc_unpinned != 0) {
    fprintf(stderr, "bench_api_defaults: default policy: %s\n", cpuexec_error_message());
    return 1;
  }
  int failures = 0;
  for (int s = 0; s < samples; s++) {
    printf("M libcpuexec session_per_request_retained ns %.1f\n", per_request_ns(&warm, requests));
    printf("M libcpuexec session_per_request_cold ns %.1f\n", per_request_ns(&unretained, cold_requests));
    printf("M libcpuexec region_default_unpinned ns %.1f\n", per_region_ns(unpinned, regions, &failures));
    /* A machine with one physical core cannot pin 2 participants: no row. */
    if (rc_pinned == 0)
      printf("M libcpuexec region_pinned ns %.1f\n", per_region_ns(pinned, regions, &failures));
  }
  cpuexec_executor_release(unpinned);
  cpuexec_executor_release(pinned);
  cpuexec_registry_destroy(retained);
  cpuexec_registry_destroy(cold);
  cpuexec_resolved_destroy(resolved);
  if (warm.failures || unretained.failures || failures) {
    fprintf(stderr, "bench_api_defaults: %d failed requests or regions: %s\n",
            warm.failures + unretained.failures + failures, cpuexec_error_message());
    return 1;
  }
  return 0;
}
