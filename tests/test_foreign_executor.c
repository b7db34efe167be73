/* Foreign executors (include/cpuexec/foreign.h): an application's pool,
 * written here with plain pthreads (tests/support/foreign_pool.c), runs the same
 * kernels as the built-in pool through every adapter; participant identity
 * on its threads, scopes and sessions, nesting, counters, the observer,
 * costed planning with and without the pool's planner, error rules, pool
 * contract violations and fork. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#ifndef _WIN32
#include <sys/wait.h>
#endif
#include <unistd.h>
#include <cmocka.h>

#include <cpuexec.h>
#include <pthreadpool.h>

#include "support/test_util.h"
#include <cpuexec/compat/job_pool.h>
#include <cpuexec/compat/parallel_for.h>
#include <cpuexec/compat/range_executor.h>
#include <cpuexec/compat/ranges.h>
#include "support/foreign_pool.h"

#define N 1000

/* ---- the kernel and what it observes ------------------------------------ */

typedef struct probe {
  foreign_pool *pool; /* NULL on the built-in executor */
  cpuexec_executor *exec;
  uint32_t expected_count;
  atomic_uint hits[N];
  atomic_uint seen_mask;      /* participant indices that ran a callback */
  atomic_uint wrong_thread;   /* participant i on a thread other than the pool's i-th */
  atomic_uint wrong_count;    /* participant count other than the region's */
  atomic_uint wrong_current;  /* cpuexec_executor_current() other than the executor */
} probe;

static void probe_init(probe *p, foreign_pool *pool, cpuexec_executor *exec, uint32_t expected_count) {
  memset(p, 0, sizeof *p);
  p->pool = pool;
  p->exec = exec;
  p->expected_count = expected_count;
}

static void probe_observe(probe *p, int64_t begin, int64_t end) {
  uint32_t index = cpuexec_participant_index(), count = cpuexec_participant_count();
  atomic_fetch_or(&p->seen_mask, 1u << index);
  if (p->pool && foreign_pool_index_of_self(p->pool) != (int)index) atomic_fetch_add(&p->wrong_thread, 1);
  if (count != p->expected_count || index >= count) atomic_fetch_add(&p->wrong_count, 1);
  if (cpuexec_executor_current() != p->exec) atomic_fetch_add(&p->wrong_current, 1);
  for (int64_t i = begin; i < end; i++) atomic_fetch_add_explicit(&p->hits[i], 1, memory_order_relaxed);
}

static int probe_range(void *ctx, int64_t begin, int64_t end) {
  probe_observe(ctx, begin, end);
  return 0;
}

static void probe_legacy(void *ctx, int64_t begin, int64_t end) { probe_observe(ctx, begin, end); }

static void probe_item(void *ctx, size_t i) { probe_observe(ctx, (int64_t)i, (int64_t)i + 1); }

static int probe_job(void *ctx, int32_t id, int32_t workers) {
  int64_t begin = (int64_t)id * N / workers, end = (int64_t)(id + 1) * N / workers;
  probe_observe(ctx, begin, end);
  return 0;
}

static void assert_probe(const probe *p, const char *adapter, uint32_t threads, bool every_participant) {
  for (int64_t i = 0; i < N; i++)
    if (atomic_load(&p->hits[i]) != 1)
      fail_msg("%s on %s of %u: index %lld ran %u times", adapter, p->pool ? "foreign" : "built-in", threads,
               (long long)i, atomic_load(&p->hits[i]));
  if (atomic_load(&p->wrong_thread) || atomic_load(&p->wrong_count) || atomic_load(&p->wrong_current))
    fail_msg("%s on %s of %u: wrong thread %u, wrong count %u, wrong current %u", adapter,
             p->pool ? "foreign" : "built-in", threads, atomic_load(&p->wrong_thread), atomic_load(&p->wrong_count),
             atomic_load(&p->wrong_current));
  uint32_t all = (1u << threads) - 1;
  if (every_participant ? atomic_load(&p->seen_mask) != all : (atomic_load(&p->seen_mask) & ~all) != 0)
    fail_msg("%s on %s of %u: participants seen 0x%x, expected 0x%x", adapter, p->pool ? "foreign" : "built-in",
             threads, atomic_load(&p->seen_mask), all);
}

/* ---- every adapter, on both kinds of executor --------------------------- */

static const cpuexec_cost heavy = {.bytes_read = 64, .bytes_written = 64, .compute_cycles = 100000};

static int via_parallel_for(probe *p) { return cpuexec_parallel_for(p->exec, N, 1, p, probe_range, 0); }
static int via_costed(probe *p) { return cpuexec_parallel_for_costed(p->exec, N, &heavy, NULL, p, probe_range); }
static int via_ranges(probe *p) {
  cpuexec_range_schedule s;
  cpuexec_range_schedule_init(&s);
  s.max_participants = 0;
  return cpuexec_ranges_execute(N, &s, p, probe_range);
}
static int via_costed_ranges(probe *p) { return cpuexec_ranges_execute_costed(N, &heavy, NULL, 4, p, probe_range); }
static int via_range_executor_of(probe *p) {
  cpuexec_range_executor re = cpuexec_range_executor_of(p->exec);
  return cpuexec_range_executor_run(&re, N, p, probe_range);
}
static int via_range_executor_installed(probe *p) {
  cpuexec_range_executor re = cpuexec_range_executor_installed();
  return cpuexec_range_executor_run(&re, N, p, probe_range);
}
static int via_worker_jobs(probe *p) { return cpuexec_worker_jobs_run(p->exec, 0, p, probe_job); }
static int via_job_pool_installed(probe *p) {
  cpuexec_job_pool pool = cpuexec_job_pool_installed();
  return pool.run_pool(pool.pool, p, probe_job);
}
static int via_legacy_parallel_for(probe *p) { return ParallelFor(N, 1, p, probe_legacy); }
static int via_pthreadpool(probe *p) {
  pthreadpool_t pool = pthreadpool_create(cpuexec_executor_effective_threads(p->exec));
  if (!pool) return -100;
  pthreadpool_parallelize_1d(pool, probe_item, p, N, 0);
  pthreadpool_destroy(pool);
  return 0;
}

static const struct {
  const char *name;
  int (*run)(probe *p);
  bool every_participant; /* false: items may be stolen from a late participant */
} adapters[] = {
    {"cpuexec_parallel_for", via_parallel_for, true},
    {"cpuexec_parallel_for_costed", via_costed, true},
    {"cpuexec_ranges_execute", via_ranges, true},
    {"cpuexec_ranges_execute_costed", via_costed_ranges, true},
    {"cpuexec_range_executor_of", via_range_executor_of, true},
    {"cpuexec_range_executor_installed", via_range_executor_installed, true},
    {"cpuexec_worker_jobs_run", via_worker_jobs, true},
    {"cpuexec_job_pool_installed", via_job_pool_installed, true},
    {"ParallelFor", via_legacy_parallel_for, true},
    {"pthreadpool_parallelize_1d", via_pthreadpool, false},
};

static void run_every_adapter(foreign_pool *pool, cpuexec_executor *exec, uint32_t threads) {
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(exec, &scope), 0);
  for (size_t a = 0; a < sizeof adapters / sizeof adapters[0]; a++) {
    probe *p = malloc(sizeof *p);
    probe_init(p, pool, exec, threads);
    uint64_t runs_before = pool ? foreign_pool_runs(pool) : 0;
    int rc = adapters[a].run(p);
    if (rc != 0) fail_msg("%s: returned %d (%s)", adapters[a].name, rc, cpuexec_error_message());
    /* Every participant of the foreign pool runs (each runs its reserved
     * range); the built-in pool may give a late worker's share to others. */
    assert_probe(p, adapters[a].name, threads, pool != NULL && adapters[a].every_participant);
    /* The work went through the application's pool, once. */
    if (pool && foreign_pool_runs(pool) != runs_before + 1)
      fail_msg("%s: the foreign pool ran %llu times", adapters[a].name,
               (unsigned long long)(foreign_pool_runs(pool) - runs_before));
    free(p);
    assert_int_equal(cpuexec_participant_count(), 1);
    assert_ptr_equal(cpuexec_executor_current(), exec);
  }
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  assert_null(cpuexec_executor_current());
}

static void every_adapter_runs_the_same_kernel_on_the_builtin_and_a_foreign_pool(void **state) {
  (void)state;
  for (uint32_t threads = 2; threads <= 4; threads++) {
    test_owned_executor builtin;
    assert_int_equal(test_executor_create(threads, &builtin), 0);
    run_every_adapter(NULL, builtin.exec, threads);
    test_executor_destroy(&builtin);

    foreign_pool *pool = foreign_pool_create(threads);
    cpuexec_executor *exec = foreign_pool_executor(pool);
    assert_non_null(exec);
    assert_int_equal(cpuexec_executor_effective_threads(exec), threads);
    run_every_adapter(pool, exec, threads);
    cpuexec_executor_release(exec);
    foreign_pool_destroy(pool);
  }
}

/* ---- parallel_for's rules on a foreign pool ------------------------------ */

typedef struct shape {
  foreign_pool *pool;
  int64_t total;
  atomic_uint *hits;
  atomic_uint seen_mask;
  atomic_uint wrong;
  uint32_t expected_count;
} shape;

static int shape_range(void *ctx, int64_t begin, int64_t end) {
  shape *s = ctx;
  uint32_t index = (uint32_t)cpuexec_participant_index();
  if ((uint32_t)cpuexec_participant_count() != s->expected_count || foreign_pool_index_of_self(s->pool) != (int)index ||
      begin < 0 || end > s->total || begin >= end)
    atomic_fetch_add(&s->wrong, 1);
  atomic_fetch_or(&s->seen_mask, 1u << index);
  for (int64_t i = begin; i < end && end <= s->total; i++) atomic_fetch_add(&s->hits[i], 1);
  return 0;
}

static void every_index_once_and_each_participant_on_its_pool_thread(void **state) {
  (void)state;
  const int64_t totals[] = {1, 2, 3, 7, 100, 1001};
  const int64_t grains[] = {1, 3, 64};
  const uint32_t limits[] = {0, 1, 2, 3};
  foreign_pool *pool = foreign_pool_create(3);
  cpuexec_executor *exec = foreign_pool_executor(pool);
  for (size_t t = 0; t < sizeof totals / sizeof totals[0]; t++)
    for (size_t g = 0; g < sizeof grains / sizeof grains[0]; g++)
      for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
        int64_t total = totals[t], grain = grains[g], chunks = (total + grain - 1) / grain;
        uint32_t expected = limits[l] == 0 || limits[l] > 3 ? 3 : limits[l];
        if (chunks < expected) expected = (uint32_t)chunks;
        shape s = {.pool = pool, .total = total, .expected_count = expected};
        s.hits = calloc((size_t)total, sizeof *s.hits);
        uint64_t runs = foreign_pool_runs(pool);
        assert_int_equal(cpuexec_parallel_for(exec, total, grain, &s, shape_range, limits[l]), 0);
        for (int64_t i = 0; i < total; i++) assert_int_equal(atomic_load(&s.hits[i]), 1);
        /* One participant runs on the caller without the pool (there is
         * nothing to share), and then the caller is no pool thread. */
        if (expected > 1) {
          assert_int_equal(atomic_load(&s.wrong), 0);
          assert_int_equal(foreign_pool_runs(pool), runs + 1);
        } else {
          assert_int_equal(foreign_pool_runs(pool), runs);
        }
        /* Every admitted participant ran a range. */
        assert_int_equal(atomic_load(&s.seen_mask), (1u << expected) - 1);
        free(s.hits);
      }
  cpuexec_executor_release(exec);
  foreign_pool_destroy(pool);
}

/* ---- scopes, sessions, nesting ------------------------------------------- */

typedef struct nest {
  cpuexec_executor *foreign, *builtin;
  atomic_uint wrong;
  atomic_uint inner_calls;
} nest;

typedef struct inner_probe {
  nest *n;
  pthread_t thread;
} inner_probe;

static int inner(void *ctx, int64_t begin, int64_t end) {
  inner_probe *ip = ctx;
  if (!pthread_equal(pthread_self(), ip->thread) || cpuexec_participant_index() != 0 ||
      cpuexec_participant_count() != 1)
    atomic_fetch_add(&ip->n->wrong, 1);
  atomic_fetch_add(&ip->n->inner_calls, (unsigned)(end - begin));
  return 0;
}

static int outer(void *ctx, int64_t begin, int64_t end) {
  nest *n = ctx;
  uint32_t index = cpuexec_participant_index(), count = cpuexec_participant_count();
  inner_probe ip = {n, pthread_self()};
  for (int64_t i = begin; i < end; i++) {
    if (cpuexec_parallel_for(n->foreign, 10, 1, &ip, inner, 0) != 0) atomic_fetch_add(&n->wrong, 1);
    if (cpuexec_parallel_for(n->builtin, 10, 1, &ip, inner, 0) != 0) atomic_fetch_add(&n->wrong, 1);
    cpuexec_range_schedule s;
    cpuexec_range_schedule_init(&s);
    s.max_participants = 0;
    if (cpuexec_ranges_execute(10, &s, &ip, inner) != 0) atomic_fetch_add(&n->wrong, 1);
  }
  if ((uint32_t)cpuexec_participant_index() != index || (uint32_t)cpuexec_participant_count() != count ||
      cpuexec_executor_current() != n->foreign)
    atomic_fetch_add(&n->wrong, 1);
  return 0;
}

static void nested_calls_on_foreign_participants_run_inline(void **state) {
  (void)state;
  foreign_pool *pool = foreign_pool_create(3);
  test_owned_executor builtin;
  assert_int_equal(test_executor_create(2, &builtin), 0);
  nest n = {.foreign = foreign_pool_executor(pool), .builtin = builtin.exec};
  assert_int_equal(cpuexec_executor_counters_enable(n.foreign), 0);
  uint64_t runs = foreign_pool_runs(pool);
  assert_int_equal(cpuexec_parallel_for(n.foreign, 30, 1, &n, outer, 0), 0);
  assert_int_equal(atomic_load(&n.wrong), 0);
  assert_int_equal(atomic_load(&n.inner_calls), 30 * 3 * 10);
  /* The nested calls never reached the pool. */
  assert_int_equal(foreign_pool_runs(pool), runs + 1);
  cpuexec_counters c;
  assert_int_equal(cpuexec_executor_counters_get(n.foreign, &c), 0);
  assert_int_equal(c.dispatches, 1);
  assert_int_equal(c.nested_inline, 30);
  cpuexec_executor_release(n.foreign);
  test_executor_destroy(&builtin);
  foreign_pool_destroy(pool);
}

typedef struct session_probe {
  cpuexec_executor *expected;
  cpuexec_session *nested;
  int rc;
} session_probe;

static int run_parallel_for(void *arg) { return via_parallel_for(arg); }

static int inside_session(void *arg) {
  session_probe *sp = arg;
  if (cpuexec_executor_current() != sp->expected) return 1;
  /* A session without a policy inside keeps the installed executor. */
  sp->rc = cpuexec_session_create(NULL, &sp->nested);
  if (sp->rc != 0) return 2;
  return cpuexec_session_executor(sp->nested) == sp->expected ? 0 : 3;
}

static void scopes_and_sessions_install_a_foreign_executor(void **state) {
  (void)state;
  foreign_pool *pool = foreign_pool_create(2);
  cpuexec_executor *exec = foreign_pool_executor(pool);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(exec, &scope), 0);
  assert_ptr_equal(cpuexec_executor_current(), exec);
  session_probe sp = {.expected = exec};
  assert_int_equal(inside_session(&sp), 0);
  /* The nested session runs its work on the foreign pool. */
  probe *p = malloc(sizeof *p);
  probe_init(p, pool, exec, 2);
  assert_int_equal(cpuexec_session_run(sp.nested, p, run_parallel_for), 0);
  assert_probe(p, "session run", 2, true);
  free(p);
  cpuexec_session_destroy(sp.nested);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  assert_null(cpuexec_executor_current());
  /* Destroying the session borrowed the executor: it still runs. */
  p = malloc(sizeof *p);
  probe_init(p, pool, exec, 2);
  assert_int_equal(via_parallel_for(p), 0);
  assert_probe(p, "after the session", 2, true);
  free(p);
  cpuexec_executor_release(exec);
  foreign_pool_destroy(pool);
}

/* ---- counters, observer, descriptor -------------------------------------- */

typedef struct observed {
  uint64_t id;
  atomic_uint events, wrong;
  uint32_t threads;
} observed;

static void observe(void *user, const cpuexec_dispatch_event *ev) {
  observed *o = user;
  if (ev->executor_id != o->id) return;
  atomic_fetch_add(&o->events, 1);
  uint32_t expected = ev->total < (int64_t)o->threads ? (uint32_t)ev->total : o->threads;
  if ((uint32_t)ev->effective_threads != o->threads || (uint32_t)ev->admitted_participants != expected ||
      ev->ran_inline != (expected == 1))
    atomic_fetch_add(&o->wrong, 1);
}

static int nothing(void *ctx, int64_t begin, int64_t end) {
  (void)ctx, (void)begin, (void)end;
  return 0;
}

static void counters_observer_and_descriptor_describe_a_foreign_executor(void **state) {
  (void)state;
  foreign_pool *pool = foreign_pool_create(4);
  cpuexec_executor *exec = foreign_pool_executor(pool);
  observed o = {.id = cpuexec_executor_id(exec), .threads = 4};
  assert_true(o.id != 0);
  assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
  cpuexec_dispatch_observer_set(&o, observe);
  for (int64_t total = 1; total <= 6; total++) assert_int_equal(cpuexec_parallel_for(exec, total, 1, NULL, nothing, 0), 0);
  cpuexec_dispatch_observer_set(NULL, NULL);
  assert_int_equal(atomic_load(&o.events), 6);
  assert_int_equal(atomic_load(&o.wrong), 0);
  cpuexec_counters c;
  assert_int_equal(cpuexec_executor_counters_get(exec, &c), 0);
  assert_int_equal(c.dispatches, 5);
  assert_int_equal(c.limited_inline, 1);
  assert_null(cpuexec_executor_resolved(exec));
  cpuexec_descriptor d;
  assert_int_equal(cpuexec_executor_descriptor_get(exec, &d), 0);
  assert_int_equal(d.effective_threads, 4);
  assert_int_equal(d.affinity_class, CPUEXEC_AFFINITY_NONE);
  assert_false(d.uses_smt);
  assert_int_equal(cpuexec_executor_descriptor_check(exec, &d), 0);
  cpuexec_executor_release(exec);
  foreign_pool_destroy(pool);
}

/* ---- errors --------------------------------------------------------------- */

typedef struct failing {
  uint32_t fail_on;
  int code;
  atomic_uint started, finished;
} failing;

/* started and finished count indices. */
static int fail_on_participant(void *ctx, int64_t begin, int64_t end) {
  failing *f = ctx;
  atomic_fetch_add(&f->started, (unsigned)(end - begin));
  int rc = (uint32_t)cpuexec_participant_index() == f->fail_on ? f->code : 0;
  atomic_fetch_add(&f->finished, (unsigned)(end - begin));
  return rc;
}

static int pool_counts_calls(void *pool, int64_t count, void *arg, cpuexec_range_fn fn);
static cpuexec_executor *executor_on(int (*run)(void *, int64_t, void *, cpuexec_range_fn), uint32_t threads);

static void a_failing_callback_on_any_participant_is_returned_after_every_callback_finished(void **state) {
  (void)state;
  foreign_pool *pool = foreign_pool_create(3);
  cpuexec_executor *exec = foreign_pool_executor(pool);
  for (uint32_t on = 0; on < 3; on++) {
    failing f = {.fail_on = on, .code = 17};
    assert_int_equal(cpuexec_parallel_for(exec, 300, 1, &f, fail_on_participant, 0), CPUEXEC_ECALLBACK);
    assert_int_equal(cpuexec_error_callback_value(), 17);
    assert_int_equal(atomic_load(&f.started), atomic_load(&f.finished));
  }
  /* The failure stops ranges that have not started: on a pool that runs its
   * participants in turn, participant 0 fails its first range and nobody
   * starts another. */
  cpuexec_executor *in_turn = executor_on(pool_counts_calls, 3);
  failing first = {.fail_on = 0, .code = -5};
  assert_int_equal(cpuexec_parallel_for(in_turn, 300, 1, &first, fail_on_participant, 0), CPUEXEC_ECALLBACK);
  assert_int_equal(cpuexec_error_callback_value(), -5);
  assert_int_equal(atomic_load(&first.started), 1);
  cpuexec_executor_release(in_turn);
  /* The executor runs normally after a failure. */
  failing ok = {.fail_on = 99, .code = 17};
  assert_int_equal(cpuexec_parallel_for(exec, 300, 1, &ok, fail_on_participant, 0), 0);
  assert_int_equal(atomic_load(&ok.started), 300);
  /* Argument errors are the built-in executor's. */
  assert_int_equal(cpuexec_parallel_for(exec, 10, 0, NULL, nothing, 0), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_parallel_for(exec, 10, 1, NULL, NULL, 0), CPUEXEC_EINVAL);
  cpuexec_executor_release(exec);
  foreign_pool_destroy(pool);
}

/* Pools that break the run_ranges contract, one way each. */
static int pool_out_of_bounds(void *pool, int64_t count, void *arg, cpuexec_range_fn fn) {
  (void)pool;
  int rc = fn(arg, 0, count);
  int bad = fn(arg, count, count + 1);
  return rc != 0 ? rc : bad;
}
static int pool_twice(void *pool, int64_t count, void *arg, cpuexec_range_fn fn) {
  (void)pool;
  int rc = fn(arg, 0, count);
  return rc != 0 ? rc : fn(arg, 0, 1);
}
static int pool_skips(void *pool, int64_t count, void *arg, cpuexec_range_fn fn) {
  (void)pool;
  return fn(arg, 0, count - 1);
}
static int pool_fails_itself(void *pool, int64_t count, void *arg, cpuexec_range_fn fn) {
  (void)pool, (void)count, (void)arg, (void)fn;
  return CPUEXEC_ENOMEM;
}
static atomic_uint serial_pool_calls;
static int pool_counts_calls(void *pool, int64_t count, void *arg, cpuexec_range_fn fn) {
  (void)pool;
  atomic_fetch_add(&serial_pool_calls, 1);
  return fn(arg, 0, count);
}

static cpuexec_executor *executor_on(int (*run)(void *, int64_t, void *, cpuexec_range_fn), uint32_t threads) {
  cpuexec_foreign_executor_ops ops;
  cpuexec_foreign_executor_ops_init(&ops);
  ops.effective_threads = threads;
  ops.run_ranges = run;
  cpuexec_executor *exec = NULL;
  assert_int_equal(cpuexec_executor_create_foreign(&ops, NULL, &exec), 0);
  return exec;
}

static void pool_contract_violations_are_reported_by_name(void **state) {
  (void)state;
  static const struct {
    int (*run)(void *, int64_t, void *, cpuexec_range_fn);
    int expected;
    const char *message;
  } rows[] = {
      {pool_out_of_bounds, CPUEXEC_ERANGE, "outside 0 <= begin <= end <= count = 3"},
      {pool_twice, CPUEXEC_ERANGE, "index 0 twice"},
      {pool_skips, CPUEXEC_ESTATE, "never ran index 2"},
      {pool_fails_itself, CPUEXEC_ENOMEM, "run_ranges failed with -2"},
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    cpuexec_executor *exec = executor_on(rows[r].run, 3);
    int rc = cpuexec_parallel_for(exec, 100, 1, NULL, nothing, 0);
    if (rc != rows[r].expected || strstr(cpuexec_error_message(), rows[r].message) == NULL)
      fail_msg("row %zu: %d \"%s\"", r, rc, cpuexec_error_message());
    cpuexec_executor_release(exec);
  }
  /* A pool that runs every participant on its caller, in turn, completes. */
  unsigned calls_before = atomic_load(&serial_pool_calls);
  cpuexec_executor *serial = executor_on(pool_counts_calls, 4);
  probe *p = malloc(sizeof *p);
  probe_init(p, NULL, serial, 4);
  assert_int_equal(via_parallel_for(p), 0);
  assert_probe(p, "a pool running participants in turn", 4, true);
  free(p);
  assert_int_equal(atomic_load(&serial_pool_calls), calls_before + 1);
  cpuexec_executor_release(serial);
  /* One effective thread: every call runs inline and the pool is never asked. */
  cpuexec_executor *one = executor_on(pool_counts_calls, 1);
  p = malloc(sizeof *p);
  probe_init(p, NULL, one, 1);
  assert_int_equal(via_parallel_for(p), 0);
  assert_probe(p, "one thread", 1, true);
  free(p);
  assert_int_equal(atomic_load(&serial_pool_calls), calls_before + 1);
  cpuexec_executor_release(one);
}

static void create_rejects_bad_ops_naming_the_field(void **state) {
  (void)state;
  cpuexec_foreign_executor_ops ops;
  cpuexec_foreign_executor_ops_init(&ops);
  cpuexec_executor *exec = (cpuexec_executor *)&ops;
  assert_int_equal(cpuexec_executor_create_foreign(&ops, NULL, NULL), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "out"));
  assert_int_equal(cpuexec_executor_create_foreign(NULL, NULL, &exec), CPUEXEC_EINVAL);
  assert_null(exec);
  assert_non_null(strstr(cpuexec_error_message(), "ops"));
  ops.run_ranges = pool_counts_calls;
  assert_int_equal(cpuexec_executor_create_foreign(&ops, NULL, &exec), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "effective_threads"));
  ops.effective_threads = 2;
  ops.run_ranges = NULL;
  assert_int_equal(cpuexec_executor_create_foreign(&ops, NULL, &exec), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "run_ranges"));
  cpuexec_foreign_executor_ops_init(NULL); /* ignored */
}

/* ---- costed planning ----------------------------------------------------- */

typedef struct planner_pool {
  cpuexec_plan answer;
  int rc;
  atomic_uint calls;
  int64_t total_seen;
} planner_pool;

static int plan_fixed(void *pool, int64_t total, const cpuexec_cost *cost,
                      const cpuexec_plan_constraints *constraints, cpuexec_plan *plan) {
  (void)cost, (void)constraints;
  planner_pool *pp = pool;
  atomic_fetch_add(&pp->calls, 1);
  pp->total_seen = total;
  *plan = pp->answer;
  return pp->rc;
}

static int planner_run_ranges(void *pool, int64_t count, void *arg, cpuexec_range_fn fn) {
  (void)pool;
  return fn(arg, 0, count);
}

static void costed_calls_use_the_pools_planner_and_check_its_plan(void **state) {
  (void)state;
  planner_pool pp = {.answer = {.grain = 10, .participants = 2}};
  cpuexec_foreign_executor_ops ops;
  cpuexec_foreign_executor_ops_init(&ops);
  ops.effective_threads = 4;
  ops.run_ranges = planner_run_ranges;
  ops.plan = plan_fixed;
  cpuexec_executor *exec = NULL;
  assert_int_equal(cpuexec_executor_create_foreign(&ops, &pp, &exec), 0);
  cpuexec_plan plan;
  assert_int_equal(cpuexec_parallel_for_plan(exec, 100, &heavy, NULL, &plan), 0);
  assert_int_equal(plan.grain, 10);
  assert_int_equal(plan.participants, 2);
  assert_int_equal(pp.total_seen, 100);
  assert_int_equal(cpuexec_parallel_for_costed(exec, 100, &heavy, NULL, NULL, nothing), 0);
  assert_int_equal(atomic_load(&pp.calls), 2);
  /* The planner's own error comes back unchanged. */
  pp.rc = -77;
  assert_int_equal(cpuexec_parallel_for_plan(exec, 100, &heavy, NULL, &plan), -77);
  pp.rc = 0;
  /* A plan beyond the limit, or a grain below 1, is the planner's bug. */
  const cpuexec_plan bad[] = {{.grain = 10, .participants = 5}, {.grain = 10}, {.participants = 2}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    pp.answer = bad[i];
    assert_int_equal(cpuexec_parallel_for_plan(exec, 100, &heavy, NULL, &plan), CPUEXEC_ERANGE);
    assert_non_null(strstr(cpuexec_error_message(), "planner"));
  }
  /* Constraints lower the limit the plan is checked against. */
  pp.answer = (cpuexec_plan){.grain = 10, .participants = 3};
  cpuexec_plan_constraints two = {.max_participants = 2};
  assert_int_equal(cpuexec_parallel_for_plan(exec, 100, &heavy, &two, &plan), CPUEXEC_ERANGE);
  cpuexec_executor_release(exec);

  /* Without a planner: the built-in model with the pool's threads. */
  foreign_pool *pool = foreign_pool_create(3);
  exec = foreign_pool_executor(pool);
  assert_int_equal(cpuexec_parallel_for_plan(exec, N, &heavy, NULL, &plan), 0);
  assert_int_equal(plan.participants, 3);
  cpuexec_executor_release(exec);
  foreign_pool_destroy(pool);
}

#if !TEST_ON_WINDOWS /* fork(): Windows has none */
/* ---- fork ------------------------------------------------------------------ */

static cpuexec_executor *inherited;

static int child_refuses_the_inherited_foreign_executor(void) {
  if (cpuexec_parallel_for(inherited, 100, 1, NULL, nothing, 0) != CPUEXEC_EFORKED) return 1;
  if (strstr(cpuexec_error_message(), "fork") == NULL) return 2;
  cpuexec_executor_release(inherited); /* frees memory only */
  return 0;
}

static void a_forked_child_gets_eforked_from_an_inherited_foreign_executor(void **state) {
  (void)state;
  foreign_pool *pool = foreign_pool_create(2);
  inherited = foreign_pool_executor(pool);
  assert_int_equal(cpuexec_parallel_for(inherited, 100, 1, NULL, nothing, 0), 0);
  assert_int_equal(run_in_child(child_refuses_the_inherited_foreign_executor, 60), 0);
  cpuexec_executor_release(inherited);
  foreign_pool_destroy(pool);
}
#endif /* !TEST_ON_WINDOWS */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_adapter_runs_the_same_kernel_on_the_builtin_and_a_foreign_pool),
      cmocka_unit_test(every_index_once_and_each_participant_on_its_pool_thread),
      cmocka_unit_test(nested_calls_on_foreign_participants_run_inline),
      cmocka_unit_test(scopes_and_sessions_install_a_foreign_executor),
      cmocka_unit_test(counters_observer_and_descriptor_describe_a_foreign_executor),
      cmocka_unit_test(a_failing_callback_on_any_participant_is_returned_after_every_callback_finished),
      cmocka_unit_test(pool_contract_violations_are_reported_by_name),
      cmocka_unit_test(create_rejects_bad_ops_naming_the_field),
      cmocka_unit_test(costed_calls_use_the_pools_planner_and_check_its_plan),
      TEST_UNIX_ONLY(a_forked_child_gets_eforked_from_an_inherited_foreign_executor, "fork(): Windows has none"),
  };
  return cmocka_run_group_tests_name("foreign_executor", tests, NULL, NULL);
}
