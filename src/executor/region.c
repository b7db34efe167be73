/* Running one parallel region: cpuexec_parallel_for and what each
 * participant does inside it.
 *
 * Work distribution. The index space is cut into chunks of `grain` indices
 * (the last one shorter). Participant p owns a contiguous block of chunks
 * (its static share, for locality): the first chunk of its block is
 * reserved for it, then it claims the rest of its block half of what
 * remains at a time, then steals from the other blocks the same way, in
 * ring order. A claim is one relaxed fetch_add on the block's cursor; a
 * participant reads a cursor before adding to it, so an exhausted block
 * costs a load, not a write.
 *
 * Nobody waits for a worker that has not started (doc/spinning.md). A
 * participant that meets, in its ring, a worker that has not checked in
 * (its epoch still open, executor_internal.h) closes that worker's region
 * with one compare-exchange and runs the reserved chunk itself, then the
 * rest of that block. The caller then waits only for the workers that
 * joined: a parked or descheduled worker costs the region its share's time
 * on a running thread, never the worker's wake-up. With
 * CPUEXEC_FOR_EVERY_PARTICIPANT nobody takes over and the caller waits for
 * every admitted worker, as the executor always did before. */
#include <errno.h>
#include <string.h>

#include "core/error.h"
#include "executor_internal.h"
#include "os/os.h"
#include "participant.h"
#include "region_lanes.h"
#include "wake_tree.h"

/* The caller's processor as last pinned by an explicit policy (-1: never),
 * so a dispatch re-pins only when the thread is not already there. */
static __thread int32_t pinned_caller_processor __attribute__((tls_model("initial-exec"))) = -1;

/* The partition of a region's chunks into participant blocks: block p is
 * [first(p), first(p) + size(p)), the first rem blocks one chunk longer. */
typedef struct partition {
  int64_t chunks, q, rem;
} partition;

static inline partition partition_of(int64_t total, int64_t grain, uint32_t participants) {
  partition pt;
  pt.chunks = total / grain + (total % grain != 0);
  pt.q = pt.chunks / participants;
  pt.rem = pt.chunks % participants;
  return pt;
}

static inline int64_t block_first(const partition *pt, uint32_t p) {
  return (int64_t)p * pt->q + ((int64_t)p < pt->rem ? (int64_t)p : pt->rem);
}

static inline int64_t block_size(const partition *pt, uint32_t p) { return pt->q + ((int64_t)p < pt->rem); }

/* Claims about half of what remains in s: chunks [*lo, *hi). */
static inline bool claim(cpuexec__slot *s, int64_t *lo, int64_t *hi) {
  int64_t next = atomic_load_explicit(&s->next, memory_order_relaxed);
  if (next >= s->end) return false;
  int64_t take = (s->end - next + 1) / 2;
  int64_t got = atomic_fetch_add_explicit(&s->next, take, memory_order_relaxed);
  if (got >= s->end) return false;
  *lo = got;
  *hi = got + take < s->end ? got + take : s->end;
  return true;
}

/* Runs chunks [lo, hi) unless the region already failed; false to stop. */
static inline bool run_chunks(struct cpuexec_executor *exec, const cpuexec__slot *own, const partition *pt,
                              int64_t lo, int64_t hi) {
  if (atomic_load_explicit(&exec->error, memory_order_relaxed) != 0) return false;
  int64_t end = hi >= pt->chunks ? own->total : hi * own->grain;
  int rc = cpuexec__participant_invoke(own->fn, own->ctx, lo * own->grain, end);
  if (rc != 0) {
    int expected = 0;
    atomic_compare_exchange_strong_explicit(&exec->error, &expected, rc, memory_order_relaxed,
                                            memory_order_relaxed);
    return false;
  }
  return true;
}

/* Closes victim's region when its worker has not checked in; true when this
 * participant did, and so owns the reserved chunk. A relaxed load first: a
 * worker that joined costs a read of its line, not a write. */
static inline bool take_over(cpuexec__slot *victim) {
  uint32_t e = atomic_load_explicit(&victim->epoch, memory_order_relaxed);
  return cpuexec__epoch_open(e) &&
         atomic_compare_exchange_strong_explicit(&victim->epoch, &e, e + 3u, memory_order_relaxed,
                                                 memory_order_relaxed);
}

static void run_share(struct cpuexec_executor *exec, uint32_t index) {
  cpuexec__slot *own = &exec->slots[index];
  uint32_t participants = own->participants;
  partition pt = {own->chunks, own->q, own->rem};
  int64_t lo = block_first(&pt, index), hi = lo + 1, clo, chi;
  bool pending = claim(own, &clo, &chi);
  if (pending && clo == hi) {
    hi = chi;
    pending = false;
  }
  if (!run_chunks(exec, own, &pt, lo, hi)) return;
  if (pending && !run_chunks(exec, own, &pt, clo, chi)) return;
  while (claim(own, &clo, &chi))
    if (!run_chunks(exec, own, &pt, clo, chi)) return;
  uint64_t taken = 0;
  for (uint32_t k = 1; k < participants; k++) {
    uint32_t victim = index + k;
    if (victim >= participants) victim -= participants;
    cpuexec__slot *v = &exec->slots[victim];
    /* Participant 0 always runs: only workers can be late. */
    if (victim != 0 && own->takeover && take_over(v)) {
      taken++;
      int64_t first = block_first(&pt, victim);
      if (!run_chunks(exec, own, &pt, first, first + 1)) break;
    }
    /* A block of one chunk holds only its owner's reserved chunk: skip it
     * without touching its line. */
    if (block_size(&pt, victim) <= 1) continue;
    bool ok = true;
    while (ok && claim(v, &clo, &chi)) ok = run_chunks(exec, own, &pt, clo, chi);
    if (!ok) break;
  }
  if (taken) CPUEXEC__COUNT_AS(cpuexec__counters_of(exec), index, takeovers, taken);
}

void cpuexec__region_participate(struct cpuexec_executor *exec, uint32_t index) {
  cpuexec__participant p;
  cpuexec__participant_enter(&p, exec, index, exec->slots[index].participants);
  if (__builtin_expect(exec->slots[index].fpenv, 0) && index > 0) {
    cpuexec__fpenv own; /* the caller's state for the region (fpenv.h) */
    cpuexec__fpenv_apply(&exec->slots[index].env, &own);
    run_share(exec, index);
    cpuexec__fpenv_restore(&own);
  } else {
    run_share(exec, index);
  }
  cpuexec__participant_leave(&p);
}

void cpuexec__region_leave(struct cpuexec_executor *exec, uint32_t index) {
  cpuexec__finish_count_leave(exec->finish, index);
}

/* After the caller's share: closes every worker region still open (a
 * failed region may have stopped before the ring reached it), counts in
 * each group's tally the workers that joined, and sets *waited_cpu to where
 * one of them runs. */
static void settle_workers(struct cpuexec_executor *exec, uint32_t participants,
                           const _Atomic int32_t **waited_cpu) {
  cpuexec__finish_tally *tally = exec->finish_tally;
  for (uint32_t g = 0; g <= cpuexec__finish_group_of(participants - 1); g++) tally[g].expect = tally[g].target;
  bool first = true;
  for (uint32_t k = 1; k < participants; k++) {
    cpuexec__slot *s = &exec->slots[k];
    uint32_t e = atomic_load_explicit(&s->epoch, memory_order_relaxed);
    while (cpuexec__epoch_open(e) &&
           !atomic_compare_exchange_weak_explicit(&s->epoch, &e, e + 3u, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
    if ((e & 3u) == CPUEXEC__EPOCH_JOINED) {
      tally[cpuexec__finish_group_of(k)].expect++;
      if (first) *waited_cpu = &s->cpu;
      first = false;
    }
  }
}

/* Waits, group by group, for the joined workers' finishing adds; returns
 * whether the caller had to wait, and *slept whether it parked. */
static bool wait_for_workers(struct cpuexec_executor *exec, uint32_t participants,
                             const _Atomic int32_t *waited_cpu, bool *slept) {
  bool waited = false;
  *slept = false;
  for (uint32_t g = 0; g <= cpuexec__finish_group_of(participants - 1); g++) {
    cpuexec__finish_group *group = &exec->finish[g];
    uint32_t expect = exec->finish_tally[g].expect;
    if (atomic_load_explicit(&group->finished, memory_order_acquire) == expect) continue;
    bool parked;
    atomic_store_explicit(&group->goal, expect, memory_order_relaxed);
    cpuexec__wait_until_equal(&group->finished, expect, &group->caller_parked, &exec->spin, waited_cpu, &parked);
    waited = true;
    *slept = *slept || parked;
  }
  return waited;
}

/* The serial loop on the calling thread, as one participant of one. */
static int run_inline(struct cpuexec_executor *exec, int64_t total, void *ctx, cpuexec_range_fn fn) {
  return cpuexec__participant_call(exec, 0, 1, ctx, fn, 0, total);
}

static inline void notify(const cpuexec__observer *obs, const struct cpuexec_executor *exec, uint32_t requested,
                          uint32_t admitted, int64_t total, int64_t grain, bool ran_inline) {
  cpuexec_dispatch_event ev = {
      .executor_id = exec->id,
      .effective_threads = exec->threads,
      .requested_participants = requested,
      .admitted_participants = admitted,
      .total = total,
      .grain = grain,
      .ran_inline = ran_inline,
  };
  obs->fn(obs->user, &ev);
}

static int pin_caller(const struct cpuexec_executor *exec) {
  int32_t cpu = exec->caller_processor;
  if (pinned_caller_processor == cpu) return 0;
  int rc = cpuexec__os_pin_self(cpu);
  if (rc == ENOTSUP)
    return cpuexec__fail(CPUEXEC_ENOTSUP,
                         "caller affinity: processor %d: the %s OS backend cannot pin threads; resolve the policy "
                         "on this process's topology, or use affinity_policy=none",
                         cpu, cpuexec__os_backend());
  if (rc != 0)
    return cpuexec__fail(CPUEXEC_EAFFINITY,
                         "caller affinity: processor %d could not be applied to the calling thread (%s); "
                         "the process CPU set may have changed since the policy was resolved",
                         cpu, strerror(rc));
  pinned_caller_processor = cpu;
  return 0;
}

/* The caller is free (not placed) but runs on the processor a pinned worker
 * of this region needs: nothing can run in parallel, and measured on a busy
 * 2-CPU VM the scheduler often leaves the pair there for whole runs (2.5-4 us
 * per empty region instead of 0.3-0.4). Narrowing the caller's CPU set to
 * exclude the admitted workers' processors moves it at once; restoring the
 * set right after leaves its affinity exactly as it was, only its current
 * processor changed, as any migration by the scheduler would. Costs two
 * system calls, only when the collision is seen. Returns where the caller
 * runs now. */
static int32_t step_off_worker_processor(const struct cpuexec_executor *exec, int32_t cpu, uint32_t participants) {
  const cpuexec_resolved *r = exec->resolved;
  uint32_t n = participants - 1 < r->worker_processor_count ? participants - 1 : r->worker_processor_count;
  int32_t now = cpuexec__os_step_off(r->worker_processors, n);
  return now >= 0 ? now : cpu;
}

/* Writes every participant's slot: all of them before any epoch moves, so
 * a worker that acquires its epoch sees every block it may steal from. */
static void publish_slots(struct cpuexec_executor *exec, int64_t total, int64_t grain, void *ctx,
                          cpuexec_range_fn fn, uint32_t participants, bool takeover,
                          const cpuexec__fpenv *env) {
  partition pt = partition_of(total, grain, participants);
  for (uint32_t p = 0; p < participants; p++) {
    cpuexec__slot *s = &exec->slots[p];
    int64_t first = block_first(&pt, p);
    s->fn = fn;
    s->ctx = ctx;
    s->total = total;
    s->grain = grain;
    atomic_store_explicit(&s->next, first + 1, memory_order_relaxed);
    s->end = first + block_size(&pt, p);
    s->chunks = pt.chunks;
    s->q = pt.q;
    s->rem = pt.rem;
    s->participants = participants;
    s->takeover = takeover;
    s->fpenv = env != NULL;
    if (env) s->env = *env;
  }
}

/* A range run with the caller's floating-point state (foreign executors). */
typedef struct fp_call {
  cpuexec_range_fn fn;
  void *ctx;
  cpuexec__fpenv env;
} fp_call;

static int fp_range(void *arg, int64_t begin, int64_t end) {
  const fp_call *call = arg;
  cpuexec__fpenv own;
  cpuexec__fpenv_apply(&call->env, &own);
  int rc = call->fn(call->ctx, begin, end);
  cpuexec__fpenv_restore(&own);
  return rc;
}

/* Lane 0's region (the caller holds dispatch_lock, and it is released
 * here): the slots, the epochs, the caller's share, the settling and the
 * wait. Returns the region's callback result. */
static int run_lane0(struct cpuexec_executor *exec, int64_t total, int64_t grain, void *ctx, cpuexec_range_fn fn,
                     uint32_t participants, bool every, const cpuexec__fpenv *env) {
  cpuexec__counters_block *counters = cpuexec__counters_of(exec);
  /* Where the caller runs, for workers that yield when they share its
   * processor (wait.h); written only when it changes, so the line stays
   * shared. */
  int32_t cpu = cpuexec__os_current_cpu();
  if (exec->spin.adaptive && cpu >= 0 && cpu == atomic_load_explicit(&exec->first_worker_cpu, memory_order_relaxed) &&
      !exec->pin_caller)
    cpu = step_off_worker_processor(exec, cpu, participants);
  if (atomic_load_explicit(&exec->caller_cpu, memory_order_relaxed) != cpu)
    atomic_store_explicit(&exec->caller_cpu, cpu, memory_order_relaxed);
  publish_slots(exec, total, grain, ctx, fn, participants, !every, env);
  uint64_t wakes = 0;
  if (participants >= exec->wake_tree_min) { /* wide regions: wake_tree.h */
    /* Children first: a parent that joins early must find its children's
     * epochs already open (wake_tree.h). */
    for (uint32_t k = participants - 1; k >= 1; k--) cpuexec__epoch_admit(&exec->slots[k].epoch);
    wakes = cpuexec__wake_tree_children(exec, 0, participants);
  } else {
    for (uint32_t k = 1; k < participants; k++) wakes += cpuexec__epoch_admit_and_wake(&exec->slots[k]);
  }
  cpuexec__region_participate(exec, 0);
  const _Atomic int32_t *waited_cpu = &exec->first_worker_cpu;
  uint32_t ran = participants; /* the caller and the workers that checked in */
  /* Every worker joined and finished: nothing to settle (the common case
   * of a hot pool reads one counter per group of workers). */
  if (!cpuexec__finish_count_all_done(exec->finish, exec->finish_tally, participants)) {
    if (!every) settle_workers(exec, participants, &waited_cpu);
    bool slept;
    uint64_t start = counters ? cpuexec__os_now_ns() : 0;
    if (wait_for_workers(exec, participants, waited_cpu, &slept)) {
      counters = cpuexec__counters_of(exec);
      CPUEXEC__COUNT(counters, caller_waits, 1);
      if (slept)
        CPUEXEC__COUNT(counters, parks, 1);
      else
        CPUEXEC__COUNT(counters, spins_found_work, 1);
      if (start) CPUEXEC__COUNT(counters, caller_wait_ns, cpuexec__os_now_ns() - start);
    }
    if (counters) {
      ran = 1;
      for (uint32_t g = 0; g <= cpuexec__finish_group_of(participants - 1); g++)
        ran += exec->finish_tally[g].expect - exec->finish_tally[g].target;
    }
  }
  CPUEXEC__COUNT(counters, participants_run, ran);
  for (uint32_t g = 0; g <= cpuexec__finish_group_of(participants - 1); g++)
    exec->finish_tally[g].target = exec->finish_tally[g].expect;
  if (wakes) CPUEXEC__COUNT(counters, wakeups, wakes);
  int rc = atomic_load_explicit(&exec->error, memory_order_relaxed);
  if (rc != 0) atomic_store_explicit(&exec->error, 0, memory_order_relaxed);
  pthread_mutex_unlock(&exec->dispatch_lock);
  return rc;
}

CPUEXEC_EXPORT int cpuexec_parallel_for(cpuexec_executor *exec, int64_t total, int64_t grain, void *ctx,
                                        cpuexec_range_fn fn, int32_t max_participants) {
  return cpuexec_parallel_for_flags(exec, total, grain, ctx, fn, max_participants, 0);
}

CPUEXEC_EXPORT int cpuexec_parallel_for_flags(cpuexec_executor *exec, int64_t total, int64_t grain, void *ctx,
                                              cpuexec_range_fn fn, int32_t max_participants, uint32_t flags) {
  if (flags & ~(CPUEXEC_FOR_EVERY_PARTICIPANT | CPUEXEC_FOR_INHERIT_FP_ENV))
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "flags: 0x%x has unknown bits 0x%x; the flags are CPUEXEC_FOR_EVERY_PARTICIPANT (0x%x) and "
                         "CPUEXEC_FOR_INHERIT_FP_ENV (0x%x)",
                         flags, flags & ~(CPUEXEC_FOR_EVERY_PARTICIPANT | CPUEXEC_FOR_INHERIT_FP_ENV),
                         CPUEXEC_FOR_EVERY_PARTICIPANT, CPUEXEC_FOR_INHERIT_FP_ENV);
  if (exec && exec->fork_generation != cpuexec__fork_generation_now())
    return cpuexec__fail(CPUEXEC_EFORKED,
                         "executor %llu: created by the parent process before fork(); create a new one in the child",
                         (unsigned long long)exec->id);
  if (grain < 1)
    return cpuexec__fail(CPUEXEC_EINVAL, "grain: %lld is below 1; use at least 1 index per range",
                         (long long)grain);
  if (!fn) return cpuexec__fail(CPUEXEC_EINVAL, "fn: NULL; a range callback is required");
  if (max_participants < 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "max_participants: %d is negative; use 0 for the executor's limit",
                         (int)max_participants);
  if (total <= 0) return 0;
  if (!exec) return cpuexec__callback_rc(run_inline(NULL, total, ctx, fn));

  cpuexec__counters_block *counters = cpuexec__counters_of(exec);
  const cpuexec__observer *obs = atomic_load_explicit(&cpuexec__dispatch_observer, memory_order_acquire);
  if (cpuexec__participant_nested()) {
    CPUEXEC__COUNT(counters, nested_inline, 1);
    if (obs) notify(obs, exec, max_participants, 1, total, grain, true);
    return cpuexec__callback_rc(run_inline(exec, total, ctx, fn));
  }
  int64_t chunks = total / grain + (total % grain != 0);
  uint32_t participants = exec->threads;
  if (max_participants != 0 && (uint32_t)max_participants < participants) participants = (uint32_t)max_participants;
  if (chunks < (int64_t)participants) participants = (uint32_t)chunks;
  if (exec->pin_caller) {
    int rc = pin_caller(exec);
    if (rc != 0) return rc;
  }
  if (participants == 1) {
    CPUEXEC__COUNT(counters, limited_inline, 1);
    if (obs) notify(obs, exec, max_participants, 1, total, grain, true);
    return cpuexec__callback_rc(run_inline(exec, total, ctx, fn));
  }
  if (obs) notify(obs, exec, max_participants, participants, total, grain, false);
  CPUEXEC__COUNT(counters, dispatches, 1);
  if (exec->foreign) {
    if (!(flags & CPUEXEC_FOR_INHERIT_FP_ENV))
      return cpuexec__foreign_run(exec, total, grain, ctx, fn, participants);
    /* A foreign pool's threads are not ours to prepare per region: every
     * range carries the caller's state instead (fpenv.h). */
    fp_call call = {.fn = fn, .ctx = ctx};
    cpuexec__fpenv_capture(&call.env);
    return cpuexec__foreign_run(exec, total, grain, &call, fp_range, participants);
  }

  /* Which lane runs it (region_lanes.h): lane 0 when its lock is free, the
   * path of a lone caller; another lane beside it when not; past the bound,
   * the serial loop on this thread (a strict region waits for lane 0). */
  bool every = (flags & CPUEXEC_FOR_EVERY_PARTICIPANT) != 0;
  cpuexec__fpenv env;
  bool fpenv = (flags & CPUEXEC_FOR_INHERIT_FP_ENV) || exec->resolved->inherit_fpenv;
  if (fpenv) cpuexec__fpenv_capture(&env);
  if (every) pthread_mutex_lock(&exec->strict_lock);
  const cpuexec__fpenv *carried = fpenv ? &env : NULL;
  int rc;
  if (pthread_mutex_trylock(&exec->dispatch_lock) == 0) {
    rc = run_lane0(exec, total, grain, ctx, fn, participants, every, carried);
  } else if (!cpuexec__lane_run(exec, total, grain, ctx, fn, participants, every, carried, &rc)) {
    if (every) {
      pthread_mutex_lock(&exec->dispatch_lock);
      rc = run_lane0(exec, total, grain, ctx, fn, participants, every, carried);
    } else {
      CPUEXEC__COUNT(cpuexec__counters_of(exec), bound_inline, 1);
      rc = run_inline(exec, total, ctx, fn);
    }
  }
  if (every) pthread_mutex_unlock(&exec->strict_lock);
  return cpuexec__callback_rc(rc);
}
