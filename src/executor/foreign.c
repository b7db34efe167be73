/* Foreign executors: an application's pool behind a cpuexec_executor
 * (include/cpuexec/foreign.h).
 *
 * cpuexec_parallel_for does everything it does for the built-in pool
 * (arguments, fork check, nesting, participant limit, counters, observer)
 * and hands the region to cpuexec__foreign_run, which asks the pool to run
 * the participants [0, n) and runs each one through the region primitive
 * (src/executor/participant.h) on whatever thread the pool chose.
 *
 * Work distribution, on one call's state (on the caller's stack): chunk p
 * of the loop's grains is reserved for participant p, so every participant
 * runs a range; chunks [n, chunks) are claimed from one shared cursor, a
 * claim taking 1/(2n) of what remains (one relaxed fetch_add). A
 * participant never waits for another, so a pool that runs several
 * participants on one thread in turn, or starts its workers late, still
 * completes.
 *
 * Concurrency of one call:
 *   - next: relaxed fetch_add; claims are disjoint by construction;
 *   - error: the first non-zero callback value (compare-exchange, relaxed);
 *     read by participants to stop early and by the caller once run_ranges
 *     has returned;
 *   - ran[i]: exchanged to 1 by the thread that runs participant i, so an
 *     index run twice is seen;
 *   - in_flight: participants between entry and exit (acq_rel), so the
 *     caller knows whether the pool returned too early and waits for them
 *     before the frame goes away;
 *   - violation: the first contract violation, written under violation_lock
 *     (rare, so a lock is simpler than a state machine). */
#include <cpuexec/foreign.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "executor_internal.h"
#include "os/os.h"
#include "participant.h"

struct cpuexec__foreign {
  cpuexec_foreign_executor_ops ops;
  void *pool;
};

#if CPUEXEC_TEST_HOOKS
_Atomic(cpuexec__foreign_early_fn) cpuexec__test_foreign_returned_early; /* NULL: static storage starts zeroed */
#endif

/* ran[] lives on the caller's stack up to this many participants. */
#define FOREIGN_STACK_PARTICIPANTS 64

enum { NO_VIOLATION = 0, OUT_OF_BOUNDS, RUN_TWICE };

typedef struct foreign_call {
  struct cpuexec_executor *exec;
  void *ctx;
  cpuexec_range_fn fn;
  int64_t total;
  int64_t grain;
  uint64_t chunks;
  uint32_t participants;
  _Atomic uint64_t next;
  _Atomic int error;
  _Atomic uint32_t in_flight;
  atomic_uchar *ran;
  pthread_mutex_t violation_lock;
  int violation;
  int64_t bad_begin, bad_end;
} foreign_call;

static void record_violation(foreign_call *c, int kind, int64_t begin, int64_t end) {
  pthread_mutex_lock(&c->violation_lock);
  if (c->violation == NO_VIOLATION) {
    c->violation = kind;
    c->bad_begin = begin;
    c->bad_end = end;
  }
  pthread_mutex_unlock(&c->violation_lock);
}

/* Runs chunks [lo, hi) unless the region already failed; false to stop. */
static bool run_chunks(foreign_call *c, uint64_t lo, uint64_t hi, int *rc) {
  if (atomic_load_explicit(&c->error, memory_order_relaxed) != 0) return false;
  int64_t begin = (int64_t)lo * c->grain;
  int64_t end = hi >= c->chunks ? c->total : (int64_t)hi * c->grain;
  *rc = cpuexec__participant_invoke(c->fn, c->ctx, begin, end);
  if (*rc != 0) {
    int expected = 0;
    atomic_compare_exchange_strong_explicit(&c->error, &expected, *rc, memory_order_relaxed, memory_order_relaxed);
    return false;
  }
  return true;
}

static bool claim(foreign_call *c, uint64_t *lo, uint64_t *hi) {
  uint64_t next = atomic_load_explicit(&c->next, memory_order_relaxed);
  if (next >= c->chunks) return false;
  uint64_t take = (c->chunks - next) / (2u * (uint64_t)c->participants);
  if (take < 1) take = 1;
  /* chunks < 2^63 and each overshoot is below chunks / 2: no wrap. */
  uint64_t got = atomic_fetch_add_explicit(&c->next, take, memory_order_relaxed);
  if (got >= c->chunks) return false;
  *lo = got;
  *hi = got + take < c->chunks ? got + take : c->chunks;
  return true;
}

typedef struct share_of {
  foreign_call *call;
  uint32_t index;
  int rc; /* its failing callback's value */
} share_of;

static void run_share(void *arg) {
  share_of *s = arg;
  uint64_t lo, hi;
  if (run_chunks(s->call, s->index, (uint64_t)s->index + 1, &s->rc))
    while (claim(s->call, &lo, &hi) && run_chunks(s->call, lo, hi, &s->rc)) {
    }
}

/* Participant index's whole share; returns its failing callback's value. */
static int run_participant(foreign_call *c, uint32_t index) {
  cpuexec__participant p;
  cpuexec__participant_enter(&p, c->exec, index, c->participants);
  share_of share = {c, index, 0};
  cpuexec__participant_share(run_share, &share);
  cpuexec__participant_leave(&p);
  return share.rc;
}

/* The fn given to the pool's run_ranges: [begin, end) are participants. */
static int run_participants(void *arg, int64_t begin, int64_t end) {
  foreign_call *c = arg;
  if (begin < 0 || begin > end || end > (int64_t)c->participants) {
    record_violation(c, OUT_OF_BOUNDS, begin, end);
    return CPUEXEC_ERANGE;
  }
  atomic_fetch_add_explicit(&c->in_flight, 1, memory_order_acq_rel);
  int rc = 0;
  for (int64_t i = begin; i < end && rc == 0; i++) {
    if (atomic_exchange_explicit(&c->ran[i], 1, memory_order_relaxed) != 0) {
      record_violation(c, RUN_TWICE, i, i + 1);
      rc = CPUEXEC_ERANGE;
    } else {
      rc = run_participant(c, (uint32_t)i);
    }
  }
  /* After this the caller may return: c is not touched again. */
  atomic_fetch_sub_explicit(&c->in_flight, 1, memory_order_acq_rel);
  return rc;
}

static int report(foreign_call *c, int pool_rc, bool returned_early) {
  if (c->violation == OUT_OF_BOUNDS)
    return cpuexec__fail(CPUEXEC_ERANGE,
                         "foreign executor %" PRIu64 ": run_ranges passed the range [%" PRId64 ", %" PRId64
                         "), outside 0 <= begin <= end <= count = %u",
                         c->exec->id, c->bad_begin, c->bad_end, c->participants);
  if (c->violation == RUN_TWICE)
    return cpuexec__fail(CPUEXEC_ERANGE,
                         "foreign executor %" PRIu64 ": run_ranges passed index %" PRId64
                         " twice; ranges must be disjoint",
                         c->exec->id, c->bad_begin);
  if (returned_early)
    return cpuexec__fail(CPUEXEC_ESTATE,
                         "foreign executor %" PRIu64 ": run_ranges returned while calls of fn were still "
                         "running; it must wait for every call it started",
                         c->exec->id);
  int error = atomic_load_explicit(&c->error, memory_order_relaxed);
  if (error != 0) return cpuexec__callback_failed(error);
  if (pool_rc != 0)
    return cpuexec__fail(pool_rc, "foreign executor %" PRIu64 ": run_ranges failed with %d (%s) and no callback failed",
                         c->exec->id, pool_rc, cpuexec_error_name(pool_rc));
  for (uint32_t i = 0; i < c->participants; i++)
    if (atomic_load_explicit(&c->ran[i], memory_order_relaxed) == 0)
      return cpuexec__fail(CPUEXEC_ESTATE,
                           "foreign executor %" PRIu64 ": run_ranges returned 0 but never ran index %u of "
                           "[0, %u); it must cover every index",
                           c->exec->id, i, c->participants);
  return 0;
}

int cpuexec__foreign_run(struct cpuexec_executor *exec, int64_t total, int64_t grain, void *ctx,
                         cpuexec_range_fn fn, uint32_t participants) {
  const struct cpuexec__foreign *f = exec->foreign;
  atomic_uchar local[FOREIGN_STACK_PARTICIPANTS];
  foreign_call c = {
      .exec = exec,
      .ctx = ctx,
      .fn = fn,
      .total = total,
      .grain = grain,
      .chunks = (uint64_t)(total / grain + (total % grain != 0)),
      .participants = participants,
      .ran = local,
  };
  if (participants > FOREIGN_STACK_PARTICIPANTS && (c.ran = malloc(participants * sizeof *c.ran)) == NULL)
    return cpuexec__fail(CPUEXEC_ENOMEM, "foreign executor %" PRIu64 ": no memory to track %u participants",
                         exec->id, participants);
  for (uint32_t i = 0; i < participants; i++) atomic_init(&c.ran[i], 0);
  atomic_init(&c.next, participants);
  atomic_init(&c.error, 0);
  atomic_init(&c.in_flight, 0);
  pthread_mutex_init(&c.violation_lock, NULL);

  int pool_rc = f->ops.run_ranges(f->pool, participants, &c, run_participants);

  bool returned_early = atomic_load_explicit(&c.in_flight, memory_order_acquire) != 0;
  if (returned_early) {
    cpuexec__foreign_early_fn seen = CPUEXEC__TEST_HOOK(cpuexec__test_foreign_returned_early, NULL);
    if (seen) seen(exec);
  }
  while (atomic_load_explicit(&c.in_flight, memory_order_acquire) != 0) cpuexec__os_yield();
  pthread_mutex_lock(&c.violation_lock); /* orders the violation record before report() reads it */
  pthread_mutex_unlock(&c.violation_lock);
  int rc = report(&c, pool_rc, returned_early);
  pthread_mutex_destroy(&c.violation_lock);
  if (c.ran != local) free(c.ran);
  return rc;
}

bool cpuexec__foreign_plan(const struct cpuexec_executor *exec, int64_t total, const cpuexec_cost *cost,
                           const cpuexec_plan_constraints *constraints, cpuexec_plan *plan, int *rc) {
  if (!exec || !exec->foreign || !exec->foreign->ops.plan) return false;
  *rc = exec->foreign->ops.plan(exec->foreign->pool, total, cost, constraints, plan);
  if (*rc != 0) return true;
  uint32_t limit = exec->threads;
  if (constraints && constraints->max_participants > 0 && (uint32_t)constraints->max_participants < limit)
    limit = (uint32_t)constraints->max_participants;
  if ((int64_t)limit > total) limit = (uint32_t)total;
  if (plan->grain < 1 || plan->participants < 1 || (uint32_t)plan->participants > limit)
    *rc = cpuexec__fail(CPUEXEC_ERANGE,
                        "foreign executor %" PRIu64 ": its planner chose grain %" PRId64
                        " and %d participants; grain must be >= 1 and participants in [1, %u]",
                        exec->id, plan->grain, plan->participants, limit);
  return true;
}

CPUEXEC_EXPORT void cpuexec_foreign_executor_ops_init(cpuexec_foreign_executor_ops *ops) {
  if (ops) memset(ops, 0, sizeof *ops);
}

CPUEXEC_EXPORT int cpuexec_executor_create_foreign(const cpuexec_foreign_executor_ops *ops, void *pool,
                                                   cpuexec_executor **out) {
  if (!out) return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass where to store the executor");
  *out = NULL;
  if (!ops)
    return cpuexec__fail(CPUEXEC_EINVAL, "ops: NULL; describe the pool with cpuexec_foreign_executor_ops_init()");
  if (ops->effective_threads <= 0)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "effective_threads: %d; give the pool's participants, the caller included (>= 1)",
                         (int)ops->effective_threads);
  if (!ops->run_ranges)
    return cpuexec__fail(CPUEXEC_EINVAL, "run_ranges: NULL; the pool must supply its range runner");
  struct cpuexec__foreign *f = malloc(sizeof *f);
  struct cpuexec_executor *exec = f ? cpuexec__executor_shell((uint32_t)ops->effective_threads) : NULL;
  if (!exec) {
    free(f);
    return cpuexec__fail(CPUEXEC_ENOMEM, "foreign executor: out of memory");
  }
  f->ops = *ops;
  f->pool = pool;
  exec->foreign = f;
  *out = exec;
  return 0;
}
