/* cpuexec_range_executor_run_all (include/cpuexec/compat/range_executor.h),
 * the call a void hook makes: every index runs exactly once whatever the
 * executor does. On libcpuexec's executors; in a fork child whose inherited
 * executor refuses (CPUEXEC_EFORKED); when no memory can be had (this
 * program replaces malloc, so the library's own allocation on the hook path
 * really fails; sanitizer builds, which replace malloc themselves, skip
 * those cases); and on stand-in executors that fail part-way, skip ranges,
 * pass one twice or out of bounds. A failing callback still stops the call. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/test_util.h"
#include <cpuexec/compat/range_executor.h>

#include "support/failing_alloc.h" /* every allocation fails while armed (glibc, no sanitizer) */

/* ---- what ran ------------------------------------------------------------- */

#define MAX_COUNT 20000
static atomic_uint hits[MAX_COUNT];
static atomic_uint on_caller_alone; /* indices run as participant 0 of 1 */

static int record(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&hits[i], 1);
  if (cpuexec_participant_count() == 1) atomic_fetch_add(&on_caller_alone, (unsigned)(end - begin));
  return 0;
}

static void clear(void) {
  for (int i = 0; i < MAX_COUNT; i++) atomic_store(&hits[i], 0);
  atomic_store(&on_caller_alone, 0);
}

/* 1 when [0, count) ran exactly once and nothing beyond it ran. */
static int exactly_once(int64_t count) {
  for (int64_t i = 0; i < MAX_COUNT; i++)
    if (atomic_load(&hits[i]) != (i < count ? 1u : 0u)) return 0;
  return 1;
}

/* ---- stand-in executors: what a broken or failing executor does ----------- */

typedef enum misdeed {
  FAILS_AFTER,      /* runs ranges of `step` in order, returns `error` after `ranges` of them */
  SKIPS_ONE,        /* runs every range of `step` but the second, returns 0 */
  PASSES_ONE_TWICE, /* runs every range of `step`, the first one twice, returns 0 */
  OUT_OF_BOUNDS     /* passes [0, count + 1) first, then stops on the error it gets */
} misdeed;

typedef struct standin {
  misdeed what;
  int64_t step, ranges;
  int error;
  int64_t count_seen; /* the count the executor was handed */
} standin;

static int standin_run(void *self, int64_t count, void *ctx, cpuexec_range_fn callback) {
  standin *s = self;
  s->count_seen = count;
  if (s->what == OUT_OF_BOUNDS) return callback(ctx, 0, count + 1);
  int64_t n = 0;
  for (int64_t b = 0; b < count; b += s->step, n++) {
    int64_t e = b + s->step < count ? b + s->step : count;
    if (s->what == FAILS_AFTER && n == s->ranges) return s->error;
    if (s->what == SKIPS_ONE && n == 1) continue;
    int rc = callback(ctx, b, e);
    if (rc != 0) return rc;
    if (s->what == PASSES_ONE_TWICE && n == 0 && (rc = callback(ctx, b, e)) != 0) return rc;
  }
  return 0;
}

static void run_on_standin(standin *s, int64_t count, cpuexec_run_all_report *report) {
  cpuexec_range_executor ex = {standin_run, s};
  clear();
  int rc = cpuexec_range_executor_run_all(&ex, count, NULL, record, report);
  if (rc != 0) fail_msg("count %lld: %s (%s)", (long long)count, cpuexec_error_name(rc), cpuexec_error_message());
  assert_true(exactly_once(count));
}

/* ---- cases ---------------------------------------------------------------- */

static void every_index_once_on_libcpuexec_executors_with_nothing_to_report(void **state) {
  (void)state;
  test_owned_executor owned;
  assert_int_equal(test_executor_create(3, &owned), 0);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(owned.exec, &scope), 0);
  const cpuexec_range_executor executors[] = {cpuexec_range_executor_installed(), cpuexec_range_executor_of(owned.exec),
                                              cpuexec_range_executor_serial(), {NULL, NULL}};
  const int64_t counts[] = {0, 1, 2, 3, 64, 65, 4096, 4097, 10007, MAX_COUNT};
  for (size_t e = 0; e < sizeof executors / sizeof executors[0]; e++)
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
      cpuexec_run_all_report report;
      memset(&report, 0xff, sizeof report); /* the call writes every field */
      clear();
      assert_int_equal(cpuexec_range_executor_run_all(&executors[e], counts[c], NULL, record, &report), 0);
      assert_true(exactly_once(counts[c]));
      assert_int_equal(report.error, 0);
      assert_int_equal(report.caller_indices, 0);
      assert_int_equal(report.reserved_pad_, 0);
      assert_int_equal(report.reserved_[0] | report.reserved_[1], 0);
    }
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  test_executor_destroy(&owned);
}

static void an_executor_failing_part_way_leaves_the_rest_to_the_caller(void **state) {
  (void)state;
  /* Below 4096 the executor sees the real count; above, pieces of
   * count / 4096 indices, and the caller runs the indices of those left. */
  const int64_t counts[] = {100, 1000, 4096, 10007, MAX_COUNT};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
    standin s = {.what = FAILS_AFTER, .step = 7, .ranges = 3, .error = CPUEXEC_ENOMEM};
    cpuexec_run_all_report report;
    run_on_standin(&s, counts[c], &report);
    assert_int_equal(s.count_seen, counts[c] < 4096 ? counts[c] : 4096);
    assert_int_equal(report.error, CPUEXEC_ENOMEM);
    int64_t pieces = s.count_seen, ran_first = 21 < pieces ? 21 : pieces;
    /* The caller ran the indices of pieces [21, pieces): balanced pieces,
     * the first count % pieces of them one index longer. */
    int64_t size = counts[c] / pieces, longer = counts[c] % pieces;
    int64_t first_left = ran_first * size + (ran_first < longer ? ran_first : longer);
    assert_int_equal(report.caller_indices, counts[c] - first_left);
    assert_int_equal(atomic_load(&on_caller_alone), counts[c]); /* the stand-in runs on the caller too */
  }
}

static void an_executor_that_skips_or_repeats_a_range_still_runs_each_index_once(void **state) {
  (void)state;
  standin skips = {.what = SKIPS_ONE, .step = 10};
  cpuexec_run_all_report report;
  run_on_standin(&skips, 100, &report);
  assert_int_equal(report.error, CPUEXEC_ESTATE);
  assert_int_equal(report.caller_indices, 10);
  assert_non_null(strstr(cpuexec_error_message(), "never ran index 10 of [0, 100)"));

  standin twice = {.what = PASSES_ONE_TWICE, .step = 10};
  run_on_standin(&twice, 100, &report);
  assert_int_equal(report.error, CPUEXEC_ERANGE);
  assert_int_equal(report.caller_indices, 0);
  assert_non_null(strstr(cpuexec_error_message(), "passed index 0 twice"));

  standin outside = {.what = OUT_OF_BOUNDS};
  run_on_standin(&outside, 100, &report);
  assert_int_equal(report.error, CPUEXEC_ERANGE);
  assert_int_equal(report.caller_indices, 100);
  assert_non_null(strstr(cpuexec_error_message(), "[0, 101)"));
}

static int fail_at_30(void *ctx, int64_t begin, int64_t end) {
  record(ctx, begin, end);
  return begin <= 30 && 30 < end ? 77 : 0;
}

static void a_failing_callback_stops_the_call_and_nothing_runs_after_it(void **state) {
  (void)state;
  standin s = {.what = FAILS_AFTER, .step = 10, .ranges = 1000};
  cpuexec_range_executor ex = {standin_run, &s};
  cpuexec_run_all_report report;
  clear();
  assert_int_equal(cpuexec_range_executor_run_all(&ex, 100, NULL, fail_at_30, &report), CPUEXEC_ECALLBACK);
  assert_int_equal(cpuexec_error_callback_value(), 77);
  assert_int_equal(report.error, 0);
  assert_true(exactly_once(40)); /* [0, 40) ran; the ranges after the failing one did not */
}

static void bad_arguments_run_nothing(void **state) {
  (void)state;
  cpuexec_range_executor serial = cpuexec_range_executor_serial();
  cpuexec_run_all_report report;
  clear();
  assert_int_equal(cpuexec_range_executor_run_all(&serial, 10, NULL, NULL, &report), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_range_executor_run_all(&serial, -1, NULL, record, &report), CPUEXEC_EINVAL);
  assert_true(exactly_once(0));
  assert_int_equal(report.error, 0);
}

/* A call from inside a callback runs its range inline, once. */
static int nested_run_all(void *ctx, int64_t begin, int64_t end) {
  const cpuexec_range_executor *ex = ctx;
  (void)end;
  return begin == 0 ? cpuexec_range_executor_run_all(ex, 50, NULL, record, NULL) : 0;
}

static void a_nested_call_runs_inline(void **state) {
  (void)state;
  test_owned_executor owned;
  assert_int_equal(test_executor_create(2, &owned), 0);
  cpuexec_range_executor ex = cpuexec_range_executor_of(owned.exec);
  clear();
  assert_int_equal(cpuexec_range_executor_run_all(&ex, 8, &ex, nested_run_all, NULL), 0);
  assert_true(exactly_once(50));
  test_executor_destroy(&owned);
}

#if !TEST_ON_WINDOWS
/* The forked child calls through the executor installed before fork: it
 * refuses (CPUEXEC_EFORKED), and the caller runs every index. */
static int child_runs_every_index_on_the_caller(void) {
  cpuexec_range_executor ex = cpuexec_range_executor_installed();
  cpuexec_run_all_report report;
  clear();
  if (cpuexec_range_executor_run_all(&ex, 1000, NULL, record, &report) != 0) return 1;
  if (!exactly_once(1000)) return 2;
  if (report.error != CPUEXEC_EFORKED || strstr(cpuexec_error_message(), "fork") == NULL) return 3;
  if (report.caller_indices != 1000 || atomic_load(&on_caller_alone) != 1000) return 4;
  return 0;
}

static void a_fork_child_runs_every_index_on_the_caller_and_reports_eforked(void **state) {
  (void)state;
  test_owned_executor owned;
  assert_int_equal(test_executor_create(2, &owned), 0);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(owned.exec, &scope), 0);
  assert_int_equal(run_in_child(child_runs_every_index_on_the_caller, 60), 0);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  test_executor_destroy(&owned);
}
#endif

#if FAILING_ALLOC_WORKS
/* A foreign pool of more participants than libcpuexec tracks on the stack:
 * its region allocates (src/executor/foreign.c). The pool runs its
 * participants one after the other on the caller. */
static int serial_pool_run(void *pool, int64_t count, void *arg, cpuexec_range_fn fn) {
  (void)pool;
  for (int64_t i = 0; i < count; i++) {
    int rc = fn(arg, i, i + 1);
    if (rc != 0) return rc;
  }
  return 0;
}

static void no_memory_on_the_hook_path_runs_every_index_on_the_caller(void **state) {
  (void)state;
  cpuexec_foreign_executor_ops ops;
  cpuexec_foreign_executor_ops_init(&ops);
  ops.effective_threads = 100;
  ops.run_ranges = serial_pool_run;
  cpuexec_executor *wide = NULL;
  assert_int_equal(cpuexec_executor_create_foreign(&ops, NULL, &wide), 0);
  cpuexec_range_executor ex = cpuexec_range_executor_of(wide);
  cpuexec_run_all_report report;
  clear();
  failing_alloc_reset_count();
  failing_alloc_all(true);
  int rc = cpuexec_range_executor_run_all(&ex, 1000, NULL, record, &report);
  failing_alloc_all(false);
  assert_int_equal(rc, 0);
  assert_true(failing_alloc_refused() > 0); /* the library did ask, and was refused */
  assert_true(exactly_once(1000));
  assert_int_equal(report.error, CPUEXEC_ENOMEM);
  assert_int_equal(report.caller_indices, 1000);
  assert_int_equal(atomic_load(&on_caller_alone), 1000);
  /* Memory again: the same call goes to the pool. */
  clear();
  assert_int_equal(cpuexec_range_executor_run_all(&ex, 1000, NULL, record, &report), 0);
  assert_true(exactly_once(1000));
  assert_int_equal(report.error, 0);
  cpuexec_executor_release(wide);
}

static void the_call_itself_allocates_nothing(void **state) {
  (void)state;
  test_owned_executor owned;
  assert_int_equal(test_executor_create(3, &owned), 0);
  cpuexec_range_executor ex = cpuexec_range_executor_of(owned.exec);
  cpuexec_run_all_report report;
  clear();
  failing_alloc_reset_count();
  failing_alloc_all(true);
  int rc = cpuexec_range_executor_run_all(&ex, MAX_COUNT, NULL, record, &report);
  failing_alloc_all(false);
  assert_int_equal(rc, 0);
#if CPUEXEC_OS_BACKEND_POSIX
  /* The portable OS backend's waits may allocate (its condition
   * variables); refused, they still lose no block (checked below). */
#else
  assert_int_equal(failing_alloc_refused(), 0);
#endif
  assert_true(exactly_once(MAX_COUNT));
  assert_int_equal(report.error, 0);
  test_executor_destroy(&owned);
}
#else
static void no_memory_on_the_hook_path_runs_every_index_on_the_caller(void **state) {
  (void)state;
  skip(); /* sanitizer builds replace malloc themselves: this program cannot make it fail */
}
static void the_call_itself_allocates_nothing(void **state) {
  (void)state;
  skip();
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_index_once_on_libcpuexec_executors_with_nothing_to_report),
      cmocka_unit_test(an_executor_failing_part_way_leaves_the_rest_to_the_caller),
      cmocka_unit_test(an_executor_that_skips_or_repeats_a_range_still_runs_each_index_once),
      cmocka_unit_test(a_failing_callback_stops_the_call_and_nothing_runs_after_it),
      cmocka_unit_test(bad_arguments_run_nothing),
      cmocka_unit_test(a_nested_call_runs_inline),
      TEST_UNIX_ONLY(a_fork_child_runs_every_index_on_the_caller_and_reports_eforked, "fork(): Windows has none"),
      cmocka_unit_test(no_memory_on_the_hook_path_runs_every_index_on_the_caller),
      cmocka_unit_test(the_call_itself_allocates_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
