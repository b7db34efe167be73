/* Costed planning: how many participants a loop deserves, and its grain.
 *
 * The model, in nanoseconds, for `total` iterations of the declared cost
 * (bytes read and written, compute cycles per iteration):
 *   C      = total * compute_cycles * NS_PER_CYCLE            (compute)
 *   B      = total * (bytes_read + bytes_written) * ns_per_byte  (data)
 *            ns_per_byte is NS_PER_BYTE_CACHED while the loop's footprint
 *            (total * bytes) fits CACHED_BYTES, NS_PER_BYTE_MEMORY above:
 *            a loop over data in cache moves bytes ~4x faster than one
 *            streaming from memory
 *   T(1)   = C + B                                   (inline: no dispatch)
 *   T(p)   = C / p + B / min(p, BANDWIDTH_PARTICIPANTS)  (memory bandwidth
 *            saturates: past a few streams, more cores move no more bytes)
 *            + DISPATCH_NS + PER_PARTICIPANT_NS * (p - 1)      for p >= 2
 * and the plan is the SMALLEST p in [1, limit] whose T(p) is within
 * TOLERANCE of the best T, where limit is min(constraints->max_participants
 * or the executor's threads, the executor's threads, total). Near its
 * minimum T is flat, so the smallest count within a few percent costs
 * almost nothing in time and saves participants that would each pay a
 * wake-up (a parked worker costs microseconds, not the hot-dispatch cost
 * the model counts), and a loop goes parallel only when that saves more
 * than TOLERANCE: a near-tie stays on the caller.
 * A preferred participant count p' (clamped to the limit) replaces the
 * model's choice only when the model already goes parallel: a preference
 * says how wide, never whether.
 *
 * Grain: each participant gets up to CHUNKS_PER_PARTICIPANT ranges, so a
 * participant that finishes early has something to take, but no range is
 * shorter than MIN_RANGE_NS of work (a claim and a call cost ~20-50 ns),
 * there are at least p ranges so every planned participant runs, and of
 * the chunk counts allowed the one that leaves the busiest participant the
 * least work wins (ties: more chunks).
 *
 * Calibration: bench/calibration/executor_calibrate (built by `make`;
 * `cpuexec-info --bench` prints the same figures for the machine it runs
 * on) gives DISPATCH_NS, the ns per byte and NS_PER_CYCLE;
 * bench/calibration/plan_regret (`make bench-plan`) gives TOLERANCE and
 * checks T(2)'s fixed cost. The figures that chose every constant, and why
 * PER_PARTICIPANT_NS, BANDWIDTH_PARTICIPANTS and CACHED_BYTES cannot be
 * timed on two cores, are in doc/performance.md ("The calibration
 * figures"). Re-run the programs on new hardware and update the constants.
 *
 * A foreign executor with its own planner (include/cpuexec/foreign.h) plans
 * instead of this model, for total >= 2; its plan is checked against the
 * same limit. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "executor_internal.h"
#include "plan_model.h"

typedef struct plan_work {
  double compute; /* C, ns */
  double data;    /* B, ns */
} plan_work;

static double plan_time(const plan_work *w, uint32_t p) {
  if (p <= 1) return w->compute + w->data;
  uint32_t streams = p < CPUEXEC__PLAN_BANDWIDTH_PARTICIPANTS ? p : CPUEXEC__PLAN_BANDWIDTH_PARTICIPANTS;
  return w->compute / p + w->data / streams + CPUEXEC__PLAN_DISPATCH_NS + CPUEXEC__PLAN_PER_PARTICIPANT_NS * (p - 1);
}

static bool valid_cost(double v) { return isfinite(v) && v >= 0.0; }

CPUEXEC_EXPORT int cpuexec_parallel_for_plan(const cpuexec_executor *exec, int64_t total, const cpuexec_cost *cost,
                                             const cpuexec_plan_constraints *constraints, cpuexec_plan *plan) {
  if (!cost || !plan) return cpuexec__fail(CPUEXEC_EINVAL, "%s: NULL", !cost ? "cost" : "plan");
  if (!valid_cost(cost->bytes_read) || !valid_cost(cost->bytes_written) || !valid_cost(cost->compute_cycles))
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "cost: bytes_read %g, bytes_written %g, compute_cycles %g; each must be finite and >= 0",
                         cost->bytes_read, cost->bytes_written, cost->compute_cycles);
  if (constraints && (constraints->max_participants < 0 || constraints->preferred_participants < 0))
    return cpuexec__fail(CPUEXEC_EINVAL, "constraints: %s %d is negative; use 0 for no constraint",
                         constraints->max_participants < 0 ? "max_participants" : "preferred_participants",
                         (int)(constraints->max_participants < 0 ? constraints->max_participants
                                                                 : constraints->preferred_participants));
  memset(plan, 0, sizeof *plan);
  plan->grain = total > 0 ? total : 1;
  plan->participants = 1;
  if (total <= 1) return 0;
  int foreign_rc;
  if (cpuexec__foreign_plan(exec, total, cost, constraints, plan, &foreign_rc)) return foreign_rc;

  uint32_t limit = exec ? exec->threads : 1;
  if (constraints && constraints->max_participants != 0 && (uint32_t)constraints->max_participants < limit)
    limit = (uint32_t)constraints->max_participants;
  if ((int64_t)limit > total) limit = (uint32_t)total;

  double bytes = cost->bytes_read + cost->bytes_written;
  double ns_per_byte = (double)total * bytes <= CPUEXEC__PLAN_CACHED_BYTES ? CPUEXEC__PLAN_NS_PER_BYTE_CACHED
                                                                           : CPUEXEC__PLAN_NS_PER_BYTE_MEMORY;
  plan_work w = {(double)total * cost->compute_cycles * CPUEXEC__PLAN_NS_PER_CYCLE,
                 (double)total * bytes * ns_per_byte};
  double iteration_ns = (w.compute + w.data) / (double)total;
  double best_time = plan_time(&w, 1);
  for (uint32_t p = 2; p <= limit; p++) {
    double t = plan_time(&w, p);
    if (t < best_time) best_time = t;
  }
  uint32_t best = 1;
  while (best < limit && plan_time(&w, best) > best_time * (1.0 + CPUEXEC__PLAN_TOLERANCE)) best++;
  if (best > 1 && constraints && constraints->preferred_participants != 0)
    best = (uint32_t)constraints->preferred_participants < limit ? (uint32_t)constraints->preferred_participants : limit;
  if (best == 1) return 0;

  /* k chunks per participant: up to CHUNKS_PER_PARTICIPANT, fewer when a
   * chunk would fall under MIN_RANGE_NS; among those, the k whose split
   * leaves the busiest participant the least work (16 rows on 2
   * participants in chunks of 6 would give one of them 12). */
  int64_t kmax = CPUEXEC__PLAN_CHUNKS_PER_PARTICIPANT;
  if (iteration_ns > 0.0) {
    double fit = floor((double)total / ((double)best * ceil(CPUEXEC__PLAN_MIN_RANGE_NS / iteration_ns)));
    if (fit < (double)kmax) kmax = fit < 1.0 ? 1 : (int64_t)fit;
  }
  int64_t grain = total / best, busiest = INT64_MAX;
  for (int64_t k = 1; k <= kmax; k++) {
    int64_t split = (int64_t)best * k;
    int64_t candidates[2] = {total / split, total / split + (total % split != 0)};
    for (int c = 0; c < 2; c++) {
      int64_t g = candidates[c];
      if (g < 1) continue;
      int64_t chunks = total / g + (total % g != 0);
      if (chunks < (int64_t)best) continue; /* every planned participant runs a range */
      int64_t most = (chunks / best + (chunks % best != 0)) * g;
      if (most <= busiest) busiest = most, grain = g;
    }
  }
  plan->grain = grain;
  plan->participants = (int32_t)best;
  return 0;
}

CPUEXEC_EXPORT int cpuexec_parallel_for_costed(cpuexec_executor *exec, int64_t total, const cpuexec_cost *cost,
                                               const cpuexec_plan_constraints *constraints, void *ctx,
                                               cpuexec_range_fn fn) {
  cpuexec_plan plan;
  int rc = cpuexec_parallel_for_plan(exec, total, cost, constraints, &plan);
  if (rc != 0) return rc;
  return cpuexec_parallel_for(exec, total, plan.grain, ctx, fn, plan.participants);
}

CPUEXEC_EXPORT void cpuexec_cost_init(cpuexec_cost *cost) {
  if (cost) memset(cost, 0, sizeof *cost);
}

CPUEXEC_EXPORT void cpuexec_plan_constraints_init(cpuexec_plan_constraints *constraints) {
  if (constraints) memset(constraints, 0, sizeof *constraints);
}
