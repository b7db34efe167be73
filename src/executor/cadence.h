/* Internal: following the cadence of calls (doc/spinning.md).
 *
 * Inference servers and frame loops call an executor at a steady rhythm:
 * a region every 1 or 10 ms, serial work between. A worker that parks
 * after a fixed short spin wakes for every such region through the kernel
 * (tens of microseconds); one that spins through every gap burns a
 * whole processor. The adaptive policy does neither: each worker learns
 * the time between the regions it sees (from the clock reads its spin
 * makes anyway, so the dispatching thread reads no clock), and when it has
 * been steady for a few regions the worker sleeps (a timed park) until
 * shortly before the next one is expected and spins across a window
 * around it, so the region finds it spinning; when the window passes
 * without a region it parks for good. The spin a worker spends on one
 * window is bounded by a share of the period (the burn budget), so a
 * cadence is followed only when it is cheap enough. */
#ifndef CPUEXEC_SRC_CADENCE_H
#define CPUEXEC_SRC_CADENCE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/tunables.h"

/* The burn budget is the resolution's (CPUEXEC__CADENCE_BURN_PERMILLE),
 * copied into each worker's model; the cadence's other constants are in
 * core/tunables.h. */

/* What the dispatcher tells a worker about the next region: expected at
 * expect_ns (CLOCK_MONOTONIC), spin from expect - window to expect +
 * window. expect_ns 0: no cadence, the plain spin then park. */
typedef struct cpuexec__cadence_hint {
  uint64_t expect_ns;
  uint64_t window_ns;
} cpuexec__cadence_hint;

/* A worker's model of the cadence. The plain fields are the worker's own;
 * the shown_* copies are stored (relaxed) after every update for
 * cpuexec_executor_spin_state_get, which may read them from any thread. */
typedef struct cpuexec__cadence {
  uint64_t last_ns;   /* when the previous region was seen (0: none yet) */
  uint64_t period_ns; /* smoothed time between regions */
  uint64_t jitter_ns; /* smoothed |period seen - period_ns| */
  uint32_t steady;    /* regions in a row within tolerance of period_ns */
  uint32_t outliers;  /* regions in a row outside it since the cadence was steady */
  uint32_t burn_permille; /* 0: never follow (not the adaptive policy); set at creation */
  _Atomic uint64_t shown_period_ns;
  _Atomic uint64_t shown_jitter_ns;
  _Atomic uint64_t shown_window_ns; /* 0: not following */
  _Atomic uint32_t shown_steady;
} cpuexec__cadence;

/* Notes a region seen at now_ns; returns when to expect the next one. */
cpuexec__cadence_hint cpuexec__cadence_note(cpuexec__cadence *c, uint64_t now_ns);

#endif
