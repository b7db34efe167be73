/* The cadence model (cadence.h) and what it shows (cpuexec_executor_spin_state). */
#include <string.h>

#include "error.h"
#include "executor_internal.h"

static inline uint64_t absdiff(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

/* A period seen within max(period / 8, 20 us) of the smoothed one keeps the
 * cadence; anything else starts over from it, so a stream that stops (one
 * long gap) is forgotten at its next region. */
cpuexec__cadence_hint cpuexec__cadence_note(struct cpuexec_executor *exec, uint64_t now) {
  cpuexec__cadence *c = &exec->cadence;
  cpuexec__cadence_hint none = {0, 0};
  uint64_t last = c->last_ns;
  c->last_ns = now;
  if (c->burn_permille == 0 || last == 0 || now <= last) return c->hint = none;
  uint64_t seen = now - last;
  uint64_t tolerance = c->period_ns / 8 > 20000u ? c->period_ns / 8 : 20000u;
  uint64_t err = absdiff(seen, c->period_ns);
  if (c->period_ns == 0 || err > tolerance) {
    c->period_ns = seen;
    c->jitter_ns = 0;
    c->steady = 0;
    return c->hint = none;
  }
  c->steady++;
  c->period_ns = (c->period_ns * 7 + seen) / 8;
  c->jitter_ns = (c->jitter_ns * 3 + err) / 4;
  if (c->steady < CPUEXEC__CADENCE_STEADY) return c->hint = none;
  /* The window covers three mean deviations, and costs at most the budget:
   * all of it spun, plus the early wake. A window the budget cannot give
   * even its narrowest width is not followed. */
  uint64_t window = 3 * c->jitter_ns + CPUEXEC__CADENCE_MIN_WINDOW_NS;
  uint64_t budget = c->period_ns / 1000u * c->burn_permille;
  if (budget < 2u * CPUEXEC__CADENCE_MIN_WINDOW_NS + CPUEXEC__CADENCE_WAKE_LEAD_NS) return c->hint = none;
  uint64_t widest = (budget - CPUEXEC__CADENCE_WAKE_LEAD_NS) / 2;
  if (window > widest) window = widest;
  cpuexec__cadence_hint h = {now + c->period_ns, window};
  return c->hint = h;
}

CPUEXEC_EXPORT int cpuexec_executor_spin_state(const cpuexec_executor *exec, cpuexec_spin_state *out) {
  if (!exec || !out) return cpuexec__fail(CPUEXEC_EINVAL, "%s: NULL", !exec ? "exec" : "out");
  memset(out, 0, sizeof *out);
  struct cpuexec_executor *e = (struct cpuexec_executor *)exec;
  out->spin_ns = exec->spin.mode == CPUEXEC__SPIN_DURATION ? exec->spin.ns : 0;
  out->spin_iterations = exec->spin.mode == CPUEXEC__SPIN_ITERATIONS ? exec->spin.iterations : 0;
  if (cpuexec__executor_inherited(exec)) return 0; /* the lock may be held by a thread lost in fork() */
  pthread_mutex_lock(&e->dispatch_lock);
  const cpuexec__cadence *c = &e->cadence;
  out->follows_cadence = c->burn_permille != 0;
  out->burn_permille = c->burn_permille;
  out->cadence_ns = c->period_ns;
  out->jitter_ns = c->jitter_ns;
  out->steady_regions = c->steady;
  out->following = c->hint.expect_ns != 0;
  out->window_ns = c->hint.window_ns;
  pthread_mutex_unlock(&e->dispatch_lock);
  return 0;
}
