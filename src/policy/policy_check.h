/* Internal: the rules a policy request must meet on any machine.
 *
 * cpuexec_policy_parse() applies them to every text it accepts, and
 * cpuexec_policy_resolve() can apply them to requests built field by field, so the
 * two agree on what a valid request is and on the messages. Rules that need
 * a topology (ids outside the process-visible set, more threads than
 * processors, an explicit set whose size differs from num_threads) are
 * resolution's. */
#ifndef CPUEXEC_SRC_POLICY_CHECK_H
#define CPUEXEC_SRC_POLICY_CHECK_H

#include <cpuexec/policy.h>

/* 0, or CPUEXEC_EINVAL with cpuexec_error_message() naming the field, the value
 * and what is allowed, for the first of these that fails:
 * - spin_policy and affinity_policy are values of their enums;
 * - num_threads is not negative;
 * - FIXED_ITERATIONS and FIXED_DURATION have spin_budget > 0; ADAPTIVE and
 *   PARK_IMMEDIATELY have spin_budget 0;
 * - cpu_set_count <= CPUEXEC_CPU_SET_MAX; a non-empty cpu_set only with
 *   EXPLICIT affinity, and EXPLICIT only with a non-empty cpu_set;
 * - cpu_set ids are not negative and none appears twice. */
int cpuexec__policy_check(const cpuexec_policy *policy);

#endif
