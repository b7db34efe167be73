/* The registry of shared, compatible pools.
 *
 * A registry maps sharing keys (cpuexec_resolved_sharing_key) to pools. Each
 * pool has one entry; an entry counts the leases handed out on it. The last
 * release stops the pool at once, or, with idle_retention_ns > 0, leaves it
 * idle ("retained") so a compatible acquire within the retention reuses its
 * threads.
 *
 * Retention expires lazily: every registry call (acquire, release, retain,
 * live_pools, destroy) first stops the retained pools whose retention has
 * passed. No timer thread exists, so a library that promises to start no
 * thread of its own does not start one for housekeeping; the cost is that an
 * expired pool keeps its parked (idle, sleeping) workers until the next
 * registry call. Expired pools never count against capacity or in
 * cpuexec_registry_live_pools(), because both sweep first.
 *
 * Starting a pool: the acquiring thread inserts a "starting" entry (exec
 * NULL) under the lock, which reserves capacity and tells concurrent
 * acquirers of the same key to wait on `changed` for it, then creates the
 * executor with the lock released. So threads start outside the lock (an
 * unrelated acquire is never blocked by a slow start) and two acquirers of
 * one key never start two pools only to stop one. A failed start removes the
 * entry and wakes the waiters, which try again themselves.
 *
 * Stopping a pool (cpuexec__executor_free joins its workers) also happens
 * outside the lock: entries are unlinked under the lock and finalized after.
 *
 * Fork (the handlers below, called by fork.c in the lock order written
 * there): prepare takes every registry lock (after the list lock), the
 * parent releases them, and the child re-initialises
 * the locks and forget every entry. Inherited pools are unusable in the child
 * (their workers do not exist there), so a compatible acquire in the child
 * starts a fresh pool. A lease held across fork stays valid as a handle:
 * cpuexec_parallel_for() on it returns CPUEXEC_EFORKED, and releasing it
 * frees memory only (cpuexec__executor_free in a child touches no thread).
 *
 * Lock order: list_lock, then a registry's lock. Nothing else is taken while
 * a registry lock is held (no executor call, no other registry). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cpuexec/registry.h>

#include "core/test_hooks.h"
#include "core/debug.h"
#include "core/error.h"
#include "executor/executor_lease.h"
#include "os/fork.h"
#include "os/os.h"
#include "registry_internal.h"

#define DEFAULT_CAPACITY 8u

typedef struct registry_entry {
  /* Next in registry->entries, registry->forgotten, or a local finalize
   * list; guarded by the registry lock while the entry is reachable. */
  struct registry_entry *next;
  char *key;
  /* NULL while the pool starts; written once, under the lock. */
  cpuexec_executor *exec;
  /* Leases on this pool (guarded by the lock). */
  uint32_t leases;
  /* Effective threads 1: no thread, no capacity, never retained. */
  bool serial;
  /* Inherited across fork: no longer in the list, kept for its leases. */
  bool orphan;
  /* CLOCK_MONOTONIC time of the last release, while leases == 0. */
  uint64_t idle_since_ns;
} registry_entry;

struct cpuexec_registry {
  pthread_mutex_t lock;
  /* Broadcast when a starting entry becomes ready or is removed. */
  pthread_cond_t changed;
  uint32_t capacity;          /* under the lock (cpuexec_registry_configure) */
  uint64_t idle_retention_ns; /* under the lock */
  /* Live entries: starting, leased, or retained idle. */
  registry_entry *entries;
  /* Entries forgotten at fork with no lease on them: finalized (memory
   * only) at the next call, since the fork handler itself should do no
   * more than pointer work. */
  registry_entry *forgotten;
  /* Every lease not yet released, inherited ones included: destroy refuses
   * while any is out, since releasing it would reach the registry. */
  uint64_t leases;
  bool process_owned;
  /* The global list of registries, for the fork handlers (list_lock). */
  struct cpuexec_registry *list_prev, *list_next;
};

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static cpuexec_registry *list_head;

/* The process registry, made on first use under default_lock and published
 * by a release store; a failed allocation leaves it NULL and the next call
 * tries again, so one failed malloc never disables the process's sessions
 * and pools for good. default_lock comes before list_lock (fork.c). */
static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(cpuexec_registry *) default_registry;
/* CPUEXEC_REGISTRY is read once (default_env_read, under default_lock);
 * a malformed value's error and message are written then, before the
 * registry is published, and never change. */
static bool default_env_read;
static int default_env_error;
static char default_env_detail[400];
static cpuexec_registry_options default_options;

/* The clock retention is timed by; tests replace it (registry_internal.h). */
#if CPUEXEC_TEST_HOOKS
_Atomic(cpuexec__clock_fn) cpuexec__test_registry_clock; /* NULL: static storage starts zeroed */
_Atomic int cpuexec__test_registry_alloc_fails;
#endif

static uint64_t registry_now(void) {
  cpuexec__clock_fn clock = CPUEXEC__TEST_HOOK(cpuexec__test_registry_clock, NULL);
  return clock ? clock() : cpuexec__os_now_ns();
}

/* ---- fork ---------------------------------------------------------------- */

static void fork_prepare(void) {
  pthread_mutex_lock(&default_lock);
  pthread_mutex_lock(&list_lock);
  for (cpuexec_registry *r = list_head; r; r = r->list_next) pthread_mutex_lock(&r->lock);
}

static void fork_parent(void) {
  for (cpuexec_registry *r = list_head; r; r = r->list_next) pthread_mutex_unlock(&r->lock);
  pthread_mutex_unlock(&list_lock);
  pthread_mutex_unlock(&default_lock);
}

/* The only thread of the child: re-create the locks (their holders' states
 * are meaningless here) and forget every pool. Leased entries stay reachable
 * from their executors' lease slots until released; the rest wait on
 * `forgotten` for the next call. A starting entry belongs to a creator that
 * does not exist in the child, so it is forgotten too. */
static void fork_child(void) {
  pthread_mutex_init(&default_lock, NULL);
  pthread_mutex_init(&list_lock, NULL);
  for (cpuexec_registry *r = list_head; r; r = r->list_next) {
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->changed, NULL);
    registry_entry *e = r->entries;
    r->entries = NULL;
    while (e) {
      registry_entry *next = e->next;
      e->next = NULL;
      if (e->exec && e->leases > 0) {
        e->orphan = true;
      } else {
        e->next = r->forgotten;
        r->forgotten = e;
      }
      e = next;
    }
  }
}

static const cpuexec__fork_handlers fork_handlers = {fork_prepare, fork_parent, fork_child};
__attribute__((constructor)) static void fork_register(void) {
  cpuexec__fork_handlers_set(CPUEXEC__FORK_REGISTRY, &fork_handlers);
}

/* ---- entries ------------------------------------------------------------- */

/* Stops (or, after fork, frees) the pools of a finalize list. Called with no
 * lock held: cpuexec__executor_free joins threads. */
static void finalize(registry_entry *list) {
  while (list) {
    registry_entry *next = list->next;
    if (list->exec) cpuexec__executor_free(list->exec);
    free(list->key);
    free(list);
    list = next;
  }
}

static void unlink_entry(cpuexec_registry *r, registry_entry *e) {
  for (registry_entry **p = &r->entries; *p; p = &(*p)->next) {
    if (*p == e) {
      *p = e->next;
      e->next = NULL;
      return;
    }
  }
}

/* Under the lock: moves expired retained pools and forgotten entries onto
 * *dead for finalize() after the lock is released. */
static void sweep(cpuexec_registry *r, registry_entry **dead) {
  while (r->forgotten) {
    registry_entry *e = r->forgotten;
    r->forgotten = e->next;
    e->next = *dead;
    *dead = e;
  }
  if (r->idle_retention_ns == 0) return;
  uint64_t now = registry_now();
  registry_entry **p = &r->entries;
  while (*p) {
    registry_entry *e = *p;
    if (e->exec && e->leases == 0 && now - e->idle_since_ns >= r->idle_retention_ns) {
      *p = e->next;
      e->next = *dead;
      *dead = e;
    } else {
      p = &e->next;
    }
  }
}

/* Under the lock: pools that take capacity (threads or leases, not serial). */
static uint32_t count_live(const cpuexec_registry *r) {
  uint32_t n = 0;
  for (const registry_entry *e = r->entries; e; e = e->next) n += !e->serial;
  return n;
}

/* Under the lock: the retained idle pool released longest ago, or NULL. */
static registry_entry *oldest_idle(cpuexec_registry *r) {
  registry_entry *best = NULL;
  for (registry_entry *e = r->entries; e; e = e->next)
    if (!e->serial && e->exec && e->leases == 0 && (!best || e->idle_since_ns < best->idle_since_ns)) best = e;
  return best;
}

static registry_entry *find_entry(cpuexec_registry *r, const char *key) {
  for (registry_entry *e = r->entries; e; e = e->next)
    if (strcmp(e->key, key) == 0) return e;
  return NULL;
}

/* ---- public API ---------------------------------------------------------- */

static int check_options(const cpuexec_registry_options *options) {
  if (options->capacity < 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "capacity: %d is negative; use 0 for the default (%u) or a pool count",
                         (int)options->capacity, DEFAULT_CAPACITY);
  return 0;
}

static uint32_t capacity_of(const cpuexec_registry_options *options) {
  return options->capacity == 0 ? DEFAULT_CAPACITY : (uint32_t)options->capacity;
}

static int registry_new(const cpuexec_registry_options *options, bool process_owned, cpuexec_registry **out) {
  int rc = cpuexec__fork_init();
  if (rc != 0) return rc;
  cpuexec_registry *r = calloc(1, sizeof *r);
  if (!r) return cpuexec__fail(CPUEXEC_ENOMEM, "registry: out of memory allocating %zu bytes", sizeof *r);
  pthread_mutex_init(&r->lock, NULL);
  pthread_cond_init(&r->changed, NULL);
  r->capacity = capacity_of(options);
  r->idle_retention_ns = options->idle_retention_ns;
  r->process_owned = process_owned;
  pthread_mutex_lock(&list_lock);
  r->list_next = list_head;
  if (list_head) list_head->list_prev = r;
  list_head = r;
  pthread_mutex_unlock(&list_lock);
  *out = r;
  return 0;
}

CPUEXEC_EXPORT int cpuexec_registry_create(const cpuexec_registry_options *options, cpuexec_registry **out) {
  if (!out) return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass the address of a cpuexec_registry pointer");
  *out = NULL;
  cpuexec_registry_options defaults;
  if (!options) {
    cpuexec_registry_options_init(&defaults);
    options = &defaults;
  }
  int rc = check_options(options);
  if (rc != 0) return rc;
  return registry_new(options, false, out);
}

CPUEXEC_EXPORT int cpuexec_registry_configure(cpuexec_registry *registry, const cpuexec_registry_options *options) {
  if (!registry) return cpuexec__fail(CPUEXEC_EINVAL, "registry: NULL; pass the registry to configure");
  cpuexec_registry_options defaults;
  if (!options) {
    cpuexec_registry_options_init(&defaults);
    options = &defaults;
  }
  int rc = check_options(options);
  if (rc != 0) return rc;
  registry_entry *dead = NULL;
  pthread_mutex_lock(&registry->lock);
  registry->capacity = capacity_of(options);
  registry->idle_retention_ns = options->idle_retention_ns;
  /* Idle pools kept under the old retention: with none now, stop them. */
  if (registry->idle_retention_ns == 0) {
    registry_entry **p = &registry->entries;
    while (*p) {
      registry_entry *e = *p;
      if (e->exec && e->leases == 0) {
        *p = e->next;
        e->next = dead;
        dead = e;
      } else {
        p = &e->next;
      }
    }
  }
  sweep(registry, &dead);
  pthread_mutex_unlock(&registry->lock);
  finalize(dead);
  return 0;
}

CPUEXEC_EXPORT int cpuexec_registry_destroy(cpuexec_registry *registry) {
  if (!registry) return 0;
  if (registry->process_owned)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "registry: the default registry is process-owned and cannot be destroyed");
  pthread_mutex_lock(&list_lock);
  pthread_mutex_lock(&registry->lock);
  if (registry->leases > 0) {
    unsigned long long leases = registry->leases;
    pthread_mutex_unlock(&registry->lock);
    pthread_mutex_unlock(&list_lock);
    return cpuexec__fail(CPUEXEC_EBUSY, "registry: %llu lease(s) still live; release them before destroying it",
                         leases);
  }
  /* No lease out means no starting entry either (a starter holds the lease
   * it is about to hand out only after the start, so check explicitly). */
  for (registry_entry *e = registry->entries; e; e = e->next) {
    if (!e->exec) {
      pthread_mutex_unlock(&registry->lock);
      pthread_mutex_unlock(&list_lock);
      return cpuexec__fail(CPUEXEC_EBUSY, "registry: a pool is being started; destroy it after the acquire returns");
    }
  }
  registry_entry *dead = NULL;
  sweep(registry, &dead);
  while (registry->entries) {
    registry_entry *e = registry->entries;
    registry->entries = e->next;
    e->next = dead;
    dead = e;
  }
  if (registry->list_prev) registry->list_prev->list_next = registry->list_next;
  else list_head = registry->list_next;
  if (registry->list_next) registry->list_next->list_prev = registry->list_prev;
  pthread_mutex_unlock(&registry->lock);
  pthread_mutex_unlock(&list_lock);
  finalize(dead);
  pthread_cond_destroy(&registry->changed);
  pthread_mutex_destroy(&registry->lock);
  free(registry);
  return 0;
}

/* One attempt at the process registry, under default_lock. */
static cpuexec_registry *default_make(void) {
  if (!default_env_read) {
    default_env_error = cpuexec_registry_options_from_environment(&default_options);
    if (default_env_error == CPUEXEC_ENOMEM) return NULL; /* read it again next time */
    if (default_env_error != 0) {
      snprintf(default_env_detail, sizeof default_env_detail, "%s", cpuexec_error_message());
      cpuexec_registry_options_init(&default_options);
    }
    default_env_read = true;
  }
  cpuexec_registry *made = NULL;
#if CPUEXEC_TEST_HOOKS
  if (atomic_load_explicit(&cpuexec__test_registry_alloc_fails, memory_order_relaxed) > 0) {
    atomic_fetch_sub_explicit(&cpuexec__test_registry_alloc_fails, 1, memory_order_relaxed);
    return NULL;
  }
#endif
  if (registry_new(&default_options, true, &made) != 0) return NULL;
  atomic_store_explicit(&default_registry, made, memory_order_release);
  return made;
}

int cpuexec__registry_default_environment_error(void) {
  if (!cpuexec_registry_default()) return CPUEXEC_ENOMEM; /* the message says so */
  return default_env_error == 0 ? 0 : cpuexec__fail(default_env_error, "%s", default_env_detail);
}

CPUEXEC_EXPORT cpuexec_registry *cpuexec_registry_default(void) {
  cpuexec_registry *registry = atomic_load_explicit(&default_registry, memory_order_acquire);
  if (registry) return registry;
  pthread_mutex_lock(&default_lock);
  registry = atomic_load_explicit(&default_registry, memory_order_relaxed);
  if (!registry) registry = default_make();
  pthread_mutex_unlock(&default_lock);
  if (!registry)
    cpuexec__fail(CPUEXEC_ENOMEM, "registry: out of memory making the process registry; the next call tries again");
  return registry;
}

CPUEXEC_EXPORT int cpuexec_registry_acquire(cpuexec_registry *registry, const cpuexec_resolved *resolved,
                                            cpuexec_executor **lease) {
  if (!lease) return cpuexec__fail(CPUEXEC_EINVAL, "lease: NULL; pass the address of a cpuexec_executor pointer");
  *lease = NULL;
  if (!registry)
    return cpuexec__fail(CPUEXEC_EINVAL, "registry: NULL; use cpuexec_registry_default() for the process registry");
  if (!resolved) return cpuexec__fail(CPUEXEC_EINVAL, "resolved: NULL; resolve a policy with cpuexec_policy_resolve()");
  const char *key = cpuexec_resolved_sharing_key(resolved);
  if (!key) return cpuexec__fail(CPUEXEC_EINVAL, "resolved: has no sharing key");
  bool serial = cpuexec_resolved_effective_threads(resolved) <= 1;

  registry_entry *dead = NULL;
  registry_entry *mine = NULL;
  pthread_mutex_lock(&registry->lock);
  sweep(registry, &dead);
  for (;;) {
    registry_entry *e = find_entry(registry, key);
    if (e && e->exec) {
      /* A pinned pool must still be where its key says (a CPU set change). */
      int placed = cpuexec_resolved_worker_processors(resolved, NULL) != NULL
                       ? cpuexec__executor_check_placement(e->exec)
                       : 0;
      if (placed != 0) {
        pthread_mutex_unlock(&registry->lock);
        finalize(dead);
        return placed;
      }
      e->leases++;
      registry->leases++;
      *lease = e->exec;
      pthread_mutex_unlock(&registry->lock);
      finalize(dead);
      return 0;
    }
    if (!e) break;
    /* Another thread is starting this pool: wait for it rather than start a
     * second one. The wait releases the lock. */
    pthread_cond_wait(&registry->changed, &registry->lock);
    sweep(registry, &dead);
  }

  if (!serial && count_live(registry) >= registry->capacity) {
    registry_entry *victim = oldest_idle(registry);
    if (!victim) {
      uint32_t capacity = registry->capacity;
      pthread_mutex_unlock(&registry->lock);
      finalize(dead);
      return cpuexec__fail(CPUEXEC_ECAPACITY,
                           "registry: capacity %u reached; %u incompatible pools are leased and none is idle "
                           "(release one, reuse a compatible policy, or create a registry with a larger capacity)",
                           capacity, capacity);
    }
    unlink_entry(registry, victim);
    victim->next = dead;
    dead = victim;
  }

  mine = calloc(1, sizeof *mine);
  char *key_copy = mine ? strdup(key) : NULL;
  if (!key_copy) {
    free(mine);
    pthread_mutex_unlock(&registry->lock);
    finalize(dead);
    return cpuexec__fail(CPUEXEC_ENOMEM, "registry: out of memory recording a pool");
  }
  mine->key = key_copy;
  mine->serial = serial;
  mine->next = registry->entries;
  registry->entries = mine;
  pthread_mutex_unlock(&registry->lock);

  /* Evicted and expired pools stop before the new one starts, so the
   * process never holds both sets of threads at once. */
  finalize(dead);
  cpuexec_executor *exec = NULL;
  int rc = cpuexec_executor_create(resolved, &exec);

  pthread_mutex_lock(&registry->lock);
  if (rc != 0) {
    unlink_entry(registry, mine);
    pthread_cond_broadcast(&registry->changed);
    pthread_mutex_unlock(&registry->lock);
    free(mine->key);
    free(mine);
    return rc; /* cpuexec_executor_create recorded the detail */
  }
  cpuexec__lease_slot *slot = cpuexec__executor_lease_slot(exec);
  slot->registry = registry;
  slot->entry = mine;
  mine->exec = exec;
  mine->leases = 1;
  registry->leases++;
  pthread_cond_broadcast(&registry->changed);
  pthread_mutex_unlock(&registry->lock);
  *lease = exec;
  return 0;
}

CPUEXEC_EXPORT int cpuexec_executor_release(cpuexec_executor *lease) {
  if (!lease) return 0;
  /* The slot was written under the registry lock before the lease was
   * handed out, so reading the registry pointer here is ordered after it. */
  cpuexec__lease_slot *slot = cpuexec__executor_lease_slot(lease);
  cpuexec_registry *registry = slot->registry;
  if (!registry) return cpuexec__executor_unref(lease);
  registry_entry *dead = NULL;
  pthread_mutex_lock(&registry->lock);
  sweep(registry, &dead);
  registry_entry *e = slot->entry;
  CPUEXEC__CHECK(registry->leases >= e->leases, "registry: %llu lease(s) in all, fewer than the %u of one pool",
                 (unsigned long long)registry->leases, e->leases);
  if (e->leases == 0 || (e->leases == 1 && cpuexec__executor_running_here(lease))) {
    /* A release without a matching acquire (an idle retained pool), or the
     * last one from inside the pool's own region: refuse rather than stop a
     * pool that is running or that another thread may be about to reuse. */
    bool unheld = e->leases == 0;
    unsigned long long id = (unsigned long long)cpuexec_executor_id(lease);
    pthread_mutex_unlock(&registry->lock);
    finalize(dead);
    if (unheld)
      return cpuexec__misuse(CPUEXEC_ESTATE, "executor %llu: released more times than it was acquired or "
                                             "retained; release each reference once", id);
    return cpuexec__misuse(CPUEXEC_EBUSY, "executor %llu: its last reference released from inside one of its "
                                          "own callbacks; release it after the parallel call returns", id);
  }
  e->leases--;
  registry->leases--;
  if (e->leases == 0) {
    if (e->orphan) {
      e->next = dead; /* inherited: not in the list; frees memory only */
      dead = e;
    } else if (e->serial || registry->idle_retention_ns == 0) {
      unlink_entry(registry, e);
      e->next = dead;
      dead = e;
    } else {
      e->idle_since_ns = registry_now();
    }
  }
  pthread_mutex_unlock(&registry->lock);
  finalize(dead);
  return 0;
}

CPUEXEC_EXPORT int cpuexec_executor_retain(cpuexec_executor *exec) {
  if (!exec) return cpuexec__fail(CPUEXEC_EINVAL, "exec: NULL; retain an executor handle you hold");
  cpuexec__lease_slot *slot = cpuexec__executor_lease_slot(exec);
  cpuexec_registry *registry = slot->registry;
  if (!registry) return cpuexec__executor_ref(exec);
  pthread_mutex_lock(&registry->lock);
  registry_entry *e = slot->entry;
  if (e->leases == 0) {
    pthread_mutex_unlock(&registry->lock);
    return cpuexec__misuse(CPUEXEC_ESTATE, "executor %llu: has no lease left to retain; retain only a handle "
                                           "you hold", (unsigned long long)cpuexec_executor_id(exec));
  }
  e->leases++;
  registry->leases++;
  pthread_mutex_unlock(&registry->lock);
  return 0;
}

CPUEXEC_EXPORT int32_t cpuexec_registry_live_pools(const cpuexec_registry *registry) {
  if (!registry) return 0;
  /* Sweeping expired pools mutates the (non-const) object behind the const
   * view: the count must not include pools whose retention has passed. */
  cpuexec_registry *r = (cpuexec_registry *)registry;
  registry_entry *dead = NULL;
  pthread_mutex_lock(&r->lock);
  sweep(r, &dead);
  uint32_t n = count_live(r);
  pthread_mutex_unlock(&r->lock);
  finalize(dead);
  return (int32_t)n;
}
