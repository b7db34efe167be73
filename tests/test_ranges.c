/* Range schedules and costed ranges (include/cpuexec/compat/ranges.h): its header's rules as a
 * matrix of executors x totals x schedules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "support/test_util.h"
#include <cpuexec/compat/ranges.h>

static uint64_t expected_blocks(int64_t total, const cpuexec_range_schedule *s, uint32_t threads) {
  if (total < s->min_parallel_size)
    return 1;
  uint64_t m = s->block_multiple != 0 ? (uint64_t)s->block_multiple : 1; /* 0 means 1 */
  uint64_t min_block = s->min_block_size != 0 ? (uint64_t)s->min_block_size : 1;
  uint64_t units = ((uint64_t)total + m - 1) / m;
  uint64_t min_units = (min_block + m - 1) / m;
  uint64_t blocks = units / min_units;
  uint64_t limit = threads;
  if (s->max_participants != 0 && (uint64_t)s->max_participants < limit)
    limit = (uint64_t)s->max_participants;
  if (s->preferred_participants != 0 && (uint64_t)s->preferred_participants < limit)
    limit = (uint64_t)s->preferred_participants;
  if (blocks > limit)
    blocks = limit;
  return blocks < 1 ? 1 : blocks;
}

static void assert_one_block_on_caller(const test_coverage *c, int64_t total) {
  assert_int_equal(atomic_load(&c->callbacks), 1);
  assert_int_equal(c->range_begin[0], 0);
  assert_int_equal(c->range_end[0], total);
  assert_true(pthread_equal(c->range_thread[0], pthread_self()));
}

/* ---- standalone: no executor installed ---- */

static void standalone_call_runs_one_block_on_the_caller(void **state) {
  (void)state;
  cpuexec_range_schedule s;
  cpuexec_range_schedule_init(&s);
  s.max_participants = 0; /* opted in, but there is no executor */
  assert_null(cpuexec_executor_current());
  const int64_t totals[] = {1, 7, 1000, 100003};
  for (size_t i = 0; i < sizeof totals / sizeof totals[0]; i++) {
    test_coverage c;
    test_coverage_init(&c, totals[i]);
    assert_int_equal(cpuexec_ranges_execute(totals[i], &s, &c, test_coverage_record), 0);
    assert_one_block_on_caller(&c, totals[i]);
    assert_true(test_coverage_exact(&c));
    test_coverage_free(&c);
  }
}

static void empty_total_calls_nothing(void **state) {
  (void)state;
  test_coverage c;
  test_coverage_init(&c, 0);
  assert_int_equal(cpuexec_ranges_execute(0, NULL, &c, test_coverage_record), 0);
  assert_int_equal(cpuexec_ranges_execute(-5, NULL, &c, test_coverage_record), 0);
  cpuexec_cost cost = {.bytes_read = 8, .bytes_written = 8, .compute_cycles = 100};
  assert_int_equal(cpuexec_ranges_execute_costed(0, &cost, NULL, 1, &c, test_coverage_record), 0);
  assert_int_equal(atomic_load(&c.callbacks), 0);
}

static int count_calls(void *ctx, int64_t begin, int64_t end) {
  (void)begin;
  (void)end;
  (*(int *)ctx)++;
  return 0;
}

static void invalid_schedules_are_rejected_naming_the_field(void **state) {
  (void)state;
  struct {
    const char *field;
    cpuexec_range_schedule s;
  } cases[4];
  for (size_t i = 0; i < 4; i++)
    cpuexec_range_schedule_init(&cases[i].s);
  cases[0].field = "min_parallel_size";
  cases[0].s.min_parallel_size = -1;
  cases[1].field = "min_block_size";
  cases[1].s.min_block_size = -1;
  cases[2].field = "max_participants";
  cases[2].s.max_participants = -2;
  cases[3].field = "block_multiple";
  cases[3].s.block_multiple = -8;
  for (size_t i = 0; i < 4; i++) {
    int calls = 0;
    assert_int_equal(cpuexec_ranges_execute(10, &cases[i].s, &calls, count_calls), CPUEXEC_EINVAL);
    assert_non_null(strstr(cpuexec_error_message(), cases[i].field));
    assert_int_equal(calls, 0);
  }
  assert_int_equal(cpuexec_ranges_execute(10, NULL, NULL, NULL), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "fn"));
  cpuexec_cost cost = {.bytes_read = 1, .bytes_written = 1, .compute_cycles = 1};
  int calls = 0;
  assert_int_equal(cpuexec_ranges_execute_costed(10, &cost, NULL, -1, &calls, count_calls), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "block_multiple"));
  assert_int_equal(cpuexec_ranges_execute_costed(10, NULL, NULL, 1, &calls, count_calls), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "cost"));
  assert_int_equal(calls, 0);
}

/* ---- an installed executor owns dispatch ---- */

typedef struct schedule_case {
  int64_t min_parallel_size, min_block_size, block_multiple;
  uint32_t max_participants, preferred_participants;
} schedule_case;

static const schedule_case schedule_cases[] = {
    {1, 1, 1, 0, 0},     {1, 1, 1, 2, 0},   {1, 1, 1, 0, 2},  {1, 16, 1, 0, 0}, {1, 1, 8, 0, 0},
    {1, 10, 8, 0, 0},    {1, 100, 4, 3, 0}, {64, 1, 1, 0, 0}, {1, 1, 1, 1, 0}, {1, 1000, 1, 0, 0},
    {1, 7, 3, 0, 3},     {1, 1, 16, 8, 8},
};
static const int64_t schedule_totals[] = {1, 2, 3, 7, 16, 63, 64, 65, 1000, 4099, 65536};
static const uint32_t executor_threads[] = {2, 3, 4};

static void installed_executor_owns_dispatch(void **state) {
  (void)state;
  for (size_t t = 0; t < sizeof executor_threads / sizeof executor_threads[0]; t++) {
    test_owned_executor ex;
    assert_int_equal(test_executor_create(executor_threads[t], &ex), 0);
    uint32_t threads = cpuexec_executor_effective_threads(ex.exec);
    assert_int_equal(threads, executor_threads[t]);
    cpuexec_scope scope;
    assert_int_equal(cpuexec_scope_enter(ex.exec, &scope), 0);
    for (size_t k = 0; k < sizeof schedule_cases / sizeof schedule_cases[0]; k++) {
      const schedule_case *sc = &schedule_cases[k];
      cpuexec_range_schedule s;
      cpuexec_range_schedule_init(&s);
      s.min_parallel_size = sc->min_parallel_size;
      s.min_block_size = sc->min_block_size;
      s.block_multiple = sc->block_multiple;
      s.max_participants = sc->max_participants;
      s.preferred_participants = sc->preferred_participants;
      for (size_t n = 0; n < sizeof schedule_totals / sizeof schedule_totals[0]; n++) {
        int64_t total = schedule_totals[n];
        uint64_t blocks = expected_blocks(total, &s, threads);
        test_coverage c;
        test_coverage_init(&c, total);
        c.wait_for_all = 1;
        assert_int_equal(cpuexec_ranges_execute(total, &s, &c, test_coverage_record), 0);
        assert_true(test_coverage_exact(&c));
        unsigned calls = atomic_load(&c.callbacks);
        /* Each admitted participant runs one block (the executor runs one
         * range per participant when it has a grain for each). */
        assert_int_equal(calls, blocks);
        assert_int_equal(test_coverage_threads(&c), blocks);
        if (blocks == 1)
          assert_one_block_on_caller(&c, total);
        for (unsigned r = 0; r < calls; r++) {
          int64_t b = c.range_begin[r], e = c.range_end[r];
          assert_true(b % sc->block_multiple == 0);
          assert_true(e == total || e % sc->block_multiple == 0);
          if (blocks > 1)
            assert_true(e - b >= sc->min_block_size || e == total);
        }
        /* The scope is as it was: same executor, no region left open. */
        assert_ptr_equal(cpuexec_executor_current(), ex.exec);
        assert_int_equal(cpuexec_participant_count(), 1);
        test_coverage_free(&c);
      }
    }
    assert_int_equal(cpuexec_scope_leave(&scope), 0);
    assert_null(cpuexec_executor_current());
    test_executor_destroy(&ex);
  }
}

/* {0}, cpuexec_range_schedule_init() and NULL are one schedule: a block per
 * thread of the installed executor; max_participants = 1 keeps a kernel
 * serial. */
static void defaults_use_every_thread_and_zero_is_the_default(void **state) {
  (void)state;
  test_owned_executor ex;
  assert_int_equal(test_executor_create(4, &ex), 0);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(ex.exec, &scope), 0);
  cpuexec_range_schedule zero = {0}, init, serial;
  memset(&init, 0xA5, sizeof init);
  cpuexec_range_schedule_init(&init);
  assert_memory_equal(&zero, &init, sizeof zero);
  cpuexec_range_schedule_init(&serial);
  serial.max_participants = 1;
  const cpuexec_range_schedule *schedules[] = {NULL, &zero, &init};
  for (size_t i = 0; i < 3; i++) {
    test_coverage c;
    test_coverage_init(&c, 100000);
    assert_int_equal(cpuexec_ranges_execute(100000, schedules[i], &c, test_coverage_record), 0);
    assert_int_equal(atomic_load(&c.callbacks), 4);
    assert_true(test_coverage_exact(&c));
    test_coverage_free(&c);
  }
  test_coverage c;
  test_coverage_init(&c, 100000);
  assert_int_equal(cpuexec_ranges_execute(100000, &serial, &c, test_coverage_record), 0);
  assert_one_block_on_caller(&c, 100000);
  test_coverage_free(&c);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  test_executor_destroy(&ex);
}

static void small_work_stays_inline(void **state) {
  (void)state;
  test_owned_executor ex;
  assert_int_equal(test_executor_create(4, &ex), 0);
  assert_int_equal(cpuexec_executor_counters_enable(ex.exec), 0);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(ex.exec, &scope), 0);
  /* Below min_parallel_size; and too small for two blocks of min_block_size. */
  cpuexec_range_schedule below, one_block;
  cpuexec_range_schedule_init(&below);
  below.max_participants = 0;
  below.min_parallel_size = 4096;
  cpuexec_range_schedule_init(&one_block);
  one_block.max_participants = 0;
  one_block.min_block_size = 600;
  const struct {
    const cpuexec_range_schedule *s;
    int64_t total;
  } cases[] = {{&below, 1}, {&below, 4095}, {&one_block, 600}, {&one_block, 1199}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    test_coverage c;
    test_coverage_init(&c, cases[i].total);
    assert_int_equal(cpuexec_ranges_execute(cases[i].total, cases[i].s, &c, test_coverage_record), 0);
    assert_one_block_on_caller(&c, cases[i].total);
    test_coverage_free(&c);
  }
  /* Small work never reaches the executor. */
  cpuexec_counters counters;
  assert_int_equal(cpuexec_executor_counters_get(ex.exec, &counters), 0);
  assert_int_equal(counters.dispatches + counters.nested_inline + counters.limited_inline, 0);
  /* One more index over each threshold does split. */
  test_coverage c;
  test_coverage_init(&c, 4096);
  assert_int_equal(cpuexec_ranges_execute(4096, &below, &c, test_coverage_record), 0);
  assert_int_equal(atomic_load(&c.callbacks), 4);
  test_coverage_free(&c);
  test_coverage_init(&c, 1200);
  assert_int_equal(cpuexec_ranges_execute(1200, &one_block, &c, test_coverage_record), 0);
  assert_int_equal(atomic_load(&c.callbacks), 2);
  test_coverage_free(&c);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  test_executor_destroy(&ex);
}

static void explicit_scope_supplies_an_executor_for_direct_calls(void **state) {
  (void)state;
  test_owned_executor ex;
  assert_int_equal(test_executor_create(2, &ex), 0);
  cpuexec_range_schedule s;
  cpuexec_range_schedule_init(&s);
  s.max_participants = 0;
  test_coverage c;
  test_coverage_init(&c, 1000);
  c.wait_for_all = 1;
  assert_int_equal(cpuexec_ranges_execute(1000, &s, &c, test_coverage_record), 0);
  assert_int_equal(atomic_load(&c.callbacks), 1); /* no scope: serial */
  test_coverage_free(&c);

  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(ex.exec, &scope), 0);
  test_coverage_init(&c, 1000);
  c.wait_for_all = 1;
  assert_int_equal(cpuexec_ranges_execute(1000, &s, &c, test_coverage_record), 0);
  assert_int_equal(atomic_load(&c.callbacks), 2);
  assert_int_equal(test_coverage_threads(&c), 2);
  assert_true(test_coverage_exact(&c));
  test_coverage_free(&c);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);

  test_coverage_init(&c, 1000);
  c.wait_for_all = 1;
  assert_int_equal(cpuexec_ranges_execute(1000, &s, &c, test_coverage_record), 0);
  assert_int_equal(atomic_load(&c.callbacks), 1); /* left: serial again */
  test_coverage_free(&c);
  test_executor_destroy(&ex);
}

/* ---- nesting ---- */

typedef struct nested_ctx {
  cpuexec_executor *exec;
  cpuexec_range_schedule schedule;
  atomic_uint inner_calls;
  atomic_uint inner_elsewhere;
  atomic_uint wrong_executor;
  atomic_uint inner_indices;
} nested_ctx;

typedef struct inner_ctx {
  nested_ctx *outer;
  pthread_t thread;
} inner_ctx;

static int inner_block(void *arg, int64_t begin, int64_t end) {
  inner_ctx *inner = arg;
  atomic_fetch_add(&inner->outer->inner_calls, 1);
  atomic_fetch_add(&inner->outer->inner_indices, (unsigned)(end - begin));
  if (!pthread_equal(inner->thread, pthread_self()))
    atomic_fetch_add(&inner->outer->inner_elsewhere, 1);
  return 0;
}

static int outer_block(void *arg, int64_t begin, int64_t end) {
  (void)begin;
  (void)end;
  nested_ctx *n = arg;
  if (cpuexec_executor_current() != n->exec)
    atomic_fetch_add(&n->wrong_executor, 1);
  inner_ctx inner = {n, pthread_self()};
  int rc = cpuexec_ranges_execute(1000, &n->schedule, &inner, inner_block);
  if (rc != 0)
    return rc;
  cpuexec_cost cost = {.bytes_read = 64, .bytes_written = 64, .compute_cycles = 1e6};
  return cpuexec_ranges_execute_costed(1000, &cost, NULL, 1, &inner, inner_block);
}

static void nested_ranges_do_not_dispatch_again(void **state) {
  (void)state;
  test_owned_executor ex;
  assert_int_equal(test_executor_create(4, &ex), 0);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_executor_counters_enable(ex.exec), 0);
  assert_int_equal(cpuexec_scope_enter(ex.exec, &scope), 0);
  nested_ctx n = {.exec = ex.exec};
  cpuexec_range_schedule_init(&n.schedule);
  n.schedule.max_participants = 0;
  atomic_init(&n.inner_calls, 0);
  atomic_init(&n.inner_elsewhere, 0);
  atomic_init(&n.wrong_executor, 0);
  atomic_init(&n.inner_indices, 0);
  assert_int_equal(cpuexec_ranges_execute(4000, &n.schedule, &n, outer_block), 0);
  /* Four outer blocks, each with one inner block per inner call. */
  assert_int_equal(atomic_load(&n.inner_calls), 4 * 2);
  assert_int_equal(atomic_load(&n.inner_indices), 4 * 2 * 1000);
  assert_int_equal(atomic_load(&n.inner_elsewhere), 0);
  assert_int_equal(atomic_load(&n.wrong_executor), 0);
  /* The inner calls never reached the executor, not even to run inline. */
  cpuexec_counters counters;
  assert_int_equal(cpuexec_executor_counters_get(ex.exec, &counters), 0);
  assert_int_equal(counters.dispatches, 1);
  assert_int_equal(counters.nested_inline, 0);
  assert_int_equal(counters.limited_inline, 0);

  /* An outer call that chose one block still makes nested calls direct. */
  atomic_store(&n.inner_calls, 0);
  cpuexec_range_schedule serial_outer;
  cpuexec_range_schedule_init(&serial_outer);
  serial_outer.max_participants = 1;
  assert_int_equal(cpuexec_ranges_execute(10, &serial_outer, &n, outer_block), 0);
  assert_int_equal(atomic_load(&n.inner_calls), 2);
  assert_int_equal(atomic_load(&n.inner_elsewhere), 0);
  assert_int_equal(cpuexec_executor_counters_get(ex.exec, &counters), 0);
  assert_int_equal(counters.dispatches, 1);
  assert_int_equal(counters.nested_inline + counters.limited_inline, 0);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  test_executor_destroy(&ex);
}

/* ---- failures ---- */

typedef struct failing_ctx {
  int64_t fail_at;
  int code;
  atomic_uint started;
  atomic_uint finished;
} failing_ctx;

static int failing_block(void *arg, int64_t begin, int64_t end) {
  failing_ctx *f = arg;
  atomic_fetch_add(&f->started, 1);
  int rc = 0;
  if (f->fail_at >= begin && f->fail_at < end)
    rc = f->code;
  else
    test_busy_work(200);
  atomic_fetch_add(&f->finished, 1);
  return rc;
}

static void callback_failure_propagates_and_restores_the_scope(void **state) {
  (void)state;
  test_owned_executor ex;
  assert_int_equal(test_executor_create(4, &ex), 0);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(ex.exec, &scope), 0);
  cpuexec_range_schedule s;
  cpuexec_range_schedule_init(&s);
  s.max_participants = 0;
  const int64_t fail_points[] = {0, 500, 999};
  for (size_t i = 0; i < sizeof fail_points / sizeof fail_points[0]; i++) {
    failing_ctx f = {.fail_at = fail_points[i], .code = 17};
    atomic_init(&f.started, 0);
    atomic_init(&f.finished, 0);
    assert_int_equal(cpuexec_ranges_execute(1000, &s, &f, failing_block), CPUEXEC_ECALLBACK);
    assert_int_equal(cpuexec_error_callback_value(), 17);
    /* Every started callback finished before the call returned. */
    assert_int_equal(atomic_load(&f.started), atomic_load(&f.finished));
    assert_ptr_equal(cpuexec_executor_current(), ex.exec);
    assert_int_equal(cpuexec_participant_count(), 1);
    /* The depth is back to zero: the next call dispatches again. */
    test_coverage c;
    test_coverage_init(&c, 1000);
    assert_int_equal(cpuexec_ranges_execute(1000, &s, &c, test_coverage_record), 0);
    assert_int_equal(atomic_load(&c.callbacks), 4);
    test_coverage_free(&c);
  }
  /* The serial path restores the depth too. */
  failing_ctx f = {.fail_at = 3, .code = -1000};
  atomic_init(&f.started, 0);
  atomic_init(&f.finished, 0);
  assert_int_equal(cpuexec_ranges_execute(10, NULL, &f, failing_block), CPUEXEC_ECALLBACK);
  assert_int_equal(cpuexec_error_callback_value(), -1000);
  test_coverage c;
  test_coverage_init(&c, 1000);
  assert_int_equal(cpuexec_ranges_execute(1000, &s, &c, test_coverage_record), 0);
  assert_int_equal(atomic_load(&c.callbacks), 4);
  test_coverage_free(&c);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  test_executor_destroy(&ex);
}

/* ---- costed ranges ---- */

static void costed_ranges_follow_the_plan(void **state) {
  (void)state;
  test_owned_executor ex;
  assert_int_equal(test_executor_create(4, &ex), 0);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(ex.exec, &scope), 0);
  const cpuexec_cost costs[] = {{.bytes_read = 4, .bytes_written = 4, .compute_cycles = 1},
                                {.bytes_read = 64, .bytes_written = 64, .compute_cycles = 1000},
                                {.compute_cycles = 1e6}};
  const int64_t totals[] = {3, 100, 10000, 1000000};
  const int64_t multiples[] = {1, 8};
  const cpuexec_plan_constraints constraints[] = {{0}, {.max_participants = 2}, {.preferred_participants = 3}};
  unsigned parallel_plans = 0;
  for (size_t ci = 0; ci < 3; ci++)
    for (size_t ti = 0; ti < 4; ti++)
      for (size_t mi = 0; mi < 2; mi++)
        for (size_t ki = 0; ki < 3; ki++) {
          int64_t total = totals[ti];
          cpuexec_plan plan;
          assert_int_equal(cpuexec_parallel_for_plan(ex.exec, total, &costs[ci], &constraints[ki], &plan), 0);
          int64_t grain = plan.grain < 1 ? 1 : plan.grain;
          grain = (grain + multiples[mi] - 1) / multiples[mi] * multiples[mi];
          test_coverage c;
          test_coverage_init(&c, total);
          assert_int_equal(cpuexec_ranges_execute_costed(total, &costs[ci], &constraints[ki], multiples[mi], &c,
                                                         test_coverage_record),
                           0);
          assert_true(test_coverage_exact(&c));
          unsigned calls = atomic_load(&c.callbacks);
          if (plan.participants <= 1 || grain >= total) {
            assert_one_block_on_caller(&c, total);
            test_coverage_free(&c);
            continue;
          }
          parallel_plans++;
          assert_true(test_coverage_threads(&c) <= (unsigned)plan.participants);
          assert_true(calls <= (uint64_t)((total + grain - 1) / grain));
          for (unsigned r = 0; r < calls && r < TEST_MAX_RANGES; r++) {
            int64_t b = c.range_begin[r], e = c.range_end[r];
            assert_true(b % grain == 0);
            assert_true(e == total || (e - b) % grain == 0);
          }
          test_coverage_free(&c);
        }
  /* The cheap cost must stay serial and the expensive one must not, or the
   * matrix above proved nothing about following a parallel plan. */
  assert_true(parallel_plans > 0);
  cpuexec_plan plan;
  assert_int_equal(cpuexec_parallel_for_plan(ex.exec, 3, &costs[0], &constraints[0], &plan), 0);
  assert_int_equal(plan.participants, 1);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  test_executor_destroy(&ex);
}

static void costed_ranges_without_an_executor_run_one_block(void **state) {
  (void)state;
  cpuexec_cost cost = {.bytes_read = 0, .bytes_written = 0, .compute_cycles = 1e6};
  test_coverage c;
  test_coverage_init(&c, 100000);
  assert_int_equal(cpuexec_ranges_execute_costed(100000, &cost, NULL, 4, &c, test_coverage_record), 0);
  assert_one_block_on_caller(&c, 100000);
  test_coverage_free(&c);
}

/* ---- arithmetic near the top of int64_t ---- */

static void huge_totals_split_without_overflow(void **state) {
  (void)state;
  test_owned_executor ex;
  assert_int_equal(test_executor_create(3, &ex), 0);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(ex.exec, &scope), 0);
  cpuexec_range_schedule s;
  cpuexec_range_schedule_init(&s);
  s.max_participants = 0;
  const int64_t multiples[] = {1, 8, INT64_MAX / 5};
  for (size_t i = 0; i < 3; i++) {
    s.block_multiple = multiples[i];
    test_coverage c;
    test_coverage_init(&c, INT64_MAX);
    assert_int_equal(cpuexec_ranges_execute(INT64_MAX, &s, &c, test_coverage_record), 0);
    assert_int_equal(atomic_load(&c.callbacks), 3);
    assert_true(test_coverage_exact(&c));
    test_coverage_free(&c);
  }
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  test_executor_destroy(&ex);
}

int main(void) {
  const struct CMUnitTest standalone[] = {
      cmocka_unit_test(standalone_call_runs_one_block_on_the_caller),
      cmocka_unit_test(empty_total_calls_nothing),
      cmocka_unit_test(invalid_schedules_are_rejected_naming_the_field),
      cmocka_unit_test(costed_ranges_without_an_executor_run_one_block),
  };
  const struct CMUnitTest installed[] = {
      cmocka_unit_test(installed_executor_owns_dispatch),
      cmocka_unit_test(defaults_use_every_thread_and_zero_is_the_default),
      cmocka_unit_test(small_work_stays_inline),
      cmocka_unit_test(explicit_scope_supplies_an_executor_for_direct_calls),
      cmocka_unit_test(nested_ranges_do_not_dispatch_again),
      cmocka_unit_test(callback_failure_propagates_and_restores_the_scope),
      cmocka_unit_test(costed_ranges_follow_the_plan),
      cmocka_unit_test(huge_totals_split_without_overflow),
  };
  int failed = cmocka_run_group_tests_name("ranges_standalone", standalone, NULL, NULL);
  failed += cmocka_run_group_tests_name("ranges_on_an_installed_executor", installed, NULL, NULL);
  return failed;
}
