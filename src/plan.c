/* Costed planning: how many participants a loop deserves, and its grain.
 *
 * The model, in nanoseconds:
 *   t      = compute_cycles * NS_PER_CYCLE + (bytes_read + bytes_written) * NS_PER_BYTE
 *            (the time of one iteration on one participant)
 *   W      = total * t
 *   T(1)   = W                                    (inline: no dispatch at all)
 *   T(p)   = W / p + DISPATCH_NS + PER_PARTICIPANT_NS * (p - 1)     for p >= 2
 * The plan takes the smallest p in [1, limit] that minimizes T, where limit is
 * min(constraints->max_participants or the executor's threads, the executor's
 * threads, total). T(p+1) - T(p) falls as W grows, so more work (or more
 * compute per byte, which only raises t) never plans fewer participants.
 * A preferred participant count p' (clamped to the limit) replaces the
 * model's choice when T(p') < T(1), i.e. whenever going parallel pays at all.
 *
 * Grain: each participant gets about CHUNKS_PER_PARTICIPANT ranges, so a
 * participant that finishes early has something to take, but no range is
 * shorter than MIN_RANGE_NS of work (a claim and a call cost ~20-50 ns), and
 * there are at least p ranges so every planned participant runs.
 *
 * Calibration: bench/executor-calibrate (built by `make`), run on the
 * 2-core development VM (Xeon, KVM, busy with other builds), three runs,
 * typical values:
 *   dispatch_ns 330-343  (a 2-participant region with an empty body, 346-353
 *                         ns, minus an inline call, 9-16 ns)
 *   ns_per_byte 0.058-0.092 (one participant streaming axpy over 16M floats)
 *   ns_per_cycle 0.344-0.390 (dependent adds: ~2.7 GHz)
 * T(2) is the measured 2-participant cost: DISPATCH_NS + PER_PARTICIPANT_NS
 * = 350. The cost of each further participant cannot be measured on 2 cores
 * (8 participants there measure parking: 3-12 us each); it is one more slot
 * line written and one more atomic add arriving, taken as one cross-core
 * line transfer, 100-240 ns on this VM (a two-thread ping-pong), so 150.
 * Re-run the program on new hardware and update the constants.
 *
 * A foreign executor with its own planner (include/cpuexec/foreign.h) plans
 * instead of this model, for total >= 2; its plan is checked against the
 * same limit. */
#include <math.h>
#include <string.h>

#include "error.h"
#include "executor_internal.h"

#define CPUEXEC__PLAN_DISPATCH_NS 200.0
#define CPUEXEC__PLAN_PER_PARTICIPANT_NS 150.0
#define CPUEXEC__PLAN_NS_PER_BYTE 0.075
#define CPUEXEC__PLAN_NS_PER_CYCLE 0.36
#define CPUEXEC__PLAN_MIN_RANGE_NS 2000.0
#define CPUEXEC__PLAN_CHUNKS_PER_PARTICIPANT 8

static double plan_time(double work, uint32_t p) {
  if (p <= 1) return work;
  return work / p + CPUEXEC__PLAN_DISPATCH_NS + CPUEXEC__PLAN_PER_PARTICIPANT_NS * (p - 1);
}

static bool valid_cost(double v) { return isfinite(v) && v >= 0.0; }

CPUEXEC_EXPORT int cpuexec_plan_parallel_for(const cpuexec_executor *exec, int64_t total, const cpuexec_cost *cost,
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

  double iteration_ns = cost->compute_cycles * CPUEXEC__PLAN_NS_PER_CYCLE +
                        (cost->bytes_read + cost->bytes_written) * CPUEXEC__PLAN_NS_PER_BYTE;
  double work = (double)total * iteration_ns;
  uint32_t best = 1;
  double best_time = plan_time(work, 1);
  for (uint32_t p = 2; p <= limit; p++) {
    double t = plan_time(work, p);
    if (t < best_time) {
      best = p;
      best_time = t;
    }
  }
  if (constraints && constraints->preferred_participants != 0) {
    uint32_t preferred =
        (uint32_t)constraints->preferred_participants < limit ? (uint32_t)constraints->preferred_participants : limit;
    if (preferred == 1 || plan_time(work, preferred) < plan_time(work, 1)) best = preferred;
  }
  if (best == 1) return 0;

  int64_t grain = total / ((int64_t)best * CPUEXEC__PLAN_CHUNKS_PER_PARTICIPANT);
  if (iteration_ns > 0.0) {
    double min_grain = ceil(CPUEXEC__PLAN_MIN_RANGE_NS / iteration_ns);
    if (min_grain > (double)grain) grain = min_grain >= (double)total ? total : (int64_t)min_grain;
  }
  if (grain > total / best) grain = total / best; /* at least one range per participant */
  if (grain < 1) grain = 1;
  plan->grain = grain;
  plan->participants = (int32_t)best;
  return 0;
}

CPUEXEC_EXPORT int cpuexec_parallel_for_costed(cpuexec_executor *exec, int64_t total, const cpuexec_cost *cost,
                                               const cpuexec_plan_constraints *constraints, void *ctx,
                                               cpuexec_range_fn fn) {
  cpuexec_plan plan;
  int rc = cpuexec_plan_parallel_for(exec, total, cost, constraints, &plan);
  if (rc != 0) return rc;
  return cpuexec_parallel_for(exec, total, plan.grain, ctx, fn, plan.participants);
}

CPUEXEC_EXPORT void cpuexec_cost_init(cpuexec_cost *cost) {
  if (cost) memset(cost, 0, sizeof *cost);
}

CPUEXEC_EXPORT void cpuexec_plan_constraints_init(cpuexec_plan_constraints *constraints) {
  if (constraints) memset(constraints, 0, sizeof *constraints);
}
