/* Thread-local executor scopes and cpuexec_current().
 *
 * A scope installs an executor in cpuexec__tls.installed and remembers what
 * it replaced; leaving restores it. Scopes on one thread form a stack: each
 * records its depth, and only the innermost one may be left. Everything here
 * is per-thread state written only by its own thread, so nothing is atomic. */
#include <assert.h>

#include <cpuexec/session.h>

#include "error.h"
#include "openmp_guard.h"
#include "thread_state.h"

/* What a cpuexec_scope's opaque storage holds. */
typedef struct scope_state {
  cpuexec_executor *previous;
  cpuexec_executor *installed;
  int32_t openmp_saved[4];
  uint32_t depth;
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
   * other holders release meanwhile (cpuexec/session.h). */
  int rc = cpuexec_executor_retain(exec);
  if (rc != 0) return rc;
  scope->previous = cpuexec__tls.installed;
  scope->installed = exec;
  scope->depth = ++scope_depth;
  cpuexec__tls.installed = exec;
  cpuexec__openmp_scope_enter(exec, scope->openmp_saved);
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
  cpuexec__openmp_scope_leave(scope->openmp_saved);
  cpuexec__tls.installed = scope->previous;
  scope_depth--;
  scope->depth = 0;
  return cpuexec_executor_release(scope->installed);
}

CPUEXEC_EXPORT cpuexec_executor *cpuexec_current(void) { return cpuexec__tls.installed; }
