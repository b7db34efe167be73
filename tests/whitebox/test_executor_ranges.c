/* The range contract of cpuexec_parallel_for, as a matrix:
 * participants 1, 2, 4, 8 (8 is more threads than this machine's cores)
 * x totals 0, 1, grain-1, grain, grain+1, primes x grains 1, 7, large
 * x properties (each index exactly once, range bounds and minimum size,
 * participant limit, observed participants). Plus errors, uneven work and
 * nested calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <pthread.h>
#include <cmocka.h>

#include "support/test_util.h"
#include "support/rendezvous.h"
#include "executor/thread_state.h"

typedef struct coverage {
  int64_t total;
  int64_t grain;
  _Atomic uint8_t *hits;
  _Atomic uint32_t bad_range;  /* empty, out of bounds, or short and not the last */
  _Atomic uint32_t bad_index;  /* participant index >= count */
  _Atomic uint32_t count_seen; /* participant_count() as observed (all must agree) */
  _Atomic uint64_t seen_mask;  /* participant indices that ran a range */
  _Atomic uint32_t ranges;
  _Atomic uint64_t arrived; /* rendezvous.h: each share outlasts the wake-ups */
} coverage;

static int cover(void *ctx, int64_t begin, int64_t end) {
  coverage *c = ctx;
  test_rendezvous(&c->arrived);
  if (begin < 0 || end > c->total || begin >= end || (end - begin < c->grain && end != c->total))
    atomic_fetch_add(&c->bad_range, 1);
  uint32_t index = cpuexec_participant_index(), count = cpuexec_participant_count();
  if (index >= count || index >= 64) atomic_fetch_add(&c->bad_index, 1);
  else atomic_fetch_or(&c->seen_mask, 1ull << index);
  uint32_t expected = 0;
  if (!atomic_compare_exchange_strong(&c->count_seen, &expected, count) && expected != count)
    atomic_fetch_add(&c->bad_index, 1);
  for (int64_t i = begin; i < end && i >= 0 && i < c->total; i++) atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
  atomic_fetch_add(&c->ranges, 1);
  return 0;
}

static void check_cover(cpuexec_executor *exec, int64_t total, int64_t grain, uint32_t max_participants) {
  coverage c = {.total = total, .grain = grain};
  c.hits = calloc(total > 0 ? (size_t)total : 1, 1);
  assert_non_null(c.hits);
  assert_int_equal(cpuexec_parallel_for(exec, total, grain, &c, cover, max_participants), 0);
  for (int64_t i = 0; i < total; i++)
    if (c.hits[i] != 1) fail_msg("total %lld grain %lld: index %lld ran %u times", (long long)total, (long long)grain, (long long)i, (unsigned)c.hits[i]);
  assert_int_equal(c.bad_range, 0);
  assert_int_equal(c.bad_index, 0);
  if (total <= 0) {
    assert_int_equal(c.ranges, 0);
  } else {
    uint32_t limit = cpuexec_executor_effective_threads(exec);
    if (max_participants != 0 && max_participants < limit) limit = max_participants;
    int64_t chunks = total / grain + (total % grain != 0);
    uint32_t expect = chunks < limit ? (uint32_t)chunks : limit;
    /* The requested participants are the participants observed (each
     * share outlasts the wake-ups: rendezvous.h). */
    assert_int_equal(c.count_seen, expect);
    assert_int_equal((uint64_t)__builtin_popcountll(c.seen_mask), expect);
  }
  free(c.hits);
}

static void every_index_runs_once_in_valid_ranges_for_the_matrix(void **state) {
  (void)state;
  static const uint32_t threads[] = {1, 2, 4, 8};
  static const int64_t grains[] = {1, 7, 4096};
  for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
    cpuexec_executor *exec = test_executor(threads[t]);
    for (size_t g = 0; g < sizeof grains / sizeof grains[0]; g++) {
      int64_t grain = grains[g];
      const int64_t totals[] = {0, -5, 1, grain - 1, grain, grain + 1, 7919, 104729, 1000003};
      for (size_t n = 0; n < sizeof totals / sizeof totals[0]; n++) {
        check_cover(exec, totals[n], grain, 0);
        check_cover(exec, totals[n], grain, 2);
        check_cover(exec, totals[n], grain, 3);
      }
    }
    cpuexec_executor_release(exec);
  }
}

static void max_participants_above_the_limit_is_the_limit(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  check_cover(exec, 1000, 1, 64);
  check_cover(exec, 1000, 1, 1);
  cpuexec_executor_release(exec);
}

static void null_executor_runs_the_serial_loop_on_the_caller(void **state) {
  (void)state;
  check_cover(NULL, 12345, 7, 0);
}

static int never_called(void *ctx, int64_t b, int64_t e) {
  (void)ctx, (void)b, (void)e;
  fail_msg("a callback ran for an invalid call");
  return 0;
}

static void invalid_arguments_are_rejected_with_the_field_named(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  assert_int_equal(cpuexec_parallel_for(exec, 10, 0, NULL, never_called, 0), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "grain"));
  assert_int_equal(cpuexec_parallel_for(exec, 10, -3, NULL, never_called, 0), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_parallel_for(exec, 10, 1, NULL, NULL, 0), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "fn"));
  assert_int_equal(cpuexec_parallel_for(exec, 0, 0, NULL, never_called, 0), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_parallel_for(exec, 0, 1, NULL, never_called, 0), 0);
  assert_int_equal(cpuexec_parallel_for(exec, INT64_MIN, 1, NULL, never_called, 0), 0);
  cpuexec_executor_release(exec);
}

/* Uneven work: the first indices are expensive; every index still runs once. */
static int uneven(void *ctx, int64_t begin, int64_t end) {
  coverage *c = ctx;
  for (int64_t i = begin; i < end; i++) {
    if (i < 16) {
      volatile uint64_t x = 0;
      for (int k = 0; k < 200000; k++) x += (uint64_t)k;
    }
    atomic_fetch_add(&c->hits[i], 1);
  }
  return 0;
}

static void uneven_work_completes_with_every_index_once(void **state) {
  (void)state;
  static const uint32_t threads[] = {2, 4, 8};
  for (size_t t = 0; t < 3; t++) {
    cpuexec_executor *exec = test_executor(threads[t]);
    coverage c = {.total = 4096, .grain = 1};
    c.hits = calloc(4096, 1);
    assert_int_equal(cpuexec_parallel_for(exec, 4096, 1, &c, uneven, 0), 0);
    for (int i = 0; i < 4096; i++) assert_int_equal(c.hits[i], 1);
    free(c.hits);
    cpuexec_executor_release(exec);
  }
}

typedef struct failing {
  _Atomic uint32_t calls;
  _Atomic int32_t active;
  _Atomic uint32_t finished;
} failing;

/* Every callback fails: each participant must stop after its own first
 * callback, so at most `participants` callbacks run in all. */
static int always_fail(void *ctx, int64_t begin, int64_t end) {
  failing *f = ctx;
  (void)end;
  atomic_fetch_add(&f->active, 1);
  atomic_fetch_add(&f->calls, 1);
  volatile int spin = 0;
  for (int k = 0; k < 20000; k++) spin += k; /* stay started a little while */
  atomic_fetch_sub(&f->active, 1);
  atomic_fetch_add(&f->finished, 1);
  return -1000 - (int)(begin % 7);
}

static void a_failing_callback_stops_new_ranges_and_its_error_is_returned(void **state) {
  (void)state;
  static const uint32_t threads[] = {1, 2, 4, 8};
  for (size_t t = 0; t < 4; t++) {
    cpuexec_executor *exec = test_executor(threads[t]);
    for (int round = 0; round < 50; round++) {
      failing f = {0};
      int rc = cpuexec_parallel_for(exec, 100000, 1, &f, always_fail, 0);
      assert_int_equal(rc, CPUEXEC_ECALLBACK);
      int value = cpuexec_error_callback_value();
      assert_true(value <= -1000 && value > -1007);
      /* Every started callback finished before the call returned. */
      assert_int_equal(f.active, 0);
      assert_int_equal(f.finished, f.calls);
      assert_true(f.calls >= 1 && f.calls <= threads[t]);
      /* No participant touches f after return. */
      uint32_t after = f.calls;
      cpuexec_parallel_for(exec, 0, 1, &f, always_fail, 0);
      assert_int_equal(f.calls, after);
    }
    cpuexec_executor_release(exec);
  }
}

static int fail_at_zero(void *ctx, int64_t begin, int64_t end) {
  failing *f = ctx;
  atomic_fetch_add(&f->calls, 1);
  return begin == 0 ? 77 : 0;
  (void)end;
}

static void a_positive_callback_result_is_available_as_is(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(4);
  failing f = {0};
  assert_int_equal(cpuexec_parallel_for(exec, 1000, 10, &f, fail_at_zero, 0), CPUEXEC_ECALLBACK);
  assert_int_equal(cpuexec_error_callback_value(), 77);
  assert_non_null(strstr(cpuexec_error_message(), "callback failed with 77"));
  cpuexec_executor_release(exec);
}

typedef struct nested {
  cpuexec_executor *outer, *other;
  _Atomic uint32_t wrong_thread, wrong_shape, outer_calls;
  _Atomic uint64_t inner_sum;
} nested;

typedef struct inner_ctx {
  nested *n;
  pthread_t thread;
  uint32_t depth;
} inner_ctx;

static int inner(void *ctx, int64_t begin, int64_t end) {
  inner_ctx *ic = ctx;
  if (!pthread_equal(pthread_self(), ic->thread)) atomic_fetch_add(&ic->n->wrong_thread, 1);
  if (cpuexec_participant_count() != 1 || cpuexec_participant_index() != 0 || cpuexec__tls.callback_depth != ic->depth)
    atomic_fetch_add(&ic->n->wrong_shape, 1);
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&ic->n->inner_sum, (uint64_t)i);
  return 0;
}

static int outer(void *ctx, int64_t begin, int64_t end) {
  nested *n = ctx;
  uint32_t index = cpuexec_participant_index(), count = cpuexec_participant_count();
  atomic_fetch_add(&n->outer_calls, 1);
  for (int64_t i = begin; i < end; i++) {
    inner_ctx ic = {n, pthread_self(), 2};
    if (cpuexec_parallel_for(n->outer, 100, 1, &ic, inner, 0) != 0) atomic_fetch_add(&n->wrong_shape, 1);
    if (cpuexec_parallel_for(n->other, 100, 3, &ic, inner, 0) != 0) atomic_fetch_add(&n->wrong_shape, 1);
    if (cpuexec__tls.installed != n->outer) atomic_fetch_add(&n->wrong_shape, 1);
  }
  /* The region's participant identity is restored after nested calls. */
  if ((uint32_t)cpuexec_participant_index() != index || (uint32_t)cpuexec_participant_count() != count)
    atomic_fetch_add(&n->wrong_shape, 1);
  return 0;
}

static void nested_calls_run_inline_on_the_calling_thread(void **state) {
  (void)state;
  nested n = {.outer = test_executor(4), .other = test_executor(2)};
  assert_int_equal(cpuexec_parallel_for(n.outer, 64, 1, &n, outer, 0), 0);
  assert_int_equal(n.wrong_thread, 0);
  assert_int_equal(n.wrong_shape, 0);
  assert_int_equal(n.inner_sum, 64u * 2u * (99u * 100u / 2u));
  /* Outside any region the thread is participant 0 of 1 again. */
  assert_int_equal(cpuexec_participant_index(), 0);
  assert_int_equal(cpuexec_participant_count(), 1);
  assert_int_equal(cpuexec__tls.callback_depth, 0);
  assert_null(cpuexec__tls.installed);
  cpuexec_executor_release(n.outer);
  cpuexec_executor_release(n.other);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_index_runs_once_in_valid_ranges_for_the_matrix),
      cmocka_unit_test(max_participants_above_the_limit_is_the_limit),
      cmocka_unit_test(null_executor_runs_the_serial_loop_on_the_caller),
      cmocka_unit_test(invalid_arguments_are_rejected_with_the_field_named),
      cmocka_unit_test(uneven_work_completes_with_every_index_once),
      cmocka_unit_test(a_failing_callback_stops_new_ranges_and_its_error_is_returned),
      cmocka_unit_test(a_positive_callback_result_is_available_as_is),
      cmocka_unit_test(nested_calls_run_inline_on_the_calling_thread),
  };
  return cmocka_run_group_tests_name("executor ranges", tests, NULL, NULL);
}
