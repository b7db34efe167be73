/* Sessions: a policy resolved and leased once, installed for each run.
 *
 * A session owns one lease on a pool of the process registry (or, for a
 * nested session on an unshared executor, borrows that executor). It is
 * immutable after create, so several threads may run the same session at
 * once; destroying it while a run is in progress is the caller's error. */
#include <stdlib.h>

#include <cpuexec/registry.h>
#include <cpuexec/session.h>

#include "error.h"
#include "registry_internal.h"

struct cpuexec_session {
  cpuexec_executor *exec;
  /* True when the session holds a lease that destroy releases; false when
   * it borrows an unshared executor installed by its creator. */
  bool leased;
};

/* NULL policy: keep the executor installed on this thread (a nested
 * session), else lease the process default (CPUEXEC_POLICY or the
 * resolution default). */
static int lease_for(const cpuexec_policy *policy, cpuexec_executor **exec, bool *leased) {
  if (!policy) {
    cpuexec_executor *current = cpuexec_current();
    if (current) {
      *exec = current;
      *leased = cpuexec__registry_retain(current);
      return 0;
    }
    const cpuexec_resolved *resolved = NULL;
    int rc = cpuexec_resolve_default(&resolved);
    if (rc != 0) return rc;
    rc = cpuexec_registry_acquire(cpuexec_registry_default(), resolved, exec);
    *leased = rc == 0;
    return rc;
  }
  cpuexec_resolved *resolved = NULL;
  int rc = cpuexec_resolve(policy, NULL, &resolved);
  if (rc != 0) return rc;
  /* The executor keeps its own reference to the resolution it runs. */
  rc = cpuexec_registry_acquire(cpuexec_registry_default(), resolved, exec);
  cpuexec_resolved_destroy(resolved);
  *leased = rc == 0;
  return rc;
}

CPUEXEC_EXPORT int cpuexec_session_create(const cpuexec_policy *policy, cpuexec_session **out) {
  if (!out) return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass the address of a cpuexec_session pointer");
  *out = NULL;
  if (!cpuexec_registry_default())
    return cpuexec__fail(CPUEXEC_ENOMEM, "session: the process registry could not be allocated");
  cpuexec_session *session = calloc(1, sizeof *session);
  if (!session) return cpuexec__fail(CPUEXEC_ENOMEM, "session: out of memory allocating %zu bytes", sizeof *session);
  int rc = lease_for(policy, &session->exec, &session->leased);
  if (rc != 0) {
    free(session);
    return rc;
  }
  *out = session;
  return 0;
}

CPUEXEC_EXPORT void cpuexec_session_destroy(cpuexec_session *session) {
  if (!session) return;
  if (session->leased) cpuexec_executor_release(session->exec);
  free(session);
}

CPUEXEC_EXPORT cpuexec_executor *cpuexec_session_executor(const cpuexec_session *session) {
  return session ? session->exec : NULL;
}

CPUEXEC_EXPORT int cpuexec_session_run(cpuexec_session *session, int (*fn)(void *arg), void *arg) {
  if (!session) return cpuexec__fail(CPUEXEC_EINVAL, "session: NULL; create one with cpuexec_session_create()");
  if (!fn) return cpuexec__fail(CPUEXEC_EINVAL, "fn: NULL; pass the function to run under the session");
  cpuexec_scope scope;
  int rc = cpuexec_scope_enter(session->exec, &scope);
  if (rc != 0) return rc;
  int result = fn(arg);
  /* fn must leave every scope it entered; if it did not, the thread's scope
   * stack is wrong and the run reports it rather than hide it. */
  rc = cpuexec_scope_leave(&scope);
  return rc != 0 ? rc : result;
}
