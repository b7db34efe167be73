/* Internal: the region primitive. Every thread that runs libcpuexec
 * callbacks enters and leaves its region through it, and nothing else
 * writes the thread state (src/executor/thread_state.h).
 *
 * Who enters, and as what:
 *   - the built-in executor's participants (src/executor/region.c): participant i of
 *     the region's n, i = 0 on the caller;
 *   - a foreign executor's participants (src/executor/foreign.c): i of n as the
 *     application's pool runs them, on the pool's threads;
 *   - a job pool's workers (compat/job_pool.c): worker_id of worker_count;
 *   - a callback that runs inline (a nested call, a serial path, exec NULL):
 *     participant 0 of 1, keeping the installed executor when exec is NULL;
 *   - an adapter's callback found running outside any region (on a thread of
 *     a range executor written by the application): participant 0 of 1.
 * A callback that runs inside a region already (an adapter wrapping the
 * executor's callback) is not a new region and calls no primitive.
 *
 * Runtime hooks (include/cpuexec/hooks.h) run from here: begin and end only
 * for the thread's outermost region (callback depth 0 on entry), so a
 * nested inline call costs nothing extra; before_callback before every
 * callback, for the hooks that outermost region began. Scopes install
 * executors through cpuexec__scope_install/uninstall, which run the hooks'
 * scope parts outside callbacks.
 *
 * Use, on the participant's own thread:
 *
 *     cpuexec__participant p;
 *     cpuexec__participant_enter(&p, exec, index, count);
 *     for each range: rc = cpuexec__participant_invoke(fn, ctx, b, e);
 *     cpuexec__participant_leave(&p);
 */
#ifndef CPUEXEC_SRC_PARTICIPANT_H
#define CPUEXEC_SRC_PARTICIPANT_H

#include <stdalign.h>
#include <stdatomic.h>

#include <cpuexec/executor.h>
#include <cpuexec/hooks.h>

#include "thread_state.h"

/* The registered hooks (src/executor/participant.c). Entries [0, count) are written
 * once, under the registration lock, before the release store of the count
 * that includes them, and never change afterwards; readers load the count
 * with acquire and read only entries below it. */
extern cpuexec_hook cpuexec__hooks[CPUEXEC_HOOKS_MAX];
extern _Atomic uint32_t cpuexec__hook_count;

typedef struct cpuexec__hook_state {
  alignas(8) unsigned char bytes[CPUEXEC_HOOK_STATE_MAX];
} cpuexec__hook_state;

/* One participant's entry record, on its thread's stack. */
typedef struct cpuexec__participant {
  cpuexec__thread_state saved;
  cpuexec__hook_state hooks[CPUEXEC_HOOKS_MAX]; /* touched only by the hooks that use them */
} cpuexec__participant;

/* A built-in guard that must run each callback inside something of its
 * library (oneTBB's guard runs it in a one-thread task_arena of the thread:
 * src/guards/guard_participant.c) sets this in its participant_begin and
 * clears it in its participant_end; NULL otherwise (one predictable branch
 * per callback). It is called with the callback and returns its result.
 * Only the outermost callback of a thread is wrapped: a nested one already
 * runs inside. */
typedef int (*cpuexec__callback_wrap)(cpuexec_range_fn fn, void *ctx, int64_t begin, int64_t end);
extern __thread cpuexec__callback_wrap cpuexec__tls_wrap __attribute__((tls_model("initial-exec")));

/* True inside any libcpuexec callback on this thread: a parallel call made
 * now runs inline. */
static inline bool cpuexec__participant_nested(void) { return cpuexec__tls.callback_depth > 0; }

/* This thread becomes participant index of count of a region run on exec
 * (NULL: keep the installed executor). */
static inline void cpuexec__participant_enter(cpuexec__participant *p, cpuexec_executor *exec, uint32_t index,
                                              uint32_t count) {
  p->saved = cpuexec__tls;
  if (exec) cpuexec__tls.installed = exec;
  cpuexec__tls.callback_depth = p->saved.callback_depth + 1;
  cpuexec__tls.participant_index = index;
  cpuexec__tls.participant_count = count;
  if (p->saved.callback_depth != 0) return;
  uint32_t n = atomic_load_explicit(&cpuexec__hook_count, memory_order_acquire);
  cpuexec__tls.hooks_begun = n;
  for (uint32_t i = 0; i < n; i++)
    if (cpuexec__hooks[i].participant_begin) cpuexec__hooks[i].participant_begin(cpuexec__hooks[i].user, p->hooks[i].bytes);
}

/* Before each callback the participant runs. */
static inline void cpuexec__participant_before_callback(void) {
  uint32_t n = cpuexec__tls.hooks_begun;
  for (uint32_t i = 0; i < n; i++)
    if (cpuexec__hooks[i].before_callback) cpuexec__hooks[i].before_callback(cpuexec__hooks[i].user);
}

/* The participant leaves: hooks end in reverse order, then the thread state
 * is what it was before enter. */
static inline void cpuexec__participant_leave(cpuexec__participant *p) {
  if (p->saved.callback_depth == 0)
    for (uint32_t i = cpuexec__tls.hooks_begun; i-- > 0;)
      if (cpuexec__hooks[i].participant_end) cpuexec__hooks[i].participant_end(cpuexec__hooks[i].user, p->hooks[i].bytes);
  cpuexec__tls = p->saved;
}

/* One callback of an entered participant: the hooks' before_callback, then
 * fn(ctx, begin, end) (through a guard's wrapper, on the thread's outermost
 * callback, when one is set), and its result. */
static inline int cpuexec__participant_invoke(cpuexec_range_fn fn, void *ctx, int64_t begin, int64_t end) {
  cpuexec__participant_before_callback();
  cpuexec__callback_wrap wrap = cpuexec__tls_wrap;
  if (__builtin_expect(wrap != NULL, 0) && cpuexec__tls.callback_depth == 1) return wrap(fn, ctx, begin, end);
  return fn(ctx, begin, end);
}

/* A participant's whole share, every callback it runs in this region, as
 * one call run(arg): through the guard's wrapper when one is set, so the
 * library's per-thread state (oneTBB's one-thread arena) is entered once per
 * participant instead of once per callback; the callbacks inside run
 * unwrapped (the wrapper is NULL meanwhile). Only at the thread's outermost
 * level, as cpuexec__participant_invoke. */
typedef struct cpuexec__share {
  void (*run)(void *arg);
  void *arg;
} cpuexec__share;

static inline int cpuexec__share_thunk(void *ctx, int64_t begin, int64_t end) {
  (void)begin;
  (void)end;
  const cpuexec__share *s = (const cpuexec__share *)ctx;
  s->run(s->arg);
  return 0;
}

static inline void cpuexec__participant_share(void (*run)(void *arg), void *arg) {
  cpuexec__callback_wrap wrap = cpuexec__tls_wrap;
  if (__builtin_expect(wrap == NULL, 1) || cpuexec__tls.callback_depth != 1) {
    run(arg);
    return;
  }
  cpuexec__share s = {run, arg};
  cpuexec__tls_wrap = NULL;
  (void)wrap(cpuexec__share_thunk, &s, 0, 0);
  cpuexec__tls_wrap = wrap;
}

/* fn(ctx, begin, end) as participant index of count, and its result. */
static inline int cpuexec__participant_call(cpuexec_executor *exec, uint32_t index, uint32_t count, void *ctx,
                                            cpuexec_range_fn fn, int64_t begin, int64_t end) {
  cpuexec__participant p;
  cpuexec__participant_enter(&p, exec, index, count);
  int rc = cpuexec__participant_invoke(fn, ctx, begin, end);
  cpuexec__participant_leave(&p);
  return rc;
}

/* Scopes (src/sessions/scope.c). install makes exec the thread's installed executor
 * and returns the one it replaces; outside callbacks it runs the hooks'
 * scope_enter with state (CPUEXEC_HOOKS_MAX blocks of
 * CPUEXEC_HOOK_STATE_MAX bytes) and stores how many it ran in *entered (0
 * inside a callback). uninstall runs the scope_leave of those `entered`
 * hooks in reverse order and installs previous. */
cpuexec_executor *cpuexec__scope_install(cpuexec_executor *exec, void *state, uint32_t *entered);
void cpuexec__scope_uninstall(cpuexec_executor *previous, void *state, uint32_t entered);

/* Registers a hook of the library itself (the OpenMP guard); the same rules
 * as cpuexec_hook_register(). */
int cpuexec__hook_add(const cpuexec_hook *hook);

#endif
