/** @file
 * libcpuexec: sessions and thread-local executor scopes.
 *
 * A session resolves its policy and leases an executor once; each run
 * installs that executor on the running thread, where cpuexec_current(),
 * the compat adapters and legacy ParallelFor find it.
 *
 * Threads: a session is immutable after create, so several threads may run
 * one session at once; destroying it while a run is in progress is the
 * caller's error. Scopes are per thread: each thread enters and leaves its
 * own. */
#ifndef CPUEXEC_SESSION_H
#define CPUEXEC_SESSION_H

#include <cpuexec/common.h>
#include <cpuexec/executor.h>
#include <cpuexec/policy.h>

/** A session (opaque): a resolved policy and its leased executor. */
typedef struct cpuexec_session cpuexec_session;

/** Saved state of one installed scope. The fields are private to the
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

/** policy NULL: the executor installed on this thread if any (a nested
 * session keeps the enclosing executor), else the process default. A
 * session holds its own lease, so a nested session may outlive the one that
 * installed its executor; an unshared executor (cpuexec_executor_create, or
 * a foreign one: include/cpuexec/foreign.h) is borrowed instead, and must
 * outlive the session. The caller destroys *out. out NULL, or a policy that
 * does not resolve, is CPUEXEC_EINVAL naming the field; leasing fails as
 * cpuexec_registry_acquire() does. */
CPUEXEC_EXPORT int cpuexec_session_create(const cpuexec_policy *policy, cpuexec_session **out);
/** Releases the session's lease and frees it; NULL is ignored (like free).
 * No run may be in progress. */
CPUEXEC_EXPORT void cpuexec_session_destroy(cpuexec_session *session);
/** The session's executor (owned by the session, valid while it lives);
 * NULL for NULL. */
CPUEXEC_EXPORT cpuexec_executor *cpuexec_session_executor(const cpuexec_session *session);
/** Installs the session's executor on the calling thread for the whole
 * call of fn(arg), leaves it again, and returns fn's result. session or fn
 * NULL is CPUEXEC_EINVAL; if fn left a scope of its own entered, the run
 * returns CPUEXEC_ESTATE. fn must not unwind (C++: cpuexec::session::run). */
CPUEXEC_EXPORT int cpuexec_session_run(cpuexec_session *session, int (*fn)(void *arg), void *arg);

/** Installs exec on the calling thread until the matching leave. Scopes nest
 * and must be left in reverse order (CPUEXEC_ESTATE otherwise). *scope is
 * the caller's (typically on the stack) and must live until the leave; exec
 * must outlive the scope. exec or scope NULL is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_scope_enter(cpuexec_executor *exec, cpuexec_scope *scope);
/** Leaves a scope entered on this thread, restoring what it replaced.
 * scope NULL is CPUEXEC_EINVAL; a scope not entered on this thread,
 * already left, or not the innermost one is CPUEXEC_ESTATE (nothing
 * changes). */
CPUEXEC_EXPORT int cpuexec_scope_leave(cpuexec_scope *scope);
/** The executor installed on this thread (or of the region this thread is a
 * participant of), or NULL. */
CPUEXEC_EXPORT cpuexec_executor *cpuexec_current(void);

CPUEXEC_END_DECLS

#endif
