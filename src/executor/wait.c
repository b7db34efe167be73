/* Spin, then park: the waits of wait.h, carrying out what the permit model
 * (permit.h) decided for each. Parking itself is the OS layer's (os.h). */
#include "wait.h"

#include "permit.h"
#include "node/node_budget.h"

/* The cadence part of a worker's wait: true when the word moved (*outcome
 * says whether in the window), false when the window passed. */
static bool follow_cadence(_Atomic uint32_t *word, uint32_t seen, _Atomic uint32_t *parked,
                           const cpuexec__wait_plan *plan, cpuexec__wait_report *report, uint64_t *clock) {
  const cpuexec__cadence_hint *hint = plan->hint;
  uint64_t open = hint->expect_ns - hint->window_ns, close = hint->expect_ns + hint->window_ns;
  uint64_t wake = open > CPUEXEC__CADENCE_WAKE_LEAD_NS ? open - CPUEXEC__CADENCE_WAKE_LEAD_NS : 0;
  if (*clock < wake) {
    /* A timed park, announced like the final one (Dekker, see wait.h's top). */
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
  if (cpuexec__spin_until(word, seen, close, plan->share_cpu, clock)) {
    report->outcome = *clock >= wake ? CPUEXEC__CADENCE_HIT : CPUEXEC__CADENCE_MISS;
    return true;
  }
  report->outcome = CPUEXEC__CADENCE_MISS;
  return false;
}

/* The long and gap spins of a worker's wait, the plan's spin having run
 * out at *clock: spins while *word == seen, until gap_end, and past it
 * while *busy != 0 until busy_end. True when the word moved. */
static bool spin_long(_Atomic uint32_t *word, uint32_t seen, const cpuexec__wait_plan *plan, uint64_t gap_end,
                      uint64_t busy_end, uint64_t *clock) {
  uint64_t end = busy_end > gap_end ? busy_end : gap_end;
  for (uint32_t i = 1;; i++) {
    if (atomic_load_explicit(word, memory_order_acquire) != seen) return true;
    if (*clock >= gap_end && (!plan->busy || atomic_load_explicit(plan->busy, memory_order_relaxed) == 0))
      return false;
    if (!cpuexec__spin_pause(i, end, plan->share_cpu, clock)) return false;
  }
}

uint32_t cpuexec__wait_while_equal(_Atomic uint32_t *word, uint32_t seen, _Atomic uint32_t *parked,
                                   const cpuexec__wait_plan *plan, cpuexec__wait_report *report) {
  const cpuexec__spin_plan *spin = plan->spin;
  report->slept = false;
  report->long_spin = false;
  report->outcome = CPUEXEC__CADENCE_NONE;
  report->start_ns = 0;
  report->seen_ns = 0;
  if (spin->mode == CPUEXEC__SPIN_DURATION) {
    uint64_t clock = cpuexec__os_now_ns(), plain_end = clock + spin->ns;
    report->start_ns = clock;
    const cpuexec__cadence_hint *hint = plan->hint;
    bool follow = hint && hint->expect_ns != 0 && spin->adaptive && hint->expect_ns + hint->window_ns > plain_end;
    uint64_t gap_end = !follow && spin->adaptive && plan->gap_spin_ns > spin->ns ? report->start_ns + plan->gap_spin_ns : 0;
    if (cpuexec__spin_until(word, seen, plain_end, plan->share_cpu, &clock)) {
      report->seen_ns = clock;
      return atomic_load_explicit(word, memory_order_acquire);
    }
    /* The long spin goes on while what will move the word runs: when it no
     * longer does, there is none to ask the model for (nor to count). */
    bool busy = plan->busy && atomic_load_explicit(plan->busy, memory_order_relaxed) != 0;
    if (spin->adaptive && (busy || gap_end > clock) && cpuexec__permit_may_spin_long(clock)) {
      report->long_spin = true;
      if (spin_long(word, seen, plan, gap_end, busy ? clock + CPUEXEC__LONG_SPIN_NS : 0, &clock)) {
        report->seen_ns = clock;
        return atomic_load_explicit(word, memory_order_acquire);
      }
    }
    if (follow && follow_cadence(word, seen, parked, plan, report, &clock)) {
      report->seen_ns = clock;
      return atomic_load_explicit(word, memory_order_acquire);
    }
  } else if (cpuexec__spin(word, seen, true, spin, plan->share_cpu)) {
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
  if (spin->mode == CPUEXEC__SPIN_DURATION) report->seen_ns = cpuexec__os_now_ns();
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
                               const cpuexec__wait_plan *plan, cpuexec__wait_report *report) {
  report->slept = false;
  report->long_spin = false;
  if (cpuexec__spin(word, target, false, plan->spin, plan->share_cpu)) return;
  if (plan->spin->adaptive) {
    uint64_t now = cpuexec__os_now_ns();
    if (cpuexec__permit_may_spin_long(now)) {
      report->long_spin = true;
      if (spin_until_equal(word, target, now + CPUEXEC__LONG_SPIN_NS, plan->share_cpu)) return;
    }
  }
  uint32_t now;
  atomic_store_explicit(parked, 1, memory_order_seq_cst);
  /* The word moves once per finishing worker; only the last one wakes us,
   * and an os_wait on a value that moved meanwhile returns at once. */
  while ((now = atomic_load_explicit(word, memory_order_seq_cst)) != target) {
    report->slept = true;
    cpuexec__os_wait(word, now);
  }
  atomic_store_explicit(parked, 0, memory_order_relaxed);
}
