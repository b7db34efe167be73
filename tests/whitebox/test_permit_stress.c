/* The permit model under many threads on this machine: executors of 16 and
 * 64 threads (far more than its processors, so every crowding rule is in
 * play: park at once, the occupancy cap, standing aside, the settle, the
 * crowd's pieces), 8 callers at once, one of them also running a task
 * group. Every index runs exactly once, no participant index is held by
 * two threads at once within a region, every participant is one the
 * region admitted, and no caller is left counted beside lane 0. Nothing waits
 * on time; a hang is named by the case watchdog. */
#include "support/test_util.h"

#include <pthread.h>
#include <stdint.h>

#include "executor/executor_internal.h"

#define CALLERS 8
#define REGIONS 150
#define MOST_INDICES 300
#define TASKS 64

typedef struct region_check {
  _Atomic uint32_t hits[MOST_INDICES];
  _Atomic uint32_t holding[64]; /* participant index p is in a callback now */
  _Atomic uint32_t bad;
  uint32_t threads;
} region_check;

static int checked_body(void *ctx, int64_t begin, int64_t end) {
  region_check *c = ctx;
  int32_t p = cpuexec_participant_index(), n = cpuexec_participant_count();
  if (p < 0 || n < 1 || p >= n || (uint32_t)n > c->threads) atomic_fetch_add(&c->bad, 1);
  bool held = p >= 0 && p < 64 && atomic_exchange(&c->holding[p], 1) != 0;
  if (held) atomic_fetch_add(&c->bad, 1); /* another thread holds the same index now */
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&c->hits[i], 1);
  if (!held && p >= 0 && p < 64) atomic_store(&c->holding[p], 0);
  return 0;
}

static _Atomic uint32_t tasks_ran;
static int count_task(void *ctx) {
  (void)ctx;
  atomic_fetch_add(&tasks_ran, 1);
  return 0;
}

typedef struct caller {
  cpuexec_executor *exec;
  uint32_t threads;
  uint32_t seed;
  bool with_tasks;
  uint32_t failures;
} caller;

static void *caller_main(void *arg) {
  caller *me = arg;
  region_check *c = calloc(1, sizeof *c);
  c->threads = me->threads;
  cpuexec_task_group *group = NULL;
  if (me->with_tasks && cpuexec_task_group_create(me->exec, NULL, &group) != 0) me->failures++;
  for (uint32_t r = 0; r < REGIONS; r++) {
    me->seed = me->seed * 1103515245u + 12345u;
    int64_t total = 1 + (int64_t)(me->seed >> 8) % MOST_INDICES;
    int64_t grain = 1 + (int64_t)(me->seed >> 20) % 7;
    if (group)
      for (uint32_t t = 0; t < TASKS / 8; t++)
        if (cpuexec_task_group_submit(group, NULL, count_task) != 0) me->failures++;
    for (int64_t i = 0; i < total; i++) atomic_store(&c->hits[i], 0);
    if (cpuexec_parallel_for(me->exec, total, grain, c, checked_body, 0) != 0) me->failures++;
    for (int64_t i = 0; i < total; i++)
      if (atomic_load(&c->hits[i]) != 1) me->failures++;
    if (group && r % 16 == 15 && cpuexec_task_group_wait(group) != 0) me->failures++;
  }
  if (group) {
    if (cpuexec_task_group_wait(group) != 0) me->failures++;
    cpuexec_task_group_destroy(group);
  }
  me->failures += atomic_load(&c->bad);
  free(c);
  return NULL;
}

static void run_crowd(uint32_t threads) {
  cpuexec_executor *exec = test_executor(threads);
  atomic_store(&tasks_ran, 0);
  pthread_t t[CALLERS];
  caller callers[CALLERS];
  for (uint32_t k = 0; k < CALLERS; k++) {
    callers[k] = (caller){exec, threads, 7919u * (k + 1), k == 0, 0};
    assert_int_equal(pthread_create(&t[k], NULL, caller_main, &callers[k]), 0);
  }
  for (uint32_t k = 0; k < CALLERS; k++) {
    pthread_join(t[k], NULL);
    assert_int_equal(callers[k].failures, 0);
  }
  assert_int_equal(atomic_load(&tasks_ran), REGIONS * (TASKS / 8));
  /* Nobody is left beside lane 0 once every caller returned. */
  assert_int_equal(cpuexec__permit_side_callers(&exec->permit), 0);
  cpuexec_executor_release(exec);
}

static void sixteen_threads_eight_callers_and_a_task_group(void **state) {
  (void)state;
  run_crowd(16);
}

static void sixty_four_threads_eight_callers_and_a_task_group(void **state) {
  (void)state;
  run_crowd(64);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sixteen_threads_eight_callers_and_a_task_group),
      cmocka_unit_test(sixty_four_threads_eight_callers_and_a_task_group),
  };
  return cmocka_run_group_tests_name("the permit model under many threads", tests, NULL, NULL);
}
