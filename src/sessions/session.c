/* Sessions: a policy resolved and leased once, installed for each run.
 *
 * A session owns one reference on its executor: a lease from its registry,
 * or, for a nested session without a policy, a retained reference on the
 * executor installed by its creator (cpuexec/session.h). It is immutable
 * after create, so several threads may run the same session at once;
 * destroying it while a run is in progress is the caller's error. */
#include <stdlib.h>
#include <string.h>

#include <cpuexec/registry.h>
#include <cpuexec/session.h>

#include "core/error.h"
#include "registry_internal.h"

struct cpuexec_session {
  cpuexec_executor *exec; /* one reference, released by destroy */
};

/* NULL policy: keep the executor installed on this thread (a nested
 * session), else lease the process default (CPUEXEC_POLICY or the
 * resolution default, unpinned). */
static int lease_for(const cpuexec_session_options *options, cpuexec_executor **exec) {
  cpuexec_registry *registry = options->registry;
  if (!options->policy && !options->resolved) {
    cpuexec_executor *current = cpuexec_executor_current();
    if (current) {
      int rc = cpuexec_executor_retain(current);
      if (rc == 0) *exec = current;
      return rc;
    }
  }
  if (!registry) {
    int rc = cpuexec__registry_default_environment_error();
    if (rc != 0) return rc;
    registry = cpuexec_registry_default();
    if (!registry) return cpuexec__fail(CPUEXEC_ENOMEM, "session: the process registry could not be allocated");
  }
  if (options->resolved) return cpuexec_registry_acquire(registry, options->resolved, exec);
  if (!options->policy) {
    const cpuexec_resolved *resolved = NULL;
    int rc = cpuexec_policy_resolve_default(&resolved);
    if (rc != 0) return rc;
    return cpuexec_registry_acquire(registry, resolved, exec);
  }
  cpuexec_resolved *resolved = NULL;
  int rc = cpuexec_policy_resolve(options->policy, NULL, &resolved);
  if (rc != 0) return rc;
  /* The executor keeps its own reference to the resolution it runs. */
  rc = cpuexec_registry_acquire(registry, resolved, exec);
  cpuexec_resolved_destroy(resolved);
  return rc;
}

CPUEXEC_EXPORT void cpuexec_session_options_init(cpuexec_session_options *options) {
  if (options) memset(options, 0, sizeof *options);
}

CPUEXEC_EXPORT int cpuexec_session_create_with_options(const cpuexec_session_options *options,
                                                       cpuexec_session **out) {
  if (!out) return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass the address of a cpuexec_session pointer");
  *out = NULL;
  cpuexec_session_options defaults;
  if (!options) {
    cpuexec_session_options_init(&defaults);
    options = &defaults;
  }
  cpuexec_session *session = calloc(1, sizeof *session);
  if (!session) return cpuexec__fail(CPUEXEC_ENOMEM, "session: out of memory allocating %zu bytes", sizeof *session);
  int rc = lease_for(options, &session->exec);
  if (rc != 0) {
    free(session);
    return rc;
  }
  *out = session;
  return 0;
}

CPUEXEC_EXPORT int cpuexec_session_create(const cpuexec_policy *policy, cpuexec_session **out) {
  cpuexec_session_options options;
  cpuexec_session_options_init(&options);
  options.policy = policy;
  return cpuexec_session_create_with_options(&options, out);
}

CPUEXEC_EXPORT void cpuexec_session_destroy(cpuexec_session *session) {
  if (!session) return;
  cpuexec_executor_release(session->exec);
  free(session);
}

CPUEXEC_EXPORT cpuexec_executor *cpuexec_session_executor(const cpuexec_session *session) {
  return session ? session->exec : NULL;
}

CPUEXEC_EXPORT int cpuexec_session_run(cpuexec_session *session, void *ctx, cpuexec_session_fn fn) {
  if (!session) return cpuexec__fail(CPUEXEC_EINVAL, "session: NULL; create one with cpuexec_session_create()");
  if (!fn) return cpuexec__fail(CPUEXEC_EINVAL, "fn: NULL; pass the function to run under the session");
  cpuexec_scope scope;
  int rc = cpuexec_scope_enter(session->exec, &scope);
  if (rc != 0) return rc;
  int result = fn(ctx);
  /* fn must leave every scope it entered; if it did not, the thread's scope
   * stack is wrong and the run reports it rather than hide it. */
  rc = cpuexec_scope_leave(&scope);
  return rc != 0 ? rc : cpuexec__callback_rc(result);
}
