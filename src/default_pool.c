/* The process-wide default pool: one lease from the default registry on the
 * default resolution, made on first use and shared by every caller that has
 * no executor of its own (the legacy ParallelFor outside any session).
 *
 * Made once per process under pool_lock and then read without a lock: pool
 * and pool_error are published by the release store of ready, which names
 * the fork generation they belong to (plus one, so 0 means "not yet"). The
 * generation changes only in the fork child, while the child has one
 * thread, so a child sees a stale `ready` and makes a fresh pool on its
 * first call. The inherited lease is released on that path; the registry
 * has already forgotten its pool, so that frees memory only.
 *
 * Lock order: pool_lock, then the registry's locks (acquire runs under
 * pool_lock); fork.c takes them in that order. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include <cpuexec/registry.h>

#include "error.h"
#include "fork.h"

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
/* The fork generation pool and pool_error belong to, plus one (0: none yet). */
static _Atomic uint64_t ready;
/* The process-wide lease, or NULL when it could not be made. */
static _Atomic(cpuexec_executor *) pool;
/* Why it could not be made (pool_lock writes; readers follow `ready`). */
static atomic_int pool_error;
static char pool_error_detail[256];

void cpuexec__default_pool_fork_prepare(void) { pthread_mutex_lock(&pool_lock); }
void cpuexec__default_pool_fork_parent(void) { pthread_mutex_unlock(&pool_lock); }
void cpuexec__default_pool_fork_child(void) { pthread_mutex_init(&pool_lock, NULL); }

static void make_pool(uint64_t generation) {
  cpuexec_executor *inherited = atomic_load_explicit(&pool, memory_order_relaxed);
  if (inherited) cpuexec_executor_release(inherited);
  cpuexec_executor *made = NULL;
  const cpuexec_resolved *resolved = NULL;
  cpuexec_registry *registry = cpuexec_registry_default();
  int rc = registry ? cpuexec_resolve_default(&resolved)
                    : cpuexec__fail(CPUEXEC_ENOMEM, "default pool: the process registry could not be allocated");
  if (rc == 0) rc = cpuexec_registry_acquire(registry, resolved, &made);
  if (rc != 0) snprintf(pool_error_detail, sizeof pool_error_detail, "%s", cpuexec_last_error());
  atomic_store_explicit(&pool, made, memory_order_relaxed);
  atomic_store_explicit(&pool_error, rc, memory_order_relaxed);
  atomic_store_explicit(&ready, generation + 1, memory_order_release);
}

CPUEXEC_EXPORT int cpuexec_registry_default_executor(cpuexec_executor **out) {
  if (!out) return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass where to store the executor");
  uint64_t generation = cpuexec__fork_generation_now();
  if (atomic_load_explicit(&ready, memory_order_acquire) != generation + 1) {
    int rc = cpuexec__fork_init();
    if (rc != 0) {
      *out = NULL;
      return rc;
    }
    pthread_mutex_lock(&pool_lock);
    generation = cpuexec__fork_generation_now();
    if (atomic_load_explicit(&ready, memory_order_relaxed) != generation + 1) make_pool(generation);
    pthread_mutex_unlock(&pool_lock);
  }
  *out = atomic_load_explicit(&pool, memory_order_relaxed);
  int rc = atomic_load_explicit(&pool_error, memory_order_relaxed);
  /* The detail is written once per generation, before the release store
   * that published rc. */
  return rc == 0 ? 0 : cpuexec__fail(rc, "%s", pool_error_detail);
}
