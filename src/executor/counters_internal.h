/* Internal: the counters an executor keeps when they are turned on.
 *
 * The executor holds an _Atomic pointer to one block, NULL while counters
 * are off, so the hot path costs one load and a predicted branch. The block
 * is allocated once by cpuexec_executor_counters_enable() and freed with the
 * executor; every field is incremented with relaxed atomics by whichever
 * thread observed the event. */
#ifndef CPUEXEC_SRC_COUNTERS_INTERNAL_H
#define CPUEXEC_SRC_COUNTERS_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct cpuexec__counter_set {
  _Atomic uint64_t dispatches;
  _Atomic uint64_t nested_inline;
  _Atomic uint64_t limited_inline;
  _Atomic uint64_t spins_found_work;
  _Atomic uint64_t parks;
  _Atomic uint64_t wakeups;
  _Atomic uint64_t caller_waits;
  _Atomic uint64_t worker_active_ns;
  _Atomic uint64_t takeovers;
  _Atomic uint64_t late_arrivals;
  _Atomic uint64_t cadence_hits;
  _Atomic uint64_t cadence_misses;
  _Atomic uint64_t concurrent_regions;
  _Atomic uint64_t participants_run;
  _Atomic uint64_t caller_wait_ns;
  _Atomic uint64_t bound_inline;
  _Atomic uint64_t occupied_inline;
  _Atomic uint64_t stood_aside;
  _Atomic uint64_t step_offs;
  _Atomic uint64_t long_spins;
  _Atomic uint64_t parallel_regions;
  _Atomic uint64_t node_slots_taken;
  _Atomic uint64_t node_slot_waits;
} cpuexec__counter_set;

/* Dispatching threads count in `callers`, workers in `workers`: two lines,
 * so counting does not add a line transfer to every region. A snapshot is
 * the sum of the two. */
typedef struct cpuexec__counters_block {
  _Alignas(128) cpuexec__counter_set callers;
  _Alignas(128) cpuexec__counter_set workers;
} cpuexec__counters_block;

#define CPUEXEC__COUNT(block, field, n)                                                       \
  do {                                                                                        \
    if (block) atomic_fetch_add_explicit(&(block)->callers.field, (n), memory_order_relaxed); \
  } while (0)

/* The same, into the set of the participant counting: the dispatching
 * thread (index 0) or a worker. */
#define CPUEXEC__COUNT_AS(block, index, field, n)                                                \
  do {                                                                                           \
    if (block)                                                                                   \
      atomic_fetch_add_explicit((index) == 0 ? &(block)->callers.field : &(block)->workers.field, \
                                (n), memory_order_relaxed);                                      \
  } while (0)

/* A caller's wait for its region's workers: whether it parked, whether it
 * spun on past its plan's spin (wait.h's long spin), and how long it waited
 * (0 when counters were off as the wait began). */
static inline void cpuexec__count_caller_wait(cpuexec__counters_block *block, bool slept, bool long_spin,
                                              uint64_t waited_ns) {
  CPUEXEC__COUNT(block, caller_waits, 1);
  if (long_spin) CPUEXEC__COUNT(block, long_spins, 1);
  if (slept)
    CPUEXEC__COUNT(block, parks, 1);
  else
    CPUEXEC__COUNT(block, spins_found_work, 1);
  if (waited_ns) CPUEXEC__COUNT(block, caller_wait_ns, waited_ns);
}

struct cpuexec_resolved;
struct cpuexec_descriptor;
/* The descriptor of what a resolution does (counters.c): every field from
 * the resolved behaviour, none from the request's spelling, so resolutions
 * that share a pool always describe it alike (issue 13, seed 000 S000-128). */
void cpuexec__descriptor_of(const struct cpuexec_resolved *resolved, struct cpuexec_descriptor *out);
/* 0, or CPUEXEC_EMISMATCH naming the first field of expected that differs. */
int cpuexec__descriptor_compare(const struct cpuexec_descriptor *have, const struct cpuexec_descriptor *expected);

#endif
