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

void cpuexec__futex_wait_until(_Atomic uint32_t *word, uint32_t expected, uint64_t deadline_ns) {
#if defined(__linux__)
  /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline. */
  struct timespec ts = {(time_t)(deadline_ns / 1000000000u), (long)(deadline_ns % 1000000000u)};
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_BITSET_PRIVATE, expected, &ts, NULL, FUTEX_BITSET_MATCH_ANY);
#else
  uint64_t now = cpuexec__now_ns();
  if (now < deadline_ns && atomic_load_explicit(word, memory_order_acquire) == expected) {
    uint64_t ns = deadline_ns - now < 50000u ? deadline_ns - now : 50000u;
    struct timespec pause_ts = {0, (long)ns};
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

/* The cadence part of a worker's wait: true when the word moved (*outcome
 * says whether in the window), false when the window passed. */
static bool follow_cadence(_Atomic uint32_t *word, uint32_t seen, _Atomic uint32_t *parked,
                           const _Atomic int32_t *share_cpu, const cpuexec__cadence_hint *hint,
                           cpuexec__wait_report *report, uint64_t *clock) {
  uint64_t open = hint->expect_ns - hint->window_ns, close = hint->expect_ns + hint->window_ns;
  uint64_t wake = open > CPUEXEC__CADENCE_WAKE_LEAD_NS ? open - CPUEXEC__CADENCE_WAKE_LEAD_NS : 0;
  if (*clock < wake) {
    /* A timed park, announced like the final one (Dekker, see the top). */
    atomic_store_explicit(parked, 1, memory_order_seq_cst);
    while (atomic_load_explicit(word, memory_order_seq_cst) == seen && (*clock = cpuexec__now_ns()) < wake) {
      report->slept = true;
      cpuexec__futex_wait_until(word, seen, wake);
    }
    atomic_store_explicit(parked, 0, memory_order_relaxed);
    if (atomic_load_explicit(word, memory_order_acquire) != seen) {
      *clock = cpuexec__now_ns();
      report->outcome = CPUEXEC__CADENCE_MISS; /* came early: it found the worker asleep */
      return true;
    }
  }
  if (cpuexec__spin_until(word, seen, close, share_cpu, clock)) {
    report->outcome = *clock >= wake ? CPUEXEC__CADENCE_HIT : CPUEXEC__CADENCE_MISS;
    return true;
  }
  report->outcome = CPUEXEC__CADENCE_MISS;
  return false;
}

uint32_t cpuexec__wait_while_equal(_Atomic uint32_t *word, uint32_t seen, _Atomic uint32_t *parked,
                                   const cpuexec__spin_plan *plan, const _Atomic int32_t *share_cpu,
                                   const cpuexec__cadence_hint *hint, cpuexec__wait_report *report) {
  report->slept = false;
  report->outcome = CPUEXEC__CADENCE_NONE;
  report->seen_ns = 0;
  if (plan->mode == CPUEXEC__SPIN_DURATION) {
    uint64_t clock = cpuexec__now_ns(), plain_end = clock + plan->ns;
    bool follow = hint && hint->expect_ns != 0 && plan->adaptive && hint->expect_ns + hint->window_ns > plain_end;
    if (cpuexec__spin_until(word, seen, plain_end, share_cpu, &clock) ||
        (follow && follow_cadence(word, seen, parked, share_cpu, hint, report, &clock))) {
      report->seen_ns = clock;
      return atomic_load_explicit(word, memory_order_acquire);
    }
  } else if (cpuexec__spin(word, seen, true, plan, share_cpu)) {
    return atomic_load_explicit(word, memory_order_acquire);
  }
  uint32_t now;
  atomic_store_explicit(parked, 1, memory_order_seq_cst);
  while ((now = atomic_load_explicit(word, memory_order_seq_cst)) == seen) {
    report->slept = true;
    cpuexec__futex_wait(word, seen);
  }
  /* A stale 1 seen by the next waker only costs it one spurious wake. */
  atomic_store_explicit(parked, 0, memory_order_relaxed);
  if (plan->mode == CPUEXEC__SPIN_DURATION) report->seen_ns = cpuexec__now_ns();
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
