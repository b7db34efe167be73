/* Internal: the layout of an executor, shared by executor.c (threads and
 * lifetime), region.c (dispatching a parallel region), region_protocol.c
 * (lane 0's region, the caller's and the worker's halves), region_lanes.c,
 * region_share.c (a participant's share in any lane), cadence.c, counters.c
 * and plan.c.
 *
 * The cost of a small region is the number of cache lines that travel
 * between the caller and the workers, so the layout is built around them:
 * admitting worker k writes one line (slots[k]: the region as k needs it
 * and k's share), k reads it once, and k's finishing step is one atomic
 * add on its group's `finished` (finish_count.h). The caller writes nothing
 * else shared per region.
 *
 * Check-in: slots[k].epoch is worker k's futex word, moved by the epoch
 * protocol of epoch.h.
 *
 * Lanes (region_lanes.h): exec->lanes[0] is lane 0, the region of the
 * caller holding dispatch_lock, and the slots and epochs here are its
 * workers'; callers that find the lock held run their regions in
 * exec->lanes[1 ..] beside it.
 *
 * Concurrency, field by field:
 *   - identity fields (resolved .. spin) are written by
 *     cpuexec_executor_create() before the executor is handed out and never
 *     change;
 *   - slots[*] (all but epoch/parked/next/cpu) are written by the one
 *     dispatching thread, holding dispatch_lock, for every participant
 *     before it opens any worker's epoch (seq_cst store, which releases
 *     them); a worker reads its slot only after its acquire compare-exchange
 *     joined it, reads another slot only to claim from its cursor, and the
 *     caller waits for every joined worker to finish before it writes the
 *     slots again; a worker that did not join reads no slot field;
 *   - slots[p].next is claimed by every participant with relaxed fetch_add:
 *     claims are disjoint by construction;
 *   - in regions of wake_tree_min participants or more, worker k's parent
 *     in the wake tree reads slots[k].parked and makes k's wake call
 *     (wake_tree.h); the epochs still move as above;
 *   - slots[k].parked is written by worker k only (see wait.h); slots[k].cpu
 *     by worker k when it joins (read by a caller waiting for it);
 *   - lanes[0].error is the first non-zero callback result
 *     (compare-exchange); the caller resets it, under the lock, only after
 *     a failed region, so in the common case the line is never written and
 *     stays shared;
 *   - lanes[0].finish[g].finished counts worker regions completed by group
 *     g's joined workers; the worker whose add reaches the group's goal
 *     wakes the caller only if it parked on that group (finish_count.h).
 *     lanes[0].tally is the caller's, under the lock;
 *   - workers[k-1].cadence is worker k's (cadence.h);
 *   - `counters` is NULL until counting is turned on, then a block that lives
 *     as long as the executor (release store / acquire load). */
#ifndef CPUEXEC_SRC_EXECUTOR_INTERNAL_H
#define CPUEXEC_SRC_EXECUTOR_INTERNAL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>

#include <cpuexec/counters.h>
#include <cpuexec/executor.h>

#include "core/test_hooks.h"
#include "counters_internal.h"
#include "core/cache_line.h"
#include "executor_lease.h"
#include "finish_count.h"
#include "os/fork.h"
#include "fpenv.h"
#include "permit.h"
#include "region.h"
#include "resolve/resolved.h"
#include "cadence.h"
#include "epoch.h"
#include "wait.h"

/* Participant p's view of lane 0's region, one cache line: the region's
 * descriptor (a copy of lanes[0].region) and p's block of it (region.h).
 * The block's first chunk is reserved for p: p runs it once it checks in,
 * or, when take-overs are allowed (not region.strict), whoever finds p not
 * checked in runs it; chunks [next, end) are open to p first, then to
 * thieves (region_share.h). */
typedef struct cpuexec__slot {
  alignas(CPUEXEC__LINE) _Atomic uint32_t epoch; /* worker k's futex word, see the top */
  _Atomic uint32_t parked;                        /* set by worker k while it sleeps */
  /* participants 0: the executor is being destroyed, leave; its env points
   * into the caller's frame, which outlives every worker that joined. */
  cpuexec__region region;
  _Atomic int64_t next;
  int64_t end;
  cpuexec__partition part;
  _Atomic int32_t cpu;   /* worker k's processor when it last joined (-1: unknown) */
  /* The caller's: what the stuck-worker rule (permit.h) counts of k. */
  cpuexec__permit_misses misses;
} cpuexec__slot;

_Static_assert(sizeof(cpuexec__slot) == CPUEXEC__LINE, "a slot is one line pair");

/* What a worker thread needs to start, and its cadence model: one line
 * each, since every worker writes its model after every region. */
typedef struct cpuexec__worker {
  alignas(CPUEXEC__LINE) struct cpuexec_executor *exec;
  uint32_t index; /* participant index, 1-based */
  uint32_t lane_next; /* the lane this worker looks at first next time (region_lanes.c) */
  cpuexec__permit_worker permit; /* what the permit model remembers for it */
  bool missed; /* the latest region it saw ran without it (region_protocol.c) */
  /* Epoch changes this worker has seen (wrapping), read by the caller when
   * it wakes the worker and when the worker missed a region (the
   * stuck-worker rule, permit.h). */
  _Atomic uint32_t regions_seen;
  pthread_t thread;
  cpuexec__cadence cadence;
} cpuexec__worker;

struct cpuexec_executor {
  const cpuexec_resolved *resolved;
  uint64_t id;
  uint32_t threads;         /* effective threads: the caller + worker_count */
  uint32_t worker_count;
  uint64_t fork_generation; /* cpuexec__fork_generation at creation */
  cpuexec__spin_plan spin;
  bool pin_caller;
  int32_t caller_processor;
  cpuexec__lease_slot lease; /* the registry's, under its lock */
  /* References on an unshared executor (lease.registry NULL; foreign ones
   * included): creator 1, plus each retain (sessions, scopes); the last
   * release stops it. A shared executor counts its references as its
   * registry entry's leases, under the registry lock, and leaves this at 0. */
  _Atomic uint32_t refs;
  /* NULL for the built-in pool; an application's pool otherwise (no
   * workers, slots or resolved policy: src/executor/foreign.c runs its regions). */
  struct cpuexec__foreign *foreign;
  cpuexec__worker *workers;  /* worker_count entries */
  cpuexec__slot *slots;      /* threads entries; slots[0] is the caller's */
  /* Regions of at least wake_tree_min participants share out their wake
   * calls as a tree (wake_tree.h); UINT32_MAX below the threshold. */
  uint32_t wake_tree_min;
  /* The lanes, lane 0 included (region_lanes.h): CPUEXEC__LANES entries,
   * NULL for executors without workers. */
  struct cpuexec__lane *lanes;
  _Atomic(cpuexec__counters_block *) counters;

  /* What the dispatcher writes on every region lives apart from what
   * workers read, or each region would move one more line to each worker. */
  alignas(CPUEXEC__LINE) pthread_mutex_t dispatch_lock; /* held by the caller of lane 0's region (trylock) */
  /* 1 while lane 0's caller runs a region, on the line its lock already
   * dirties; read only by a worker that missed a region (region_protocol.c). */
  _Atomic uint32_t lane0_running;
  pthread_mutex_t strict_lock; /* one CPUEXEC_FOR_EVERY_PARTICIPANT region at a time (region_lanes.h) */

  /* `lanes_busy` has bit l set while a caller owns lane l (l >= 1; lane 0
   * is dispatch_lock's); workers read it after every region, and it is
   * written only when a second caller comes, so on the one-caller path the
   * line stays shared. */
  alignas(CPUEXEC__LINE) _Atomic uint32_t lanes_busy;

  /* Who may run: the permit model's facts (permit.h). */
  cpuexec__permit permit;

  /* Adaptive policy (see cpuexec__spin): the processor the last dispatch
   * ran on, written by the dispatcher only when it changes so the line
   * stays shared; and worker 1's pinned processor (-1: not pinned). */
  alignas(CPUEXEC__LINE) _Atomic int32_t caller_cpu;
  _Atomic int32_t first_worker_cpu;
};

/* True in a process other than the one that created exec (after fork):
 * its threads do not exist here (fork.h's generation). */
bool cpuexec__executor_inherited(const cpuexec_executor *exec);

/* Test hook: when k > 0, creating worker k (1-based) fails as if
 * pthread_create had returned EAGAIN. */
#if CPUEXEC_TEST_HOOKS
extern _Atomic int cpuexec__test_fail_thread_create_at;
#endif

/* Test hook: when set, worker k calls it each time it sees an open region,
 * before it checks in (a test holds a worker there to play a late one). */
typedef void (*cpuexec__worker_gate_fn)(struct cpuexec_executor *exec, uint32_t index);
#if CPUEXEC_TEST_HOOKS
extern _Atomic(cpuexec__worker_gate_fn) cpuexec__test_worker_gate;
#endif

/* Test build only: the calling thread as one participant of exec running
 * `callbacks` callbacks fn(ctx, k, k + 1), its share entered as a region's
 * participant enters it (cpuexec__participant_share); the first failing
 * callback's value, or 0 (bench/questions/guards: the guards' cost per
 * callback inside a participant). */
#if CPUEXEC_TEST_HOOKS
int cpuexec__test_participant_share(struct cpuexec_executor *exec, int64_t callbacks, cpuexec_range_fn fn,
                                    void *ctx);
#endif

/* Placement (executor_placement.c). Pins workers 1 .. threads - 1 to their
 * resolved processors: 0, CPUEXEC_ENOTSUP, or CPUEXEC_EAFFINITY naming
 * every processor that could not be applied. */
int cpuexec__executor_pin_workers(cpuexec_executor *exec, uint32_t threads);
/* Pins the calling thread to cpu. With recheck (this thread was pinned
 * there before and something may have moved it): CPUEXEC_EAFFINITY naming
 * cpu when it is no longer in the thread's CPU set, nothing when the
 * thread is still pinned there alone, a new pin when its set is wider. */
int cpuexec__executor_pin_caller(int32_t cpu, bool recheck);
/* Test hook: bit k set, pinning any thread to processor k fails with
 * EINVAL (k < 64), as when k left the process CPU set. */
#if CPUEXEC_TEST_HOOKS
extern _Atomic uint64_t cpuexec__test_pin_refused;
#endif

/* How waiting threads of an executor of `threads` participants spin for
 * resolved (executor.c). */
cpuexec__spin_plan cpuexec__spin_plan_of(const cpuexec_resolved *resolved, uint32_t threads);

/* Foreign executors (foreign.c). An executor shell: zeroed, with its id,
 * fork generation and `threads` set; no workers. NULL when out of memory. */
struct cpuexec_executor *cpuexec__executor_shell(uint32_t threads);
/* Runs a region of `participants` (>= 2) on exec->foreign: the tail of
 * cpuexec_parallel_for once arguments, nesting, counters and the observer
 * are done. */
int cpuexec__foreign_run(struct cpuexec_executor *exec, int64_t total, int64_t grain, void *ctx,
                         cpuexec_range_fn fn, uint32_t participants);
/* Test hook: when set, called on the caller's thread when a foreign pool's
 * run_ranges has returned while calls it started were still running,
 * before the caller waits for them (a test's held callback is released
 * there, so the early return is seen for certain). */
typedef void (*cpuexec__foreign_early_fn)(struct cpuexec_executor *exec);
#if CPUEXEC_TEST_HOOKS
extern _Atomic(cpuexec__foreign_early_fn) cpuexec__test_foreign_returned_early;
#endif
/* The foreign pool's planner, or false when it has none (plan.c then plans
 * with the built-in model); *rc is the planning result. */
bool cpuexec__foreign_plan(const struct cpuexec_executor *exec, int64_t total, const cpuexec_cost *cost,
                           const cpuexec_plan_constraints *constraints, cpuexec_plan *plan, int *rc);

/* Lane 0's protocol (region_protocol.c). The caller's half: publishes the
 * region, admits workers 1 .. participants - 1, runs participant 0's share,
 * settles and waits; the caller holds dispatch_lock, released here. Returns
 * the region's first non-zero callback result, and in *ran the participants
 * that ran (the caller and the workers that checked in). The worker's half: the loop
 * of worker thread `arg` (a cpuexec__worker). */
int cpuexec__lane0_run(struct cpuexec_executor *exec, const cpuexec__region *r, uint32_t *ran);
void *cpuexec__worker_main(void *arg);
/* The beside-caller rule (permit.h), asked by worker w near a thread that
 * runs on `beside_cpu`: when the rule says so, w moves off its processor
 * the way a caller steps off (region.c), counted in step_offs. Returns
 * where w runs now (-1: not known). */
int32_t cpuexec__worker_beside(struct cpuexec_executor *exec, cpuexec__worker *w, int32_t beside_cpu);

#ifdef CPUEXEC__COUNTERS_COMPILED_OUT
/* The baseline of bench/questions/counters.c only (mk/bench.am): a library
 * in which no counting code is left, to hold counters that are off against. */
static inline cpuexec__counters_block *cpuexec__counters_of(const struct cpuexec_executor *exec) {
  (void)exec;
  return NULL;
}
#else
static inline cpuexec__counters_block *cpuexec__counters_of(const struct cpuexec_executor *exec) {
  /* acquire: the block's zeroed fields are visible before we add to them.
   * On x86 and arm64 this is the same instruction as a relaxed load. */
  return atomic_load_explicit(&((struct cpuexec_executor *)exec)->counters, memory_order_acquire);
}
#endif


#endif
