/* A callback's failure is never mistaken for a library error (issue 10,
 * section 3; the rule in cpuexec/errors.h): every call that runs a user
 * callback returns CPUEXEC_ECALLBACK, cpuexec_error_callback_value() gives the
 * value unchanged and cpuexec_error_message() says "callback failed with N",
 * for every int a callback may choose (-1, 1, INT_MIN, INT_MAX and each
 * CPUEXEC_E* code), whether the failing callback ran on the caller
 * (participant 0) or on a worker. A success leaves both untouched. */
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "support/test_util.h"
#include <cpuexec/compat/job_pool.h>
#include <cpuexec/compat/range_executor.h>
#include <cpuexec/compat/ranges.h>

static const int values[] = {-1, 1, INT_MIN, INT_MAX,
#define VALUE_OF(name, value, text) CPUEXEC_##name,
                             CPUEXEC_ERRNO_MAP(VALUE_OF)
#undef VALUE_OF
};
#define VALUE_COUNT (sizeof values / sizeof values[0])

/* Where the failing callback runs. */
enum where { ON_CALLER, ON_WORKER };

typedef struct failing {
  int value;
  enum where where;
  _Atomic int failed;  /* callbacks that returned value */
  int need;            /* callbacks that meet before any returns: 2 when the call is parallel */
  _Atomic int arrived;
} failing;

/* Both ranges of a parallel call run on different threads: each callback
 * waits (a latch, not a time) until the other has started. A participant
 * blocked here cannot take the other's range, so the other thread, once it
 * wakes, runs it; no participant waits on the clock. */
static void meet(failing *f) {
  atomic_fetch_add(&f->arrived, 1);
  while (atomic_load(&f->arrived) < f->need) sched_yield();
}

/* Fails on the chosen participant; the executor tests run 2 ranges on a
 * 2-thread executor, so participant 1 (a worker) always runs one. */
static int fail_on_participant(void *ctx, int64_t begin, int64_t end) {
  failing *f = ctx;
  (void)begin;
  (void)end;
  meet(f);
  if (cpuexec_participant_index() == (f->where == ON_CALLER ? 0 : 1)) {
    atomic_fetch_add(&f->failed, 1);
    return f->value;
  }
  return 0;
}

static int fail_job(void *ctx, int32_t id, int32_t workers) {
  (void)id;
  (void)workers;
  return fail_on_participant(ctx, 0, 1);
}

/* A foreign pool has no participant index: its first share stands for "the
 * caller's" and its last for "a worker's". */
static int fail_on_share(void *ctx, int64_t begin, int64_t end) {
  failing *f = ctx;
  meet(f);
  if ((f->where == ON_CALLER && begin == 0) || (f->where == ON_WORKER && end == 2)) {
    atomic_fetch_add(&f->failed, 1);
    return f->value;
  }
  return 0;
}

static void expect_callback_failure(const char *call, int rc, const failing *f) {
  char want[64];
  snprintf(want, sizeof want, "callback failed with %d", f->value);
  if (rc != CPUEXEC_ECALLBACK || cpuexec_error_callback_value() != f->value ||
      strstr(cpuexec_error_message(), want) == NULL || atomic_load(&f->failed) < 1)
    fail_msg("%s, value %d on the %s: returned %d (%s), last_callback_error %d, message '%s', failed %d", call,
             f->value, f->where == ON_CALLER ? "caller" : "worker", rc, cpuexec_error_name(rc),
             cpuexec_error_callback_value(), cpuexec_error_message(), atomic_load(&f->failed));
}

typedef struct session_ctx {
  failing *f;
  cpuexec_executor *exec;
} session_ctx;

static int session_body(void *ctx) {
  session_ctx *s = ctx;
  if (s->f->where == ON_CALLER) {
    atomic_fetch_add(&s->f->failed, 1);
    return s->f->value;
  }
  /* On a worker: the nested call fails with CPUEXEC_ECALLBACK, which the
   * body returns as its own value. */
  return cpuexec_parallel_for(cpuexec_executor_current(), 2, 1, s->f, fail_on_participant, 0);
}

static void every_call_reports_every_value_as_ecallback(void **state) {
  (void)state;
  test_owned_executor ex;
  assert_int_equal(test_executor_create(2, &ex), 0);
  test_pool *pool = test_pool_create(2);
  cpuexec_job_pool jp = test_pool_as_job_pool(pool);
  cpuexec_range_executor of = cpuexec_range_executor_of(ex.exec);
  cpuexec_range_executor installed = cpuexec_range_executor_installed();
  cpuexec_range_executor foreign = cpuexec_range_executor_from_job_pool(&jp);
  cpuexec_range_executor serial = cpuexec_range_executor_serial();
  cpuexec_cost heavy = {.compute_cycles = 1e9};
  cpuexec_plan plan;
  assert_int_equal(cpuexec_parallel_for_plan(ex.exec, 2, &heavy, NULL, &plan), 0);
  assert_int_equal(plan.participants, 2); /* so the worker case runs a range */
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = 2;
  cpuexec_session *session = NULL;
  assert_int_equal(cpuexec_session_create(&policy, &session), 0);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(ex.exec, &scope), 0);

  for (size_t v = 0; v < VALUE_COUNT; v++)
    for (int w = ON_CALLER; w <= ON_WORKER; w++) {
#define CHECK_NEED(call_text, call, needed)                                \
  do {                                                                   \
    failing f = {.value = values[v], .where = (enum where)w, .need = (needed)}; \
    atomic_init(&f.failed, 0);                                           \
    atomic_init(&f.arrived, 0);                                          \
    expect_callback_failure(call_text, (call), &f);                      \
  } while (0)
#define CHECK(call_text, call) CHECK_NEED(call_text, call, 2)
      CHECK("cpuexec_parallel_for", cpuexec_parallel_for(ex.exec, 2, 1, &f, fail_on_participant, 0));
      CHECK("cpuexec_parallel_for_costed",
            cpuexec_parallel_for_costed(ex.exec, 2, &heavy, NULL, &f, fail_on_participant));
      CHECK("cpuexec_ranges_execute", cpuexec_ranges_execute(2, NULL, &f, fail_on_participant));
      CHECK("cpuexec_ranges_execute_costed",
            cpuexec_ranges_execute_costed(2, &heavy, NULL, 0, &f, fail_on_participant));
      CHECK("cpuexec_range_executor_run (of)", cpuexec_range_executor_run(&of, 2, &f, fail_on_participant));
      CHECK("cpuexec_range_executor_run (installed)",
            cpuexec_range_executor_run(&installed, 2, &f, fail_on_participant));
      CHECK("cpuexec_range_executor_run (job pool)", cpuexec_range_executor_run(&foreign, 2, &f, fail_on_share));
      CHECK("cpuexec_worker_jobs_run", cpuexec_worker_jobs_run(ex.exec, 2, &f, fail_job));
      if (w == ON_CALLER) {
        CHECK_NEED("cpuexec_range_executor_run (serial)", cpuexec_range_executor_run(&serial, 2, &f, fail_on_share), 1);
        CHECK_NEED("cpuexec_parallel_for (NULL executor)", cpuexec_parallel_for(NULL, 2, 1, &f, fail_on_participant, 0),
                   1);
        CHECK_NEED("cpuexec_worker_jobs_run (NULL executor)", cpuexec_worker_jobs_run(NULL, 1, &f, fail_job), 1);
      }
      {
        failing f = {.value = values[v], .where = (enum where)w, .need = 2};
        atomic_init(&f.failed, 0);
        atomic_init(&f.arrived, 0);
        session_ctx s = {&f, NULL};
        int rc = cpuexec_session_run(session, &s, session_body);
        if (w == ON_CALLER) {
          expect_callback_failure("cpuexec_session_run", rc, &f);
        } else {
          /* The body returned the nested call's CPUEXEC_ECALLBACK: that is
           * the value the session reports, the worker's value having come
           * back to the body first. */
          assert_int_equal(rc, CPUEXEC_ECALLBACK);
          assert_int_equal(cpuexec_error_callback_value(), CPUEXEC_ECALLBACK);
          assert_int_equal(atomic_load(&f.failed), 1);
        }
      }
#undef CHECK
#undef CHECK_NEED
    }
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  cpuexec_session_destroy(session);
  test_pool_destroy(pool);
  test_executor_destroy(&ex);
}

static int succeed(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  (void)begin;
  (void)end;
  return 0;
}

/* After a success the thread still reads its last failure (like errno); a
 * library error names itself and leaves the callback value alone. */
static void successes_leave_the_last_failure_and_library_errors_are_not_callbacks(void **state) {
  (void)state;
  test_owned_executor ex;
  assert_int_equal(test_executor_create(2, &ex), 0);
  failing f = {.value = -1, .where = ON_WORKER, .need = 2};
  atomic_init(&f.failed, 0);
  atomic_init(&f.arrived, 0);
  assert_int_equal(cpuexec_parallel_for(ex.exec, 2, 1, &f, fail_on_participant, 0), CPUEXEC_ECALLBACK);
  char before[512];
  snprintf(before, sizeof before, "%s", cpuexec_error_message());
  assert_int_equal(cpuexec_parallel_for(ex.exec, 1000, 1, NULL, succeed, 0), 0);
  assert_int_equal(cpuexec_ranges_execute(1000, NULL, NULL, succeed), 0);
  assert_string_equal(cpuexec_error_message(), before);
  assert_int_equal(cpuexec_error_callback_value(), -1);

  /* grain 0 is the library's EINVAL: not a callback failure. */
  assert_int_equal(cpuexec_parallel_for(ex.exec, 10, 0, NULL, succeed, 0), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "grain"));
  assert_null(strstr(cpuexec_error_message(), "callback failed"));
  assert_int_equal(cpuexec_error_callback_value(), -1);
  assert_int_equal(cpuexec_parallel_for(ex.exec, 10, 1, NULL, succeed, -1), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "max_participants: -1"));
  test_executor_destroy(&ex);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_call_reports_every_value_as_ecallback),
      cmocka_unit_test(successes_leave_the_last_failure_and_library_errors_are_not_callbacks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
