/* The executor's lifetime: creating, pinning and joining its workers, and
 * the loop each worker runs. Dispatch lives in region.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/debug.h"
#include "core/error.h"
#include "executor_internal.h"
#include "os/os.h"
#include "region_lanes.h"
#include "thread_state.h"
#include "wake_tree.h"

#if CPUEXEC_TEST_HOOKS
_Atomic int cpuexec__test_fail_thread_create_at = 0;
#endif

/* Process-local executor ids: never reused, never 0. */
static _Atomic uint64_t next_executor_id = 1;

#if CPUEXEC_TEST_HOOKS
_Atomic(cpuexec__worker_gate_fn) cpuexec__test_worker_gate; /* NULL: static storage starts zeroed */
#endif

/* Worker k's loop: wait for an open region, check in, run, leave. A worker
 * that finds its region taken (see executor_internal.h) has read only its
 * epoch and goes straight back to waiting. */
static void *worker_main(void *arg) {
  cpuexec__worker *w = arg;
  struct cpuexec_executor *exec = w->exec;
  cpuexec__slot *slot = &exec->slots[w->index];
  /* Cadence windows (cadence.h) are timed parks of a millisecond or so: the
   * default 50 us slack would make them wake late. */
  cpuexec__os_timer_slack(CPUEXEC__CADENCE_TIMER_SLACK_NS);
  cpuexec__cadence_hint hint = {0, 0};
  uint32_t e = 0; /* the latest epoch value seen, without a nudge */
  for (;;) {
    /* Open lanes (region_lanes.h) while lane 0 has nothing new for this
     * worker. On the one-caller path lanes_busy is 0: one load of a line
     * nobody writes. */
    if (atomic_load_explicit(&exec->lanes_busy, memory_order_relaxed) != 0 &&
        cpuexec__epoch_clear_nudge(&slot->epoch, atomic_load_explicit(&slot->epoch, memory_order_relaxed)) == e &&
        cpuexec__lanes_serve(exec, w->index))
      continue;
    bool joined = false;
    cpuexec__wait_report seen;
    uint32_t now = cpuexec__wait_while_equal(&slot->epoch, e, &slot->parked, &exec->spin, &exec->caller_cpu, &hint, &seen);
    if (now & CPUEXEC__EPOCH_NUDGE) {
      now = cpuexec__epoch_clear_nudge(&slot->epoch, now);
      if (now == e) continue; /* a nudge only: the lanes, at the top */
    }
    e = now;
    while (cpuexec__epoch_open(e)) {
      cpuexec__worker_gate_fn gate = CPUEXEC__TEST_HOOK(cpuexec__test_worker_gate, NULL);
      if (gate) {
        gate(exec, w->index);
        e = atomic_load_explicit(&slot->epoch, memory_order_relaxed);
        if (!cpuexec__epoch_open(e)) break;
      }
      /* acquire: the dispatcher's slot writes happen before its open. */
      if (atomic_compare_exchange_strong_explicit(&slot->epoch, &e, cpuexec__epoch_joined(e), memory_order_acquire,
                                                  memory_order_relaxed)) {
        e = cpuexec__epoch_joined(e);
        joined = true;
        break;
      }
    }
    /* Taken, and nudged since: the nudge is looked at, at the top. */
    if (e & CPUEXEC__EPOCH_NUDGE) e = cpuexec__epoch_clear_nudge(&slot->epoch, e);
    if (joined) {
      if (slot->participants == 0) break;
      CPUEXEC__CHECK(w->index < slot->participants && slot->participants <= exec->threads,
                     "executor %llu: worker %u admitted to a region of %u participants (executor of %u)",
                     (unsigned long long)exec->id, w->index, slot->participants, exec->threads);
      uint32_t participants = slot->participants;
      if (participants >= exec->wake_tree_min) { /* wide regions: wake_tree.h */
        uint64_t wakes = cpuexec__wake_tree_children(exec, w->index, participants);
        cpuexec__counters_block *c = cpuexec__counters_of(exec);
        if (c && wakes) atomic_fetch_add_explicit(&c->workers.wakeups, wakes, memory_order_relaxed);
      }
      int32_t cpu = cpuexec__os_current_cpu();
      if (atomic_load_explicit(&slot->cpu, memory_order_relaxed) != cpu)
        atomic_store_explicit(&slot->cpu, cpu, memory_order_relaxed);
      cpuexec__counters_block *counters = cpuexec__counters_of(exec);
      if (counters) {
        /* Counted before leaving: once the caller returns, its counts are complete. */
        atomic_fetch_add_explicit(seen.slept ? &counters->workers.parks : &counters->workers.spins_found_work, 1,
                                  memory_order_relaxed);
        uint64_t start = cpuexec__os_now_ns();
        cpuexec__region_participate(exec, w->index);
        atomic_fetch_add_explicit(&counters->workers.worker_active_ns, cpuexec__os_now_ns() - start,
                                  memory_order_relaxed);
      } else {
        cpuexec__region_participate(exec, w->index);
      }
      cpuexec__region_leave(exec, w->index);
    }
    /* From here on the region is done or someone else's: the bookkeeping
     * costs nobody a wait. The cadence is learnt from every region seen,
     * joined or not, so a worker the caller keeps finding late still
     * learns it and is spinning for the next one. */
    if (seen.seen_ns) hint = cpuexec__cadence_note(&w->cadence, seen.seen_ns);
    cpuexec__counters_block *counters = cpuexec__counters_of(exec);
    if (counters) {
      if (!joined) atomic_fetch_add_explicit(&counters->workers.late_arrivals, 1, memory_order_relaxed);
      if (seen.outcome == CPUEXEC__CADENCE_HIT)
        atomic_fetch_add_explicit(&counters->workers.cadence_hits, 1, memory_order_relaxed);
      else if (seen.outcome == CPUEXEC__CADENCE_MISS)
        atomic_fetch_add_explicit(&counters->workers.cadence_misses, 1, memory_order_relaxed);
    }
  }
  return NULL;
}

cpuexec__spin_plan cpuexec__spin_plan_of(const cpuexec_resolved *resolved, uint32_t threads) {
  cpuexec__spin_plan plan = {CPUEXEC__SPIN_NONE, 0, 0, false};
  const cpuexec_resolved_spin *spin = &resolved->spin;
  switch (spin->policy) {
  case CPUEXEC_SPIN_FIXED_ITERATIONS:
    plan.mode = CPUEXEC__SPIN_ITERATIONS;
    plan.iterations = spin->spin_iterations;
    break;
  case CPUEXEC_SPIN_FIXED_DURATION:
    plan.mode = CPUEXEC__SPIN_DURATION;
    plan.ns = spin->spin_ns;
    break;
  case CPUEXEC_SPIN_ADAPTIVE:
    /* More participants than processors: a spinning waiter would only steal
     * the processor the thread it waits for needs, so park at once. */
    if (spin->park_when_oversubscribed && resolved->visible_processors != 0 &&
        threads > resolved->visible_processors)
      break;
    plan.mode = CPUEXEC__SPIN_DURATION;
    plan.ns = spin->spin_ns;
    plan.adaptive = true;
    break;
  case CPUEXEC_SPIN_PARK_IMMEDIATELY:
    break;
  }
  if ((plan.mode == CPUEXEC__SPIN_DURATION && plan.ns == 0) ||
      (plan.mode == CPUEXEC__SPIN_ITERATIONS && plan.iterations == 0))
    plan.mode = CPUEXEC__SPIN_NONE;
  return plan;
}

/* Stops and joins workers[0, started): they are all idle (no region runs). */
static void stop_workers(struct cpuexec_executor *exec, uint32_t started) {
  for (uint32_t k = 1; k <= started; k++) {
    cpuexec__slot *s = &exec->slots[k];
    s->participants = 0;
    s->takeover = false; /* nobody else would close it: the worker joins and leaves */
    cpuexec__epoch_admit_and_wake(s);
  }
  for (uint32_t k = 0; k < started; k++) pthread_join(exec->workers[k].thread, NULL);
}

static int start_worker(struct cpuexec_executor *exec, uint32_t k, int32_t cpu) {
  cpuexec__worker *w = &exec->workers[k - 1];
  w->exec = exec;
  w->index = k;
  int rc = CPUEXEC__TEST_HOOK(cpuexec__test_fail_thread_create_at, 0) == (int)k
               ? EAGAIN
               : pthread_create(&w->thread, NULL, worker_main, w);
  if (rc != 0) {
    if (cpu >= 0)
      return cpuexec__fail(CPUEXEC_ETHREAD, "worker thread %u (for processor %d): pthread_create failed: %s", k,
                           cpu, strerror(rc));
    return cpuexec__fail(CPUEXEC_ETHREAD, "worker thread %u: pthread_create failed: %s", k, strerror(rc));
  }
  return 0;
}

static void free_executor(struct cpuexec_executor *exec) {
  free(exec->foreign);
  cpuexec__os_aligned_free(exec->workers);
  cpuexec__os_aligned_free(exec->slots);
  cpuexec__os_aligned_free(exec->finish);
  free(exec->finish_tally);
  free(exec->lanes);
  cpuexec__os_aligned_free(atomic_load_explicit(&exec->counters, memory_order_relaxed));
  if (exec->resolved) cpuexec_resolved_destroy((cpuexec_resolved *)exec->resolved);
  cpuexec__os_aligned_free(exec);
}

static void *alloc_lines(size_t count, size_t size) {
  size_t bytes = count * size;
  bytes = (bytes + CPUEXEC__LINE - 1) / CPUEXEC__LINE * CPUEXEC__LINE;
  void *p = cpuexec__os_aligned_alloc(CPUEXEC__LINE, bytes ? bytes : CPUEXEC__LINE);
  if (p) memset(p, 0, bytes ? bytes : CPUEXEC__LINE);
  return p;
}

struct cpuexec_executor *cpuexec__executor_shell(uint32_t threads) {
  if (cpuexec__fork_init() != 0) return NULL;
  struct cpuexec_executor *exec = alloc_lines(1, sizeof *exec);
  if (!exec) return NULL;
  exec->threads = threads;
  exec->wake_tree_min = UINT32_MAX; /* no workers of ours: never a tree */
  exec->id = atomic_fetch_add_explicit(&next_executor_id, 1, memory_order_relaxed);
  exec->fork_generation = cpuexec__fork_generation_now();
  atomic_init(&exec->refs, 1);
  atomic_init(&exec->caller_cpu, -1);
  atomic_init(&exec->first_worker_cpu, -1);
  return exec;
}

CPUEXEC_EXPORT int cpuexec_executor_create(const cpuexec_resolved *resolved, cpuexec_executor **out) {
  if (!out) return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass where to store the executor");
  *out = NULL;
  if (!resolved) return cpuexec__fail(CPUEXEC_EINVAL, "resolved: NULL; resolve a policy first (cpuexec_policy_resolve)");
  int failed = cpuexec__fork_init();
  if (failed != 0) return failed;
  uint32_t threads = resolved->effective_threads ? resolved->effective_threads : 1;
  struct cpuexec_executor *exec = alloc_lines(1, sizeof *exec);
  if (!exec) return cpuexec__fail(CPUEXEC_ENOMEM, "executor: no memory for %u threads", threads);
  exec->threads = threads;
  exec->wake_tree_min = cpuexec__wake_tree_min_for(threads);
  exec->worker_count = threads - 1;
  exec->workers = alloc_lines(threads, sizeof(cpuexec__worker));
  exec->slots = alloc_lines(threads, sizeof(cpuexec__slot));
  exec->finish = alloc_lines(cpuexec__finish_groups_for(threads), sizeof(cpuexec__finish_group));
  exec->finish_tally = calloc(cpuexec__finish_groups_for(threads), sizeof(cpuexec__finish_tally));
  if (threads > 1) exec->lanes = cpuexec__lanes_create(threads);
  if (!exec->workers || !exec->slots || !exec->finish || !exec->finish_tally || (threads > 1 && !exec->lanes)) {
    free_executor(exec);
    return cpuexec__fail(CPUEXEC_ENOMEM, "executor: no memory for %u threads", threads);
  }
  exec->resolved = cpuexec__resolved_retain(resolved);
  atomic_init(&exec->refs, 1);
  exec->id = atomic_fetch_add_explicit(&next_executor_id, 1, memory_order_relaxed);
  exec->fork_generation = cpuexec__fork_generation_now();
  exec->spin = cpuexec__spin_plan_of(resolved, threads);
  exec->caller_processor = resolved->caller_processor;
  exec->pin_caller = resolved->pin_caller && resolved->caller_processor >= 0;
  pthread_mutex_init(&exec->dispatch_lock, NULL);
  pthread_mutex_init(&exec->strict_lock, NULL);

  /* Only the adaptive policy follows the cadence, and not when it parks at
   * once (oversubscribed). */
  for (uint32_t k = 0; k + 1 < threads; k++)
    exec->workers[k].cadence.burn_permille = exec->spin.adaptive ? resolved->spin.cadence_burn_permille : 0;
  for (uint32_t k = 0; k < threads; k++) atomic_init(&exec->slots[k].cpu, -1);

  bool pinned = resolved->worker_processors != NULL && resolved->worker_processor_count >= threads - 1;
  atomic_init(&exec->caller_cpu, -1);
  atomic_init(&exec->first_worker_cpu, pinned && threads > 1 ? resolved->worker_processors[0] : -1);
  for (uint32_t k = 1; k < threads; k++) {
    int32_t cpu = pinned ? resolved->worker_processors[k - 1] : -1;
    int rc = start_worker(exec, k, cpu);
    if (rc == 0) {
      char name[32];
      snprintf(name, sizeof name, "cpuexec-w%u", k);
      cpuexec__os_name_thread(exec->workers[k - 1].thread, name); /* Linux: 99999 workers fit its 15 */
      if (pinned) {
        int err = cpuexec__os_pin_thread(exec->workers[k - 1].thread, cpu);
        if (err != 0) {
          stop_workers(exec, k);
          rc = err == ENOTSUP
                   ? cpuexec__fail(CPUEXEC_ENOTSUP,
                                   "worker thread %u: processor %d: the %s OS backend cannot pin threads; resolve "
                                   "the policy on this process's topology, or use affinity_policy=none",
                                   k, cpu, cpuexec__os_backend())
                   : cpuexec__fail(CPUEXEC_EAFFINITY, "worker thread %u: processor %d could not be applied: %s", k,
                                   cpu, strerror(err));
        }
      }
    } else {
      stop_workers(exec, k - 1);
    }
    if (rc != 0) {
      pthread_mutex_destroy(&exec->dispatch_lock);
      pthread_mutex_destroy(&exec->strict_lock);
      free_executor(exec);
      return rc;
    }
  }
  *out = exec;
  return 0;
}

void cpuexec__executor_free(cpuexec_executor *exec) {
  if (exec->foreign || cpuexec__executor_inherited(exec)) {
    /* A foreign executor has no workers (its threads belong to the
     * application's pool). An inherited one: the workers do not exist in
     * this process, and the lock may have been held by a thread that did
     * not survive fork(): touch neither. */
    free_executor(exec);
    return;
  }
  pthread_mutex_lock(&exec->dispatch_lock);
  stop_workers(exec, exec->worker_count);
  pthread_mutex_unlock(&exec->dispatch_lock);
  pthread_mutex_destroy(&exec->dispatch_lock);
  pthread_mutex_destroy(&exec->strict_lock);
  free_executor(exec);
}

bool cpuexec__executor_running_here(const cpuexec_executor *exec) {
  return cpuexec__tls.callback_depth > 0 && cpuexec__tls.installed == exec;
}

int cpuexec__executor_ref(cpuexec_executor *exec) {
  uint32_t refs = atomic_load_explicit(&exec->refs, memory_order_relaxed);
  do {
    if (refs == 0)
      return cpuexec__misuse(CPUEXEC_ESTATE, "executor %llu: has no reference left to retain; retain only a handle "
                                             "you hold", (unsigned long long)exec->id);
  } while (!atomic_compare_exchange_weak_explicit(&exec->refs, &refs, refs + 1, memory_order_relaxed,
                                                  memory_order_relaxed));
  return 0;
}

int cpuexec__executor_unref(cpuexec_executor *exec) {
  uint32_t refs = atomic_load_explicit(&exec->refs, memory_order_relaxed);
  do {
    if (refs == 0)
      return cpuexec__misuse(CPUEXEC_ESTATE, "executor %llu: released more times than it was created or "
                                             "retained; release each reference once", (unsigned long long)exec->id);
    if (refs == 1 && cpuexec__executor_running_here(exec))
      return cpuexec__misuse(CPUEXEC_EBUSY, "executor %llu: its last reference released from inside one of its "
                                            "own callbacks; release it after the parallel call returns",
                             (unsigned long long)exec->id);
    /* acq_rel: the last releaser sees every other holder's use finished. */
  } while (!atomic_compare_exchange_weak_explicit(&exec->refs, &refs, refs - 1, memory_order_acq_rel,
                                                  memory_order_relaxed));
  if (refs == 1) cpuexec__executor_free(exec);
  return 0;
}

CPUEXEC_EXPORT int32_t cpuexec_executor_effective_threads(const cpuexec_executor *exec) {
  return exec ? (int32_t)exec->threads : 1;
}

CPUEXEC_EXPORT const cpuexec_resolved *cpuexec_executor_resolved(const cpuexec_executor *exec) {
  return exec ? exec->resolved : NULL;
}

CPUEXEC_EXPORT uint64_t cpuexec_executor_id(const cpuexec_executor *exec) { return exec ? exec->id : 0; }

CPUEXEC_EXPORT int32_t cpuexec_participant_index(void) { return (int32_t)cpuexec__tls.participant_index; }

CPUEXEC_EXPORT int32_t cpuexec_participant_count(void) {
  return cpuexec__tls.participant_count ? (int32_t)cpuexec__tls.participant_count : 1;
}

cpuexec__lease_slot *cpuexec__executor_lease_slot(cpuexec_executor *exec) { return &exec->lease; }

bool cpuexec__executor_inherited(const cpuexec_executor *exec) {
  return exec->fork_generation != cpuexec__fork_generation_now();
}
