/* The cadence model (cadence.h); counters.c shows it (cpuexec_executor_spin_state_get). */
#include "cadence.h"

static inline uint64_t absdiff(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

/* A period seen within max(period / CPUEXEC__CADENCE_TOLERANCE_DIVISOR,
 * CPUEXEC__CADENCE_MIN_TOLERANCE_NS) of the smoothed one keeps the
 * cadence. Once steady, one period outside that is forgiven (a busy
 * machine delays a region now and then: the next one is expected a period
 * after it); two in a row start over, so a stream that stops is forgotten
 * at its second region. A stopped stream costs one window: the worker
 * parks when it passes. */
static cpuexec__cadence_hint decide(cpuexec__cadence *c, uint64_t now);

cpuexec__cadence_hint cpuexec__cadence_note(cpuexec__cadence *c, uint64_t now) {
  cpuexec__cadence_hint h = decide(c, now);
  atomic_store_explicit(&c->shown_period_ns, c->period_ns, memory_order_relaxed);
  atomic_store_explicit(&c->shown_jitter_ns, c->jitter_ns, memory_order_relaxed);
  atomic_store_explicit(&c->shown_steady, c->steady, memory_order_relaxed);
  atomic_store_explicit(&c->shown_window_ns, h.window_ns, memory_order_relaxed);
  return h;
}

static cpuexec__cadence_hint decide(cpuexec__cadence *c, uint64_t now) {
  cpuexec__cadence_hint none = {0, 0};
  uint64_t last = c->last_ns;
  c->last_ns = now;
  if (c->burn_permille == 0 || last == 0 || now <= last) return none;
  uint64_t seen = now - last;
  uint64_t tolerance = c->period_ns / CPUEXEC__CADENCE_TOLERANCE_DIVISOR > CPUEXEC__CADENCE_MIN_TOLERANCE_NS
                           ? c->period_ns / CPUEXEC__CADENCE_TOLERANCE_DIVISOR
                           : CPUEXEC__CADENCE_MIN_TOLERANCE_NS;
  uint64_t err = absdiff(seen, c->period_ns);
  if (c->period_ns == 0 || (err > tolerance && c->outliers >= 1) || c->steady < CPUEXEC__CADENCE_STEADY) {
    if (c->period_ns == 0 || err > tolerance) {
      /* A new cadence (or none): start over from this period. */
      c->period_ns = seen;
      c->jitter_ns = 0;
      c->steady = 0;
      c->outliers = 0;
      return none;
    }
  } else if (err > tolerance) {
    /* One late region in a steady stream (a preempted caller, a long
     * sleep): keep the cadence, expect the next one a period from now. */
    c->outliers++;
    goto predict;
  }
  c->outliers = 0;
  c->steady++;
  c->period_ns = (c->period_ns * 7 + seen) / 8;
  c->jitter_ns = (c->jitter_ns * 3 + err) / 4;
  if (c->steady < CPUEXEC__CADENCE_STEADY) return none;
predict:;
  /* The window covers three mean deviations, and costs at most the budget:
   * all of it spun, plus the early wake. A window the budget cannot give
   * even its narrowest width is not followed. */
  uint64_t window = 3 * c->jitter_ns + CPUEXEC__CADENCE_MIN_WINDOW_NS;
  uint64_t budget = c->period_ns / 1000u * c->burn_permille;
  if (budget < 2u * CPUEXEC__CADENCE_MIN_WINDOW_NS + CPUEXEC__CADENCE_WAKE_LEAD_NS) return none;
  uint64_t widest = (budget - CPUEXEC__CADENCE_WAKE_LEAD_NS) / 2;
  if (window > widest) window = widest;
  cpuexec__cadence_hint h = {now + c->period_ns, window};
  return h;
}
