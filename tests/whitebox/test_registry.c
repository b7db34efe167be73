/* The registry of shared pools: sharing by key, capacity, idle retention,
 * thread lifetime, concurrency and fork. Threads are counted in
 * /proc/self/task. Policies use affinity_policy=none so any participant
 * count runs on any machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <cmocka.h>

#include <cpuexec.h>

#include "sessions/registry_internal.h"
#include "support/test_util.h"

/* A policy by its behaviour-changing fields. */
typedef struct policy_spec {
  const char *name;
  int32_t threads;
  cpuexec_spin_policy spin;
  uint64_t budget;
  bool nested;
} policy_spec;

static cpuexec_resolved *resolve_spec(const policy_spec *spec) {
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = spec->threads;
  p.spin_policy = spec->spin;
  p.spin_budget = spec->budget;
  p.affinity_policy = CPUEXEC_AFFINITY_NONE;
  p.allow_nested_parallelism = spec->nested;
  cpuexec_resolved *r = NULL;
  int rc = cpuexec_policy_resolve(&p, NULL, &r);
  if (rc != 0) fail_msg("resolving %s: %s", spec->name, cpuexec_error_message());
  return r;
}

static cpuexec_resolved *resolve_threads(int32_t threads) {
  policy_spec spec = {"threads", threads, CPUEXEC_SPIN_ADAPTIVE, 0, false};
  return resolve_spec(&spec);
}

static cpuexec_registry *make_registry(uint32_t capacity, uint64_t retention_ns) {
  cpuexec_registry_options o;
  cpuexec_registry_options_init(&o);
  o.capacity = capacity;
  o.idle_retention_ns = retention_ns;
  cpuexec_registry *reg = NULL;
  assert_int_equal(cpuexec_registry_create(&o, &reg), 0);
  assert_non_null(reg);
  return reg;
}

static int count_range(void *ctx, int64_t begin, int64_t end) {
  atomic_fetch_add((atomic_llong *)ctx, end - begin);
  return 0;
}

/* ---- sharing ------------------------------------------------------------- */

static void equal_policies_share_one_pool(void **state) {
  (void)state;
  cpuexec_registry *reg = make_registry(8, 0);
  cpuexec_resolved *a = resolve_threads(3), *b = resolve_threads(3);
  cpuexec_executor *ea = NULL, *eb = NULL;
  assert_int_equal(cpuexec_registry_acquire(reg, a, &ea), 0);
  assert_int_equal(cpuexec_registry_acquire(reg, b, &eb), 0);
  assert_ptr_equal(ea, eb);
  assert_int_equal(cpuexec_executor_id(ea), cpuexec_executor_id(eb));
  assert_int_equal(cpuexec_registry_live_pools(reg), 1);
  cpuexec_executor_release(ea);
  assert_int_equal(cpuexec_registry_live_pools(reg), 1); /* eb still leased */
  atomic_llong sum = 0;
  assert_int_equal(cpuexec_parallel_for(eb, 1000, 10, &sum, count_range, 0), 0);
  assert_int_equal(sum, 1000);
  cpuexec_executor_release(eb);
  assert_int_equal(cpuexec_registry_live_pools(reg), 0);
  cpuexec_resolved_destroy(a);
  cpuexec_resolved_destroy(b);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
}

/* num_threads=0 and the explicit count it resolves to are the same
 * behaviour: the request's spelling is not in the key. */
static void default_count_shares_with_equal_explicit_count(void **state) {
  (void)state;
  cpuexec_registry *reg = make_registry(8, 0);
  cpuexec_resolved *implicit = resolve_threads(0);
  uint32_t n = cpuexec_resolved_effective_threads(implicit);
  cpuexec_resolved *explicit_n = resolve_threads((int32_t)n);
  assert_string_equal(cpuexec_resolved_sharing_key(implicit), cpuexec_resolved_sharing_key(explicit_n));
  cpuexec_executor *e1 = NULL, *e2 = NULL;
  assert_int_equal(cpuexec_registry_acquire(reg, implicit, &e1), 0);
  assert_int_equal(cpuexec_registry_acquire(reg, explicit_n, &e2), 0);
  assert_int_equal(cpuexec_executor_id(e1), cpuexec_executor_id(e2));
  assert_int_equal(cpuexec_registry_live_pools(reg), n > 1 ? 1 : 0);
  cpuexec_executor_release(e1);
  cpuexec_executor_release(e2);
  cpuexec_resolved_destroy(implicit);
  cpuexec_resolved_destroy(explicit_n);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
}

/* Every row differs from the base in one behaviour-changing property. */
static void each_behaviour_difference_gives_a_distinct_pool(void **state) {
  (void)state;
  static const policy_spec base = {"base: 2 threads adaptive", 2, CPUEXEC_SPIN_ADAPTIVE, 0, false};
  static const policy_spec rows[] = {
      {"1 thread (serial)", 1, CPUEXEC_SPIN_ADAPTIVE, 0, false},
      {"3 threads", 3, CPUEXEC_SPIN_ADAPTIVE, 0, false},
      {"park immediately", 2, CPUEXEC_SPIN_PARK_IMMEDIATELY, 0, false},
      {"fixed duration 50us", 2, CPUEXEC_SPIN_FIXED_DURATION, 50000, false},
      {"fixed iterations 1000", 2, CPUEXEC_SPIN_FIXED_ITERATIONS, 1000, false},
      {"nesting allowed", 2, CPUEXEC_SPIN_ADAPTIVE, 0, true},
  };
  cpuexec_registry *reg = make_registry(8, 0);
  cpuexec_resolved *rb = resolve_spec(&base);
  cpuexec_executor *eb = NULL;
  assert_int_equal(cpuexec_registry_acquire(reg, rb, &eb), 0);
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    cpuexec_resolved *r = resolve_spec(&rows[i]);
    cpuexec_executor *e = NULL;
    assert_int_equal(cpuexec_registry_acquire(reg, r, &e), 0);
    if (e == eb || cpuexec_executor_id(e) == cpuexec_executor_id(eb))
      fail_msg("%s shares the pool of %s", rows[i].name, base.name);
    uint32_t expected_live = rows[i].threads > 1 ? 2 : 1;
    if ((uint32_t)cpuexec_registry_live_pools(reg) != expected_live)
      fail_msg("%s: %u live pools, expected %u", rows[i].name, cpuexec_registry_live_pools(reg), expected_live);
    cpuexec_executor_release(e);
    cpuexec_resolved_destroy(r);
  }
  cpuexec_executor_release(eb);
  cpuexec_resolved_destroy(rb);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
}

static void registries_do_not_share_with_each_other(void **state) {
  (void)state;
  cpuexec_registry *r1 = make_registry(2, 0), *r2 = make_registry(2, 0);
  cpuexec_resolved *r = resolve_threads(2);
  cpuexec_executor *e1 = NULL, *e2 = NULL;
  assert_int_equal(cpuexec_registry_acquire(r1, r, &e1), 0);
  assert_int_equal(cpuexec_registry_acquire(r2, r, &e2), 0);
  assert_int_not_equal(cpuexec_executor_id(e1), cpuexec_executor_id(e2));
  cpuexec_executor_release(e1);
  cpuexec_executor_release(e2);
  cpuexec_resolved_destroy(r);
  assert_int_equal(cpuexec_registry_destroy(r1), 0);
  assert_int_equal(cpuexec_registry_destroy(r2), 0);
}

/* ---- capacity ------------------------------------------------------------ */

static void capacity_two_rejects_a_third_pool_until_one_is_released(void **state) {
  (void)state;
  cpuexec_registry *reg = make_registry(2, 0);
  cpuexec_resolved *r2 = resolve_threads(2), *r3 = resolve_threads(3), *r4 = resolve_threads(4);
  cpuexec_executor *e2 = NULL, *e3 = NULL, *e4 = NULL, *again = NULL;
  assert_int_equal(cpuexec_registry_acquire(reg, r2, &e2), 0);
  assert_int_equal(cpuexec_registry_acquire(reg, r3, &e3), 0);
  int baseline = task_baseline();
  assert_int_equal(cpuexec_registry_acquire(reg, r4, &e4), CPUEXEC_ECAPACITY);
  assert_null(e4);
  assert_non_null(strstr(cpuexec_error_message(), "capacity 2"));
  assert_int_equal(wait_task_count(baseline), baseline); /* nothing started for the refused pool */
  /* A compatible acquire still succeeds at capacity. */
  assert_int_equal(cpuexec_registry_acquire(reg, r2, &again), 0);
  assert_ptr_equal(again, e2);
  cpuexec_executor_release(again);
  cpuexec_executor_release(e3);
  assert_int_equal(cpuexec_registry_acquire(reg, r4, &e4), 0);
  assert_int_equal(cpuexec_registry_live_pools(reg), 2);
  cpuexec_executor_release(e2);
  cpuexec_executor_release(e4);
  cpuexec_resolved_destroy(r2);
  cpuexec_resolved_destroy(r3);
  cpuexec_resolved_destroy(r4);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
}

static void serial_policies_take_no_capacity_and_start_no_thread(void **state) {
  (void)state;
  cpuexec_registry *reg = make_registry(1, 0);
  cpuexec_resolved *r2 = resolve_threads(2), *r1 = resolve_threads(1);
  cpuexec_executor *e2 = NULL, *s1 = NULL, *s2 = NULL;
  assert_int_equal(cpuexec_registry_acquire(reg, r2, &e2), 0);
  int before = task_baseline();
  assert_int_equal(cpuexec_registry_acquire(reg, r1, &s1), 0); /* capacity 1 is full, serial still fits */
  assert_int_equal(cpuexec_registry_acquire(reg, r1, &s2), 0);
  assert_int_equal(wait_task_count(before), before);
  assert_int_equal(cpuexec_registry_live_pools(reg), 1);
  assert_int_equal(cpuexec_executor_effective_threads(s1), 1);
  atomic_llong sum = 0;
  assert_int_equal(cpuexec_parallel_for(s1, 100, 1, &sum, count_range, 0), 0);
  assert_int_equal(sum, 100);
  cpuexec_executor_release(s1);
  cpuexec_executor_release(s2);
  cpuexec_executor_release(e2);
  cpuexec_resolved_destroy(r1);
  cpuexec_resolved_destroy(r2);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
}

/* ---- lifetime ------------------------------------------------------------ */

static void releasing_the_last_lease_stops_the_threads(void **state) {
  (void)state;
  cpuexec_registry *reg = make_registry(8, 0);
  int baseline = task_baseline();
  cpuexec_resolved *r = resolve_threads(3);
  cpuexec_executor *e1 = NULL, *e2 = NULL;
  assert_int_equal(cpuexec_registry_acquire(reg, r, &e1), 0);
  assert_int_equal(wait_task_count(baseline + 2), baseline + 2);
  assert_int_equal(cpuexec_registry_acquire(reg, r, &e2), 0);
  assert_int_equal(wait_task_count(baseline + 2), baseline + 2);
  cpuexec_executor_release(e1);
  assert_int_equal(wait_task_count(baseline + 2), baseline + 2);
  cpuexec_executor_release(e2);
  assert_int_equal(wait_task_count(baseline), baseline);
  assert_int_equal(cpuexec_registry_live_pools(reg), 0);
  cpuexec_resolved_destroy(r);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
}

/* The registry's clock, moved by hand (cpuexec__test_registry_clock). */
static _Atomic uint64_t fake_now_ns = 1000000000u;
static uint64_t fake_clock(void) { return atomic_load(&fake_now_ns); }

static void idle_retention_keeps_the_pool_then_stops_it(void **state) {
  (void)state;
  const uint64_t retention_ms = 300;
  atomic_store(&cpuexec__test_registry_clock, fake_clock);
  cpuexec_registry *reg = make_registry(8, retention_ms * 1000000u);
  int baseline = task_baseline();
  cpuexec_resolved *r = resolve_threads(3);
  cpuexec_executor *e = NULL;
  assert_int_equal(cpuexec_registry_acquire(reg, r, &e), 0);
  uint64_t id = cpuexec_executor_id(e);
  cpuexec_executor_release(e);
  /* Retained: still live, threads kept, reused by a compatible acquire. */
  assert_int_equal(cpuexec_registry_live_pools(reg), 1);
  assert_int_equal(wait_task_count(baseline + 2), baseline + 2);
  assert_int_equal(cpuexec_registry_acquire(reg, r, &e), 0);
  assert_int_equal(cpuexec_executor_id(e), id);
  cpuexec_executor_release(e);
  /* One nanosecond short of the retention: still retained. */
  atomic_fetch_add(&fake_now_ns, retention_ms * 1000000u - 1);
  assert_int_equal(cpuexec_registry_live_pools(reg), 1);
  assert_int_equal(cpuexec_registry_acquire(reg, r, &e), 0);
  assert_int_equal(cpuexec_executor_id(e), id);
  cpuexec_executor_release(e);
  atomic_fetch_add(&fake_now_ns, retention_ms * 1000000u);
  /* Expired: never counted, stopped by the next registry call. */
  assert_int_equal(cpuexec_registry_live_pools(reg), 0);
  assert_int_equal(wait_task_count(baseline), baseline);
  assert_int_equal(cpuexec_registry_acquire(reg, r, &e), 0);
  assert_int_not_equal(cpuexec_executor_id(e), id);
  cpuexec_executor_release(e);
  cpuexec_resolved_destroy(r);
  assert_int_equal(cpuexec_registry_destroy(reg), 0); /* stops the retained pool */
  assert_int_equal(wait_task_count(baseline), baseline);
  atomic_store(&cpuexec__test_registry_clock, NULL);
}

static void a_full_registry_evicts_an_idle_retained_pool(void **state) {
  (void)state;
  cpuexec_registry *reg = make_registry(1, 60ull * 1000000000u);
  int baseline = task_baseline();
  cpuexec_resolved *r2 = resolve_threads(2), *r3 = resolve_threads(3);
  cpuexec_executor *e2 = NULL, *e3 = NULL, *busy = NULL;
  assert_int_equal(cpuexec_registry_acquire(reg, r2, &e2), 0);
  cpuexec_executor_release(e2); /* idle, retained for a minute */
  assert_int_equal(cpuexec_registry_live_pools(reg), 1);
  assert_int_equal(cpuexec_registry_acquire(reg, r3, &e3), 0);
  assert_int_equal(cpuexec_registry_live_pools(reg), 1);
  assert_int_equal(wait_task_count(baseline + 2), baseline + 2); /* 1 worker evicted, 2 started */
  /* A leased pool is never evicted. */
  assert_int_equal(cpuexec_registry_acquire(reg, r2, &busy), CPUEXEC_ECAPACITY);
  cpuexec_executor_release(e3);
  cpuexec_resolved_destroy(r2);
  cpuexec_resolved_destroy(r3);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
  assert_int_equal(wait_task_count(baseline), baseline);
}

static void releasing_an_unshared_executor_destroys_it(void **state) {
  (void)state;
  int baseline = task_baseline();
  cpuexec_resolved *r = resolve_threads(3);
  cpuexec_executor *e = NULL;
  assert_int_equal(cpuexec_executor_create(r, &e), 0);
  assert_int_equal(wait_task_count(baseline + 2), baseline + 2);
  cpuexec_executor_release(e);
  assert_int_equal(wait_task_count(baseline), baseline);
  cpuexec_resolved_destroy(r);
}

/* ---- errors -------------------------------------------------------------- */

static void bad_arguments_and_busy_destroy_are_reported(void **state) {
  (void)state;
  cpuexec_registry_options o;
  cpuexec_registry_options_init(&o);
  assert_int_equal(o.capacity, 0); /* the default, 8 */
  assert_int_equal(o.idle_retention_ns, 0);
  o.capacity = -1;
  cpuexec_registry *reg = (cpuexec_registry *)&o;
  assert_int_equal(cpuexec_registry_create(&o, &reg), CPUEXEC_EINVAL);
  assert_null(reg);
  assert_non_null(strstr(cpuexec_error_message(), "capacity"));
  assert_int_equal(cpuexec_registry_create(NULL, NULL), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_registry_create(NULL, &reg), 0); /* NULL options: the defaults */
  cpuexec_resolved *r = resolve_threads(2);
  cpuexec_executor *e = NULL;
  assert_int_equal(cpuexec_registry_acquire(NULL, r, &e), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_registry_acquire(reg, NULL, &e), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_registry_acquire(reg, r, NULL), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_registry_acquire(reg, r, &e), 0);
  assert_int_equal(cpuexec_registry_destroy(reg), CPUEXEC_EBUSY);
  assert_non_null(strstr(cpuexec_error_message(), "1 lease"));
  cpuexec_executor_release(e);
  cpuexec_executor_release(NULL);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
  assert_int_equal(cpuexec_registry_destroy(cpuexec_registry_default()), CPUEXEC_EINVAL);
  assert_ptr_equal(cpuexec_registry_default(), cpuexec_registry_default());
  assert_int_equal(cpuexec_registry_live_pools(NULL), 0);
  cpuexec_resolved_destroy(r);
}

/* ---- concurrency --------------------------------------------------------- */

#define STRESS_THREADS 8
#define STRESS_POLICIES 5

typedef struct stress {
  cpuexec_registry *reg;
  cpuexec_resolved *policies[STRESS_POLICIES];
  uint64_t deadline_ns;
  atomic_int failures;
  atomic_long acquisitions;
  atomic_long refused;
} stress;

typedef struct stress_worker {
  stress *s;
  unsigned seed;
} stress_worker;

static void *stress_main(void *arg) {
  stress_worker *w = arg;
  stress *s = w->s;
  while (test_now_ns() < s->deadline_ns) {
    cpuexec_resolved *r = s->policies[rand_r(&w->seed) % STRESS_POLICIES];
    cpuexec_executor *e = NULL;
    int rc = cpuexec_registry_acquire(s->reg, r, &e);
    if (rc == CPUEXEC_ECAPACITY) {
      atomic_fetch_add(&s->refused, 1);
      continue;
    }
    if (rc != 0 || !e) {
      atomic_fetch_add(&s->failures, 1);
      continue;
    }
    /* The pool handed out behaves like the policy asked for. */
    if (strcmp(cpuexec_resolved_sharing_key(cpuexec_executor_resolved(e)), cpuexec_resolved_sharing_key(r)) != 0)
      atomic_fetch_add(&s->failures, 1);
    if (rand_r(&w->seed) % 4 == 0) {
      atomic_llong sum = 0;
      if (cpuexec_parallel_for(e, 64, 4, &sum, count_range, 0) != 0 || sum != 64) atomic_fetch_add(&s->failures, 1);
    }
    atomic_fetch_add(&s->acquisitions, 1);
    cpuexec_executor_release(e);
  }
  return NULL;
}

static void run_stress(uint32_t capacity, uint64_t retention_ns) {
  int baseline = task_baseline();
  stress s;
  memset(&s, 0, sizeof s);
  s.reg = make_registry(capacity, retention_ns);
  static const policy_spec specs[STRESS_POLICIES] = {
      {"serial", 1, CPUEXEC_SPIN_ADAPTIVE, 0, false},
      {"2 threads", 2, CPUEXEC_SPIN_ADAPTIVE, 0, false},
      {"3 threads", 3, CPUEXEC_SPIN_ADAPTIVE, 0, false},
      {"2 threads parking", 2, CPUEXEC_SPIN_PARK_IMMEDIATELY, 0, false},
      {"4 threads", 4, CPUEXEC_SPIN_ADAPTIVE, 0, false},
  };
  for (int i = 0; i < STRESS_POLICIES; i++) s.policies[i] = resolve_spec(&specs[i]);
  /* A few seconds (fewer under ThreadSanitizer, where each step is slower). */
  s.deadline_ns = test_now_ns() + (TEST_UNDER_TSAN ? 1500u : 3000u) * 1000000ull / 2;
  pthread_t threads[STRESS_THREADS];
  stress_worker workers[STRESS_THREADS];
  for (int i = 0; i < STRESS_THREADS; i++) {
    workers[i].s = &s;
    workers[i].seed = 12345u + (unsigned)i;
    assert_int_equal(pthread_create(&threads[i], NULL, stress_main, &workers[i]), 0);
  }
  for (int i = 0; i < STRESS_THREADS; i++) pthread_join(threads[i], NULL);
  assert_int_equal(atomic_load(&s.failures), 0);
  assert_true(atomic_load(&s.acquisitions) > 0);
  assert_true((uint32_t)cpuexec_registry_live_pools(s.reg) <= capacity);
  assert_int_equal(cpuexec_registry_destroy(s.reg), 0);
  assert_int_equal(wait_task_count(baseline), baseline);
  for (int i = 0; i < STRESS_POLICIES; i++) cpuexec_resolved_destroy(s.policies[i]);
  print_message("  %ld acquisitions, %ld refused at capacity %u\n", atomic_load(&s.acquisitions),
                atomic_load(&s.refused), capacity);
}

/* 8 threads acquire and release random policies; half the time with room
 * for every pool, half with capacity pressure and idle retention. */
static void eight_threads_acquire_and_release_random_policies(void **state) {
  (void)state;
  run_stress(8, 0);
  run_stress(2, 1000000u);
}

#if !TEST_ON_WINDOWS /* fork(): Windows has none */
/* ---- fork ---------------------------------------------------------------- */

static cpuexec_executor *fork_inherited;
static cpuexec_resolved *fork_resolved;

static int registry_child(void) {
  if (cpuexec_registry_live_pools(cpuexec_registry_default()) != 0) return 10;
  atomic_llong sum = 0;
  if (cpuexec_parallel_for(fork_inherited, 100, 1, &sum, count_range, 0) != CPUEXEC_EFORKED) return 11;
  if (sum != 0) return 12;
  /* A compatible acquire makes a fresh pool, not the inherited one (serial
   * where the child may not start threads: see support/threads.h). */
  cpuexec_resolved *serial = TEST_CHILD_MAY_START_THREADS ? NULL : resolve_threads(1);
  const cpuexec_resolved *wanted = serial ? serial : fork_resolved;
  cpuexec_executor *fresh = NULL;
  if (cpuexec_registry_acquire(cpuexec_registry_default(), wanted, &fresh) != 0) return 13;
  if (fresh == fork_inherited || cpuexec_executor_id(fresh) == cpuexec_executor_id(fork_inherited)) return 14;
  if (cpuexec_parallel_for(fresh, 1000, 1, &sum, count_range, 0) != 0 || sum != 1000) return 15;
  if (cpuexec_registry_live_pools(cpuexec_registry_default()) != (serial ? 0 : 1)) return 16;
  cpuexec_executor_release(fork_inherited); /* frees memory only */
  cpuexec_executor_release(fresh);
  if (cpuexec_registry_live_pools(cpuexec_registry_default()) != 0) return 17;
  if (serial) cpuexec_resolved_destroy(serial);
  return 0;
}

static void a_forked_child_forgets_inherited_pools(void **state) {
  (void)state;
  fork_resolved = resolve_threads(3);
  assert_int_equal(cpuexec_registry_acquire(cpuexec_registry_default(), fork_resolved, &fork_inherited), 0);
  assert_int_equal(run_in_child(registry_child, 20), 0);
  /* The parent's pool is untouched. */
  atomic_llong sum = 0;
  assert_int_equal(cpuexec_parallel_for(fork_inherited, 1000, 1, &sum, count_range, 0), 0);
  assert_int_equal(sum, 1000);
  assert_int_equal(cpuexec_registry_live_pools(cpuexec_registry_default()), 1);
  cpuexec_executor_release(fork_inherited);
  cpuexec_resolved_destroy(fork_resolved);
  assert_int_equal(cpuexec_registry_live_pools(cpuexec_registry_default()), 0);
}
#endif /* !TEST_ON_WINDOWS */

int main(void) {
  const struct CMUnitTest sharing[] = {
      cmocka_unit_test(equal_policies_share_one_pool),
      cmocka_unit_test(default_count_shares_with_equal_explicit_count),
      cmocka_unit_test(each_behaviour_difference_gives_a_distinct_pool),
      cmocka_unit_test(registries_do_not_share_with_each_other),
  };
  const struct CMUnitTest capacity[] = {
      cmocka_unit_test(capacity_two_rejects_a_third_pool_until_one_is_released),
      cmocka_unit_test(serial_policies_take_no_capacity_and_start_no_thread),
  };
  const struct CMUnitTest lifetime[] = {
      cmocka_unit_test(releasing_the_last_lease_stops_the_threads),
      cmocka_unit_test(idle_retention_keeps_the_pool_then_stops_it),
      cmocka_unit_test(a_full_registry_evicts_an_idle_retained_pool),
      cmocka_unit_test(releasing_an_unshared_executor_destroys_it),
      cmocka_unit_test(bad_arguments_and_busy_destroy_are_reported),
  };
  const struct CMUnitTest concurrency[] = {
      cmocka_unit_test(eight_threads_acquire_and_release_random_policies),
      TEST_UNIX_ONLY(a_forked_child_forgets_inherited_pools, "fork(): Windows has none"),
  };
  int failed = 0;
  failed += cmocka_run_group_tests_name("registry sharing", sharing, NULL, NULL);
  failed += cmocka_run_group_tests_name("registry capacity", capacity, NULL, NULL);
  failed += cmocka_run_group_tests_name("registry lifetime", lifetime, NULL, NULL);
  failed += cmocka_run_group_tests_name("registry concurrency and fork", concurrency, NULL, NULL);
  return failed != 0;
}
