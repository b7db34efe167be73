/* Runtime hooks (include/cpuexec/hooks.h) run by the region primitive: two
 * hooks, A then B, follow each thread through begin, callbacks and end, and
 * count what they saw, on the built-in executor, a foreign pool, a job pool
 * and the adapters' serial path; nested calls; scope hooks; registration
 * errors and capacity. Hooks cannot be unregistered, so the capacity case
 * runs last. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <cmocka.h>

#include <cpuexec.h>

#include "support/test_util.h"
#include <cpuexec/compat/job_pool.h>
#include <cpuexec/compat/range_executor.h>
#include <cpuexec/compat/ranges.h>
#include "support/foreign_pool.h"

/* What the hooks saw, process-wide. */
static atomic_uint begins, ends, callbacks_a, callbacks_b, violations, begin_mask, scope_enters, scope_leaves;
static atomic_bool enabled;

/* Each thread's position in the protocol: 0 outside, 1 after A's begin,
 * 2 inside (after B's begin), 3 after B's end. */
static __thread int phase;
static __thread unsigned thread_callbacks_a, thread_callbacks_b;
static __thread int scope_phase;

#define MAGIC_A 0x5a5a0001u
#define MAGIC_B 0x5a5a0002u

typedef struct hook_state {
  uint32_t magic;
  uint32_t index;
  uint32_t count;
} hook_state;

static void violation(void) { atomic_fetch_add(&violations, 1); }

static void a_begin(void *user, void *state) {
  (void)user;
  if (!atomic_load(&enabled)) return;
  if (phase != 0) violation();
  phase = 1;
  hook_state *s = state;
  /* The thread state describes the region during begin. */
  *s = (hook_state){MAGIC_A, cpuexec_participant_index(), cpuexec_participant_count()};
  if (s->index >= s->count) violation();
  atomic_fetch_or(&begin_mask, 1u << s->index);
  atomic_fetch_add(&begins, 1);
}

static void b_begin(void *user, void *state) {
  (void)user;
  if (!atomic_load(&enabled)) return;
  if (phase != 1) violation();
  phase = 2;
  *(hook_state *)state = (hook_state){MAGIC_B, 0, 0};
}

static void a_callback(void *user) {
  (void)user;
  if (!atomic_load(&enabled)) return;
  if (phase != 2) violation();
  thread_callbacks_a++;
  atomic_fetch_add(&callbacks_a, 1);
}

static void b_callback(void *user) {
  (void)user;
  if (!atomic_load(&enabled)) return;
  if (phase != 2) violation();
  thread_callbacks_b++;
  atomic_fetch_add(&callbacks_b, 1);
}

static void b_end(void *user, void *state) {
  (void)user;
  if (!atomic_load(&enabled)) return;
  if (phase != 2 || ((hook_state *)state)->magic != MAGIC_B) violation();
  phase = 3;
}

static void a_end(void *user, void *state) {
  (void)user;
  if (!atomic_load(&enabled)) return;
  const hook_state *s = state;
  if (phase != 3 || s->magic != MAGIC_A || s->index != (uint32_t)cpuexec_participant_index() ||
      s->count != (uint32_t)cpuexec_participant_count())
    violation();
  /* Each callback was seen by both hooks. */
  if (thread_callbacks_a != thread_callbacks_b) violation();
  thread_callbacks_a = thread_callbacks_b = 0;
  phase = 0;
  atomic_fetch_add(&ends, 1);
}

static cpuexec_executor *scope_expected;

static void a_scope_enter(void *user, cpuexec_executor *exec, void *state) {
  (void)user;
  if (!atomic_load(&enabled)) return;
  if (scope_phase != 0 || exec != scope_expected) violation();
  scope_phase = 1;
  *(uint32_t *)state = MAGIC_A;
  atomic_fetch_add(&scope_enters, 1);
}

static void b_scope_enter(void *user, cpuexec_executor *exec, void *state) {
  (void)user;
  if (!atomic_load(&enabled)) return;
  if (scope_phase != 1 || exec != scope_expected) violation();
  scope_phase = 2;
  *(uint32_t *)state = MAGIC_B;
}

static void b_scope_leave(void *user, void *state) {
  (void)user;
  if (!atomic_load(&enabled)) return;
  if (scope_phase != 2 || *(uint32_t *)state != MAGIC_B) violation();
  scope_phase = 1;
}

static void a_scope_leave(void *user, void *state) {
  (void)user;
  if (!atomic_load(&enabled)) return;
  if (scope_phase != 1 || *(uint32_t *)state != MAGIC_A) violation();
  scope_phase = 0;
  atomic_fetch_add(&scope_leaves, 1);
}

static void reset(void) {
  atomic_store(&begins, 0);
  atomic_store(&ends, 0);
  atomic_store(&callbacks_a, 0);
  atomic_store(&callbacks_b, 0);
  atomic_store(&violations, 0);
  atomic_store(&begin_mask, 0);
  atomic_store(&scope_enters, 0);
  atomic_store(&scope_leaves, 0);
}

/* Per region: one begin and one end per participant, participants 0..n-1. */
static void assert_regions(unsigned regions, uint32_t participants, unsigned callbacks) {
  assert_int_equal(atomic_load(&violations), 0);
  assert_int_equal(atomic_load(&begins), regions * participants);
  assert_int_equal(atomic_load(&ends), regions * participants);
  assert_int_equal(atomic_load(&begin_mask), (1u << participants) - 1);
  assert_int_equal(atomic_load(&callbacks_a), callbacks);
  assert_int_equal(atomic_load(&callbacks_b), callbacks);
}

/* The built-in pool may give a late worker's share to the participants
 * already running (DESIGN.md, "nobody waits for a late participant"), so
 * per region at most one begin and one end per participant, the caller's
 * always, every callback seen. */
static void assert_regions_at_most(unsigned regions, uint32_t participants, unsigned callbacks) {
  assert_int_equal(atomic_load(&violations), 0);
  assert_int_equal(atomic_load(&begins), atomic_load(&ends));
  assert_true(atomic_load(&begins) >= regions && atomic_load(&begins) <= regions * participants);
  assert_true((atomic_load(&begin_mask) & 1u) != 0);
  assert_int_equal(atomic_load(&begin_mask) & ~((1u << participants) - 1), 0);
  assert_true(atomic_load(&callbacks_a) >= regions && atomic_load(&callbacks_a) <= callbacks);
  assert_int_equal(atomic_load(&callbacks_a), atomic_load(&callbacks_b));
}

static int register_a_and_b(void **state) {
  (void)state;
  cpuexec_hook a, b;
  cpuexec_hook_init(&a);
  a.name = "test-a";
  a.participant_begin = a_begin;
  a.before_callback = a_callback;
  a.participant_end = a_end;
  a.scope_enter = a_scope_enter;
  a.scope_leave = a_scope_leave;
  cpuexec_hook_init(&b);
  b.name = "test-b";
  b.participant_begin = b_begin;
  b.before_callback = b_callback;
  b.participant_end = b_end;
  b.scope_enter = b_scope_enter;
  b.scope_leave = b_scope_leave;
  if (cpuexec_hook_register(&a) != 0 || cpuexec_hook_register(&b) != 0) return -1;
  /* The same hook again changes nothing (a library that registers on every
   * init). */
  if (cpuexec_hook_register(&a) != 0) return -1;
  atomic_store(&enabled, true);
  return 0;
}

static int one_range(void *ctx, int64_t begin, int64_t end) {
  (void)ctx, (void)begin, (void)end;
  return 0;
}

static void builtin_and_foreign_participants_begin_and_end_once_per_region_in_order(void **state) {
  (void)state;
  test_owned_executor builtin;
  assert_int_equal(test_executor_create(3, &builtin), 0);
  foreign_pool *pool = foreign_pool_create(3);
  cpuexec_executor *foreign = foreign_pool_executor(pool);
  cpuexec_executor *executors[] = {builtin.exec, foreign};
  for (size_t e = 0; e < 2; e++) {
    reset();
    /* Grain 1 over 3 indices: one callback per participant. */
    for (int r = 0; r < 5; r++) assert_int_equal(cpuexec_parallel_for(executors[e], 3, 1, NULL, one_range, 0), 0);
    if (executors[e] == foreign)
      assert_regions(5, 3, 15); /* each foreign participant runs its reserved range */
    else
      assert_regions_at_most(5, 3, 15);
  }
  cpuexec_executor_release(foreign);
  foreign_pool_destroy(pool);
  test_executor_destroy(&builtin);
}

static cpuexec_executor *nested_target;

static int with_nested_call(void *ctx, int64_t begin, int64_t end) {
  (void)ctx, (void)begin, (void)end;
  /* Inline, on this thread: no begin or end, but its callback is seen. */
  return cpuexec_parallel_for(nested_target, 4, 1, NULL, one_range, 0);
}

static void nested_calls_run_callbacks_hooks_only(void **state) {
  (void)state;
  foreign_pool *pool = foreign_pool_create(2);
  nested_target = foreign_pool_executor(pool);
  reset();
  assert_int_equal(cpuexec_parallel_for(nested_target, 2, 1, NULL, with_nested_call, 0), 0);
  /* 2 outer callbacks, each with one inline nested callback. */
  assert_regions(1, 2, 4);
  cpuexec_executor_release(nested_target);
  foreign_pool_destroy(pool);
}

/* 12 groups over a job pool of 3 workers: worker id of the range is
 * begin / 4; inside the callback the thread is that participant. */
static atomic_uint wrong_identity;

static int job_pool_range(void *ctx, int64_t begin, int64_t end) {
  (void)ctx, (void)end;
  if (cpuexec_participant_index() != (int32_t)(begin / 4) || cpuexec_participant_count() != 3)
    atomic_fetch_add(&wrong_identity, 1);
  return 0;
}

static void job_pool_workers_are_participants_with_their_ids(void **state) {
  (void)state;
  test_pool *pool = test_pool_create(3);
  cpuexec_job_pool jp = test_pool_as_job_pool(pool);
  cpuexec_range_executor re = cpuexec_range_executor_from_job_pool(&jp);
  reset();
  assert_int_equal(cpuexec_range_executor_run(&re, 12, NULL, job_pool_range), 0);
  assert_int_equal(atomic_load(&wrong_identity), 0);
  assert_regions(1, 3, 3);
  test_pool_destroy(pool);
}

static void serial_adapter_paths_are_one_participant_regions(void **state) {
  (void)state;
  reset();
  assert_null(cpuexec_executor_current());
  assert_int_equal(cpuexec_ranges_execute(100, NULL, NULL, one_range), 0);
  cpuexec_range_executor serial = cpuexec_range_executor_serial();
  assert_int_equal(cpuexec_range_executor_run(&serial, 100, NULL, one_range), 0);
  assert_int_equal(cpuexec_parallel_for(NULL, 100, 1, NULL, one_range, 0), 0);
  assert_regions(3, 1, 3);
}

static int scope_in_callback(void *ctx, int64_t begin, int64_t end) {
  (void)begin, (void)end;
  cpuexec_scope inner;
  int rc = cpuexec_scope_enter(ctx, &inner);
  return rc != 0 ? rc : cpuexec_scope_leave(&inner);
}

static void scopes_run_scope_hooks_in_order_outside_callbacks_only(void **state) {
  (void)state;
  foreign_pool *pool = foreign_pool_create(2);
  cpuexec_executor *exec = foreign_pool_executor(pool);
  scope_expected = exec;
  reset();
  cpuexec_scope outer;
  assert_int_equal(cpuexec_scope_enter(exec, &outer), 0);
  assert_int_equal(atomic_load(&scope_enters), 1);
  assert_int_equal(cpuexec_parallel_for(exec, 2, 1, exec, scope_in_callback, 0), 0);
  assert_int_equal(atomic_load(&scope_enters), 1); /* not inside callbacks */
  assert_int_equal(cpuexec_scope_leave(&outer), 0);
  assert_int_equal(atomic_load(&scope_leaves), 1);
  assert_int_equal(atomic_load(&violations), 0);
  cpuexec_executor_release(exec);
  foreign_pool_destroy(pool);
}

static void noop_callback(void *user) { (void)user; }

static void registration_errors_and_capacity(void **state) {
  (void)state;
  assert_int_equal(cpuexec_hook_register(NULL), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "hook"));
  cpuexec_hook none;
  cpuexec_hook_init(&none);
  none.name = "empty";
  assert_int_equal(cpuexec_hook_register(&none), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "empty"));
  cpuexec_hook_init(NULL); /* ignored */
  /* Fill the table: distinct users make distinct hooks. The library's own
   * OpenMP guard holds one entry, A and B two. */
  static char users[CPUEXEC_HOOKS_MAX];
  int rc = 0;
  size_t added = 0;
  for (size_t i = 0; i < CPUEXEC_HOOKS_MAX && rc == 0; i++) {
    cpuexec_hook h;
    cpuexec_hook_init(&h);
    h.name = "filler";
    h.user = &users[i];
    h.before_callback = noop_callback;
    rc = cpuexec_hook_register(&h);
    added += rc == 0;
  }
  assert_int_equal(rc, CPUEXEC_ECAPACITY);
  assert_non_null(strstr(cpuexec_error_message(), "filler"));
  assert_int_equal(added, CPUEXEC_HOOKS_MAX - 3);
  /* A full table still runs every registered hook. */
  reset();
  assert_int_equal(cpuexec_parallel_for(NULL, 10, 1, NULL, one_range, 0), 0);
  assert_regions(1, 1, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(builtin_and_foreign_participants_begin_and_end_once_per_region_in_order),
      cmocka_unit_test(nested_calls_run_callbacks_hooks_only),
      cmocka_unit_test(job_pool_workers_are_participants_with_their_ids),
      cmocka_unit_test(serial_adapter_paths_are_one_participant_regions),
      cmocka_unit_test(scopes_run_scope_hooks_in_order_outside_callbacks_only),
      cmocka_unit_test(registration_errors_and_capacity),
  };
  return cmocka_run_group_tests_name("hooks", tests, register_a_and_b, NULL);
}
