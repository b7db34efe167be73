/* The permit model (src/executor/permit.h): each rule fed the facts it
 * reads — a made-up executor's threads and processors, callers arriving
 * beside each other, a fake clock and fake preemption counts — so each
 * test fails when its rule is broken, on any machine. The rules are
 * checked at the sizes a big machine has (16, 64, 128 threads) as well as
 * at this one's. */
#include "support/test_util.h"

#include <stdint.h>

#include "executor/permit.h"

static cpuexec__permit facts(uint32_t threads, uint32_t processors) {
  cpuexec__permit p;
  memset(&p, 0, sizeof p);
  cpuexec__permit_init(&p, threads, processors);
  p.adaptive = true;
  return p;
}

static void arrive(cpuexec__permit *p, uint32_t callers) {
  for (uint32_t i = 0; i < callers; i++) cpuexec__permit_caller_arrives(p);
}

/* ---- the one predicate, and spinning at all ---------------------------- */

static void oversubscribed_means_more_runnable_than_processors(void **state) {
  (void)state;
  assert_false(cpuexec__permit_oversubscribed(2, 2));
  assert_true(cpuexec__permit_oversubscribed(3, 2));
  assert_false(cpuexec__permit_oversubscribed(64, 128));
  assert_true(cpuexec__permit_oversubscribed(129, 128));
  assert_false(cpuexec__permit_oversubscribed(1000, 0)); /* processors unknown: never */
}

static void an_adaptive_executor_wider_than_the_machine_parks_at_once(void **state) {
  (void)state;
  assert_true(cpuexec__permit_adaptive_spins(2, 2, true));
  assert_false(cpuexec__permit_adaptive_spins(4, 2, true));
  assert_false(cpuexec__permit_adaptive_spins(65, 64, true));
  assert_true(cpuexec__permit_adaptive_spins(4, 2, false)); /* the resolution said keep spinning */
  assert_true(cpuexec__permit_adaptive_spins(4, 0, true));  /* processors unknown */
}

/* ---- the occupancy cap and standing aside ------------------------------- */

static void a_region_beside_callers_admits_what_their_threads_leave(void **state) {
  (void)state;
  cpuexec__permit p = facts(4, 4);
  assert_int_equal(cpuexec__permit_region_admits(&p, 4), 4); /* alone: all it asks */
  arrive(&p, 1);
  assert_int_equal(cpuexec__permit_region_admits(&p, 4), 3);
  assert_int_equal(cpuexec__permit_region_admits(&p, 2), 2); /* never more than asked */
  arrive(&p, 2);
  assert_int_equal(cpuexec__permit_region_admits(&p, 4), 1); /* three beside: it runs alone */
  arrive(&p, 5);
  assert_int_equal(cpuexec__permit_region_admits(&p, 4), 1); /* more callers than threads: alone */
  cpuexec__permit_caller_leaves(&p);
  assert_int_equal(cpuexec__permit_side_callers(&p), 7);

  cpuexec__permit big = facts(64, 64);
  arrive(&big, 8);
  assert_int_equal(cpuexec__permit_region_admits(&big, 64), 56);
}

static void workers_beyond_what_the_callers_leave_stand_aside(void **state) {
  (void)state;
  cpuexec__permit p = facts(4, 4);
  for (uint32_t k = 1; k < 4; k++) assert_false(cpuexec__permit_stands_aside(&p, k)); /* nobody beside */
  arrive(&p, 1);
  assert_false(cpuexec__permit_stands_aside(&p, 1));
  assert_false(cpuexec__permit_stands_aside(&p, 2));
  assert_true(cpuexec__permit_stands_aside(&p, 3)); /* 3 + 1 + 1 > 4 */
  /* A strict region keeps its team. */
  atomic_store(&p.strict_running, 1);
  assert_false(cpuexec__permit_stands_aside(&p, 3));
  atomic_store(&p.strict_running, 0);
  cpuexec__permit strict = facts(4, 4);
  strict.strict_policy = true;
  arrive(&strict, 3);
  assert_false(cpuexec__permit_stands_aside(&strict, 3));

  cpuexec__permit big = facts(128, 128);
  arrive(&big, 8);
  assert_false(cpuexec__permit_stands_aside(&big, 119));
  assert_true(cpuexec__permit_stands_aside(&big, 120));
}

/* The model's clock and preemption count, as a test sets them. */
static _Atomic uint64_t fake_clock, fake_preemptions;
static uint64_t read_fake_clock(void) { return atomic_load(&fake_clock); }
static uint64_t read_fake_preemptions(void) { return atomic_load(&fake_preemptions); }

/* The model reads the fake clock, standing at `ns` until the test moves it;
 * a test that calls it puts the real clock back at its end. */
static void use_fake_clock(uint64_t ns) {
  atomic_store(&cpuexec__test_permit_clock, read_fake_clock);
  atomic_store(&fake_clock, ns);
}

/* ---- the settle ---------------------------------------------------------- */

/* On the fake clock, standing still unless the test moves it. */
static void a_worker_that_saw_callers_meet_parks_at_once_for_a_while(void **state) {
  (void)state;
  use_fake_clock(7000000u);
  cpuexec__permit p = facts(2, 2);
  cpuexec__permit_worker w;
  memset(&w, 0, sizeof w);
  assert_true(cpuexec__permit_worker_spins(&p, &w, false));
  assert_false(cpuexec__permit_worker_spins(&p, &w, true)); /* standing aside: never */
  arrive(&p, 1);
  cpuexec__permit_caller_leaves(&p); /* gone again: the arrival is what counts */
  for (uint32_t r = 0; r < CPUEXEC__UNSETTLED_REGIONS; r++) assert_false(cpuexec__permit_worker_spins(&p, &w, false));
  assert_true(cpuexec__permit_worker_spins(&p, &w, false));
  /* A new arrival starts it over; serving a task group settles it. */
  arrive(&p, 1);
  assert_false(cpuexec__permit_worker_spins(&p, &w, false));
  cpuexec__permit_worker_settled(&w);
  assert_true(cpuexec__permit_worker_spins(&p, &w, false));
  /* A quiet spell ends it early: callers that have not met for
   * CPUEXEC__UNSETTLED_NS are not meeting now. Just short of it, the
   * count goes on. */
  arrive(&p, 1);
  assert_false(cpuexec__permit_worker_spins(&p, &w, false));
  atomic_store(&fake_clock, 7000000u + CPUEXEC__UNSETTLED_NS - 1);
  assert_false(cpuexec__permit_worker_spins(&p, &w, false));
  atomic_store(&fake_clock, 7000000u + CPUEXEC__UNSETTLED_NS);
  assert_true(cpuexec__permit_worker_spins(&p, &w, false));
  /* Meetings that keep coming keep it settled, however long they last. */
  for (uint32_t r = 0; r < 4 * CPUEXEC__UNSETTLED_REGIONS; r++) {
    atomic_fetch_add(&fake_clock, CPUEXEC__UNSETTLED_NS / 4);
    if (r % 2 == 0) arrive(&p, 1);
    assert_false(cpuexec__permit_worker_spins(&p, &w, false));
  }
  atomic_store(&cpuexec__test_permit_clock, NULL);
}

/* ---- the crowd ----------------------------------------------------------- */

static void a_caller_among_more_callers_than_threads_takes_turns(void **state) {
  (void)state;
  cpuexec__permit p = facts(2, 2);
  assert_false(cpuexec__permit_caller_crowded(&p, 2));
  assert_true(cpuexec__permit_caller_crowded(&p, 3));
  cpuexec__permit big = facts(64, 64);
  assert_false(cpuexec__permit_caller_crowded(&big, 8));

  assert_int_equal(cpuexec__permit_crowd_step(1000, 1), 63); /* ceil(1000 / 16) */
  assert_int_equal(cpuexec__permit_crowd_step(10, 1), 1);    /* fewer chunks than pieces: one each */
  assert_int_equal(cpuexec__permit_crowd_step(1000, 100), 100);
  int64_t step = cpuexec__permit_crowd_step(INT64_MAX, 1); /* no sum that overflows */
  assert_true(step > 0 && step >= INT64_MAX / CPUEXEC__CROWD_PIECES);

  assert_false(cpuexec__permit_crowd_yields(5000 + CPUEXEC__CROWD_SLICE_NS - 1, 5000));
  assert_true(cpuexec__permit_crowd_yields(5000 + CPUEXEC__CROWD_SLICE_NS, 5000));

  /* The turn: after any piece once the slice passed, but among several
   * processes' callers never after the region's last piece. */
  uint64_t passed = 5000 + CPUEXEC__CROWD_SLICE_NS, within = passed - 1;
  assert_true(cpuexec__permit_crowd_turns(passed, 5000, false, false));
  assert_true(cpuexec__permit_crowd_turns(passed, 5000, true, false));
  assert_true(cpuexec__permit_crowd_turns(passed, 5000, false, true));
  assert_false(cpuexec__permit_crowd_turns(passed, 5000, true, true));
  assert_false(cpuexec__permit_crowd_turns(within, 5000, false, false));
  assert_false(cpuexec__permit_crowd_turns(within, 5000, false, true));
}

static void a_crowded_caller_alone_on_its_processor_rests(void **state) {
  (void)state;
  uint32_t alone = 0;
  /* A yield that let another thread run: no rest, ever. */
  for (int i = 0; i < 10; i++) assert_false(cpuexec__permit_crowd_rests(&alone, CPUEXEC__CROWD_ALONE_NS));
  /* Yields that found nobody: the rest comes at the CPUEXEC__CROWD_ALONE_YIELDS-th in a row ... */
  for (uint32_t i = 1; i < CPUEXEC__CROWD_ALONE_YIELDS; i++)
    assert_false(cpuexec__permit_crowd_rests(&alone, CPUEXEC__CROWD_ALONE_NS - 1));
  assert_true(cpuexec__permit_crowd_rests(&alone, 0));
  /* ... and the count starts again after it. */
  assert_int_equal(alone, 0);
  for (uint32_t i = 1; i < CPUEXEC__CROWD_ALONE_YIELDS; i++) assert_false(cpuexec__permit_crowd_rests(&alone, 0));
  /* A neighbour that ran in between breaks the row: one that only blocked
   * for a moment is not a queue elsewhere. */
  assert_false(cpuexec__permit_crowd_rests(&alone, CPUEXEC__CROWD_SLICE_NS));
  for (uint32_t i = 1; i < CPUEXEC__CROWD_ALONE_YIELDS; i++) assert_false(cpuexec__permit_crowd_rests(&alone, 0));
  assert_true(cpuexec__permit_crowd_rests(&alone, 0));
}

static void a_crowded_caller_on_a_processor_two_fuller_moves(void **state) {
  (void)state;
  uint32_t looks = 0;
  /* As even as they can be: 2 and 2, 2 and 1, 1 and 0, at any count of turns. */
  uint32_t even[][2] = {{2, 2}, {2, 1}, {1, 0}, {1, 1}, {64, 63}};
  for (size_t k = 0; k < sizeof even / sizeof even[0]; k++)
    for (uint32_t i = 0; i < 2 * CPUEXEC__CROWD_UNEVEN_LOOKS; i++)
      assert_false(cpuexec__permit_crowd_moves(&looks, even[k][0], even[k][1]));
  /* The caller's processor unknown: never. */
  for (uint32_t i = 0; i < 2 * CPUEXEC__CROWD_UNEVEN_LOOKS; i++) assert_false(cpuexec__permit_crowd_moves(&looks, 0, 0));
  /* 3 and 1 (four callers on two processors), 2 and 0, 66 and 64: the move
   * comes at the CPUEXEC__CROWD_UNEVEN_LOOKS-th look in a row ... */
  uint32_t uneven[][2] = {{3, 1}, {2, 0}, {66, 64}};
  for (size_t k = 0; k < sizeof uneven / sizeof uneven[0]; k++) {
    for (uint32_t i = 1; i < CPUEXEC__CROWD_UNEVEN_LOOKS; i++)
      assert_false(cpuexec__permit_crowd_moves(&looks, uneven[k][0], uneven[k][1]));
    assert_true(cpuexec__permit_crowd_moves(&looks, uneven[k][0], uneven[k][1]));
    /* ... and the count starts again after it. */
    assert_int_equal(looks, 0);
  }
  /* An even look between breaks the row: the counts were a turn old. */
  for (uint32_t i = 1; i < CPUEXEC__CROWD_UNEVEN_LOOKS; i++) assert_false(cpuexec__permit_crowd_moves(&looks, 3, 1));
  assert_false(cpuexec__permit_crowd_moves(&looks, 2, 2));
  for (uint32_t i = 1; i < CPUEXEC__CROWD_UNEVEN_LOOKS; i++) assert_false(cpuexec__permit_crowd_moves(&looks, 3, 1));
  assert_true(cpuexec__permit_crowd_moves(&looks, 3, 1));
}

/* The node level: callers of a process's other pools that met lately
 * count as running between their regions (their serial work is invisible)
 * until they have not met for CPUEXEC__UNSETTLED_NS. */
static void callers_of_other_pools_that_met_lately_count_as_running(void **state) {
  (void)state;
  uint64_t t = 5000000000u;
  /* Inside now: counted, met or not. */
  assert_int_equal(cpuexec__node_others_running(3, 0, 0, t), 3);
  assert_int_equal(cpuexec__node_others_running(2, 1, t - 1000, t), 2);
  /* None inside, never met: none. */
  assert_int_equal(cpuexec__node_others_running(0, 0, 0, t), 0);
  assert_int_equal(cpuexec__node_others_running(0, 2, 0, t), 0);
  /* None or fewer inside, met lately: those that met. */
  assert_int_equal(cpuexec__node_others_running(0, 1, t - 1000, t), 1);
  assert_int_equal(cpuexec__node_others_running(0, 3, t - (CPUEXEC__UNSETTLED_NS - 1), t), 3);
  assert_int_equal(cpuexec__node_others_running(1, 3, t, t), 3);
  /* Not met for the window: only those inside. */
  assert_int_equal(cpuexec__node_others_running(0, 3, t - CPUEXEC__UNSETTLED_NS, t), 0);
  assert_int_equal(cpuexec__node_others_running(1, 3, t - 2 * CPUEXEC__UNSETTLED_NS, t), 1);
}

/* ---- stepping off a processor -------------------------------------------- */

static void a_free_caller_on_a_pinned_workers_processor_steps_off(void **state) {
  (void)state;
  cpuexec__permit p = facts(2, 2);
  p.first_worker_cpu = 1;
  assert_true(cpuexec__permit_caller_on_worker_cpu(&p, 1));
  assert_false(cpuexec__permit_caller_on_worker_cpu(&p, 0));
  assert_false(cpuexec__permit_caller_on_worker_cpu(&p, -1)); /* where it runs is unknown */
  p.placed_caller = true;
  assert_false(cpuexec__permit_caller_on_worker_cpu(&p, 1)); /* the policy placed it there */
  p.placed_caller = false;
  p.adaptive = false;
  assert_false(cpuexec__permit_caller_on_worker_cpu(&p, 1)); /* a fixed policy spins as asked */
  cpuexec__permit floating = facts(2, 2);
  assert_false(cpuexec__permit_caller_on_worker_cpu(&floating, -1));
}

/* The count: woken by the caller, the worker missed CPUEXEC__STUCK_MISSES
 * regions in a row without seeing a single one. */
static void a_woken_worker_missing_regions_it_never_saw_is_stuck(void **state) {
  (void)state;
  cpuexec__permit_misses m;
  memset(&m, 0, sizeof m);
  m.seen_at_wake = 4;                                   /* woken when it had seen 4 */
  assert_false(cpuexec__permit_worker_stuck(&m, 5));    /* it ran a moment: saw one, missed it */
  for (uint32_t k = 1; k < CPUEXEC__STUCK_MISSES; k++)
    assert_false(cpuexec__permit_worker_stuck(&m, 5));  /* unseen misses, not yet enough */
  assert_true(cpuexec__permit_worker_stuck(&m, 5));     /* the threshold */
  assert_false(cpuexec__permit_worker_stuck(&m, 5));    /* counted again from there */
  /* A worker that saw regions since its wake, or a slow one that sees
   * every region it misses, is not stuck. */
  for (uint32_t k = 0; k < 4 * CPUEXEC__STUCK_MISSES; k++) assert_false(cpuexec__permit_worker_stuck(&m, 7));
  for (uint32_t k = 0; k < 4 * CPUEXEC__STUCK_MISSES; k++) assert_false(cpuexec__permit_worker_stuck(&m, 100 + k));
}

/* Beside its caller: only a floating worker on the processor its caller
 * opened the region on, with no more threads than processors, and no
 * other caller of the process running or met lately. */
static void a_floating_worker_on_its_callers_processor_steps_off(void **state) {
  (void)state;
  use_fake_clock(7000000u);
  cpuexec__permit p = facts(2, 2);
  cpuexec__permit_worker w;
  memset(&w, 0, sizeof w);
  assert_true(cpuexec__permit_worker_steps_off(&p, &w, 1, 1));
  assert_false(cpuexec__permit_worker_steps_off(&p, &w, 0, 1));   /* apart already */
  assert_false(cpuexec__permit_worker_steps_off(&p, &w, -1, -1)); /* where they run is unknown */
  p.first_worker_cpu = 1;
  assert_false(cpuexec__permit_worker_steps_off(&p, &w, 1, 1)); /* pinned: the caller moves instead */
  p.first_worker_cpu = -1;
  arrive(&p, 1); /* a caller beside lane 0's: the other processor is its */
  assert_false(cpuexec__permit_worker_steps_off(&p, &w, 1, 1));
  cpuexec__permit_caller_leaves(&p);
  (void)cpuexec__permit_worker_spins(&p, &w, false); /* the worker saw them meet: unsettled */
  assert_false(cpuexec__permit_worker_steps_off(&p, &w, 1, 1));
  atomic_store(&fake_clock, 7000000u + CPUEXEC__UNSETTLED_NS); /* a quiet spell, before its next wait */
  assert_true(cpuexec__permit_worker_steps_off(&p, &w, 1, 1));
  atomic_store(&fake_clock, 7000000u);
  cpuexec__permit_worker_settled(&w);
  assert_true(cpuexec__permit_worker_steps_off(&p, &w, 1, 1));
  cpuexec__permit crowded = facts(4, 2);
  assert_false(cpuexec__permit_worker_steps_off(&crowded, &w, 1, 1)); /* more threads than processors */
  cpuexec__permit big = facts(64, 128);
  assert_true(cpuexec__permit_worker_steps_off(&big, &w, 37, 37));
  atomic_store(&cpuexec__test_permit_clock, NULL);
}

/* Beside its submitter: a thread that woke a worker for its tasks yields
 * once only where the beside-caller rule could move that worker: floating
 * workers, no more threads than processors, no other caller running. */
static void a_submitter_that_woke_a_floating_worker_yields(void **state) {
  (void)state;
  cpuexec__permit p = facts(2, 2);
  assert_true(cpuexec__permit_submitter_yields(&p));
  p.first_worker_cpu = 1;
  assert_false(cpuexec__permit_submitter_yields(&p)); /* pinned: it cannot move */
  p.first_worker_cpu = -1;
  arrive(&p, 1); /* a caller beside lane 0's: the other processor is its */
  assert_false(cpuexec__permit_submitter_yields(&p));
  cpuexec__permit_caller_leaves(&p);
  assert_true(cpuexec__permit_submitter_yields(&p));
  cpuexec__permit crowded = facts(4, 2);
  assert_false(cpuexec__permit_submitter_yields(&crowded)); /* more threads than processors */
  cpuexec__permit big = facts(64, 128);
  assert_true(cpuexec__permit_submitter_yields(&big));
}

/* The gate: calm (no caller arrived beside since the last look), unplaced,
 * workers floating. */
static void only_a_calm_unplaced_caller_of_floating_workers_steps_off(void **state) {
  (void)state;
  cpuexec__permit p = facts(2, 2);
  assert_true(cpuexec__permit_caller_steps_off_for_stuck(&p));
  arrive(&p, 1);
  assert_false(cpuexec__permit_caller_steps_off_for_stuck(&p)); /* callers met since: the cap decides */
  assert_true(cpuexec__permit_caller_steps_off_for_stuck(&p));  /* calm again at the next look */
  p.placed_caller = true;
  assert_false(cpuexec__permit_caller_steps_off_for_stuck(&p));
  p.placed_caller = false;
  p.first_worker_cpu = 1;
  assert_false(cpuexec__permit_caller_steps_off_for_stuck(&p));
}

/* ---- crowded lately, and the long and gap spins -------------------------- */

static void a_thread_preempted_since_a_recent_look_is_crowded(void **state) {
  (void)state;
  cpuexec__permit_thread t;
  memset(&t, 0, sizeof t);
  const uint64_t ms = 1000000u;
  assert_false(cpuexec__permit_crowded_lately(&t, 0, 1 * ms)); /* no preemption */
  assert_true(cpuexec__permit_crowded_lately(&t, 3, 2 * ms));  /* preempted since the look 1 ms ago */
  assert_false(cpuexec__permit_crowded_lately(&t, 3, 3 * ms)); /* not since */
  /* Preempted, but the last look was longer ago than the window. */
  assert_false(cpuexec__permit_crowded_lately(&t, 4, 3 * ms + CPUEXEC__CROWDED_WINDOW_NS));
}


/* The live question reads the facts through the model's sources: with a
 * fake clock and fake preemption counts, the thread may spin long exactly
 * when it was not preempted since its recent look. */
static void the_long_spin_asks_the_preemption_count_through_the_model(void **state) {
  (void)state;
  atomic_store(&cpuexec__test_permit_clock, read_fake_clock);
  atomic_store(&cpuexec__test_permit_preemptions, read_fake_preemptions);
  atomic_store(&fake_clock, 50000000u);
  assert_int_equal(cpuexec__permit_now_ns(), 50000000u);
  (void)cpuexec__permit_may_spin_long(cpuexec__permit_now_ns()); /* a first look */
  atomic_store(&fake_clock, 51000000u);
  assert_true(cpuexec__permit_may_spin_long(cpuexec__permit_now_ns()));
  atomic_store(&fake_preemptions, 1);
  atomic_store(&fake_clock, 52000000u);
  assert_false(cpuexec__permit_may_spin_long(cpuexec__permit_now_ns()));
  atomic_store(&fake_clock, 53000000u);
  assert_true(cpuexec__permit_may_spin_long(cpuexec__permit_now_ns()));
  atomic_store(&cpuexec__test_permit_clock, NULL);
  atomic_store(&cpuexec__test_permit_preemptions, NULL);
}

static void a_worker_woken_by_a_region_soon_after_its_park_learns_to_spin_through(void **state) {
  (void)state;
  const uint64_t spin = CPUEXEC__ADAPTIVE_SPIN_NS, us = 1000u;
  cpuexec__permit_worker w;
  memset(&w, 0, sizeof w);
  cpuexec__permit_note_wait(&w, spin, 50 * us, false); /* within the plan's spin: nothing to learn */
  assert_int_equal(cpuexec__permit_gap_spin_ns(&w), 0);
  cpuexec__permit_note_wait(&w, spin, 1000 * us, true); /* parked, woken 1 ms in */
  assert_int_equal(cpuexec__permit_gap_spin_ns(&w), 1500 * us);
  cpuexec__permit_note_wait(&w, spin, 1900 * us, true); /* a longer one, capped */
  assert_int_equal(cpuexec__permit_gap_spin_ns(&w), CPUEXEC__GAP_SPIN_MAX_NS);
  /* Kept while such gaps recur: short waits in between do not undo it ... */
  for (uint32_t k = 0; k < CPUEXEC__GAP_SPIN_MEMORY_WAITS; k++) cpuexec__permit_note_wait(&w, spin, 10 * us, false);
  assert_int_equal(cpuexec__permit_gap_spin_ns(&w), CPUEXEC__GAP_SPIN_MAX_NS);
  cpuexec__permit_note_wait(&w, spin, 900 * us, false); /* spun through one: it recurs */
  for (uint32_t k = 0; k < CPUEXEC__GAP_SPIN_MEMORY_WAITS; k++) cpuexec__permit_note_wait(&w, spin, 10 * us, false);
  assert_int_equal(cpuexec__permit_gap_spin_ns(&w), CPUEXEC__GAP_SPIN_MAX_NS);
  /* ... until they stop recurring, */
  cpuexec__permit_note_wait(&w, spin, 10 * us, false);
  assert_int_equal(cpuexec__permit_gap_spin_ns(&w), 0);
  /* and an idle spell longer than the ceiling forgets at once. */
  cpuexec__permit_note_wait(&w, spin, 800 * us, true);
  assert_int_equal(cpuexec__permit_gap_spin_ns(&w), 1200 * us);
  cpuexec__permit_note_wait(&w, spin, CPUEXEC__GAP_SPIN_MAX_NS + 1, true);
  assert_int_equal(cpuexec__permit_gap_spin_ns(&w), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(oversubscribed_means_more_runnable_than_processors),
      cmocka_unit_test(an_adaptive_executor_wider_than_the_machine_parks_at_once),
      cmocka_unit_test(a_region_beside_callers_admits_what_their_threads_leave),
      cmocka_unit_test(workers_beyond_what_the_callers_leave_stand_aside),
      cmocka_unit_test(a_worker_that_saw_callers_meet_parks_at_once_for_a_while),
      cmocka_unit_test(a_caller_among_more_callers_than_threads_takes_turns),
      cmocka_unit_test(a_crowded_caller_alone_on_its_processor_rests),
      cmocka_unit_test(a_crowded_caller_on_a_processor_two_fuller_moves),
      cmocka_unit_test(callers_of_other_pools_that_met_lately_count_as_running),
      cmocka_unit_test(a_free_caller_on_a_pinned_workers_processor_steps_off),
      cmocka_unit_test(a_woken_worker_missing_regions_it_never_saw_is_stuck),
      cmocka_unit_test(a_floating_worker_on_its_callers_processor_steps_off),
      cmocka_unit_test(a_submitter_that_woke_a_floating_worker_yields),
      cmocka_unit_test(only_a_calm_unplaced_caller_of_floating_workers_steps_off),
      cmocka_unit_test(a_thread_preempted_since_a_recent_look_is_crowded),
      cmocka_unit_test(the_long_spin_asks_the_preemption_count_through_the_model),
      cmocka_unit_test(a_worker_woken_by_a_region_soon_after_its_park_learns_to_spin_through),
  };
  return cmocka_run_group_tests_name("the permit model", tests, NULL, NULL);
}
