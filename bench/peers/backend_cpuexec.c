/* libcpuexec benchmarks: the libcpuexec backend.
 *
 * The process default policy (CPUEXEC_POLICY, else the library defaults)
 * with num_threads set to the benchmark's participant count; an unshared
 * executor from cpuexec_executor_create(). Built with BENCH_CPUEXEC_PINNED
 * (bench/peers/cpuexec_pinned), it is the "libcpuexec-pinned" rows: the same
 * with affinity_policy=physical_cores unless CPUEXEC_POLICY places threads. */
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>

#include <cpuexec.h>

#ifdef BENCH_CPUEXEC_PINNED
const char bench_backend_name[] = "libcpuexec-pinned";
#else
const char bench_backend_name[] = "libcpuexec";
#endif

static cpuexec_resolved *resolved;
static cpuexec_executor *executor;

int bench_backend_init(unsigned participants, char *err, size_t err_size) {
  cpuexec_policy policy;
  int rc = cpuexec_policy_from_environment(&policy);
  if (rc == 0) {
    policy.num_threads = (int32_t)participants;
#ifdef BENCH_CPUEXEC_PINNED
    if (policy.affinity_policy == CPUEXEC_AFFINITY_NONE) policy.affinity_policy = CPUEXEC_AFFINITY_PHYSICAL_CORES;
#endif
    rc = cpuexec_policy_resolve(&policy, NULL, &resolved);
  }
  if (rc == 0) rc = cpuexec_executor_create(resolved, &executor);
  if (rc != 0) {
    snprintf(err, err_size, "%s: %s", cpuexec_error_name(rc), cpuexec_error_message());
    return 1;
  }
  char text[512];
  cpuexec_policy_format(&policy, text, sizeof text);
  printf("# libcpuexec policy: %s\n", text);
  if (cpuexec_executor_effective_threads(executor) != (int32_t)participants) {
    snprintf(err, err_size, "the executor runs %d participants", (int)cpuexec_executor_effective_threads(executor));
    return 1;
  }
  return 0;
}

void bench_backend_for(int64_t n, int64_t chunk, bench_range_fn body, void *ctx) {
  int rc = cpuexec_parallel_for(executor, n, chunk, ctx, body, 0);
  if (rc != 0) {
    printf("FAIL libcpuexec: cpuexec_parallel_for returned %s: %s\n", cpuexec_error_name(rc), cpuexec_error_message());
    fflush(stdout);
    exit(1);
  }
}

void bench_backend_describe(char *buf, size_t size) {
  char text[512];
  cpuexec_policy_format(cpuexec_resolved_request(resolved), text, sizeof text);
  snprintf(buf, size, "policy %s; resolved %s", text, cpuexec_resolved_sharing_key(resolved));
}

/* The two-pools variant: a second executor from the same resolution. */
void *bench_backend_pool_open(unsigned participants) {
  cpuexec_executor *e = NULL;
  if (cpuexec_executor_create(resolved, &e) != 0 || cpuexec_executor_effective_threads(e) != (int32_t)participants) {
    cpuexec_executor_release(e);
    return NULL;
  }
  return e;
}

void bench_backend_pool_for(void *pool, int64_t n, int64_t chunk, bench_range_fn body, void *ctx) {
  int rc = cpuexec_parallel_for(pool, n, chunk, ctx, body, 0);
  if (rc != 0) {
    printf("FAIL libcpuexec: cpuexec_parallel_for returned %s: %s\n", cpuexec_error_name(rc), cpuexec_error_message());
    fflush(stdout);
    exit(1);
  }
}

void bench_backend_pool_close(void *pool) { cpuexec_executor_release(pool); }

/* Tasks: one task group on the executor, an item per task. */
typedef struct task_item {
  bench_task_fn task;
  void *ctx;
  int64_t i;
} task_item;

static int run_item(void *arg) {
  const task_item *t = arg;
  t->task(t->ctx, t->i);
  return 0;
}

void bench_backend_tasks(int64_t n, bench_task_fn task, void *ctx) {
  static cpuexec_task_group *group;
  static task_item *items;
  static int64_t have;
  if (!group && cpuexec_task_group_create(executor, NULL, &group) != 0) {
    printf("FAIL libcpuexec: cpuexec_task_group_create: %s\n", cpuexec_error_message());
    exit(1);
  }
  if (n > have) {
    free(items);
    items = malloc(sizeof *items * (size_t)n);
    have = n;
    if (!items) exit(1);
  }
  for (int64_t i = 0; i < n; i++) {
    items[i] = (task_item){task, ctx, i};
    cpuexec_task_group_submit(group, &items[i], run_item);
  }
  int rc = cpuexec_task_group_wait(group);
  if (rc != 0) {
    printf("FAIL libcpuexec: cpuexec_task_group_wait returned %s\n", cpuexec_error_name(rc));
    exit(1);
  }
}

void bench_backend_fini(void) {
  cpuexec_executor_release(executor);
  cpuexec_resolved_destroy(resolved);
}
