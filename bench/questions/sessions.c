/* Cost of the session machinery, per operation:
 *   - a compatible acquire+release on the process registry while another
 *     lease keeps the pool alive (the path every session create/destroy
 *     takes when its pool is already running);
 *   - the same without another lease (each pair starts and stops threads);
 *   - session create+destroy on a running pool;
 *   - an empty session run (install, call, restore) and a bare scope
 *     enter+leave.
 * Each figure is the median of 7 repetitions. Usage: bench_sessions [threads]
 * (default 2; affinity_policy=none so it runs anywhere). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cpuexec.h>
#include "../clock.h"
#include "../stats.h"

#define REPEATS 7

typedef void (*op_fn)(void *ctx, long iterations);

static double median_ns_per_op(op_fn op, void *ctx, long iterations) {
  double samples[REPEATS];
  op(ctx, iterations / 10 + 1); /* warm up */
  for (int r = 0; r < REPEATS; r++) {
    double t0 = bench_now_ns();
    op(ctx, iterations);
    samples[r] = (bench_now_ns() - t0) / (double)iterations;
  }
  return bench_median(samples, REPEATS);
}

typedef struct bench_ctx {
  const cpuexec_resolved *resolved;
  const cpuexec_policy *policy;
  cpuexec_session *session;
  int failures;
} bench_ctx;

static void acquire_release(void *arg, long n) {
  bench_ctx *b = arg;
  for (long i = 0; i < n; i++) {
    cpuexec_executor *e = NULL;
    if (cpuexec_registry_acquire(cpuexec_registry_default(), b->resolved, &e) != 0) b->failures++;
    cpuexec_executor_release(e);
  }
}

static void session_create_destroy(void *arg, long n) {
  bench_ctx *b = arg;
  for (long i = 0; i < n; i++) {
    cpuexec_session *s = NULL;
    if (cpuexec_session_create(b->policy, &s) != 0) b->failures++;
    cpuexec_session_destroy(s);
  }
}

static int no_work(void *arg) {
  (void)arg;
  return 0;
}

static void empty_run(void *arg, long n) {
  bench_ctx *b = arg;
  for (long i = 0; i < n; i++)
    if (cpuexec_session_run(b->session, NULL, no_work) != 0) b->failures++;
}

static void scope_enter_leave(void *arg, long n) {
  bench_ctx *b = arg;
  cpuexec_executor *e = cpuexec_session_executor(b->session);
  for (long i = 0; i < n; i++) {
    cpuexec_scope scope;
    if (cpuexec_scope_enter(e, &scope) != 0 || cpuexec_scope_leave(&scope) != 0) b->failures++;
  }
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = threads;
  policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
  cpuexec_resolved *resolved = NULL;
  if (cpuexec_policy_resolve(&policy, NULL, &resolved) != 0) {
    fprintf(stderr, "bench_sessions: %s\n", cpuexec_error_message());
    return 1;
  }
  bench_ctx b = {resolved, &policy, NULL, 0};

  /* Cold: no other lease, so every pair starts and stops the workers. */
  double cold = median_ns_per_op(acquire_release, &b, 200);

  if (cpuexec_session_create(&policy, &b.session) != 0) {
    fprintf(stderr, "bench_sessions: %s\n", cpuexec_error_message());
    return 1;
  }
  double warm = median_ns_per_op(acquire_release, &b, 200000);
  double create = median_ns_per_op(session_create_destroy, &b, 100000);
  double run = median_ns_per_op(empty_run, &b, 2000000);
  double scope = median_ns_per_op(scope_enter_leave, &b, 2000000);
  cpuexec_session_destroy(b.session);
  cpuexec_resolved_destroy(resolved);

  printf("bench_sessions: %d threads, affinity none, median of %d\n", threads, REPEATS);
  printf("  %-52s %10.1f ns\n", "acquire+release, compatible pool running", warm);
  printf("  %-52s %10.1f ns\n", "acquire+release, pool started and stopped", cold);
  printf("  %-52s %10.1f ns\n", "session create+destroy, compatible pool running", create);
  printf("  %-52s %10.1f ns\n", "session run, no work", run);
  printf("  %-52s %10.1f ns\n", "scope enter+leave", scope);
  printf("  ratio started/compatible acquire+release: %.0fx\n", cold / warm);
  if (b.failures) fprintf(stderr, "bench_sessions: %d calls failed\n", b.failures);
  return b.failures != 0;
}
