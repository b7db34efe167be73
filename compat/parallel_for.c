/* The legacy free ParallelFor: the installed executor, else one process-wide
 * pool leased from the process registry.
 *
 * The process-wide pool is made once per process under pool_lock and then
 * read without a lock: pool and pool_error are published by the release
 * store of ready_generation, which names the fork generation they belong to.
 * fork_generation changes only in the fork child handler, while the child
 * has one thread, so a child sees a stale ready_generation and rebuilds the
 * pool on its first call. The inherited lease is released on that path; the
 * registry has already forgotten its pool, so that frees memory only.
 *
 * Lock order: pool_lock, then the registry's locks (acquire runs under
 * pool_lock). The fork handlers are registered after the registry's, so the
 * prepare handlers (run in reverse order of registration) take them in the
 * same order. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <cpuexec/registry.h>
#include <cpuexec/session.h>

#include "../src/error.h"
#include "parallel_for.h"

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static atomic_uint fork_generation = 1;
/* The fork generation pool and pool_error were made in (0: not yet). */
static atomic_uint ready_generation;
/* The process-wide lease, or NULL when it could not be made. */
static _Atomic(cpuexec_executor *) pool;
/* Why it could not be made (pool_lock writes; readers follow ready_generation). */
static atomic_int pool_error;
static char pool_error_detail[256];

static void atfork_prepare(void) { pthread_mutex_lock(&pool_lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&pool_lock); }
static void atfork_child(void) {
  pthread_mutex_init(&pool_lock, NULL);
  atomic_fetch_add_explicit(&fork_generation, 1, memory_order_relaxed);
}

static void register_atfork(void) {
  /* The registry registers its handlers on first use; make sure that came
   * first so fork takes pool_lock before the registry locks. */
  (void)cpuexec_registry_default();
  pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* Makes (once per process) and returns the process-wide pool; on failure
 * *exec is NULL and the creation error is returned, with its detail. */
static int process_pool(cpuexec_executor **exec) {
  unsigned generation = atomic_load_explicit(&fork_generation, memory_order_relaxed);
  if (atomic_load_explicit(&ready_generation, memory_order_acquire) != generation) {
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&pool_lock);
    generation = atomic_load_explicit(&fork_generation, memory_order_relaxed);
    if (atomic_load_explicit(&ready_generation, memory_order_relaxed) != generation) {
      cpuexec_executor *inherited = atomic_load_explicit(&pool, memory_order_relaxed);
      if (inherited) cpuexec_executor_release(inherited);
      cpuexec_executor *made = NULL;
      const cpuexec_resolved *resolved = NULL;
      cpuexec_registry *registry = cpuexec_registry_default();
      int rc = registry ? cpuexec_resolve_default(&resolved)
                        : cpuexec__fail(CPUEXEC_ENOMEM, "ParallelFor: the process registry could not be allocated");
      if (rc == 0) rc = cpuexec_registry_acquire(registry, resolved, &made);
      if (rc != 0) snprintf(pool_error_detail, sizeof pool_error_detail, "%s", cpuexec_last_error());
      atomic_store_explicit(&pool, made, memory_order_relaxed);
      atomic_store_explicit(&pool_error, rc, memory_order_relaxed);
      atomic_store_explicit(&ready_generation, generation, memory_order_release);
    }
    pthread_mutex_unlock(&pool_lock);
  }
  *exec = atomic_load_explicit(&pool, memory_order_relaxed);
  int rc = atomic_load_explicit(&pool_error, memory_order_relaxed);
  /* The detail is written once, before the release store that published rc. */
  return rc == 0 ? 0 : cpuexec__fail(rc, "%s", pool_error_detail);
}

typedef struct legacy_call {
  ParallelForFunction fn;
  void *ctx;
} legacy_call;

static int call_legacy(void *arg, int64_t begin, int64_t end) {
  const legacy_call *call = arg;
  call->fn(call->ctx, begin, end);
  return 0;
}

CPUEXEC_EXPORT int ParallelFor(int64_t total, int64_t grain, void *ctx, ParallelForFunction fn) {
  if (!fn) return cpuexec__fail(CPUEXEC_EINVAL, "fn: NULL; pass the range function to run");
  if (grain < 1)
    return cpuexec__fail(CPUEXEC_EINVAL, "grain: %lld is below 1; pass the smallest range worth one call",
                         (long long)grain);
  if (total <= 0) return 0;
  legacy_call call = {fn, ctx};
  cpuexec_executor *exec = cpuexec_current();
  int rc = 0;
  if (!exec) rc = process_pool(&exec);
  if (!exec) {
    /* No pool could be made: the work still runs, on the caller. */
    for (int64_t i = 0; i < total; i += grain) fn(ctx, i, total - i > grain ? i + grain : total);
    return rc;
  }
  return cpuexec_parallel_for(exec, total, grain, &call, call_legacy, 0);
}

CPUEXEC_EXPORT int32_t ParallelForThreadCount(void) {
  cpuexec_executor *exec = cpuexec_current();
  if (!exec) (void)process_pool(&exec);
  return exec ? cpuexec_executor_effective_threads(exec) : 1;
}
