/* Internal: many regions on one pool, bounded (issue 18).
 *
 * An executor runs up to CPUEXEC__LANES regions at once, one per lane,
 * exec->lanes[0 .. CPUEXEC__LANES - 1]; each lane holds its region's
 * descriptor (region.h), its error word and its finish counts, and every
 * participant of any lane runs its share through one routine
 * (region_share.h):
 *   - lane 0 is the region of the caller that holds dispatch_lock
 *     (region.c): it admits workers by their slots, with the check-in
 *     protocol of epoch.h (region_protocol.c). With one caller at a time
 *     this is the only lane ever used, and the path is the one it always
 *     was; its `admit`, `next` and `chunks` are unused;
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
 *     occupancy rule (below) a region opened beside other callers admits
 *     no more participants than the threads they leave. That bounds each
 *     region as it opens, not every moment: a region opened earlier keeps
 *     the participants it admitted, and a free worker serves a task lane
 *     whoever runs, so callers arriving meanwhile and those workers can
 *     outnumber the threads for a while (tests/whitebox/
 *     test_permit_runnable.c prints how many ran at once).
 *
 * A lane's region. participants = min(max_participants, effective threads,
 * chunks), as in lane 0. Chunk p (p < participants) is reserved for
 * participant p; chunks [participants, chunks) are claimed from one cursor,
 * a share of what remains at a time (guided: remaining / (2 participants),
 * rounded up). The caller runs chunk 0, claims until the cursor is
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
 * 0 (epoch not open; epoch.h): a compare-exchange setting bit
 * 31 of their epoch, and a wake call for those parked, at most as many as
 * the region has helpers to take. A worker clears the nudge and then looks
 * at the lanes, so a lane opened after its look nudges it again: no wake is
 * lost (the Dekker pair of wait.h on the epoch and `parked`).
 *
 * Occupancy. Every caller running a region is one of the executor's
 * threads, so who joins whom while callers meet is the permit model's
 * (permit.h): the occupancy cap bounds what a caller beside another admits
 * (1: it runs alone, counted in `occupied_inline`), a worker stands aside
 * from take-over regions, and skips the lanes, while the callers occupy
 * its thread, and a worker that saw callers meet parks at once for a while
 * (the settle); serving a task group's queue settles it. Strict regions
 * (below) keep their full team. On the one-caller path the permit's `side`
 * is 0.
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
 * Task groups (include/cpuexec/tasks.h, src/executor/tasks.c) use the same lanes:
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
#include "region.h"

/* R, the regions at once per executor, lane 0 included, is
 * CPUEXEC__LANES (core/tunables.h). */
#define CPUEXEC__LANE_MAX_PARTICIPANTS 0xffffu

typedef struct cpuexec__lane {
  alignas(CPUEXEC__LINE) _Atomic uint64_t admit; /* see the top */
  /* The region, written by the owner before it opens the lane (its env
   * points into the owner's frame, which outlives every joiner). */
  cpuexec__region region;
  int64_t chunks;
  /* Claimed by every participant; `error` is the region's first non-zero
   * callback result (compare-exchange), reset by the owner after a failed
   * region. In lane 0 `next` is unused: the line is read, not written. */
  alignas(CPUEXEC__LINE) _Atomic int64_t next;
  _Atomic int error;
  /* The lane's finish counts (finish_count.h) and the owner's tallies of
   * them, fixed at creation: lane 0's one group per CPUEXEC__FINISH_GROUP
   * workers; another lane's `done` and `done_tally`, one group, whoever
   * joins. */
  cpuexec__finish_group *finish;
  cpuexec__finish_tally *tally;
  /* Helpers that left (finish_count.h), and the owner's running target. */
  cpuexec__finish_group done;
  alignas(CPUEXEC__LINE) cpuexec__finish_tally done_tally;
  uint32_t generation;
  struct cpuexec_task_group *group; /* a task lane's group, written before its open */
} cpuexec__lane;

struct cpuexec_executor;

/* The lanes of an executor of `threads` (>= 2) participants, lane 0
 * included, zeroed but for their finish counts; NULL when out of memory.
 * destroy frees them (NULL: nothing). */
cpuexec__lane *cpuexec__lanes_create(uint32_t threads);
void cpuexec__lanes_destroy(cpuexec__lane *lanes);

/* A lane's owner closes its take-over region to joiners after its own
 * claims and returns the participants that joined, itself included (the
 * share routine, region_share.h). */
uint32_t cpuexec__lane_close(cpuexec__lane *l);

/* The caller's half: runs a region of `participants` (>= 2) in a free lane
 * and returns true with the region's callback result in *rc and the
 * participants that ran in *ran; false when every lane is taken (nothing
 * ran). */
bool cpuexec__lane_run(struct cpuexec_executor *exec, const cpuexec__region *r, int *rc, uint32_t *ran);

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
 * its share there; false when there was none. `regions`: whether the
 * worker may join a region's lane (the permit model's node level lets it,
 * permit.h); a task group's lane it serves regardless, since its queued
 * tasks may have no other thread to run them (a caller blocked outside
 * cpuexec_task_group_wait: Eigen's Barrier, pthreadpool's executor). */
bool cpuexec__lanes_serve(struct cpuexec_executor *exec, uint32_t worker_index, bool regions);

#endif
