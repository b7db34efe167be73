/* Internal: a parallel region as one value, the same for lane 0 and the
 * other lanes (region_lanes.h). cpuexec_parallel_for builds it once from
 * the call (region.c); the dispatcher narrows `participants` as the permit
 * model decides (permit.h); lane 0's caller writes it into each admitted
 * worker's slot (region_protocol.c), a lane's caller into its lane. */
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

#endif
