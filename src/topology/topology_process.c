/* The process topology behind default resolutions, and what happens when
 * the process CPU set changes at run time (issue 13; seed 000 S000-111,
 * S000-5).
 *
 * Behaviour, as documented in cpuexec/topology.h:
 *   - The topology is loaded on first use and kept. Each later use compares
 *     the process's CPU set (the main thread's affinity, what `taskset -p`
 *     and a cgroup cpuset change move) with the set it was loaded under and
 *     loads it again when they differ, so new resolutions see the current
 *     set. cpuexec_topology_refresh() reloads unconditionally (a cgroup
 *     quota change cannot be seen without reading the files).
 *   - A topology hwloc cannot load falls back to one processor per core
 *     for each processor of the process CPU set the OS layer reports
 *     (os.h: sched_getaffinity() on Linux; serial when even that fails);
 *     a cgroup cpu.max that cannot be read is ignored. Either way the
 *     topology's `fallback` note becomes a resolution diagnostic, and
 *     the default session can still be created. Explicit loads
 *     (cpuexec_topology_load*()) still fail.
 * Replaced versions are kept until exit: callers hold plain pointers to the
 * version they resolved against. Everything here is under `lock`. */
#include "core/test_hooks.h"
#include "topology_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "os/fork.h"
#include "os/os.h"
#include "os/placement_generation.h"

#if CPUEXEC_TEST_HOOKS
const cpuexec_topology_options *_Atomic cpuexec__test_process_options;
#endif

typedef struct version {
  cpuexec_topology *topology;
  struct version *older;
} version;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static version *current;       /* newest first; every version kept */
static cpuexec__os_cpus loaded_under; /* the process CPU set current was loaded under */
static bool have_set;
static _Atomic unsigned generation;

static bool process_set(cpuexec__os_cpus *set) {
  cpuexec__os_cpus_zero(set);
  return cpuexec__os_process_cpus(set);
}

/* One processor per core for every processor in set (or processor 0 alone
 * when set is NULL): what the default can still run on without hwloc. */
static cpuexec_topology *flat(const cpuexec__os_cpus *set, const char *why) {
  cpuexec_topology *t = calloc(1, sizeof *t);
  uint32_t n = set ? (uint32_t)cpuexec__os_cpus_count(set) : 1;
  if (!t) return NULL;
  t->processors = calloc(n ? n : 1, sizeof *t->processors);
  const char *source = cpuexec__os_process_cpus_source();
  char from[128];
  if (set)
    snprintf(from, sizeof from, "one participant per processor %s reports", source ? source : "the OS layer");
  else
    snprintf(from, sizeof from, "serial (no CPU set either)");
  int len = snprintf(NULL, 0, "topology fallback: %s; using %s", why, from);
  t->fallback = len >= 0 ? malloc((size_t)len + 1) : NULL;
  t->source = strdup("this process (fallback)");
  if (!t->processors || !t->fallback || !t->source) {
    cpuexec_topology_destroy(t);
    return NULL;
  }
  snprintf(t->fallback, (size_t)len + 1, "topology fallback: %s; using %s", why, from);
  for (int32_t cpu = 0; set ? cpu < CPUEXEC__OS_CPUS_MAX : cpu < 1; cpu++) {
    if (set && !cpuexec__os_cpus_has(set, cpu)) continue;
    cpuexec__processor *p = &t->processors[t->processor_count];
    p->os_index = cpu;
    p->core = t->processor_count;
    p->kind_rank = CPUEXEC__KIND_UNKNOWN;
    t->processor_count++;
  }
  t->core_count = t->processor_count;
  t->package_count = 1;
  t->best_kind_rank = CPUEXEC__KIND_UNKNOWN;
  t->machine_processors = t->processor_count;
  t->smt_max = 1;
  t->live = true;
  return t;
}

/* Loads a new version (under lock); 0 or CPUEXEC_ENOMEM. */
static int reload(void) {
  cpuexec__os_cpus set;
  bool have = process_set(&set);
  cpuexec_topology *t = NULL;
  int rc = cpuexec__topology_load_live(CPUEXEC__TEST_HOOK(cpuexec__test_process_options, NULL), true, &t);
  if (rc == CPUEXEC_ENOMEM) return rc;
  if (rc != 0) {
    char why[300];
    snprintf(why, sizeof why, "%s", cpuexec_error_message());
    t = flat(have && cpuexec__os_cpus_count(&set) > 0 ? &set : NULL, why);
    if (!t) return cpuexec__fail(CPUEXEC_ENOMEM, "topology: out of memory building the fallback topology");
  }
  version *v = malloc(sizeof *v);
  if (!v) {
    cpuexec_topology_destroy(t);
    return cpuexec__fail(CPUEXEC_ENOMEM, "topology: out of memory");
  }
  v->topology = t;
  v->older = current;
  current = v;
  loaded_under = set;
  have_set = have;
  atomic_fetch_add_explicit(&generation, 1, memory_order_release);
  cpuexec__placement_changed(); /* cached pins are looked at again */
  return 0;
}

/* fork() while another thread holds `lock` must not leave the child's copy
 * locked: the handlers hold it across fork, after the process default's
 * lock (os/fork.h's slots give the order). */
static void fork_prepare(void) { pthread_mutex_lock(&lock); }
static void fork_parent(void) { pthread_mutex_unlock(&lock); }
static void fork_child(void) { pthread_mutex_init(&lock, NULL); }

static const cpuexec__fork_handlers fork_handlers = {fork_prepare, fork_parent, fork_child};
__attribute__((constructor)) static void fork_register(void) {
  cpuexec__fork_handlers_set(CPUEXEC__FORK_TOPOLOGY_PROCESS, &fork_handlers);
}

int cpuexec__topology_process(const cpuexec_topology **out) {
  cpuexec__os_cpus now;
  bool have = process_set(&now);
  (void)cpuexec__fork_init(); /* fork safety is reported by cpuexec_policy_resolve_default */
  pthread_mutex_lock(&lock);
  int rc = 0;
  if (!current || (have && (!have_set || !cpuexec__os_cpus_equal(&now, &loaded_under)))) rc = reload();
  *out = current ? current->topology : NULL;
  pthread_mutex_unlock(&lock);
  return *out ? 0 : rc;
}

unsigned cpuexec__topology_process_generation(void) {
  return atomic_load_explicit(&generation, memory_order_acquire);
}

CPUEXEC_EXPORT int cpuexec_topology_refresh(void) {
  (void)cpuexec__fork_init(); /* fork safety is reported by cpuexec_policy_resolve_default */
  pthread_mutex_lock(&lock);
  int rc = reload();
  pthread_mutex_unlock(&lock);
  return rc;
}
