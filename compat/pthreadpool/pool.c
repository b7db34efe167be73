/* libcpuexec-pthreadpool: pools and the dispatch of one parallelize call.
 *
 * A pthreadpool here owns no threads. It holds a lease on a libcpuexec
 * executor (from the default registry, so equal policies share one set of
 * workers), or an application's struct pthreadpool_executor wrapped as a
 * foreign executor (executor.c), and the most participants a call may use.
 * A call splits the task's items into one slot per participant and runs the
 * slots with cpuexec_parallel_for(); see engine_private.h for how slots are
 * claimed. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE__))
#include <xmmintrin.h>
#define CPUEXEC__PP_HAVE_MXCSR 1
#endif

#include <cpuexec.h>

#include "engine_private.h"

/* Slot arrays aligned to their cache-line size: C11 aligned_alloc, or
 * _aligned_malloc on Windows, whose C runtime has no aligned_alloc. */
#ifdef _WIN32
#include <malloc.h>
#define pp_aligned_alloc(align, size) _aligned_malloc((size), (align))
#define pp_aligned_free(p) _aligned_free(p)
#else
#define pp_aligned_alloc(align, size) aligned_alloc((align), (size))
#define pp_aligned_free(p) free(p)
#endif

/* exec and max_threads are immutable after the pool is made, so calls from
 * several threads read them without synchronisation; threads is written by
 * pthreadpool_set_threads_count() and read once per call (relaxed: a call
 * uses the value it read, nothing else hangs on it). The split hint is only
 * advice (see pp_split): each field is a relaxed atomic, and calls racing on
 * one pool may read a mixed triple, which at worst unbalances one call by a
 * bounded number of items.
 *
 * The application's executor (app, app_context, app_exec): written by
 * pthreadpool_create_v2() before the pool is handed out, and by
 * pthreadpool_update_executor() holding app_lock for writing; calls that
 * run on it hold app_lock for reading for their whole length. has_app is
 * set (release) once app_exec exists and never cleared, so a pool that never
 * had one costs its calls one relaxed load. */
struct pthreadpool {
  cpuexec_executor *exec; /* our lease; NULL for a one-thread pool or an application's executor */
  size_t max_threads;     /* the count the pool was made with, >= 1 */
  atomic_size_t threads;  /* most participants of one call, in [1, max_threads] */
  atomic_bool has_app;
  pthread_rwlock_t app_lock;
  struct pthreadpool_executor app;
  void *app_context;
  cpuexec_executor *app_exec; /* a foreign executor on app; NULL until there is one */
  _Atomic(uintptr_t) hint_fn; /* the last parallel call's function ... */
  atomic_size_t hint_items;   /* ... its item count ... */
  atomic_size_t hint_shift;   /* ... and the items each worker slot gave the caller's */
};

/* > 0 while this thread runs pthreadpool tasks: a call made then runs
 * inline. Written only by the thread it belongs to. */
static __thread unsigned pp_task_depth __attribute__((tls_model("initial-exec")));

/* Slots live on the dispatching thread's stack up to this many participants. */
#define PP_STACK_SLOTS 16

/* The diagnostic of a fallback, once per process on stderr: the request
 * came from the environment, so the person who set it should see that it
 * was not applied, and why (the message names the variable). */
static void pp_fallback(size_t threads_count, const char *why) {
  static atomic_flag said = ATOMIC_FLAG_INIT;
  if (!atomic_flag_test_and_set(&said))
    fprintf(stderr,
            "libcpuexec-pthreadpool: pthreadpool_create(%zu): %s; using the default policy (unpinned) with this "
            "thread count, as pthreadpool would\n",
            threads_count, why);
}

/* The resolution a pool made outside any session leases: the process
 * default policy (CPUEXEC_POLICY) with threads_count participants.
 * pthreadpool_create(n) never fails for placement (real pthreadpool starts
 * n - 1 unpinned threads whatever the machine): when CPUEXEC_POLICY asks
 * for something this count cannot have (pinning more threads than cores, an
 * explicit cpu_set of another size) or is malformed, the pool falls back to
 * the default policy with n threads and says why once (pp_fallback). What
 * the fallback cannot cure is returned as it is, without a warning: an
 * allocation failure, or a malformed CPUEXEC_NUM_THREADS for n = 0 (that
 * variable is ours, and an error everywhere). */
static int pp_resolve(size_t threads_count, cpuexec_resolved **out) {
  cpuexec_policy policy;
  int rc = cpuexec_policy_from_environment(&policy);
  if (rc == CPUEXEC_ENOMEM)
    return rc;
  char why[512] = "";
  if (rc != 0) {
    snprintf(why, sizeof why, "%s", cpuexec_error_message());
    cpuexec_policy_init(&policy);
  }
  int32_t threads = threads_count > INT32_MAX ? INT32_MAX : (int32_t)threads_count;
  if (threads_count > 0)
    policy.num_threads = threads;
  if (rc == 0) {
    rc = cpuexec_policy_resolve(&policy, NULL, out);
    if (rc == 0 || rc == CPUEXEC_ENOMEM)
      return rc;
    /* The request came from CPUEXEC_POLICY: the reason names it, unless it
     * names its own variable already (CPUEXEC_NUM_THREADS). */
    const char *reason = cpuexec_error_message();
    snprintf(why, sizeof why, "%s%s", strncmp(reason, "CPUEXEC_", 8) == 0 ? "" : "CPUEXEC_POLICY: ", reason);
    cpuexec_policy_init(&policy);
    if (threads_count > 0)
      policy.num_threads = threads;
  }
  rc = cpuexec_policy_resolve(&policy, NULL, out);
  if (rc == 0)
    pp_fallback(threads_count, why);
  return rc;
}

static struct pthreadpool *pp_allocate(const char *who) {
  struct pthreadpool *pool = calloc(1, sizeof *pool);
  if (pool != NULL && pthread_rwlock_init(&pool->app_lock, NULL) != 0) {
    free(pool);
    pool = NULL;
  }
  if (pool == NULL) {
    cpuexec_error_report(CPUEXEC_ENOMEM, who);
    return NULL;
  }
  pool->max_threads = 1;
  atomic_init(&pool->threads, 1);
  atomic_init(&pool->has_app, false);
  return pool;
}

static void pp_free(struct pthreadpool *pool) {
  pthread_rwlock_destroy(&pool->app_lock);
  free(pool);
}

static void pp_set_max(struct pthreadpool *pool, size_t threads) {
  pool->max_threads = threads;
  atomic_store_explicit(&pool->threads, threads, memory_order_relaxed);
}

CPUEXEC__PP_EXPORT pthreadpool_t pthreadpool_create(size_t threads_count) {
  struct pthreadpool *pool = pp_allocate("pthreadpool_create: out of memory");
  if (pool == NULL)
    return NULL;
  if (threads_count == 1)
    return pool; /* serial: nothing to lease */

  /* Inside a session: lease the session's policy, so the pool shares the
   * session's executor (and outlives the session safely). Elsewhere, and
   * under a foreign executor (no policy to lease; calls made under it still
   * run on it, see cpuexec__pp_run): the process default policy with the
   * requested thread count (pp_resolve). */
  const cpuexec_resolved *resolved;
  cpuexec_resolved *own = NULL;
  cpuexec_executor *current = cpuexec_executor_current();
  if (current != NULL && cpuexec_executor_resolved(current) != NULL) {
    resolved = cpuexec_executor_resolved(current);
  } else {
    if (pp_resolve(threads_count, &own) != 0)
      goto fail;
    resolved = own;
  }
  cpuexec_registry *registry = cpuexec_registry_default(); /* NULL: its message says why */
  int rc = registry != NULL ? cpuexec_registry_acquire(registry, resolved, &pool->exec) : CPUEXEC_ENOMEM;
  if (own != NULL)
    cpuexec_resolved_destroy(own);
  if (rc != 0)
    goto fail;

  size_t effective = cpuexec_executor_effective_threads(pool->exec);
  pp_set_max(pool, threads_count > 0 && threads_count < effective ? threads_count : effective);
  if (pool->max_threads <= 1) {
    cpuexec_executor_release(pool->exec);
    pool->exec = NULL;
    pp_set_max(pool, 1);
  }
  return pool;

fail:
  pp_free(pool);
  return NULL;
}

static bool pp_executor_usable(const struct pthreadpool_executor *executor) {
  return executor != NULL && executor->num_threads != NULL && executor->schedule != NULL;
}

CPUEXEC__PP_EXPORT pthreadpool_t pthreadpool_create_v2(struct pthreadpool_executor *executor,
                                                       void *executor_context, size_t max_num_threads) {
  if (executor == NULL)
    return pthreadpool_create(max_num_threads);
  if (!pp_executor_usable(executor)) {
    cpuexec_error_report(CPUEXEC_EINVAL, "pthreadpool_create_v2: executor: num_threads and schedule are required");
    return NULL;
  }
  int lent = executor->num_threads(executor_context);
  if (lent < 0) {
    cpuexec_error_report(CPUEXEC_EINVAL, "pthreadpool_create_v2: executor->num_threads() is negative");
    return NULL;
  }
  if (max_num_threads == 0) {
    /* The processors this process may use, as the default policy counts them. */
    const cpuexec_resolved *process = NULL;
    max_num_threads =
        cpuexec_policy_resolve_default(&process) == 0 ? (size_t)cpuexec_resolved_effective_threads(process) : 1;
  }
  size_t threads = (size_t)lent + 1 < max_num_threads ? (size_t)lent + 1 : max_num_threads;
  if (threads > INT32_MAX)
    threads = INT32_MAX;
  struct pthreadpool *pool = pp_allocate("pthreadpool_create_v2: out of memory");
  if (pool == NULL)
    return NULL;
  pp_set_max(pool, threads);
  pool->app = *executor;
  pool->app_context = executor_context;
  if (threads > 1) {
    pool->app_exec = cpuexec__pp_app_executor(pool, threads);
    if (pool->app_exec == NULL) {
      pp_free(pool);
      return NULL;
    }
    atomic_store_explicit(&pool->has_app, true, memory_order_release);
  }
  return pool;
}

CPUEXEC__PP_EXPORT void pthreadpool_destroy(pthreadpool_t threadpool) {
  if (threadpool == NULL)
    return;
  if (threadpool->exec != NULL)
    cpuexec_executor_release(threadpool->exec);
  if (threadpool->app_exec != NULL)
    cpuexec_executor_release(threadpool->app_exec);
  pp_free(threadpool);
}

CPUEXEC__PP_EXPORT size_t pthreadpool_get_threads_count(pthreadpool_t threadpool) {
  return threadpool == NULL ? 1 : atomic_load_explicit(&threadpool->threads, memory_order_relaxed);
}

CPUEXEC__PP_EXPORT size_t pthreadpool_set_threads_count(pthreadpool_t threadpool, size_t num_threads) {
  if (threadpool == NULL)
    return 1;
  size_t threads = num_threads == 0 || num_threads > threadpool->max_threads ? threadpool->max_threads : num_threads;
  atomic_store_explicit(&threadpool->threads, threads, memory_order_relaxed);
  return threads;
}

CPUEXEC__PP_EXPORT void pthreadpool_release_executor_threads(struct pthreadpool *threadpool) {
  /* Borrowed threads go back when their share of a call ends (executor.c):
   * between calls the pool holds none. */
  (void)threadpool;
}

CPUEXEC__PP_EXPORT bool pthreadpool_update_executor(pthreadpool_t threadpool, struct pthreadpool_executor *executor,
                                                    void *executor_context) {
  if (threadpool == NULL || !pp_executor_usable(executor))
    return false;
  /* The write lock waits for the calls running on the previous executor. */
  pthread_rwlock_wrlock(&threadpool->app_lock);
  bool same = threadpool->app.num_threads == executor->num_threads &&
              threadpool->app.schedule == executor->schedule && threadpool->app_context == executor_context;
  bool swapped = false;
  if (!same) {
    if (threadpool->app_exec == NULL && threadpool->max_threads > 1)
      threadpool->app_exec = cpuexec__pp_app_executor(threadpool, threadpool->max_threads);
    if (threadpool->app_exec != NULL || threadpool->max_threads <= 1) {
      threadpool->app = *executor;
      threadpool->app_context = executor_context;
      if (threadpool->app_exec != NULL)
        atomic_store_explicit(&threadpool->has_app, true, memory_order_release);
      swapped = true;
    }
  }
  pthread_rwlock_unlock(&threadpool->app_lock);
  return swapped;
}

void cpuexec__pp_app_get(pthreadpool_t pool, struct pthreadpool_executor *ops, void **context) {
  *ops = pool->app;
  *context = pool->app_context;
}

/* Denormals off for the length of a call on one participant. */
typedef struct pp_fpu {
#ifdef CPUEXEC__PP_HAVE_MXCSR
  unsigned mxcsr;
#endif
  int changed;
} pp_fpu;

static inline void pp_fpu_enter(pp_fpu *saved, uint32_t flags) {
  saved->changed = 0;
#ifdef CPUEXEC__PP_HAVE_MXCSR
  if (flags & PTHREADPOOL_FLAG_DISABLE_DENORMALS) {
    saved->mxcsr = _mm_getcsr();
    _mm_setcsr(saved->mxcsr | 0x8040u); /* FTZ (bit 15) and DAZ (bit 6) */
    saved->changed = 1;
  }
#else
  (void)flags;
#endif
}

static inline void pp_fpu_leave(const pp_fpu *saved) {
#ifdef CPUEXEC__PP_HAVE_MXCSR
  if (saved->changed)
    _mm_setcsr(saved->mxcsr);
#else
  (void)saved;
#endif
}

/* Everything a participant reads, in one block on the dispatching thread's
 * stack: a worker's first loads (the task, its slot's address) depend only
 * on the context pointer, so their lines travel together. */
typedef struct pp_dispatch {
  _Alignas(2 * CPUEXEC__PP_CACHE_LINE) cpuexec__pp_task task;
  cpuexec__pp_slot *slots; /* local, or a heap array past PP_STACK_SLOTS */
  size_t slot_count;
  uint32_t flags;
  cpuexec__pp_slot local[PP_STACK_SLOTS];
} pp_dispatch;

static inline void pp_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield" ::: "memory");
#endif
}

static inline uint64_t pp_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Measured on a 2-CPU VM: a stolen item costs thief and owner 150-200 ns
 * each (the slot's line moves twice); a thief that reads the slot every
 * 30-60 ns slows an owner running short items by a quarter to a half, every
 * 120 ns still measurably; 250-500 ns keep the shape benchmarks at their
 * best (400 by a hair) while a finished slot is still noticed soon. */
#define PP_STEAL_NS 250u /* steal from an owner slower per item than this */
#define PP_POLL_NS 400u  /* how often a waiting thief looks at the slot */

/* Spins until the clock reads `until`; returns the time read. */
static uint64_t pp_wait_until(uint64_t until) {
  for (;;) {
    uint64_t t = pp_now_ns();
    if (t >= until)
      return t;
    pp_relax();
  }
}

/* How far the owner of slot has claimed (begin + its claims): `end` and
 * `remaining` both drop by one per stolen item, so only the owner's claims
 * move their difference. */
static inline size_t pp_owner_front(cpuexec__pp_slot *slot) {
  return atomic_load_explicit(&slot->end, memory_order_relaxed) -
         (size_t)atomic_load_explicit(&slot->remaining, memory_order_relaxed);
}

/* The owner's time per item, seen as `front` moving to `now_front` in
 * `elapsed` ns; 0 (unknown) when it just started, whose first item carries
 * its start-up. */
static inline uint64_t pp_pace(uint64_t elapsed, size_t front, size_t now_front, size_t begin) {
  if (front == begin || now_front <= front)
    return 0;
  return elapsed / (now_front - front);
}

/* Takes the unclaimed items of another participant's slot from its back.
 *
 * A stolen item moves the slot's line to the thief and back to the owner,
 * which costs both more than a short item takes to run. So a patient thief
 * only watches an owner that claims items faster than PP_STEAL_NS each,
 * reading its line every PP_POLL_NS, and takes items from an owner that has
 * not started, has not moved for PP_STEAL_NS (blocked in an item,
 * preempted) or runs items slower than that. It takes them one at a time
 * until the owner moves again, so any item not yet started can still run
 * anywhere, and an owner blocked for good loses all its items. */
static void pp_take(const cpuexec__pp_task *task, size_t thread, cpuexec__pp_slot *slot, int patient) {
  /* A plain load first keeps empty slots' lines shared. */
  if (atomic_load_explicit(&slot->remaining, memory_order_relaxed) <= 0)
    return;
  size_t front = pp_owner_front(slot);
  uint64_t t = patient ? pp_now_ns() : 0, moved = t; /* when front last moved, as seen */
  uint64_t per_item = 0;                             /* the owner's pace; 0: not seen yet */
  for (;;) {
    if (patient && front != slot->begin && per_item < PP_STEAL_NS) {
      t = pp_wait_until(t + PP_POLL_NS);
      if (atomic_load_explicit(&slot->remaining, memory_order_relaxed) <= 0)
        return;
      size_t now_front = pp_owner_front(slot);
      if (now_front != front) {
        per_item = pp_pace(t - moved, front, now_front, slot->begin);
        front = now_front;
        moved = t;
        continue;
      }
      if (t - moved < PP_STEAL_NS)
        continue;
    }
    do {
      if (atomic_fetch_sub_explicit(&slot->remaining, 1, memory_order_relaxed) <= 0)
        return;
      size_t flat = atomic_fetch_sub_explicit(&slot->end, 1, memory_order_relaxed) - 1;
      task->shape->one(task, thread, flat);
    } while (!patient || pp_owner_front(slot) == front);
    /* The owner moved: judge its pace again. */
    t = pp_now_ns();
    size_t now_front = pp_owner_front(slot);
    per_item = pp_pace(t - moved, front, now_front, slot->begin);
    front = now_front;
    moved = t;
  }
}

/* A claim of about half of slot's unclaimed tiles (dynamic shapes); 0 when
 * none is left. fetch_sub may take remaining below zero: the claim that does
 * gets only what was left, so the claims add up to the slot exactly. */
static size_t pp_claim_run(cpuexec__pp_slot *slot) {
  long long left = atomic_load_explicit(&slot->remaining, memory_order_relaxed);
  if (left <= 0)
    return 0;
  long long want = (left + 1) / 2;
  long long had = atomic_fetch_sub_explicit(&slot->remaining, want, memory_order_relaxed);
  if (had <= 0)
    return 0;
  return (size_t)(had < want ? had : want);
}

/* The owner's runs, from the front of its slot (only it takes from there). */
static void pp_own_runs(const cpuexec__pp_task *task, size_t thread, cpuexec__pp_slot *slot) {
  size_t front = slot->begin, got;
  while ((got = pp_claim_run(slot)) > 0) {
    task->shape->chunk(task, thread, front, got);
    front += got;
  }
}

/* A thief's runs, from the back of another slot. A stolen run is worth its
 * line's trip: dynamic tiles are long, so there is no patience here. */
static void pp_take_runs(const cpuexec__pp_task *task, size_t thread, cpuexec__pp_slot *slot) {
  size_t got;
  while ((got = pp_claim_run(slot)) > 0) {
    size_t first = atomic_fetch_sub_explicit(&slot->end, got, memory_order_relaxed) - got;
    task->shape->chunk(task, thread, first, got);
  }
}

/* Takes unclaimed items from every other slot, starting after `after`,
 * until all are claimed. */
static void pp_steal(const pp_dispatch *d, size_t thread, size_t after, int patient) {
  for (size_t k = 1; k <= d->slot_count; k++) {
    size_t victim = after + k;
    if (victim >= d->slot_count)
      victim -= d->slot_count;
    if (d->task.shape->chunk != NULL)
      pp_take_runs(&d->task, thread, &d->slots[victim]);
    else
      pp_take(&d->task, thread, &d->slots[victim], patient);
  }
}

/* The executor's range callback: [begin, end) are slot numbers. */
static int pp_run_slots(void *ctx, int64_t begin, int64_t end) {
  pp_dispatch *d = ctx;
  const cpuexec__pp_task *task = &d->task;
  /* Start moving our slot's line here (for writing) while the task's lines
   * arrive; the first claim then finds it. */
  __builtin_prefetch(&d->slots[begin], 1);
  size_t thread = cpuexec_participant_index();
  pp_task_depth++;
  for (int64_t s = begin; s < end; s++) {
    if (task->shape->chunk != NULL)
      pp_own_runs(task, thread, &d->slots[s]);
    else
      task->shape->own(task, thread, &d->slots[s]);
  }
  /* How far the next slot's owner is behind us (one relaxed load of a line
   * pp_steal reads next anyway). */
  cpuexec__pp_slot *next = &d->slots[(size_t)end < d->slot_count ? (size_t)end : 0];
  long long left = atomic_load_explicit(&next->remaining, memory_order_relaxed);
  d->slots[end - 1].ahead = left > 0 ? (size_t)left : 0;
  pp_steal(d, thread, (size_t)end - 1, 1);
  pp_task_depth--;
  return 0;
}

static void pp_run_serial(const cpuexec__pp_task *task, uint32_t flags) {
  pp_fpu fpu;
  pp_fpu_enter(&fpu, flags);
  pp_task_depth++;
  if (task->shape->chunk != NULL)
    task->shape->chunk(task, 0, 0, task->items); /* every tile in one run: the fewest calls */
  else
    task->shape->run(task, 0, 0, task->items);
  pp_task_depth--;
  pp_fpu_leave(&fpu);
}

/* The caller's head start. The dispatching thread starts on its slot at
 * once; a worker starts 100-250 ns later and must first pull the lines the
 * caller wrote, so with an even split of short items the caller idles at the
 * end while the worker finishes. Each worker slot therefore gives `shift`
 * items to the caller's slot (slot 0). The right shift is a time over the
 * item's duration, both unknown here, so it is learnt from the previous call
 * of the same function and item count on this pool: the caller notes how
 * many items slot 1 still had when it finished its own, the last worker how
 * many slot 0 still had; half their difference corrects the shift. Items
 * longer than the head start converge to no shift; a wrong shift costs at
 * most PP_SHIFT_MAX_DIV-th of a slot, and idle thieves still take from a slow
 * owner (pp_take). */
#define PP_SHIFT_MAX_DIV 4

static size_t pp_split(pthreadpool_t pool, const cpuexec__pp_task *task) {
  if (atomic_load_explicit(&pool->hint_fn, memory_order_relaxed) != (uintptr_t)task->fn ||
      atomic_load_explicit(&pool->hint_items, memory_order_relaxed) != task->items)
    return 0;
  return atomic_load_explicit(&pool->hint_shift, memory_order_relaxed);
}

static void pp_learn(pthreadpool_t pool, const cpuexec__pp_task *task, const cpuexec__pp_slot *slots,
                     size_t participants, size_t shift, size_t base) {
  /* caller_ahead: slot 1's unclaimed items when the caller finished;
   * worker_ahead: slot 0's when the last worker finished its own. */
  size_t caller_ahead = slots[0].ahead, worker_ahead = slots[participants - 1].ahead;
  size_t next = shift;
  if (caller_ahead > worker_ahead)
    next += (caller_ahead - worker_ahead + 1) / 2;
  else
    next -= (worker_ahead - caller_ahead + 1) / 2 < shift ? (worker_ahead - caller_ahead + 1) / 2 : shift;
  if (next > base / PP_SHIFT_MAX_DIV)
    next = base / PP_SHIFT_MAX_DIV;
  atomic_store_explicit(&pool->hint_fn, (uintptr_t)task->fn, memory_order_relaxed);
  atomic_store_explicit(&pool->hint_items, task->items, memory_order_relaxed);
  atomic_store_explicit(&pool->hint_shift, next, memory_order_relaxed);
}

/* Returns 0 when every item ran; non-zero when nothing could be dispatched
 * (the caller then runs the task serially). */
static int pp_dispatch_parallel(pthreadpool_t pool, cpuexec_executor *exec, const cpuexec__pp_task *task,
                                size_t participants, uint32_t flags) {
  pp_dispatch d; /* no initializer: it would clear every local slot */
  cpuexec__pp_slot *slots = d.local;
  if (participants > PP_STACK_SLOTS) {
    slots = pp_aligned_alloc(sizeof *slots, participants * sizeof *slots);
    if (slots == NULL)
      return -1;
  }
  d.task = *task;
  d.slots = slots;
  d.slot_count = participants;
  d.flags = flags;
  size_t base = d.task.items / participants, extra = d.task.items % participants, first = 0;
  size_t shift = task->shape->chunk != NULL ? 0 : pp_split(pool, task);
  if (shift > base / PP_SHIFT_MAX_DIV)
    shift = base / PP_SHIFT_MAX_DIV;
  for (size_t s = 0; s < participants; s++) {
    size_t count = base + (s < extra);
    count = s == 0 ? count + shift * (participants - 1) : count - shift;
    slots[s].begin = first;
    slots[s].ahead = 0;
    atomic_init(&slots[s].remaining, (long long)count);
    atomic_init(&slots[s].end, first + count);
    first += count;
  }
  /* PTHREADPOOL_FLAG_DISABLE_DENORMALS: the caller turns denormals off for
   * the call and the region hands its floating-point control state to every
   * worker (CPUEXEC_FOR_INHERIT_FP_ENV), which restores its own
   * after; the caller's comes back below. */
  pp_fpu fpu;
  pp_fpu_enter(&fpu, flags);
  int rc = cpuexec_parallel_for_flags(exec, (int64_t)participants, 1, &d, pp_run_slots, (uint32_t)participants,
                                      fpu.changed ? CPUEXEC_FOR_INHERIT_FP_ENV : 0);
  if (rc != 0) {
    /* Nothing is running any more (cpuexec_parallel_for waits for every
     * started callback); the caller takes every unclaimed item. This is the
     * path in a forked child, where the inherited executor refuses work. */
    pp_task_depth++;
    pp_steal(&d, 0, participants - 1, 0);
    pp_task_depth--;
  }
  pp_fpu_leave(&fpu);
  if (rc == 0 && task->shape->chunk == NULL) {
    pp_learn(pool, task, slots, participants, shift, base);
  }
  if (slots != d.local)
    pp_aligned_free(slots);
  return 0;
}

void cpuexec__pp_run(pthreadpool_t threadpool, const cpuexec__pp_task *task, uint32_t flags) {
  if (task->items == 0)
    return;
  /* Inside a task (ours, or any libcpuexec region with other participants)
   * the call runs inline, as libcpuexec runs every nested call. */
  size_t threads = threadpool != NULL ? atomic_load_explicit(&threadpool->threads, memory_order_relaxed) : 1;
  if (threads > 1 && task->items > 1 && pp_task_depth == 0 && cpuexec_participant_count() <= 1) {
    if (atomic_load_explicit(&threadpool->has_app, memory_order_acquire)) {
      /* The application's executor, even inside a session: it was given
       * for this pool. Held for reading so that an update waits for us. */
      pthread_rwlock_rdlock(&threadpool->app_lock);
      size_t participants = threads < task->items ? threads : task->items;
      int rc = pp_dispatch_parallel(threadpool, threadpool->app_exec, task, participants, flags);
      pthread_rwlock_unlock(&threadpool->app_lock);
      if (rc == 0)
        return;
      pp_run_serial(task, flags);
      return;
    }
    cpuexec_executor *exec = cpuexec_executor_current();
    if (exec == NULL)
      exec = threadpool->exec;
    size_t participants = threads;
    size_t effective = cpuexec_executor_effective_threads(exec);
    if (participants > effective)
      participants = effective;
    if (participants > task->items)
      participants = task->items;
    if (participants > 1 && pp_dispatch_parallel(threadpool, exec, task, participants, flags) == 0)
      return;
  }
  pp_run_serial(task, flags);
}

void cpuexec__pp_task_grid(cpuexec__pp_task *task, uint32_t dims, const size_t *range, const size_t *tile) {
  task->dims = dims;
  task->items = 1;
  for (uint32_t d = 0; d < dims; d++) {
    size_t t = tile != NULL && tile[d] > 0 ? tile[d] : 1;
    task->range[d] = range[d];
    task->tile[d] = t;
    task->tiles[d] = range[d] / t + (range[d] % t != 0);
    task->items *= task->tiles[d];
  }
}
