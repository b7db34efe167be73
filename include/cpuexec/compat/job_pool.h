/** @file
 * libcpuexec compat: (worker_id, worker_count) job pools, both directions.
 *
 * Many kernel libraries own a pool that runs one job on every worker:
 *
 *     run_pool(pool, ctx, job);   // job(ctx, id, workers) for id in [0, workers)
 *
 * waits for every worker and returns the first job error. This header turns
 * such a pool into a range executor (so range-executor kernels run on it),
 * and runs such jobs on a libcpuexec executor (so code written against
 * run_pool follows the session).
 *
 * Thread safety: every function here may be called from any thread at once;
 * cpuexec_job_pool is an interface with a fixed layout
 * (doc/api-conventions.md). */
#ifndef CPUEXEC_COMPAT_JOB_POOL_H
#define CPUEXEC_COMPAT_JOB_POOL_H

#include <cpuexec/common.h>
#include <cpuexec/executor.h>

#include <cpuexec/compat/range_executor.h>

/** One worker's share: 0 on success, non-zero to fail the run. */
typedef int (*cpuexec_worker_job_fn)(void *ctx, int32_t worker_id, int32_t worker_count);

/** An existing pool. run_pool(pool, ctx, job) must call job(ctx, id, n) once
 * for every id in [0, n) with one n (n >= 1), wait for all of them, and
 * return 0 or a job's non-zero value; it must not return before every
 * worker has finished, even after a job failed. */
typedef struct cpuexec_job_pool {
  /** Calls job(ctx, id, n) for every id in [0, n) and waits for them all. */
  int (*run_pool)(void *pool, void *ctx, cpuexec_worker_job_fn job);
  void *pool; /**< the pool's state, passed to run_pool */
} cpuexec_job_pool;

CPUEXEC_BEGIN_DECLS

/** A range executor on an existing pool: worker id of n runs the range
 * [floor(count * id / n), floor(count * (id + 1) / n)) (computed without
 * overflow), so the ranges are disjoint and cover [0, count); a worker whose
 * range is empty calls nothing. It returns what run_pool returned. A worker
 * id >= n, or n == 0, runs nothing and makes the call fail with
 * CPUEXEC_ERANGE naming the id, after run_pool returned. *pool must outlive
 * the executor. pool NULL, or its run_pool NULL: each run (of 2 or more
 * groups) fails with CPUEXEC_EINVAL naming it. */
CPUEXEC_EXPORT cpuexec_range_executor cpuexec_range_executor_from_job_pool(const cpuexec_job_pool *pool);

/** The serial loop
 *
 *     for (int32_t id = 0; id < worker_count; id++)
 *       if ((rc = job(ctx, id, worker_count)) != 0) return rc;
 *
 * run on exec (NULL: on the caller, serially, as above) with
 * cpuexec_parallel_for's rules: each id exactly once, at most exec's
 * effective threads participants, a failing job stops ids that have not
 * started and, once every started job has finished, the call returns
 * CPUEXEC_ECALLBACK with the job's value in cpuexec_error_callback_value();
 * called from inside a callback it runs inline. worker_count 0 means exec's
 * effective threads (1 when exec is NULL or the call is nested); negative,
 * or job NULL, is CPUEXEC_EINVAL. Jobs must not wait for each other
 * (no barrier between workers): with fewer participants than worker ids, or
 * inline, one thread runs several ids in turn. */
CPUEXEC_EXPORT int cpuexec_worker_jobs_run(cpuexec_executor *exec, int32_t worker_count, void *ctx,
                                           cpuexec_worker_job_fn job);

/** A job pool backed by the executor installed on the calling thread at the
 * time of each run (cpuexec_executor_current()): run_pool runs
 * cpuexec_worker_jobs_run(current, 0, ctx, job), so the worker count is the
 * session's thread count; with no executor installed, or from inside a
 * callback, it runs job(ctx, 0, 1) on the caller. For code that takes a
 * run_pool-style pool. */
CPUEXEC_EXPORT cpuexec_job_pool cpuexec_job_pool_installed(void);

CPUEXEC_END_DECLS

#endif
