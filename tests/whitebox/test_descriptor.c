/* The execution descriptor is derived from what a resolution does, never
 * from the request's spelling (issue 13, seed 000 S000-128), and
 * cpuexec_calibration_run() refuses a profile made for another executor
 * before its callback runs or a pool is leased (seed 000 Pool PR04). */
#include "support/test_util.h"
#include "support/resolve_fixtures.h"

#include "executor/counters_internal.h"

static cpuexec_resolved *resolve_on(cpuexec_topology *t, const char *text) {
  cpuexec_policy p;
  if (cpuexec_policy_parse(text, &p) != 0) fail_msg("%s: %s", text, cpuexec_error_message());
  cpuexec_resolved *r = NULL;
  if (cpuexec_policy_resolve(&p, t, &r) != 0) fail_msg("%s: %s", text, cpuexec_error_message());
  return r;
}

static cpuexec_topology *stored(const char *file) {
  cpuexec_topology_options o;
  cpuexec_topology_options_init(&o);
  char path[512];
  snprintf(path, sizeof path, TOPOLOGIES "%s", file);
  cpuexec_topology *t = NULL;
  if (cpuexec_topology_load_xml(path, &o, &t) != 0) fail_msg("%s: %s", path, cpuexec_error_message());
  return t;
}

/* Policies that resolve to one behaviour (one sharing key) describe it
 * alike, and each class is what was placed. */
static void stored_machines_describe_behaviour(void **state) {
  (void)state;
  static const struct {
    const char *machine, *a, *b; /* b: another spelling of a, or NULL */
    cpuexec_affinity_policy want;
    bool smt;
  } cases[] = {
      {"8cores-smt2.xml", "num_threads=4,affinity_policy=performance_cores",
       "num_threads=4,affinity_policy=physical_cores", CPUEXEC_AFFINITY_PHYSICAL_CORES, false},
      {"8cores-smt2.xml", "num_threads=4,affinity_policy=physical_then_smt",
       "num_threads=4,affinity_policy=physical_cores", CPUEXEC_AFFINITY_PHYSICAL_CORES, false},
      {"8cores-smt2.xml", "num_threads=12,affinity_policy=physical_then_smt", NULL,
       CPUEXEC_AFFINITY_PHYSICAL_THEN_SMT, true},
      {"8cores-smt2.xml", "num_threads=1,affinity_policy=physical_cores", "num_threads=1,affinity_policy=none",
       CPUEXEC_AFFINITY_NONE, false},
      {"8cores-smt2.xml", "num_threads=1,affinity_policy=performance_cores",
       "num_threads=1,affinity_policy=physical_then_smt", CPUEXEC_AFFINITY_NONE, false},
      {"8cores-smt2.xml", "num_threads=4,affinity_policy=none", NULL, CPUEXEC_AFFINITY_NONE, false},
      {"8cores-smt2.xml", "affinity_policy=explicit,cpu_set=0,2", NULL, CPUEXEC_AFFINITY_EXPLICIT, false},
      {"8cores-smt2.xml", "affinity_policy=explicit,cpu_set=3", NULL, CPUEXEC_AFFINITY_EXPLICIT, false},
      {"hybrid-8p-smt2-16e.xml", "num_threads=4,affinity_policy=performance_cores", NULL,
       CPUEXEC_AFFINITY_PERFORMANCE_CORES, false},
      {"hybrid-8p-smt2-16e.xml", "num_threads=12,affinity_policy=performance_cores", NULL,
       CPUEXEC_AFFINITY_PHYSICAL_CORES, false}, /* reaches efficiency cores */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cpuexec_topology *t = stored(cases[i].machine);
    cpuexec_resolved *a = resolve_on(t, cases[i].a);
    cpuexec_descriptor da, db;
    cpuexec__descriptor_of(a, &da);
    if (da.affinity_class != cases[i].want || da.uses_smt != cases[i].smt)
      fail_msg("case %zu (%s): class %d smt %d", i, cases[i].a, (int)da.affinity_class, (int)da.uses_smt);
    assert_int_equal(da.effective_threads, cpuexec_resolved_effective_threads(a));
    if (cases[i].b) {
      cpuexec_resolved *b = resolve_on(t, cases[i].b);
      /* The premise: both spellings share one pool. */
      assert_string_equal(cpuexec_resolved_sharing_key(a), cpuexec_resolved_sharing_key(b));
      cpuexec__descriptor_of(b, &db);
      assert_memory_equal(&da, &db, sizeof da);
      cpuexec_resolved_destroy(b);
    }
    cpuexec_resolved_destroy(a);
    cpuexec_topology_destroy(t);
  }
}

/* One shared pool, leased through four spellings at one thread in two
 * orders: every lease describes it as NONE (nothing pinned), and the
 * descriptor read through one lease checks against every other. */
static void shared_serial_pool_reports_one_class_whatever_created_it(void **state) {
  (void)state;
  static const char *const spellings[] = {
      "num_threads=1,affinity_policy=physical_cores", "num_threads=1,affinity_policy=performance_cores",
      "num_threads=1,affinity_policy=physical_then_smt", "num_threads=1,affinity_policy=none"};
  for (int order = 0; order < 2; order++) {
    cpuexec_registry *reg;
    assert_int_equal(cpuexec_registry_create(NULL, &reg), 0);
    cpuexec_executor *leases[4];
    cpuexec_resolved *res[4];
    for (int k = 0; k < 4; k++) {
      int i = order == 0 ? k : 3 - k;
      res[k] = resolve_on(NULL, spellings[i]);
      assert_int_equal(cpuexec_registry_acquire(reg, res[k], &leases[k]), 0);
      assert_ptr_equal(leases[k], leases[0]);
    }
    cpuexec_descriptor first;
    assert_int_equal(cpuexec_executor_descriptor_get(leases[0], &first), 0);
    assert_int_equal(first.affinity_class, CPUEXEC_AFFINITY_NONE);
    assert_int_equal(first.effective_threads, 1);
    for (int k = 0; k < 4; k++) {
      cpuexec_descriptor d;
      cpuexec__descriptor_of(res[k], &d);
      assert_memory_equal(&d, &first, sizeof d);
      assert_int_equal(cpuexec_executor_descriptor_check(leases[k], &d), 0);
    }
    for (int k = 0; k < 4; k++) {
      cpuexec_executor_release(leases[k]);
      cpuexec_resolved_destroy(res[k]);
    }
    assert_int_equal(cpuexec_registry_destroy(reg), 0);
  }
}

typedef struct calib {
  int calls;
  cpuexec_executor *seen;
  uint32_t seen_threads;
} calib;

static int calibrate(void *user, cpuexec_executor *exec) {
  calib *c = user;
  c->calls++;
  c->seen = cpuexec_executor_current();
  c->seen_threads = cpuexec_executor_effective_threads(exec);
  return exec == c->seen ? 7 : -1000;
}

static void calibration_runs_only_on_a_matching_executor(void **state) {
  (void)state;
  cpuexec_registry *reg;
  assert_int_equal(cpuexec_registry_create(NULL, &reg), 0);
  cpuexec_resolved *r = resolve_on(NULL, "num_threads=2,affinity_policy=none");
  cpuexec_executor *exec;
  assert_int_equal(cpuexec_registry_acquire(reg, r, &exec), 0);
  cpuexec_descriptor want;
  assert_int_equal(cpuexec_executor_descriptor_get(exec, &want), 0);

  /* Named executor: a match runs the callback with it installed. */
  calib c = {0};
  assert_int_equal(cpuexec_calibration_run(exec, &want, calibrate, &c), CPUEXEC_ECALLBACK);
  assert_int_equal(cpuexec_error_callback_value(), 7);
  assert_int_equal(c.calls, 1);
  assert_ptr_equal(c.seen, exec);
  assert_null(cpuexec_executor_current()); /* uninstalled after the call */

  /* Each field mismatched: refused, named, the callback never called. */
  for (int field = 0; field < 4; field++) {
    cpuexec_descriptor bad = want;
    const char *name = NULL;
    switch (field) {
    case 0: bad.effective_threads = 3; name = "effective_threads"; break;
    case 1: bad.affinity_class = CPUEXEC_AFFINITY_PHYSICAL_CORES; name = "affinity_class"; break;
    case 2: bad.uses_smt = !bad.uses_smt; name = "uses_smt"; break;
    default: bad.spin_class = CPUEXEC_SPIN_PARK_IMMEDIATELY; name = "spin_class"; break;
    }
    c.calls = 0;
    assert_int_equal(cpuexec_calibration_run(exec, &bad, calibrate, &c), CPUEXEC_EMISMATCH);
    assert_int_equal(c.calls, 0);
    assert_non_null(strstr(cpuexec_error_message(), name));
  }

  /* No executor named: the installed one. */
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(exec, &scope), 0);
  c.calls = 0;
  assert_int_equal(cpuexec_calibration_run(NULL, &want, calibrate, &c), CPUEXEC_ECALLBACK);
  assert_int_equal(cpuexec_error_callback_value(), 7);
  assert_ptr_equal(c.seen, exec);
  assert_ptr_equal(cpuexec_executor_current(), exec);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);

  /* Nothing installed: the process default, checked before any pool is leased. */
  const cpuexec_resolved *def;
  assert_int_equal(cpuexec_policy_resolve_default(&def), 0);
  cpuexec_descriptor def_want;
  cpuexec__descriptor_of(def, &def_want);
  cpuexec_descriptor def_bad = def_want;
  def_bad.effective_threads += 1;
  uint32_t pools = cpuexec_registry_live_pools(cpuexec_registry_default());
  c.calls = 0;
  assert_int_equal(cpuexec_calibration_run(NULL, &def_bad, calibrate, &c), CPUEXEC_EMISMATCH);
  assert_int_equal(c.calls, 0);
  assert_int_equal(cpuexec_registry_live_pools(cpuexec_registry_default()), pools);
  assert_int_equal(cpuexec_calibration_run(NULL, &def_want, calibrate, &c), CPUEXEC_ECALLBACK);
  assert_int_equal(cpuexec_error_callback_value(), 7);
  assert_int_equal(c.calls, 1);
  assert_int_equal(c.seen_threads, cpuexec_resolved_effective_threads(def));

  assert_int_equal(cpuexec_calibration_run(exec, NULL, calibrate, &c), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_calibration_run(exec, &want, NULL, &c), CPUEXEC_EINVAL);
  cpuexec_executor_release(exec);
  cpuexec_resolved_destroy(r);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
}

int main(void) {
  unsetenv("CPUEXEC_POLICY");
  unsetenv("CPUEXEC_NUM_THREADS");
  unsetenv("OMP_NUM_THREADS");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(stored_machines_describe_behaviour),
      cmocka_unit_test(shared_serial_pool_reports_one_class_whatever_created_it),
      cmocka_unit_test(calibration_runs_only_on_a_matching_executor),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
