/* Executor handles cannot free a pool someone else uses (issue 10,
 * section 1; "Handles" in cpuexec/executor.h), one test per kind of holder:
 * an executor's creator, registry leases, retained references, sessions and
 * scopes. Run under ASan (--enable-sanitizers=address,undefined) a use after
 * free in any of these sequences fails the test. Misuse the library can see
 * returns an error, and aborts with a message in --enable-debug builds
 * (checked in a forked child there). */
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <cpuexec.h>
#include <cpuexec/foreign.h>

#include "support/test_util.h"

static cpuexec_resolved *resolve_threads(int32_t threads) {
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = threads;
  p.spin_policy = CPUEXEC_SPIN_PARK_IMMEDIATELY; /* no spinning on the shared CI cores */
  cpuexec_resolved *r = NULL;
  assert_int_equal(cpuexec_policy_resolve(&p, NULL, &r), 0);
  return r;
}

static int count_range(void *ctx, int64_t begin, int64_t end) {
  atomic_fetch_add((_Atomic int64_t *)ctx, end - begin);
  return 0;
}

/* The pool still runs a region with all its participants. */
static void assert_pool_runs(cpuexec_executor *exec) {
  _Atomic int64_t sum = 0;
  assert_int_equal(cpuexec_parallel_for(exec, 1000, 1, &sum, count_range, 0), 0);
  assert_int_equal(atomic_load(&sum), 1000);
}

static void a_created_executor_lives_until_its_last_reference(void **state) {
  (void)state;
  int baseline = task_baseline();
  cpuexec_resolved *r = resolve_threads(3);
  cpuexec_executor *exec = NULL;
  assert_int_equal(cpuexec_executor_create(r, &exec), 0);
  assert_int_equal(cpuexec_executor_retain(exec), 0); /* a second holder */
  assert_int_equal(cpuexec_executor_release(exec), 0);
  assert_int_equal(wait_task_count(baseline + 2), baseline + 2);
  assert_pool_runs(exec);
  assert_int_equal(cpuexec_executor_release(exec), 0);
  assert_int_equal(wait_task_count(baseline), baseline);
  assert_int_equal(cpuexec_executor_retain(NULL), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_executor_release(NULL), 0);
  cpuexec_resolved_destroy(r);
}

/* The 0.x trap: destroy on one lease stopped the pool every lease shares.
 * destroy is now release: the other lease keeps the pool. */
static void destroy_on_a_lease_drops_only_that_lease(void **state) {
  (void)state;
  int baseline = task_baseline();
  cpuexec_registry *reg = NULL;
  assert_int_equal(cpuexec_registry_create(NULL, &reg), 0);
  cpuexec_resolved *r = resolve_threads(2);
  cpuexec_executor *a = NULL, *b = NULL;
  assert_int_equal(cpuexec_registry_acquire(reg, r, &a), 0);
  assert_int_equal(cpuexec_registry_acquire(reg, r, &b), 0);
  assert_ptr_equal(a, b);
  assert_int_equal(cpuexec_executor_release(a), 0);
  assert_int_equal(cpuexec_registry_live_pools(reg), 1);
  assert_pool_runs(b);
  assert_int_equal(cpuexec_executor_retain(b), 0);
  assert_int_equal(cpuexec_executor_release(b), 0);
  assert_pool_runs(b);
  assert_int_equal(cpuexec_executor_release(b), 0);
  assert_int_equal(cpuexec_registry_live_pools(reg), 0);
  assert_int_equal(wait_task_count(baseline), baseline);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
  cpuexec_resolved_destroy(r);
}

static cpuexec_registry *misuse_registry;
static cpuexec_executor *misuse_exec;

static int over_release_idle_pool(void) {
  return cpuexec_executor_release(misuse_exec) == CPUEXEC_ESTATE ? 0 : 1;
}

/* An idle pool kept by retention has no lease left: releasing it again is
 * reported (the pool is not stopped under the next acquirer). */
static void releasing_more_than_acquired_is_reported(void **state) {
  (void)state;
  cpuexec_registry_options o;
  cpuexec_registry_options_init(&o);
  o.idle_retention_ns = 3600ull * 1000000000u;
  assert_int_equal(cpuexec_registry_create(&o, &misuse_registry), 0);
  cpuexec_resolved *r = resolve_threads(2);
  assert_int_equal(cpuexec_registry_acquire(misuse_registry, r, &misuse_exec), 0);
  assert_int_equal(cpuexec_executor_release(misuse_exec), 0);
  if (CPUEXEC_DEBUG) {
    assert_int_equal(run_in_child(over_release_idle_pool, 10), 128 + SIGABRT);
  } else {
    assert_int_equal(cpuexec_executor_release(misuse_exec), CPUEXEC_ESTATE);
    assert_non_null(strstr(cpuexec_error_message(), "released more times than it was acquired"));
    assert_int_equal(cpuexec_executor_retain(misuse_exec), CPUEXEC_ESTATE);
  }
  assert_int_equal(cpuexec_registry_live_pools(misuse_registry), 1); /* still retained, still whole */
  cpuexec_executor *again = NULL;
  assert_int_equal(cpuexec_registry_acquire(misuse_registry, r, &again), 0);
  assert_ptr_equal(again, misuse_exec);
  assert_pool_runs(again);
  assert_int_equal(cpuexec_executor_release(again), 0);
  assert_int_equal(cpuexec_registry_destroy(misuse_registry), 0);
  cpuexec_resolved_destroy(r);
}

typedef struct self_release {
  cpuexec_executor *exec;
  _Atomic int rc;
} self_release;

static int release_inside(void *ctx, int64_t begin, int64_t end) {
  self_release *s = ctx;
  (void)end;
  if (begin == 0) atomic_store(&s->rc, cpuexec_executor_release(s->exec));
  return 0;
}

/* In a forked child (debug builds): an executor of the child's own, serial
 * so the child starts no thread; its region runs inline, as participant 0.
 * kind 0: created; kind 1: leased. Returns only when the build did not abort. */
static int child_kind;
static int release_inside_child(void) {
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = 1;
  cpuexec_resolved *r = NULL;
  cpuexec_registry *reg = NULL;
  self_release s = {NULL, 0};
  if (cpuexec_policy_resolve(&p, NULL, &r) != 0) return 2;
  if (child_kind == 0 ? cpuexec_executor_create(r, &s.exec) != 0
                      : cpuexec_registry_create(NULL, &reg) != 0 || cpuexec_registry_acquire(reg, r, &s.exec) != 0)
    return 3;
  cpuexec_parallel_for(s.exec, 2, 1, &s, release_inside, 0);
  return 1;
}

/* Releasing the last reference from inside one of the pool's own callbacks
 * would stop the pool under its running region: refused, nothing changes. */
static void the_last_release_inside_its_own_region_is_refused(void **state) {
  (void)state;
  cpuexec_registry *reg = NULL;
  assert_int_equal(cpuexec_registry_create(NULL, &reg), 0);
  cpuexec_resolved *r = resolve_threads(2);
  cpuexec_executor *created = NULL, *leased = NULL;
  assert_int_equal(cpuexec_executor_create(r, &created), 0);
  assert_int_equal(cpuexec_registry_acquire(reg, r, &leased), 0);
  cpuexec_executor *kinds[] = {created, leased};
  for (size_t k = 0; k < 2; k++) {
    if (CPUEXEC_DEBUG) {
      child_kind = (int)k;
      assert_int_equal(run_in_child(release_inside_child, 10), 128 + SIGABRT);
      continue;
    }
    self_release s = {kinds[k], 0};
    assert_int_equal(cpuexec_parallel_for(kinds[k], 2, 1, &s, release_inside, 0), 0);
    assert_int_equal(atomic_load(&s.rc), CPUEXEC_EBUSY);
    assert_pool_runs(kinds[k]); /* the reference is still held */
  }
  assert_int_equal(cpuexec_executor_release(created), 0);
  assert_int_equal(cpuexec_executor_release(leased), 0);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
  cpuexec_resolved_destroy(r);
}

static int run_parallel(void *ctx) {
  (void)ctx;
  _Atomic int64_t sum = 0;
  int rc = cpuexec_parallel_for(cpuexec_executor_current(), 1000, 1, &sum, count_range, 0);
  return rc != 0 ? rc : atomic_load(&sum) == 1000 ? 0 : 1;
}

/* A nested session and a scope each hold their own reference: the creator
 * may release its handle while they still use the pool. */
static void sessions_and_scopes_keep_the_pool_they_use(void **state) {
  (void)state;
  int baseline = task_baseline();
  cpuexec_resolved *r = resolve_threads(3);
  cpuexec_executor *exec = NULL;
  assert_int_equal(cpuexec_executor_create(r, &exec), 0);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(exec, &scope), 0);
  cpuexec_session *nested = NULL;
  assert_int_equal(cpuexec_session_create(NULL, &nested), 0); /* keeps the installed executor */
  assert_ptr_equal(cpuexec_session_executor(nested), exec);
  assert_int_equal(cpuexec_executor_release(exec), 0);       /* the creator is done */
  assert_int_equal(run_parallel(NULL), 0);                    /* the scope still holds it */
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  assert_int_equal(wait_task_count(baseline + 2), baseline + 2); /* the session still holds it */
  assert_int_equal(cpuexec_session_run(nested, NULL, run_parallel), 0);
  cpuexec_session_destroy(nested);                            /* the last holder */
  assert_int_equal(wait_task_count(baseline), baseline);
  cpuexec_resolved_destroy(r);
}

/* A foreign pool that runs its participants in turn on the caller. */
static int run_in_turn(void *pool, int64_t count, void *arg, cpuexec_range_fn fn) {
  (void)pool;
  for (int64_t i = 0; i < count; i++) {
    int rc = fn(arg, i, i + 1);
    if (rc != 0) return rc;
  }
  return 0;
}

/* A foreign executor is the same kind of handle: a scope and a session keep
 * it after its creator released it (ASan reports a use after free if not). */
static void a_foreign_executor_is_held_like_any_other(void **state) {
  (void)state;
  cpuexec_foreign_executor_ops ops;
  cpuexec_foreign_executor_ops_init(&ops);
  ops.effective_threads = 2;
  ops.run_ranges = run_in_turn;
  cpuexec_executor *exec = NULL;
  assert_int_equal(cpuexec_executor_create_foreign(&ops, NULL, &exec), 0);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(exec, &scope), 0);
  cpuexec_session *nested = NULL;
  assert_int_equal(cpuexec_session_create(NULL, &nested), 0);
  assert_int_equal(cpuexec_executor_release(exec), 0);
  assert_int_equal(run_parallel(NULL), 0);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  assert_int_equal(cpuexec_session_run(nested, NULL, run_parallel), 0);
  cpuexec_session_destroy(nested);
  ops.effective_threads = -1;
  assert_int_equal(cpuexec_executor_create_foreign(&ops, NULL, &exec), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "effective_threads: -1"));
}

/* A session leases from the registry it is given. */
static void a_session_leases_from_the_registry_it_names(void **state) {
  (void)state;
  cpuexec_registry *reg = NULL;
  assert_int_equal(cpuexec_registry_create(NULL, &reg), 0);
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = 2;
  cpuexec_session_options o;
  cpuexec_session_options_init(&o);
  o.policy = &p;
  o.registry = reg;
  cpuexec_session *s = NULL;
  assert_int_equal(cpuexec_session_create_with_options(&o, &s), 0);
  assert_int_equal(cpuexec_registry_live_pools(reg), 1);
  assert_int_equal(cpuexec_registry_destroy(reg), CPUEXEC_EBUSY);
  cpuexec_session_destroy(s);
  assert_int_equal(cpuexec_registry_live_pools(reg), 0);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
  assert_int_equal(cpuexec_session_create_with_options(&o, NULL), CPUEXEC_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_created_executor_lives_until_its_last_reference),
      cmocka_unit_test(destroy_on_a_lease_drops_only_that_lease),
      cmocka_unit_test(releasing_more_than_acquired_is_reported),
      cmocka_unit_test(the_last_release_inside_its_own_region_is_refused),
      cmocka_unit_test(sessions_and_scopes_keep_the_pool_they_use),
      cmocka_unit_test(a_foreign_executor_is_held_like_any_other),
      cmocka_unit_test(a_session_leases_from_the_registry_it_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
