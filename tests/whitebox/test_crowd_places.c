/* Where a process's crowded callers run (src/executor/crowd_places.h),
 * the counts the crowd move reads: each caller counted once, on the
 * processor it last looked from; the emptiest processor only among those
 * that held a crowded caller; an unknown processor counted nowhere; and
 * every count back where it was after callers on many threads came, moved
 * and left. The counts are the process's, so every case leaves them as it
 * found them. */
#include "support/test_util.h"

#include <stdint.h>

#include "executor/crowd_places.h"

static cpuexec__crowd_look look_from(cpuexec__crowd_place *place, int32_t cpu) {
  cpuexec__crowd_look look;
  cpuexec__crowd_places_look(place, cpu, &look);
  return look;
}

static void four_callers_three_on_one_processor_see_the_other(void **state) {
  (void)state;
  cpuexec__crowd_place callers[4];
  int32_t on[4] = {0, 0, 0, 1};
  for (int i = 0; i < 4; i++) cpuexec__crowd_places_enter(&callers[i], on[i]);
  cpuexec__crowd_look look = look_from(&callers[0], 0);
  assert_int_equal(look.here, 3);
  assert_int_equal(look.fewest, 1);
  assert_int_equal(look.emptiest, 1);
  look = look_from(&callers[3], 1);
  assert_int_equal(look.here, 1);
  assert_int_equal(look.fewest, 1); /* its own is the emptiest */
  assert_int_equal(look.emptiest, 1);
  /* One moves: counted on its new processor at its next look, once. */
  look = look_from(&callers[0], 1);
  assert_int_equal(look.here, 2);
  assert_int_equal(look.fewest, 2);
  look = look_from(&callers[1], 0);
  assert_int_equal(look.here, 2);
  assert_int_equal(look.fewest, 2);
  for (int i = 0; i < 4; i++) cpuexec__crowd_places_leave(&callers[i]);
  /* All gone: a lone caller sees only itself. */
  cpuexec__crowd_place lone;
  cpuexec__crowd_places_enter(&lone, 1);
  look = look_from(&lone, 1);
  assert_int_equal(look.here, 1);
  assert_int_equal(look.fewest, 0);
  assert_int_equal(look.emptiest, 0);
  cpuexec__crowd_places_leave(&lone);
}

/* Every processor that held a crowded caller holds one now (0, 1, 5 and
 * 7), 6 never held one (it may be outside every caller's affinity): the
 * emptiest is one of the others, with one caller, never 6 with none. */
static void the_emptiest_is_a_processor_that_held_a_crowded_caller(void **state) {
  (void)state;
  int32_t on[] = {0, 1, 5, 5, 7};
  cpuexec__crowd_place callers[5];
  for (int i = 0; i < 5; i++) cpuexec__crowd_places_enter(&callers[i], on[i]);
  cpuexec__crowd_look look = look_from(&callers[2], 5);
  assert_int_equal(look.here, 2);
  assert_int_equal(look.fewest, 1);
  assert_true(look.emptiest == 0 || look.emptiest == 1 || look.emptiest == 7);
  /* 7 empties: now it is the emptiest, with none. */
  cpuexec__crowd_places_leave(&callers[4]);
  look = look_from(&callers[2], 5);
  assert_int_equal(look.fewest, 0);
  assert_int_equal(look.emptiest, 7);
  for (int i = 0; i < 4; i++) cpuexec__crowd_places_leave(&callers[i]);
}

/* A processor unknown (-1) or past the table: counted nowhere, no
 * imbalance seen, the others' counts untouched. */
static void an_unknown_processor_is_counted_nowhere(void **state) {
  (void)state;
  cpuexec__crowd_place known, unknown, beyond;
  cpuexec__crowd_places_enter(&known, 2);
  cpuexec__crowd_places_enter(&unknown, -1);
  cpuexec__crowd_places_enter(&beyond, CPUEXEC__CROWD_PLACES);
  int32_t nowhere[] = {-1, CPUEXEC__CROWD_PLACES, INT32_MAX};
  for (size_t k = 0; k < sizeof nowhere / sizeof nowhere[0]; k++) {
    cpuexec__crowd_look look = look_from(&unknown, nowhere[k]);
    assert_int_equal(look.here, 0);
    assert_int_equal(look.fewest, 0);
    assert_int_equal(look.emptiest, -1);
  }
  assert_int_equal(look_from(&known, 2).here, 1);
  /* Known again: counted again. */
  assert_int_equal(look_from(&beyond, 2).here, 2);
  cpuexec__crowd_places_leave(&beyond);
  cpuexec__crowd_places_leave(&unknown);
  assert_int_equal(look_from(&known, 2).here, 1);
  cpuexec__crowd_places_leave(&known);
}

/* Callers on eight threads enter, look from processors that change under
 * them, and leave, all at once: afterwards every count is where it was. */
enum { CHURNERS = 8, CHURNS = 2000, CHURN_CPUS = 4 };

static void *churn(void *arg) {
  uint32_t seed = (uint32_t)(uintptr_t)arg;
  for (int i = 0; i < CHURNS; i++) {
    cpuexec__crowd_place place;
    cpuexec__crowd_places_enter(&place, (int32_t)(seed % CHURN_CPUS));
    for (int turn = 0; turn < 3; turn++) {
      seed = seed * 1103515245u + 12345u;
      cpuexec__crowd_look look;
      cpuexec__crowd_places_look(&place, (int32_t)((seed >> 16) % CHURN_CPUS), &look);
      assert_true(look.here >= 1 && look.here <= CHURNERS);
      assert_true(look.fewest <= look.here);
    }
    cpuexec__crowd_places_leave(&place);
  }
  return NULL;
}

static void counts_come_back_after_many_callers_came_moved_and_left(void **state) {
  (void)state;
  pthread_t threads[CHURNERS];
  for (uintptr_t t = 0; t < CHURNERS; t++) assert_int_equal(pthread_create(&threads[t], NULL, churn, (void *)t), 0);
  for (int t = 0; t < CHURNERS; t++) assert_int_equal(pthread_join(threads[t], NULL), 0);
  for (int32_t cpu = 0; cpu < CHURN_CPUS; cpu++) {
    cpuexec__crowd_place one;
    cpuexec__crowd_places_enter(&one, cpu);
    cpuexec__crowd_look look = look_from(&one, cpu);
    assert_int_equal(look.here, 1);
    assert_int_equal(look.fewest, 0);
    cpuexec__crowd_places_leave(&one);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(four_callers_three_on_one_processor_see_the_other),
      cmocka_unit_test(the_emptiest_is_a_processor_that_held_a_crowded_caller),
      cmocka_unit_test(an_unknown_processor_is_counted_nowhere),
      cmocka_unit_test(counts_come_back_after_many_callers_came_moved_and_left),
  };
  return cmocka_run_group_tests_name("where a process's crowded callers run", tests, NULL, NULL);
}
