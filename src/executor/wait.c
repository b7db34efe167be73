/* Spin, then park: the waits of wait.h. Parking itself is the OS layer's
 * (os.h). */
#include "wait.h"

#include "node/node_budget.h"

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
    while (atomic_load_explicit(word, memory_order_seq_cst) == seen && (*clock = cpuexec__os_now_ns()) < wake) {
      report->slept = true;
      cpuexec__os_wait_until(word, seen, wake);
    }
    atomic_store_explicit(parked, 0, memory_order_relaxed);
    if (atomic_load_explicit(word, memory_order_acquire) != seen) {
      *clock = cpuexec__os_now_ns();
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

/* The longer spins of this file (CPUEXEC__BUSY_SPIN_NS) pay off on a
 * machine with a processor to spare, and cost one where threads queue for
 * processors: two pools of two threads on the 2-CPU VM lost 10-25 % of
 * their regions to them (make bench, libcpuexec-pools rows). So a thread
 * that the scheduler preempted since its last look skips them. One system
 * call per look, made only when a plan's spin ran out. */
static __thread uint64_t preemptions_seen, preemptions_seen_ns;

/* Preempted since a look less than CROWDED_WINDOW_NS ago: a preemption
 * long ago (a kernel thread, once) says nothing about the machine now. */
#define CROWDED_WINDOW_NS 10000000u

static bool crowded_lately(uint64_t now_ns) {
  uint64_t now = cpuexec__os_thread_preemptions();
  bool crowded = now != preemptions_seen && now_ns - preemptions_seen_ns < CROWDED_WINDOW_NS;
  preemptions_seen = now;
  preemptions_seen_ns = now_ns;
  return crowded;
}

/* Spins while *word == seen and *busy != 0, until deadline_ns; true when
 * the word moved. */
static bool spin_while_busy(_Atomic uint32_t *word, uint32_t seen, const _Atomic uint32_t *busy, uint64_t deadline_ns,
                            const _Atomic int32_t *share_cpu, uint64_t *clock) {
  for (uint32_t i = 1; atomic_load_explicit(busy, memory_order_relaxed) != 0; i++) {
    if (atomic_load_explicit(word, memory_order_acquire) != seen) return true;
    if (!cpuexec__spin_pause(i, deadline_ns, share_cpu, clock)) return false;
  }
  return atomic_load_explicit(word, memory_order_acquire) != seen;
}

uint32_t cpuexec__wait_while_equal(_Atomic uint32_t *word, uint32_t seen, _Atomic uint32_t *parked,
                                   const cpuexec__spin_plan *plan, const _Atomic int32_t *share_cpu,
                                   const cpuexec__cadence_hint *hint, const _Atomic uint32_t *busy,
                                   cpuexec__wait_report *report) {
  report->slept = false;
  report->outcome = CPUEXEC__CADENCE_NONE;
  report->seen_ns = 0;
  if (plan->mode == CPUEXEC__SPIN_DURATION) {
    uint64_t clock = cpuexec__os_now_ns(), plain_end = clock + plan->ns;
    bool follow = hint && hint->expect_ns != 0 && plan->adaptive && hint->expect_ns + hint->window_ns > plain_end;
    if (cpuexec__spin_until(word, seen, plain_end, share_cpu, &clock) ||
        (busy && plan->adaptive && !crowded_lately(clock) &&
         spin_while_busy(word, seen, busy, clock + CPUEXEC__BUSY_SPIN_NS, share_cpu, &clock)) ||
        (follow && follow_cadence(word, seen, parked, share_cpu, hint, report, &clock))) {
      report->seen_ns = clock;
      return atomic_load_explicit(word, memory_order_acquire);
    }
  } else if (cpuexec__spin(word, seen, true, plan, share_cpu)) {
    return atomic_load_explicit(word, memory_order_acquire);
  }
  uint32_t now;
  cpuexec__node_permit_park(); /* the node level of the permit model (node_budget.h) */
  atomic_store_explicit(parked, 1, memory_order_seq_cst);
  while ((now = atomic_load_explicit(word, memory_order_seq_cst)) == seen) {
    report->slept = true;
    cpuexec__os_wait(word, seen);
  }
  /* A stale 1 seen by the next waker only costs it one spurious wake. */
  atomic_store_explicit(parked, 0, memory_order_relaxed);
  if (plan->mode == CPUEXEC__SPIN_DURATION) report->seen_ns = cpuexec__os_now_ns();
  return now;
}

/* Spins while *word != target until deadline_ns; true when it got there. */
static bool spin_until_equal(_Atomic uint32_t *word, uint32_t target, uint64_t deadline_ns,
                             const _Atomic int32_t *share_cpu) {
  uint64_t clock;
  for (uint32_t i = 1; atomic_load_explicit(word, memory_order_acquire) != target; i++)
    if (!cpuexec__spin_pause(i, deadline_ns, share_cpu, &clock)) return false;
  return true;
}

void cpuexec__wait_until_equal(_Atomic uint32_t *word, uint32_t target, _Atomic uint32_t *parked,
                               const cpuexec__spin_plan *plan, const _Atomic int32_t *share_cpu, bool *slept) {
  *slept = false;
  if (cpuexec__spin(word, target, false, plan, share_cpu)) return;
  if (plan->adaptive) {
    uint64_t now = cpuexec__os_now_ns();
    if (!crowded_lately(now) && spin_until_equal(word, target, now + CPUEXEC__BUSY_SPIN_NS, share_cpu)) return;
  }
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
