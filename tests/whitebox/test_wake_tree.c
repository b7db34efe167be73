/* Tree wake-up (src/executor/wake_tree.h) at 4, 8, 16, 32 and 64 participants on
 * a machine with fewer processors (oversubscribed), with workers that park
 * at once and with workers that spin first: every index runs exactly once
 * in every region, a callback's error reaches the caller, every region
 * completes (a lost wake would hang the region that needs it, under the
 * test timeout, with its case named), and a region narrower than the
 * threshold on the same executor takes the flat path. Each count runs with the tree forced
 * from 4 participants (the test hook) and with the default threshold, so
 * the flat path is covered at the same counts. Each case prints its name
 * before it runs, so a hang names it. */
#include <stdio.h>

#include "support/test_util.h"

#include "executor/executor_internal.h"
#include "executor/wake_tree.h"

#define REGIONS 40

typedef struct marks {
  _Atomic uint32_t *hits;
  int64_t fail_at; /* -1: never */
  _Atomic uint32_t ran[64]; /* ran[i]: participant i ran a range */
} marks;

static int mark(void *ctx, int64_t begin, int64_t end) {
  marks *m = ctx;
  uint32_t who = cpuexec_participant_index();
  if (who < 64) atomic_store_explicit(&m->ran[who], 1, memory_order_relaxed);
  for (int64_t i = begin; i < end; i++) {
    atomic_fetch_add_explicit(&m->hits[i], 1, memory_order_relaxed);
    if (i == m->fail_at) return -77;
  }
  return 0;
}

static void run_case(uint32_t threads, cpuexec_spin_policy spin, uint64_t budget, uint32_t tree_min) {
  printf("case: %u participants, spin %s, tree from %u\n", threads, cpuexec_spin_policy_name(spin), tree_min);
  fflush(stdout);
  atomic_store(&cpuexec__test_wake_tree_min, tree_min);
  cpuexec_executor *exec = test_executor_spin(threads, spin, budget);
  atomic_store(&cpuexec__test_wake_tree_min, 0);
  bool tree = threads >= tree_min;
  assert_int_equal(exec->wake_tree_min, tree ? tree_min : UINT32_MAX);

  const int64_t total = (int64_t)threads * 7 + 3;
  static marks m;
  m.hits = calloc((size_t)total, sizeof *m.hits);
  m.fail_at = -1;
  assert_non_null(m.hits);
  for (int r = 0; r < REGIONS; r++) {
    /* Every participant, then a narrower region (flat below tree_min). */
    uint32_t width = r % 4 == 3 ? 3 : threads;
    /* Every other region makes the caller wait for every participant
     * instead of taking late workers' shares: a wake the tree lost would
     * hang it (under the test timeout, this case printed above). */
    uint32_t flags = r % 2 == 0 ? CPUEXEC_FOR_EVERY_PARTICIPANT : 0;
    for (uint32_t i = 0; i < 64; i++) atomic_store(&m.ran[i], 0);
    assert_int_equal(cpuexec_parallel_for_flags(exec, total, 1, &m, mark, width, flags), 0);
    if (flags)
      for (uint32_t i = 0; i < width; i++) assert_int_equal(atomic_load(&m.ran[i]), 1);
    for (int64_t i = 0; i < total; i++) {
      assert_int_equal(atomic_load(&m.hits[i]), 1);
      atomic_store(&m.hits[i], 0);
    }
  }
  /* An error in the last worker's range still reaches the caller, and the
   * next region runs cleanly. */
  m.fail_at = total - 1;
  assert_int_equal(cpuexec_parallel_for(exec, total, 1, &m, mark, 0), CPUEXEC_ECALLBACK);
  assert_int_equal(cpuexec_error_callback_value(), -77);
  m.fail_at = -1;
  for (int64_t i = 0; i < total; i++) atomic_store(&m.hits[i], 0);
  assert_int_equal(cpuexec_parallel_for(exec, total, 1, &m, mark, 0), 0);
  for (int64_t i = 0; i < total; i++) assert_int_equal(atomic_load(&m.hits[i]), 1);
  free(m.hits);
  cpuexec_executor_release(exec);
}

static const uint32_t counts[] = {4, 8, 16, 32, 64};

static void tree_regions_with_parking_workers(void **state) {
  (void)state;
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
    run_case(counts[c], CPUEXEC_SPIN_PARK_IMMEDIATELY, 0, 4);
    run_case(counts[c], CPUEXEC_SPIN_PARK_IMMEDIATELY, 0, CPUEXEC__WAKE_TREE_MIN);
  }
}

static void tree_regions_with_spinning_workers(void **state) {
  (void)state;
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
    run_case(counts[c], CPUEXEC_SPIN_FIXED_ITERATIONS, 2000, 4);
    run_case(counts[c], CPUEXEC_SPIN_FIXED_ITERATIONS, 2000, CPUEXEC__WAKE_TREE_MIN);
  }
}

static void the_tree_threshold_comes_from_the_hook_or_the_default(void **state) {
  (void)state;
  assert_int_equal(cpuexec__wake_tree_min(), CPUEXEC__WAKE_TREE_MIN);
  atomic_store(&cpuexec__test_wake_tree_min, 5);
  assert_int_equal(cpuexec__wake_tree_min(), 5);
  atomic_store(&cpuexec__test_wake_tree_min, 0);
  cpuexec_executor *two = test_executor(2);
  assert_int_equal(two->wake_tree_min, UINT32_MAX); /* a 2-thread executor never uses the tree */
  cpuexec_executor_release(two);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_tree_threshold_comes_from_the_hook_or_the_default),
      cmocka_unit_test(tree_regions_with_parking_workers),
      cmocka_unit_test(tree_regions_with_spinning_workers),
  };
  return cmocka_run_group_tests_name("wake tree", tests, NULL, NULL);
}
