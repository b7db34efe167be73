/* Internal: the epoch protocol, by which lane 0's caller admits worker k
 * to a region and k checks in (doc/spinning.md).
 *
 * slots[k].epoch is worker k's futex word and
 * says, in its low two bits, where k stands in the latest region:
 *   1 open     the dispatcher admitted k (its slot is published);
 *   2 joined   k checked in (compare-exchange 1 -> 2) and runs its share;
 *   0 taken    another participant found k not checked in and took its
 *              reserved chunk (compare-exchange 1 -> 0 of the next four);
 *              k, arriving later, finds no open region and goes back to
 *              waiting, having read nothing but this word.
 * The dispatcher opens with cpuexec__epoch_next_open(), the next value
 * that is 1 mod 4 (every region moves it by 4), so the values only grow
 * and a stale compare-exchange fails (a thread would have to stall across
 * 2^29 regions to see a value again). The caller waits only for workers
 * that joined. Bit 31 of the epoch is the nudge of region_lanes.h: it is
 * set only on an epoch that is not open and keeps the two state bits, so
 * everything above reads the low 31 bits as before.
 */
#ifndef CPUEXEC_SRC_EPOCH_H
#define CPUEXEC_SRC_EPOCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "os/os.h"

/* The epoch states (above), and the transitions each
 * party makes. Values live in the low 31 bits (they wrap there); bit 31 is
 * the nudge, set by a lane's opener (region_lanes.h) on a worker that is
 * not admitted, to make it look at the open lanes, and cleared by the
 * worker as it looks. A nudge never touches an open epoch and keeps the
 * state bits, so the check-in protocol reads exactly as without it. */
#define CPUEXEC__EPOCH_OPEN 1u
#define CPUEXEC__EPOCH_JOINED 2u
#define CPUEXEC__EPOCH_TAKEN 0u
#define CPUEXEC__EPOCH_NUDGE 0x80000000u
#define CPUEXEC__EPOCH_VALUE 0x7fffffffu
static inline bool cpuexec__epoch_open(uint32_t e) { return (e & 3u) == CPUEXEC__EPOCH_OPEN; }
static inline uint32_t cpuexec__epoch_next_open(uint32_t e) {
  return ((((e & CPUEXEC__EPOCH_VALUE) + 3u) & ~3u) + 1u) & CPUEXEC__EPOCH_VALUE;
}
/* open -> joined (the worker) and open -> taken (whoever closes it). */
static inline uint32_t cpuexec__epoch_joined(uint32_t open) { return open + 1u; }
static inline uint32_t cpuexec__epoch_taken(uint32_t open) { return (open + 3u) & CPUEXEC__EPOCH_VALUE; }

/* Worker k checks in: open -> joined, from the open value e it read;
 * acquire: the dispatcher's slot writes happen before its open. False when
 * the epoch moved (taken, or a newer region); *e is then what it holds. */
static inline bool cpuexec__epoch_try_join(_Atomic uint32_t *epoch, uint32_t *e) {
  if (!atomic_compare_exchange_strong_explicit(epoch, e, cpuexec__epoch_joined(*e), memory_order_acquire,
                                               memory_order_relaxed))
    return false;
  *e = cpuexec__epoch_joined(*e);
  return true;
}

/* Another participant takes a late worker's share: open -> taken, from the
 * open value e it read; true when this caller closed it. */
static inline bool cpuexec__epoch_try_take(_Atomic uint32_t *epoch, uint32_t e) {
  return atomic_compare_exchange_strong_explicit(epoch, &e, cpuexec__epoch_taken(e), memory_order_relaxed,
                                                 memory_order_relaxed);
}

/* The caller, after its share, settles a worker's region: takes it if it is
 * still open, and returns the state it ended in (CPUEXEC__EPOCH_JOINED or
 * CPUEXEC__EPOCH_TAKEN). */
static inline uint32_t cpuexec__epoch_settle(_Atomic uint32_t *epoch) {
  uint32_t e = atomic_load_explicit(epoch, memory_order_relaxed);
  while (cpuexec__epoch_open(e) &&
         !atomic_compare_exchange_weak_explicit(epoch, &e, cpuexec__epoch_taken(e), memory_order_relaxed,
                                                memory_order_relaxed)) {
  }
  return cpuexec__epoch_open(e) ? CPUEXEC__EPOCH_TAKEN : (e & 3u);
}

/* A lane's opener nudges a worker that is not admitted to lane 0: sets bit
 * 31 unless the epoch is open or already nudged (seq_cst: the Dekker pair
 * of region_lanes.h with the worker's `parked`). Returns false when the
 * epoch is open (the worker comes to the lanes after that share). */
static inline bool cpuexec__epoch_nudge(_Atomic uint32_t *epoch) {
  uint32_t e = atomic_load_explicit(epoch, memory_order_relaxed);
  while (!cpuexec__epoch_open(e) && !(e & CPUEXEC__EPOCH_NUDGE) &&
         !atomic_compare_exchange_weak_explicit(epoch, &e, e | CPUEXEC__EPOCH_NUDGE, memory_order_seq_cst,
                                                memory_order_relaxed)) {
  }
  return !cpuexec__epoch_open(e);
}

/* The dispatcher admits worker k to the next region: any value (nudged or
 * not) -> the next open one, seq_cst like the store of wait.h's protocol
 * (a compare-exchange, since a lane's opener may nudge concurrently).
 * Returns the open value. */
static inline uint32_t cpuexec__epoch_admit(_Atomic uint32_t *epoch) {
  uint32_t e = atomic_load_explicit(epoch, memory_order_relaxed);
  while (!atomic_compare_exchange_weak_explicit(epoch, &e, cpuexec__epoch_next_open(e), memory_order_seq_cst,
                                                memory_order_relaxed)) {
  }
  return cpuexec__epoch_next_open(e);
}

/* Admits the worker of `epoch` and wakes it if (and only if) it parked
 * (`parked`, wait.h's protocol); true when a wake system call was made. */
static inline bool cpuexec__epoch_admit_and_wake(_Atomic uint32_t *epoch, _Atomic uint32_t *parked) {
  cpuexec__epoch_admit(epoch);
  if (atomic_load_explicit(parked, memory_order_seq_cst)) {
    cpuexec__os_wake_all(epoch);
    return true;
  }
  return false;
}

/* The worker clears a nudge from its epoch (acquire: what the lane's opener
 * published before nudging is visible from here on) and returns the value
 * without it. */
static inline uint32_t cpuexec__epoch_clear_nudge(_Atomic uint32_t *epoch, uint32_t now) {
  while ((now & CPUEXEC__EPOCH_NUDGE) &&
         !atomic_compare_exchange_weak_explicit(epoch, &now, now & ~CPUEXEC__EPOCH_NUDGE, memory_order_acquire,
                                                memory_order_acquire)) {
  }
  return now & ~CPUEXEC__EPOCH_NUDGE;
}

#endif
