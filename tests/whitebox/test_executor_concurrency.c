/* Many dispatches and many dispatching threads: 100k back-to-back regions
 * under parking and under spinning, and 2 and 8 threads calling into one
 * executor at once (more threads than this machine has cores). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <pthread.h>
#include <cmocka.h>

#include "executor/executor_internal.h"
#include "support/test_util.h"

typedef struct sum_ctx {
  _Atomic int64_t sum;
  _Atomic uint32_t bad;
  int64_t tag; /* per dispatching thread, to catch crossed regions */
} sum_ctx;

static int add_indices(void *ctx, int64_t begin, int64_t end) {
  sum_ctx *s = ctx;
  int64_t local = 0;
  for (int64_t i = begin; i < end; i++) local += i + s->tag;
  atomic_fetch_add_explicit(&s->sum, local, memory_order_relaxed);
  return 0;
}

static void back_to_back(cpuexec_spin_policy spin, uint64_t budget, uint32_t threads, int rounds) {
  cpuexec_executor *exec = test_executor_spin(threads, spin, budget);
  sum_ctx s = {0};
  for (int i = 0; i < rounds; i++) {
    atomic_store_explicit(&s.sum, 0, memory_order_relaxed);
    int64_t total = 2 + i % 5;
    assert_int_equal(cpuexec_parallel_for(exec, total, 1, &s, add_indices, 0), 0);
    if (atomic_load_explicit(&s.sum, memory_order_relaxed) != total * (total - 1) / 2)
      fail_msg("round %d: sum %lld", i, (long long)s.sum);
  }
  cpuexec_executor_release(exec);
}

static void many_back_to_back_dispatches_while_parking(void **state) {
  (void)state;
  back_to_back(CPUEXEC_SPIN_PARK_IMMEDIATELY, 0, 2, 100000);
}

static void many_back_to_back_dispatches_while_spinning(void **state) {
  (void)state;
  back_to_back(CPUEXEC_SPIN_ADAPTIVE, 0, 2, 100000);
  back_to_back(CPUEXEC_SPIN_FIXED_ITERATIONS, 200, 2, 20000);
}

typedef struct caller_arg {
  cpuexec_executor *exec;
  int64_t tag;
  int rounds;
  int failures;
} caller_arg;

static void *dispatch_loop(void *p) {
  caller_arg *a = p;
  sum_ctx s = {.tag = a->tag};
  for (int i = 0; i < a->rounds; i++) {
    int64_t total = 1 + (i * 7 + a->tag) % 300;
    atomic_store_explicit(&s.sum, 0, memory_order_relaxed);
    if (cpuexec_parallel_for(a->exec, total, 1 + i % 3, &s, add_indices, 0) != 0 ||
        atomic_load_explicit(&s.sum, memory_order_relaxed) != total * (total - 1) / 2 + total * a->tag)
      a->failures++;
  }
  return NULL;
}

static void concurrent_callers(uint32_t pool_threads, int callers, int rounds) {
  cpuexec_executor *exec = test_executor(pool_threads);
  pthread_t t[8];
  caller_arg args[8];
  for (int c = 0; c < callers; c++) {
    args[c] = (caller_arg){exec, 1000 * (c + 1), rounds, 0};
    assert_int_equal(pthread_create(&t[c], NULL, dispatch_loop, &args[c]), 0);
  }
  for (int c = 0; c < callers; c++) {
    pthread_join(t[c], NULL);
    assert_int_equal(args[c].failures, 0);
  }
  cpuexec_executor_release(exec);
}

static void two_threads_dispatching_into_one_executor_both_complete(void **state) {
  (void)state;
  concurrent_callers(2, 2, 5000);
  concurrent_callers(4, 2, 2000);
}

static void eight_threads_dispatching_into_one_executor_all_complete(void **state) {
  (void)state;
  concurrent_callers(2, 8, 1000);
  concurrent_callers(8, 8, 300);
}

static void a_dispatch_admits_only_its_participants_and_makes_no_wake_call_to_spinners(void **state) {
  (void)state;
  /* A spin counted in iterations that never runs out (2^62 pauses, decades):
   * a worker never parks however slow the machine, so no dispatch may make
   * a wake call. */
  cpuexec_executor *exec = test_executor_spin(3, CPUEXEC_SPIN_FIXED_ITERATIONS, (uint64_t)1 << 62);
  assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
  sum_ctx s = {0};
  for (int i = 0; i < 2000; i++) assert_int_equal(cpuexec_parallel_for(exec, 100, 1, &s, add_indices, 2), 0);
  assert_int_equal(atomic_load(&s.sum), 2000 * (99 * 100 / 2));
  cpuexec_counters c;
  cpuexec_executor_counters_get(exec, &c);
  assert_int_equal(c.dispatches, 2000);
  assert_int_equal(c.wakeups, 0);
  assert_int_equal(c.parks, 0);
  /* Worker 1 was admitted 2000 times (each region opens its epoch at the
   * next value that is 1 mod 4, executor_internal.h), worker 2 never: its
   * epoch never moved. */
  uint32_t e1 = atomic_load(&exec->slots[1].epoch);
  assert_true(e1 >= 4 * 2000 - 3 && e1 <= 4 * 2000);
  assert_false(cpuexec__epoch_open(e1));
  assert_int_equal(atomic_load(&exec->slots[2].epoch), 0);
  cpuexec_executor_release(exec);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_dispatch_admits_only_its_participants_and_makes_no_wake_call_to_spinners),
      cmocka_unit_test(many_back_to_back_dispatches_while_parking),
      cmocka_unit_test(many_back_to_back_dispatches_while_spinning),
      cmocka_unit_test(two_threads_dispatching_into_one_executor_both_complete),
      cmocka_unit_test(eight_threads_dispatching_into_one_executor_all_complete),
  };
  return cmocka_run_group_tests_name("executor concurrency", tests, NULL, NULL);
}
