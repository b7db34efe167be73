/* The dispatch observers: add, remove, the single-observer wrapper, and
 * the calls (the model and the grace rule: observers.h). */
#include "observers.h"

#include <pthread.h>

#include "core/error.h"
#include "os/os.h"

typedef struct observer_slot {
  _Atomic(cpuexec_dispatch_observer) fn;
  _Atomic(void *) ctx;
  _Atomic uint32_t in_flight; /* calls of this slot between their mark and their return */
  _Atomic uint32_t removing;  /* set while a removal waits for in_flight to reach 0 */
} observer_slot;

_Atomic uint32_t cpuexec__observers_live = 0;
#if CPUEXEC_TEST_HOOKS
_Atomic(cpuexec__observer_retiring_fn) cpuexec__test_observer_retiring; /* NULL: static storage starts zeroed */
#endif
static observer_slot slots[CPUEXEC__OBSERVER_SLOTS];
/* Serializes add, remove and set; held while a removal waits. */
static pthread_mutex_t observers_lock = PTHREAD_MUTEX_INITIALIZER;
#define WRAPPER_SLOT CPUEXEC_DISPATCH_OBSERVERS_MAX

/* Observer calls running on this thread: add, remove and set from inside
 * one would wait for itself (a removal waits for calls in flight). */
static __thread uint32_t observing_here;

static inline uint32_t slot_bits(uint32_t i, bool completion) {
  return (1u << i) | (completion ? 1u << (CPUEXEC__OBSERVERS_COMPLETION_SHIFT + i) : 0u);
}

static void call_slot(uint32_t i, const cpuexec_dispatch_event *ev) {
  observer_slot *s = &slots[i];
  uint32_t want = ev->completed ? 1u << (CPUEXEC__OBSERVERS_COMPLETION_SHIFT + i) : 1u << i;
  atomic_fetch_add_explicit(&s->in_flight, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&cpuexec__observers_live, memory_order_seq_cst) & want) {
    cpuexec_dispatch_observer fn = atomic_load_explicit(&s->fn, memory_order_relaxed);
    void *ctx = atomic_load_explicit(&s->ctx, memory_order_relaxed);
    observing_here++;
    fn(ctx, ev);
    observing_here--;
  }
  if (atomic_fetch_sub_explicit(&s->in_flight, 1, memory_order_seq_cst) == 1 &&
      atomic_load_explicit(&s->removing, memory_order_seq_cst))
    cpuexec__os_wake_all(&s->in_flight);
}

void cpuexec__observers_notify(uint32_t live, const cpuexec_dispatch_event *ev) {
  uint32_t bits = ev->completed ? live >> CPUEXEC__OBSERVERS_COMPLETION_SHIFT
                                : live & ((1u << CPUEXEC__OBSERVERS_COMPLETION_SHIFT) - 1u);
  while (bits) {
    uint32_t i = (uint32_t)__builtin_ctz(bits);
    bits &= bits - 1u;
    call_slot(i, ev);
  }
}

/* Slot i stops being called; returns once no call of it is in flight.
 * Holds observers_lock. */
static void retire_slot(uint32_t i) {
  observer_slot *s = &slots[i];
  atomic_fetch_and_explicit(&cpuexec__observers_live, ~slot_bits(i, true), memory_order_seq_cst);
  atomic_store_explicit(&s->removing, 1, memory_order_seq_cst);
  for (uint32_t n; (n = atomic_load_explicit(&s->in_flight, memory_order_seq_cst)) != 0;) {
    cpuexec__observer_retiring_fn retiring = CPUEXEC__TEST_HOOK(cpuexec__test_observer_retiring, NULL);
    if (retiring) retiring();
    cpuexec__os_wait(&s->in_flight, n);
  }
  atomic_store_explicit(&s->removing, 0, memory_order_relaxed);
}

/* Fills slot i and makes it live (release: fn and ctx before the bit). */
static void publish_slot(uint32_t i, void *ctx, cpuexec_dispatch_observer observer, bool completion) {
  atomic_store_explicit(&slots[i].fn, observer, memory_order_relaxed);
  atomic_store_explicit(&slots[i].ctx, ctx, memory_order_relaxed);
  atomic_fetch_or_explicit(&cpuexec__observers_live, slot_bits(i, completion), memory_order_seq_cst);
}

/* The registered slot of the list holding (observer, ctx), or -1. */
static int find_slot(void *ctx, cpuexec_dispatch_observer observer) {
  uint32_t live = atomic_load_explicit(&cpuexec__observers_live, memory_order_relaxed);
  for (uint32_t i = 0; i < CPUEXEC_DISPATCH_OBSERVERS_MAX; i++)
    if ((live & (1u << i)) && atomic_load_explicit(&slots[i].fn, memory_order_relaxed) == observer &&
        atomic_load_explicit(&slots[i].ctx, memory_order_relaxed) == ctx)
      return (int)i;
  return -1;
}

CPUEXEC_EXPORT int cpuexec_dispatch_observer_add(void *ctx, cpuexec_dispatch_observer observer, uint32_t flags) {
  if (!observer) return cpuexec__fail(CPUEXEC_EINVAL, "observer: NULL; pass the function to call");
  if (flags & ~CPUEXEC_OBSERVE_COMPLETION)
    return cpuexec__fail(CPUEXEC_EINVAL, "flags: 0x%x has unknown bits 0x%x; the flag is CPUEXEC_OBSERVE_COMPLETION (0x%x)",
                         flags, flags & ~CPUEXEC_OBSERVE_COMPLETION, CPUEXEC_OBSERVE_COMPLETION);
  if (observing_here)
    return cpuexec__fail(CPUEXEC_EBUSY, "observer: added from inside a dispatch observer; add it outside one");
  pthread_mutex_lock(&observers_lock);
  int rc = 0;
  uint32_t live = atomic_load_explicit(&cpuexec__observers_live, memory_order_relaxed);
  uint32_t free = ~live & ((1u << CPUEXEC_DISPATCH_OBSERVERS_MAX) - 1u);
  if (find_slot(ctx, observer) >= 0)
    rc = cpuexec__fail(CPUEXEC_EINVAL, "observer: this observer is already added with this ctx; remove it first");
  else if (!free)
    rc = cpuexec__fail(CPUEXEC_ECAPACITY, "observer: %u observers are added already, the most at once; remove one first",
                       (unsigned)CPUEXEC_DISPATCH_OBSERVERS_MAX);
  else
    publish_slot((uint32_t)__builtin_ctz(free), ctx, observer, (flags & CPUEXEC_OBSERVE_COMPLETION) != 0);
  pthread_mutex_unlock(&observers_lock);
  return rc;
}

CPUEXEC_EXPORT int cpuexec_dispatch_observer_remove(void *ctx, cpuexec_dispatch_observer observer) {
  if (observing_here)
    return cpuexec__fail(CPUEXEC_EBUSY,
                         "observer: removed from inside a dispatch observer, which would wait for itself; remove it "
                         "outside one");
  pthread_mutex_lock(&observers_lock);
  int i = find_slot(ctx, observer);
  if (i >= 0) retire_slot((uint32_t)i);
  pthread_mutex_unlock(&observers_lock);
  if (i < 0) return cpuexec__fail(CPUEXEC_EINVAL, "observer: none was added with this observer and ctx");
  return 0;
}

CPUEXEC_EXPORT void cpuexec_dispatch_observer_set(void *ctx, cpuexec_dispatch_observer observer) {
  if (observing_here) return;
  pthread_mutex_lock(&observers_lock);
  if (atomic_load_explicit(&cpuexec__observers_live, memory_order_relaxed) & (1u << WRAPPER_SLOT))
    retire_slot(WRAPPER_SLOT);
  if (observer) publish_slot(WRAPPER_SLOT, ctx, observer, false);
  pthread_mutex_unlock(&observers_lock);
}
