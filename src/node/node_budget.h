/* Internal: the node level of the permit model (doc/node-budget.md).
 *
 * Every libcpuexec process of one user in one cgroup shares a budget of N
 * CPUs (node_table.h): N is the cgroup's quota, rounded up as the resolver
 * rounds it, capped by its cpuset, else the visible processors. Under GNU
 * make the jobserver's tokens bound it too (jobserver.h): the smaller
 * wins. A worker holds one permit (a slot, and a token under make) while it
 * runs or spins and gives it back before it parks; a caller never needs
 * one, so each process always makes progress on its own thread and at most
 * N + (processes) library threads run at once. A process's callers hold
 * one implicit slot while they run regions (claimed without waiting, even
 * over the budget, and released once they open none for
 * CPUEXEC__NODE_CALLER_LINGER_NS), so workers fill only what the callers
 * leave: processes that each ask for every CPU run as if split by hand.
 *
 * The executor asks twice, on its worker's loop: cpuexec__node_permit_run
 * before a worker joins a region or spins (false: it does not join; the
 * caller takes its share over, and it parks), and cpuexec__node_permit_park
 * before it parks (src/executor/wait.c; a cadence window's short timed park,
 * cadence.h, keeps the permit: the worker spins again within the window). A thread that already holds its permit pays a
 * thread-local load; a take or give is one compare-and-swap in the shared
 * table; the slow path (a take that found no slot) reclaims the slots of
 * dead processes at most every CPUEXEC__NODE_RECLAIM_EVERY_NS across the
 * node (and the slots of callers gone idle at most every linger), and a give re-reads the cgroup's quota and cpuset at most every
 * CPUEXEC__NODE_REFRESH_EVERY_NS, so an in-place resize (docker update
 * --cpus) changes N without a restart.
 *
 * CPUEXEC_NODE_BUDGET=off turns it off, =host shares one budget of the
 * visible processors across every cgroup of the user, =cgroup (default)
 * keys it by the cgroup; a policy's node_budget key does the same for its
 * executor (cpuexec/policy.h): off keeps that executor out of the node
 * level (the executor asks nothing here), cgroup or host sets the process's
 * scope when the first executor that names one is made, before the
 * variable; CPUEXEC_NODE_DIR names the tables' directory
 * (default /dev/shm). A table that cannot be used is reported in the
 * description and the process keeps its own count: no crash, no hang. */
#ifndef CPUEXEC_SRC_NODE_BUDGET_H
#define CPUEXEC_SRC_NODE_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cpuexec/policy.h>

#include "core/test_hooks.h"
#include "core/tunables.h"

/* The process's scope: CGROUP or HOST while the node level shares a table,
 * OFF while it keeps its own count or is off, DEFAULT while no executor
 * has asked yet (the first one decides it). */
cpuexec_node_budget cpuexec__node_scope(void);

/* An executor whose policy names a scope (CGROUP or HOST) is made: the
 * first such executor sets the process's scope, if the node level has not
 * started yet; later ones share what the process has (cpuexec__node_scope
 * says what that is), and the description says that one asked for
 * another. */
void cpuexec__node_ask_scope(cpuexec_node_budget scope);


/* Where a worker's permits are counted (its executor's counters), each
 * NULL while counting is off. */
typedef struct cpuexec__node_counts {
  _Atomic uint64_t *taken;   /* a slot (or a jobserver token) taken */
  _Atomic uint64_t *refused; /* none was free */
} cpuexec__node_counts;

/* The permit of the calling worker thread: true when it holds one (or the
 * node level does not limit this process), false when none is free.
 * Counts into `counts` (NULL: nowhere) a permit it takes or is refused. */
bool cpuexec__node_permit_run(const cpuexec__node_counts *counts);

/* Gives the calling thread's permit back, if it holds one. */
void cpuexec__node_permit_park(void);

/* What the node level told a caller as its region opened, for the region's
 * end: crowded, the callers are over the budget (more of them than slots);
 * processes_over, some process's callers hold a slot over it (callers of
 * several processes crowd the node, not only this process's pools);
 * counted, the caller counts among its process's callers inside regions
 * (below) until cpuexec__node_region_ends. */
typedef struct cpuexec__node_region {
  bool crowded;
  bool processes_over;
  bool counted;
} cpuexec__node_region;

/* A caller opens a region for `participants` (> 1): its process's implicit
 * slot is claimed (without waiting) or kept, and the answer is how many
 * participants the node's budget lets the region admit, the caller
 * included: all of them while a worker of this process holds a slot, else
 * 1 + the free slots (1: no worker could take one, so none is woken).
 * While the process has more than one pool, its callers of other pools
 * running take a free slot each first (the implicit slot covers one
 * caller; cpuexec__node_others_running says which run): four private
 * pools in one process are held to the budget as four processes are.
 * now_ns is the permit model's clock, read only where the process has
 * more than one pool. */
uint32_t cpuexec__node_region_admits(uint32_t participants, uint64_t (*now_ns)(void), cpuexec__node_region *region);

/* The callers of a process's other pools taken as running when one of its
 * callers opens a region: `inside` are inside regions now; `met` were
 * inside when a region last found others inside, at met_ns (0: never).
 * A caller's serial work between its regions is invisible to every pool,
 * so callers that met lately are taken as still running theirs until they
 * have not met for CPUEXEC__UNSETTLED_NS: the settle rule of one pool's
 * workers (src/executor/permit.h), for the callers of several pools. Else
 * a region opened while the other caller works between its regions wakes
 * a worker, three threads on two processors, and the worker waits behind
 * the other caller (two pools at S = 200 us: 0.69 of the ceiling). */
static inline uint32_t cpuexec__node_others_running(uint32_t inside, uint32_t met, uint64_t met_ns, uint64_t now_ns) {
  bool lately = met_ns != 0 && now_ns - met_ns < CPUEXEC__UNSETTLED_NS;
  return lately && met > inside ? met : inside;
}

/* The region opened with cpuexec__node_region_admits ended. Inline: every
 * region asks, and only one counted among several pools' callers calls out. */
void cpuexec__node_uncount_caller(void);
static inline void cpuexec__node_region_ends(const cpuexec__node_region *region) {
  if (region->counted) cpuexec__node_uncount_caller();
}

/* A pool with workers was made, or is gone (the callers' count above is
 * kept only while the process has more than one). */
void cpuexec__node_pool_made(void);
void cpuexec__node_pool_gone(void);

/* Gives the process's callers' implicit slot back, if they hold one (an
 * executor was destroyed). */
void cpuexec__node_callers_rest(void);

/* What applies, one line ("node budget: 2 CPUs shared by ... (source)"), into
 * buf; snprintf-like. Initializes the node level when it was not yet. */
size_t cpuexec__node_budget_describe(char *buf, size_t size);

/* The table's path in use, "" when none (tests). */
const char *cpuexec__node_budget_table_path(void);

#if CPUEXEC_TEST_HOOKS
/* A system root the cgroup limits are read from instead of "/". */
extern _Atomic(const char *) cpuexec__test_node_cgroup_root;
/* Non-zero: the reclaim interval in nanoseconds (1: every failed take). */
extern _Atomic uint64_t cpuexec__test_node_reclaim_every_ns;
/* True: every give re-reads the cgroup's limits (a resize seen at once). */
extern _Atomic bool cpuexec__test_node_refresh_always;
/* Non-zero: the callers' linger in nanoseconds + 1 (1: a caller is idle as
 * soon as two looks saw the same beat). */
extern _Atomic uint64_t cpuexec__test_node_caller_linger_ns;
#endif

#endif
