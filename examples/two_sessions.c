/* Two sessions with equal policies share one pool, and a legacy ParallelFor
 * kernel follows the thread count of the session it runs in.
 *
 * Build against an installed libcpuexec:
 *   cc two_sessions.c $(pkg-config --cflags --libs cpuexec)
 * (installed, the compat header is <cpuexec/compat/parallel_for.h>).
 * Exits 0 when everything it shows holds, so `make check` runs it. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <cpuexec.h>

#include <cpuexec/compat/parallel_for.h>

/* A legacy kernel: scales a vector through the free ParallelFor, written
 * long before sessions existed. */
typedef struct scale_args {
  float *data;
  float factor;
  atomic_uint participants; /* bit per participant that ran a range */
} scale_args;

static void scale_range(void *ctx, int64_t begin, int64_t end) {
  scale_args *a = ctx;
  for (int64_t i = begin; i < end; i++) a->data[i] *= a->factor;
  atomic_fetch_or(&a->participants, 1u << cpuexec_participant_index());
}

typedef struct kernel_run {
  scale_args args;
  uint32_t thread_count;
  int rc;
} kernel_run;

static int run_legacy_kernel(void *arg) {
  kernel_run *k = arg;
  k->thread_count = ParallelForThreadCount();
  k->rc = ParallelFor(4096, 64, &k->args, scale_range);
  return k->rc;
}

static int fail(const char *what) {
  fprintf(stderr, "two_sessions: %s (%s)\n", what, cpuexec_error_message());
  return 1;
}

int main(void) {
  static float data[4096];
  for (int i = 0; i < 4096; i++) data[i] = 1.0f;

  /* affinity_policy=none, so the example runs the same on any machine. */
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  if (cpuexec_policy_parse("num_threads=3,affinity_policy=none", &policy) != 0) return fail("parse");

  cpuexec_session *first = NULL, *second = NULL;
  if (cpuexec_session_create(&policy, &first) != 0) return fail("first session");
  if (cpuexec_session_create(&policy, &second) != 0) return fail("second session");
  uint64_t id1 = cpuexec_executor_id(cpuexec_session_executor(first));
  uint64_t id2 = cpuexec_executor_id(cpuexec_session_executor(second));
  uint32_t live = cpuexec_registry_live_pools(cpuexec_registry_default());
  printf("session 1 executor id %llu, session 2 executor id %llu, live pools %u\n", (unsigned long long)id1,
         (unsigned long long)id2, live);
  if (id1 != id2 || live != 1) return fail("equal policies should share one pool");

  kernel_run k;
  memset(&k, 0, sizeof k);
  k.args.data = data;
  k.args.factor = 2.0f;
  if (cpuexec_session_run(first, &k, run_legacy_kernel) != 0) return fail("run");
  unsigned ran = (unsigned)__builtin_popcount(atomic_load(&k.args.participants));
  printf("legacy kernel in session 1: ParallelForThreadCount() = %u, %u participants ran ranges\n",
         k.thread_count, ran);
  /* Up to 3 run ranges: a worker not yet awake when the others finish is
   * not waited for (its range runs on them, see executor.h). */
  if (k.thread_count != 3 || ran < 1 || ran > 3) return fail("the kernel should follow the session's 3 threads");
  for (int i = 0; i < 4096; i++)
    if (data[i] != 2.0f) return fail("every element scaled once");

  /* A serial session: the same kernel now runs on the caller alone. */
  cpuexec_policy serial;
  cpuexec_policy_init(&serial);
  serial.num_threads = 1;
  serial.affinity_policy = CPUEXEC_AFFINITY_NONE;
  cpuexec_session *third = NULL;
  if (cpuexec_session_create(&serial, &third) != 0) return fail("serial session");
  memset(&k, 0, sizeof k);
  k.args.data = data;
  k.args.factor = 0.5f;
  if (cpuexec_session_run(third, &k, run_legacy_kernel) != 0) return fail("serial run");
  printf("legacy kernel in a serial session: ParallelForThreadCount() = %u\n", k.thread_count);
  if (k.thread_count != 1 || atomic_load(&k.args.participants) != 1u) return fail("serial session runs inline");

  cpuexec_session_destroy(third);
  cpuexec_session_destroy(second);
  cpuexec_session_destroy(first);
  live = cpuexec_registry_live_pools(cpuexec_registry_default());
  printf("after destroying the sessions: live pools %u\n", live);
  return live == 0 ? 0 : fail("the last release stops the pool");
}
