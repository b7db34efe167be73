/** @file
 * libcpuexec: runtime hooks, run on every participant of every region.
 *
 * A library called from inside libcpuexec callbacks may start threads of its
 * own. A hook keeps it inline: it saves the library's per-thread setting
 * when a thread joins a region, sets "one thread" before each callback, and
 * restores the setting when the thread leaves. libcpuexec's own runtime
 * guards are such a hook: OpenMP (<cpuexec/interop.h>), OpenBLAS, BLIS and
 * oneTBB (<cpuexec/runtimes.h>) need none of yours; a library they do not
 * govern (MKL: mkl_set_num_threads_local) does. examples/openblas_hook.c
 * shows one for a process-wide setting.
 *
 * When each part runs, on the thread concerned:
 *   - participant_begin(user, state): a thread starts running callbacks of a
 *     region as one of its participants (the caller of cpuexec_parallel_for,
 *     a worker, a foreign executor's thread, a job-pool worker, or the caller
 *     of an adapter that runs serially). Only for the thread's outermost
 *     region: a nested call inside a callback runs inline in a thread that
 *     already began, so it runs no begin/end of its own;
 *   - before_callback(user): before every callback on that thread, nested
 *     ones included (a callback may have changed the setting);
 *   - participant_end(user, state): the thread leaves that outermost region.
 *     Hooks begin in registration order and end in the reverse order.
 *     During begin and end the thread state describes the region:
 *     cpuexec_participant_index/count() and cpuexec_executor_current() are those of
 *     the participant;
 *   - scope_enter(user, exec, state) / scope_leave(user, state): a scope (or
 *     session run) installs exec on a thread outside any callback, and later
 *     leaves it; top-level work the thread starts in between may follow exec
 *     (the OpenMP hook gives OpenMP exec's thread count). Scopes entered
 *     inside a callback do not call the hooks.
 * Each of the five may be NULL. `state` is CPUEXEC_HOOK_STATE_MAX bytes,
 * 8-byte aligned, private to the hook, one block per participant (for
 * begin/end) and one per scope (for scope_enter/leave); it lives on the
 * stack of the thread concerned and is not initialized.
 *
 * Hooks run on hot paths: keep them short, never block, never call back into
 * a parallel call. They must not let C++ exceptions escape. */
#ifndef CPUEXEC_HOOKS_H
#define CPUEXEC_HOOKS_H

#include <cpuexec/common.h>
#include <cpuexec/executor.h>

/** Bytes of private state each hook gets per participant and per scope. */
#define CPUEXEC_HOOK_STATE_MAX 32
/** Hooks a process may register, libcpuexec's own OpenMP guard included. */
#define CPUEXEC_HOOKS_MAX 6

/** A runtime hook: the five parts described at the top of this header, each
 * optional. Start from cpuexec_hook_init(). */
typedef struct cpuexec_hook {
  const char *name; /**< for messages; may be NULL */
  void *user;       /**< passed to every function below; must outlive the process's regions */
  /** A thread starts running callbacks of a region (its outermost one). */
  void (*participant_begin)(void *user, void *state);
  /** Before every callback on a participant, nested ones included. */
  void (*before_callback)(void *user);
  /** The thread leaves its outermost region; state is what begin saved. */
  void (*participant_end)(void *user, void *state);
  /** A scope or session run installs exec on a thread outside callbacks. */
  void (*scope_enter)(void *user, cpuexec_executor *exec, void *state);
  /** That scope is left; state is what scope_enter saved. */
  void (*scope_leave)(void *user, void *state);
  uint64_t reserved_[4]; /**< zero (cpuexec_hook_init): room for fields of later versions */
} cpuexec_hook;

CPUEXEC_BEGIN_DECLS

/** Sets every field to NULL. NULL is ignored. */
CPUEXEC_EXPORT void cpuexec_hook_init(cpuexec_hook *hook);

/** Adds a copy of *hook for the rest of the process: regions that begin after
 * the call returns run it (a region already running is not changed). There
 * is no unregistration, so hook->user must stay valid until exit; a hook
 * that may be turned off keeps its own flag. Registering a hook equal to
 * one already registered (same user and functions) does nothing and returns
 * 0. Thread-safe. hook NULL, or with all five functions NULL:
 * CPUEXEC_EINVAL; CPUEXEC_HOOKS_MAX already registered: CPUEXEC_ECAPACITY. */
CPUEXEC_EXPORT int cpuexec_hook_register(const cpuexec_hook *hook);

CPUEXEC_END_DECLS

#endif
