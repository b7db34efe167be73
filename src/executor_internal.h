/* Internal: the layout of an executor, shared by executor.c (threads and
 * lifetime), region.c (running a parallel region), counters.c and plan.c.
 *
 * Concurrency, field by field:
 *   - identity fields (resolved .. worker_count) are written by
 *     cpuexec_executor_create() before the executor is handed out and never
 *     change;
 *   - `region` and the `blocks[].first/end` bounds are written by the one
 *     dispatching thread (holding dispatch_lock) before it bumps the epochs
 *     of the workers it admits (seq_cst store, which releases them); a worker
 *     reads them only after its acquire load of its own epoch;
 *   - `blocks[].next` is claimed by every participant with relaxed
 *     fetch_add: claims are disjoint by construction and the data a range
 *     touches belongs to the caller's callback, not to us;
 *   - `error` is the first non-zero callback result (compare-exchange);
 *   - `remaining` counts admitted workers still in the region; the worker
 *     that takes it to zero publishes `done` (seq_cst) and wakes the caller
 *     only if `caller_parked` is set;
 *   - `counters` is NULL until counting is turned on, then a block that lives
 *     as long as the executor (release store / acquire load). */
#ifndef CPUEXEC_SRC_EXECUTOR_INTERNAL_H
#define CPUEXEC_SRC_EXECUTOR_INTERNAL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>

#include <cpuexec/counters.h>
#include <cpuexec/executor.h>

#include "counters_internal.h"
#include "executor_lease.h"
#include "resolved.h"
#include "wait.h"

/* Two lines: adjacent-line prefetch makes neighbours of 64-byte lines share. */
#define CPUEXEC__LINE 128

/* One participant's share of a region: chunk `first` is reserved for its
 * owner (so every admitted participant runs a range), [next, end) is open to
 * the owner first and then to thieves. Chunks are grain-sized index blocks. */
typedef struct cpuexec__block {
  alignas(CPUEXEC__LINE) _Atomic int64_t next;
  int64_t end;
  int64_t first;
} cpuexec__block;

typedef struct cpuexec__worker {
  /* The futex word a worker waits on: the dispatcher adds 1 to admit it. */
  alignas(CPUEXEC__LINE) _Atomic uint32_t epoch;
  /* Set by the worker while it sleeps in the kernel (see wait.h). */
  _Atomic uint32_t parked;
  struct cpuexec_executor *exec;
  uint32_t index; /* participant index, 1-based */
  pthread_t thread;
} cpuexec__worker;

typedef struct cpuexec__region {
  cpuexec_range_fn fn;
  void *ctx;
  int64_t total;
  int64_t grain;
  int64_t chunks;
  uint32_t participants;
  uint32_t seq;  /* this region's number: the value `done` takes when it ends */
  bool shutdown; /* destroy: workers leave their loop */
} cpuexec__region;

struct cpuexec_executor {
  const cpuexec_resolved *resolved;
  uint64_t id;
  uint32_t threads;        /* effective threads: the caller + worker_count */
  uint32_t worker_count;
  uint64_t fork_generation; /* cpuexec__fork_generation at creation */
  cpuexec__spin_plan spin;
  bool pin_caller;
  int32_t caller_processor;
  cpuexec__lease_slot lease; /* the registry's, under its lock */
  cpuexec__worker *workers;  /* worker_count entries */
  cpuexec__block *blocks;    /* threads entries */
  /* Serializes regions: one region runs on the pool at a time. */
  pthread_mutex_t dispatch_lock;
  _Atomic(cpuexec__counters_block *) counters;

  alignas(CPUEXEC__LINE) cpuexec__region region;
  alignas(CPUEXEC__LINE) _Atomic int error;
  alignas(CPUEXEC__LINE) _Atomic uint32_t remaining;
  _Atomic uint32_t done;          /* region sequence number, the caller's futex word */
  _Atomic uint32_t caller_parked; /* set while the caller sleeps on done */
};

/* Fork generation: bumped in the child by a pthread_atfork handler. */
extern _Atomic uint64_t cpuexec__fork_generation;
void cpuexec__fork_generation_init(void);

/* Test hook: when k > 0, creating worker k (1-based) fails as if
 * pthread_create had returned EAGAIN. */
extern _Atomic int cpuexec__test_fail_thread_create_at;

/* Runs participant `index` of the published region (region.c). */
void cpuexec__region_participate(struct cpuexec_executor *exec, uint32_t index);
/* The worker's finishing step: the last one out publishes done. */
void cpuexec__region_leave(struct cpuexec_executor *exec);

static inline cpuexec__counters_block *cpuexec__counters_of(const struct cpuexec_executor *exec) {
  /* acquire: the block's zeroed fields are visible before we add to them.
   * On x86 and arm64 this is the same instruction as a relaxed load. */
  return atomic_load_explicit(&((struct cpuexec_executor *)exec)->counters, memory_order_acquire);
}

/* The process-wide observer (counters.c); NULL when none is set. */
typedef struct cpuexec__observer {
  cpuexec_dispatch_observer fn;
  void *user;
} cpuexec__observer;
extern _Atomic(const cpuexec__observer *) cpuexec__dispatch_observer;

#endif
