/* libcpuexec: sessions and thread-local executor scopes.
 *
 * A session resolves its policy and leases an executor once; each run
 * installs that executor on the running thread, where cpuexec_current(),
 * the compat adapters and legacy ParallelFor find it. */
#ifndef CPUEXEC_SESSION_H
#define CPUEXEC_SESSION_H

#include <cpuexec/common.h>
#include <cpuexec/executor.h>
#include <cpuexec/policy.h>

typedef struct cpuexec_session cpuexec_session;

/* Saved state of one installed scope. The fields are private to the
 * library; the struct is public only so scopes can live on the stack.
 * reserved_ holds what the runtime hooks save for the scope
 * (include/cpuexec/hooks.h: CPUEXEC_HOOKS_MAX blocks of
 * CPUEXEC_HOOK_STATE_MAX bytes) and leaves room to grow without changing
 * the struct's size. */
typedef struct cpuexec_scope {
  cpuexec_executor *previous_;
  cpuexec_executor *installed_;
  uint32_t depth_;
  uint32_t hooks_entered_;
  uint64_t reserved_[32];
} cpuexec_scope;

CPUEXEC_BEGIN_DECLS

/* policy NULL: the executor installed on this thread if any (a nested
 * session keeps the enclosing executor), else the process default. A
 * session holds its own lease, so a nested session may outlive the one that
 * installed its executor; an unshared executor (cpuexec_executor_create, or
 * a foreign one: include/cpuexec/foreign.h) is borrowed instead, and must
 * outlive the session. */
CPUEXEC_EXPORT int cpuexec_session_create(const cpuexec_policy *policy, cpuexec_session **out);
/* NULL is ignored (like free). */
CPUEXEC_EXPORT void cpuexec_session_destroy(cpuexec_session *session);
/* The session's executor; NULL for NULL. */
CPUEXEC_EXPORT cpuexec_executor *cpuexec_session_executor(const cpuexec_session *session);
/* Installs the session's executor for the whole call of fn(arg) and returns fn's result. */
CPUEXEC_EXPORT int cpuexec_session_run(cpuexec_session *session, int (*fn)(void *arg), void *arg);

/* Installs exec on the calling thread until the matching leave. Scopes nest
 * and must be left in reverse order (CPUEXEC_ESTATE otherwise). */
CPUEXEC_EXPORT int cpuexec_scope_enter(cpuexec_executor *exec, cpuexec_scope *scope);
CPUEXEC_EXPORT int cpuexec_scope_leave(cpuexec_scope *scope);
/* The executor installed on this thread (or of the region this thread is a
 * participant of), or NULL. */
CPUEXEC_EXPORT cpuexec_executor *cpuexec_current(void);

CPUEXEC_END_DECLS

#endif
