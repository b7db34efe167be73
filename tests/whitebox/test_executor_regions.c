/* Several callers on one executor at once (issue 18, src/executor/region_lanes.h):
 * regions that can only finish if they run at the same time, thousands of
 * regions from four callers with workers held at random before they check
 * in, the strict rule while every worker is busy in another region, and
 * the bound on regions at once. Nothing here waits on time: latches,
 * rendezvous and the worker gate; a hang is named by the case watchdog. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "executor/executor_internal.h"
#include "executor/region_lanes.h"
#include "support/test_util.h"
#include "support/rendezvous.h"

static void wait_until_at_least(_Atomic int64_t *word, int64_t value) {
  while (atomic_load(word) < value) sched_yield();
}

/* ---- two regions that need each other --------------------------------- */

typedef struct pair_side {
  cpuexec_executor *exec;
  _Atomic int64_t *mine;   /* opened by the other region's callbacks */
  _Atomic int64_t *theirs; /* opened by this region's callbacks */
  int64_t round;
  int rounds;
  _Atomic uint32_t bad;
} pair_side;

static int pair_body(void *ctx, int64_t begin, int64_t end) {
  pair_side *s = ctx;
  (void)begin, (void)end;
  int64_t want = s->round;
  if (atomic_load(s->theirs) < want) atomic_store(s->theirs, want);
  wait_until_at_least(s->mine, want);
  return 0;
}

static int nested_count(void *ctx, int64_t begin, int64_t end) {
  (void)begin, (void)end;
  *(int32_t *)ctx = cpuexec_participant_count();
  return 0;
}

static int pair_body_nested(void *ctx, int64_t begin, int64_t end) {
  pair_side *s = ctx;
  pair_body(ctx, begin, end);
  /* Nested calls stay inline, in every lane. */
  int32_t count = -1;
  if (cpuexec_parallel_for(s->exec, 5, 1, &count, nested_count, 0) != 0 || count != 1) atomic_fetch_add(&s->bad, 1);
  return 0;
}

static void *pair_caller(void *arg) {
  pair_side *s = arg;
  for (int r = 1; r <= s->rounds; r++) {
    s->round = r;
    if (cpuexec_parallel_for(s->exec, 8, 1, s, pair_body_nested, 0) != 0) atomic_fetch_add(&s->bad, 1);
  }
  return NULL;
}

static void pair_on(uint32_t threads, int rounds) {
  cpuexec_executor *exec = test_executor(threads);
  assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
  _Atomic int64_t latch_a = 0, latch_b = 0;
  pair_side a = {exec, &latch_a, &latch_b, 0, rounds, 0}, b = {exec, &latch_b, &latch_a, 0, rounds, 0};
  pthread_t ta, tb;
  assert_int_equal(pthread_create(&ta, NULL, pair_caller, &a), 0);
  assert_int_equal(pthread_create(&tb, NULL, pair_caller, &b), 0);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  assert_int_equal(atomic_load(&a.bad), 0);
  assert_int_equal(atomic_load(&b.bad), 0);
  cpuexec_counters c;
  assert_int_equal(cpuexec_executor_counters_get(exec, &c), 0);
  /* Every round one of the two ran beside the other's lane-0 region: in a
   * lane, or alone when the two callers occupy every thread (pool of 2). */
  assert_true(c.concurrent_regions + c.occupied_inline >= (uint64_t)rounds);
  if (threads == 2) assert_int_equal(c.concurrent_regions, 0);
  if (threads > 2) assert_int_equal(c.occupied_inline, 0);
  assert_int_equal(c.bound_inline, 0);
  /* Each top-level call is a dispatch or ran alone; the nested ones (one
   * per callback range, at least one a region) are nested_inline. */
  assert_int_equal(c.dispatches + c.occupied_inline, 2 * (uint64_t)rounds);
  assert_true(c.nested_inline >= 2 * (uint64_t)rounds);
  assert_true(c.participants_run >= c.dispatches && c.participants_run <= c.dispatches * threads);
  cpuexec_executor_release(exec);
}

/* With one region at a time this deadlocks: each region's callbacks wait
 * for a latch only the other region's callbacks open. */
static void two_callers_whose_regions_need_each_other_run_at_once(void **state) {
  (void)state;
  pair_on(2, 300);
  pair_on(3, 200);
  pair_on(5, 100);
}

/* ---- four callers, thousands of regions, random holds ------------------ */

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static uint64_t hold_progress; /* regions finished by any caller, under hold_lock */
static bool hold_released;
static __thread unsigned hold_seed;

/* One worker in four, each time it is about to check in anywhere, waits
 * until two more regions finished somewhere: a late worker, without a
 * clock. Callers never wait for a worker that did not check in, so the
 * regions it waits for always finish. */
static void random_hold(struct cpuexec_executor *exec, uint32_t index) {
  (void)exec;
  if (hold_seed == 0) hold_seed = 0x9e3779b9u * (index + 7);
  if (rand_r(&hold_seed) % 4 != 0) return;
  pthread_mutex_lock(&hold_lock);
  uint64_t until = hold_progress + 2;
  while (!hold_released && hold_progress < until) pthread_cond_wait(&hold_cond, &hold_lock);
  pthread_mutex_unlock(&hold_lock);
}

static void hold_note_progress(void) {
  pthread_mutex_lock(&hold_lock);
  hold_progress++;
  pthread_cond_broadcast(&hold_cond);
  pthread_mutex_unlock(&hold_lock);
}

#define STRESS_MAX_TOTAL 200
#define STRESS_RING 4

typedef struct stress_region {
  _Atomic uint32_t hits[STRESS_MAX_TOTAL];
  _Atomic uintptr_t thread_of[64];  /* participant index -> the thread that ran as it */
  _Atomic int open;                 /* 1 from before the call until it returned */
  _Atomic int32_t seen_count;       /* the participant count its first callback saw (0: none yet) */
  int32_t expect_count;             /* the most it may be: admitted, before the occupancy rule */
  int64_t fail_at;                  /* -1: none */
  int fail_value;
  _Atomic uint32_t bad_count, bad_index, after_return;
} stress_region;

typedef struct stress_caller {
  cpuexec_executor *exec;
  uint32_t threads;
  int id, regions;
  unsigned seed;
  stress_region ring[STRESS_RING];
  int failures;
  char what[160];
} stress_caller;

static int stress_body(void *ctx, int64_t begin, int64_t end) {
  stress_region *r = ctx;
  int32_t count = cpuexec_participant_count(), index = cpuexec_participant_index();
  /* The occupancy rule (src/executor/region_lanes.h) may admit fewer
   * participants than asked for while other callers run, but every
   * callback of one region sees one count. */
  int32_t first = 0;
  if (count < 1 || count > r->expect_count ||
      (!atomic_compare_exchange_strong(&r->seen_count, &first, count) && first != count))
    atomic_fetch_add(&r->bad_count, 1);
  if (index < 0 || index >= count || index >= 64) {
    atomic_fetch_add(&r->bad_index, 1);
  } else {
    uintptr_t self = (uintptr_t)pthread_self(), seen = 0;
    if (!atomic_compare_exchange_strong(&r->thread_of[index], &seen, self) && seen != self)
      atomic_fetch_add(&r->bad_index, 1); /* two threads ran as one index */
  }
  int rc = 0;
  for (int64_t i = begin; i < end; i++) {
    atomic_fetch_add(&r->hits[i], 1);
    if (i == r->fail_at) rc = r->fail_value;
  }
  if ((end - begin) % 3 == 0) sched_yield();
  if (!atomic_load(&r->open)) atomic_fetch_add(&r->after_return, 1);
  return rc;
}

static void *stress_loop(void *arg) {
  stress_caller *c = arg;
  for (int n = 0; n < c->regions && c->failures == 0; n++) {
    stress_region *r = &c->ring[n % STRESS_RING];
    int64_t total = 1 + rand_r(&c->seed) % STRESS_MAX_TOTAL;
    int64_t grain = 1 + rand_r(&c->seed) % 4;
    int32_t max = (int32_t)(rand_r(&c->seed) % (c->threads + 2));
    int64_t chunks = (total + grain - 1) / grain;
    int64_t admitted = max == 0 || (uint32_t)max > c->threads ? c->threads : (uint32_t)max;
    if (chunks < admitted) admitted = chunks;
    r->expect_count = (int32_t)admitted;
    r->fail_at = n % 9 == c->id ? total / 2 : -1;
    r->fail_value = 1000 + 100 * c->id + n % 100;
    for (int i = 0; i < STRESS_MAX_TOTAL; i++) atomic_store(&r->hits[i], 0);
    for (int i = 0; i < 64; i++) atomic_store(&r->thread_of[i], 0);
    atomic_store(&r->seen_count, 0);
    atomic_store(&r->open, 1);
    int rc = cpuexec_parallel_for(c->exec, total, grain, r, stress_body, max);
    int value = rc == CPUEXEC_ECALLBACK ? cpuexec_error_callback_value() : 0;
    atomic_store(&r->open, 0);
    hold_note_progress();
    if (r->fail_at >= 0) {
      if (rc != CPUEXEC_ECALLBACK || value != r->fail_value)
        snprintf(c->what, sizeof c->what, "region %d: rc %d value %d, expected its own failure %d", n, rc, value,
                 r->fail_value), c->failures++;
      for (int64_t i = 0; i < total; i++)
        if (atomic_load(&r->hits[i]) > 1)
          snprintf(c->what, sizeof c->what, "region %d: index %lld ran twice", n, (long long)i), c->failures++;
    } else {
      if (rc != 0)
        snprintf(c->what, sizeof c->what, "region %d: rc %d (value %d): another region's error?", n, rc, value),
            c->failures++;
      for (int64_t i = 0; i < STRESS_MAX_TOTAL; i++)
        if (atomic_load(&r->hits[i]) != (i < total ? 1u : 0u))
          snprintf(c->what, sizeof c->what, "region %d: index %lld of %lld ran %u times", n, (long long)i,
                   (long long)total, atomic_load(&r->hits[i])), c->failures++;
    }
    if (atomic_load(&r->bad_count) || atomic_load(&r->bad_index) || atomic_load(&r->after_return))
      snprintf(c->what, sizeof c->what, "region %d: %u wrong counts, %u index clashes, %u callbacks after return", n,
               atomic_load(&r->bad_count), atomic_load(&r->bad_index), atomic_load(&r->after_return)),
          c->failures++;
  }
  return NULL;
}

static void stress_on(uint32_t threads, int callers, int regions) {
  cpuexec_executor *exec = test_executor_spin(threads, CPUEXEC_SPIN_PARK_IMMEDIATELY, 0);
  assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
  hold_progress = 0;
  hold_released = false;
  atomic_store(&cpuexec__test_worker_gate, random_hold);
  stress_caller *c = calloc((size_t)callers, sizeof *c);
  pthread_t t[8];
  for (int i = 0; i < callers; i++) {
    c[i].exec = exec;
    c[i].threads = threads;
    c[i].id = i;
    c[i].regions = regions;
    c[i].seed = 12345u + 77u * (unsigned)i;
    assert_int_equal(pthread_create(&t[i], NULL, stress_loop, &c[i]), 0);
  }
  for (int i = 0; i < callers; i++) pthread_join(t[i], NULL);
  pthread_mutex_lock(&hold_lock);
  hold_released = true;
  pthread_cond_broadcast(&hold_cond);
  pthread_mutex_unlock(&hold_lock);
  for (int i = 0; i < callers; i++)
    if (c[i].failures) fail_msg("caller %d, pool of %u: %s (%d failures)", i, threads, c[i].what, c[i].failures);
  cpuexec_counters k;
  assert_int_equal(cpuexec_executor_counters_get(exec, &k), 0);
  assert_true(k.participants_run <= k.dispatches * threads);
  free(c);
  cpuexec_executor_release(exec);
  atomic_store(&cpuexec__test_worker_gate, NULL);
}

static void four_callers_thousands_of_regions_with_random_holds_each_index_once(void **state) {
  (void)state;
  int regions = TEST_UNDER_TSAN ? 600 : 2500;
  stress_on(2, 4, regions);
  stress_on(3, 4, regions);
  stress_on(5, 4, regions / 2);
}

/* ---- the strict rule while every worker is busy elsewhere -------------- */

typedef struct busy_region {
  _Atomic uint64_t arrived; /* rendezvous.h */
  _Atomic int64_t *release; /* wait for it after the rendezvous */
} busy_region;

static int busy_body(void *ctx, int64_t begin, int64_t end) {
  busy_region *b = ctx;
  (void)begin, (void)end;
  test_rendezvous(&b->arrived);
  wait_until_at_least(b->release, 1);
  return 0;
}

typedef struct busy_caller {
  cpuexec_executor *exec;
  busy_region region;
  int32_t participants;
  int rc;
} busy_caller;

static void *busy_loop(void *arg) {
  busy_caller *c = arg;
  c->rc = cpuexec_parallel_for(c->exec, c->participants, 1, &c->region, busy_body, c->participants);
  return NULL;
}

typedef struct strict_region {
  _Atomic uint64_t arrived;
  _Atomic uint64_t ran; /* bit per participant index */
  _Atomic int64_t *release;
} strict_region;

static int strict_body(void *ctx, int64_t begin, int64_t end) {
  strict_region *s = ctx;
  (void)begin, (void)end;
  /* Participant 0 frees the workers, then everyone waits for the whole
   * team: it only completes if every admitted participant ran. */
  if (cpuexec_participant_index() == 0) atomic_store(s->release, 1);
  test_rendezvous(&s->arrived);
  atomic_fetch_or(&s->ran, 1ull << cpuexec_participant_index());
  return 0;
}

static uint64_t popcount_of(_Atomic uint64_t *bits) { return (uint64_t)__builtin_popcountll(atomic_load(bits)); }

/* Callers hold workers in their regions until the strict region's
 * participant 0 lets them go; the strict region then gets every
 * participant. Layout 0, pool of 3: one caller holds both workers in lane
 * 0. Layout 1, pool of 4: one holds worker 1 in lane 0, another worker 2
 * in a lane, and worker 3 stands aside by the occupancy rule (two callers
 * and two workers occupy the four threads) until the strict region comes. */
static void strict_region_gets_a_full_team_while_workers_are_busy_elsewhere(void **state) {
  (void)state;
  for (int layout = 0; layout < 2; layout++) {
    uint32_t threads = layout == 0 ? 3 : 4;
    cpuexec_executor *exec = test_executor(threads);
    assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
    _Atomic int64_t release = 0;
    busy_caller busy[2] = {{exec, {0, &release}, layout == 0 ? 3 : 2, -1}, {exec, {0, &release}, 2, -1}};
    int callers = layout == 0 ? 1 : 2;
    pthread_t t[2];
    for (int i = 0; i < callers; i++) {
      assert_int_equal(pthread_create(&t[i], NULL, busy_loop, &busy[i]), 0);
      /* Every participant of that region is in its callback: the workers it
       * holds are busy. */
      while (popcount_of(&busy[i].region.arrived) < (uint64_t)busy[i].participants) sched_yield();
    }
    strict_region s = {0, 0, &release};
    assert_int_equal(
        cpuexec_parallel_for_flags(exec, threads, 1, &s, strict_body, 0, CPUEXEC_FOR_EVERY_PARTICIPANT), 0);
    assert_int_equal(atomic_load(&s.ran), (1u << threads) - 1u);
    for (int i = 0; i < callers; i++) {
      pthread_join(t[i], NULL);
      assert_int_equal(busy[i].rc, 0);
    }
    /* Every region here ran on more than one participant, lane 0's and
     * (layout 1) the one in another lane alike. */
    cpuexec_counters c;
    assert_int_equal(cpuexec_executor_counters_get(exec, &c), 0);
    assert_int_equal(c.parallel_regions, (uint64_t)callers + 1);
    if (layout == 1) assert_true(c.concurrent_regions >= 1);
    cpuexec_executor_release(exec);
  }
}

/* ---- the occupancy rule ------------------------------------------------ */

/* A region whose participant 0 says it started, then every callback waits
 * for `release`: a caller holding lane 0 and the workers that joined it. */
typedef struct held_region {
  cpuexec_executor *exec;
  int32_t participants;
  _Atomic int64_t entered;
  _Atomic int64_t release;
  _Atomic int worker_joined; /* a participant other than 0 ran a callback */
  int rc;
} held_region;

static int held_body(void *ctx, int64_t begin, int64_t end) {
  held_region *h = ctx;
  (void)begin, (void)end;
  if (cpuexec_participant_index() == 0)
    atomic_store(&h->entered, 1);
  else
    atomic_store(&h->worker_joined, 1);
  wait_until_at_least(&h->release, 1);
  return 0;
}

static void *held_loop(void *arg) {
  held_region *h = arg;
  h->rc = cpuexec_parallel_for(h->exec, h->participants, 1, h, held_body, h->participants);
  return NULL;
}

/* What the callbacks of a region beside the held one saw. */
typedef struct beside_region {
  _Atomic int32_t count_min, count_max;
  _Atomic uint32_t other_threads; /* callbacks not on the calling thread */
  pthread_t caller;
} beside_region;

static int beside_body(void *ctx, int64_t begin, int64_t end) {
  beside_region *b = ctx;
  (void)begin, (void)end;
  int32_t count = cpuexec_participant_count();
  if (count < atomic_load(&b->count_min)) atomic_store(&b->count_min, count);
  if (count > atomic_load(&b->count_max)) atomic_store(&b->count_max, count);
  if (!pthread_equal(pthread_self(), b->caller)) atomic_fetch_add(&b->other_threads, 1);
  return 0;
}

/* While `held` holds lane 0, the calling thread runs a region of 64 chunks
 * beside it; returns what its callbacks saw. */
static beside_region run_beside_held(cpuexec_executor *exec, held_region *held, pthread_t *holder) {
  held->exec = exec;
  assert_int_equal(pthread_create(holder, NULL, held_loop, held), 0);
  wait_until_at_least(&held->entered, 1);
  beside_region b = {INT32_MAX, 0, 0, pthread_self()};
  assert_int_equal(cpuexec_parallel_for(exec, 64, 1, &b, beside_body, 0), 0);
  atomic_store(&held->release, 1);
  pthread_join(*holder, NULL);
  assert_int_equal(held->rc, 0);
  return b;
}

/* Pool of 2, one caller in lane 0: a second caller would make three
 * runnable threads with the worker, so its region runs alone on it. */
static void a_caller_beside_another_in_a_pool_of_two_runs_alone(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
  held_region held = {.participants = 2};
  pthread_t holder;
  beside_region b = run_beside_held(exec, &held, &holder);
  assert_int_equal(atomic_load(&b.count_min), 1);
  assert_int_equal(atomic_load(&b.count_max), 1);
  assert_int_equal(atomic_load(&b.other_threads), 0);
  cpuexec_counters c;
  assert_int_equal(cpuexec_executor_counters_get(exec, &c), 0);
  assert_int_equal(c.occupied_inline, 1);
  assert_int_equal(c.dispatches, 1); /* the held region only: the one beside it woke nobody */
  assert_int_equal(c.concurrent_regions, 0);
  cpuexec_executor_release(exec);
}

/* Pool of 4, one caller in lane 0: the region beside it admits what the
 * other caller leaves, 4 - 1 = 3 participants. */
static void a_caller_beside_another_admits_the_threads_left(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(4);
  held_region held = {.participants = 2};
  pthread_t holder;
  beside_region b = run_beside_held(exec, &held, &holder);
  assert_int_equal(atomic_load(&b.count_min), 3);
  assert_int_equal(atomic_load(&b.count_max), 3);
  cpuexec_executor_release(exec);
}

/* What a region run by a third caller on a pool of 2 saw. */
typedef struct crowd_region {
  _Atomic uint32_t hits[64];
  _Atomic uint32_t callbacks;
  _Atomic int32_t count_max;
} crowd_region;

static int crowd_body(void *ctx, int64_t begin, int64_t end) {
  crowd_region *c = ctx;
  atomic_fetch_add(&c->callbacks, 1);
  if (cpuexec_participant_count() > atomic_load(&c->count_max)) atomic_store(&c->count_max, cpuexec_participant_count());
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&c->hits[i], 1);
  return 0;
}

/* Pool of 2: caller A holds lane 0, caller B runs alone beside it (held in
 * its callback), and caller C comes as a third: more callers than threads,
 * so C runs alone in pieces it can yield between (region.c, run_crowded):
 * 64 indices of grain 2 in 16 ranges, each index once. */
static void a_third_caller_on_a_pool_of_two_runs_alone_in_pieces(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
  held_region a = {.exec = exec, .participants = 2}, b = {.exec = exec, .participants = 2};
  pthread_t ta, tb;
  assert_int_equal(pthread_create(&ta, NULL, held_loop, &a), 0);
  wait_until_at_least(&a.entered, 1);
  assert_int_equal(pthread_create(&tb, NULL, held_loop, &b), 0);
  wait_until_at_least(&b.entered, 1);
  crowd_region c;
  memset(&c, 0, sizeof c);
  assert_int_equal(cpuexec_parallel_for(exec, 64, 2, &c, crowd_body, 0), 0);
  atomic_store(&a.release, 1);
  atomic_store(&b.release, 1);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  assert_int_equal(a.rc, 0);
  assert_int_equal(b.rc, 0);
  for (int i = 0; i < 64; i++) assert_int_equal(atomic_load(&c.hits[i]), 1);
  assert_int_equal(atomic_load(&c.callbacks), 16);
  assert_int_equal(atomic_load(&c.count_max), 1);
  cpuexec_counters k;
  assert_int_equal(cpuexec_executor_counters_get(exec, &k), 0);
  assert_int_equal(k.occupied_inline, 2); /* B and C */
  assert_int_equal(k.dispatches, 1);       /* A */
  cpuexec_executor_release(exec);
}

/* Pool of 2. Worker 1 is held at the gate as it is about to join caller
 * A's lane-0 region; caller B then runs a region beside it (alone), and
 * from inside that region lets the worker go: with two callers running,
 * the worker would be a third running thread on two, so it must stand
 * aside (counted), and A runs the worker's share itself. */
static _Atomic int aside_gate_reached, aside_gate_open;

static void aside_gate(struct cpuexec_executor *exec, uint32_t index) {
  (void)exec, (void)index;
  atomic_store(&aside_gate_reached, 1);
  while (!atomic_load(&aside_gate_open)) sched_yield();
}

static uint64_t stood_aside_of(cpuexec_executor *exec) {
  cpuexec_counters c;
  assert_int_equal(cpuexec_executor_counters_get(exec, &c), 0);
  return c.stood_aside;
}

static int aside_beside_body(void *ctx, int64_t begin, int64_t end) {
  held_region *a = ctx;
  (void)begin, (void)end;
  atomic_store(&aside_gate_open, 1);
  /* Either way the worker decides: it stands aside, or it joins A. */
  while (stood_aside_of(a->exec) == 0 && !atomic_load(&a->worker_joined)) sched_yield();
  return 0;
}

static void a_worker_past_the_threads_stands_aside(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
  held_region a = {.exec = exec, .participants = 2};
  atomic_store(&aside_gate_reached, 0);
  atomic_store(&aside_gate_open, 0);
  atomic_store(&cpuexec__test_worker_gate, aside_gate);
  pthread_t holder;
  assert_int_equal(pthread_create(&holder, NULL, held_loop, &a), 0);
  while (!atomic_load(&aside_gate_reached) || !atomic_load(&a.entered)) sched_yield();
  assert_int_equal(cpuexec_parallel_for(exec, 4, 1, &a, aside_beside_body, 0), 0);
  atomic_store(&a.release, 1);
  pthread_join(holder, NULL);
  atomic_store(&cpuexec__test_worker_gate, NULL);
  assert_int_equal(a.rc, 0);
  assert_int_equal(atomic_load(&a.worker_joined), 0);
  assert_int_equal(stood_aside_of(exec), 1);
  cpuexec_counters c;
  assert_int_equal(cpuexec_executor_counters_get(exec, &c), 0);
  assert_int_equal(c.takeovers, 1);
  cpuexec_executor_release(exec);
}

/* ---- the bound ---------------------------------------------------------- */

typedef struct bound_state {
  cpuexec_executor *exec;
  _Atomic int64_t entered; /* callers whose participant 0 reached a callback */
  int64_t callers;
  _Atomic uint32_t bad;
} bound_state;

static __thread bool bound_counted;

static int bound_body(void *ctx, int64_t begin, int64_t end) {
  bound_state *b = ctx;
  (void)begin, (void)end;
  if (cpuexec_participant_index() == 0 && !bound_counted) {
    bound_counted = true;
    atomic_fetch_add(&b->entered, 1);
  }
  wait_until_at_least(&b->entered, b->callers);
  return 0;
}

static void *bound_caller(void *arg) {
  bound_state *b = arg;
  bound_counted = false;
  if (cpuexec_parallel_for(b->exec, 16, 1, b, bound_body, 0) != 0) atomic_fetch_add(&b->bad, 1);
  return NULL;
}

/* CPUEXEC__LANES callers hold every lane until one more caller reaches its
 * callback: that one runs its region inline on its own thread, so all of
 * them finish, and nobody waited for anybody's region to start. A pool of
 * CPUEXEC__LANES + 2 threads: the occupancy rule still leaves every caller
 * room for a worker, so each takes a lane rather than running alone. */
static void a_caller_past_the_bound_runs_its_region_inline(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(CPUEXEC__LANES + 2);
  assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
  bound_state b = {exec, 0, CPUEXEC__LANES + 1, 0};
  pthread_t t[CPUEXEC__LANES + 1];
  for (uint32_t i = 0; i < CPUEXEC__LANES + 1; i++) assert_int_equal(pthread_create(&t[i], NULL, bound_caller, &b), 0);
  for (uint32_t i = 0; i < CPUEXEC__LANES + 1; i++) pthread_join(t[i], NULL);
  assert_int_equal(atomic_load(&b.bad), 0);
  cpuexec_counters c;
  assert_int_equal(cpuexec_executor_counters_get(exec, &c), 0);
  assert_int_equal(c.bound_inline, 1);
  assert_int_equal(c.concurrent_regions, CPUEXEC__LANES - 1);
  assert_int_equal(c.occupied_inline, 0);
  assert_int_equal(c.dispatches, CPUEXEC__LANES); /* lane 0 and the others; not the one past the bound */
  cpuexec_executor_release(exec);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(two_callers_whose_regions_need_each_other_run_at_once),
      cmocka_unit_test(four_callers_thousands_of_regions_with_random_holds_each_index_once),
      cmocka_unit_test(strict_region_gets_a_full_team_while_workers_are_busy_elsewhere),
      cmocka_unit_test(a_caller_beside_another_in_a_pool_of_two_runs_alone),
      cmocka_unit_test(a_caller_beside_another_admits_the_threads_left),
      cmocka_unit_test(a_worker_past_the_threads_stands_aside),
      cmocka_unit_test(a_third_caller_on_a_pool_of_two_runs_alone_in_pieces),
      cmocka_unit_test(a_caller_past_the_bound_runs_its_region_inline),
  };
  return cmocka_run_group_tests_name("executor regions at once", tests, NULL, NULL);
}
