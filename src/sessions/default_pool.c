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
 * A failed start (a transient pthread_create failure, EAGAIN) is retried
 * with a backoff counted in calls, not time (no clock read, no waiting in
 * tests): after the k-th failed attempt the next RETRY_GAP(k) calls get no
 * pool without trying, then one call tries again; the gap doubles up to
 * RETRY_GAP_MAX. Callers run the work themselves meanwhile (ParallelFor).
 *
 * Lock order: pool_lock, then the process default's and the topology's
 * locks, then the registry's (acquire runs under pool_lock); fork.c takes
 * them in that order. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <cpuexec/policy.h>
#include <cpuexec/registry.h>
#include <cpuexec/resolve.h>

#include "core/test_hooks.h"
#include "core/error.h"
#include "os/fork.h"

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
/* The fork generation pool and pool_error belong to, plus one (0: none yet). */
static _Atomic uint64_t ready;
/* The process-wide lease, or NULL when it could not be made. */
static _Atomic(cpuexec_executor *) pool;
/* Why it could not be made (pool_lock writes; readers follow `ready`). */
static atomic_int pool_error;
static char pool_error_detail[256]; /* pool_lock: written and read under it */

static void fork_prepare(void) { pthread_mutex_lock(&pool_lock); }
static void fork_parent(void) { pthread_mutex_unlock(&pool_lock); }
static void fork_child(void) { pthread_mutex_init(&pool_lock, NULL); }

static const cpuexec__fork_handlers fork_handlers = {fork_prepare, fork_parent, fork_child};
__attribute__((constructor)) static void fork_register(void) {
  cpuexec__fork_handlers_set(CPUEXEC__FORK_DEFAULT_POOL, &fork_handlers);
}

#define RETRY_GAP_MAX 1024u
static atomic_uint retry_gap = 1; /* calls to answer without trying before the next attempt */
static atomic_uint calls_skipped; /* calls since the last failed attempt */
#if CPUEXEC_TEST_HOOKS
_Atomic unsigned cpuexec__test_legacy_pool_attempts; /* attempts made (tests read it) */
#endif

/* The default resolution, or, when it cannot be placed (CPUEXEC_NUM_THREADS
 * above the cores a pinning policy can use, a cpu_set the process cannot
 * see), the same request unpinned, with a warning that names the input:
 * the callers of the default pool are legacy call sites that must run
 * anyway. An allocation failure is returned as it is (the pool is retried). */
static int resolve_for_pool(cpuexec_resolved **owned, const cpuexec_resolved **resolved) {
  *owned = NULL;
  int rc = cpuexec_policy_resolve_default(resolved);
  if (rc == 0 || rc == CPUEXEC_ENOMEM) return rc;
  char why[300];
  snprintf(why, sizeof why, "%s", cpuexec_error_message());
  cpuexec_policy p;
  int env_rc = cpuexec_policy_from_environment(&p);
  if (env_rc == CPUEXEC_ENOMEM) return env_rc;
  if (env_rc != 0) cpuexec_policy_init(&p);
  p.affinity_policy = CPUEXEC_AFFINITY_NONE;
  p.cpu_set_count = 0;
  int unpinned_rc = cpuexec_policy_resolve(&p, NULL, owned);
  if (unpinned_rc == CPUEXEC_ENOMEM) return unpinned_rc;
  if (unpinned_rc != 0) return cpuexec__fail(rc, "%s", why); /* not about placement: the first reason stands */
  *resolved = *owned;
  static atomic_bool said;
  if (!atomic_exchange_explicit(&said, true, memory_order_relaxed))
    fprintf(stderr, "libcpuexec: the default pool: %s; it runs unpinned\n", why);
  return 0;
}

/* One attempt at the pool, under pool_lock. */
static void make_pool(uint64_t generation, bool retrying) {
  cpuexec_executor *made = NULL;
  const cpuexec_resolved *resolved = NULL;
  cpuexec_resolved *owned = NULL;
  cpuexec_registry *registry = cpuexec_registry_default();
  CPUEXEC__TEST_COUNT(cpuexec__test_legacy_pool_attempts);
  int rc = registry ? resolve_for_pool(&owned, &resolved)
                    : cpuexec__fail(CPUEXEC_ENOMEM, "default pool: the process registry could not be allocated");
  if (rc == 0) rc = cpuexec_registry_acquire(registry, resolved, &made);
  cpuexec_resolved_destroy(owned); /* the executor keeps its own reference */
  if (rc != 0) {
    snprintf(pool_error_detail, sizeof pool_error_detail, "%s", cpuexec_error_message());
    unsigned gap = atomic_load_explicit(&retry_gap, memory_order_relaxed);
    if (retrying) gap = gap * 2 < RETRY_GAP_MAX ? gap * 2 : RETRY_GAP_MAX;
    atomic_store_explicit(&retry_gap, gap, memory_order_relaxed);
  } else {
    atomic_store_explicit(&retry_gap, 1, memory_order_relaxed);
  }
  atomic_store_explicit(&calls_skipped, 0, memory_order_relaxed);
  atomic_store_explicit(&pool, made, memory_order_relaxed);
  atomic_store_explicit(&pool_error, rc, memory_order_relaxed);
  atomic_store_explicit(&ready, generation + 1, memory_order_release);
}

CPUEXEC_EXPORT int cpuexec_registry_default_executor(cpuexec_executor **out) {
  if (!out) return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass where to store the executor");
  uint64_t generation = cpuexec__fork_generation_now();
  bool made = atomic_load_explicit(&ready, memory_order_acquire) == generation + 1;
  bool retry = made && !atomic_load_explicit(&pool, memory_order_relaxed) &&
               atomic_fetch_add_explicit(&calls_skipped, 1, memory_order_relaxed) + 1 >
                   atomic_load_explicit(&retry_gap, memory_order_relaxed);
  if (!made || retry) {
    int rc = cpuexec__fork_init();
    if (rc != 0) {
      *out = NULL;
      return rc;
    }
    pthread_mutex_lock(&pool_lock);
    generation = cpuexec__fork_generation_now();
    if (atomic_load_explicit(&ready, memory_order_relaxed) != generation + 1) {
      /* First use in this process, or a fork child: the inherited lease
       * frees memory only (the registry forgot its pool). */
      cpuexec_executor *inherited = atomic_load_explicit(&pool, memory_order_relaxed);
      if (inherited) cpuexec_executor_release(inherited);
      atomic_store_explicit(&pool, NULL, memory_order_relaxed);
      atomic_store_explicit(&retry_gap, 1, memory_order_relaxed);
      make_pool(generation, false);
    } else if (retry && !atomic_load_explicit(&pool, memory_order_relaxed)) {
      make_pool(generation, true); /* unless another thread retried meanwhile */
    }
    pthread_mutex_unlock(&pool_lock);
  }
  *out = atomic_load_explicit(&pool, memory_order_relaxed);
  int rc = atomic_load_explicit(&pool_error, memory_order_relaxed);
  if (rc == 0) return 0;
  /* A retry on another thread may be rewriting the detail: read it, with
   * the error it belongs to, under pool_lock (a path that runs serially
   * anyway). */
  pthread_mutex_lock(&pool_lock);
  *out = atomic_load_explicit(&pool, memory_order_relaxed);
  rc = atomic_load_explicit(&pool_error, memory_order_relaxed);
  if (rc != 0) cpuexec__fail(rc, "%s", pool_error_detail);
  pthread_mutex_unlock(&pool_lock);
  return rc;
}
