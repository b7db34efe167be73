/* A body that outlasts every participant's wake-up, without timing.
 *
 * Since nobody waits for a worker that has not started (executor.h), the
 * participants observed equal the admitted ones only when each share takes
 * longer than the wake-up. A test proves that without a clock: each
 * participant's first range of a region waits, here, until every admitted
 * participant has started one. While everyone waits in a first range
 * nobody runs out of work, so nobody takes over a share, and every admitted
 * worker joins by itself: the wait always ends, with every participant
 * observed. `arrived` is zero before the region (one per call). */
#ifndef CPUEXEC_TESTS_RENDEZVOUS_H
#define CPUEXEC_TESTS_RENDEZVOUS_H

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include <cpuexec.h>

static inline void test_rendezvous(_Atomic uint64_t *arrived) {
  uint32_t count = cpuexec_participant_count(), index = cpuexec_participant_index();
  if (count <= 1 || count > 64) return;
  uint64_t bit = 1ull << index;
  if (atomic_load(arrived) & bit) return; /* not this participant's first range */
  atomic_fetch_or(arrived, bit);
  while ((uint32_t)__builtin_popcountll(atomic_load(arrived)) < count) sched_yield();
}

#endif
