/** @file
 * libcpuexec: optional counters, dispatch observer, execution descriptor.
 *
 * Counters belong to an executor (shared by every lease of it). They are off
 * by default: the hot path then does no allocation, lock or clock read.
 *
 * Thread safety: every function here may be called from any thread at any
 * time, also while regions run (a snapshot is then approximate). The
 * structs below are written by the library (reserved_ zeroed): allocate
 * them anywhere; later versions add fields only where the struct says it has room. */
#ifndef CPUEXEC_COUNTERS_H
#define CPUEXEC_COUNTERS_H

#include <cpuexec/common.h>
#include <cpuexec/executor.h>

/** A snapshot of an executor's counters (since counting was enabled). */
typedef struct cpuexec_counters {
  uint64_t dispatches;        /**< parallel regions opened to workers (whether or not one joined) */
  uint64_t nested_inline;     /**< calls made inside a callback, run inline */
  uint64_t limited_inline;    /**< calls run inline because the work admitted one participant */
  uint64_t spins_found_work;  /**< waits that ended while spinning */
  uint64_t parks;             /**< waits that parked in the kernel */
  uint64_t wakeups;           /**< wake system calls made by dispatches */
  uint64_t caller_waits;      /**< times the caller waited for workers to finish */
  uint64_t worker_active_ns;  /**< time workers spent running callbacks */
  /** Take-overs and the cadence (doc/spinning.md): */
  uint64_t takeovers;         /**< reserved chunks run by another participant: their owner had not checked in */
  uint64_t late_arrivals;     /**< times a worker woke to a region whose share was already taken */
  uint64_t cadence_hits;      /**< regions that found a worker spinning in its cadence window */
  uint64_t cadence_misses;    /**< cadence windows that ended without a region, or regions that came before theirs */
  /** Several regions on one pool (cpuexec/executor.h): */
  uint64_t concurrent_regions; /**< regions that ran in a lane beside the lane-0 region of another caller */
  uint64_t participants_run;   /**< participants that ran in dispatched regions (the caller and the workers that
                                    checked in), summed over regions; dispatches x admitted is the most it can be */
  uint64_t caller_wait_ns;     /**< time callers waited, after their share, for workers to finish */
  uint64_t bound_inline;       /**< calls run inline on the caller because the executor ran its most regions already */
  uint64_t occupied_inline;    /**< calls run on the caller alone because the callers running regions on the executor
                                    already occupied every one of its threads (cpuexec/executor.h), or the node's
                                    budget had no slot for a worker (cpuexec/node.h) */
  uint64_t stood_aside;        /**< times a worker left a region to its caller for the same reason */
  /** What waiting threads did beyond the policy's spin (doc/spinning.md): */
  uint64_t step_offs;          /**< times a thread moved off its processor so that another participant of its region
                                    could run there: a free caller found on a pinned worker's processor (ADAPTIVE), a
                                    caller whose woken worker kept missing regions, or a floating worker woken onto
                                    its caller's processor; counted as the move is made, also where the CPU set
                                    leaves nowhere else to go */
  uint64_t long_spins;         /**< waits that spun on past the policy's spin (ADAPTIVE only, skipped by a thread
                                    preempted lately): up to 1 ms more because the thread waited for was running,
                                    or a worker's spin through the short gaps between regions it keeps seeing */
  /** "Did this go parallel?" (see below): */
  uint64_t parallel_regions;   /**< regions in which more than one participant ran a part of the work */
  /** The node's budget (cpuexec/node.h), 0 while it does not limit the process: */
  uint64_t node_slots_taken;   /**< slots (and make's jobserver tokens) a worker took to run or spin; each goes
                                    back before the worker parks */
  uint64_t node_slot_waits;    /**< times the budget was full: a region it cut to fewer participants (to its
                                    caller alone: also in occupied_inline), or a worker that found no slot to join
                                    or spin with and left its share to the caller or parked */
  uint64_t reserved_more_[1];  /**< zeroed: room for a field of a later version */
} cpuexec_counters;
/* On an executor of our pool, every call with total > 0 counts once in one
 * of dispatches, nested_inline, limited_inline, bound_inline and
 * occupied_inline. A foreign executor (<cpuexec/foreign.h>) counts
 * dispatches (calls handed to its pool), nested_inline and limited_inline;
 * its pool does the waiting, so the others stay 0.
 *
 * Did this go parallel? parallel_regions answers it: the regions in which
 * more than one participant (the caller and the workers that checked in)
 * ran a part of the work. dispatches does not: it counts the regions
 * opened to workers, also those whose caller ran every chunk before any
 * worker checked in (its workers' chunks counted in takeovers). Of the
 * dispatches, dispatches - parallel_regions ran on their caller alone;
 * participants_run / parallel_regions is not the width of a parallel
 * region (one-participant regions are in the sum). A foreign executor's
 * pool runs the ranges where libcpuexec cannot see it: its
 * parallel_regions stays 0. */

/** What an executor's waiting threads do now (cpuexec_executor_spin_state_get).
 * The adaptive policy follows the cadence of calls: once the time between
 * region starts has been steady for a few regions, each worker sleeps until
 * shortly before the next region is expected and spins across a window
 * around it, as long as that window costs at most burn_permille of the
 * period (doc/spinning.md). */
typedef struct cpuexec_spin_state {
  uint64_t spin_ns;          /**< spin after every wait before parking (duration policies) */
  uint64_t spin_iterations;  /**< FIXED_ITERATIONS: pause iterations before parking */
  bool follows_cadence;      /**< the policy learns the cadence (ADAPTIVE, not oversubscribed) */
  uint32_t burn_permille;    /**< the most of a worker's time a followed cadence may spin */
  uint64_t cadence_ns;       /**< learnt time between region starts (0: none yet) */
  uint64_t jitter_ns;        /**< learnt mean deviation from it */
  uint32_t steady_regions;   /**< regions in a row that kept the cadence */
  bool following;            /**< after the latest region, workers wait for the next one in a window */
  uint64_t window_ns;        /**< that window's half-width */
  uint64_t reserved_[4];     /**< zeroed: room for fields of later versions */
} cpuexec_spin_state;

/** Passed by the library to the observer, valid during the call only. */
typedef struct cpuexec_dispatch_event {
  uint64_t executor_id;           /**< cpuexec_executor_id() of the executor */
  int32_t effective_threads;      /**< its effective threads */
  int32_t requested_participants; /**< max_participants as passed (0: the executor's limit) */
  /** Participants the call admits by the executor's threads,
   * max_participants and the work (one per grain), as announced. While
   * other callers run regions on the executor, the occupancy rule
   * (cpuexec/executor.h) can run it with fewer, down to its caller alone;
   * executed_participants says what ran. */
  int32_t admitted_participants;
  int64_t total;                  /**< total as passed */
  int64_t grain;                  /**< grain as passed (or planned) */
  bool ran_inline;                /**< nested or limited (nested_inline, limited_inline): ran on the caller only */
  /** false: the call is announced, before its region runs (every observer
   * gets this). true: the region returned, and executed_participants is
   * known (only observers added with CPUEXEC_OBSERVE_COMPLETION). */
  bool completed;
  /** With completed: the participants that ran a part of the region, the
   * caller included (1 inline). Under the take-over rule it can be below
   * admitted_participants (workers that had not checked in when the others
   * ran out of work); with participation=every_participant it equals it.
   * A foreign executor reports admitted_participants (its pool runs the
   * ranges). 0 in the announcement. */
  int32_t executed_participants;
  uint64_t reserved_[4];
} cpuexec_dispatch_event;

/** Called on the dispatching thread; it must return quickly and must not let
 * a C++ exception escape. Adding, removing or setting observers from inside
 * one is refused (CPUEXEC_EBUSY; cpuexec_dispatch_observer_set() ignores
 * it): a removal waits for calls in flight, which would wait for itself. */
typedef void (*cpuexec_dispatch_observer)(void *ctx, const cpuexec_dispatch_event *event);

/** Stable properties a tuning profile depends on (its cache identity).
 * Every field describes what the executor does, never how its
 * policy was spelt, so executors that share a pool describe it alike:
 * affinity_class is NONE when nothing is pinned (affinity none, and every
 * serial policy but explicit), EXPLICIT when the caller is pinned,
 * PHYSICAL_THEN_SMT when pinned participants share a core,
 * PERFORMANCE_CORES when pinned one per core on a hybrid machine without
 * touching an efficiency core, and PHYSICAL_CORES for any other pinned
 * placement (performance_cores on a machine without CPU kinds included).
 * {0} is no executor's descriptor; fill one with cpuexec_executor_descriptor_get(). */
typedef struct cpuexec_descriptor {
  int32_t effective_threads;              /**< participants of a region */
  cpuexec_affinity_policy affinity_class; /**< what was placed (see above), not the request */
  bool uses_smt;                          /**< two participants share a physical core */
  cpuexec_spin_policy spin_class;         /**< the resolved spin policy */
  cpuexec_participation participation;    /**< the participation rule of every region (cpuexec/policy.h) */
  uint32_t reserved_pad_;                 /**< ignored by cpuexec_executor_descriptor_check() */
  uint64_t reserved_[3];                  /**< ignored by cpuexec_executor_descriptor_check() */
} cpuexec_descriptor;

CPUEXEC_BEGIN_DECLS

/** Turns counting on for every lease of exec, until it is stopped. exec
 * NULL is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_executor_counters_enable(cpuexec_executor *exec);
/** Writes a snapshot of exec's counters to *out; all zero while counters
 * are off. CPUEXEC_EINVAL naming exec or out when either is NULL (as for
 * the descriptor calls below). Counts made concurrently may or may not be
 * in the snapshot. */
CPUEXEC_EXPORT int cpuexec_executor_counters_get(const cpuexec_executor *exec, cpuexec_counters *out);

/** The spin decision of exec as of its latest region; waits for a running
 * region to end. CPUEXEC_EINVAL naming exec or out when either is NULL. */
CPUEXEC_EXPORT int cpuexec_executor_spin_state_get(const cpuexec_executor *exec, cpuexec_spin_state *out);

/** The most observers cpuexec_dispatch_observer_add() holds at once. */
#define CPUEXEC_DISPATCH_OBSERVERS_MAX 8
/** Flag of cpuexec_dispatch_observer_add(): call the observer a second
 * time per region, after it ran (event->completed, executed_participants). */
#define CPUEXEC_OBSERVE_COMPLETION 0x1u

/** Adds an observer, process-wide: called on the dispatching thread for
 * every parallel call on any executor, with ctx, once when the call is
 * announced and, with CPUEXEC_OBSERVE_COMPLETION in flags, once more when
 * its region returned. Up to CPUEXEC_DISPATCH_OBSERVERS_MAX at once, each
 * with its own ctx: one more is CPUEXEC_ECAPACITY; the same (observer, ctx)
 * twice, observer NULL or an unknown flag is CPUEXEC_EINVAL. Safe from any
 * thread while regions run: a call that starts after add returns sees it. */
CPUEXEC_EXPORT int cpuexec_dispatch_observer_add(void *ctx, cpuexec_dispatch_observer observer, uint32_t flags);

/** Removes the observer added with this (observer, ctx); CPUEXEC_EINVAL
 * when there is none. Safe from any thread while regions run. The grace
 * rule: when it returns, every call of that observer has returned and none
 * starts again (it waits for calls in flight on other threads), so ctx may
 * be freed at once. */
CPUEXEC_EXPORT int cpuexec_dispatch_observer_remove(void *ctx, cpuexec_dispatch_observer observer);

/** The single-observer form of earlier versions, kept as a wrapper: one
 * observer of its own, beside the list above (it never takes a place of
 * it), announcements only; each call replaces the one it set before, and
 * observer NULL removes it, with the grace rule of
 * cpuexec_dispatch_observer_remove(). Ignored from inside an observer. */
CPUEXEC_EXPORT void cpuexec_dispatch_observer_set(void *ctx, cpuexec_dispatch_observer observer);

/** Writes exec's stable properties to *out, for keying a tuning cache. A
 * foreign executor (<cpuexec/foreign.h>) describes itself as its
 * effective threads, CPUEXEC_AFFINITY_NONE, no SMT, CPUEXEC_SPIN_PARK_IMMEDIATELY:
 * libcpuexec neither places nor spins its threads. exec or out NULL is
 * CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_executor_descriptor_get(const cpuexec_executor *exec, cpuexec_descriptor *out);
/** 0 when expected matches exec; CPUEXEC_EMISMATCH naming the first field that differs. */
CPUEXEC_EXPORT int cpuexec_executor_descriptor_check(const cpuexec_executor *exec,
                                                     const cpuexec_descriptor *expected);

/** Calibration: leases a compatible executor and refuses a profile whose
 * descriptor differs from it before invoking any callback; then runs fn(user, exec) on the executor calibration must measure, after
 * checking that it matches the profile's descriptor `expected`.
 *   exec given        that executor;
 *   exec NULL         the executor installed on this thread (cpuexec_executor_current()),
 *                     else the process default pool (cpuexec_policy_resolve_default()
 *                     leased from cpuexec_registry_default()).
 * The check comes first: on a mismatch the call returns CPUEXEC_EMISMATCH
 * naming the field (as cpuexec_executor_descriptor_check()) before fn runs
 * and before anything is allocated; for the default pool the descriptor of
 * the default resolution is checked before the pool is leased. On a match
 * the executor is leased for the call (when a registry shares it) and
 * installed on the calling thread, so kernels fn runs dispatch on it. fn
 * returning non-zero makes the call return CPUEXEC_ECALLBACK, its value in
 * cpuexec_error_callback_value() (the callback rule of cpuexec/errors.h).
 * CPUEXEC_EINVAL for expected or fn NULL. */
CPUEXEC_EXPORT int cpuexec_calibration_run(cpuexec_executor *exec, const cpuexec_descriptor *expected,
                                           int (*fn)(void *user, cpuexec_executor *exec), void *user);

CPUEXEC_END_DECLS

#endif
