/* The region primitive's shared parts (src/executor/participant.h): the hook table,
 * hook registration, and installing executors for scopes. */
#include "participant.h"

#include <pthread.h>
#include <string.h>

#include "core/error.h"

cpuexec_hook cpuexec__hooks[CPUEXEC_HOOKS_MAX];
__thread cpuexec__callback_wrap cpuexec__tls_wrap __attribute__((tls_model("initial-exec")));
_Atomic uint32_t cpuexec__hook_count = 0;

/* Serializes registrations; regions never take it. */
static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_hook(const cpuexec_hook *a, const cpuexec_hook *b) {
  return a->user == b->user && a->participant_begin == b->participant_begin &&
         a->before_callback == b->before_callback && a->participant_end == b->participant_end &&
         a->scope_enter == b->scope_enter && a->scope_leave == b->scope_leave;
}

int cpuexec__hook_add(const cpuexec_hook *hook) {
  if (!hook) return cpuexec__fail(CPUEXEC_EINVAL, "hook: NULL; pass a cpuexec_hook set up with cpuexec_hook_init()");
  if (!hook->participant_begin && !hook->before_callback && !hook->participant_end && !hook->scope_enter &&
      !hook->scope_leave)
    return cpuexec__fail(CPUEXEC_EINVAL, "hook %s: every function is NULL; set at least one",
                         hook->name ? hook->name : "(unnamed)");
  pthread_mutex_lock(&hooks_lock);
  uint32_t n = atomic_load_explicit(&cpuexec__hook_count, memory_order_relaxed);
  for (uint32_t i = 0; i < n; i++) {
    if (same_hook(&cpuexec__hooks[i], hook)) {
      pthread_mutex_unlock(&hooks_lock);
      return 0;
    }
  }
  if (n == CPUEXEC_HOOKS_MAX) {
    pthread_mutex_unlock(&hooks_lock);
    return cpuexec__fail(CPUEXEC_ECAPACITY, "hook %s: %d hooks are registered already, the most a process may have",
                         hook->name ? hook->name : "(unnamed)", CPUEXEC_HOOKS_MAX);
  }
  cpuexec__hooks[n] = *hook;
  /* release: a region that counts entry n sees it written. */
  atomic_store_explicit(&cpuexec__hook_count, n + 1, memory_order_release);
  pthread_mutex_unlock(&hooks_lock);
  return 0;
}

CPUEXEC_EXPORT void cpuexec_hook_init(cpuexec_hook *hook) {
  if (hook) memset(hook, 0, sizeof *hook);
}

CPUEXEC_EXPORT int cpuexec_hook_register(const cpuexec_hook *hook) { return cpuexec__hook_add(hook); }

cpuexec_executor *cpuexec__scope_install(cpuexec_executor *exec, void *state, uint32_t *entered) {
  cpuexec_executor *previous = cpuexec__tls.installed;
  cpuexec__tls.installed = exec;
  *entered = 0;
  /* Inside a callback the participant hooks own the thread's settings. */
  if (cpuexec__tls.callback_depth > 0) return previous;
  uint32_t n = atomic_load_explicit(&cpuexec__hook_count, memory_order_acquire);
  cpuexec__hook_state *blocks = state;
  for (uint32_t i = 0; i < n; i++)
    if (cpuexec__hooks[i].scope_enter) cpuexec__hooks[i].scope_enter(cpuexec__hooks[i].user, exec, blocks[i].bytes);
  *entered = n;
  return previous;
}

void cpuexec__scope_uninstall(cpuexec_executor *previous, void *state, uint32_t entered) {
  cpuexec__hook_state *blocks = state;
  for (uint32_t i = entered; i-- > 0;)
    if (cpuexec__hooks[i].scope_leave) cpuexec__hooks[i].scope_leave(cpuexec__hooks[i].user, blocks[i].bytes);
  cpuexec__tls.installed = previous;
}
