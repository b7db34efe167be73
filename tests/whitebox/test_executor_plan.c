/* Costed planning: small work plans one participant, more work or more
 * compute per byte never plans fewer, limits are respected, and a costed
 * call runs every index once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "support/test_util.h"

static void check_plan_shape(const cpuexec_plan *p, int64_t total, uint32_t limit) {
  assert_true(p->participants >= 1 && (uint32_t)p->participants <= limit);
  assert_true(p->grain >= 1);
  if (total > 0) {
    assert_true(p->grain <= total);
    int64_t ranges = total / p->grain + (total % p->grain != 0);
    assert_true(ranges >= (int64_t)p->participants); /* every planned participant gets a range */
  }
}

static void small_work_plans_one_participant(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(4);
  cpuexec_cost cost = {.bytes_read = 8, .bytes_written = 4, .compute_cycles = 1};
  cpuexec_plan p;
  static const int64_t totals[] = {-1, 0, 1, 2, 10, 100};
  for (size_t i = 0; i < 6; i++) {
    assert_int_equal(cpuexec_parallel_for_plan(exec, totals[i], &cost, NULL, &p), 0);
    assert_int_equal(p.participants, 1);
    check_plan_shape(&p, totals[i], 4);
  }
  cpuexec_executor_release(exec);
}

static void large_work_plans_every_participant(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(4);
  cpuexec_cost cost = {.bytes_read = 8, .bytes_written = 4, .compute_cycles = 100};
  cpuexec_plan p;
  assert_int_equal(cpuexec_parallel_for_plan(exec, 10000000, &cost, NULL, &p), 0);
  assert_int_equal(p.participants, 4);
  check_plan_shape(&p, 10000000, 4);
  /* Without an executor everything runs on the caller. */
  assert_int_equal(cpuexec_parallel_for_plan(NULL, 10000000, &cost, NULL, &p), 0);
  assert_int_equal(p.participants, 1);
  cpuexec_executor_release(exec);
}

static void more_work_or_compute_never_plans_fewer_participants(void **state) {
  (void)state;
  static const uint32_t threads[] = {2, 8};
  for (size_t t = 0; t < 2; t++) {
    cpuexec_executor *exec = test_executor(threads[t]);
    for (double bytes = 0; bytes <= 64; bytes += 16) {
      uint32_t last_by_total = 0;
      for (int64_t total = 1; total < ((int64_t)1 << 40); total = total * 3 / 2 + 1) {
        uint32_t last_by_compute = 0;
        for (double cycles = 0; cycles <= 4096; cycles = cycles * 2 + 1) {
          cpuexec_cost cost = {.bytes_read = bytes, .bytes_written = bytes / 2, .compute_cycles = cycles};
          cpuexec_plan p;
          assert_int_equal(cpuexec_parallel_for_plan(exec, total, &cost, NULL, &p), 0);
          check_plan_shape(&p, total, threads[t]);
          assert_true((uint32_t)p.participants >= last_by_compute);
          last_by_compute = p.participants;
        }
        cpuexec_cost fixed = {.bytes_read = bytes, .bytes_written = bytes / 2, .compute_cycles = 10};
        cpuexec_plan p;
        cpuexec_parallel_for_plan(exec, total, &fixed, NULL, &p);
        /* Where the data leaves the cache (src/executor/plan.c: CACHED_BYTES) the
         * loop becomes bandwidth-bound, and the plan may narrow to what
         * memory can feed, never below 4 participants (or the limit). */
        double footprint = (double)total * bytes * 1.5, before = footprint / (1.5 + (double)1 / total);
        if (footprint > 1 << 20 && before <= 1 << 20)
          assert_true((uint32_t)p.participants >= (last_by_total < 4 ? last_by_total : 4));
        else
          assert_true((uint32_t)p.participants >= last_by_total);
        last_by_total = p.participants;
      }
    }
    cpuexec_executor_release(exec);
  }
}

static void limits_and_preferences_are_respected(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(8);
  cpuexec_cost cost = {.bytes_read = 4, .bytes_written = 4, .compute_cycles = 1000};
  cpuexec_plan p;
  for (uint32_t max = 1; max <= 10; max++) {
    cpuexec_plan_constraints c = {.max_participants = max};
    assert_int_equal(cpuexec_parallel_for_plan(exec, 1000000, &cost, &c, &p), 0);
    assert_int_equal(p.participants, max < 8 ? max : 8);
    check_plan_shape(&p, 1000000, 8);
  }
  cpuexec_plan_constraints pref = {.preferred_participants = 3};
  assert_int_equal(cpuexec_parallel_for_plan(exec, 1000000, &cost, &pref, &p), 0);
  assert_int_equal(p.participants, 3);
  cpuexec_plan_constraints pref_capped = {.max_participants = 2, .preferred_participants = 6};
  assert_int_equal(cpuexec_parallel_for_plan(exec, 1000000, &cost, &pref_capped, &p), 0);
  assert_int_equal(p.participants, 2);
  /* A preference does not make tiny work parallel. */
  assert_int_equal(cpuexec_parallel_for_plan(exec, 3, &cost, &pref, &p), 0);
  assert_true(p.participants <= 3);
  cpuexec_cost tiny = {.compute_cycles = 1};
  assert_int_equal(cpuexec_parallel_for_plan(exec, 3, &tiny, &pref, &p), 0);
  assert_int_equal(p.participants, 1);
  cpuexec_executor_release(exec);
}

/* The over-eager plans issue 12 lists against onnx-light-cpu, for an
 * 8-thread executor. */
static const cpuexec_cost abs_cost = {.bytes_read = 4, .bytes_written = 4, .compute_cycles = 1};
static const cpuexec_cost log_cost = {.bytes_read = 4, .bytes_written = 4, .compute_cycles = 20};

static void abs_over_1024_floats_stays_on_the_caller(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(8);
  cpuexec_plan p;
  assert_int_equal(cpuexec_parallel_for_plan(exec, 1024, &abs_cost, NULL, &p), 0);
  assert_int_equal(p.participants, 1);
  assert_int_equal(p.grain, 1024);
  /* ... and so does any elementwise loop whose work is below one hot dispatch. */
  cpuexec_cost axpy = {.bytes_read = 8, .bytes_written = 4, .compute_cycles = 1};
  assert_int_equal(cpuexec_parallel_for_plan(exec, 1024, &axpy, NULL, &p), 0);
  assert_int_equal(p.participants, 1);
  /* Four times the work is worth a second participant, not all eight. */
  assert_int_equal(cpuexec_parallel_for_plan(exec, 4096, &abs_cost, NULL, &p), 0);
  assert_true(p.participants >= 2 && p.participants < 8);
  cpuexec_executor_release(exec);
}

/* make bench-plan's tiny case: Exp over 256 floats (4 B read, 4 B written,
 * 20 cycles each, about 0.9 us serially on the 2-core VM) took 1.24-1.35x
 * the serial time when planned on 2 participants. It stays serial on a
 * 2-thread executor (src/executor/plan.c, DISPATCH_NS). */
static void exp_over_256_floats_stays_on_the_caller_of_two_threads(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  cpuexec_cost exp_cost = {.bytes_read = 4, .bytes_written = 4, .compute_cycles = 20};
  cpuexec_plan p;
  assert_int_equal(cpuexec_parallel_for_plan(exec, 256, &exp_cost, NULL, &p), 0);
  assert_int_equal(p.participants, 1);
  assert_int_equal(p.grain, 256);
  cpuexec_executor_release(exec);
}

static void costlier_log_gets_more_participants_than_abs(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(8);
  cpuexec_plan pa, pl;
  assert_int_equal(cpuexec_parallel_for_plan(exec, 1 << 18, &abs_cost, NULL, &pa), 0);
  assert_int_equal(cpuexec_parallel_for_plan(exec, 1 << 18, &log_cost, NULL, &pl), 0);
  assert_int_equal(pl.participants, 8);
  assert_true(pa.participants >= 2);
  assert_true(pa.participants < pl.participants);
  cpuexec_executor_release(exec);
}

static void a_preference_never_makes_a_serial_plan_parallel(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(8);
  cpuexec_plan_constraints three = {.preferred_participants = 3};
  cpuexec_plan p;
  assert_int_equal(cpuexec_parallel_for_plan(exec, 1024, &abs_cost, &three, &p), 0);
  assert_int_equal(p.participants, 1);
  assert_int_equal(cpuexec_parallel_for_plan(exec, 32, &log_cost, &three, &p), 0);
  assert_int_equal(p.participants, 1);
  /* Where the model goes parallel, the preference sets the width. */
  assert_int_equal(cpuexec_parallel_for_plan(exec, 1 << 18, &log_cost, &three, &p), 0);
  assert_int_equal(p.participants, 3);
  cpuexec_executor_release(exec);
}

/* The busiest participant's ranges, as region.c splits them: blocks of
 * ceil(chunks / participants) chunks at most. */
static int64_t busiest_share(const cpuexec_plan *p, int64_t total) {
  int64_t chunks = total / p->grain + (total % p->grain != 0);
  return (chunks / p->participants + (chunks % p->participants != 0)) * p->grain;
}

static void the_grain_splits_work_evenly(void **state) {
  (void)state;
  cpuexec_executor *two = test_executor(2), *eight = test_executor(8);
  /* 16 output rows of a GEMM tile loop: chunks of 6 would leave 12 rows to one participant. */
  cpuexec_cost rows = {.bytes_read = 256, .bytes_written = 256, .compute_cycles = 1024};
  cpuexec_plan p;
  assert_int_equal(cpuexec_parallel_for_plan(two, 16, &rows, NULL, &p), 0);
  assert_int_equal(p.participants, 2);
  assert_int_equal(busiest_share(&p, 16), 8);
  /* Over many totals, the busiest participant gets at most one chunk of
   * rounding above an even split. */
  for (int64_t total = 17; total < 5000; total = total * 5 / 4 + 3)
    for (int e = 0; e < 2; e++) {
      cpuexec_executor *exec = e ? eight : two;
      assert_int_equal(cpuexec_parallel_for_plan(exec, total, &rows, NULL, &p), 0);
      check_plan_shape(&p, total, e ? 8 : 2);
      if (p.participants == 1) continue;
      int64_t even = total / p.participants + (total % p.participants != 0);
      assert_true(busiest_share(&p, total) <= even + p.grain);
    }
  cpuexec_executor_release(two);
  cpuexec_executor_release(eight);
}

static void invalid_costs_are_rejected(void **state) {
  (void)state;
  cpuexec_plan p;
  cpuexec_cost bad = {.bytes_read = -1};
  assert_int_equal(cpuexec_parallel_for_plan(NULL, 10, &bad, NULL, &p), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "bytes_read"));
  cpuexec_cost nan = {.compute_cycles = 0.0 / 0.0};
  assert_int_equal(cpuexec_parallel_for_plan(NULL, 10, &nan, NULL, &p), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_parallel_for_plan(NULL, 10, NULL, NULL, &p), CPUEXEC_EINVAL);
  cpuexec_cost ok = {0};
  assert_int_equal(cpuexec_parallel_for_plan(NULL, 10, &ok, NULL, NULL), CPUEXEC_EINVAL);
}

static int mark(void *ctx, int64_t begin, int64_t end) {
  _Atomic uint8_t *hits = ctx;
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&hits[i], 1);
  return 0;
}

static void a_costed_call_runs_every_index_once(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(4);
  static const int64_t totals[] = {1, 17, 1000, 1000003};
  for (size_t i = 0; i < 4; i++) {
    _Atomic uint8_t *hits = calloc((size_t)totals[i], 1);
    cpuexec_cost cost = {.bytes_read = 8, .compute_cycles = 50};
    assert_int_equal(cpuexec_parallel_for_costed(exec, totals[i], &cost, NULL, hits, mark), 0);
    for (int64_t k = 0; k < totals[i]; k++) assert_int_equal(hits[k], 1);
    free(hits);
  }
  cpuexec_executor_release(exec);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(small_work_plans_one_participant),
      cmocka_unit_test(large_work_plans_every_participant),
      cmocka_unit_test(more_work_or_compute_never_plans_fewer_participants),
      cmocka_unit_test(limits_and_preferences_are_respected),
      cmocka_unit_test(abs_over_1024_floats_stays_on_the_caller),
      cmocka_unit_test(exp_over_256_floats_stays_on_the_caller_of_two_threads),
      cmocka_unit_test(costlier_log_gets_more_participants_than_abs),
      cmocka_unit_test(a_preference_never_makes_a_serial_plan_parallel),
      cmocka_unit_test(the_grain_splits_work_evenly),
      cmocka_unit_test(invalid_costs_are_rejected),
      cmocka_unit_test(a_costed_call_runs_every_index_once),
  };
  return cmocka_run_group_tests_name("executor plan", tests, NULL, NULL);
}
