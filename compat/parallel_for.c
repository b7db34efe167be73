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
 * Lock order: pool_lock, then the process default's and the topology's
 * locks (cpuexec_resolve_default), then the registry's (acquire runs under
 * pool_lock). The fork handlers are registered after the registry's, so the
 * prepare handlers (run in reverse order of registration) take them in the
 * same order. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cpuexec/registry.h>
#include <cpuexec/session.h>

#include "../src/error.h"
#include "../src/executor_lease.h"
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
  /* The registry, the process topology and the process default register
   * their handlers on first use; make sure that came first so fork takes
   * pool_lock before their locks (make_pool takes them under pool_lock). */
  (void)cpuexec_registry_default();
  const cpuexec_resolved *ignored;
  (void)cpuexec_resolve_default(&ignored);
  pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* Pool creation that failed is retried with a backoff counted in calls, not
 * time (so no clock is read and tests need no waiting): after the k-th
 * failed attempt the next RETRY_GAP(k) calls run serially without trying,
 * then one call tries again; the gap doubles up to RETRY_GAP_MAX. A
 * transient pthread_create failure (EAGAIN) thus costs a few serial calls,
 * and a permanent one costs one attempt per RETRY_GAP_MAX calls. */
#define RETRY_GAP_MAX 1024u
static atomic_uint retry_gap = 1; /* calls to run serially before the next attempt */
static atomic_uint calls_skipped; /* calls since the last failed attempt */
_Atomic unsigned cpuexec__legacy_pool_attempts; /* attempts made (tests read it) */

/* Prints msg once per process: legacy call sites ignore return codes, so
 * what ParallelFor adjusted on its own would otherwise go unseen. */
static void warn_once(atomic_bool *said, const char *msg) {
  if (!atomic_exchange_explicit(said, true, memory_order_relaxed)) fprintf(stderr, "libcpuexec: %s\n", msg);
}

/* The default resolution, or, when it cannot be placed (CPUEXEC_NUM_THREADS
 * above the cores a pinning policy can use, a cpu_set the process cannot
 * see), the same request unpinned: a legacy call site must run anyway. */
static int resolve_legacy(cpuexec_resolved **owned, const cpuexec_resolved **resolved) {
  *owned = NULL;
  int rc = cpuexec_resolve_default(resolved);
  if (rc == 0) return 0;
  char why[300];
  snprintf(why, sizeof why, "%s", cpuexec_last_error());
  cpuexec_policy p;
  if (cpuexec_policy_from_environment(&p) != 0) cpuexec_policy_init(&p);
  p.affinity_policy = CPUEXEC_AFFINITY_NONE;
  p.cpu_set_count = 0;
  if (cpuexec_resolve(&p, NULL, owned) != 0) return cpuexec__fail(rc, "%s", why);
  *resolved = *owned;
  static atomic_bool said;
  char msg[400];
  snprintf(msg, sizeof msg, "ParallelFor: the default policy cannot be placed (%s); the legacy pool runs unpinned",
           why);
  warn_once(&said, msg);
  return 0;
}

/* One attempt at the process-wide pool, under pool_lock. */
static void make_pool(unsigned generation, bool retrying) {
  cpuexec_executor *made = NULL;
  const cpuexec_resolved *resolved = NULL;
  cpuexec_resolved *owned = NULL;
  cpuexec_registry *registry = cpuexec_registry_default();
  atomic_fetch_add_explicit(&cpuexec__legacy_pool_attempts, 1, memory_order_relaxed);
  int rc = registry ? resolve_legacy(&owned, &resolved)
                    : cpuexec__fail(CPUEXEC_ENOMEM, "ParallelFor: the process registry could not be allocated");
  if (rc == 0) rc = cpuexec_registry_acquire(registry, resolved, &made);
  cpuexec_resolved_destroy(owned); /* the executor keeps its own reference */
  if (rc != 0) {
    snprintf(pool_error_detail, sizeof pool_error_detail, "%s", cpuexec_last_error());
    /* The first failure waits 1 call; each failed retry doubles the gap. */
    unsigned gap = atomic_load_explicit(&retry_gap, memory_order_relaxed);
    if (retrying) gap = gap * 2 < RETRY_GAP_MAX ? gap * 2 : RETRY_GAP_MAX;
    atomic_store_explicit(&retry_gap, gap, memory_order_relaxed);
  } else {
    atomic_store_explicit(&retry_gap, 1, memory_order_relaxed);
  }
  atomic_store_explicit(&calls_skipped, 0, memory_order_relaxed);
  atomic_store_explicit(&pool, made, memory_order_relaxed);
  atomic_store_explicit(&pool_error, rc, memory_order_relaxed);
  atomic_store_explicit(&ready_generation, generation, memory_order_release);
}

/* Makes (once per process, retried after failures) and returns the
 * process-wide pool; on failure *exec is NULL and the creation error is
 * returned, with its detail. */
static int process_pool(cpuexec_executor **exec) {
  unsigned generation = atomic_load_explicit(&fork_generation, memory_order_relaxed);
  bool ready = atomic_load_explicit(&ready_generation, memory_order_acquire) == generation;
  bool retry = ready && !atomic_load_explicit(&pool, memory_order_relaxed) &&
               atomic_fetch_add_explicit(&calls_skipped, 1, memory_order_relaxed) + 1 >
                   atomic_load_explicit(&retry_gap, memory_order_relaxed);
  if (!ready || retry) {
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&pool_lock);
    generation = atomic_load_explicit(&fork_generation, memory_order_relaxed);
    if (atomic_load_explicit(&ready_generation, memory_order_relaxed) != generation) {
      cpuexec_executor *inherited = atomic_load_explicit(&pool, memory_order_relaxed);
      if (inherited) cpuexec_executor_release(inherited);
      atomic_store_explicit(&pool, NULL, memory_order_relaxed);
      atomic_store_explicit(&retry_gap, 1, memory_order_relaxed);
      make_pool(generation, false);
    } else if (retry && !atomic_load_explicit(&pool, memory_order_relaxed)) {
      make_pool(generation, true); /* another thread may have retried meanwhile */
    }
    pthread_mutex_unlock(&pool_lock);
  }
  *exec = atomic_load_explicit(&pool, memory_order_relaxed);
  int rc = *exec ? 0 : atomic_load_explicit(&pool_error, memory_order_relaxed);
  /* The detail is written before the release store that published rc; a
   * retry may rewrite it only under pool_lock, with the same kind of text. */
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

typedef struct serial_call {
  const legacy_call *call;
  int64_t grain;
} serial_call;

static int serial_chunks(void *arg, int64_t begin, int64_t end) {
  const serial_call *sc = arg;
  for (int64_t i = begin; i < end; i += sc->grain)
    sc->call->fn(sc->call->ctx, i, end - i > sc->grain ? i + sc->grain : end);
  return 0;
}

/* The serial loop on the caller, one grain at a time, inside a region scope
 * (an executor-less cpuexec_parallel_for) so nested calls stay inline. */
static void serial_legacy(int64_t total, int64_t grain, const legacy_call *call) {
  serial_call sc = {call, grain};
  (void)cpuexec_parallel_for(NULL, total, total, &sc, serial_chunks, 1);
}

CPUEXEC_EXPORT int ParallelFor(int64_t total, int64_t grain, void *ctx, ParallelForFunction fn) {
  if (!fn) return cpuexec__fail(CPUEXEC_EINVAL, "fn: NULL; pass the range function to run");
  if (grain < 1) {
    /* A legacy call site ignores the return code: skipping the loop would
     * lose the work silently, so the smallest grain is used instead. */
    static atomic_bool said;
    warn_once(&said, "ParallelFor: a grain of 0 or below is treated as 1 (the smallest range)");
    grain = 1;
  }
  if (total <= 0) return 0;
  legacy_call call = {fn, ctx};
  cpuexec_executor *exec = cpuexec_current();
  int rc = 0;
  if (exec && cpuexec__executor_inherited(exec)) {
    /* The installed executor's workers stayed in the parent: run the loop
     * here, and say it could not run on that executor. */
    serial_legacy(total, grain, &call);
    return cpuexec__fail(CPUEXEC_EFORKED,
                         "ParallelFor: the installed executor was inherited across fork(); the loop ran serially "
                         "(install an executor created in the child)");
  }
  if (!exec) rc = process_pool(&exec);
  if (!exec) {
    /* No pool could be made: the work still runs, on the caller. */
    serial_legacy(total, grain, &call);
    return rc;
  }
  return cpuexec_parallel_for(exec, total, grain, &call, call_legacy, 0);
}

CPUEXEC_EXPORT uint32_t ParallelForThreadCount(void) {
  cpuexec_executor *exec = cpuexec_current();
  if (!exec) (void)process_pool(&exec);
  return exec ? cpuexec_executor_effective_threads(exec) : 1;
}
