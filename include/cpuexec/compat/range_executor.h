/** @file
 * libcpuexec compat: the (count, callback) range-executor contract.
 *
 * Kernel libraries that schedule "groups" (matmul output rows, reduction
 * coordinates) take a range executor: a function that runs
 *
 *     for each range [start, end) of some partition of [0, count):
 *       callback(ctx, start, end);
 *
 * possibly in parallel. The executor's obligations (the contract):
 *   - the ranges are disjoint, half-open and cover [0, count) exactly once;
 *     0 <= start <= end <= count; empty ranges are allowed;
 *   - it chooses partition sizes, worker count and thresholds, and may run
 *     everything serially;
 *   - it waits for every started callback before returning, and for the
 *     remaining workers before it returns a worker's error; after it returns
 *     no callback touches ctx or anything reachable from it;
 *   - it returns 0, the non-zero value of a callback (the first observed),
 *     or its own negative CPUEXEC_E* error.
 *
 * Kernels call an executor through cpuexec_range_executor_run(), never
 * directly: the core checks every range's bounds, skips empty ranges,
 * handles zero and one group without scheduling, and runs each callback with
 * nested scheduling disabled (a range-executor, range-schedule or
 * cpuexec_parallel_for call from inside a callback runs inline on that
 * thread). Coverage and disjointness stay the executor's obligations; the
 * core keeps no per-index state. cpuexec_range_executor_checking() verifies
 * them too, at O(count) memory, for tests and debugging.
 *
 * Destinations: the core never writes caller memory. Whether a failing
 * operation leaves its destination unchanged is the operation's rule: a
 * reduction or fused operation stages its results and copies them after the
 * executor succeeded (unchanged on failure); a matmul-style operation writes
 * its output rows directly (partly written on failure). doc/adapters.md
 * gives the rule for each adapter. */
#ifndef CPUEXEC_COMPAT_RANGE_EXECUTOR_H
#define CPUEXEC_COMPAT_RANGE_EXECUTOR_H

#include <cpuexec/common.h>
#include <cpuexec/executor.h>

/** A range executor: run(self, count, ctx, callback) under the contract
 * above. run NULL means serial. The struct is a value: copy it freely; what
 * self points to must outlive every call. It is an interface with a fixed
 * layout (doc/api-conventions.md): a later version adds a new interface
 * rather than a field. Thread safety: the executors below may be run from
 * any number of threads at once. */
typedef struct cpuexec_range_executor {
  /** Runs callback(ctx, start, end) over a partition of [0, count) (the contract above). */
  int (*run)(void *self, int64_t count, void *ctx, cpuexec_range_fn callback);
  void *self; /**< the executor's state, passed to run */
} cpuexec_range_executor;

CPUEXEC_BEGIN_DECLS

/** The serial range executor: one callback over [0, count) on the caller. */
CPUEXEC_EXPORT cpuexec_range_executor cpuexec_range_executor_serial(void);

/** The executor installed on the calling thread at the time of each call
 * (cpuexec_executor_current(): a session's, or an explicit scope's), serial when none
 * is installed. It hands each participant about one range:
 * cpuexec_parallel_for(exec, count, ceil(count / effective threads), ...). */
CPUEXEC_EXPORT cpuexec_range_executor cpuexec_range_executor_installed(void);

/** A given libcpuexec executor, whatever is installed (exec NULL: serial). */
CPUEXEC_EXPORT cpuexec_range_executor cpuexec_range_executor_of(cpuexec_executor *exec);

/** The core: calls executor (NULL or run NULL: serial) for [0, count).
 *   - count < 0 or callback NULL: CPUEXEC_EINVAL; count 0 calls nothing;
 *     count 1 runs callback(ctx, 0, 1) on the caller without the executor;
 *     a call from inside any libcpuexec callback runs serially on the caller;
 *   - a range outside 0 <= start <= end <= count is not passed to the
 *     callback; the call returns CPUEXEC_ERANGE naming the first such range
 *     once the executor has returned (the callback it was given returned
 *     CPUEXEC_ERANGE for it, so a conforming executor stops early);
 *   - a callback returning non-zero makes the call return CPUEXEC_ECALLBACK
 *     (its value: cpuexec_error_callback_value(), see cpuexec/errors.h),
 *     whatever the executor returned for it (its value unchanged, or
 *     CPUEXEC_ECALLBACK); an executor's own error, such as a checking
 *     wrapper's violation, is returned as it is. */
CPUEXEC_EXPORT int cpuexec_range_executor_run(const cpuexec_range_executor *executor, int64_t count, void *ctx,
                                              cpuexec_range_fn callback);

/** What cpuexec_range_executor_run_all() reports besides its result: the
 * side channel of a library error after which it ran the ranges left on
 * the caller. Written by the call (reserved_ zeroed). */
typedef struct cpuexec_run_all_report {
  /** 0, or the error (a negative CPUEXEC_E*; cpuexec_error_message() names
   * it) of the executor or the library, after which the call ran every
   * range that had not run on the calling thread. */
  int error;
  int32_t reserved_pad_; /**< zero */
  /** The indices the call ran on the calling thread because of error (0
   * when error is 0; count when the executor ran nothing, as after fork()). */
  int64_t caller_indices;
  uint64_t reserved_[2]; /**< zero: room for fields of later versions */
} cpuexec_run_all_report;

/** The call for hooks that return void (a library's run_blocks,
 * parallel_for or threads callback, which cannot report an error and must
 * not lose a block): every index of [0, count) runs exactly once, whatever
 * the executor does, unless a callback fails. As cpuexec_range_executor_run()
 * (bounds, nesting, zero and one group), and:
 *   - on an error of the executor or of the library (an executor inherited
 *     across fork() returns CPUEXEC_EFORKED, memory that cannot be had
 *     CPUEXEC_ENOMEM, a range out of bounds CPUEXEC_ERANGE, an executor that
 *     returned 0 without running every range or while callbacks were still
 *     running CPUEXEC_ESTATE), every range that had not run then runs on
 *     the calling thread, inline (participant 0 of 1), and the call returns
 *     0 with the error in report->error, its message in
 *     cpuexec_error_message() and the indices run so in
 *     report->caller_indices. The call waits for callbacks still running
 *     when the executor returned;
 *   - an index the executor passes twice runs once (CPUEXEC_ERANGE in
 *     report->error);
 *   - a callback returning non-zero stops the call as in
 *     cpuexec_range_executor_run(): ranges not started do not run and the
 *     call returns CPUEXEC_ECALLBACK (the value: cpuexec_error_callback_value());
 *     an error of the executor beside it is in report->error;
 *   - callback NULL or count < 0 is CPUEXEC_EINVAL and nothing runs.
 * To know which indices ran it keeps one bit per piece on its own stack
 * (it allocates nothing): with count above 4096 the executor is handed
 * 4096 pieces of balanced size (count / 4096, give or take one) instead of
 * count groups, and a range of pieces reaches the callback as the range of
 * indices they cover (adjacent pieces merged). Ranges run on the caller
 * after an error run serially, one after the other: blocks that wait for
 * each other (all jobs of a call running at once) must not rely on this
 * fallback. report may be NULL. Thread safety: as cpuexec_range_executor_run(). */
CPUEXEC_EXPORT int cpuexec_range_executor_run_all(const cpuexec_range_executor *executor, int64_t count, void *ctx,
                                                  cpuexec_range_fn callback, cpuexec_run_all_report *report);

/** The checking wrapper: an executor that runs `inner` and, after it
 * returns, also reports contract violations the core cannot see:
 *   - a range that overlaps another (an index passed twice) or an index no
 *     range covered: CPUEXEC_ERANGE naming the index (only with
 *     verify_coverage: it allocates count bytes per call, CPUEXEC_ENOMEM when
 *     that fails);
 *   - a return while callbacks were still running: CPUEXEC_ESTATE. The
 *     wrapper then waits for those callbacks before it returns, so its own
 *     state stays valid; a callback the inner executor starts after that is
 *     beyond any check.
 * A violation takes precedence over a callback's error. The wrapper keeps
 * its settings in *checker, which must outlive the executor it returns.
 * checker NULL: the executor returned fails each run (of 2 or more groups)
 * with CPUEXEC_EINVAL naming checker. */
typedef struct cpuexec_range_checker {
  cpuexec_range_executor inner; /**< the executor being checked */
  bool verify_coverage;         /**< also check that every index ran exactly once */
  uint64_t reserved_[2]; /**< room for settings of later versions */
} cpuexec_range_checker;

/** Returns the checking wrapper of `inner`, its settings kept in *checker
 * (see cpuexec_range_checker). */
CPUEXEC_EXPORT cpuexec_range_executor cpuexec_range_executor_checking(cpuexec_range_checker *checker,
                                                                      cpuexec_range_executor inner,
                                                                      bool verify_coverage);

CPUEXEC_END_DECLS

#endif
