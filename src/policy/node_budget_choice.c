/* The node budget of the environment (node_budget_choice.h). */
#include "node_budget_choice.h"

#include "core/env.h"
#include "core/text.h"

cpuexec_node_budget cpuexec__node_budget_from_environment(const char **from, bool *understood) {
  if (understood) *understood = true;
#ifdef _WIN32
  *from = "the node budget is not built for Windows";
  return CPUEXEC_NODE_BUDGET_OFF;
#else
  size_t len;
  const char *mode = cpuexec__env_value("CPUEXEC_NODE_BUDGET", &len);
  *from = "CPUEXEC_NODE_BUDGET";
  if (mode == NULL) {
    *from = "the default";
    return CPUEXEC_NODE_BUDGET_CGROUP;
  }
  if (cpuexec__text_is(mode, len, "off")) return CPUEXEC_NODE_BUDGET_OFF;
  if (cpuexec__text_is(mode, len, "host")) return CPUEXEC_NODE_BUDGET_HOST;
  if (!cpuexec__text_is(mode, len, "cgroup") && !cpuexec__text_is(mode, len, "on")) {
    *from = "the default (CPUEXEC_NODE_BUDGET is not off, on, cgroup or host)";
    if (understood) *understood = false;
  }
  return CPUEXEC_NODE_BUDGET_CGROUP;
#endif
}
