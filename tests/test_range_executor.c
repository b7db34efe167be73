/* The (count, callback) range-executor contract (include/cpuexec/compat/range_executor.h)
 * and the (worker_id, worker_count) job-pool adapters (include/cpuexec/compat/job_pool.h):
 * coverage for many counts and worker counts, errors, bounds violations from
 * broken executors, zero and one groups, nesting, and the destination rules
 * of a reduction and a matmul written against the contract. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/test_util.h"
#include "support/rendezvous.h"
#include <cpuexec/compat/job_pool.h>
#include <cpuexec/compat/range_executor.h>
#include <cpuexec/compat/ranges.h>

static const int64_t counts[] = {0, 1, 2, 3, 5, 7, 8, 64, 1000, 4097};
#define N_COUNTS (sizeof counts / sizeof counts[0])
static const uint32_t pool_workers[] = {1, 2, 3, 5, 8};
#define N_POOLS (sizeof pool_workers / sizeof pool_workers[0])

/* Runs `ex` through the core, behind the checker with coverage on, and
 * checks every index was passed exactly once. */
static void assert_covers_exactly(const cpuexec_range_executor *ex, int64_t count) {
  cpuexec_range_checker checker;
  cpuexec_range_executor checked = cpuexec_range_executor_checking(&checker, *ex, true);
  test_coverage c;
  test_coverage_init(&c, count);
  int rc = cpuexec_range_executor_run(&checked, count, &c, test_coverage_record);
  if (rc != 0)
    fail_msg("count %lld: %s (%s)", (long long)count, cpuexec_error_name(rc), cpuexec_error_message());
  assert_true(test_coverage_exact(&c));
  if (count == 0)
    assert_int_equal(atomic_load(&c.callbacks), 0);
  test_coverage_free(&c);
}

/* ---- coverage and disjointness ---- */

static void every_executor_covers_each_index_once(void **state) {
  (void)state;
  test_owned_executor installed, other;
  assert_int_equal(test_executor_create(4, &installed), 0);
  assert_int_equal(test_executor_create(3, &other), 0);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(installed.exec, &scope), 0);
  cpuexec_range_executor fixed[] = {cpuexec_range_executor_serial(), cpuexec_range_executor_installed(),
                                    cpuexec_range_executor_of(other.exec), cpuexec_range_executor_of(NULL),
                                    {NULL, NULL}};
  for (size_t e = 0; e < sizeof fixed / sizeof fixed[0]; e++)
    for (size_t n = 0; n < N_COUNTS; n++)
      assert_covers_exactly(&fixed[e], counts[n]);
  for (size_t p = 0; p < N_POOLS; p++) {
    test_pool *pool = test_pool_create(pool_workers[p]);
    assert_non_null(pool);
    cpuexec_job_pool jp = test_pool_as_job_pool(pool);
    cpuexec_range_executor ex = cpuexec_range_executor_from_job_pool(&jp);
    for (size_t n = 0; n < N_COUNTS; n++)
      assert_covers_exactly(&ex, counts[n]);
    test_pool_destroy(pool);
  }
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  test_executor_destroy(&other);
  test_executor_destroy(&installed);
}

static void installed_executor_uses_every_participant(void **state) {
  (void)state;
  test_owned_executor ex;
  assert_int_equal(test_executor_create(4, &ex), 0);
  cpuexec_range_executor installed = cpuexec_range_executor_installed();
  test_coverage c;
  test_coverage_init(&c, 1000);
  c.wait_for_all = 1;
  assert_int_equal(cpuexec_range_executor_run(&installed, 1000, &c, test_coverage_record), 0);
  assert_int_equal(atomic_load(&c.callbacks), 1); /* nothing installed: serial */
  test_coverage_free(&c);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(ex.exec, &scope), 0);
  test_coverage_init(&c, 1000);
  c.wait_for_all = 1;
  assert_int_equal(cpuexec_range_executor_run(&installed, 1000, &c, test_coverage_record), 0);
  assert_int_equal(atomic_load(&c.callbacks), 4);
  assert_int_equal(test_coverage_threads(&c), 4);
  test_coverage_free(&c);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  test_executor_destroy(&ex);
}

static void job_pool_ranges_follow_the_floor_formula(void **state) {
  (void)state;
  const uint32_t workers[] = {1, 2, 3, 4, 7, 8};
  for (size_t w = 0; w < sizeof workers / sizeof workers[0]; w++) {
    test_pool *pool = test_pool_create(workers[w]);
    cpuexec_job_pool jp = test_pool_as_job_pool(pool);
    cpuexec_range_executor ex = cpuexec_range_executor_from_job_pool(&jp);
    for (int64_t count = 2; count <= 40; count++) {
      test_coverage c;
      test_coverage_init(&c, count);
      assert_int_equal(cpuexec_range_executor_run(&ex, count, &c, test_coverage_record), 0);
      unsigned expected = 0;
      for (uint32_t id = 0; id < workers[w]; id++) {
        int64_t b = count * id / workers[w], e = count * (id + 1) / workers[w];
        if (b == e)
          continue;
        expected++;
        unsigned found = 0;
        for (unsigned r = 0; r < atomic_load(&c.next_range); r++)
          found += c.range_begin[r] == b && c.range_end[r] == e;
        assert_int_equal(found, 1);
      }
      assert_int_equal(atomic_load(&c.callbacks), expected);
      test_coverage_free(&c);
    }
    /* Near the top of int64_t the formula must not overflow. */
    test_coverage c;
    test_coverage_init(&c, INT64_MAX);
    assert_int_equal(cpuexec_range_executor_run(&ex, INT64_MAX, &c, test_coverage_record), 0);
    assert_true(test_coverage_exact(&c));
    assert_int_equal(atomic_load(&c.callbacks), workers[w]);
    test_coverage_free(&c);
    test_pool_destroy(pool);
  }
}

static void three_worker_pool_is_reusable_across_many_runs(void **state) {
  (void)state;
  test_pool *pool = test_pool_create(3);
  cpuexec_job_pool jp = test_pool_as_job_pool(pool);
  cpuexec_range_executor ex = cpuexec_range_executor_from_job_pool(&jp);
  for (int64_t run = 0; run < 300; run++)
    assert_covers_exactly(&ex, (run * 37) % 211);
  test_pool_destroy(pool);
}

/* ---- errors ---- */

typedef struct slow_ctx {
  int64_t fail_at;
  int code;
  atomic_uint started;
  atomic_uint finished;
} slow_ctx;

/* The range holding fail_at fails at once; every other range takes a while,
 * so a call that returned early would see it unfinished. */
static int slow_unless_failing(void *arg, int64_t begin, int64_t end) {
  slow_ctx *s = arg;
  atomic_fetch_add(&s->started, 1);
  if (s->fail_at >= begin && s->fail_at < end) {
    atomic_fetch_add(&s->finished, 1);
    return s->code;
  }
  test_busy_work(2000);
  atomic_fetch_add(&s->finished, 1);
  return 0;
}

static void worker_error_is_returned_after_the_other_workers_finish(void **state) {
  (void)state;
  test_pool *pool = test_pool_create(3);
  cpuexec_job_pool jp = test_pool_as_job_pool(pool);
  cpuexec_range_executor ex = cpuexec_range_executor_from_job_pool(&jp);
  const int64_t fail_at[] = {0, 5, 11};
  for (size_t i = 0; i < 3; i++) {
    slow_ctx s = {.fail_at = fail_at[i], .code = 99};
    atomic_init(&s.started, 0);
    atomic_init(&s.finished, 0);
    assert_int_equal(cpuexec_range_executor_run(&ex, 12, &s, slow_unless_failing), CPUEXEC_ECALLBACK);
    assert_int_equal(cpuexec_error_callback_value(), 99);
    /* All three workers ran; the two that did not fail finished first. */
    assert_int_equal(atomic_load(&s.started), 3);
    assert_int_equal(atomic_load(&s.finished), 3);
  }
  test_pool_destroy(pool);

  test_owned_executor exec;
  assert_int_equal(test_executor_create(3, &exec), 0);
  cpuexec_range_executor of = cpuexec_range_executor_of(exec.exec);
  for (size_t i = 0; i < 3; i++) {
    slow_ctx s = {.fail_at = fail_at[i], .code = 99};
    atomic_init(&s.started, 0);
    atomic_init(&s.finished, 0);
    assert_int_equal(cpuexec_range_executor_run(&of, 12, &s, slow_unless_failing), CPUEXEC_ECALLBACK);
    assert_int_equal(cpuexec_error_callback_value(), 99);
    assert_true(atomic_load(&s.started) >= 1);
    assert_int_equal(atomic_load(&s.started), atomic_load(&s.finished));
  }
  test_executor_destroy(&exec);
}

static int fail_with_ctx_code(void *ctx, int64_t begin, int64_t end) {
  (void)begin;
  (void)end;
  return *(const int *)ctx;
}

/* Every executor kind (serial, ours, a foreign pool that returns the value
 * as it is) reports a callback's failure as CPUEXEC_ECALLBACK with the value
 * unchanged, even a value that looks like a library code. */
static void callback_errors_come_back_as_ecallback_with_their_value(void **state) {
  (void)state;
  test_owned_executor exec;
  assert_int_equal(test_executor_create(2, &exec), 0);
  test_pool *pool = test_pool_create(3);
  cpuexec_job_pool jp = test_pool_as_job_pool(pool);
  cpuexec_range_executor executors[] = {cpuexec_range_executor_serial(), cpuexec_range_executor_of(exec.exec),
                                        cpuexec_range_executor_from_job_pool(&jp)};
  const int codes[] = {12345, -1, CPUEXEC_ECALLBACK};
  for (size_t e = 0; e < 3; e++)
    for (size_t k = 0; k < 3; k++) {
      int code = codes[k];
      assert_int_equal(cpuexec_range_executor_run(&executors[e], 100, &code, fail_with_ctx_code), CPUEXEC_ECALLBACK);
      assert_int_equal(cpuexec_error_callback_value(), code);
      assert_int_equal(cpuexec_range_executor_run(&executors[e], 1, &code, fail_with_ctx_code), CPUEXEC_ECALLBACK);
      assert_int_equal(cpuexec_error_callback_value(), code);
    }
  test_pool_destroy(pool);
  test_executor_destroy(&exec);
}

static void invalid_arguments_are_rejected(void **state) {
  (void)state;
  cpuexec_range_executor serial = cpuexec_range_executor_serial();
  int calls = 0;
  assert_int_equal(cpuexec_range_executor_run(&serial, 10, NULL, NULL), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "callback"));
  assert_int_equal(cpuexec_range_executor_run(&serial, -1, &calls, fail_with_ctx_code), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "count: -1"));
  assert_int_equal(cpuexec_worker_jobs_run(NULL, 3, NULL, NULL), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "job"));
}

/* ---- executors that break the contract ---- */

#define MAX_SCRIPTED 4
typedef struct scripted_executor {
  int64_t begin[MAX_SCRIPTED];
  int64_t end[MAX_SCRIPTED];
  unsigned ranges;
  unsigned calls;
} scripted_executor;

/* Calls back exactly the scripted ranges, ignoring callback results, as a
 * naive executor might. */
static int run_scripted(void *self, int64_t count, void *ctx, cpuexec_range_fn callback) {
  (void)count;
  scripted_executor *s = self;
  s->calls++;
  for (unsigned i = 0; i < s->ranges; i++)
    (void)callback(ctx, s->begin[i], s->end[i]);
  return 0;
}

typedef struct bounds_seen {
  int64_t count;
  unsigned calls;
  unsigned out_of_bounds;
  unsigned empty;
} bounds_seen;

static int record_bounds(void *ctx, int64_t begin, int64_t end) {
  bounds_seen *b = ctx;
  b->calls++;
  if (begin < 0 || begin > end || end > b->count)
    b->out_of_bounds++;
  if (begin == end)
    b->empty++;
  return 0;
}

static void core_reports_ranges_outside_the_count(void **state) {
  (void)state;
  const struct {
    int64_t begin, end;
    const char *message;
  } bad[] = {
      {-1, 3, "[-1, 3)"},
      {5, 3, "[5, 3)"},
      {0, 11, "[0, 11)"},
      {11, 11, "[11, 11)"},
      {INT64_MIN, 0, "[-9223372036854775808, 0)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    scripted_executor s = {.begin = {0, bad[i].begin, 5}, .end = {5, bad[i].end, 10}, .ranges = 3};
    cpuexec_range_executor ex = {run_scripted, &s};
    bounds_seen seen = {.count = 10};
    assert_int_equal(cpuexec_range_executor_run(&ex, 10, &seen, record_bounds), CPUEXEC_ERANGE);
    assert_non_null(strstr(cpuexec_error_message(), bad[i].message));
    assert_non_null(strstr(cpuexec_error_message(), "count = 10"));
    assert_int_equal(seen.out_of_bounds, 0); /* never passed on */
    assert_int_equal(seen.calls, 2);
  }
}

static void empty_ranges_are_allowed_and_not_passed_on(void **state) {
  (void)state;
  scripted_executor s = {.begin = {0, 0, 5, 5}, .end = {0, 5, 5, 10}, .ranges = 4};
  cpuexec_range_executor ex = {run_scripted, &s};
  bounds_seen seen = {.count = 10};
  assert_int_equal(cpuexec_range_executor_run(&ex, 10, &seen, record_bounds), 0);
  assert_int_equal(seen.calls, 2);
  assert_int_equal(seen.empty, 0);
  /* The checker accepts them too. */
  cpuexec_range_checker checker;
  cpuexec_range_executor checked = cpuexec_range_executor_checking(&checker, ex, true);
  assert_int_equal(cpuexec_range_executor_run(&checked, 10, &seen, record_bounds), 0);
}

static void checker_reports_overlaps_and_gaps_when_asked(void **state) {
  (void)state;
  const struct {
    scripted_executor script;
    int with_coverage;
    int rc;
    const char *message;
  } cases[] = {
      {{.begin = {0, 4}, .end = {6, 10}, .ranges = 2}, 1, CPUEXEC_ERANGE, "index 4 passed twice"},
      {{.begin = {0, 0}, .end = {10, 10}, .ranges = 2}, 1, CPUEXEC_ERANGE, "index 0 passed twice"},
      {{.begin = {0, 4}, .end = {3, 10}, .ranges = 2}, 1, CPUEXEC_ERANGE, "index 3 of [0, 10) was not covered"},
      {{.begin = {0}, .end = {9}, .ranges = 1}, 1, CPUEXEC_ERANGE, "index 9 of [0, 10) was not covered"},
      {{.begin = {0, 3}, .end = {3, 10}, .ranges = 2}, 1, 0, NULL},
      /* Without coverage the checker, like the core, trusts the partition. */
      {{.begin = {0, 4}, .end = {6, 10}, .ranges = 2}, 0, 0, NULL},
      {{.begin = {0, 4}, .end = {3, 10}, .ranges = 2}, 0, 0, NULL},
      /* Bounds are checked either way. */
      {{.begin = {0, 8}, .end = {8, 12}, .ranges = 2}, 0, CPUEXEC_ERANGE, "[8, 12)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    scripted_executor s = cases[i].script;
    cpuexec_range_checker checker;
    cpuexec_range_executor checked =
        cpuexec_range_executor_checking(&checker, (cpuexec_range_executor){run_scripted, &s}, cases[i].with_coverage);
    bounds_seen seen = {.count = 10};
    int rc = cpuexec_range_executor_run(&checked, 10, &seen, record_bounds);
    assert_int_equal(rc, cases[i].rc);
    if (cases[i].message != NULL)
      assert_non_null(strstr(cpuexec_error_message(), cases[i].message));
    assert_int_equal(seen.out_of_bounds, 0);
    assert_int_equal(s.calls, 1);
  }
}

/* An executor that starts the callback on a thread of its own and returns
 * once the callback has begun, without waiting for it. */
typedef struct early_executor {
  pthread_t thread;
  void *ctx;
  cpuexec_range_fn callback;
  int64_t count;
} early_executor;

typedef struct early_ctx {
  atomic_int entered;  /* the callback began */
  atomic_int returned; /* run_early is about to return */
  atomic_int finished; /* the callback ended */
} early_ctx;

static early_ctx early_state;

static void *early_thread(void *arg) {
  early_executor *e = arg;
  (void)e->callback(e->ctx, 0, e->count);
  return NULL;
}

static int run_early(void *self, int64_t count, void *ctx, cpuexec_range_fn callback) {
  early_executor *e = self;
  e->ctx = ctx;
  e->callback = callback;
  e->count = count;
  pthread_create(&e->thread, NULL, early_thread, e);
  while (atomic_load(&early_state.entered) == 0) /* a latch: the callback runs */
    sched_yield();
  atomic_store(&early_state.returned, 1);
  return 0;
}

static int slow_callback(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  (void)begin;
  (void)end;
  atomic_store(&early_state.entered, 1);
  /* Still running when run_early returns, whatever the scheduling. */
  while (atomic_load(&early_state.returned) == 0)
    sched_yield();
  atomic_store(&early_state.finished, 1);
  return 0;
}

static void checker_reports_an_executor_that_returns_early(void **state) {
  (void)state;
  atomic_init(&early_state.entered, 0);
  atomic_init(&early_state.returned, 0);
  atomic_init(&early_state.finished, 0);
  early_executor e;
  cpuexec_range_checker checker;
  cpuexec_range_executor checked =
      cpuexec_range_executor_checking(&checker, (cpuexec_range_executor){run_early, &e}, false);
  assert_int_equal(cpuexec_range_executor_run(&checked, 10, NULL, slow_callback), CPUEXEC_ESTATE);
  assert_non_null(strstr(cpuexec_error_message(), "still running"));
  /* The checker waited for the straggler before returning. */
  assert_int_equal(atomic_load(&early_state.finished), 1);
  pthread_join(e.thread, NULL);
}

/* ---- zero and one groups, nesting ---- */

typedef struct spy_executor {
  atomic_uint calls;
} spy_executor;

static int run_spy(void *self, int64_t count, void *ctx, cpuexec_range_fn callback) {
  spy_executor *s = self;
  atomic_fetch_add(&s->calls, 1);
  return count > 0 ? callback(ctx, 0, count) : 0;
}

static void zero_and_one_groups_skip_the_executor(void **state) {
  (void)state;
  spy_executor spy;
  atomic_init(&spy.calls, 0);
  cpuexec_range_executor ex = {run_spy, &spy};
  test_coverage c;
  test_coverage_init(&c, 0);
  assert_int_equal(cpuexec_range_executor_run(&ex, 0, &c, test_coverage_record), 0);
  assert_int_equal(atomic_load(&c.callbacks), 0);
  assert_int_equal(atomic_load(&spy.calls), 0);
  test_coverage_free(&c);

  test_coverage_init(&c, 1);
  assert_int_equal(cpuexec_range_executor_run(&ex, 1, &c, test_coverage_record), 0);
  assert_int_equal(atomic_load(&c.callbacks), 1);
  assert_int_equal(c.range_begin[0], 0);
  assert_int_equal(c.range_end[0], 1);
  assert_true(pthread_equal(c.range_thread[0], pthread_self()));
  assert_int_equal(atomic_load(&spy.calls), 0);
  test_coverage_free(&c);

  test_coverage_init(&c, 2);
  assert_int_equal(cpuexec_range_executor_run(&ex, 2, &c, test_coverage_record), 0);
  assert_int_equal(atomic_load(&spy.calls), 1);
  test_coverage_free(&c);

  /* The job-pool directions with zero and one group. */
  test_pool *pool = test_pool_create(3);
  cpuexec_job_pool jp = test_pool_as_job_pool(pool);
  cpuexec_range_executor from_pool = cpuexec_range_executor_from_job_pool(&jp);
  assert_covers_exactly(&from_pool, 0);
  assert_covers_exactly(&from_pool, 1);
  test_pool_destroy(pool);
}

typedef struct nesting_ctx {
  spy_executor spy;
  cpuexec_executor *exec;
  atomic_uint inner_callbacks;
  atomic_uint inner_elsewhere;
  atomic_uint inner_workers;
} nesting_ctx;

typedef struct inner_call {
  nesting_ctx *n;
  pthread_t thread;
} inner_call;

static int inner_range(void *arg, int64_t begin, int64_t end) {
  (void)begin;
  (void)end;
  inner_call *inner = arg;
  atomic_fetch_add(&inner->n->inner_callbacks, 1);
  if (!pthread_equal(inner->thread, pthread_self()))
    atomic_fetch_add(&inner->n->inner_elsewhere, 1);
  return 0;
}

static int inner_job(void *arg, int32_t id, int32_t workers) {
  (void)id;
  inner_call *inner = arg;
  atomic_fetch_add(&inner->n->inner_workers, workers);
  if (!pthread_equal(inner->thread, pthread_self()))
    atomic_fetch_add(&inner->n->inner_elsewhere, 1);
  return 0;
}

static int outer_range(void *arg, int64_t begin, int64_t end) {
  (void)begin;
  (void)end;
  nesting_ctx *n = arg;
  inner_call inner = {n, pthread_self()};
  cpuexec_range_executor spy = {run_spy, &n->spy};
  int rc = cpuexec_range_executor_run(&spy, 100, &inner, inner_range);
  cpuexec_range_executor installed = cpuexec_range_executor_installed();
  if (rc == 0)
    rc = cpuexec_range_executor_run(&installed, 100, &inner, inner_range);
  cpuexec_range_schedule s;
  cpuexec_range_schedule_init(&s);
  s.max_participants = 0;
  if (rc == 0)
    rc = cpuexec_ranges_execute(100, &s, &inner, inner_range);
  if (rc == 0 && n->exec != NULL)
    rc = cpuexec_worker_jobs_run(n->exec, 0, &inner, inner_job);
  return rc;
}

static void callbacks_run_with_nested_scheduling_disabled(void **state) {
  (void)state;
  test_owned_executor ex;
  assert_int_equal(test_executor_create(4, &ex), 0);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(ex.exec, &scope), 0);
  test_pool *pool = test_pool_create(3);
  cpuexec_job_pool jp = test_pool_as_job_pool(pool);
  const struct {
    cpuexec_range_executor ex;
    unsigned outer;
  } outers[] = {
      {cpuexec_range_executor_installed(), 4},
      {cpuexec_range_executor_from_job_pool(&jp), 3}, /* foreign threads */
      {cpuexec_range_executor_serial(), 1},
  };
  for (size_t i = 0; i < sizeof outers / sizeof outers[0]; i++) {
    nesting_ctx n = {.exec = ex.exec};
    atomic_init(&n.spy.calls, 0);
    atomic_init(&n.inner_callbacks, 0);
    atomic_init(&n.inner_elsewhere, 0);
    atomic_init(&n.inner_workers, 0);
    assert_int_equal(cpuexec_range_executor_run(&outers[i].ex, 1000, &n, outer_range), 0);
    /* Each outer range: one inline inner range per nested range call, and
     * one job of one worker. */
    assert_int_equal(atomic_load(&n.spy.calls), 0);
    assert_int_equal(atomic_load(&n.inner_callbacks), 3 * outers[i].outer);
    assert_int_equal(atomic_load(&n.inner_workers), outers[i].outer);
    assert_int_equal(atomic_load(&n.inner_elsewhere), 0);
  }
  test_pool_destroy(pool);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  test_executor_destroy(&ex);
}

/* ---- (worker_id, worker_count) jobs on a libcpuexec executor ---- */

#define MAX_JOBS 32
typedef struct jobs_seen {
  atomic_uint runs[MAX_JOBS];
  atomic_uint wrong_count;
  uint32_t expected_workers;
  atomic_uint next;
  uint32_t order[MAX_JOBS];
  pthread_t thread[MAX_JOBS];
  int fail_id;
  atomic_uint started;
  atomic_uint finished;
  /* Set where every participant must be observed: each job waits in
   * tests/support/rendezvous.h for the others. */
  bool rendezvous;
  _Atomic uint64_t arrived;
} jobs_seen;

static void jobs_seen_init(jobs_seen *j, uint32_t expected_workers, int fail_id) {
  for (int i = 0; i < MAX_JOBS; i++)
    atomic_init(&j->runs[i], 0);
  atomic_init(&j->wrong_count, 0);
  atomic_init(&j->next, 0);
  atomic_init(&j->started, 0);
  atomic_init(&j->finished, 0);
  j->expected_workers = expected_workers;
  j->fail_id = fail_id;
  j->rendezvous = false;
  atomic_init(&j->arrived, 0);
}

static int record_job(void *ctx, int32_t id, int32_t workers) {
  jobs_seen *j = ctx;
  atomic_fetch_add(&j->started, 1);
  if (j->rendezvous) test_rendezvous(&j->arrived);
  if ((uint32_t)workers != j->expected_workers || id < 0 || id >= MAX_JOBS)
    atomic_fetch_add(&j->wrong_count, 1);
  else
    atomic_fetch_add(&j->runs[id], 1);
  unsigned slot = atomic_fetch_add(&j->next, 1);
  if (slot < MAX_JOBS) {
    j->order[slot] = id;
    j->thread[slot] = pthread_self();
  }
  int rc = 0;
  if ((int)id == j->fail_id)
    rc = 77;
  else
    test_busy_work(100);
  atomic_fetch_add(&j->finished, 1);
  return rc;
}

static void worker_jobs_run_once_per_id_on_an_executor(void **state) {
  (void)state;
  test_owned_executor ex;
  assert_int_equal(test_executor_create(3, &ex), 0);
  const uint32_t worker_counts[] = {1, 2, 3, 4, 7, 16};
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++) {
    jobs_seen j;
    jobs_seen_init(&j, worker_counts[w], -1);
    assert_int_equal(cpuexec_worker_jobs_run(ex.exec, worker_counts[w], &j, record_job), 0);
    assert_int_equal(atomic_load(&j.wrong_count), 0);
    for (uint32_t id = 0; id < worker_counts[w]; id++)
      assert_int_equal(atomic_load(&j.runs[id]), 1);
    assert_int_equal(atomic_load(&j.next), worker_counts[w]);
  }
  /* 0: the executor's thread count, each on its own participant. */
  jobs_seen j;
  jobs_seen_init(&j, 3, -1);
  j.rendezvous = true;
  assert_int_equal(cpuexec_worker_jobs_run(ex.exec, 0, &j, record_job), 0);
  assert_int_equal(atomic_load(&j.next), 3);
  assert_int_equal(atomic_load(&j.wrong_count), 0);
  assert_false(pthread_equal(j.thread[0], j.thread[1]));
  assert_false(pthread_equal(j.thread[1], j.thread[2]));
  assert_false(pthread_equal(j.thread[0], j.thread[2]));
  /* NULL: the serial loop, in order, on the caller. */
  jobs_seen_init(&j, 5, -1);
  assert_int_equal(cpuexec_worker_jobs_run(NULL, 5, &j, record_job), 0);
  for (uint32_t k = 0; k < 5; k++) {
    assert_int_equal(j.order[k], k);
    assert_true(pthread_equal(j.thread[k], pthread_self()));
  }
  jobs_seen_init(&j, 1, -1);
  assert_int_equal(cpuexec_worker_jobs_run(NULL, 0, &j, record_job), 0);
  assert_int_equal(atomic_load(&j.next), 1);
  test_executor_destroy(&ex);
}

static void failing_worker_job_is_returned_after_started_jobs_finish(void **state) {
  (void)state;
  test_owned_executor ex;
  assert_int_equal(test_executor_create(3, &ex), 0);
  const int fail_ids[] = {0, 2, 6};
  for (size_t i = 0; i < 3; i++) {
    jobs_seen j;
    jobs_seen_init(&j, 7, fail_ids[i]);
    assert_int_equal(cpuexec_worker_jobs_run(ex.exec, 7, &j, record_job), CPUEXEC_ECALLBACK);
    assert_int_equal(cpuexec_error_callback_value(), 77);
    assert_int_equal(atomic_load(&j.started), atomic_load(&j.finished));
    assert_int_equal(atomic_load(&j.runs[fail_ids[i]]), 1);
  }
  jobs_seen j;
  jobs_seen_init(&j, 4, 1);
  assert_int_equal(cpuexec_worker_jobs_run(NULL, 4, &j, record_job), CPUEXEC_ECALLBACK);
  assert_int_equal(cpuexec_error_callback_value(), 77);
  assert_int_equal(atomic_load(&j.next), 2); /* serial: stops after id 1 */
  test_executor_destroy(&ex);
}

static void installed_job_pool_follows_the_installed_executor(void **state) {
  (void)state;
  cpuexec_job_pool installed = cpuexec_job_pool_installed();
  jobs_seen j;
  jobs_seen_init(&j, 1, -1);
  assert_int_equal(installed.run_pool(installed.pool, &j, record_job), 0);
  assert_int_equal(atomic_load(&j.next), 1);
  assert_true(pthread_equal(j.thread[0], pthread_self()));

  test_owned_executor ex;
  assert_int_equal(test_executor_create(3, &ex), 0);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(ex.exec, &scope), 0);
  jobs_seen_init(&j, 3, -1);
  assert_int_equal(installed.run_pool(installed.pool, &j, record_job), 0);
  assert_int_equal(atomic_load(&j.wrong_count), 0);
  for (uint32_t id = 0; id < 3; id++)
    assert_int_equal(atomic_load(&j.runs[id]), 1);
  /* Round trip: the libcpuexec job pool as a range executor. */
  cpuexec_range_executor round_trip = cpuexec_range_executor_from_job_pool(&installed);
  for (size_t n = 0; n < N_COUNTS; n++)
    assert_covers_exactly(&round_trip, counts[n]);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  test_executor_destroy(&ex);
}

/* A pool that hands out one id past its count. */
static int run_off_by_one_pool(void *pool, void *ctx, cpuexec_worker_job_fn job) {
  (void)pool;
  int first = 0;
  for (uint32_t id = 0; id <= 2; id++) {
    int rc = job(ctx, id, 2);
    if (rc != 0 && first == 0)
      first = rc;
  }
  return first;
}

static void job_pool_with_bad_worker_ids_is_reported(void **state) {
  (void)state;
  cpuexec_job_pool broken = {run_off_by_one_pool, NULL};
  cpuexec_range_executor ex = cpuexec_range_executor_from_job_pool(&broken);
  bounds_seen seen = {.count = 10};
  assert_int_equal(cpuexec_range_executor_run(&ex, 10, &seen, record_bounds), CPUEXEC_ERANGE);
  assert_non_null(strstr(cpuexec_error_message(), "worker_id 2 of worker_count 2"));
  assert_int_equal(seen.calls, 2);
  assert_int_equal(seen.out_of_bounds, 0);
}

/* ---- destinations: a reduction stages, a matmul writes in place ---- */

enum { KERNEL_ENAN = 1 };

typedef struct row_sum_call {
  const double *m;
  int64_t cols;
  double *stage;
} row_sum_call;

static int row_sums_range(void *arg, int64_t begin, int64_t end) {
  row_sum_call *c = arg;
  for (int64_t r = begin; r < end; r++) {
    double sum = 0;
    for (int64_t k = 0; k < c->cols; k++) {
      double v = c->m[r * c->cols + k];
      if (v != v)
        return KERNEL_ENAN;
      sum += v;
    }
    c->stage[r] = sum;
  }
  return 0;
}

/* An axis reduction as include/cpuexec/compat/range_executor.h describes it: one group per retained
 * coordinate, results staged, copied to dest only after success. */
static int row_sums(const cpuexec_range_executor *ex, const double *m, int64_t rows, int64_t cols, double *dest) {
  double *stage = malloc((size_t)rows * sizeof *stage);
  if (stage == NULL)
    return CPUEXEC_ENOMEM;
  row_sum_call call = {m, cols, stage};
  int rc = cpuexec_range_executor_run(ex, rows, &call, row_sums_range);
  if (rc == 0)
    memcpy(dest, stage, (size_t)rows * sizeof *dest);
  free(stage);
  /* The kernel's own code comes back through cpuexec_error_callback_value(). */
  return rc == CPUEXEC_ECALLBACK ? cpuexec_error_callback_value() : rc;
}

typedef struct matmul_call {
  const double *a, *b;
  double *c;
  int64_t inner, cols;
} matmul_call;

static int matmul_rows(void *arg, int64_t begin, int64_t end) {
  matmul_call *m = arg;
  for (int64_t r = begin; r < end; r++) {
    for (int64_t j = 0; j < m->cols; j++) {
      double sum = 0;
      for (int64_t k = 0; k < m->inner; k++)
        sum += m->a[r * m->inner + k] * m->b[k * m->cols + j];
      if (sum != sum)
        return KERNEL_ENAN;
      m->c[r * m->cols + j] = sum;
    }
  }
  return 0;
}

/* A matmul as include/cpuexec/compat/range_executor.h describes it: one group per output row, written in
 * place, so a failure may leave c partly written. */
static int matmul(const cpuexec_range_executor *ex, const double *a, const double *b, double *c, int64_t rows,
                  int64_t inner, int64_t cols) {
  matmul_call call = {a, b, c, inner, cols};
  int rc = cpuexec_range_executor_run(ex, rows, &call, matmul_rows);
  return rc == CPUEXEC_ECALLBACK ? cpuexec_error_callback_value() : rc;
}

#define ROWS 12
#define COLS 5

static void reduction_leaves_the_destination_unchanged_on_failure(void **state) {
  (void)state;
  test_owned_executor ex;
  assert_int_equal(test_executor_create(3, &ex), 0);
  test_pool *pool = test_pool_create(3);
  cpuexec_job_pool jp = test_pool_as_job_pool(pool);
  cpuexec_range_executor executors[] = {cpuexec_range_executor_serial(), cpuexec_range_executor_of(ex.exec),
                                        cpuexec_range_executor_from_job_pool(&jp)};
  double m[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; i++)
    m[i] = i % 7;
  for (size_t e = 0; e < 3; e++) {
    double dest[ROWS];
    assert_int_equal(row_sums(&executors[e], m, ROWS, COLS, dest), 0);
    for (int r = 0; r < ROWS; r++) {
      double expect = 0;
      for (int k = 0; k < COLS; k++)
        expect += m[r * COLS + k];
      assert_true(dest[r] == expect);
    }
    const int bad_rows[] = {0, 6, ROWS - 1};
    for (size_t b = 0; b < 3; b++) {
      double poisoned[ROWS * COLS];
      memcpy(poisoned, m, sizeof m);
      poisoned[bad_rows[b] * COLS + 2] = NAN;
      for (int r = 0; r < ROWS; r++)
        dest[r] = -7;
      assert_int_equal(row_sums(&executors[e], poisoned, ROWS, COLS, dest), KERNEL_ENAN);
      for (int r = 0; r < ROWS; r++)
        assert_true(dest[r] == -7);
    }
  }
  test_pool_destroy(pool);
  test_executor_destroy(&ex);
}

static void matmul_may_leave_the_destination_partly_written(void **state) {
  (void)state;
  enum { INNER = 4 };
  double a[ROWS * INNER], b[INNER * COLS], c[ROWS * COLS];
  for (int i = 0; i < ROWS * INNER; i++)
    a[i] = (i % 5) - 2;
  for (int i = 0; i < INNER * COLS; i++)
    b[i] = (i % 3) + 1;
  a[7 * INNER + 1] = NAN; /* row 7 fails */
  for (int i = 0; i < ROWS * COLS; i++)
    c[i] = -7;
  cpuexec_range_executor serial = cpuexec_range_executor_serial();
  assert_int_equal(matmul(&serial, a, b, c, ROWS, INNER, COLS), KERNEL_ENAN);
  /* Serially, rows before the failing one are written, the rest are not. */
  for (int r = 0; r < ROWS; r++)
    for (int j = 0; j < COLS; j++) {
      double expect = 0;
      for (int k = 0; k < INNER; k++)
        expect += a[r * INNER + k] * b[k * COLS + j];
      if (r < 7)
        assert_true(c[r * COLS + j] == expect);
      else
        assert_true(c[r * COLS + j] == -7);
    }

  /* In parallel the failing row's range stops early while others complete:
   * some rows written, the failing row not. */
  test_pool *pool = test_pool_create(3);
  cpuexec_job_pool jp = test_pool_as_job_pool(pool);
  cpuexec_range_executor from_pool = cpuexec_range_executor_from_job_pool(&jp);
  for (int i = 0; i < ROWS * COLS; i++)
    c[i] = -7;
  assert_int_equal(matmul(&from_pool, a, b, c, ROWS, INNER, COLS), KERNEL_ENAN);
  assert_true(c[0] != -7);              /* worker 0's rows 0..3 */
  assert_true(c[11 * COLS] != -7);      /* worker 2's rows 8..11 */
  assert_true(c[7 * COLS] == -7);       /* the failing row */
  test_pool_destroy(pool);
}

int main(void) {
  const struct CMUnitTest contract[] = {
      cmocka_unit_test(every_executor_covers_each_index_once),
      cmocka_unit_test(installed_executor_uses_every_participant),
      cmocka_unit_test(zero_and_one_groups_skip_the_executor),
      cmocka_unit_test(empty_ranges_are_allowed_and_not_passed_on),
      cmocka_unit_test(callbacks_run_with_nested_scheduling_disabled),
      cmocka_unit_test(callback_errors_come_back_as_ecallback_with_their_value),
      cmocka_unit_test(worker_error_is_returned_after_the_other_workers_finish),
      cmocka_unit_test(invalid_arguments_are_rejected),
  };
  const struct CMUnitTest broken[] = {
      cmocka_unit_test(core_reports_ranges_outside_the_count),
      cmocka_unit_test(checker_reports_overlaps_and_gaps_when_asked),
      cmocka_unit_test(checker_reports_an_executor_that_returns_early),
      cmocka_unit_test(job_pool_with_bad_worker_ids_is_reported),
  };
  const struct CMUnitTest job_pools[] = {
      cmocka_unit_test(job_pool_ranges_follow_the_floor_formula),
      cmocka_unit_test(three_worker_pool_is_reusable_across_many_runs),
      cmocka_unit_test(worker_jobs_run_once_per_id_on_an_executor),
      cmocka_unit_test(failing_worker_job_is_returned_after_started_jobs_finish),
      cmocka_unit_test(installed_job_pool_follows_the_installed_executor),
  };
  const struct CMUnitTest destinations[] = {
      cmocka_unit_test(reduction_leaves_the_destination_unchanged_on_failure),
      cmocka_unit_test(matmul_may_leave_the_destination_partly_written),
  };
  int failed = cmocka_run_group_tests_name("range_executor_contract", contract, NULL, NULL);
  failed += cmocka_run_group_tests_name("range_executor_broken_executors", broken, NULL, NULL);
  failed += cmocka_run_group_tests_name("job_pools", job_pools, NULL, NULL);
  failed += cmocka_run_group_tests_name("destination_rules", destinations, NULL, NULL);
  return failed;
}
