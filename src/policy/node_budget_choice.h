/* Internal: the node budget a pool shares when its policy names none
 * (node_budget=default, cpuexec/policy.h): CPUEXEC_NODE_BUDGET's choice,
 * else the cgroup's. The resolver writes it into every resolution, and the
 * node level (src/node/node_budget.c) starts from the same variable. */
#ifndef CPUEXEC_SRC_NODE_BUDGET_CHOICE_H
#define CPUEXEC_SRC_NODE_BUDGET_CHOICE_H

#include <stdbool.h>

#include <cpuexec/policy.h>

/* CGROUP, HOST or OFF as CPUEXEC_NODE_BUDGET says (CGROUP when unset or
 * not understood: *understood false for the latter, where not NULL; the
 * node level warns of it when it starts), OFF where the node level is not
 * built (Windows); *from says where the choice came from, for a
 * resolution's description (static text). */
cpuexec_node_budget cpuexec__node_budget_from_environment(const char **from, bool *understood);

#endif
