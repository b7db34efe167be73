/* Where this process's crowded callers run (crowd_places.h). */
#include "crowd_places.h"

#include <stdatomic.h>

/* Crowded callers per processor; which processors ever held one (the only
 * ones a caller may move to: the others may be outside every caller's
 * affinity); and one past the highest of those, so that a look reads as
 * many counts as the crowded callers ever used, not the whole table. A
 * count changes only when a crowded caller enters, leaves, or finds itself
 * moved. */
static _Atomic uint16_t crowded_on[CPUEXEC__CROWD_PLACES];
static _Atomic uint8_t held_one[CPUEXEC__CROWD_PLACES];
static _Atomic int32_t places_used;

static int32_t counted(int32_t cpu) { return cpu >= 0 && cpu < CPUEXEC__CROWD_PLACES ? cpu : -1; }

static void count_on(int32_t cpu) {
  if (cpu < 0) return;
  atomic_fetch_add_explicit(&crowded_on[cpu], 1, memory_order_relaxed);
  if (atomic_load_explicit(&held_one[cpu], memory_order_relaxed)) return;
  atomic_store_explicit(&held_one[cpu], 1, memory_order_relaxed);
  int32_t used = atomic_load_explicit(&places_used, memory_order_relaxed);
  while (used <= cpu &&
         !atomic_compare_exchange_weak_explicit(&places_used, &used, cpu + 1, memory_order_relaxed, memory_order_relaxed)) {
  }
}

static void uncount_on(int32_t cpu) {
  if (cpu >= 0) atomic_fetch_sub_explicit(&crowded_on[cpu], 1, memory_order_relaxed);
}

void cpuexec__crowd_places_enter(cpuexec__crowd_place *place, int32_t cpu) {
  place->cpu = counted(cpu);
  count_on(place->cpu);
}

void cpuexec__crowd_places_look(cpuexec__crowd_place *place, int32_t cpu, cpuexec__crowd_look *look) {
  cpu = counted(cpu);
  if (cpu != place->cpu) {
    count_on(cpu);
    uncount_on(place->cpu);
    place->cpu = cpu;
  }
  *look = (cpuexec__crowd_look){.here = 0, .fewest = 0, .emptiest = -1};
  if (cpu < 0) return;
  /* The counts are read one by one while other callers move: one counted
   * on two processors for a moment, or on none, may make one look see an
   * imbalance that is not there, or miss one; the next turn looks again. */
  look->here = atomic_load_explicit(&crowded_on[cpu], memory_order_relaxed);
  look->fewest = look->here;
  look->emptiest = cpu;
  int32_t used = atomic_load_explicit(&places_used, memory_order_relaxed);
  for (int32_t c = 0; c < used; c++) {
    if (!atomic_load_explicit(&held_one[c], memory_order_relaxed)) continue;
    uint32_t n = atomic_load_explicit(&crowded_on[c], memory_order_relaxed);
    if (n < look->fewest) {
      look->fewest = n;
      look->emptiest = c;
    }
  }
}

void cpuexec__crowd_places_leave(cpuexec__crowd_place *place) {
  uncount_on(place->cpu);
  place->cpu = -1;
}
