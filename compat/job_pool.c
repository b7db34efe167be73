/* (worker_id, worker_count) job pools, both directions (include/cpuexec/compat/job_pool.h). */
#include <cpuexec/compat/job_pool.h>

#include <inttypes.h>
#include <stdatomic.h>

#include <cpuexec/session.h>

#include "adapter_private.h"
#include "split_private.h"

/* Pool -> range executor. One call's state, on the caller's stack; the pool
 * runs pool_job on its own threads. The first bad worker id is published
 * with a release store of bad_id + 1 (0: none), read by the caller with
 * acquire after run_pool returned. */
typedef struct pool_call {
  int64_t count;
  cpuexec_executor *installed; /* the caller's, current on the pool's threads during the call */
  void *ctx;
  cpuexec_range_fn callback;
  atomic_uint_least64_t bad_id_plus_one;
  atomic_int bad_workers;
} pool_call;

/* Worker id's share of [0, count) starts here (compat/split_private.h). */
static int64_t share_boundary(int64_t count, uint32_t id, uint32_t workers) {
  return (int64_t)cpuexec__split_point((uint64_t)count, workers, id);
}

static int pool_job(void *arg, int32_t worker_id, int32_t worker_count) {
  pool_call *call = arg;
  if (worker_count <= 0 || worker_id < 0 || worker_id >= worker_count) {
    uint_least64_t expected = 0;
    atomic_store_explicit(&call->bad_workers, worker_count, memory_order_relaxed);
    atomic_compare_exchange_strong_explicit(&call->bad_id_plus_one, &expected, (uint_least64_t)(int64_t)worker_id + 1,
                                            memory_order_release, memory_order_relaxed);
    return CPUEXEC_ERANGE;
  }
  int64_t start = share_boundary(call->count, (uint32_t)worker_id, (uint32_t)worker_count);
  int64_t end = share_boundary(call->count, (uint32_t)worker_id + 1, (uint32_t)worker_count);
  if (start == end)
    return 0;
  /* The pool's thread is participant worker_id of worker_count of the
   * region (src/executor/participant.h): the kernel's scratch indexed by participant
   * and the runtime hooks see the pool's own numbering. */
  return cpuexec__participant_call(call->installed, (uint32_t)worker_id, (uint32_t)worker_count, call->ctx, call->callback, start, end);
}

static int run_job_pool(void *self, int64_t count, void *ctx, cpuexec_range_fn callback) {
  const cpuexec_job_pool *pool = self;
  if (pool == NULL || pool->run_pool == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "job pool: %s is NULL; pass a cpuexec_job_pool with its run_pool",
                         pool == NULL ? "pool" : "run_pool");
  if (count <= 0)
    return 0;
  pool_call call = {.count = count, .installed = cpuexec_executor_current(), .ctx = ctx, .callback = callback};
  atomic_init(&call.bad_id_plus_one, 0);
  atomic_init(&call.bad_workers, 0);
  int rc = pool->run_pool(pool->pool, &call, pool_job);
  uint_least64_t bad = atomic_load_explicit(&call.bad_id_plus_one, memory_order_acquire);
  if (bad != 0)
    return cpuexec__fail(CPUEXEC_ERANGE,
                         "job pool: ran worker_id %" PRIdLEAST64 " of worker_count %d; ids must be 0 or more and below "
                         "the count",
                         (int_least64_t)(bad - 1), atomic_load_explicit(&call.bad_workers, memory_order_relaxed));
  return rc;
}

CPUEXEC_EXPORT cpuexec_range_executor cpuexec_range_executor_from_job_pool(const cpuexec_job_pool *pool) {
  return (cpuexec_range_executor){run_job_pool, (void *)pool};
}

/* Jobs -> libcpuexec executor: the loop over worker ids is a parallel loop
 * with grain 1; each executor range runs its ids in order. */
typedef struct jobs_call {
  int32_t worker_count;
  void *ctx;
  cpuexec_worker_job_fn job;
} jobs_call;

static int jobs_run_ids(void *arg, int64_t first, int64_t end) {
  const jobs_call *call = arg;
  for (int64_t id = first; id < end; id++) {
    int rc = call->job(call->ctx, (int32_t)id, call->worker_count);
    if (rc != 0)
      return rc;
  }
  return 0;
}

static int jobs_run_ids_in_region(void *arg, int64_t first, int64_t end) {
  return cpuexec__compat_call_in_region(arg, jobs_run_ids, first, end);
}

CPUEXEC_EXPORT int cpuexec_worker_jobs_run(cpuexec_executor *exec, int32_t worker_count, void *ctx,
                                           cpuexec_worker_job_fn job) {
  if (job == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "job: NULL; pass the worker job");
  if (worker_count < 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "worker_count: %d is negative; use 0 for the executor's threads",
                         (int)worker_count);
  if (worker_count == 0)
    worker_count = exec != NULL && !cpuexec__compat_nested() ? cpuexec_executor_effective_threads(exec) : 1;
  jobs_call call = {worker_count, ctx, job};
  if (exec == NULL || worker_count == 1 || cpuexec__compat_nested())
    return cpuexec__callback_rc(cpuexec__compat_run_serial(&call, jobs_run_ids, 0, worker_count));
  return cpuexec_parallel_for(exec, worker_count, 1, &call, jobs_run_ids_in_region, 0);
}

static int run_pool_installed(void *pool, void *ctx, cpuexec_worker_job_fn job) {
  (void)pool;
  return cpuexec_worker_jobs_run(cpuexec_executor_current(), 0, ctx, job);
}

CPUEXEC_EXPORT cpuexec_job_pool cpuexec_job_pool_installed(void) {
  return (cpuexec_job_pool){run_pool_installed, NULL};
}
