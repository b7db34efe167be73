/* Internal: counting a region's finished workers without one shared line.
 *
 * Every joined worker's last step in a region is one atomic add, and with
 * a single counter every one of those adds moves the same line: the cost
 * grows with the participants, and on a wide pool the line is the
 * bottleneck (doc/performance.md). So workers count in groups of
 * CPUEXEC__FINISH_GROUP in lane 0: worker k (1-based) adds to group
 * (k - 1) / 8, and the caller, which knows after settling how many workers
 * of each group joined (region_protocol.c), waits on each group in turn
 * (region_share.h). Up to 9 participants there is one group: the
 * 2-participant region does what it did before, one add on one line. The
 * other lanes have one group each, whoever joins (region_lanes.h).
 *
 * Each group's line holds its counter, the caller's parked flag and the
 * goal the parked caller waits for: the protocol of wait.h per group (the
 * caller publishes the goal, then sets parked (seq_cst) and checks the
 * counter once more before it sleeps; the worker whose add reaches the goal
 * wakes it only if parked is set). The counters only grow; the caller keeps
 * each group's running target in its own memory (cpuexec__finish_tally),
 * written by the lane's owner only (lane 0's under the dispatch lock). */
#ifndef CPUEXEC_SRC_FINISH_COUNT_H
#define CPUEXEC_SRC_FINISH_COUNT_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/cache_line.h"
#include "core/tunables.h"
#include "os/os.h"


typedef struct cpuexec__finish_group {
  alignas(CPUEXEC__LINE) _Atomic uint32_t finished; /* regions finished by this group's joined workers */
  _Atomic uint32_t caller_parked;                   /* set while the caller sleeps on `finished` */
  _Atomic uint32_t goal;                            /* `finished` the parked caller waits for */
} cpuexec__finish_group;

/* The lane owner's view of one group (its own memory). */
typedef struct cpuexec__finish_tally {
  uint32_t target; /* `finished` once every region so far is done */
  uint32_t expect; /* `finished` once the current region is done */
} cpuexec__finish_tally;

/* The group worker `index` (1-based) counts in. */
static inline uint32_t cpuexec__finish_group_of(uint32_t index) { return (index - 1) / CPUEXEC__FINISH_GROUP; }

/* The groups a pool of `threads` participants needs (at least one). */
static inline uint32_t cpuexec__finish_groups_for(uint32_t threads) {
  return threads <= 2 ? 1 : cpuexec__finish_group_of(threads - 1) + 1;
}

/* A worker's finishing step in its group g (lane 0: the group of its index;
 * another lane: the lane's one group): the add that reaches a parked
 * caller's goal wakes it. The goal is read only when the caller is parked:
 * it published the goal before announcing that. The add is the worker's
 * last touch of the region: the loads after it may read the next region's
 * values (a spurious wake at most). */
static inline void cpuexec__finish_group_leave(cpuexec__finish_group *g) {
  uint32_t done = atomic_fetch_add_explicit(&g->finished, 1, memory_order_seq_cst) + 1;
  if (atomic_load_explicit(&g->caller_parked, memory_order_seq_cst) &&
      done == atomic_load_explicit(&g->goal, memory_order_relaxed))
    cpuexec__os_wake_all(&g->finished);
}

/* The caller, after its own share: sets every tally's `expect` as if all
 * workers 1 .. participants-1 joined, and returns true when they all
 * finished already (the hot pool's case: one read per group). Inline: it
 * is on every region's path. */
static inline bool cpuexec__finish_count_all_done(const cpuexec__finish_group *groups,
                                                  cpuexec__finish_tally *tally, uint32_t participants) {
  bool done = true;
  uint32_t workers = participants - 1;
  for (uint32_t g = 0; g * CPUEXEC__FINISH_GROUP < workers; g++) {
    uint32_t members = workers - g * CPUEXEC__FINISH_GROUP;
    if (members > CPUEXEC__FINISH_GROUP) members = CPUEXEC__FINISH_GROUP;
    tally[g].expect = tally[g].target + members;
    done = done && atomic_load_explicit(&groups[g].finished, memory_order_acquire) == tally[g].expect;
  }
  return done;
}

#endif
