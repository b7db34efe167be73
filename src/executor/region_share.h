/* Internal: one participant's share of a region, in any lane, and how the
 * lane's owner ends the region. The one share routine of lane 0
 * (region_protocol.c) and of the other lanes (region_lanes.c): entering the
 * region as participant i of n (participant.h), the caller's
 * floating-point state on a worker (fpenv.h), the guard's wrapper around the
 * whole share, running chunks and stopping at the region's first error,
 * taking over the reserved chunks of participants that did not come, the
 * worker's active time and finishing add, and the owner's wait and counts.
 *
 * The lanes differ only in how chunks are shared out, each chosen for its
 * case (doc/spinning.md):
 *   - lane 0, blocks: participant p owns a contiguous block of chunks (its
 *     static share, for locality), the block's first chunk reserved for it;
 *     it claims the rest of its block, then steals from the other blocks in
 *     ring order, taking over the reserved chunk of a worker that has not
 *     checked in (its epoch still open, epoch.h). Its cursors are in the
 *     workers' slots, one line each (executor_internal.h);
 *   - lanes 1 .., guided: chunk p is reserved for participant p, the rest
 *     claimed from one cursor (workers join by themselves, so nobody knows
 *     in advance who will have which block); the owner takes over the
 *     reserved chunks of the indices nobody joined as by closing the lane
 *     (region_lanes.h).
 * A claim takes 1 / `per` of what remains, rounded up: lane 0 per =
 * CPUEXEC__CLAIM_DIVISOR of a block, a lane per = CPUEXEC__GUIDED_DIVISOR x
 * participants of the region (core/tunables.h). */
#ifndef CPUEXEC_SRC_REGION_SHARE_H
#define CPUEXEC_SRC_REGION_SHARE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "executor_internal.h"
#include "region_lanes.h"

/* One participant's share of the region of `lane`, as the share routine
 * runs it. */
typedef struct cpuexec__share_of {
  struct cpuexec_executor *exec;
  cpuexec__lane *lane;           /* the region's lane (its error word; a lane's cursor) */
  const cpuexec__region *region; /* the descriptor as this participant reads it (lane 0: its slot's copy) */
  uint32_t index;                /* the participant */
  /* A lane's owner, out: the participants that joined before it closed the
   * lane (set it to region->participants before the share: a strict region
   * is not closed). */
  uint32_t joined;
  uint64_t taken; /* out: reserved chunks this participant took over */
} cpuexec__share_of;

/* The one share routine: runs participant s->index's share of the region
 * on the calling thread, as participant index of region->participants. */
void cpuexec__share_run(cpuexec__share_of *s);

/* A worker's share: the share routine, its time counted as the worker's
 * active time, then its finishing add on `finish`, the group of the lane
 * it counts in (finish_count.h): the last touch of the region. */
void cpuexec__share_work(cpuexec__share_of *s, cpuexec__finish_group *finish);

/* run(arg) on a worker, its time added to the workers' active time when
 * counters are on (a region's share, a task group's tasks). */
static inline void cpuexec__worker_active(struct cpuexec_executor *exec, void (*run)(void *arg), void *arg) {
  cpuexec__counters_block *counters = cpuexec__counters_of(exec);
  if (!counters) {
    run(arg);
    return;
  }
  uint64_t start = cpuexec__os_now_ns();
  run(arg);
  atomic_fetch_add_explicit(&counters->workers.worker_active_ns, cpuexec__os_now_ns() - start, memory_order_relaxed);
}

/* The owner, after its share (and lane 0's settle): waits for the joined
 * workers its tallies expect, in groups [0, groups) of the lane's finish
 * counts (share_cpu: where one of them runs, NULL: unknown; wait.h), and
 * counts the wait when there was one. */
void cpuexec__region_wait(struct cpuexec_executor *exec, cpuexec__lane *lane, uint32_t groups,
                          const _Atomic int32_t *share_cpu);

/* The owner ends the region once every joined worker left: counts it (the
 * participants that ran, the owner and the joined workers, from its
 * tallies; the `wakes` wake calls it made), moves the tallies on, and
 * returns the region's first non-zero callback result, resetting it for
 * the next region (written only after a failure: in the common case the
 * line stays shared). *ran: the participants that ran. */
int cpuexec__region_close(struct cpuexec_executor *exec, cpuexec__lane *lane, uint32_t groups, uint64_t wakes,
                          uint32_t *ran);

#endif
