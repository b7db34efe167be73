/* Internal: how libcpuexec threads wait for a 32-bit word to change.
 *
 * A waiter spins (pause loop) per the executor's spin plan, then parks in the
 * kernel (os.h: a futex on Linux, a condition variable elsewhere). Parking
 * is announced in a per-waiter flag so the waker makes a system call only
 * when the waiter really sleeps:
 *
 *   waiter: parked = 1 (seq_cst); if (word == seen) os_wait(word, seen)
 *   waker:  word = new (seq_cst);  if (parked) os_wake_all(word)
 *
 * Both sides use seq_cst so at least one of them sees the other's store
 * (Dekker); a wake is never lost and never made for a spinning waiter. */
#ifndef CPUEXEC_SRC_WAIT_H
#define CPUEXEC_SRC_WAIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/tunables.h"
#include "os/os.h"

#include "cadence.h"
#include "permit.h"

/* What a waiting thread does before parking, derived once from the resolved
 * spin policy when the executor is created. */
typedef enum cpuexec__spin_mode {
  CPUEXEC__SPIN_NONE = 0,   /* park at once */
  CPUEXEC__SPIN_ITERATIONS, /* exactly `iterations` pauses */
  CPUEXEC__SPIN_DURATION    /* `ns` nanoseconds, clock read every CPUEXEC__SPIN_CLOCK_EVERY pauses */
} cpuexec__spin_mode;

typedef struct cpuexec__spin_plan {
  cpuexec__spin_mode mode;
  uint64_t iterations;
  uint64_t ns;
  /* The adaptive policy: a waiter that shares its processor with the thread
   * it waits for yields instead of spinning (see cpuexec__spin). Fixed
   * policies spin exactly as asked. */
  bool adaptive;
} cpuexec__spin_plan;

/* A waiter that shares its processor with the thread it waits for yields
 * instead of spinning (cpuexec__spin below; doc/performance.md, "Sharing
 * a processor", has the figures that chose it). */

/* A clock read (vDSO) every CPUEXEC__SPIN_CLOCK_EVERY pauses
 * (core/tunables.h) keeps the spin length accurate to a few microseconds
 * without reading the clock on every iteration. */

static inline void cpuexec__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield" ::: "memory");
#else
  atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* Spins per plan while the wait lasts: while *word == value when
 * while_equal, else while *word != value. Returns true when the wait ended
 * during the spin (no park needed).
 *
 * Duration plans with share_cpu: *share_cpu is where the thread we wait for
 * runs (-1: unknown). When that is our processor too (a busy machine put a
 * floating caller on its pinned worker's processor), spinning would hold off
 * that very thread for the whole budget, and parking would not help either:
 * the wake puts the sleeper back on the waker's processor, so the pair stays
 * together. So the waiter yields at every clock check: the other thread
 * runs, and with both runnable there the load balancer can move the caller
 * away. cpuexec__os_current_cpu() costs no system call on Linux. Fixed durations
 * yield too (since issue 9): with a budget of milliseconds and an unpinned
 * pair, spinning there held off the very thread waited for for the whole
 * budget; a yield with nothing else runnable returns at once, so the spin
 * is otherwise as asked. */
static inline bool cpuexec__spin(_Atomic uint32_t *word, uint32_t value, bool while_equal,
                                 const cpuexec__spin_plan *plan, const _Atomic int32_t *share_cpu) {
#define CPUEXEC__WAITING() ((atomic_load_explicit(word, memory_order_acquire) == value) == while_equal)
  switch (plan->mode) {
  case CPUEXEC__SPIN_ITERATIONS:
    for (uint64_t i = 0; i < plan->iterations; i++) {
      if (!CPUEXEC__WAITING()) return true;
      cpuexec__cpu_relax();
    }
    break;
  case CPUEXEC__SPIN_DURATION: {
    uint64_t deadline = 0;
    for (uint32_t i = 1;; i++) {
      if (!CPUEXEC__WAITING()) return true;
      /* The first read comes after CLOCK_EVERY pauses: a short wait never
       * reads the clock (the spin is then longer by that much, ~1-4 us). */
      if (i % CPUEXEC__SPIN_CLOCK_EVERY == 0) {
        uint64_t now = cpuexec__os_now_ns();
        if (deadline == 0)
          deadline = now + plan->ns;
        else if (now >= deadline)
          break;
        if (cpuexec__permit_shares_processor(share_cpu)) cpuexec__os_yield();
      }
      cpuexec__cpu_relax();
    }
    break;
  }
  case CPUEXEC__SPIN_NONE:
    break;
  }
  return !CPUEXEC__WAITING();
#undef CPUEXEC__WAITING
}

/* Pause i of a spin that lasts until deadline_ns: every
 * CPUEXEC__SPIN_CLOCK_EVERY pauses it reads the clock into *clock and, when
 * the thread waited for runs on this processor (share_cpu), yields to it
 * (cpuexec__spin). False once the deadline passed. */
static inline bool cpuexec__spin_pause(uint32_t i, uint64_t deadline_ns, const _Atomic int32_t *share_cpu,
                                       uint64_t *clock) {
  if (i % CPUEXEC__SPIN_CLOCK_EVERY == 0) {
    if ((*clock = cpuexec__os_now_ns()) >= deadline_ns) return false;
    if (cpuexec__permit_shares_processor(share_cpu)) cpuexec__os_yield();
  }
  cpuexec__cpu_relax();
  return true;
}

/* Spins while *word == value until deadline_ns; true when it changed.
 * *clock is kept at the latest clock read (a few microseconds stale at
 * most), so the caller knows about when the word moved without one more
 * read. */
static inline bool cpuexec__spin_until(_Atomic uint32_t *word, uint32_t value, uint64_t deadline_ns,
                                       const _Atomic int32_t *share_cpu, uint64_t *clock) {
  for (uint32_t i = 1;; i++) {
    if (atomic_load_explicit(word, memory_order_acquire) != value) return true;
    if (!cpuexec__spin_pause(i, deadline_ns, share_cpu, clock)) return false;
  }
}

/* How a cadence wait ended (cadence.h). */
typedef enum cpuexec__cadence_outcome {
  CPUEXEC__CADENCE_NONE = 0, /* no cadence followed: the plain spin then park */
  CPUEXEC__CADENCE_HIT,      /* the word moved while spinning in the window */
  CPUEXEC__CADENCE_MISS      /* it moved before the window, or the window passed */
} cpuexec__cadence_outcome;

/* One wait as the permit model (permit.h) decided it: the plan's spin,
 * where the thread waited for runs (share_cpu, NULL: unknown), and, for
 * adaptive plans only, the long spin while *busy != 0 (NULL: none), the
 * gap spin (spin until gap_spin_ns after the wait began; 0: none) and the
 * cadence to follow (hint, NULL: none). The long and gap spins ask the
 * model once more, as the plan's spin runs out (cpuexec__permit_may_spin_long). */
typedef struct cpuexec__wait_plan {
  const cpuexec__spin_plan *spin;
  const _Atomic int32_t *share_cpu;
  const _Atomic uint32_t *busy;
  uint64_t gap_spin_ns;
  const cpuexec__cadence_hint *hint;
} cpuexec__wait_plan;

/* What a wait reports. */
typedef struct cpuexec__wait_report {
  bool slept;                        /* the wait went to the kernel */
  bool long_spin;                    /* it spun past the plan's spin (the long or the gap spin) */
  cpuexec__cadence_outcome outcome;  /* how a followed window went */
  uint64_t start_ns;                 /* when it began (duration plans; 0: not timed) */
  uint64_t seen_ns;                  /* about when the word moved (0: not timed) */
} cpuexec__wait_report;

/* Waits until *word != seen (workers waiting for their epoch): spins per
 * plan, then parks announcing it in *parked. Adaptive plans, when the
 * plan's spin ran out and the permit model lets the thread spin long: with
 * busy, the spin goes on while *busy != 0 for up to
 * CPUEXEC__LONG_SPIN_NS (whoever runs meanwhile will move the word when
 * done, and parking now would make the waiter late for it); with a gap
 * spin, until it ends. Then, with a hint whose window ends after the
 * plan's spin, the wait follows it: a timed park until
 * CPUEXEC__CADENCE_WAKE_LEAD_NS before the window, a spin across the
 * window, then the park. Returns the new value (acquire) and fills *report
 * (the caller counts, reading the counters pointer after the wait so a
 * wait that spans turning counters on is still counted). Duration plans
 * read the clock once as the wait starts and then only as the spin does. */
uint32_t cpuexec__wait_while_equal(_Atomic uint32_t *word, uint32_t seen, _Atomic uint32_t *parked,
                                   const cpuexec__wait_plan *plan, cpuexec__wait_report *report);

/* Waits until *word == target (the caller waiting for the count of
 * finished workers), the same way; with adaptive plans the long spin goes
 * on for up to CPUEXEC__LONG_SPIN_NS before the park, as what it waits
 * for is running (workers that checked in): a caller parked at the end of
 * a long region waits for the last worker's wake to be scheduled
 * (doc/performance.md, section 7). Fills report's slept and long_spin. */
void cpuexec__wait_until_equal(_Atomic uint32_t *word, uint32_t target, _Atomic uint32_t *parked,
                               const cpuexec__wait_plan *plan, cpuexec__wait_report *report);

/* Publishes *word = value and wakes its waiter if (and only if) it parked.
 * Returns true when a wake system call was made. */
static inline bool cpuexec__store_and_wake(_Atomic uint32_t *word, uint32_t value, _Atomic uint32_t *parked) {
  atomic_store_explicit(word, value, memory_order_seq_cst);
  if (atomic_load_explicit(parked, memory_order_seq_cst)) {
    cpuexec__os_wake_all(word);
    return true;
  }
  return false;
}

#endif
