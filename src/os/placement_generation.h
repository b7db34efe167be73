/* Internal: the process's placement generation, a counter that moves
 * whenever a thread's cached pin may be stale: the process topology was
 * read again (the process CPU set changed, or cpuexec_topology_refresh()),
 * or a placement check found a thread moved (src/executor/executor_placement.c).
 * Combined with the fork generation (fork.h) it is what the explicit
 * caller's pin is checked against on every region, so reading it is one
 * relaxed load. In the OS layer because the topology module (which sees
 * CPU-set changes) sits below the executor (which caches pins). */
#ifndef CPUEXEC_SRC_OS_PLACEMENT_GENERATION_H
#define CPUEXEC_SRC_OS_PLACEMENT_GENERATION_H

#include <stdatomic.h>
#include <stdint.h>

#include "fork.h"

extern _Atomic uint64_t cpuexec__placement_changes;

/* Says that placement may have changed: every cached pin is looked at again. */
static inline void cpuexec__placement_changed(void) {
  atomic_fetch_add_explicit(&cpuexec__placement_changes, 1, memory_order_relaxed);
}

/* Changes whenever cpuexec__placement_changed() was called or the process
 * forked (the fork generation in the top 16 bits). */
static inline uint64_t cpuexec__placement_generation(void) {
  return (cpuexec__fork_generation_now() << 48) ^ atomic_load_explicit(&cpuexec__placement_changes, memory_order_relaxed);
}

#endif
