/* Nobody waits for a worker that has not started (issue 9, executor.h):
 * a worker held before it checks in (the cpuexec__test_worker_gate hook)
 * does not stop its region; released, it runs nothing for that region and
 * the next region is correct; every index runs exactly once across many
 * regions with random holds; CPUEXEC_FOR_EVERY_PARTICIPANT keeps the strict
 * rule; counters report take-overs and late arrivals. The cadence model is
 * driven with made-up times (no clock). No test waits on time: held workers
 * wait on a condition, the test on a latch or on a counter it yields for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <cmocka.h>

#include "executor/executor_internal.h"
#include "support/test_util.h"
#include "support/rendezvous.h"

/* ---- the gate: holds chosen workers before they check in ---------------- */

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static uint64_t gate_hold_mask;   /* workers to hold (bit k), under gate_lock */
static uint32_t gate_arrived;     /* workers that reached the gate while held */
static uint64_t gate_generation;  /* random holds: a held worker waits for the next one */
static bool gate_random;
static __thread unsigned gate_seed;
/* When set, a held worker is released as soon as participant 0 of this
 * record has run a range (the strict flag test). */
typedef struct record record;
static record *gate_until_caller;
static bool caller_ran(record *r);

static void gate(struct cpuexec_executor *exec, uint32_t index) {
  (void)exec;
  pthread_mutex_lock(&gate_lock);
  if (gate_random) {
    if (gate_seed == 0) gate_seed = 0x9e3779b9u * index;
    if (rand_r(&gate_seed) % 4 == 0) {
      uint64_t g = gate_generation;
      while (gate_random && gate_generation == g) pthread_cond_wait(&gate_cond, &gate_lock);
    }
  } else if ((gate_hold_mask & (1ull << index)) && gate_until_caller) {
    record *r = gate_until_caller;
    pthread_mutex_unlock(&gate_lock);
    while (!caller_ran(r)) sched_yield();
    return;
  } else if (gate_hold_mask & (1ull << index)) {
    gate_arrived++;
    pthread_cond_broadcast(&gate_cond);
    while (gate_hold_mask & (1ull << index)) pthread_cond_wait(&gate_cond, &gate_lock);
  }
  pthread_mutex_unlock(&gate_lock);
}

static void gate_hold(uint64_t mask) {
  pthread_mutex_lock(&gate_lock);
  gate_hold_mask = mask;
  gate_arrived = 0;
  pthread_mutex_unlock(&gate_lock);
}

static void gate_wait_arrived(uint32_t n) {
  pthread_mutex_lock(&gate_lock);
  while (gate_arrived < n) pthread_cond_wait(&gate_cond, &gate_lock);
  pthread_mutex_unlock(&gate_lock);
}

static void gate_release_all(void) {
  pthread_mutex_lock(&gate_lock);
  gate_hold_mask = 0;
  gate_random = false;
  gate_until_caller = NULL;
  gate_generation++;
  pthread_cond_broadcast(&gate_cond);
  pthread_mutex_unlock(&gate_lock);
}

static int gate_setup(void **state) {
  (void)state;
  atomic_store(&cpuexec__test_worker_gate, gate);
  return 0;
}

static int gate_teardown(void **state) {
  (void)state;
  gate_release_all();
  atomic_store(&cpuexec__test_worker_gate, NULL);
  return 0;
}

/* ---- a body that records who ran what ------------------------------------ */

#define MAX_TOTAL 256

struct record {
  _Atomic uint32_t hits[MAX_TOTAL];
  _Atomic uint32_t index_of[MAX_TOTAL]; /* participant index that ran it */
  _Atomic uint64_t participants;        /* bit per participant index that ran a range */
  _Atomic uint64_t arrived;             /* rendezvous.h, when wait_for_all */
  bool wait_for_all;
  _Atomic bool caller_done;             /* participant 0 finished a range */
  uint32_t caller_waits_for_held;       /* every range first waits until this many workers are held */
};

static bool caller_ran(record *r) { return atomic_load(&r->caller_done); }
static void gate_wait_arrived(uint32_t n);

static int note(void *ctx, int64_t begin, int64_t end) {
  record *r = ctx;
  if (r->wait_for_all) test_rendezvous(&r->arrived);
  uint32_t p = cpuexec_participant_index();
  /* The held workers have seen their region open and wait at the gate,
   * before checking in: when this range ends, they are late for sure (no
   * running participant can take their share before they got there). */
  if (r->caller_waits_for_held) gate_wait_arrived(r->caller_waits_for_held);
  for (int64_t i = begin; i < end; i++) {
    atomic_fetch_add(&r->hits[i], 1);
    atomic_store(&r->index_of[i], p);
  }
  atomic_fetch_or(&r->participants, 1ull << p);
  if (p == 0) atomic_store(&r->caller_done, true);
  return 0;
}

static void assert_each_once(record *r, int64_t total) {
  for (int64_t i = 0; i < MAX_TOTAL; i++) {
    uint32_t want = i < total ? 1 : 0;
    if (atomic_load(&r->hits[i]) != want)
      fail_msg("index %lld ran %u times, expected %u", (long long)i, atomic_load(&r->hits[i]), want);
  }
}

static void counters_of(cpuexec_executor *exec, cpuexec_counters *c) {
  assert_int_equal(cpuexec_executor_counters_get(exec, c), 0);
}

/* Yields until worker arrivals reach n: the worker counts one as soon as it
 * has seen its region taken (a condition, not a time). */
static void wait_late_arrivals(cpuexec_executor *exec, uint64_t n) {
  cpuexec_counters c;
  for (counters_of(exec, &c); c.late_arrivals < n; counters_of(exec, &c)) sched_yield();
  assert_int_equal(c.late_arrivals, n);
}

/* ---- the tests ----------------------------------------------------------- */

static void a_held_worker_does_not_stop_the_region_and_runs_nothing_for_it(void **state) {
  (void)state;
  static const cpuexec_spin_policy spins[] = {CPUEXEC_SPIN_ADAPTIVE, CPUEXEC_SPIN_PARK_IMMEDIATELY,
                                              CPUEXEC_SPIN_FIXED_DURATION};
  for (size_t sp = 0; sp < sizeof spins / sizeof spins[0]; sp++) {
    cpuexec_executor *exec = test_executor_spin(2, spins[sp], 20ull * 1000 * 1000);
    assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
    gate_hold(1u << 1);
    static record r;
    memset(&r, 0, sizeof r);
    r.caller_waits_for_held = 1;
    /* Completes while worker 1 is held at the gate. */
    assert_int_equal(cpuexec_parallel_for(exec, 2, 1, &r, note, 0), 0);
    assert_each_once(&r, 2);
    assert_int_equal(atomic_load(&r.participants), 1u); /* the caller ran both */
    assert_int_equal(atomic_load(&r.index_of[1]), 0);
    cpuexec_counters c;
    counters_of(exec, &c);
    assert_int_equal(c.takeovers, 1);
    /* Released, the worker finds its share gone and leaves: it ran nothing
     * for that region. */
    gate_release_all();
    wait_late_arrivals(exec, 1);
    assert_each_once(&r, 2);
    assert_int_equal(atomic_load(&r.participants), 1u);
    /* The next region is correct, and with shares that outlast the wake-up
     * both participants run. */
    memset(&r, 0, sizeof r);
    r.wait_for_all = true;
    assert_int_equal(cpuexec_parallel_for(exec, 2, 1, &r, note, 0), 0);
    assert_each_once(&r, 2);
    assert_int_equal(atomic_load(&r.participants), 3u);
    assert_int_equal(atomic_load(&r.index_of[1]), 1);
    counters_of(exec, &c);
    assert_int_equal(c.takeovers, 1);
    cpuexec_executor_release(exec);
  }
}

static void a_held_worker_among_many_costs_only_its_share(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor_spin(4, CPUEXEC_SPIN_PARK_IMMEDIATELY, 0);
  assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
  gate_hold((1u << 2) | (1u << 3));
  static record r;
  memset(&r, 0, sizeof r);
  r.caller_waits_for_held = 2;
  assert_int_equal(cpuexec_parallel_for(exec, 200, 3, &r, note, 0), 0);
  assert_each_once(&r, 200);
  /* Workers 2 and 3 ran nothing; their reserved chunks were taken (and
   * worker 1's too when it had not woken by then: it is not held). */
  assert_int_equal(atomic_load(&r.participants) & 0xcu, 0);
  cpuexec_counters c;
  counters_of(exec, &c);
  assert_true(c.takeovers == 2 || c.takeovers == 3);
  assert_int_equal(c.takeovers == 3, (atomic_load(&r.participants) & 0x2u) == 0);
  gate_release_all();
  /* Every worker whose share was taken arrives late, once. */
  wait_late_arrivals(exec, c.takeovers);
  assert_each_once(&r, 200);
  assert_int_equal(atomic_load(&r.participants) & 0xcu, 0);
  cpuexec_executor_release(exec);
}

static void every_index_runs_once_across_100k_regions_with_random_holds(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(4);
  assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
  pthread_mutex_lock(&gate_lock);
  gate_random = true;
  pthread_mutex_unlock(&gate_lock);
  static record r;
  unsigned seed = 12345;
  for (int region = 0; region < 100000; region++) {
    int64_t total = 1 + rand_r(&seed) % 64, grain = 1 + rand_r(&seed) % 4;
    uint32_t limit = (uint32_t)(rand_r(&seed) % 5);
    for (int64_t i = 0; i < total; i++) atomic_store_explicit(&r.hits[i], 0, memory_order_relaxed);
    assert_int_equal(cpuexec_parallel_for(exec, total, grain, &r, note, limit), 0);
    for (int64_t i = 0; i < total; i++)
      if (atomic_load_explicit(&r.hits[i], memory_order_relaxed) != 1)
        fail_msg("region %d (total %lld grain %lld limit %u): index %lld ran %u times", region, (long long)total,
                 (long long)grain, limit, (long long)i, atomic_load(&r.hits[i]));
    /* Held workers wait for the next generation, so each is released once
     * its region has returned. */
    pthread_mutex_lock(&gate_lock);
    gate_generation++;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
  }
  gate_release_all();
  cpuexec_counters c;
  counters_of(exec, &c);
  /* Holds happen, so take-overs did: the counter says so. */
  assert_true(c.takeovers > 0);
  cpuexec_executor_release(exec);
}

static void the_strict_flag_makes_every_admitted_participant_run_a_range(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor_spin(4, CPUEXEC_SPIN_PARK_IMMEDIATELY, 0);
  assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
  for (int round = 0; round < 50; round++) {
    static record r;
    memset(&r, 0, sizeof r);
    /* Empty bodies, and worker 3 held until the caller has run its range:
     * still every admitted participant runs its own. */
    gate_hold(1u << 3);
    pthread_mutex_lock(&gate_lock);
    gate_until_caller = &r;
    pthread_mutex_unlock(&gate_lock);
    int rc = cpuexec_parallel_for_flags(exec, 4, 1, &r, note, 0, CPUEXEC_FOR_EVERY_PARTICIPANT);
    assert_int_equal(rc, 0);
    assert_each_once(&r, 4);
    assert_int_equal(atomic_load(&r.participants), 0xfu);
    for (uint32_t i = 0; i < 4; i++) assert_int_equal(atomic_load(&r.index_of[i]), i);
  }
  cpuexec_counters c;
  counters_of(exec, &c);
  assert_int_equal(c.takeovers, 0);
  assert_int_equal(c.late_arrivals, 0);
  gate_release_all();
  cpuexec_executor_release(exec);
}

static void unknown_flags_are_rejected_naming_them(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  static record r;
  memset(&r, 0, sizeof r);
  assert_int_equal(cpuexec_parallel_for_flags(exec, 2, 1, &r, note, 0, 0x6u), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "flags"));
  assert_int_equal(atomic_load(&r.hits[0]), 0);
  assert_int_equal(cpuexec_parallel_for_flags(NULL, 2, 1, &r, note, 0, CPUEXEC_FOR_EVERY_PARTICIPANT), 0);
  assert_each_once(&r, 2);
  cpuexec_executor_release(exec);
}

/* ---- the cadence model, with made-up times -------------------------------- */

static void the_cadence_is_followed_once_steady_and_dropped_when_the_stream_stops(void **state) {
  (void)state;
  const uint64_t ms = 1000000;
  uint64_t t = 5000 * ms;
  static cpuexec__cadence c;
  memset(&c, 0, sizeof c);
  c.burn_permille = CPUEXEC__CADENCE_BURN_PERMILLE;
  cpuexec__cadence_hint h;
  /* 1 ms apart, 4 us of jitter: followed after CPUEXEC__CADENCE_STEADY. */
  for (uint32_t i = 0; i <= CPUEXEC__CADENCE_STEADY; i++) {
    h = cpuexec__cadence_note(&c, t);
    assert_int_equal(h.expect_ns, 0);
    assert_int_equal(atomic_load(&c.shown_window_ns), 0);
    t += ms + (i % 2 ? 4000 : 0);
  }
  h = cpuexec__cadence_note(&c, t);
  assert_true(h.expect_ns > t + ms - 10000 && h.expect_ns < t + ms + 10000);
  assert_true(h.window_ns >= CPUEXEC__CADENCE_MIN_WINDOW_NS);
  /* The window's spin stays inside the burn budget. */
  assert_true((2 * h.window_ns + CPUEXEC__CADENCE_WAKE_LEAD_NS) * 1000 <= ms * CPUEXEC__CADENCE_BURN_PERMILLE + 20000);
  /* What cpuexec_executor_spin_state_get shows. */
  assert_int_equal(atomic_load(&c.shown_window_ns), h.window_ns);
  assert_true(atomic_load(&c.shown_period_ns) > ms - 10000 && atomic_load(&c.shown_period_ns) < ms + 10000);
  assert_true(atomic_load(&c.shown_steady) >= CPUEXEC__CADENCE_STEADY);
  /* One late region is forgiven: the next is expected a period after it. */
  t += 3 * ms;
  h = cpuexec__cadence_note(&c, t);
  assert_true(h.expect_ns > t + ms - 10000 && h.expect_ns < t + ms + 10000);
  /* The stream stops: after a second long gap nothing is predicted. */
  t += 900 * ms;
  h = cpuexec__cadence_note(&c, t);
  assert_int_equal(h.expect_ns, 0);
  assert_int_equal(atomic_load(&c.shown_window_ns), 0);
  assert_int_equal(atomic_load(&c.shown_steady), 0);
  /* A new cadence is learnt from scratch (its first period starts over). */
  for (uint32_t i = 0; i < CPUEXEC__CADENCE_STEADY; i++) {
    t += 10 * ms;
    h = cpuexec__cadence_note(&c, t);
    assert_int_equal(h.expect_ns, 0);
  }
  t += 10 * ms;
  h = cpuexec__cadence_note(&c, t);
  assert_int_equal(h.expect_ns, t + 10 * ms);
}

static void a_cadence_too_fast_for_the_budget_or_without_a_budget_is_not_followed(void **state) {
  (void)state;
  static cpuexec__cadence c;
  memset(&c, 0, sizeof c);
  c.burn_permille = CPUEXEC__CADENCE_BURN_PERMILLE;
  uint64_t t = 1000000000;
  cpuexec__cadence_hint h = {0, 0};
  /* Every 20 us: the plain spin after each region covers it; a window
   * would cost more than the budget allows. */
  for (int i = 0; i < 20; i++, t += 20000) h = cpuexec__cadence_note(&c, t);
  assert_int_equal(h.expect_ns, 0);
  /* No budget (a policy other than adaptive): never followed. */
  memset(&c, 0, sizeof c);
  for (int i = 0; i < 20; i++, t += 1000000) h = cpuexec__cadence_note(&c, t);
  assert_int_equal(h.expect_ns, 0);
}

static void the_spin_state_shows_the_policy(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  cpuexec_spin_state st;
  assert_int_equal(cpuexec_executor_spin_state_get(exec, &st), 0);
  assert_true(st.follows_cadence);
  assert_int_equal(st.burn_permille, CPUEXEC__CADENCE_BURN_PERMILLE);
  assert_int_equal(st.spin_ns, CPUEXEC__ADAPTIVE_SPIN_NS);
  cpuexec_executor_release(exec);
  exec = test_executor_spin(2, CPUEXEC_SPIN_FIXED_DURATION, 50000);
  assert_int_equal(cpuexec_executor_spin_state_get(exec, &st), 0);
  assert_false(st.follows_cadence);
  assert_false(st.following);
  assert_int_equal(st.spin_ns, 50000);
  cpuexec_executor_release(exec);
  exec = test_executor_spin(2, CPUEXEC_SPIN_FIXED_ITERATIONS, 777);
  assert_int_equal(cpuexec_executor_spin_state_get(exec, &st), 0);
  assert_int_equal(st.spin_iterations, 777);
  assert_false(st.follows_cadence);
  cpuexec_executor_release(exec);
  assert_int_equal(cpuexec_executor_spin_state_get(NULL, &st), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "exec"));
}

/* A worker's long spin (wait.c): a worker whose share was taken over
 * spins on past its plan's spin while its caller still runs that region,
 * then parks. In region 1 the caller's first range waits until the worker
 * saw the region open (at the gate, before it checks in), and the gate
 * holds the worker until its share is taken; the caller then runs the
 * worker's range, which waits until the worker parked: so the worker went
 * through its spin, its long spin (never preempted, as the permit model's
 * fake preemption count has it, it is never crowded lately) and its park.
 * Region 2 wakes it, and it counts that wait as it joins. */
static _Atomic bool hold_once, at_the_gate, held_then_released;

static uint64_t never_preempted(void) { return 0; }

static void hold_until_taken(struct cpuexec_executor *exec, uint32_t index) {
  if (!atomic_exchange(&hold_once, false)) return;
  atomic_store(&at_the_gate, true);
  while (cpuexec__epoch_open(atomic_load(&exec->slots[index].epoch))) sched_yield();
  atomic_store(&held_then_released, true);
}

static int wait_until_the_worker_parks(void *ctx, int64_t begin, int64_t end) {
  cpuexec_executor *exec = ctx;
  (void)end;
  if (begin == 0) { /* the caller's own range: the worker has seen the region */
    while (!atomic_load(&at_the_gate)) sched_yield();
  } else { /* worker 1's reserved range, taken by the caller */
    while (!atomic_load(&held_then_released)) sched_yield();
    while (!atomic_load(&exec->slots[1].parked)) sched_yield();
  }
  return 0;
}

static int run_nothing(void *ctx, int64_t begin, int64_t end) {
  (void)ctx, (void)begin, (void)end;
  return 0;
}

static void a_late_worker_long_spin_is_counted(void **state) {
  (void)state;
  static const cpuexec_spin_policy spins[] = {CPUEXEC_SPIN_ADAPTIVE, CPUEXEC_SPIN_FIXED_DURATION};
  for (size_t i = 0; i < 2; i++) {
    cpuexec_executor *exec = test_executor_spin(2, spins[i], spins[i] == CPUEXEC_SPIN_ADAPTIVE ? 0 : 50000);
    assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
    atomic_store(&at_the_gate, false);
    atomic_store(&held_then_released, false);
    atomic_store(&hold_once, true);
    atomic_store(&cpuexec__test_permit_preemptions, never_preempted);
    atomic_store(&cpuexec__test_worker_gate, hold_until_taken);
    assert_int_equal(cpuexec_parallel_for(exec, 2, 1, exec, wait_until_the_worker_parks, 0), 0);
    atomic_store(&cpuexec__test_worker_gate, NULL);
    atomic_store(&cpuexec__test_permit_preemptions, NULL);
    assert_true(atomic_load(&held_then_released));
    assert_int_equal(cpuexec_parallel_for_flags(exec, 2, 1, NULL, run_nothing, 0, CPUEXEC_FOR_EVERY_PARTICIPANT), 0);
    cpuexec_counters c;
    counters_of(exec, &c);
    assert_int_equal(c.takeovers, 1);
    /* Counted by the worker: the caller's waits are its own business. */
    assert_int_equal(atomic_load(&cpuexec__counters_of(exec)->workers.long_spins),
                     spins[i] == CPUEXEC_SPIN_ADAPTIVE ? 1 : 0);
    cpuexec_executor_release(exec);
  }
}

/* No long spin once the region a worker missed has ended (wait.c): the
 * caller's first range waits until the worker saw the region open (at the
 * gate), and the gate holds the worker until its share is taken and the
 * caller left the region, so when its plan's spin runs out nothing runs
 * that would move its epoch; never preempted (the permit model's fake
 * count), only that keeps it from the long spin. No wait teaches it a gap
 * spin (permit.h): under ThreadSanitizer the wait before region 1 often
 * parks and is woken soon after, and the worker would then spin through
 * the next gap, rightly counted. The test waits until the
 * worker parked and takes the count then (whatever the wait before region
 * 1 counted is in it: under ThreadSanitizer that wait can meet the caller
 * inside region 1 and spin long, as it should). Region 2, which every
 * participant joins, wakes the worker; it counts the wait it ends as it
 * joins, so the count is complete when the caller returns (the wait after
 * region 2 is counted only when a region ends it), and it must not have
 * moved. */
static void hold_until_the_region_ended(struct cpuexec_executor *exec, uint32_t index) {
  if (!atomic_exchange(&hold_once, false)) return;
  atomic_store(&at_the_gate, true);
  while (cpuexec__epoch_open(atomic_load(&exec->slots[index].epoch))) sched_yield();
  while (atomic_load(&exec->lane0_running)) sched_yield();
  atomic_store(&held_then_released, true);
}

static int wait_at_the_gate(void *ctx, int64_t begin, int64_t end) {
  (void)ctx, (void)end;
  if (begin == 0)
    while (!atomic_load(&at_the_gate)) sched_yield();
  return 0;
}

static void a_late_worker_spins_no_longer_once_the_region_ended(void **state) {
  (void)state;
  atomic_store(&cpuexec__test_permit_no_gap_lessons, true);
  cpuexec_executor *exec = test_executor_spin(2, CPUEXEC_SPIN_ADAPTIVE, 0);
  assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
  atomic_store(&at_the_gate, false);
  atomic_store(&held_then_released, false);
  atomic_store(&hold_once, true);
  atomic_store(&cpuexec__test_permit_preemptions, never_preempted);
  atomic_store(&cpuexec__test_worker_gate, hold_until_the_region_ended);
  assert_int_equal(cpuexec_parallel_for(exec, 2, 1, NULL, wait_at_the_gate, 0), 0);
  while (!atomic_load(&held_then_released)) sched_yield();
  while (!atomic_load(&exec->slots[1].parked)) sched_yield();
  atomic_store(&cpuexec__test_worker_gate, NULL);
  uint64_t before = atomic_load(&cpuexec__counters_of(exec)->workers.long_spins);
  assert_int_equal(cpuexec_parallel_for_flags(exec, 2, 1, NULL, run_nothing, 0, CPUEXEC_FOR_EVERY_PARTICIPANT), 0);
  atomic_store(&cpuexec__test_permit_preemptions, NULL);
  cpuexec_counters c;
  counters_of(exec, &c);
  assert_int_equal(c.takeovers, 1);
  assert_int_equal(atomic_load(&cpuexec__counters_of(exec)->workers.long_spins), before);
  cpuexec_executor_release(exec);
  atomic_store(&cpuexec__test_permit_no_gap_lessons, false);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(a_held_worker_does_not_stop_the_region_and_runs_nothing_for_it, gate_setup,
                                      gate_teardown),
      cmocka_unit_test_setup_teardown(a_held_worker_among_many_costs_only_its_share, gate_setup, gate_teardown),
      cmocka_unit_test_setup_teardown(every_index_runs_once_across_100k_regions_with_random_holds, gate_setup,
                                      gate_teardown),
      cmocka_unit_test_setup_teardown(the_strict_flag_makes_every_admitted_participant_run_a_range, gate_setup,
                                      gate_teardown),
      cmocka_unit_test(unknown_flags_are_rejected_naming_them),
      cmocka_unit_test(the_cadence_is_followed_once_steady_and_dropped_when_the_stream_stops),
      cmocka_unit_test(a_cadence_too_fast_for_the_budget_or_without_a_budget_is_not_followed),
      cmocka_unit_test(the_spin_state_shows_the_policy),
      cmocka_unit_test(a_late_worker_long_spin_is_counted),
      cmocka_unit_test(a_late_worker_spins_no_longer_once_the_region_ended),
  };
  return cmocka_run_group_tests_name("executor take-overs and cadence", tests, NULL, NULL);
}
