/** @file
 * libcpuexec: the executor, a persistent pool that runs parallel loops.
 *
 * Handles: a cpuexec_executor * is one reference-counted handle, whoever
 * handed it out. Who releases what:
 *   - cpuexec_executor_create() and cpuexec_registry_acquire() return a
 *     handle holding one reference: the caller releases it once with
 *     cpuexec_executor_release();
 *   - cpuexec_executor_retain() adds one reference: release it once too;
 *   - cpuexec_session_executor(), cpuexec_executor_current() and the executor a
 *     scope was entered with are borrowed: valid while the session lives or
 *     the scope is installed; never release them (retain one to keep it);
 *   - sessions and scopes hold their own references, so a pool stays alive
 *     while any session, scope or holder still uses it, and the last
 *     release (of any holder) stops it.
 * Releasing a reference that is not held returns CPUEXEC_ESTATE when the
 * library can see it (a registry pool with no lease left); releasing the
 * last reference from inside one of the executor's own callbacks returns
 * CPUEXEC_EBUSY and changes nothing. Both abort with a message in
 * --enable-debug builds. Releasing a handle after its last reference is a
 * use after free, like free().
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
 *     takes longer than its wake-up and the node budget (cpuexec/node.h)
 *     has a CPU for it; with shorter shares fewer may run
 *     (cpuexec_parallel_for_flags with CPUEXEC_FOR_EVERY_PARTICIPANT makes
 *     every admitted participant run its range, waiting for it; a policy's
 *     participation=every_participant does so for every region of its
 *     executors, whatever API the region comes through);
 *   - a callback returning non-zero stops ranges that have not started;
 *     every started callback finishes before the call returns, which returns
 *     CPUEXEC_ECALLBACK; the first non-zero value observed is then
 *     cpuexec_error_callback_value() on the calling thread (the rule of
 *     cpuexec/errors.h); after the call returns no worker touches ctx or
 *     anything reachable from it;
 *   - a call made from inside a callback (on any participant, into any
 *     executor) runs inline on that thread, serially, always;
 *   - exec == NULL runs the serial loop on the caller.
 * Ordering between ranges is unspecified.
 *
 * Threads calling into one executor at once: up to 8 regions run on the
 * pool at the same time (R = 8). A
 * caller never waits for another caller's region: it starts its own share
 * at once, on its own thread, as participant 0, and the pool's workers
 * join whichever open region has indices left, as they finish their share
 * in another (a worker serving two regions alternates between them). Each
 * region keeps every rule above on its own: indices unique in 0..n-1 and
 * n = cpuexec_participant_count() the admitted count (never above
 * max_participants and the effective threads), its own error, no callback
 * after its call returns, nested calls inline, hooks on every participant.
 * The threads running callbacks never outnumber the executor's effective
 * threads, the callers in regions included: a region opened while c other
 * callers run regions on the executor admits at most threads - c
 * participants (n = 1, the loop on the caller alone, when none are left;
 * cpuexec_counters.occupied_inline), and a worker that would be one thread
 * too many leaves its share to the region's caller and parks
 * (cpuexec_counters.stood_aside; doc/performance.md, section 6). A caller
 * that runs alone while more callers than threads run regions splits its
 * loop into up to 16 ranges and yields its processor between them every
 * 100 us, so the callers take turns instead of one waiting a scheduler
 * tick. A caller that finds 8 regions running already runs its loop
 * inline on its own thread, serially, as participant 0 of 1 (counted in
 * cpuexec_counters.bound_inline). CPUEXEC_FOR_EVERY_PARTICIPANT regions (every
 * region of an executor made with participation=every_participant) run
 * one at a time per executor (a second one waits for the first), so their
 * teams never split the workers; such a region waits for workers busy in
 * other regions to finish there, and so gets its full team. With one caller
 * at a time the path is the one of a single region (doc/performance.md,
 * section 6). A foreign executor (cpuexec/foreign.h) hands concurrent
 * regions to its pool concurrently: what they share is the pool's rule.
 * So a callback must not wait for another participant of its own region to
 * start (a barrier) unless the region is CPUEXEC_FOR_EVERY_PARTICIPANT:
 * with other regions running, an admitted worker may be busy in one of
 * them, and nobody takes its share over while every participant waits.
 *
 * Thread safety: every function here may be called from any thread, on the
 * same executor at once (see above for concurrent parallel calls);
 * retain/release may race each other and parallel calls of other holders.
 *
 * Placement: workers run where the resolved policy pins them. A caller the
 * policy does not place, found at dispatch on the processor of a pinned
 * worker it admits, is moved off it (its CPU set is narrowed and restored
 * at once, so the set is unchanged; only its current processor moves):
 * otherwise the two would take turns on one processor. A caller the policy
 * does not place that runs its region alone in pieces among more callers
 * than the pool has threads (they take turns on the processors) is moved
 * the same way to the processor where its process's other such callers are
 * fewest, when its own holds two more of them: the kernel moves nothing
 * among threads that only take turns, and four callers on two processors
 * could stay three and one, the lone one running three regions to each of
 * theirs (doc/performance.md section 6).
 *
 * The caller's placement (affinity_policy=explicit, cpu_set[0]): the
 * calling thread is pinned at its first region and stays pinned after it
 * returns, and after the session ends (restoring its old set would cost a
 * system call per region; a thread that needs it back sets it itself).
 * The pin is remembered per thread and checked again, with one system
 * call, when the thread is found on another processor at dispatch, or
 * when the process's placement may have changed (a fork, the process
 * topology read again because the process CPU set changed or
 * cpuexec_topology_refresh() was called, or a pool's placement check that
 * found a thread moved). Then, when cpu_set[0] is no longer in the
 * thread's CPU set, the region is refused with CPUEXEC_EAFFINITY naming
 * the processor and nothing runs (the thread is not moved back; resolve
 * the policy again); when it is there but the set is wider, the thread is
 * pinned again and the region runs. Creating a pool pins every worker
 * before it fails, and the failure names every processor that could not
 * be applied. */
#ifndef CPUEXEC_EXECUTOR_H
#define CPUEXEC_EXECUTOR_H

#include <cpuexec/common.h>
#include <cpuexec/resolve.h>

/** An executor (opaque): the built-in pool (cpuexec_executor_create, the
 * registry, sessions: the caller plus effective_threads - 1 persistent
 * workers) or an application's own pool wrapped with
 * cpuexec_executor_create_foreign() (<cpuexec/foreign.h>); every call
 * that takes an executor takes both. Owned by whoever created or leased
 * it; any number of threads may call into it at once; it must not be
 * destroyed or released while a call is in progress. */
typedef struct cpuexec_executor cpuexec_executor;

/** A range callback: 0 on success; any other value stops the loop, and the
 * parallel call returns CPUEXEC_ECALLBACK with the value available from
 * cpuexec_error_callback_value(). C++: a callback must not let an exception
 * escape (catch it and return non-zero); an exception unwinding through
 * libcpuexec's C frames is undefined behaviour. */
typedef int (*cpuexec_range_fn)(void *ctx, int64_t begin, int64_t end);

/** Per-iteration cost of a loop body, for cpuexec_parallel_for_plan().
 * {0} and cpuexec_cost_init() are the same: no cost. */
typedef struct cpuexec_cost {
  double bytes_read;     /**< bytes read per index (finite, >= 0) */
  double bytes_written;  /**< bytes written per index (finite, >= 0) */
  double compute_cycles; /**< compute cycles per index (finite, >= 0) */
  uint64_t reserved_[4]; /**< zero: room for fields of later versions */
} cpuexec_cost;

/** {0} and cpuexec_plan_constraints_init() are the same: no constraint. */
typedef struct cpuexec_plan_constraints {
  int32_t max_participants;       /**< 0: the executor's limit; negative is CPUEXEC_EINVAL */
  int32_t preferred_participants; /**< 0: no preference; otherwise used when the model allows it */
  uint64_t reserved_[4];          /**< zero: room for fields of later versions */
} cpuexec_plan_constraints;

/** Written by cpuexec_parallel_for_plan() (reserved_ zeroed). */
typedef struct cpuexec_plan {
  int64_t grain;         /**< indices per range, at least 1 */
  int32_t participants;  /**< participants to run with, at least 1 */
  uint64_t reserved_[4];
} cpuexec_plan;

CPUEXEC_BEGIN_DECLS

/** Zero every field (the defaults above); NULL is ignored. */
CPUEXEC_EXPORT void cpuexec_cost_init(cpuexec_cost *cost);
/** The same for constraints. */
CPUEXEC_EXPORT void cpuexec_plan_constraints_init(cpuexec_plan_constraints *constraints);

/** Creates an unshared executor for resolved (use the registry to share),
 * holding one reference for the caller (release it with
 * cpuexec_executor_release()). Starts, names ("cpuexec-w<k>") and pins
 * effective_threads - 1 workers before returning; a failure names the
 * processor or thread, and joins everything it started. A serial policy
 * starts no thread. resolved or out NULL is CPUEXEC_EINVAL; *out is NULL on
 * failure. */
CPUEXEC_EXPORT int cpuexec_executor_create(const cpuexec_resolved *resolved, cpuexec_executor **out);
/** Adds one reference to a handle the caller holds (from create, acquire,
 * retain, or borrowed from a session or scope while it is valid). NULL is
 * CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_executor_retain(cpuexec_executor *exec);
/** Drops one reference. The last one stops and joins the workers of an
 * executor from cpuexec_executor_create(), or gives a registry pool back to
 * its registry (which stops it or keeps it idle). In a forked child it
 * frees memory only. NULL is ignored and returns 0 (like free). Misuse
 * (see "Handles" above): CPUEXEC_ESTATE or CPUEXEC_EBUSY. */
CPUEXEC_EXPORT int cpuexec_executor_release(cpuexec_executor *exec);

/** max_participants: 0 the executor's limit, negative CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_parallel_for(cpuexec_executor *exec, int64_t total, int64_t grain, void *ctx,
                                        cpuexec_range_fn fn, int32_t max_participants);

/** Flag of cpuexec_parallel_for_flags(): every admitted participant runs its
 * reserved range: the caller waits for workers that have not started
 * instead of taking their work. For calibration and per-participant set-up
 * that must run on every thread; it costs a wake-up per idle worker on
 * every call (doc/spinning.md). */
#define CPUEXEC_FOR_EVERY_PARTICIPANT 0x1u

/** Flag of cpuexec_parallel_for_flags(): the workers run this region with
 * the calling thread's floating-point control state (flush-to-zero,
 * denormals-are-zero, rounding, exception masks: x86-64 MXCSR and x87
 * control word, aarch64 FPCR; nothing on other architectures), each
 * restoring its own state after; status flags are never copied. Policies
 * ask for it on every region with inherit_fp_environment=true; a foreign
 * executor's pool applies it around every range. Costs a little per
 * participant per region when set (doc/performance.md), nothing when not. */
#define CPUEXEC_FOR_INHERIT_FP_ENV 0x2u

/** cpuexec_parallel_for with flags (0 is cpuexec_parallel_for). A flag
 * outside the ones above is CPUEXEC_EINVAL naming it. */
CPUEXEC_EXPORT int cpuexec_parallel_for_flags(cpuexec_executor *exec, int64_t total, int64_t grain, void *ctx,
                                              cpuexec_range_fn fn, int32_t max_participants, uint32_t flags);

/** Accessors. exec NULL is the serial executor of cpuexec_parallel_for:
 * 1 effective thread, policy NULL, id 0. */
CPUEXEC_EXPORT int32_t cpuexec_executor_effective_threads(const cpuexec_executor *exec);
/** The resolution exec runs (owned by exec, valid while it lives); NULL for
 * NULL and for a foreign executor. */
CPUEXEC_EXPORT const cpuexec_resolved *cpuexec_executor_resolved(const cpuexec_executor *exec);
/** Process-local, non-zero, never reused within the process (0 for NULL). */
CPUEXEC_EXPORT uint64_t cpuexec_executor_id(const cpuexec_executor *exec);

/** Inside a callback: this participant's index (0 = the caller; on a
 * foreign executor, the index its pool ran on this thread) and the number
 * of participants of the region, on whichever thread runs it (the
 * executor's workers, a foreign pool's threads, a job pool's workers). A
 * call nested inside a callback runs inline as participant 0 of 1. Outside
 * any callback: 0 and 1. */
CPUEXEC_EXPORT int32_t cpuexec_participant_index(void);
/** Inside a callback: the number of participants of the region; outside
 * any callback: 1. Thread-local. */
CPUEXEC_EXPORT int32_t cpuexec_participant_count(void);

/** Chooses grain and participants from a cost model of the work's bytes
 * and cycles against the executor's participants (doc/performance.md
 * describes it). Small work plans one participant; exec NULL plans for the
 * serial caller; constraints NULL: none. cost or plan NULL, a cost field
 * negative or not finite, or a negative constraint is CPUEXEC_EINVAL naming
 * it. */
CPUEXEC_EXPORT int cpuexec_parallel_for_plan(const cpuexec_executor *exec, int64_t total,
                                             const cpuexec_cost *cost,
                                             const cpuexec_plan_constraints *constraints, cpuexec_plan *plan);
/** Plans (cpuexec_parallel_for_plan()), then runs cpuexec_parallel_for()
 * with the plan's grain and participants: the same serial loop, rules and
 * errors as both. */
CPUEXEC_EXPORT int cpuexec_parallel_for_costed(cpuexec_executor *exec, int64_t total, const cpuexec_cost *cost,
                                               const cpuexec_plan_constraints *constraints, void *ctx,
                                               cpuexec_range_fn fn);

CPUEXEC_END_DECLS

#endif
