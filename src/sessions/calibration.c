/* Calibration's entry point: check the profile's descriptor against the
 * executor it would measure, then lease and install that executor for the
 * callback (cpuexec/counters.h, cpuexec_calibration_run). */
#include <string.h>

#include <cpuexec/counters.h>
#include <cpuexec/registry.h>
#include <cpuexec/resolve.h>
#include <cpuexec/session.h>

#include "executor/counters_internal.h"
#include "core/error.h"
#include "registry_internal.h"
#include "resolve/resolved.h"

static int run_installed(cpuexec_executor *exec, int (*fn)(void *, cpuexec_executor *), void *user) {
  cpuexec_scope scope;
  int rc = cpuexec_scope_enter(exec, &scope);
  if (rc != 0) return rc;
  int value = fn(user, exec);
  cpuexec_scope_leave(&scope);
  /* The callback rule of cpuexec/errors.h: its value is never a return code. */
  return cpuexec__callback_rc(value);
}

CPUEXEC_EXPORT int cpuexec_calibration_run(cpuexec_executor *exec, const cpuexec_descriptor *expected,
                                           int (*fn)(void *user, cpuexec_executor *exec), void *user) {
  if (!expected || !fn)
    return cpuexec__fail(CPUEXEC_EINVAL, "%s: NULL; pass the profile's descriptor and the calibration callback",
                         !expected ? "expected" : "fn");
  if (!exec) exec = cpuexec_executor_current();
  cpuexec_descriptor have;
  if (exec) {
    cpuexec_executor_descriptor_get(exec, &have); /* a foreign executor's too */
    int rc = cpuexec__descriptor_compare(&have, expected);
    if (rc != 0) return rc;
    /* The caller holds exec; a reference of our own keeps it for the call
     * even if that holder releases it from another thread meanwhile. */
    bool leased = cpuexec_executor_retain(exec) == 0;
    rc = run_installed(exec, fn, user);
    if (leased) cpuexec_executor_release(exec);
    return rc;
  }
  const cpuexec_resolved *resolved;
  int rc = cpuexec_policy_resolve_default(&resolved);
  if (rc != 0) return rc;
  cpuexec__descriptor_of(resolved, &have);
  if ((rc = cpuexec__descriptor_compare(&have, expected)) != 0) return rc;
  cpuexec_executor *lease;
  if ((rc = cpuexec_registry_acquire(cpuexec_registry_default(), resolved, &lease)) != 0) return rc;
  rc = run_installed(lease, fn, user);
  cpuexec_executor_release(lease);
  return rc;
}
