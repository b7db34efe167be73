/* Parking in the kernel: futex on Linux, a sleeping poll elsewhere. */
#include "wait.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#include <sched.h>
#endif

void cpuexec__futex_wait(_Atomic uint32_t *word, uint32_t expected) {
#if defined(__linux__)
  /* EINTR and EAGAIN both mean "look again", which every caller does. */
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
#else
  if (atomic_load_explicit(word, memory_order_acquire) == expected) {
    struct timespec pause_ts = {0, 50000};
    nanosleep(&pause_ts, NULL);
  }
#endif
}

void cpuexec__futex_wake_all(_Atomic uint32_t *word) {
#if defined(__linux__)
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
#else
  (void)word;
#endif
}

uint32_t cpuexec__wait_while_equal(_Atomic uint32_t *word, uint32_t seen, _Atomic uint32_t *parked,
                                   const cpuexec__spin_plan *plan, const _Atomic int32_t *share_cpu, bool *slept) {
  *slept = false;
  if (cpuexec__spin(word, seen, true, plan, share_cpu)) return atomic_load_explicit(word, memory_order_acquire);
  uint32_t now;
  atomic_store_explicit(parked, 1, memory_order_seq_cst);
  while ((now = atomic_load_explicit(word, memory_order_seq_cst)) == seen) {
    *slept = true;
    cpuexec__futex_wait(word, seen);
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
   * and a futex_wait on a value that moved meanwhile returns at once. */
  while ((now = atomic_load_explicit(word, memory_order_seq_cst)) != target) {
    *slept = true;
    cpuexec__futex_wait(word, now);
  }
  atomic_store_explicit(parked, 0, memory_order_relaxed);
}
