/* The policy request: defaults, enum names, equality and the request-only
 * rules. The text form and CPUEXEC_POLICY live in policy_text.c. */
#include <stdlib.h>
#include <string.h>

#include <cpuexec/policy.h>

#include "cpulist.h"
#include "core/error.h"
#include "policy_check.h"

CPUEXEC_EXPORT void cpuexec_policy_init(cpuexec_policy *policy) {
  if (!policy)
    return;
  /* memset first so padding and the unused cpu_set tail are zero: a policy
   * can then be compared or hashed byte for byte by callers that want to. */
  memset(policy, 0, sizeof *policy);
  policy->struct_size = (uint32_t)sizeof *policy;
  policy->num_threads = 0;
  policy->spin_policy = CPUEXEC_SPIN_ADAPTIVE;
  policy->spin_budget = 0;
  policy->affinity_policy = CPUEXEC_AFFINITY_NONE;
  policy->cpu_set_count = 0;
  policy->allow_nested_parallelism = false;
  policy->inherit_fp_environment = false;
  policy->participation = CPUEXEC_PARTICIPATION_TAKE_OVER;
  policy->node_budget = CPUEXEC_NODE_BUDGET_DEFAULT;
}

CPUEXEC_EXPORT const char *cpuexec_node_budget_name(cpuexec_node_budget budget) {
  switch (budget) {
  case CPUEXEC_NODE_BUDGET_DEFAULT:
    return "default";
  case CPUEXEC_NODE_BUDGET_CGROUP:
    return "cgroup";
  case CPUEXEC_NODE_BUDGET_HOST:
    return "host";
  case CPUEXEC_NODE_BUDGET_OFF:
    return "off";
  }
  return NULL;
}

CPUEXEC_EXPORT const char *cpuexec_participation_name(cpuexec_participation participation) {
  switch (participation) {
  case CPUEXEC_PARTICIPATION_TAKE_OVER:
    return "take_over";
  case CPUEXEC_PARTICIPATION_EVERY_PARTICIPANT:
    return "every_participant";
  }
  return NULL;
}

CPUEXEC_EXPORT const char *cpuexec_spin_policy_name(cpuexec_spin_policy spin) {
  switch (spin) {
  case CPUEXEC_SPIN_ADAPTIVE:
    return "adaptive";
  case CPUEXEC_SPIN_FIXED_ITERATIONS:
    return "fixed_iterations";
  case CPUEXEC_SPIN_FIXED_DURATION:
    return "fixed_duration";
  case CPUEXEC_SPIN_PARK_IMMEDIATELY:
    return "park_immediately";
  }
  return NULL;
}

CPUEXEC_EXPORT const char *cpuexec_affinity_policy_name(cpuexec_affinity_policy affinity) {
  switch (affinity) {
  case CPUEXEC_AFFINITY_NONE:
    return "none";
  case CPUEXEC_AFFINITY_PHYSICAL_CORES:
    return "physical_cores";
  case CPUEXEC_AFFINITY_PERFORMANCE_CORES:
    return "performance_cores";
  case CPUEXEC_AFFINITY_PHYSICAL_THEN_SMT:
    return "physical_then_smt";
  case CPUEXEC_AFFINITY_EXPLICIT:
    return "explicit";
  }
  return NULL;
}

CPUEXEC_EXPORT bool cpuexec_policy_equal(const cpuexec_policy *a, const cpuexec_policy *b) {
  if (a == b)
    return true;
  if (!a || !b)
    return false;
  if (a->num_threads != b->num_threads || a->spin_policy != b->spin_policy || a->spin_budget != b->spin_budget ||
      a->affinity_policy != b->affinity_policy || a->cpu_set_count != b->cpu_set_count ||
      a->allow_nested_parallelism != b->allow_nested_parallelism ||
      a->inherit_fp_environment != b->inherit_fp_environment || a->participation != b->participation ||
      a->node_budget != b->node_budget)
    return false;
  /* A count past the array (a policy filled by hand) compares only what exists. */
  int32_t n = a->cpu_set_count < 0 ? 0 : a->cpu_set_count < CPUEXEC_CPU_SET_MAX ? a->cpu_set_count : CPUEXEC_CPU_SET_MAX;
  return memcmp(a->cpu_set, b->cpu_set, (size_t)n * sizeof a->cpu_set[0]) == 0;
}

int cpuexec__policy_check(const cpuexec_policy *p) {
  if (p->struct_size != 0 && p->struct_size != sizeof *p)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "struct_size: %u is not this library's cpuexec_policy (%zu bytes); start from "
                         "cpuexec_policy_init() or {0}",
                         (unsigned)p->struct_size, sizeof *p);
  const char *spin = cpuexec_spin_policy_name(p->spin_policy);
  const char *affinity = cpuexec_affinity_policy_name(p->affinity_policy);
  if (!spin)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "spin_policy: %d is not a spin policy; use adaptive, fixed_iterations, fixed_duration or "
                         "park_immediately",
                         (int)p->spin_policy);
  if (!affinity)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "affinity_policy: %d is not an affinity policy; use none, physical_cores, "
                         "performance_cores, physical_then_smt or explicit",
                         (int)p->affinity_policy);
  if (!cpuexec_participation_name(p->participation))
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "participation: %d is not a participation rule; use take_over or every_participant",
                         (int)p->participation);
  if (!cpuexec_node_budget_name(p->node_budget))
    return cpuexec__fail(CPUEXEC_EINVAL, "node_budget: %d is not a node budget choice; use default, cgroup, host or off",
                         (int)p->node_budget);
  if (p->num_threads < 0)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "num_threads: %d is negative; use 0 for the topology default, 1 for serial or a "
                         "participant count",
                         (int)p->num_threads);

  bool fixed = p->spin_policy == CPUEXEC_SPIN_FIXED_ITERATIONS || p->spin_policy == CPUEXEC_SPIN_FIXED_DURATION;
  if (fixed && p->spin_budget == 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "spin_budget: 0 with spin_policy=%s; a fixed spin needs a budget above 0 (%s)",
                         spin,
                         p->spin_policy == CPUEXEC_SPIN_FIXED_DURATION ? "a duration such as 50us"
                                                                      : "an iteration count such as 1000");
  if (!fixed && p->spin_budget != 0)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "spin_budget: %llu with spin_policy=%s; only fixed_iterations and fixed_duration take a "
                         "budget, so leave it 0",
                         (unsigned long long)p->spin_budget, spin);

  if (p->cpu_set_count < 0 || p->cpu_set_count > CPUEXEC_CPU_SET_MAX)
    return cpuexec__fail(CPUEXEC_EINVAL, "cpu_set_count: %d; use 0 to %d entries", (int)p->cpu_set_count,
                         CPUEXEC_CPU_SET_MAX);
  if (p->cpu_set_count > 0 && p->affinity_policy != CPUEXEC_AFFINITY_EXPLICIT)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "cpu_set: given with affinity_policy=%s; a cpu_set needs affinity_policy=explicit", affinity);
  if (p->cpu_set_count == 0 && p->affinity_policy == CPUEXEC_AFFINITY_EXPLICIT)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "affinity_policy: explicit without a cpu_set; list the caller's processor first, then the "
                         "workers' (for example cpu_set=0,2-3)");
  for (int32_t i = 0; i < p->cpu_set_count; i++)
    if (p->cpu_set[i] < 0)
      return cpuexec__fail(CPUEXEC_EINVAL, "cpu_set: entry %u is %d; processor ids are 0 or above", (unsigned)i,
                           (int)p->cpu_set[i]);
  int64_t dup = cpuexec__cpulist_find_duplicate(p->cpu_set, (uint32_t)p->cpu_set_count);
  if (dup >= 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "cpu_set: processor %d is listed twice; each processor may appear once",
                         (int)p->cpu_set[dup]);
  return 0;
}

CPUEXEC_EXPORT int cpuexec_policy_validate(const cpuexec_policy *policy) {
  if (!policy)
    return cpuexec__fail(CPUEXEC_EINVAL, "policy: NULL; pass the cpuexec_policy to check");
  return cpuexec__policy_check(policy);
}
