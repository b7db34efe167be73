/* Private to compat/: the first contract violation of one call, recorded
 * from whichever thread sees it (range_executor.c, range_check.c). Not
 * installed.
 *
 * A small state machine: the winner of the exchange from 0 (none) to
 * RECORDING writes start/end (relaxed), then stores its kind (> RECORDING)
 * with release; the caller reads kind with acquire once the executor has
 * returned, and start/end after it. A kind still RECORDING then means the
 * recording thread had not finished: the executor returned before its
 * callback did. */
#ifndef CPUEXEC_COMPAT_VIOLATION_PRIVATE_H
#define CPUEXEC_COMPAT_VIOLATION_PRIVATE_H

#include <stdatomic.h>
#include <stdint.h>

enum { CPUEXEC__VIOLATION_NONE = 0, CPUEXEC__VIOLATION_RECORDING = 1 };

typedef struct cpuexec__violation {
  atomic_int kind;
  atomic_int_least64_t start;
  atomic_int_least64_t end;
} cpuexec__violation;

static inline void cpuexec__violation_init(cpuexec__violation *v) {
  atomic_init(&v->kind, CPUEXEC__VIOLATION_NONE);
  atomic_init(&v->start, 0);
  atomic_init(&v->end, 0);
}

/* Records (kind, start, end) unless a violation was recorded before. */
static inline void cpuexec__violation_record(cpuexec__violation *v, int kind, int64_t start, int64_t end) {
  int expected = CPUEXEC__VIOLATION_NONE;
  if (atomic_compare_exchange_strong_explicit(&v->kind, &expected, CPUEXEC__VIOLATION_RECORDING,
                                              memory_order_relaxed, memory_order_relaxed)) {
    atomic_store_explicit(&v->start, start, memory_order_relaxed);
    atomic_store_explicit(&v->end, end, memory_order_relaxed);
    atomic_store_explicit(&v->kind, kind, memory_order_release);
  }
}

/* The kind recorded (acquire); *start and *end are valid when it is above
 * CPUEXEC__VIOLATION_RECORDING. */
static inline int cpuexec__violation_read(cpuexec__violation *v, int64_t *start, int64_t *end) {
  int kind = atomic_load_explicit(&v->kind, memory_order_acquire);
  *start = (int64_t)atomic_load_explicit(&v->start, memory_order_relaxed);
  *end = (int64_t)atomic_load_explicit(&v->end, memory_order_relaxed);
  return kind;
}

#endif
