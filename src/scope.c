/* Thread-local executor scopes and cpuexec_current().
 *
 * A scope installs an executor on the thread through the region primitive
 * (src/participant.h), which also runs the runtime hooks' scope parts, and
 * remembers what it replaced; leaving restores it. Scopes on one thread
 * form a stack: each records its depth, and only the innermost one may be
 * left. Everything here is per-thread state written only by its own thread,
 * so nothing is atomic. */
#include <cpuexec/hooks.h>
#include <cpuexec/session.h>

#include "error.h"
#include "participant.h"
#include "thread_state.h"

_Static_assert(sizeof(((cpuexec_scope *)0)->reserved_) >= CPUEXEC_HOOKS_MAX * sizeof(cpuexec__hook_state),
               "cpuexec_scope must hold every hook's scope state");

/* Scopes currently entered on this thread. */
static __thread uint32_t scope_depth;

CPUEXEC_EXPORT int cpuexec_scope_enter(cpuexec_executor *exec, cpuexec_scope *scope) {
  if (!scope) return cpuexec__fail(CPUEXEC_EINVAL, "scope: NULL; pass a cpuexec_scope the caller owns");
  if (!exec)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "exec: NULL; install an executor from a session, the registry or cpuexec_executor_create()");
  scope->installed_ = exec;
  scope->depth_ = ++scope_depth;
  scope->previous_ = cpuexec__scope_install(exec, scope->reserved_, &scope->hooks_entered_);
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
  cpuexec__scope_uninstall(scope->previous_, scope->reserved_, scope->hooks_entered_);
  scope_depth--;
  scope->depth_ = 0;
  return 0;
}

CPUEXEC_EXPORT cpuexec_executor *cpuexec_current(void) { return cpuexec__tls.installed; }
