/** @file
 * libcpuexec compat: a libcpuexec executor as pthreadpool's executor.
 *
 * pthreadpool (google/pthreadpool at its head) lets an application supply
 * the threads of a pool: pthreadpool_create_v2(executor, executor_context,
 * max) takes a struct pthreadpool_executor, two functions
 *
 *     int  (*num_threads)(void *executor_context);
 *     void (*schedule)(void *executor_context, void *context, void (*task)(void *context));
 *
 * and each parallelize call schedules up to num_threads tasks that lend
 * their threads to the call, the calling thread being the pool's first
 * participant. The two functions below have those exact signatures, and a
 * cpuexec_pthreadpool_context is the executor_context that goes with them,
 * so a copy of pthreadpool built into another library (XNNPACK, ExecuTorch)
 * runs on libcpuexec's workers; this header needs no pthreadpool header and
 * libcpuexec gains no build dependency:
 *
 *     cpuexec_pthreadpool_context *ctx;
 *     cpuexec_pthreadpool_context_create(NULL, &ctx);   // the installed executor, else the default pool
 *     struct pthreadpool_executor ops = {cpuexec_pthreadpool_num_threads, cpuexec_pthreadpool_schedule};
 *     pthreadpool_t pool = pthreadpool_create_v2(&ops, ctx, 0);
 *     ...
 *     pthreadpool_destroy(pool);
 *     cpuexec_pthreadpool_context_destroy(ctx);
 *
 * What the executor does:
 *   - num_threads: the executor's effective threads less one (its workers;
 *     the pthreadpool's caller is the other participant), so the pool has
 *     as many participants as the executor; 0 on a serial executor (the
 *     pool then runs its calls on the caller);
 *   - schedule: task(context) becomes one task of the context's task group
 *     (cpuexec/tasks.h) and runs on one of the executor's workers, through
 *     the executor's scheduler, never on the calling thread before
 *     schedule returns and never waited for there; a task holds its worker
 *     as long as pthreadpool keeps it (upstream's borrowed threads wait
 *     for the call's work, then return);
 *   - cpuexec_pthreadpool_context_destroy waits for every task scheduled.
 * A pool made by libcpuexec-pthreadpool runs on libcpuexec already; this
 * executor is for the copies that are not, and for libcpuexec-pthreadpool's
 * own pthreadpool_create_v2() when the application wants its pools on one
 * given executor whatever session is installed.
 *
 * Thread safety: schedule and num_threads may be called from any thread at
 * once; destroy by one thread, once nothing schedules any more. */
#ifndef CPUEXEC_COMPAT_PTHREADPOOL_EXECUTOR_H
#define CPUEXEC_COMPAT_PTHREADPOOL_EXECUTOR_H

#include <cpuexec/common.h>
#include <cpuexec/executor.h>

/** The executor_context of cpuexec_pthreadpool_num_threads and _schedule (opaque). */
typedef struct cpuexec_pthreadpool_context cpuexec_pthreadpool_context;

CPUEXEC_BEGIN_DECLS

/** Makes a context on exec (NULL: the executor installed on the calling
 * thread, else the process default pool), holding a reference on it until
 * destroyed. out NULL is CPUEXEC_EINVAL; a foreign executor CPUEXEC_ENOTSUP
 * (it has no libcpuexec workers: hand pthreadpool the application's own
 * pool); *out is NULL on failure. */
CPUEXEC_EXPORT int cpuexec_pthreadpool_context_create(cpuexec_executor *exec, cpuexec_pthreadpool_context **out);

/** Waits for every task scheduled on ctx, then frees it. NULL is ignored. */
CPUEXEC_EXPORT void cpuexec_pthreadpool_context_destroy(cpuexec_pthreadpool_context *ctx);

/** struct pthreadpool_executor's num_threads: the executor's workers (its
 * effective threads less one); 0 for a NULL context. */
CPUEXEC_EXPORT int cpuexec_pthreadpool_num_threads(void *executor_context);

/** struct pthreadpool_executor's schedule: task(context) on one of the
 * executor's workers. With a NULL context or task, nothing is scheduled;
 * when memory for the task cannot be had, task(context) runs on the
 * calling thread, so that it is never lost. */
CPUEXEC_EXPORT void cpuexec_pthreadpool_schedule(void *executor_context, void *context, void (*task)(void *context));

CPUEXEC_END_DECLS

#endif
