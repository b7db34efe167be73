/* Internal: the dispatch observers (cpuexec/counters.h), a bounded list.
 *
 * Slots 0 .. CPUEXEC_DISPATCH_OBSERVERS_MAX - 1 hold the observers of
 * cpuexec_dispatch_observer_add(); one more slot holds the one of the
 * single-observer cpuexec_dispatch_observer_set(). `cpuexec__observers_live`
 * has bit i set while slot i is registered and bit 16 + i when it also wants
 * the completion call, so a dispatch with no observer reads one word.
 *
 * The grace rule (no call after remove returns), observers.c: a call marks
 * itself in flight on its slot before it re-reads the slot's bit, and a
 * removal clears the bit before it waits until nothing is in flight (both
 * seq_cst: either the call sees the bit cleared and does not call, or the
 * removal sees the call in flight and waits for it). */
#ifndef CPUEXEC_SRC_OBSERVERS_H
#define CPUEXEC_SRC_OBSERVERS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cpuexec/counters.h>

#include "core/test_hooks.h"

#define CPUEXEC__OBSERVER_SLOTS (CPUEXEC_DISPATCH_OBSERVERS_MAX + 1u)
#define CPUEXEC__OBSERVERS_COMPLETION_SHIFT 16u

_Static_assert(CPUEXEC__OBSERVER_SLOTS <= CPUEXEC__OBSERVERS_COMPLETION_SHIFT, "slots fit the live word");

extern _Atomic uint32_t cpuexec__observers_live;

/* The live word, read once per dispatch (acquire: a slot's observer and
 * context, written before its bit was set, are visible). 0: none. */
static inline uint32_t cpuexec__observers_now(void) {
  return atomic_load_explicit(&cpuexec__observers_live, memory_order_acquire);
}

/* True when some observer in `live` wants the completion call. */
static inline bool cpuexec__observers_want_completion(uint32_t live) {
  return (live >> CPUEXEC__OBSERVERS_COMPLETION_SHIFT) != 0;
}

/* Test hook: when set, called by a removal that found calls of its
 * observer in flight, each time before it sleeps waiting for them (a test
 * holds a call and learns from this that the removal waits for it). */
typedef void (*cpuexec__observer_retiring_fn)(void);
#if CPUEXEC_TEST_HOOKS
extern _Atomic(cpuexec__observer_retiring_fn) cpuexec__test_observer_retiring;
#endif

/* Calls every observer of `live` that is still registered (the
 * announcement), or, with ev->completed, those that want the completion. */
void cpuexec__observers_notify(uint32_t live, const cpuexec_dispatch_event *ev);

#endif
