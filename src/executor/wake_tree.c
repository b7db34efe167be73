/* Tree wake-up for wide regions (see wake_tree.h). */
#include "core/test_hooks.h"
#include "wake_tree.h"

#include "executor_internal.h"

#if CPUEXEC_TEST_HOOKS
_Atomic uint32_t cpuexec__test_wake_tree_min = 0;
#endif

uint32_t cpuexec__wake_tree_min(void) {
  uint32_t t = CPUEXEC__TEST_HOOK(cpuexec__test_wake_tree_min, 0);
  return t != 0 ? t : CPUEXEC__WAKE_TREE_MIN;
}

uint32_t cpuexec__wake_tree_min_for(uint32_t threads) {
  uint32_t min = cpuexec__wake_tree_min();
  return threads >= min && threads >= 2 ? min : UINT32_MAX;
}

uint64_t cpuexec__wake_tree_children(struct cpuexec_executor *exec, uint32_t index, uint32_t participants) {
  uint64_t wakes = 0;
  uint64_t first = (uint64_t)index * CPUEXEC__WAKE_TREE_FANOUT + 1;
  for (uint64_t c = first; c < first + CPUEXEC__WAKE_TREE_FANOUT && c < participants; c++) {
    cpuexec__slot *s = &exec->slots[c];
    if (atomic_load_explicit(&s->parked, memory_order_seq_cst)) {
      cpuexec__os_wake_all(&s->epoch);
      wakes++;
    }
  }
  return wakes;
}
