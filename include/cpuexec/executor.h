/** @file
 * libcpuexec: the executor, a persistent pool that runs parallel loops.
 *
 * cpuexec_parallel_for(exec, total, grain, ctx, fn, max_participants) is the
 * serial loop
 *
 *     for (int64_t i = 0; i < total; i += grain)
 *       if ((rc = fn(ctx, i, min(i + grain, total))) != 0) return rc;
 *
 * made parallel:
 *   - every index in [0, total) is passed exactly once, in contiguous
 *     half-open ranges [begin, end); a range may hold several grains, and
 *     each holds at least grain indices except the one that ends at total;
 *   - total <= 0 calls nothing and returns 0; grain < 1 or fn == NULL is
 *     CPUEXEC_EINVAL;
 *   - at most min(max_participants (0: the executor's limit), the executor's
 *     effective threads, ceil(total / grain)) participants are admitted; the
 *     calling thread is participant 0 and cpuexec_participant_count() is the
 *     admitted count;
 *   - nobody waits for a worker that has not started: the range reserved
 *     for an admitted worker that has not checked in when another
 *     participant (the caller included) runs out of work is run by that
 *     participant, and the worker, arriving later, runs nothing for that
 *     call. So every admitted participant runs a range whenever its share
 *     takes longer than its wake-up; with shorter shares fewer may run
 *     (cpuexec_parallel_for_flags with CPUEXEC_FOR_EVERY_PARTICIPANT makes
 *     every admitted participant run its range, waiting for it);
 *   - a callback returning non-zero stops ranges that have not started;
 *     every started callback finishes before the call returns, which returns
 *     that non-zero value (the first one observed); after the call returns no
 *     worker touches ctx or anything reachable from it;
 *   - a call made from inside a callback (on any participant, into any
 *     executor) runs inline on that thread, serially, always;
 *   - exec == NULL runs the serial loop on the caller.
 * Ordering between ranges is unspecified.
 *
 * Threads calling into one executor at once all complete correctly: one
 * region runs on the pool at a time and a second caller waits (asleep) for
 * it, then runs its region with every participant. Measured on 2 cores, two
 * callers of 100 us regions: waiting 44 us per region, running the second
 * one inline on its caller 62 us; for regions of a few hundred ns the two are
 * within noise (1.0 vs 0.9-1.2 us), so waiting it is.
 *
 * Placement: workers run where the resolved policy pins them. A caller the
 * policy does not place, found at dispatch on the processor of a pinned
 * worker it admits, is moved off it (its CPU set is narrowed and restored
 * at once, so the set is unchanged; only its current processor moves):
 * otherwise the two would take turns on one processor. */
#ifndef CPUEXEC_EXECUTOR_H
#define CPUEXEC_EXECUTOR_H

#include <cpuexec/common.h>
#include <cpuexec/resolve.h>

/** An executor (opaque): the built-in pool (cpuexec_executor_create, the
 * registry, sessions: the caller plus effective_threads - 1 persistent
 * workers) or an application's own pool wrapped with
 * cpuexec_executor_create_foreign() (include/cpuexec/foreign.h); every call
 * that takes an executor takes both. Owned by whoever created or leased
 * it; any number of threads may call into it at once; it must not be
 * destroyed or released while a call is in progress. */
typedef struct cpuexec_executor cpuexec_executor;

/** A range callback: 0 on success, any non-zero value stops the loop and is
 * returned by the parallel call. It runs on any participant's thread,
 * concurrently with the other participants' callbacks, and must not
 * unwind (C++ exceptions: use cpuexec.hpp, which carries them). */
typedef int (*cpuexec_range_fn)(void *ctx, int64_t begin, int64_t end);

/** Per-iteration cost of a loop body, for cpuexec_plan_parallel_for(). */
typedef struct cpuexec_cost {
  double bytes_read;     /**< bytes read per index (finite, >= 0) */
  double bytes_written;  /**< bytes written per index (finite, >= 0) */
  double compute_cycles; /**< compute cycles per index (finite, >= 0) */
} cpuexec_cost;

/** Limits for cpuexec_plan_parallel_for(); all zero: none. */
typedef struct cpuexec_plan_constraints {
  uint32_t max_participants;       /**< 0: the executor's limit */
  uint32_t preferred_participants; /**< 0: no preference; otherwise used when the model allows it */
} cpuexec_plan_constraints;

/** What cpuexec_plan_parallel_for() chose. */
typedef struct cpuexec_plan {
  int64_t grain;         /**< indices per range, at least 1 */
  uint32_t participants; /**< participants to run, at least 1 */
} cpuexec_plan;

CPUEXEC_BEGIN_DECLS

/** Creates an unshared executor for resolved (use the registry to share)
 * into *out; the caller destroys it with cpuexec_executor_destroy(). It
 * keeps its own copy of resolved. Starts, names ("cpuexec-wK") and pins
 * effective_threads - 1 workers before returning; a failure
 * (CPUEXEC_ETHREAD, CPUEXEC_EAFFINITY) names the processor or thread, and
 * joins everything it started. A serial policy starts no thread. resolved
 * or out NULL is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_executor_create(const cpuexec_resolved *resolved, cpuexec_executor **out);
/** Stops and joins the workers of an executor from cpuexec_executor_create().
 * In a forked child it frees memory only. NULL is ignored (like free). No
 * call may be in progress on it, and no thread may use it afterwards. */
CPUEXEC_EXPORT void cpuexec_executor_destroy(cpuexec_executor *exec);

/** The serial loop
 * `for (i = 0; i < total; i += grain) if ((rc = fn(ctx, i, min(i + grain, total)))) return rc;`
 * made parallel on exec, with the rules at the top of this header: every
 * index exactly once, the caller is participant 0, at most max_participants
 * (0: the executor's limit) participants, a failing callback stops ranges
 * that have not started and its value is returned once every started
 * callback finished, nested calls run inline, exec NULL runs serially on
 * the caller. ctx is only used during the call. grain < 1 or fn NULL is
 * CPUEXEC_EINVAL; an executor inherited across fork() is CPUEXEC_EFORKED.
 * Any thread may call it, on one executor concurrently. */
CPUEXEC_EXPORT int cpuexec_parallel_for(cpuexec_executor *exec, int64_t total, int64_t grain, void *ctx,
                                        cpuexec_range_fn fn, uint32_t max_participants);

/** Flag of cpuexec_parallel_for_flags(): every admitted participant runs its reserved range: the caller waits for
 * workers that have not started instead of taking their work. For
 * calibration and per-participant set-up that must run on every thread;
 * it costs a wake-up per idle worker on every call (doc/spinning.md). */
#define CPUEXEC_FOR_EVERY_PARTICIPANT 0x1u

/** Flag of cpuexec_parallel_for_flags(): the workers run this region with
 * the calling thread's floating-point control state (flush-to-zero,
 * denormals-are-zero, rounding, exception masks: x86-64 MXCSR and x87
 * control word, aarch64 FPCR; nothing on other architectures), each
 * restoring its own state after; status flags are never copied. Policies
 * ask for it on every region with inherit_fp_environment=true; a foreign
 * executor's pool applies it around every range. Costs a few ns per
 * participant per region when set (bench/bench_fpenv), nothing when not. */
#define CPUEXEC_FOR_INHERIT_FP_ENV 0x2u

/** cpuexec_parallel_for with flags (0 is cpuexec_parallel_for). A flag
 * outside the ones above is CPUEXEC_EINVAL naming it. */
CPUEXEC_EXPORT int cpuexec_parallel_for_flags(cpuexec_executor *exec, int64_t total, int64_t grain, void *ctx,
                                              cpuexec_range_fn fn, uint32_t max_participants, uint32_t flags);

/** Most participants of a region on exec, the caller included. Like the
 * accessors below it never fails, and exec NULL is the serial executor of
 * cpuexec_parallel_for: 1 effective thread, policy NULL, id 0. */
CPUEXEC_EXPORT uint32_t cpuexec_executor_effective_threads(const cpuexec_executor *exec);
/** The resolution exec runs (owned by exec, valid while it lives). */
CPUEXEC_EXPORT const cpuexec_resolved *cpuexec_executor_policy(const cpuexec_executor *exec);
/** Process-local, non-zero, never reused within the process (0 for NULL). */
CPUEXEC_EXPORT uint64_t cpuexec_executor_id(const cpuexec_executor *exec);

/** Inside a callback: this participant's index (0 = the caller; on a
 * foreign executor, the index its pool ran on this thread), stable for the
 * whole callback, on whichever thread runs it (the executor's workers, a
 * foreign pool's threads, a job pool's workers). A call nested inside a
 * callback runs inline as participant 0 of 1. Outside any callback: 0.
 * Thread-local. */
CPUEXEC_EXPORT uint32_t cpuexec_participant_index(void);
/** Inside a callback: the number of participants of the region. Outside
 * any callback: 1. Thread-local. */
CPUEXEC_EXPORT uint32_t cpuexec_participant_count(void);

/** Chooses grain and participants for total indices of the given cost on
 * exec, from the cost model documented in src/plan.c, into *plan. Small
 * work plans one participant; exec NULL plans for the serial caller;
 * constraints NULL: none. cost or plan NULL, or a cost field negative or
 * not finite, is CPUEXEC_EINVAL naming it. Thread-safe. */
CPUEXEC_EXPORT int cpuexec_plan_parallel_for(const cpuexec_executor *exec, int64_t total,
                                             const cpuexec_cost *cost,
                                             const cpuexec_plan_constraints *constraints, cpuexec_plan *plan);
/** Plans (cpuexec_plan_parallel_for()), then runs cpuexec_parallel_for()
 * with the plan's grain and participants: the same serial loop, rules and
 * errors as both. */
CPUEXEC_EXPORT int cpuexec_parallel_for_costed(cpuexec_executor *exec, int64_t total, const cpuexec_cost *cost,
                                               const cpuexec_plan_constraints *constraints, void *ctx,
                                               cpuexec_range_fn fn);

CPUEXEC_END_DECLS

#endif
