/* Defaults that never fail (issue 10, section 4):
 *   - every implicit default is unpinned: a session without a policy, the
 *     legacy ParallelFor pool and pthreadpool_create(n);
 *   - pthreadpool_create(n) returns a pool for every n >= 0 under any
 *     CPUEXEC_POLICY, falling back to the unpinned default;
 *   - sessions on a registry with idle retention reuse their workers across
 *     destroy/create (the worker thread ids survive), for a registry the
 *     application makes, the process registry configured by the application,
 *     and the process registry configured by CPUEXEC_REGISTRY;
 *   - CPUEXEC_REGISTRY has the strict grammar of CPUEXEC_POLICY.
 * Cases that need an environment variable read once per process run in a
 * fresh process: the test executes itself with "--child <case>". */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#endif

#include <cmocka.h>

#include "support/portable.h"

#include <cpuexec.h>

#include <cpuexec/compat/parallel_for.h>
#include "pthreadpool.h"

static char self_path[4096];

/* Runs this program as "--child name" with one environment variable set;
 * returns its exit status (0: the child's checks passed). */
static int run_child(const char *name, const char *variable, const char *value) {
  static const char *const unset[] = {"CPUEXEC_POLICY", "CPUEXEC_REGISTRY", NULL};
  const char *argv[] = {self_path, "--child", name, NULL};
  return test_spawn(self_path, argv, unset, variable, value);
}

/* ---- unpinned defaults ----------------------------------------------------- */

static int process_cpu_count(void) {
#ifdef _WIN32
  DWORD_PTR process = 0, system = 0;
  return GetProcessAffinityMask(GetCurrentProcess(), &process, &system) ? __builtin_popcountll(process) : -1;
#else
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
#endif
}

/* The processors each thread that ran a range may use: all of the process's
 * when nothing pinned it. */
typedef struct masks {
  _Atomic int narrowest;
  _Atomic int calls;
} masks;

static void record_mask(masks *m) {
#ifdef _WIN32
  GROUP_AFFINITY affinity;
  int n = GetThreadGroupAffinity(GetCurrentThread(), &affinity) ? __builtin_popcountll(affinity.Mask) : -1;
#else
  cpu_set_t set;
  int n = pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
#endif
  int seen = atomic_load(&m->narrowest);
  while (n < seen && !atomic_compare_exchange_weak(&m->narrowest, &seen, n)) {
  }
  atomic_fetch_add(&m->calls, 1);
}

static void legacy_range(void *ctx, int64_t begin, int64_t end) {
  (void)begin;
  (void)end;
  record_mask(ctx);
}

static void pp_item(void *ctx, size_t i) {
  (void)i;
  record_mask(ctx);
}

static int session_range(void *ctx, int64_t begin, int64_t end) {
  (void)begin;
  (void)end;
  record_mask(ctx);
  return 0;
}

static int session_body(void *ctx) {
  return cpuexec_parallel_for(cpuexec_executor_current(), 64, 1, ctx, session_range, 0);
}

static int child_unpinned_defaults(void) {
  int cpus = process_cpu_count();
  /* A session without a policy. */
  cpuexec_session *s = NULL;
  if (cpuexec_session_create(NULL, &s) != 0) return 10;
  const cpuexec_resolved *r = cpuexec_executor_resolved(cpuexec_session_executor(s));
  int32_t workers = -1;
  cpuexec_resolved_worker_processors(r, &workers);
  if (cpuexec_resolved_request(r)->affinity_policy != CPUEXEC_AFFINITY_NONE || workers != 0) return 11;
  masks m = {cpus + 1, 0};
  if (cpuexec_session_run(s, &m, session_body) != 0 || m.narrowest != cpus) return 12;
  cpuexec_session_destroy(s);
  /* The legacy pool, more threads than this machine has (pinning could not). */
  masks legacy = {cpus + 1, 0};
  if (ParallelFor(1000, 1, &legacy, legacy_range) != 0 || legacy.narrowest != cpus) return 13;
  /* pthreadpool_create(n) for n above the processor count. */
  pthreadpool_t pool = pthreadpool_create((size_t)cpus + 2);
  if (pool == NULL || pthreadpool_get_threads_count(pool) != (size_t)cpus + 2) return 14;
  masks pp = {cpus + 1, 0};
  pthreadpool_parallelize_1d(pool, (pthreadpool_task_1d_t)pp_item, &pp, 1000, 0);
  if (pp.calls != 1000 || pp.narrowest != cpus) return 15;
  pthreadpool_destroy(pool);
  return 0;
}

static void implicit_defaults_are_unpinned(void **state) {
  (void)state;
  assert_int_equal(run_child("unpinned", NULL, NULL), 0);
  /* CPUEXEC_POLICY without an affinity key is unpinned too. */
  assert_int_equal(run_child("unpinned", "CPUEXEC_POLICY", "spin_policy=park_immediately"), 0);
}

/* ---- pthreadpool_create never fails for placement -------------------------- */

static int child_pthreadpool_counts(void) {
  int cpus = process_cpu_count();
  size_t counts[] = {0, 1, 2, 3, (size_t)cpus + 1, (size_t)cpus * 2 + 3};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    pthreadpool_t pool = pthreadpool_create(counts[i]);
    if (pool == NULL) return 20 + (int)i;
    size_t threads = pthreadpool_get_threads_count(pool);
    if (counts[i] > 0 && threads != counts[i]) return 30 + (int)i;
    if (threads < 1) return 40 + (int)i;
    masks m = {cpus + 1, 0};
    pthreadpool_parallelize_1d(pool, (pthreadpool_task_1d_t)pp_item, &m, 100, 0);
    if (m.calls != 100) return 50 + (int)i;
    pthreadpool_destroy(pool);
  }
  return 0;
}

static void pthreadpool_create_returns_a_pool_under_any_policy(void **state) {
  (void)state;
  static const char *const policies[] = {
      NULL,
      "spin_policy=park_immediately",
      "affinity_policy=physical_cores",
      "affinity_policy=physical_then_smt,spin_policy=fixed_duration,spin_budget=10us",
      "affinity_policy=explicit,cpu_set=0",
      "num_threads=1",
      "num_threads=lots", /* malformed: the default, with a diagnostic */
  };
  for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) {
    int rc = run_child("pthreadpool", policies[i] ? "CPUEXEC_POLICY" : NULL, policies[i]);
    if (rc != 0) fail_msg("CPUEXEC_POLICY=%s: child check %d failed", policies[i] ? policies[i] : "(unset)", rc);
  }
}

/* ---- idle retention -------------------------------------------------------- */

/* The thread of participant 1 of a 2-participant region. */
typedef struct worker_id {
  pthread_t thread;
  _Atomic int seen;
} worker_id;

static int record_worker(void *ctx, int64_t begin, int64_t end) {
  worker_id *w = ctx;
  (void)begin;
  (void)end;
  if (cpuexec_participant_index() == 1) {
    w->thread = pthread_self();
    atomic_store(&w->seen, 1);
  }
  return 0;
}

static int request_body(void *ctx) {
  /* Every participant runs its range, so participant 1 is a worker thread. */
  return cpuexec_parallel_for_flags(cpuexec_executor_current(), 2, 1, ctx, record_worker, 0, CPUEXEC_FOR_EVERY_PARTICIPANT);
}

/* One request: a session made, run and destroyed; returns its worker. */
static pthread_t one_request(const cpuexec_session_options *o, int *failed) {
  cpuexec_session *s = NULL;
  worker_id w = {0};
  if (cpuexec_session_create_with_options(o, &s) != 0 || cpuexec_session_run(s, &w, request_body) != 0 ||
      !atomic_load(&w.seen))
    (*failed)++;
  cpuexec_session_destroy(s);
  return w.thread;
}

/* Retention on: three requests, one worker thread. */
static int requests_share_one_worker(cpuexec_registry *registry) {
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = 2;
  p.spin_policy = CPUEXEC_SPIN_PARK_IMMEDIATELY;
  cpuexec_session_options o;
  cpuexec_session_options_init(&o);
  o.policy = &p;
  o.registry = registry;
  int failed = 0;
  pthread_t first = one_request(&o, &failed);
  pthread_t second = one_request(&o, &failed);
  pthread_t third = one_request(&o, &failed);
  if (failed) return 2;
  return pthread_equal(first, second) && pthread_equal(second, third) ? 0 : 1;
}

static void retained_sessions_reuse_their_workers(void **state) {
  (void)state;
  cpuexec_registry_options ro;
  cpuexec_registry_options_init(&ro);
  ro.idle_retention_ns = 3600ull * 1000000000u;
  cpuexec_registry *reg = NULL;
  assert_int_equal(cpuexec_registry_create(&ro, &reg), 0);
  assert_int_equal(requests_share_one_worker(reg), 0);
  assert_int_equal(cpuexec_registry_live_pools(reg), 1); /* idle, kept */
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
}

static int child_process_registry_configured(void) {
  cpuexec_registry_options ro;
  cpuexec_registry_options_init(&ro);
  ro.idle_retention_ns = 3600ull * 1000000000u;
  if (cpuexec_registry_configure(cpuexec_registry_default(), &ro) != 0) return 3;
  int rc = requests_share_one_worker(NULL);
  if (rc != 0) return 10 + rc;
  /* Retention off again: the idle pool stops at once. */
  if (cpuexec_registry_configure(cpuexec_registry_default(), NULL) != 0) return 4;
  return cpuexec_registry_live_pools(cpuexec_registry_default()) == 0 ? 0 : 5;
}

static int child_process_registry_from_environment(void) {
  int rc = requests_share_one_worker(NULL);
  return rc != 0 ? 10 + rc : cpuexec_registry_live_pools(cpuexec_registry_default()) == 1 ? 0 : 6;
}

static int child_malformed_registry_environment(void) {
  cpuexec_session *s = NULL;
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  if (cpuexec_session_create(&p, &s) != CPUEXEC_EINVAL || s != NULL) return 7;
  return strncmp(cpuexec_error_message(), "CPUEXEC_REGISTRY: idle_retention", 32) == 0 ? 0 : 8;
}

static void the_process_registry_takes_a_retention(void **state) {
  (void)state;
  assert_int_equal(run_child("configured", NULL, NULL), 0);
  assert_int_equal(run_child("environment", "CPUEXEC_REGISTRY", "idle_retention=3600s"), 0);
  assert_int_equal(run_child("malformed", "CPUEXEC_REGISTRY", "idle_retention=5"), 0);
}

/* The process registry's default capacity (8, DESIGN.md's registry): eight
 * incompatible policies lease eight pools, a ninth is CPUEXEC_ECAPACITY
 * naming the capacity, and releasing one makes room. A fresh process, so
 * no other test's pool counts. */
static int child_process_registry_capacity(void) {
  cpuexec_registry *registry = cpuexec_registry_default();
  if (!registry) return 30;
  cpuexec_executor *leases[9] = {0};
  cpuexec_resolved *resolved[9] = {0};
  for (int i = 0; i < 9; i++) {
    cpuexec_policy p;
    cpuexec_policy_init(&p);
    p.num_threads = 2 + i; /* nine sharing keys */
    p.spin_policy = CPUEXEC_SPIN_PARK_IMMEDIATELY;
    if (cpuexec_policy_resolve(&p, NULL, &resolved[i]) != 0) return 31;
  }
  for (int i = 0; i < 8; i++)
    if (cpuexec_registry_acquire(registry, resolved[i], &leases[i]) != 0)
      return fprintf(stderr, "lease %d: %s\n", i, cpuexec_error_message()), 32;
  if (cpuexec_registry_acquire(registry, resolved[8], &leases[8]) != CPUEXEC_ECAPACITY || leases[8] != NULL) return 33;
  if (strncmp(cpuexec_error_message(), "registry: capacity 8 reached", 28) != 0)
    return fprintf(stderr, "%s\n", cpuexec_error_message()), 34;
  /* A compatible policy still shares a leased pool at capacity. */
  cpuexec_executor *again = NULL;
  if (cpuexec_registry_acquire(registry, resolved[3], &again) != 0 || again != leases[3]) return 35;
  cpuexec_executor_release(again);
  cpuexec_executor_release(leases[0]);
  leases[0] = NULL;
  if (cpuexec_registry_acquire(registry, resolved[8], &leases[8]) != 0) return 36;
  for (int i = 0; i < 9; i++) {
    if (leases[i]) cpuexec_executor_release(leases[i]);
    cpuexec_resolved_destroy(resolved[i]);
  }
  return 0;
}

static void the_process_registry_holds_eight_incompatible_pools(void **state) {
  (void)state;
  assert_int_equal(run_child("capacity", NULL, NULL), 0);
}

/* ---- CPUEXEC_REGISTRY grammar ---------------------------------------------- */

static void registry_options_text_is_strict(void **state) {
  (void)state;
  static const struct {
    const char *text;
    int32_t capacity;
    uint64_t retention;
  } accepted[] = {
      {"", 0, 0},
      {"capacity=3", 3, 0},
      {"idle_retention=50ms", 0, 50000000u},
      {"idle_retention=0", 0, 0},
      {"idle_retention=7ns,capacity=12", 12, 7},
      {"capacity=1,idle_retention=2s", 1, 2000000000u},
      {"idle_retention=15us", 0, 15000},
  };
  for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
    cpuexec_registry_options o;
    memset(&o, 0xA5, sizeof o);
    if (cpuexec_registry_options_parse(accepted[i].text, &o) != 0)
      fail_msg("'%s' rejected: %s", accepted[i].text, cpuexec_error_message());
    assert_int_equal(o.capacity, accepted[i].capacity);
    assert_int_equal(o.idle_retention_ns, accepted[i].retention);
    assert_int_equal(o.reserved_[0], 0);
  }
  static const struct {
    const char *text, *fragment;
  } rejected[] = {
      {"capacity=0", "capacity: '0'"},
      {"capacity=-1", "capacity: '-1'"},
      {"capacity=08", "leading zero"},
      {"capacity=2147483648", "above 2147483647"},
      {"capacity=2,capacity=3", "capacity: given twice"},
      {"idle_retention=5", "idle_retention: '5' is not a duration"},
      {"idle_retention=5min", "idle_retention: '5min'"},
      {"idle_retention=ms", "idle_retention: 'ms'"},
      {"idle_retention=99999999999999999999ns", "idle_retention:"},
      {"retention=5ms", "unknown key 'retention'"},
      {"capacity=2,", "trailing comma"},
      {"capacity", "not key=value"},
      {"capacity= 2", "capacity: ' 2'"},
  };
  for (size_t i = 0; i < sizeof rejected / sizeof rejected[0]; i++) {
    cpuexec_registry_options o, before;
    memset(&o, 0x5A, sizeof o);
    before = o;
    assert_int_equal(cpuexec_registry_options_parse(rejected[i].text, &o), CPUEXEC_EINVAL);
    if (!strstr(cpuexec_error_message(), rejected[i].fragment))
      fail_msg("'%s': message '%s' lacks '%s'", rejected[i].text, cpuexec_error_message(), rejected[i].fragment);
    assert_memory_equal(&o, &before, sizeof o);
  }
  cpuexec_registry_options o;
  assert_int_equal(cpuexec_registry_options_parse(NULL, &o), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_registry_options_parse("", NULL), CPUEXEC_EINVAL);
  /* {0} is the defaults: a registry of capacity 8. */
  cpuexec_registry_options zero = {0};
  cpuexec_registry *reg = NULL;
  assert_int_equal(cpuexec_registry_create(&zero, &reg), 0);
  assert_int_equal(cpuexec_registry_configure(reg, &zero), 0);
  zero.capacity = -3;
  assert_int_equal(cpuexec_registry_configure(reg, &zero), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "capacity: -3"));
  assert_int_equal(cpuexec_registry_configure(NULL, NULL), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
}

int main(int argc, char **argv) {
  if (test_self_path(self_path, sizeof self_path) != 0) return 99;
  if (argc == 3 && strcmp(argv[1], "--child") == 0) {
    if (strcmp(argv[2], "unpinned") == 0) return child_unpinned_defaults();
    if (strcmp(argv[2], "pthreadpool") == 0) return child_pthreadpool_counts();
    if (strcmp(argv[2], "configured") == 0) return child_process_registry_configured();
    if (strcmp(argv[2], "environment") == 0) return child_process_registry_from_environment();
    if (strcmp(argv[2], "malformed") == 0) return child_malformed_registry_environment();
    if (strcmp(argv[2], "capacity") == 0) return child_process_registry_capacity();
    return 98;
  }
  unsetenv("CPUEXEC_POLICY");
  unsetenv("CPUEXEC_REGISTRY");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(implicit_defaults_are_unpinned),
      cmocka_unit_test(pthreadpool_create_returns_a_pool_under_any_policy),
      cmocka_unit_test(retained_sessions_reuse_their_workers),
      cmocka_unit_test(the_process_registry_takes_a_retention),
      cmocka_unit_test(the_process_registry_holds_eight_incompatible_pools),
      cmocka_unit_test(registry_options_text_is_strict),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
