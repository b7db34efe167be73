/* Kernels that declare whether they need an executor
 * (cpuexec_kernel_executor, cpuexec/session.h). */
#include <cpuexec/registry.h>
#include <cpuexec/session.h>

#include "core/error.h"

CPUEXEC_EXPORT int cpuexec_kernel_executor(const char *kernel, cpuexec_executor_need need, cpuexec_executor **out) {
  if (!out) return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass where to store the executor");
  *out = NULL;
  if (need != CPUEXEC_EXECUTOR_SUPPORTED && need != CPUEXEC_EXECUTOR_REQUIRED)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "need: %d is not a cpuexec_executor_need; use CPUEXEC_EXECUTOR_SUPPORTED (0) or "
                         "CPUEXEC_EXECUTOR_REQUIRED (1)",
                         (int)need);
  cpuexec_executor *installed = cpuexec_executor_current();
  if (installed) {
    *out = installed;
    return 0;
  }
  if (need == CPUEXEC_EXECUTOR_REQUIRED)
    return cpuexec__fail(CPUEXEC_ESTATE,
                         "kernel \"%s\": requires an executor and none is installed on this thread; run it inside "
                         "cpuexec_session_run() or a scope (cpuexec_scope_enter), not on the process-wide pool",
                         kernel ? kernel : "kernel");
  return cpuexec_registry_default_executor(out);
}
