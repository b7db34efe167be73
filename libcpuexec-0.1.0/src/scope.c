/* Thread-local executor scopes and cpuexec_current().
 *
 * A scope installs an executor in cpuexec__tls.installed and remembers what
 * it replaced; leaving restores it. Scopes on one thread form a stack: each
 * records its depth, and only the innermost one may be left. Everything here
 * is per-thread state written only by its own thread, so nothing is atomic. */
#include <cpuexec/session.h>

#include "error.h"
#include "openmp_guard.h"
#include "thread_state.h"

/* Scopes currently entered on this thread. */
static __thread uint32_t scope_depth;

CPUEXEC_EXPORT int cpuexec_scope_enter(cpuexec_executor *exec, cpuexec_scope *scope) {
  if (!scope) return cpuexec__fail(CPUEXEC_EINVAL, "scope: NULL; pass a cpuexec_scope the caller owns");
  if (!exec)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "exec: NULL; install an executor from a session, the registry or cpuexec_executor_create()");
  scope->previous_ = cpuexec__tls.installed;
  scope->installed_ = exec;
  scope->depth_ = ++scope_depth;
  cpuexec__tls.installed = exec;
  cpuexec__openmp_scope_enter(exec, scope->openmp_saved_);
  return 0;
}

CPUEXEC_EXPORT int cpuexec_scope_leave(cpuexec_scope *scope) {
  if (!scope) return cpuexec__fail(CPUEXEC_EINVAL, "scope: NULL; pass the scope given to cpuexec_scope_enter()");
  if (scope->depth_ == 0 || scope->depth_ > scope_depth)
    return cpuexec__fail(CPUEXEC_ESTATE, "scope: not entered on this thread, or already left");
  if (scope->depth_ != scope_depth)
    return cpuexec__fail(CPUEXEC_ESTATE,
                         "scope: entered at depth %u but the innermost scope is at depth %u; leave scopes in "
                         "reverse order of entering them",
                         scope->depth_, scope_depth);
  if (cpuexec__tls.installed != scope->installed_)
    return cpuexec__fail(CPUEXEC_ESTATE,
                         "scope: its executor is no longer the one installed on this thread (entered on "
                         "another thread, or left from inside a callback)");
  cpuexec__openmp_scope_leave(scope->openmp_saved_);
  cpuexec__tls.installed = scope->previous_;
  scope_depth--;
  scope->depth_ = 0;
  return 0;
}

CPUEXEC_EXPORT cpuexec_executor *cpuexec_current(void) { return cpuexec__tls.installed; }
