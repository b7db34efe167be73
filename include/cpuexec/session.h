/** @file
 * libcpuexec: sessions and thread-local executor scopes.
 *
 * A session resolves its policy and leases an executor once; each run
 * installs that executor on the running thread, where cpuexec_executor_current(),
 * the compat adapters and legacy ParallelFor find it.
 *
 * Who releases what: a session holds its own reference on its executor
 * (cpuexec_session_destroy() releases it), and a scope holds one while it is
 * installed (cpuexec_scope_leave() releases it), so neither can outlive the
 * pool it uses, and releasing the caller's own handle while a session or
 * scope uses it is safe. The executors returned by cpuexec_session_executor()
 * and cpuexec_executor_current() are borrowed: never release them.
 *
 * A session kept by a library: a library may create a session when it is
 * loaded, install its executor around each of its calls with a scope
 * (cpuexec_scope_enter/leave on the calling thread), never calling
 * cpuexec_session_run(), and destroy it at teardown. Supported, with these
 * rules: the borrowed executor is valid while the session lives or a scope
 * holds it (teardown while a call is inside its scope on another thread is
 * safe: the scope's reference keeps the pool until it leaves); in a fork
 * child the session's executor refuses work (CPUEXEC_EFORKED) and destroying
 * the session frees memory only, so the library replaces it there (a
 * pthread_atfork child handler marking it stale, the next call making a new
 * one). doc/executor-hooks.md has the pattern and its test.
 *
 * Thread safety: a session is immutable after create; any number of threads
 * may run one session at once. Destroying a session while a run of it is in
 * progress is the caller's error. Scopes are per thread: a scope is entered
 * and left on the same thread. */
#ifndef CPUEXEC_SESSION_H
#define CPUEXEC_SESSION_H

#include <cpuexec/common.h>
#include <cpuexec/executor.h>
#include <cpuexec/policy.h>
#include <cpuexec/registry.h>

/** A session (opaque): a resolved policy and its leased executor. */
typedef struct cpuexec_session cpuexec_session;

/** Saved state of one installed scope: opaque storage, private to the
 * library, public only so scopes can live on the stack. It holds what the
 * runtime hooks save for the scope (<cpuexec/hooks.h>:
 * CPUEXEC_HOOKS_MAX blocks of CPUEXEC_HOOK_STATE_MAX bytes) and leaves room
 * so later versions can keep more without changing its size. */
typedef struct cpuexec_scope {
  uint64_t opaque_[48];
} cpuexec_scope;

/** How a session is made. {0} and cpuexec_session_options_init() are the
 * same: no policy, the process registry. */
typedef struct cpuexec_session_options {
  /** NULL: the executor installed on this thread if any (a nested session
   * keeps the enclosing executor), else the process default
   * (CPUEXEC_POLICY, or cpuexec_policy_init() unpinned). Read during create
   * only. */
  const cpuexec_policy *policy;
  /** A resolution to lease instead of resolving policy (policy is then
   * ignored): an engine that makes a session per request resolves once and
   * saves the resolution's cost (tens of us) on every request. Borrowed
   * during create only; the executor keeps its own reference. */
  const cpuexec_resolved *resolved;
  /** Where the session leases its pool. NULL: the process registry, whose
   * capacity and idle retention come from CPUEXEC_REGISTRY or
   * cpuexec_registry_configure(); a registry with idle retention lets a
   * session per request reuse its pool's threads. Must outlive the session. */
  cpuexec_registry *registry;
  uint64_t reserved_[5]; /**< zero: room for fields of later versions */
} cpuexec_session_options;

/** Runs under a session: its result is returned through the session (0, or
 * CPUEXEC_ECALLBACK for non-zero, see cpuexec/errors.h). */
typedef int (*cpuexec_session_fn)(void *ctx);

CPUEXEC_BEGIN_DECLS

/** Zeroes every field (the defaults above); NULL is ignored. */
CPUEXEC_EXPORT void cpuexec_session_options_init(cpuexec_session_options *options);
/** options NULL: the defaults. Every executor a session uses, a foreign
 * one (<cpuexec/foreign.h>) included, is held by the session's own
 * reference. out NULL is CPUEXEC_EINVAL; *out is NULL on failure. A
 * malformed CPUEXEC_POLICY (policy NULL) or CPUEXEC_REGISTRY (registry
 * NULL) is an error naming the variable. */
CPUEXEC_EXPORT int cpuexec_session_create_with_options(const cpuexec_session_options *options,
                                                       cpuexec_session **out);
/** cpuexec_session_create_with_options() with only the policy set. */
CPUEXEC_EXPORT int cpuexec_session_create(const cpuexec_policy *policy, cpuexec_session **out);
/** Releases the session's reference. NULL is ignored (like free). */
CPUEXEC_EXPORT void cpuexec_session_destroy(cpuexec_session *session);
/** The session's executor, borrowed (valid while the session lives); NULL for NULL. */
CPUEXEC_EXPORT cpuexec_executor *cpuexec_session_executor(const cpuexec_session *session);
/** Installs the session's executor for the whole call of fn(ctx). Returns 0
 * when fn returned 0, CPUEXEC_ECALLBACK when it returned anything else (its
 * value: cpuexec_error_callback_value()), or a library error. session or fn
 * NULL is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_session_run(cpuexec_session *session, void *ctx, cpuexec_session_fn fn);

/** Installs exec on the calling thread until the matching leave, holding a
 * reference on it meanwhile. Scopes nest and must be left in reverse order
 * (CPUEXEC_ESTATE otherwise). exec or scope NULL is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_scope_enter(cpuexec_executor *exec, cpuexec_scope *scope);
/** Leaves a scope entered on this thread, restoring what it replaced.
 * scope NULL is CPUEXEC_EINVAL; a scope not entered on this thread,
 * already left, or not the innermost one is CPUEXEC_ESTATE (nothing
 * changes). */
CPUEXEC_EXPORT int cpuexec_scope_leave(cpuexec_scope *scope);
/** The executor installed on this thread (or of the region this thread is a
 * participant of), borrowed, or NULL. */
CPUEXEC_EXPORT cpuexec_executor *cpuexec_executor_current(void);

/** What a kernel library needs of the executor it runs on: a kernel that
 * requires an executor and gets none fails where it prepares, rather than
 * running on a process-wide pool behind the caller's back. */
typedef enum cpuexec_executor_need {
  /** Runs on the executor installed on this thread, else on the process
   * default pool (cpuexec_registry_default_executor()). */
  CPUEXEC_EXECUTOR_SUPPORTED = 0,
  /** Runs only on an installed executor: with none, CPUEXEC_ESTATE. */
  CPUEXEC_EXECUTOR_REQUIRED = 1
} cpuexec_executor_need;

/** The executor the kernel named `kernel` runs on, borrowed: the one
 * installed on this thread (valid while its session run or scope lasts);
 * with none, for CPUEXEC_EXECUTOR_SUPPORTED the process default pool (valid
 * for the process; its failure to start is returned with *out NULL), and
 * for CPUEXEC_EXECUTOR_REQUIRED CPUEXEC_ESTATE with a message naming the
 * kernel, *out NULL, and no pool made. kernel may be NULL ("kernel" in the
 * message). out NULL or another need: CPUEXEC_EINVAL. A kernel library
 * calls it where it prepares, so a missing executor fails there. */
CPUEXEC_EXPORT int cpuexec_kernel_executor(const char *kernel, cpuexec_executor_need need, cpuexec_executor **out);

CPUEXEC_END_DECLS

#endif
