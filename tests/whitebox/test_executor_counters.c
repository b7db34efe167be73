/* Counters (off: zeros; on: exact counts for a scripted sequence), the
 * dispatch observer, and the execution descriptor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <pthread.h>
#include <sched.h>
#include <cmocka.h>

#include "executor/executor_internal.h"
#include "executor/region_lanes.h"
#include "support/test_util.h"

typedef struct script_ctx {
  cpuexec_executor *exec;
  int nest;
} script_ctx;

static int busy(void *ctx, int64_t begin, int64_t end) {
  script_ctx *s = ctx;
  volatile uint64_t x = 0;
  for (int64_t i = begin; i < end; i++)
    for (int k = 0; k < 20000; k++) x += (uint64_t)k;
  if (s && s->nest && begin == 0) cpuexec_parallel_for(s->exec, 10, 1, NULL, busy, 0);
  return 0;
}

/* Off is no counting at all, not counts kept and hidden: no counter block
 * exists for any region to touch (counters_internal.h), so the regions pay
 * one load of a NULL pointer. */
static void counters_are_zero_while_off(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  for (int i = 0; i < 20; i++) assert_int_equal(cpuexec_parallel_for(exec, 100, 1, NULL, busy, 0), 0);
  assert_null(cpuexec__counters_of(exec));
  cpuexec_counters c;
  memset(&c, 0xff, sizeof c);
  assert_int_equal(cpuexec_executor_counters_get(exec, &c), 0);
  cpuexec_counters zero = {0};
  assert_memory_equal(&c, &zero, sizeof c);
  cpuexec_executor_release(exec);
}

/* The scripted sequence keeps every admitted worker in its region (nobody
 * takes over a late one), so each admitted worker waits exactly once. */
static int every_participant(cpuexec_executor *exec, int64_t total, int64_t grain, void *ctx, cpuexec_range_fn fn,
                             uint32_t max_participants) {
  return cpuexec_parallel_for_flags(exec, total, grain, ctx, fn, max_participants, CPUEXEC_FOR_EVERY_PARTICIPANT);
}

static void counters_count_a_scripted_sequence_exactly(void **state) {
  (void)state;
  static const cpuexec_spin_policy spins[] = {CPUEXEC_SPIN_PARK_IMMEDIATELY, CPUEXEC_SPIN_ADAPTIVE};
  for (size_t sp = 0; sp < 2; sp++) {
    cpuexec_executor *exec = test_executor_spin(4, spins[sp], 0);
    every_participant(exec, 100, 1, NULL, busy, 0); /* before counting: not counted */
    assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
    assert_int_equal(cpuexec_executor_counters_enable(exec), 0); /* idempotent, keeps counts */
    script_ctx nest = {exec, 1};
    /* 3 regions of 4, 2 of 2 (limited by max_participants), 1 of 3 (by work). */
    for (int i = 0; i < 3; i++) every_participant(exec, 64, 1, NULL, busy, 0);
    for (int i = 0; i < 2; i++) every_participant(exec, 64, 1, NULL, busy, 2);
    every_participant(exec, 3, 1, NULL, busy, 0);
    /* 4 inline because the work or the limit admits one participant. */
    every_participant(exec, 1, 1, NULL, busy, 0);
    every_participant(exec, 5, 5, NULL, busy, 0);
    every_participant(exec, 64, 1, NULL, busy, 1);
    every_participant(exec, 64, 100, NULL, busy, 0);
    /* 1 region whose index-0 callback makes 1 nested call. */
    every_participant(exec, 8, 1, &nest, busy, 0);
    /* Not counted: nothing to do or invalid. */
    every_participant(exec, 0, 1, NULL, busy, 0);
    every_participant(exec, 10, 0, NULL, busy, 0);
    cpuexec_counters c;
    assert_int_equal(cpuexec_executor_counters_get(exec, &c), 0);
    assert_int_equal(c.dispatches, 7);
    assert_int_equal(c.limited_inline, 4);
    assert_int_equal(c.nested_inline, 1);
    /* Worker waits that ended with work: 3*3 + 2*1 + 2 + 3; each either
     * spun or parked, as did each caller wait. */
    uint64_t worker_waits = 9 + 2 + 2 + 3;
    assert_true(c.caller_waits <= 7);
    assert_int_equal(c.spins_found_work + c.parks, worker_waits + c.caller_waits);
    assert_true(c.wakeups <= worker_waits);
    if (spins[sp] == CPUEXEC_SPIN_PARK_IMMEDIATELY) assert_true(c.parks >= 1);
    /* A long spin is one of the waits above, and only adaptive plans make
     * one; nothing here moves a caller (no pinned worker, strict regions),
     * and only a worker that joins on its caller's processor moves (the
     * beside-caller rule, permit.h): at most once per join. */
    assert_true(c.long_spins <= worker_waits + c.caller_waits);
    if (spins[sp] != CPUEXEC_SPIN_ADAPTIVE) assert_int_equal(c.long_spins, 0);
    assert_true(c.step_offs <= worker_waits);
    assert_true(c.worker_active_ns > 0);
    cpuexec_executor_release(exec);
  }
}

static int nested_per_index(void *ctx, int64_t begin, int64_t end) {
  script_ctx *s = ctx;
  for (int64_t i = begin; i < end; i++) cpuexec_parallel_for(s->exec, 10, 1, NULL, busy, 0);
  return 0;
}

/* onnx-light's scripted scenario (doc/adapters.md, "Differences from
 * onnx-light"): an outer region of 4 whose every index makes one nested
 * call. onnx-light reads dispatches/nested/limited 5/4/0; here each call
 * is counted once, by what it did: 1/4/0. */
static void counters_partition_calls_in_the_nested_scenario(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(4);
  assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
  script_ctx s = {exec, 0};
  assert_int_equal(cpuexec_parallel_for(exec, 4, 1, &s, nested_per_index, 0), 0);
  cpuexec_counters c;
  assert_int_equal(cpuexec_executor_counters_get(exec, &c), 0);
  assert_int_equal(c.dispatches, 1);
  assert_int_equal(c.nested_inline, 4);
  assert_int_equal(c.limited_inline, 0);
  cpuexec_executor_release(exec);
}

typedef struct seen_events {
  int calls;
  cpuexec_dispatch_event last;
} seen_events;

static void observe(void *user, const cpuexec_dispatch_event *ev) {
  seen_events *s = user;
  s->calls++;
  s->last = *ev;
}

static void the_observer_sees_each_region_with_the_executor_id(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(3);
  seen_events s = {0};
  cpuexec_dispatch_observer_set(&s, observe);
  cpuexec_parallel_for(exec, 100, 7, NULL, busy, 2);
  assert_int_equal(s.calls, 1);
  assert_int_equal(s.last.executor_id, cpuexec_executor_id(exec));
  assert_int_equal(s.last.effective_threads, 3);
  assert_int_equal(s.last.requested_participants, 2);
  assert_int_equal(s.last.admitted_participants, 2);
  assert_int_equal(s.last.total, 100);
  assert_int_equal(s.last.grain, 7);
  assert_false(s.last.ran_inline);
  cpuexec_parallel_for(exec, 1, 1, NULL, busy, 0);
  assert_int_equal(s.calls, 2);
  assert_int_equal(s.last.admitted_participants, 1);
  assert_true(s.last.ran_inline);
  cpuexec_dispatch_observer_set(NULL, NULL);
  cpuexec_parallel_for(exec, 100, 1, NULL, busy, 0);
  assert_int_equal(s.calls, 2);
  cpuexec_executor_release(exec);
}

static void the_descriptor_matches_its_executor_and_names_a_difference(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor_spin(2, CPUEXEC_SPIN_FIXED_DURATION, 5000);
  cpuexec_descriptor d;
  assert_int_equal(cpuexec_executor_descriptor_get(exec, &d), 0);
  assert_int_equal(d.effective_threads, 2);
  assert_int_equal(d.affinity_class, CPUEXEC_AFFINITY_NONE);
  assert_false(d.uses_smt);
  assert_int_equal(d.spin_class, CPUEXEC_SPIN_FIXED_DURATION);
  assert_int_equal(cpuexec_executor_descriptor_check(exec, &d), 0);
  static const char *fields[] = {"effective_threads", "affinity_class", "uses_smt", "spin_class"};
  for (int f = 0; f < 4; f++) {
    cpuexec_descriptor other = d;
    switch (f) {
    case 0: other.effective_threads = 4; break;
    case 1: other.affinity_class = CPUEXEC_AFFINITY_PHYSICAL_CORES; break;
    case 2: other.uses_smt = true; break;
    case 3: other.spin_class = CPUEXEC_SPIN_ADAPTIVE; break;
    }
    assert_int_equal(cpuexec_executor_descriptor_check(exec, &other), CPUEXEC_EMISMATCH);
    assert_non_null(strstr(cpuexec_error_message(), fields[f]));
  }
  cpuexec_executor_release(exec);
}

/* The caller's long spin (wait.c): its plan's 100 us ran out while its
 * worker still ran, so it spun on, then parked. The worker's range returns
 * only once the caller parked, so the caller's wait went through every
 * stage; never preempted (the permit model's fake preemption count), it is
 * never crowded lately, so the long spin is made. */
typedef struct long_wait {
  cpuexec_executor *exec;
  cpuexec_counters c;
  int rc;
} long_wait;

static int hold_until_the_caller_parks(void *ctx, int64_t begin, int64_t end) {
  long_wait *w = ctx;
  (void)begin, (void)end;
  if (cpuexec_participant_index() != 0)
    while (!atomic_load(&w->exec->lanes[0].finish[0].caller_parked)) sched_yield();
  return 0;
}

static uint64_t never_preempted(void) { return 0; }

static void *wait_once_for_a_running_worker(void *arg) {
  long_wait *w = arg;
  w->rc = cpuexec_parallel_for_flags(w->exec, 2, 1, w, hold_until_the_caller_parks, 0,
                                     CPUEXEC_FOR_EVERY_PARTICIPANT);
  cpuexec_executor_counters_get(w->exec, &w->c);
  return NULL;
}

static void a_caller_long_spin_is_counted(void **state) {
  (void)state;
  static const cpuexec_spin_policy spins[] = {CPUEXEC_SPIN_ADAPTIVE, CPUEXEC_SPIN_FIXED_DURATION};
  for (size_t i = 0; i < 2; i++) {
    long_wait w = {.exec = test_executor_spin(2, spins[i], spins[i] == CPUEXEC_SPIN_ADAPTIVE ? 0 : 50000)};
    assert_int_equal(cpuexec_executor_counters_enable(w.exec), 0);
    pthread_t t;
    atomic_store(&cpuexec__test_permit_preemptions, never_preempted);
    assert_int_equal(pthread_create(&t, NULL, wait_once_for_a_running_worker, &w), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    atomic_store(&cpuexec__test_permit_preemptions, NULL);
    assert_int_equal(w.rc, 0);
    assert_int_equal(w.c.caller_waits, 1);
    assert_int_equal(w.c.caller_wait_ns > 0, 1);
    /* The caller's wait parked (the worker saw it) after its long spin:
     * the adaptive plan's only; a fixed one parks after its spin. The
     * worker's own count of this region's wait is made before it ran. */
    assert_int_equal(w.c.long_spins, spins[i] == CPUEXEC_SPIN_ADAPTIVE ? 1 : 0);
    cpuexec_executor_release(w.exec);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(counters_are_zero_while_off),
      cmocka_unit_test(counters_count_a_scripted_sequence_exactly),
      cmocka_unit_test(counters_partition_calls_in_the_nested_scenario),
      cmocka_unit_test(a_caller_long_spin_is_counted),
      cmocka_unit_test(the_observer_sees_each_region_with_the_executor_id),
      cmocka_unit_test(the_descriptor_matches_its_executor_and_names_a_difference),
  };
  return cmocka_run_group_tests_name("executor counters", tests, NULL, NULL);
}
