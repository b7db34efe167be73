/* Private to compat/: the balanced split of n items into `parts` pieces,
 * shared by the range schedules (ranges.c) and the job-pool adapter
 * (job_pool.c). Not installed. */
#ifndef CPUEXEC_COMPAT_SPLIT_PRIVATE_H
#define CPUEXEC_COMPAT_SPLIT_PRIVATE_H

#include <stdint.h>

/* floor(n * i / parts) for i <= parts < 2^32, without forming n * i (it can
 * pass 2^64): n = q * parts + r, so the value is q * i + floor(r * i /
 * parts), where r * i < parts * parts < 2^64. Piece i is [point(i),
 * point(i + 1)); sizes differ by at most one. */
static inline uint64_t cpuexec__split_point(uint64_t n, uint64_t parts, uint64_t i) {
  uint64_t q = n / parts, r = n % parts;
  return q * i + (r * i) / parts;
}

#endif
