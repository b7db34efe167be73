/* Internal: many regions on one pool, bounded (issue 18).
 *
 * An executor runs up to CPUEXEC__LANES regions at once, one per lane:
 *   - lane 0 is the region of the caller that holds dispatch_lock
 *     (region.c): it admits workers by their slots, with the check-in
 *     protocol of executor_internal.h. With one caller at a time this is
 *     the only lane ever used, and the path is the one it always was;
 *   - a caller that finds lane 0 taken (trylock fails) does not wait: it
 *     takes a free lane 1 .. CPUEXEC__LANES - 1, publishes its region there
 *     and starts its share at once, as participant 0. Workers join a lane
 *     by themselves, one compare-exchange on its `admit` word each, when
 *     they are free: after every share they run (in lane 0 or a lane), and
 *     when a lane's opener nudges them (below);
 *   - a caller that finds every lane taken (CPUEXEC__LANES callers in the
 *     executor already) runs its region inline on its own thread, as
 *     participant 0 of 1, the serial loop (counted in `bound_inline`). So
 *     no caller ever waits for another caller's region; and by the
 *     occupancy rule (below) the callers and the workers running callbacks
 *     never outnumber the executor's threads.
 *
 * A lane's region. participants = min(max_participants, effective threads,
 * chunks), as in lane 0. Chunk p (p < participants) is reserved for
 * participant p; chunks [participants, chunks) are claimed from one cursor,
 * a share of what remains at a time (guided: remaining / (2 participants),
 * at least one). The caller runs chunk 0, claims until the cursor is
 * exhausted, then closes the lane to joiners and runs the reserved chunks
 * of the indices nobody joined as (take-over, as in lane 0: nobody waits
 * for a worker that has not started), and waits only for the helpers that
 * joined, on the lane's finish group (finish_count.h's protocol).
 *
 * Joining. `admit` is generation (bits 32-61) | tasks (bit 62: a task
 * group's lane, below) | closed (bit 63) | limit
 * (bits 16-31: the region's participants) | joined (bits 0-15: indices
 * handed out, the caller's 0 included). A worker joins with one
 * compare-exchange joined -> joined + 1 while open and joined < limit, and
 * is participant `joined` of `limit`: indices are unique by construction,
 * and a compare-exchange that read an older generation fails. The opener
 * writes the region (fn, ctx, partition, flags) before its release store
 * of `admit`; a joiner reads it only after its acquire compare-exchange
 * succeeded, and the owner rewrites it only after every joiner left.
 *
 * Nudging. Opening a lane nudges the workers that are not admitted to lane
 * 0 (epoch not open; executor_internal.h): a compare-exchange setting bit
 * 31 of their epoch, and a wake call for those parked, at most as many as
 * the region has helpers to take. A worker clears the nudge and then looks
 * at the lanes, so a lane opened after its look nudges it again: no wake is
 * lost (the Dekker pair of wait.h on the epoch and `parked`).
 *
 * Occupancy. The threads of an executor are the processors it may use;
 * every caller running a region is one of them. So a region a caller
 * opens while `side` others run beside lane 0's admits at most threads -
 * side participants, itself included (cpuexec__occupancy_cap; 1: it runs
 * alone, counted in `occupied_inline`), and worker k takes part in
 * take-over regions only while k + 1 + side <= threads
 * (cpuexec__occupancy_stand_aside): otherwise it leaves lane 0's share to
 * its caller, skips the lanes and parks at once instead of spinning. The
 * callers and the workers running together then never outnumber the
 * threads: with as many callers as threads each runs its region alone, and
 * no thread waits in the kernel's queue for a tick while another spins
 * (issue 18's tail). A caller's work between its regions is invisible to
 * the pool, so a worker that saw a caller beside another within its last
 * CPUEXEC__UNSETTLED_REGIONS regions does not spin between regions
 * either: it parks at once, and a region that admits it wakes it (the
 * caller takes its share over meanwhile); serving a task group's queue
 * settles it (the group's waiter helps, it does not compete). Strict regions (below) keep
 * their full team: no worker stands aside while one runs. On the
 * one-caller path `side` is 0, read on the line of lanes_busy.
 *
 * Fairness. Workers choose among the open lanes the one with the most
 * indices left to hand out, starting after the lane they served last; after
 * a lane's share a worker looks at its own epoch first, so a worker serving
 * both alternates between lane 0 and the others. Callers are never queued:
 * each runs its own region on its own thread from the start, so none is
 * locked out while another re-enters.
 *
 * The strict rule (CPUEXEC_FOR_EVERY_PARTICIPANT) holds in every lane: the
 * caller closes nothing and waits until every index joined and finished.
 * Two strict regions must not split the workers between them (each could
 * wait for a worker the other holds), so strict callers take strict_lock
 * first: at most one strict region runs at a time; its team is whatever
 * workers free up, and a strict caller past the bound waits for lane 0.
 *
 * Task groups (include/cpuexec/tasks.h, src/tasks.c) use the same lanes:
 * a group with queued tasks holds a lane from its first submit to the end
 * of its wait, its `admit` marked tasks, limit = the group's cap on
 * workers, joined = the workers inside now (they leave again when the
 * queue is empty: a task lane's joined goes down, a region's never does).
 * Workers choose between regions and groups by the same rule, skipping a
 * group whose queue is empty (`next` counts its queued tasks). */
#ifndef CPUEXEC_SRC_REGION_LANES_H
#define CPUEXEC_SRC_REGION_LANES_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cpuexec/executor.h>

#include "core/cache_line.h"
#include "executor_internal.h"
#include "finish_count.h"
#include "fpenv.h"
#include "node/node_budget.h"

/* The participants a take-over region opened now may admit, of the
 * `participants` it asks for: the occupancy rule (above). */
#define CPUEXEC__SIDE_CALLERS 0xffffu
#define CPUEXEC__SIDE_ARRIVAL (1u << 16)
#define CPUEXEC__UNSETTLED_REGIONS 64u

static inline uint32_t cpuexec__occupancy_cap(struct cpuexec_executor *exec, uint32_t participants) {
  uint32_t side = atomic_load_explicit(&exec->side, memory_order_relaxed) & CPUEXEC__SIDE_CALLERS;
  if (side == 0) return participants;
  uint32_t room = side < exec->threads ? exec->threads - side : 1;
  return participants < room ? participants : room;
}

/* Whether worker `worker` (1-based) leaves take-over regions to their
 * callers now: the occupancy rule (above). Read after an acquire of the
 * region's epoch or admit word, so a strict region's mark is seen. */
static inline bool cpuexec__occupancy_stand_aside(struct cpuexec_executor *exec, uint32_t worker) {
  uint32_t side = atomic_load_explicit(&exec->side, memory_order_relaxed) & CPUEXEC__SIDE_CALLERS;
  return side != 0 && worker + 1 + side > exec->threads && !exec->resolved->every_participant &&
         atomic_load_explicit(&exec->strict_running, memory_order_relaxed) == 0;
}

/* The node level of the permit model (node/node_budget.h): a worker joins
 * a region only with a permit, which it keeps while it spins and gives back
 * before it parks (wait.c); without one it leaves its share to the caller
 * as a worker standing aside does. A strict region waits for its whole
 * team, so its workers join regardless (over the budget, as callers run). */
static inline bool cpuexec__node_lets_join(struct cpuexec_executor *exec) {
  return cpuexec__node_permit_run() || exec->resolved->every_participant ||
         atomic_load_explicit(&exec->strict_running, memory_order_relaxed) != 0;
}

/* Whether worker w spins while it waits for a region: not while standing
 * aside, nor within CPUEXEC__UNSETTLED_REGIONS regions of a caller beside
 * another (above). Called once per region the worker sees. */
static inline bool cpuexec__occupancy_lets_spin(struct cpuexec_executor *exec, cpuexec__worker *w, bool aside) {
  uint32_t arrivals = atomic_load_explicit(&exec->side, memory_order_relaxed) / CPUEXEC__SIDE_ARRIVAL;
  if (arrivals != w->side_arrivals_seen) {
    w->side_arrivals_seen = arrivals;
    w->unsettled_regions = CPUEXEC__UNSETTLED_REGIONS;
  } else if (w->unsettled_regions > 0) {
    w->unsettled_regions--;
  }
  return !aside && w->unsettled_regions == 0;
}

/* R: regions at once per executor, lane 0 included. */
#define CPUEXEC__LANES 8u
#define CPUEXEC__LANE_MAX_PARTICIPANTS 0xffffu

typedef struct cpuexec__lane {
  alignas(CPUEXEC__LINE) _Atomic uint64_t admit; /* see the top */
  /* The region, written by the owner before it opens the lane. */
  cpuexec_range_fn fn;
  void *ctx;
  int64_t total;
  int64_t grain;
  int64_t chunks;
  uint32_t participants;
  bool strict;
  bool fpenv;
  cpuexec__fpenv env;
  /* Claimed by every participant; `error` is the region's first non-zero
   * callback result (compare-exchange), reset by the owner. */
  alignas(CPUEXEC__LINE) _Atomic int64_t next;
  _Atomic int error;
  /* Helpers that left (finish_count.h), and the owner's running target. */
  cpuexec__finish_group done;
  alignas(CPUEXEC__LINE) uint32_t done_target;
  uint32_t generation;
  struct cpuexec_task_group *group; /* a task lane's group, written before its open */
} cpuexec__lane;

struct cpuexec_executor;

/* The lanes of an executor of `threads` (>= 2) participants, zeroed; NULL
 * when out of memory. */
cpuexec__lane *cpuexec__lanes_create(uint32_t threads);

/* The caller's half: runs a region of `participants` (>= 2) in a free lane
 * and returns true with the region's callback result in *rc and the
 * participants that ran in *ran; false when every lane is taken (nothing
 * ran). */
bool cpuexec__lane_run(struct cpuexec_executor *exec, int64_t total, int64_t grain, void *ctx, cpuexec_range_fn fn,
                       uint32_t participants, bool strict, const cpuexec__fpenv *env, int *rc, uint32_t *ran);

/* Task groups (src/tasks.c): post takes a free lane for group with a cap
 * of `cap` workers (0 when every lane is taken); set_queued publishes the
 * number of queued tasks; nudge wakes workers for up to `queued` of them
 * (returns the wake calls); drain closes the lane and waits until no worker
 * is inside; reopen opens a drained lane again; unpost gives it back. */
struct cpuexec_task_group;
uint32_t cpuexec__lane_post(struct cpuexec_executor *exec, struct cpuexec_task_group *group, uint32_t cap);
void cpuexec__lane_set_queued(struct cpuexec_executor *exec, uint32_t index, int64_t queued);
uint64_t cpuexec__lane_nudge(struct cpuexec_executor *exec, uint32_t index, uint32_t queued);
void cpuexec__lane_drain(struct cpuexec_executor *exec, uint32_t index);
void cpuexec__lane_reopen(struct cpuexec_executor *exec, uint32_t index);
void cpuexec__lane_unpost(struct cpuexec_executor *exec, uint32_t index);

/* The worker's half: joins one open lane that has an index left and runs
 * its share there; false when there was none. */
bool cpuexec__lanes_serve(struct cpuexec_executor *exec, uint32_t worker_index);

#endif
