/* Split completion counting (src/executor/finish_count.h): workers count their
 * finished regions in groups of eight, each group on its own line, and the
 * caller waits on every group its region used. Checked on the counters
 * themselves: a group's counter moves only by its own members (so no line
 * is shared by more than eight workers and the caller), a region narrower
 * than one group touches only the first, and with a worker held before it
 * checks in (the cpuexec__test_worker_gate hook) the region completes with
 * every worker either counted in its group or taken over, never both. At
 * 16, 32 and 64 participants on this 2-processor machine, parking and
 * spinning. Nothing waits on time: the held worker waits on a condition. */
#include <stdio.h>

#include "support/test_util.h"

#include "executor/executor_internal.h"
#include "executor/region_lanes.h"

static void groups_follow_worker_indexes(void **state) {
  (void)state;
  assert_int_equal(cpuexec__finish_group_of(1), 0);
  assert_int_equal(cpuexec__finish_group_of(8), 0);
  assert_int_equal(cpuexec__finish_group_of(9), 1);
  assert_int_equal(cpuexec__finish_group_of(63), 7);
  assert_int_equal(cpuexec__finish_groups_for(1), 1);
  assert_int_equal(cpuexec__finish_groups_for(2), 1);
  assert_int_equal(cpuexec__finish_groups_for(9), 1);   /* caller + 8 workers */
  assert_int_equal(cpuexec__finish_groups_for(10), 2);
  assert_int_equal(cpuexec__finish_groups_for(64), 8);
  assert_int_equal(cpuexec__finish_groups_for(65), 8);
  assert_int_equal(cpuexec__finish_groups_for(66), 9);
}

static int touch(void *ctx, int64_t begin, int64_t end) {
  _Atomic uint32_t *hits = ctx;
  for (int64_t i = begin; i < end; i++) atomic_fetch_add_explicit(&hits[i], 1, memory_order_relaxed);
  return 0;
}

static uint32_t group_count(const cpuexec_executor *exec, uint32_t g) {
  return atomic_load(&exec->lanes[0].finish[g].finished);
}

static uint32_t members(uint32_t participants, uint32_t g) {
  uint32_t workers = participants - 1, first = g * CPUEXEC__FINISH_GROUP;
  if (first >= workers) return 0;
  return workers - first < CPUEXEC__FINISH_GROUP ? workers - first : CPUEXEC__FINISH_GROUP;
}

static void run_regions(cpuexec_executor *exec, uint32_t width, uint32_t flags, _Atomic uint32_t *hits,
                        int64_t total) {
  assert_int_equal(cpuexec_parallel_for_flags(exec, total, 1, hits, touch, width, flags), 0);
  for (int64_t i = 0; i < total; i++) {
    assert_int_equal(atomic_load(&hits[i]), 1);
    atomic_store(&hits[i], 0);
  }
}

static void each_group_counts_only_its_members(uint32_t threads, cpuexec_spin_policy spin) {
  printf("case: %u participants, spin %s\n", threads, cpuexec_spin_policy_name(spin));
  fflush(stdout);
  enum { REGIONS = 20 };
  cpuexec_executor *exec = test_executor_spin(threads, spin, 2000);
  uint32_t groups = cpuexec__finish_groups_for(threads);
  const int64_t total = (int64_t)threads * 5;
  _Atomic uint32_t *hits = calloc((size_t)total, sizeof *hits);
  assert_non_null(hits);
  for (int r = 0; r < REGIONS; r++) run_regions(exec, 0, CPUEXEC_FOR_EVERY_PARTICIPANT, hits, total);
  for (uint32_t g = 0; g < groups; g++) {
    assert_int_equal(group_count(exec, g), REGIONS * members(threads, g));
    assert_int_equal(exec->lanes[0].tally[g].target, group_count(exec, g));
  }
  /* Three participants: two workers, both in the first group. */
  run_regions(exec, 3, CPUEXEC_FOR_EVERY_PARTICIPANT, hits, total);
  assert_int_equal(group_count(exec, 0), REGIONS * members(threads, 0) + 2);
  for (uint32_t g = 1; g < groups; g++) assert_int_equal(group_count(exec, g), REGIONS * members(threads, g));
  free(hits);
  cpuexec_executor_release(exec);
}

static void groups_count_their_own_workers(void **state) {
  (void)state;
  static const uint32_t counts[] = {16, 32, 64};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
    each_group_counts_only_its_members(counts[c], CPUEXEC_SPIN_PARK_IMMEDIATELY);
    each_group_counts_only_its_members(counts[c], CPUEXEC_SPIN_FIXED_ITERATIONS);
  }
}

/* ---- a worker of the second group held before it checks in ------------- */

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static uint32_t gate_held = 0; /* the worker to hold; 0: none (under gate_lock) */

static void gate(struct cpuexec_executor *exec, uint32_t index) {
  (void)exec;
  pthread_mutex_lock(&gate_lock);
  while (gate_held != 0 && index == gate_held) pthread_cond_wait(&gate_cond, &gate_lock);
  pthread_mutex_unlock(&gate_lock);
}

static void set_held(uint32_t index) {
  pthread_mutex_lock(&gate_lock);
  gate_held = index;
  pthread_cond_broadcast(&gate_cond);
  pthread_mutex_unlock(&gate_lock);
}

static void a_held_worker_is_taken_not_counted(void **state) {
  (void)state;
  enum { THREADS = 16, HELD = 10, REGIONS = 50 };
  cpuexec_executor *exec = test_executor_spin(THREADS, CPUEXEC_SPIN_PARK_IMMEDIATELY, 0);
  assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
  const int64_t total = THREADS * 5;
  _Atomic uint32_t *hits = calloc((size_t)total, sizeof *hits);
  assert_non_null(hits);
  atomic_store(&cpuexec__test_worker_gate, gate);
  set_held(HELD);
  uint32_t before0 = group_count(exec, 0), before1 = group_count(exec, 1);
  cpuexec_counters c0, c1;
  assert_int_equal(cpuexec_executor_counters_get(exec, &c0), 0);
  for (int r = 0; r < REGIONS; r++) run_regions(exec, 0, 0, hits, total);
  assert_int_equal(cpuexec_executor_counters_get(exec, &c1), 0);
  uint32_t joined = (group_count(exec, 0) - before0) + (group_count(exec, 1) - before1);
  /* Every worker of every region either joined (counted in its group) or
   * was taken over; the held one was taken every time. */
  assert_int_equal(joined + (c1.takeovers - c0.takeovers), REGIONS * (THREADS - 1));
  assert_true(c1.takeovers - c0.takeovers >= REGIONS);
  assert_true(group_count(exec, 1) - before1 <= REGIONS * (members(THREADS, 1) - 1));
  assert_int_equal(exec->lanes[0].tally[0].target, group_count(exec, 0));
  assert_int_equal(exec->lanes[0].tally[1].target, group_count(exec, 1));
  set_held(0);
  atomic_store(&cpuexec__test_worker_gate, NULL);
  /* Released, every worker runs again: the strict rule completes. */
  run_regions(exec, 0, CPUEXEC_FOR_EVERY_PARTICIPANT, hits, total);
  assert_int_equal(exec->lanes[0].tally[1].target, group_count(exec, 1));
  free(hits);
  cpuexec_executor_release(exec);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(groups_follow_worker_indexes),
      cmocka_unit_test(groups_count_their_own_workers),
      cmocka_unit_test(a_held_worker_is_taken_not_counted),
  };
  return cmocka_run_group_tests_name("split completion counting", tests, NULL, NULL);
}
