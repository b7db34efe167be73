/* Internal: a parallel region as one value, the same for lane 0 and the
 * other lanes (region_lanes.h). cpuexec_parallel_for builds it once from
 * the call (region.c); the dispatcher narrows `participants` as the permit
 * model decides (permit.h); its caller writes it into its lane,
 * exec->lanes[l].region, and lane 0's caller copies it into each admitted
 * worker's slot too, so a worker reads one line (executor_internal.h). Every
 * participant runs its share from it through one routine (region_share.h). */
#ifndef CPUEXEC_SRC_REGION_H
#define CPUEXEC_SRC_REGION_H

#include <stdbool.h>
#include <stdint.h>

#include <cpuexec/executor.h>

#include "fpenv.h"

typedef struct cpuexec__region {
  cpuexec_range_fn fn;
  void *ctx;
  int64_t total;
  int64_t grain;
  uint32_t participants;     /* admitted, the caller included */
  bool strict;               /* every admitted participant runs its reserved chunk: nobody takes over */
  const cpuexec__fpenv *env; /* the caller's floating-point state to carry to the workers; NULL: none */
} cpuexec__region;

/* The region's chunks: ranges of grain indices, the last one shorter. */
static inline int64_t cpuexec__region_chunks(const cpuexec__region *r) {
  return r->total / r->grain + (r->total % r->grain != 0);
}

/* Lane 0's partition of the region's chunks into one block per participant
 * (region_share.h): block p is [first(p), first(p) + size(p)), the first
 * rem blocks one chunk longer. Computed once by lane 0's caller: three
 * divisions fewer on every participant's way in. */
typedef struct cpuexec__partition {
  int64_t chunks, q, rem;
} cpuexec__partition;

static inline cpuexec__partition cpuexec__partition_of(const cpuexec__region *r) {
  cpuexec__partition pt;
  pt.chunks = cpuexec__region_chunks(r);
  pt.q = pt.chunks / r->participants;
  pt.rem = pt.chunks % r->participants;
  return pt;
}

static inline int64_t cpuexec__block_first(const cpuexec__partition *pt, uint32_t p) {
  return (int64_t)p * pt->q + ((int64_t)p < pt->rem ? (int64_t)p : pt->rem);
}

static inline int64_t cpuexec__block_size(const cpuexec__partition *pt, uint32_t p) {
  return pt->q + ((int64_t)p < pt->rem);
}

#endif
