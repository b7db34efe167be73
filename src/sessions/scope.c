/* Thread-local executor scopes and cpuexec_executor_current().
 *
 * A scope installs an executor on the thread through the region primitive
 * (src/executor/participant.h), which also runs the runtime hooks' scope parts, and
 * remembers what it replaced; leaving restores it. Scopes on one thread
 * form a stack: each records its depth, and only the innermost one may be
 * left. Everything here is per-thread state written only by its own thread,
 * so nothing is atomic. A scope holds a reference on its executor while it
 * is installed (cpuexec/session.h). */
#include <assert.h>

#include <cpuexec/hooks.h>
#include <cpuexec/session.h>

#include "core/error.h"
#include "executor/participant.h"
#include "executor/thread_state.h"

/* What a cpuexec_scope's opaque storage holds. */
typedef struct scope_state {
  cpuexec_executor *previous;
  cpuexec_executor *installed;
  uint32_t depth;
  uint32_t hooks_entered;
  cpuexec__hook_state hooks[CPUEXEC_HOOKS_MAX]; /* what the runtime hooks save for the scope */
} scope_state;
static_assert(sizeof(scope_state) <= sizeof(cpuexec_scope), "cpuexec_scope's storage holds a scope");
static_assert(_Alignof(scope_state) <= _Alignof(cpuexec_scope), "cpuexec_scope's storage is aligned for it");

static scope_state *state_of(cpuexec_scope *scope) { return (scope_state *)(void *)scope->opaque_; }

/* Scopes currently entered on this thread. */
static __thread uint32_t scope_depth;

CPUEXEC_EXPORT int cpuexec_scope_enter(cpuexec_executor *exec, cpuexec_scope *scope_storage) {
  if (!scope_storage) return cpuexec__fail(CPUEXEC_EINVAL, "scope: NULL; pass a cpuexec_scope the caller owns");
  if (!exec)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "exec: NULL; install an executor from a session, the registry or cpuexec_executor_create()");
  scope_state *scope = state_of(scope_storage);
  /* The scope's own reference: the pool outlives the scope whatever its
   * other holders release meanwhile. */
  int rc = cpuexec_executor_retain(exec);
  if (rc != 0) return rc;
  scope->installed = exec;
  scope->depth = ++scope_depth;
  scope->previous = cpuexec__scope_install(exec, scope->hooks, &scope->hooks_entered);
  return 0;
}

CPUEXEC_EXPORT int cpuexec_scope_leave(cpuexec_scope *scope_storage) {
  if (!scope_storage)
    return cpuexec__fail(CPUEXEC_EINVAL, "scope: NULL; pass the scope given to cpuexec_scope_enter()");
  scope_state *scope = state_of(scope_storage);
  if (scope->depth == 0 || scope->depth > scope_depth)
    return cpuexec__fail(CPUEXEC_ESTATE, "scope: not entered on this thread, or already left");
  if (scope->depth != scope_depth)
    return cpuexec__fail(CPUEXEC_ESTATE,
                         "scope: entered at depth %u but the innermost scope is at depth %u; leave scopes in "
                         "reverse order of entering them",
                         scope->depth, scope_depth);
  if (cpuexec__tls.installed != scope->installed)
    return cpuexec__fail(CPUEXEC_ESTATE,
                         "scope: its executor is no longer the one installed on this thread (entered on "
                         "another thread, or left from inside a callback)");
  cpuexec__scope_uninstall(scope->previous, scope->hooks, scope->hooks_entered);
  scope_depth--;
  scope->depth = 0;
  return cpuexec_executor_release(scope->installed);
}

CPUEXEC_EXPORT cpuexec_executor *cpuexec_executor_current(void) { return cpuexec__tls.installed; }
