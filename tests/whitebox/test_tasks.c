/* Task groups (include/cpuexec/tasks.h): every task once, errors to the
 * wait, the waiting thread runs tasks, a helping thread runs its task and
 * the queued ones without waiting, submitting from callbacks and tasks,
 * a full queue, fork with tasks queued, the concurrency cap, and tasks
 * beside regions of other callers. Workers are held with the worker gate
 * (executor_internal.h), never with time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <pthread.h>
#include <cmocka.h>

#include "executor/executor_internal.h"
#include "support/stage_latch.h"
#include "support/test_util.h"

/* ---- holding every worker away from the lanes --------------------------- */

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static bool holding;

static void hold_gate(struct cpuexec_executor *exec, uint32_t index) {
  (void)exec, (void)index;
  pthread_mutex_lock(&hold_lock);
  while (holding) pthread_cond_wait(&hold_cond, &hold_lock);
  pthread_mutex_unlock(&hold_lock);
}

static void hold_workers(bool on) {
  pthread_mutex_lock(&hold_lock);
  holding = on;
  pthread_cond_broadcast(&hold_cond);
  pthread_mutex_unlock(&hold_lock);
  if (on) atomic_store(&cpuexec__test_worker_gate, hold_gate);
}

static int teardown_gate(void **state) {
  (void)state;
  hold_workers(false);
  atomic_store(&cpuexec__test_worker_gate, NULL);
  return 0;
}

/* ---- a counting task ---------------------------------------------------- */

#define MAX_TASKS 20000

typedef struct tally {
  _Atomic uint32_t hits[MAX_TASKS];
  _Atomic uintptr_t thread_of[MAX_TASKS];
  _Atomic int32_t running_workers, most_workers;
  uintptr_t main_thread;
  int64_t fail_at;
  unsigned busy;
  _Atomic uint32_t bad;
} tally;

typedef struct item {
  tally *t;
  int64_t index;
} item;

static item items[MAX_TASKS];

static int count_task(void *ctx) {
  item *it = ctx;
  tally *t = it->t;
  bool worker = (uintptr_t)pthread_self() != t->main_thread;
  if (worker) {
    int32_t now = atomic_fetch_add(&t->running_workers, 1) + 1, most = atomic_load(&t->most_workers);
    while (now > most && !atomic_compare_exchange_weak(&t->most_workers, &most, now)) {
    }
  }
  if (cpuexec_participant_count() != 1 || cpuexec_participant_index() != 0) atomic_fetch_add(&t->bad, 1);
  if (t->busy) test_busy_work(t->busy);
  atomic_fetch_add(&t->hits[it->index], 1);
  atomic_store(&t->thread_of[it->index], (uintptr_t)pthread_self());
  if (worker) atomic_fetch_sub(&t->running_workers, 1);
  return it->index == t->fail_at ? 77 : 0;
}

static tally *new_tally(void) {
  tally *t = calloc(1, sizeof *t);
  assert_non_null(t);
  t->main_thread = (uintptr_t)pthread_self();
  t->fail_at = -1;
  return t;
}

static void submit_all(cpuexec_task_group *g, tally *t, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    items[i] = (item){t, i};
    assert_int_equal(cpuexec_task_group_submit(g, &items[i], count_task), 0);
  }
}

static void assert_each_once(tally *t, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (atomic_load(&t->hits[i]) != 1) fail_msg("task %lld ran %u times", (long long)i, atomic_load(&t->hits[i]));
  assert_int_equal(atomic_load(&t->bad), 0);
}

static void every_task_runs_once_on_the_pool(void **state) {
  (void)state;
  uint32_t pools[] = {1, 2, 3, 5};
  for (size_t p = 0; p < sizeof pools / sizeof pools[0]; p++) {
    cpuexec_executor *exec = test_executor(pools[p]);
    cpuexec_task_group *g;
    assert_int_equal(cpuexec_task_group_create(exec, NULL, &g), 0);
    for (int round = 0; round < 3; round++) {
      tally *t = new_tally();
      submit_all(g, t, 5000);
      assert_int_equal(cpuexec_task_group_wait(g), 0);
      assert_each_once(t, 5000);
      free(t);
    }
    assert_int_equal(cpuexec_task_group_destroy(g), 0);
    cpuexec_executor_release(exec);
  }
  /* No executor: inline at submit. */
  cpuexec_task_group *g;
  assert_int_equal(cpuexec_task_group_create(NULL, NULL, &g), 0);
  tally *t = new_tally();
  submit_all(g, t, 10);
  assert_each_once(t, 10);
  assert_int_equal(cpuexec_task_group_destroy(g), 0);
  free(t);
}

static void a_failing_task_reaches_the_wait_and_the_group_is_reusable(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(3);
  cpuexec_task_group *g;
  assert_int_equal(cpuexec_task_group_create(exec, NULL, &g), 0);
  tally *t = new_tally();
  t->fail_at = 100;
  submit_all(g, t, 3000);
  assert_int_equal(cpuexec_task_group_wait(g), CPUEXEC_ECALLBACK);
  assert_int_equal(cpuexec_error_callback_value(), 77);
  for (int64_t i = 0; i < 3000; i++) assert_true(atomic_load(&t->hits[i]) <= 1);
  assert_int_equal(atomic_load(&t->hits[100]), 1);
  free(t);
  t = new_tally();
  submit_all(g, t, 500);
  assert_int_equal(cpuexec_task_group_wait(g), 0);
  assert_each_once(t, 500);
  free(t);
  assert_int_equal(cpuexec_task_group_destroy(g), 0);
  cpuexec_executor_release(exec);
}

/* Every worker held before it can join: the waiting thread runs them all. */
static void the_waiting_thread_runs_tasks_itself(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(3);
  cpuexec_task_group *g;
  assert_int_equal(cpuexec_task_group_create(exec, NULL, &g), 0);
  hold_workers(true);
  tally *t = new_tally();
  submit_all(g, t, 1000);
  assert_int_equal(cpuexec_task_group_wait(g), 0);
  assert_each_once(t, 1000);
  for (int i = 0; i < 1000; i++) assert_true(atomic_load(&t->thread_of[i]) == t->main_thread);
  hold_workers(false);
  free(t);
  assert_int_equal(cpuexec_task_group_destroy(g), 0);
  cpuexec_executor_release(exec);
}

/* ---- helping without waiting ---------------------------------------------- */

static tally *first_seen;
static int queued_done_before;

static int note_first(void *ctx) {
  (void)ctx;
  queued_done_before = (int)atomic_load(&first_seen->hits[0]);
  return 0;
}

/* Every worker held: help runs its own task first, then every queued one,
 * all on the calling thread as tasks (participant 0 of 1), and a failing
 * one's value goes to the next wait. */
static void help_runs_its_task_then_the_queued_ones_here(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(3);
  cpuexec_task_group *g;
  assert_int_equal(cpuexec_task_group_create(exec, NULL, &g), 0);
  hold_workers(true);
  tally *t = new_tally();
  t->fail_at = 399;
  submit_all(g, t, 400);
  assert_int_equal(atomic_load(&t->hits[0]), 0); /* queued, not run at submit */
  first_seen = t;
  queued_done_before = -1;
  assert_int_equal(cpuexec_task_group_help(g, NULL, note_first), 0);
  assert_int_equal(queued_done_before, 0); /* its own task ran before any queued one */
  assert_each_once(t, 400);
  for (int i = 0; i < 400; i++) assert_true(atomic_load(&t->thread_of[i]) == t->main_thread);
  assert_int_equal(cpuexec_task_group_wait(g), CPUEXEC_ECALLBACK);
  assert_int_equal(cpuexec_error_callback_value(), 77);
  /* Nothing queued and no task of its own: it returns at once. */
  assert_int_equal(cpuexec_task_group_help(g, NULL, NULL), 0);
  hold_workers(false);
  free(t);
  assert_int_equal(cpuexec_task_group_destroy(g), 0);
  cpuexec_executor_release(exec);
}

typedef struct held_task {
  stage_latch latch; /* 1: the task started on a worker; 2: it may finish */
  _Atomic int finished;
  cpuexec_task_group *g;
  _Atomic int helped_inside;
} held_task;

static int held(void *ctx) {
  held_task *h = ctx;
  stage_latch_set(&h->latch, 1);
  stage_latch_wait(&h->latch, 2);
  atomic_store(&h->finished, 1);
  return 0;
}

static int helps_from_inside(void *ctx) {
  held_task *h = ctx;
  atomic_store(&h->helped_inside, cpuexec_task_group_help(h->g, NULL, NULL) == 0 ? 1 : 2);
  return 0;
}

/* A task running on a worker does not hold the helper back: help returns
 * while it runs (the wait then waits for it); a task may help its own group. */
static void help_does_not_wait_for_running_tasks(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  cpuexec_task_group *g;
  assert_int_equal(cpuexec_task_group_create(exec, NULL, &g), 0);
  held_task h = {STAGE_LATCH_INITIALIZER, 0, g, 0};
  assert_int_equal(cpuexec_task_group_submit(g, &h, held), 0);
  stage_latch_wait(&h.latch, 1); /* on the one worker now */
  assert_int_equal(cpuexec_task_group_help(g, &h, helps_from_inside), 0);
  assert_int_equal(atomic_load(&h.helped_inside), 1);
  assert_int_equal(atomic_load(&h.finished), 0);
  stage_latch_set(&h.latch, 2);
  assert_int_equal(cpuexec_task_group_wait(g), 0);
  assert_int_equal(atomic_load(&h.finished), 1);
  assert_int_equal(cpuexec_task_group_destroy(g), 0);
  cpuexec_executor_release(exec);
  /* An inline group (no executor): help runs its task at once, like submit. */
  assert_int_equal(cpuexec_task_group_create(NULL, NULL, &g), 0);
  tally *t = new_tally();
  items[0] = (item){t, 0};
  assert_int_equal(cpuexec_task_group_help(g, &items[0], count_task), 0);
  assert_each_once(t, 1);
  free(t);
  assert_int_equal(cpuexec_task_group_destroy(g), 0);
}

/* ---- submitting from tasks and from callbacks ---------------------------- */

typedef struct chain {
  cpuexec_task_group *g;
  _Atomic int64_t ran;
  int64_t depth;
} chain;

static int chain_task(void *ctx) {
  chain *c = ctx;
  int64_t n = atomic_fetch_add(&c->ran, 1) + 1;
  if (n < c->depth && cpuexec_task_group_submit(c->g, c, chain_task) != 0) return 1;
  /* Waiting on its own group from inside it would wait for itself. */
  if (n == 1 && cpuexec_task_group_wait(c->g) != CPUEXEC_EBUSY) return 2;
  return 0;
}

static int submit_from_range(void *ctx, int64_t begin, int64_t end) {
  chain *c = ctx;
  for (int64_t i = begin; i < end; i++)
    if (cpuexec_task_group_submit(c->g, c, chain_task) != 0) return 3;
  return 0;
}

static void tasks_submitted_from_tasks_and_callbacks_all_run(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(3);
  cpuexec_task_group *g;
  cpuexec_task_group_options o;
  cpuexec_task_group_options_init(&o);
  o.queue_capacity = 8; /* full queues too: those run inline, never wait */
  assert_int_equal(cpuexec_task_group_create(exec, &o, &g), 0);
  chain c = {g, 0, 2000};
  assert_int_equal(cpuexec_task_group_submit(g, &c, chain_task), 0);
  assert_int_equal(cpuexec_task_group_wait(g), 0);
  assert_int_equal(atomic_load(&c.ran), 2000);
  /* From a region's callbacks on the same executor: 64 chains. */
  chain d = {g, 0, 1 << 30};
  d.depth = 0; /* each submitted task runs once and submits nothing */
  assert_int_equal(cpuexec_parallel_for(exec, 64, 1, &d, submit_from_range, 0), 0);
  assert_int_equal(cpuexec_task_group_wait(g), 0);
  assert_int_equal(atomic_load(&d.ran), 64);
  assert_int_equal(cpuexec_task_group_destroy(g), 0);
  cpuexec_executor_release(exec);
}

/* A queue of 4 with every worker held: the 5th submit onwards runs at once
 * on the submitting thread. */
static void a_full_queue_runs_the_task_on_the_submitter(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  cpuexec_task_group *g;
  cpuexec_task_group_options o;
  cpuexec_task_group_options_init(&o);
  o.queue_capacity = 4;
  assert_int_equal(cpuexec_task_group_create(exec, &o, &g), 0);
  hold_workers(true);
  tally *t = new_tally();
  submit_all(g, t, 10);
  for (int i = 0; i < 4; i++) assert_int_equal(atomic_load(&t->hits[i]), 0);
  for (int i = 4; i < 10; i++) assert_int_equal(atomic_load(&t->hits[i]), 1);
  assert_int_equal(cpuexec_task_group_wait(g), 0);
  assert_each_once(t, 10);
  hold_workers(false);
  free(t);
  assert_int_equal(cpuexec_task_group_destroy(g), 0);
  cpuexec_executor_release(exec);
}

/* ---- fork with tasks queued ---------------------------------------------- */

static cpuexec_task_group *fork_group;

static int child_checks(void) {
  if (cpuexec_task_group_submit(fork_group, &items[0], count_task) != CPUEXEC_EFORKED) return 10;
  if (cpuexec_task_group_wait(fork_group) != CPUEXEC_EFORKED) return 11;
  tally *t = items[0].t;
  if (cpuexec_task_group_help(fork_group, &items[0], count_task) != CPUEXEC_EFORKED) return 12;
  if (atomic_load(&t->hits[0]) != 0) return 13; /* neither its task nor the queued ones ran */
  return 0;
}

static void fork_with_tasks_queued(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  assert_int_equal(cpuexec_task_group_create(exec, NULL, &fork_group), 0);
  hold_workers(true);
  tally *t = new_tally();
  submit_all(fork_group, t, 100);
  assert_int_equal(run_in_child(child_checks, 20), 0);
  hold_workers(false);
  assert_int_equal(cpuexec_task_group_wait(fork_group), 0);
  assert_each_once(t, 100);
  free(t);
  assert_int_equal(cpuexec_task_group_destroy(fork_group), 0);
  cpuexec_executor_release(exec);
}

/* ---- the cap -------------------------------------------------------------- */

static void the_concurrency_cap_bounds_the_workers_running_a_group(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(5);
  for (int32_t cap = 1; cap <= 2; cap++) {
    cpuexec_task_group *g;
    cpuexec_task_group_options o;
    cpuexec_task_group_options_init(&o);
    o.max_concurrency = cap;
    assert_int_equal(cpuexec_task_group_create(exec, &o, &g), 0);
    tally *t = new_tally();
    t->busy = 20;
    submit_all(g, t, 300);
    assert_int_equal(cpuexec_task_group_wait(g), 0);
    assert_each_once(t, 300);
    if (atomic_load(&t->most_workers) > cap)
      fail_msg("cap %d: %d workers ran the group's tasks at once", cap, atomic_load(&t->most_workers));
    free(t);
    assert_int_equal(cpuexec_task_group_destroy(g), 0);
  }
  cpuexec_executor_release(exec);
}

/* ---- tasks beside regions -------------------------------------------------- */

typedef struct region_loop {
  cpuexec_executor *exec;
  _Atomic int64_t sum;
  int failures;
} region_loop;

static int add_range(void *ctx, int64_t begin, int64_t end) {
  region_loop *r = ctx;
  atomic_fetch_add(&r->sum, end - begin);
  return 0;
}

static void *regions_beside(void *arg) {
  region_loop *r = arg;
  for (int i = 0; i < 2000; i++) {
    atomic_store(&r->sum, 0);
    if (cpuexec_parallel_for(r->exec, 100, 1 + i % 7, r, add_range, 0) != 0 || atomic_load(&r->sum) != 100)
      r->failures++;
  }
  return NULL;
}

static void tasks_and_regions_of_other_callers_share_the_workers(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(3);
  region_loop r[2] = {{exec, 0, 0}, {exec, 0, 0}};
  pthread_t th[2];
  for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, regions_beside, &r[i]), 0);
  cpuexec_task_group *g;
  assert_int_equal(cpuexec_task_group_create(exec, NULL, &g), 0);
  for (int round = 0; round < 10; round++) {
    tally *t = new_tally();
    submit_all(g, t, 1000);
    assert_int_equal(cpuexec_task_group_wait(g), 0);
    assert_each_once(t, 1000);
    free(t);
  }
  for (int i = 0; i < 2; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(r[i].failures, 0);
  }
  assert_int_equal(cpuexec_task_group_destroy(g), 0);
  cpuexec_executor_release(exec);
}

static void bad_arguments(void **state) {
  (void)state;
  cpuexec_task_group *g = (cpuexec_task_group *)&g;
  cpuexec_task_group_options o;
  cpuexec_task_group_options_init(&o);
  o.max_concurrency = -1;
  assert_int_equal(cpuexec_task_group_create(NULL, &o, &g), CPUEXEC_EINVAL);
  assert_null(g);
  assert_int_equal(cpuexec_task_group_create(NULL, NULL, NULL), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_task_group_submit(NULL, NULL, count_task), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_task_group_wait(NULL), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_task_group_help(NULL, NULL, count_task), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_task_group_create(NULL, NULL, &g), 0);
  assert_int_equal(cpuexec_task_group_submit(g, NULL, NULL), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_task_group_destroy(g), 0);
  assert_int_equal(cpuexec_task_group_destroy(NULL), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_arguments),
      cmocka_unit_test(every_task_runs_once_on_the_pool),
      cmocka_unit_test(a_failing_task_reaches_the_wait_and_the_group_is_reusable),
      cmocka_unit_test(tasks_submitted_from_tasks_and_callbacks_all_run),
      cmocka_unit_test(the_concurrency_cap_bounds_the_workers_running_a_group),
      cmocka_unit_test(tasks_and_regions_of_other_callers_share_the_workers),
      cmocka_unit_test(help_does_not_wait_for_running_tasks),
  };
  const struct CMUnitTest held[] = {
      cmocka_unit_test(the_waiting_thread_runs_tasks_itself),
      cmocka_unit_test(help_runs_its_task_then_the_queued_ones_here),
      cmocka_unit_test(a_full_queue_runs_the_task_on_the_submitter),
      TEST_UNIX_ONLY(fork_with_tasks_queued, "fork(): Windows has none"),
  };
  int failed = cmocka_run_group_tests_name("task groups", tests, NULL, NULL);
  failed += cmocka_run_group_tests_name("task groups, workers held", held, NULL, teardown_gate);
  return failed;
}
