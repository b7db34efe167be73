/** @file
 * libcpuexec compat: the legacy free ParallelFor.
 *
 * For kernel code written against a free ParallelFor(total, grain, ctx, fn):
 * include <cpuexec/compat/parallel_for.h> and link with
 * `pkg-config --libs cpuexec`; nothing is preloaded or interposed.
 *
 * ParallelFor(total, grain, ctx, fn) is the serial loop
 *
 *     for (int64_t i = 0; i < total; i += grain)
 *       fn(ctx, i, min(i + grain, total));
 *
 * made parallel, with the rules of cpuexec_parallel_for() (every index
 * exactly once, contiguous half-open ranges, the caller is participant 0):
 *   - inside a session run or scope (cpuexec_executor_current() != NULL) it runs on
 *     the installed executor with that executor's participant count: a
 *     session's requested threads are the participants its kernels are
 *     admitted with. Under the default take-over rule a short loop may run
 *     on fewer threads (a worker that has not started when the others run
 *     out of work has its share taken over, cpuexec/executor.h); with the
 *     policy's participation=every_participant every admitted participant
 *     runs a range, so the requested threads are the threads its kernels
 *     see;
 *   - outside any session it runs on one process-wide pool, created on the
 *     first call from CPUEXEC_POLICY (else the default policy) and leased
 *     from the process registry; there is never a second one. In a child
 *     created by fork() that pool is rebuilt on first use, silently;
 *   - a call made from inside a callback runs inline on that thread.
 * Legacy callbacks return nothing, so a callback cannot stop the loop;
 * callers that need to stop early use cpuexec_parallel_for() directly.
 *
 * The loop always runs, every index once, because legacy call sites ignore
 * the return code; the code says only what could not be done as asked:
 *   - fn == NULL is CPUEXEC_EINVAL (there is nothing to run);
 *   - grain < 1 is treated as 1, with a warning on stderr once per process;
 *     the call returns 0;
 *   - inside a scope whose executor was inherited across fork() the loop
 *     runs serially on the caller and CPUEXEC_EFORKED is returned;
 *   - when the process-wide pool cannot be created the loop runs serially
 *     on the caller and the creation error is returned (cpuexec_error_message()
 *     names the cause). Creation is retried with a backoff counted in calls:
 *     after the k-th failed attempt, 2^(k-1) calls (at most 1024) run serially
 *     before the next attempt, so a transient pthread_create failure
 *     (EAGAIN) costs a few serial calls, never the process's parallelism;
 *   - when the default policy cannot be placed (CPUEXEC_NUM_THREADS above
 *     the physical cores a pinning policy can use, say) the pool is made
 *     from the same request with affinity_policy=none, with a warning on
 *     stderr once per process, and the call returns 0.
 * Returns 0 or a negative CPUEXEC_E* code as above. The pool's policy is
 * the process default: CPUEXEC_POLICY, else cpuexec_policy_init(), which is
 * unpinned; pinning is asked for in CPUEXEC_POLICY
 * (affinity_policy=physical_cores).
 *
 * Thread safety: both functions may be called from any thread at once. The
 * pool lives until the process exits (it is a lease of the process
 * registry that nobody releases). Callbacks must not let a C++ exception
 * escape. */
#ifndef CPUEXEC_COMPAT_PARALLEL_FOR_H
#define CPUEXEC_COMPAT_PARALLEL_FOR_H

#include <stdint.h>

#include <cpuexec/common.h>

CPUEXEC_BEGIN_DECLS

/** The loop body of ParallelFor: indices [begin, end) with the caller's ctx. */
typedef void (*ParallelForFunction)(void *ctx, int64_t begin, int64_t end);

/** Runs fn over [0, total) in ranges of `grain` indices, on the installed
 * executor or the process-wide pool (see the top of this file). Returns 0
 * or a negative CPUEXEC_E* code; every index ran either way, except when fn
 * is NULL. */
CPUEXEC_EXPORT int ParallelFor(int64_t total, int64_t grain, void *ctx, ParallelForFunction fn);

/** ParallelFor for a kernel that requires an executor (cpuexec_kernel_executor
 * with CPUEXEC_EXECUTOR_REQUIRED): inside a session or scope it is
 * ParallelFor; with no executor installed it runs nothing and returns
 * CPUEXEC_ESTATE naming `kernel`, instead of using the process-wide pool. */
CPUEXEC_EXPORT int ParallelForRequiringExecutor(const char *kernel, int64_t total, int64_t grain, void *ctx,
                                                ParallelForFunction fn);

/** Participants a ParallelFor call made here would use at most: the installed
 * executor's effective threads inside a session, else the process-wide
 * pool's (creating it), or 1 when that pool cannot be created. */
CPUEXEC_EXPORT int32_t ParallelForThreadCount(void);

CPUEXEC_END_DECLS

#endif
