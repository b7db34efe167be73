/* Tree wake-up and grouped completion for wide regions (see wake_tree.h). */
#include "wake_tree.h"

#include <stdlib.h>

#include "executor_internal.h"

_Atomic uint32_t cpuexec__test_wake_tree_min = 0;

uint32_t cpuexec__wake_tree_min(void) {
  uint32_t t = atomic_load_explicit(&cpuexec__test_wake_tree_min, memory_order_relaxed);
  return t != 0 ? t : CPUEXEC__WAKE_TREE_MIN;
}

bool cpuexec__wake_tree_alloc(uint32_t threads, uint32_t min, cpuexec__wake_group **out) {
  *out = NULL;
  if (threads < min || threads < 2) return true;
  size_t groups = (threads - 1 + CPUEXEC__WAKE_TREE_GROUP - 1) / CPUEXEC__WAKE_TREE_GROUP;
  void *p = NULL;
  if (posix_memalign(&p, 128, groups * sizeof(cpuexec__wake_group)) != 0) return false;
  cpuexec__wake_group *g = p;
  for (size_t i = 0; i < groups; i++) atomic_init(&g[i].count, 0);
  *out = g;
  return true;
}

uint64_t cpuexec__wake_tree_children(struct cpuexec_executor *exec, uint32_t index, uint32_t participants) {
  uint64_t wakes = 0;
  uint64_t first = (uint64_t)index * CPUEXEC__WAKE_TREE_FANOUT + 1;
  for (uint64_t c = first; c < first + CPUEXEC__WAKE_TREE_FANOUT && c < participants; c++) {
    cpuexec__slot *s = &exec->slots[c];
    wakes += cpuexec__store_and_wake(&s->epoch, atomic_load_explicit(&s->epoch, memory_order_relaxed) + 1,
                                     &s->parked);
  }
  return wakes;
}

void cpuexec__wake_tree_leave(struct cpuexec_executor *exec, uint32_t index, uint32_t participants) {
  uint32_t group = (index - 1) / CPUEXEC__WAKE_TREE_GROUP;
  uint32_t first = group * CPUEXEC__WAKE_TREE_GROUP + 1;
  uint32_t size = participants - first < CPUEXEC__WAKE_TREE_GROUP ? participants - first : CPUEXEC__WAKE_TREE_GROUP;
  /* Read before the group's count completes: after that the dispatcher may
   * write the next region over this slot. */
  uint32_t target = exec->slots[index].finish_target;
  cpuexec__wake_group *g = &exec->wake_groups[group];
  /* acq_rel: the last finisher sees every member's work before it reports
   * the group, so the caller's acquire of `finished` covers all of them. */
  if (atomic_fetch_add_explicit(&g->count, 1, memory_order_acq_rel) + 1 != size) return;
  atomic_store_explicit(&g->count, 0, memory_order_relaxed);
  if (atomic_fetch_add_explicit(&exec->finished, size, memory_order_seq_cst) + size == target &&
      atomic_load_explicit(&exec->caller_parked, memory_order_seq_cst))
    cpuexec__futex_wake_all(&exec->finished);
}
