/* Internal: where this process's crowded callers run (the placement half
 * of the permit model's crowd rule, doc/spinning.md).
 *
 * A crowded caller (permit.h, crowd pieces) runs its region in pieces and
 * yields between them. The kernel places a thread when it wakes and when a
 * processor falls idle, and moves nothing among threads that only yield:
 * four such callers on two processors can stay three on one and one on the
 * other for whole seconds, the lone one running three regions to each of
 * theirs. So each crowded caller of the process counts itself on the
 * processor it runs on while it is inside a crowded region, and at each of
 * its turns looks at its own processor's count and the emptiest one's; the
 * permit model (cpuexec__permit_crowd_moves) decides whether it moves
 * there. The counts are of this process's crowded callers alone, which is
 * why only callers of one process use them (region.c).
 *
 * Use, on the caller's own thread:
 *
 *     cpuexec__crowd_place place;
 *     cpuexec__crowd_places_enter(&place, cpuexec__os_current_cpu());
 *     at each turn: cpuexec__crowd_places_look(&place, cpuexec__os_current_cpu(), &look);
 *     cpuexec__crowd_places_leave(&place);
 *
 * A processor number outside [0, CPUEXEC__CROWD_PLACES) (unknown: -1, or a
 * machine larger than the table) is counted nowhere: that caller sees no
 * imbalance. */
#ifndef CPUEXEC_SRC_CROWD_PLACES_H
#define CPUEXEC_SRC_CROWD_PLACES_H

#include <stdint.h>

#include <cpuexec/policy.h>

/* Processors counted, as many as a policy can name; the table is 3 bytes
 * each. */
#define CPUEXEC__CROWD_PLACES CPUEXEC_CPU_SET_MAX

/* One caller's place: the processor it counts itself on, or -1. */
typedef struct cpuexec__crowd_place {
  int32_t cpu;
} cpuexec__crowd_place;

/* What a caller sees at its turn: the crowded callers on its processor,
 * itself included (`here`), and the fewest on any processor that ever
 * held one (`fewest`, on `emptiest`). here is 0 where the caller's
 * processor is counted nowhere. */
typedef struct cpuexec__crowd_look {
  uint32_t here, fewest;
  int32_t emptiest;
} cpuexec__crowd_look;

/* The caller enters a crowded region on cpu. */
void cpuexec__crowd_places_enter(cpuexec__crowd_place *place, int32_t cpu);

/* The caller runs on cpu now (moved there or not): counts it there and
 * fills *look. */
void cpuexec__crowd_places_look(cpuexec__crowd_place *place, int32_t cpu, cpuexec__crowd_look *look);

/* The caller leaves its crowded region. */
void cpuexec__crowd_places_leave(cpuexec__crowd_place *place);

#endif
