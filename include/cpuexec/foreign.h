/** @file
 * libcpuexec: foreign executors, an application's own pool as an executor.
 *
 * An application that owns its threads (a game engine's job system, a
 * server's worker pool, a oneTBB arena) wraps that pool as a
 * cpuexec_executor, so every part of libcpuexec that takes an executor runs
 * on it: scopes and sessions install it, cpuexec_parallel_for and costed
 * planning run on it, and so do the compat adapters (ranges, range
 * executors, worker jobs, legacy ParallelFor, libcpuexec-pthreadpool) while
 * it is installed. The pool keeps its placement: libcpuexec pins nothing.
 * doc/foreign-executors.md walks through one.
 *
 * The pool supplies one function, the range-executor contract of
 * <cpuexec/compat/range_executor.h>:
 *
 *     run_ranges(pool, count, arg, fn)
 *
 * calls fn(arg, begin, end) for disjoint half-open ranges covering [0, count)
 * exactly once, on any of its threads, waits for every started call, and
 * returns 0, the first non-zero value fn returned, or its own negative
 * CPUEXEC_E* error. libcpuexec calls it with count = the region's
 * participants (2 .. effective_threads) and treats each index as one
 * participant: the thread running index i is participant i of count for
 * that range (cpuexec_participant_index/count() say so inside callbacks,
 * the runtime hooks begin and end on it, nested calls run inline). Running
 * index i on the i-th thread gives full parallelism; running several
 * indices on one thread in turn is correct too: no participant ever waits
 * for another, so a pool whose workers have not started yet still
 * completes. libcpuexec distributes the loop's grains among the
 * participants itself.
 *
 * Errors, as for the built-in executor: a callback's non-zero value stops
 * grains that have not started, and once run_ranges returns the call
 * returns CPUEXEC_ECALLBACK with the value in cpuexec_error_callback_value()
 * (cpuexec/errors.h); run_ranges itself may return the value as it is. A
 * contract violation by the pool is reported instead: a range outside
 * [0, count) or an index run twice is CPUEXEC_ERANGE; returning before a
 * started call finished, or returning 0 with indices never run, is
 * CPUEXEC_ESTATE (libcpuexec waits for the running calls before it returns,
 * so they never touch a freed frame). In a forked child the executor
 * refuses work with CPUEXEC_EFORKED, as the built-in one does.
 *
 * Threads: libcpuexec calls run_ranges from whichever thread calls into the
 * executor, and two threads may do so at once; a pool that cannot run two
 * calls at once serializes them itself. run_ranges is never called from
 * inside a libcpuexec callback (such calls run inline). */
#ifndef CPUEXEC_FOREIGN_H
#define CPUEXEC_FOREIGN_H

#include <cpuexec/common.h>
#include <cpuexec/executor.h>

/** What an application's pool supplies to become an executor; start from
 * cpuexec_foreign_executor_ops_init(). */
typedef struct cpuexec_foreign_executor_ops {
  /** Participants a region may have, the calling thread included: usually
   * the pool's thread count. Required, >= 1 (1: every call runs inline and
   * run_ranges is never called). */
  int32_t effective_threads;
  /** Required: the range runner described above. */
  int (*run_ranges)(void *pool, int64_t count, void *arg, cpuexec_range_fn fn);
  /** Optional: the pool's own cost planner for cpuexec_parallel_for_plan()
   * (and so cpuexec_parallel_for_costed and costed ranges). It receives the
   * arguments as given (constraints may be NULL) and returns 0 with *plan
   * filled, or an error that is returned unchanged. NULL: libcpuexec's
   * model with effective_threads. A plan with grain < 1 or participants
   * outside [1, min(limit, total)] is CPUEXEC_ERANGE. */
  int (*plan)(void *pool, int64_t total, const cpuexec_cost *cost, const cpuexec_plan_constraints *constraints,
              cpuexec_plan *plan);
  uint64_t reserved_[4]; /**< zero: room for fields of later versions */
} cpuexec_foreign_executor_ops;

CPUEXEC_BEGIN_DECLS

/** Clears *ops (effective_threads 0 and no functions: set the required
 * ones). NULL is ignored. */
CPUEXEC_EXPORT void cpuexec_foreign_executor_ops_init(cpuexec_foreign_executor_ops *ops);

/** Wraps pool as an executor. *ops is copied; pool is passed to each
 * function and must outlive the executor. The executor owns no threads and
 * has no resolved policy (cpuexec_executor_resolved() returns NULL); its id is
 * new. *out holds one reference, released with cpuexec_executor_release();
 * sessions and scopes that use it hold their own, so the last holder frees
 * it (the pool itself is the application's to close, after that). Errors: out or ops NULL,
 * effective_threads 0, or run_ranges NULL: CPUEXEC_EINVAL naming the field;
 * CPUEXEC_ENOMEM. */
CPUEXEC_EXPORT int cpuexec_executor_create_foreign(const cpuexec_foreign_executor_ops *ops, void *pool,
                                                   cpuexec_executor **out);

CPUEXEC_END_DECLS

#endif
