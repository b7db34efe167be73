/* Spin, then park: the waits of wait.h. Parking itself is the OS layer's
 * (os.h). */
#include "wait.h"

uint32_t cpuexec__wait_while_equal(_Atomic uint32_t *word, uint32_t seen, _Atomic uint32_t *parked,
                                   const cpuexec__spin_plan *plan, const _Atomic int32_t *share_cpu, bool *slept) {
  *slept = false;
  if (cpuexec__spin(word, seen, true, plan, share_cpu)) return atomic_load_explicit(word, memory_order_acquire);
  uint32_t now;
  atomic_store_explicit(parked, 1, memory_order_seq_cst);
  while ((now = atomic_load_explicit(word, memory_order_seq_cst)) == seen) {
    *slept = true;
    cpuexec__os_wait(word, seen);
  }
  /* A stale 1 seen by the next waker only costs it one spurious wake. */
  atomic_store_explicit(parked, 0, memory_order_relaxed);
  return now;
}

void cpuexec__wait_until_equal(_Atomic uint32_t *word, uint32_t target, _Atomic uint32_t *parked,
                               const cpuexec__spin_plan *plan, const _Atomic int32_t *share_cpu, bool *slept) {
  *slept = false;
  if (cpuexec__spin(word, target, false, plan, share_cpu)) return;
  uint32_t now;
  atomic_store_explicit(parked, 1, memory_order_seq_cst);
  /* The word moves once per finishing worker; only the last one wakes us,
   * and an os_wait on a value that moved meanwhile returns at once. */
  while ((now = atomic_load_explicit(word, memory_order_seq_cst)) != target) {
    *slept = true;
    cpuexec__os_wait(word, now);
  }
  atomic_store_explicit(parked, 0, memory_order_relaxed);
}
