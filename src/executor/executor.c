/* The executor's lifetime: creating, pinning and joining its workers. The
 * loop each worker runs is lane 0's protocol (region_protocol.c); dispatch
 * lives in region.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/debug.h"
#include "core/error.h"
#include "executor_internal.h"
#include "participant.h"
#include "os/os.h"
#include "region_lanes.h"
#include "thread_state.h"
#include "wake_tree.h"

#if CPUEXEC_TEST_HOOKS
_Atomic int cpuexec__test_fail_thread_create_at = 0;
#endif

/* Process-local executor ids: never reused, never 0. */
static _Atomic uint64_t next_executor_id = 1;

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
    /* The permit model's first rule (permit.h, spin at all). */
    if (!cpuexec__permit_adaptive_spins(threads, resolved->visible_processors, spin->park_when_oversubscribed))
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
  /* Like a strict region, the stop waits for every worker: none may stand
   * aside from it (permit.h, cpuexec__permit_node_lets_join); the admits
   * below publish this. */
  atomic_store_explicit(&exec->permit.strict_running, 1, memory_order_relaxed);
  for (uint32_t k = 1; k <= started; k++) {
    cpuexec__slot *s = &exec->slots[k];
    s->region.participants = 0;
    s->region.strict = true; /* nobody else would close it: the worker joins and leaves */
    cpuexec__epoch_admit_and_wake(&s->epoch, &s->parked);
  }
  for (uint32_t k = 0; k < started; k++) pthread_join(exec->workers[k].thread, NULL);
}

static int start_worker(struct cpuexec_executor *exec, uint32_t k, int32_t cpu) {
  cpuexec__worker *w = &exec->workers[k - 1];
  w->exec = exec;
  w->index = k;
  int rc = CPUEXEC__TEST_HOOK(cpuexec__test_fail_thread_create_at, 0) == (int)k
               ? EAGAIN
               : pthread_create(&w->thread, NULL, cpuexec__worker_main, w);
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
  cpuexec__lanes_destroy(exec->lanes);
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
  cpuexec__permit_init(&exec->permit, threads, 0);
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
  if (threads > 1) exec->lanes = cpuexec__lanes_create(threads);
  if (!exec->workers || !exec->slots || (threads > 1 && !exec->lanes)) {
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
  cpuexec__permit_init(&exec->permit, threads, resolved->visible_processors);
  exec->permit.adaptive = exec->spin.adaptive;
  exec->permit.strict_policy = resolved->every_participant;
  exec->permit.placed_caller = exec->pin_caller;
  exec->permit.node_off = resolved->node_budget == CPUEXEC_NODE_BUDGET_OFF;
  if (resolved->node_budget_asked) cpuexec__node_ask_scope(resolved->node_budget);
  exec->permit.first_worker_cpu = atomic_load_explicit(&exec->first_worker_cpu, memory_order_relaxed);
  for (uint32_t k = 1; k < threads; k++) {
    int32_t cpu = pinned ? resolved->worker_processors[k - 1] : -1;
    int rc = start_worker(exec, k, cpu);
    if (rc == 0) {
      char name[32];
      snprintf(name, sizeof name, "cpuexec-w%u", k);
      cpuexec__os_name_thread(exec->workers[k - 1].thread, name); /* Linux: 99999 workers fit its 15 */
    } else {
      stop_workers(exec, k - 1);
    }
    /* Every worker is pinned once all are started, so a failure names
     * every processor that could not be applied (executor_placement.c). */
    if (rc == 0 && pinned && k + 1 == threads) {
      rc = cpuexec__executor_pin_workers(exec, threads);
      if (rc != 0) stop_workers(exec, k);
    }
    if (rc != 0) {
      pthread_mutex_destroy(&exec->dispatch_lock);
      pthread_mutex_destroy(&exec->strict_lock);
      free_executor(exec);
      return rc;
    }
  }
  /* Several pools: node_budget.h counts their callers (not those of a pool outside the budget). */
  if (threads > 1 && !exec->permit.node_off) cpuexec__node_pool_made();
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
  bool counted_pool = exec->worker_count > 0 && !exec->permit.node_off;
  free_executor(exec);
  if (counted_pool) cpuexec__node_pool_gone();
  /* A pool gone: the process's callers may have stopped for good, so their
   * implicit slot goes back now, not a linger later (another executor's
   * next region claims it again). */
  cpuexec__node_callers_rest();
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

#if CPUEXEC_TEST_HOOKS
typedef struct test_share {
  int64_t callbacks;
  cpuexec_range_fn fn;
  void *ctx;
  int rc;
} test_share;

static void run_test_share(void *arg) {
  test_share *s = arg;
  for (int64_t k = 0; k < s->callbacks && s->rc == 0; k++) s->rc = cpuexec__participant_invoke(s->fn, s->ctx, k, k + 1);
}

int cpuexec__test_participant_share(struct cpuexec_executor *exec, int64_t callbacks, cpuexec_range_fn fn,
                                    void *ctx) {
  cpuexec__participant p;
  cpuexec__participant_enter(&p, exec, 0, 1);
  test_share share = {callbacks, fn, ctx, 0};
  cpuexec__participant_share(run_test_share, &share);
  cpuexec__participant_leave(&p);
  return share.rc;
}
#endif
