/* Counters and the execution descriptor (the dispatch observers: observers.c). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "executor_internal.h"
#include "os/os.h"

CPUEXEC_EXPORT int cpuexec_executor_counters_enable(cpuexec_executor *exec) {
  if (!exec) return cpuexec__fail(CPUEXEC_EINVAL, "exec: NULL; counters belong to an executor");
  if (cpuexec__counters_of(exec)) return 0;
  cpuexec__counters_block *block = cpuexec__os_aligned_alloc(_Alignof(cpuexec__counters_block), sizeof *block);
  if (!block) return cpuexec__fail(CPUEXEC_ENOMEM, "counters: no memory for the counter block");
  _Atomic uint64_t *fields = (_Atomic uint64_t *)&block->callers;
  for (size_t i = 0; i < sizeof block->callers / sizeof *fields; i++) {
    atomic_init(&fields[i], 0);
    atomic_init(&((_Atomic uint64_t *)&block->workers)[i], 0);
  }
  cpuexec__counters_block *expected = NULL;
  if (!atomic_compare_exchange_strong_explicit(&exec->counters, &expected, block, memory_order_acq_rel,
                                               memory_order_acquire))
    cpuexec__os_aligned_free(block); /* another thread turned them on first */
  return 0;
}

/* The snapshot reads every counter of the set, and the set is every field
 * of the public struct before its reserved room (counters_internal.h keeps
 * them in its order). */
_Static_assert(sizeof(cpuexec__counter_set) == offsetof(cpuexec_counters, reserved_more_),
               "one atomic per public counter");

CPUEXEC_EXPORT int cpuexec_executor_counters_get(const cpuexec_executor *exec, cpuexec_counters *out) {
  if (!exec || !out) return cpuexec__fail(CPUEXEC_EINVAL, "%s: NULL", !exec ? "exec" : "out");
  memset(out, 0, sizeof *out);
  cpuexec__counters_block *c = cpuexec__counters_of(exec);
  if (!c) return 0;
#define CPUEXEC__READ(field)                                           \
  out->field = atomic_load_explicit(&c->callers.field, memory_order_relaxed) + \
               atomic_load_explicit(&c->workers.field, memory_order_relaxed)
  CPUEXEC__READ(dispatches);
  CPUEXEC__READ(nested_inline);
  CPUEXEC__READ(limited_inline);
  CPUEXEC__READ(spins_found_work);
  CPUEXEC__READ(parks);
  CPUEXEC__READ(wakeups);
  CPUEXEC__READ(caller_waits);
  CPUEXEC__READ(worker_active_ns);
  CPUEXEC__READ(takeovers);
  CPUEXEC__READ(late_arrivals);
  CPUEXEC__READ(cadence_hits);
  CPUEXEC__READ(cadence_misses);
  CPUEXEC__READ(concurrent_regions);
  CPUEXEC__READ(participants_run);
  CPUEXEC__READ(caller_wait_ns);
  CPUEXEC__READ(bound_inline);
  CPUEXEC__READ(occupied_inline);
  CPUEXEC__READ(stood_aside);
  CPUEXEC__READ(step_offs);
  CPUEXEC__READ(long_spins);
  CPUEXEC__READ(parallel_regions);
  CPUEXEC__READ(node_slots_taken);
  CPUEXEC__READ(node_slot_waits);
#undef CPUEXEC__READ
  return 0;
}

/* The affinity class of a placement, read from what was placed:
 *   explicit           the caller is pinned (only explicit pins it);
 *   none               nothing is pinned (affinity none, or a serial policy
 *                      of any other affinity: they share one pool);
 *   physical_then_smt  pinned workers share a core with another participant;
 *   performance_cores  pinned, one per core, on a machine with ranked CPU
 *                      kinds, and no efficiency core used;
 *   physical_cores     any other pinned placement, one per core. So
 *                      performance_cores on a machine without kinds, or
 *                      physical_then_smt that never reached SMT, report
 *                      physical_cores, like the pools they share. */
static cpuexec_affinity_policy affinity_class_of(const cpuexec_resolved *r) {
  if (r->pin_caller) return CPUEXEC_AFFINITY_EXPLICIT;
  if (r->worker_processor_count == 0) return CPUEXEC_AFFINITY_NONE;
  if (r->uses_smt) return CPUEXEC_AFFINITY_PHYSICAL_THEN_SMT;
  if (r->kinds_ranked && !r->uses_efficiency_cores) return CPUEXEC_AFFINITY_PERFORMANCE_CORES;
  return CPUEXEC_AFFINITY_PHYSICAL_CORES;
}

void cpuexec__descriptor_of(const cpuexec_resolved *r, cpuexec_descriptor *out) {
  memset(out, 0, sizeof *out);
  out->effective_threads = r->effective_threads;
  out->affinity_class = affinity_class_of(r);
  out->uses_smt = r->uses_smt;
  out->spin_class = r->spin.policy;
  out->participation =
      r->every_participant ? CPUEXEC_PARTICIPATION_EVERY_PARTICIPANT : CPUEXEC_PARTICIPATION_TAKE_OVER;
}

CPUEXEC_EXPORT int cpuexec_executor_descriptor_get(const cpuexec_executor *exec, cpuexec_descriptor *out) {
  if (!exec || !out) return cpuexec__fail(CPUEXEC_EINVAL, "%s: NULL", !exec ? "exec" : "out");
  memset(out, 0, sizeof *out);
  if (!exec->resolved) {
    /* A foreign executor: libcpuexec places nothing and spins nothing. */
    memset(out, 0, sizeof *out);
    out->effective_threads = exec->threads;
    out->affinity_class = CPUEXEC_AFFINITY_NONE;
    out->spin_class = CPUEXEC_SPIN_PARK_IMMEDIATELY;
    return 0;
  }
  cpuexec__descriptor_of(exec->resolved, out);
  return 0;
}

int cpuexec__descriptor_compare(const cpuexec_descriptor *have, const cpuexec_descriptor *expected) {
  if (have->effective_threads != expected->effective_threads)
    return cpuexec__fail(CPUEXEC_EMISMATCH, "effective_threads: profile made for %u, executor runs %u",
                         expected->effective_threads, have->effective_threads);
  if (have->affinity_class != expected->affinity_class)
    return cpuexec__fail(CPUEXEC_EMISMATCH, "affinity_class: profile made for %d, executor uses %d",
                         (int)expected->affinity_class, (int)have->affinity_class);
  if (have->uses_smt != expected->uses_smt)
    return cpuexec__fail(CPUEXEC_EMISMATCH, "uses_smt: profile made for %s, executor %s",
                         expected->uses_smt ? "true" : "false", have->uses_smt ? "true" : "false");
  if (have->spin_class != expected->spin_class)
    return cpuexec__fail(CPUEXEC_EMISMATCH, "spin_class: profile made for %d, executor uses %d",
                         (int)expected->spin_class, (int)have->spin_class);
  if (have->participation != expected->participation)
    return cpuexec__fail(CPUEXEC_EMISMATCH, "participation: profile made for %d, executor uses %d",
                         (int)expected->participation, (int)have->participation);
  return 0;
}

CPUEXEC_EXPORT int cpuexec_executor_descriptor_check(const cpuexec_executor *exec,
                                                     const cpuexec_descriptor *expected) {
  if (!exec || !expected) return cpuexec__fail(CPUEXEC_EINVAL, "%s: NULL", !exec ? "exec" : "expected");
  cpuexec_descriptor have;
  cpuexec_executor_descriptor_get(exec, &have);
  return cpuexec__descriptor_compare(&have, expected);
}

/* What the spin decided: the resolved spin and worker 1's cadence model (cadence.h). */
CPUEXEC_EXPORT int cpuexec_executor_spin_state_get(const cpuexec_executor *exec, cpuexec_spin_state *out) {
  if (!exec || !out) return cpuexec__fail(CPUEXEC_EINVAL, "%s: NULL", !exec ? "exec" : "out");
  memset(out, 0, sizeof *out);
  out->spin_ns = exec->spin.mode == CPUEXEC__SPIN_DURATION ? exec->spin.ns : 0;
  out->spin_iterations = exec->spin.mode == CPUEXEC__SPIN_ITERATIONS ? exec->spin.iterations : 0;
  if (exec->worker_count == 0) return 0;
  /* Worker 1 sees every dispatched region: its model is the executor's. */
  const cpuexec__cadence *c = &exec->workers[0].cadence;
  out->follows_cadence = c->burn_permille != 0;
  out->burn_permille = c->burn_permille;
  out->cadence_ns = atomic_load_explicit(&c->shown_period_ns, memory_order_relaxed);
  out->jitter_ns = atomic_load_explicit(&c->shown_jitter_ns, memory_order_relaxed);
  out->steady_regions = atomic_load_explicit(&c->shown_steady, memory_order_relaxed);
  out->window_ns = atomic_load_explicit(&c->shown_window_ns, memory_order_relaxed);
  out->following = out->window_ns != 0;
  return 0;
}
