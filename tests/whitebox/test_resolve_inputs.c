/* Resolution inputs and identity: the thread-count precedence (request,
 * CPUEXEC_NUM_THREADS, OMP_NUM_THREADS, cgroup quota, topology),
 * CPUEXEC_POLICY, behaviour-only sharing keys, determinism, concurrent
 * first use and the process default with CPUEXEC_DISPLAY. */
#include "support/test_util.h"
#include "support/resolve_fixtures.h"

static void precedence_request_env_quota_topology(void **state) {
  (void)state;
  static const struct {
    const char *machine;
    int32_t threads;
    cpuexec_affinity_policy affinity;
    const char *cpuexec_env, *omp_env;
    int rc;
    uint32_t want;
    const char *diagnostic; /* a diagnostic containing this, or the error's start */
  } cases[] = {
      {"8cores-smt2.xml", 0, PHYS, NULL, NULL, 0, 8, "topology default 8"},
      {"8cores-smt2.xml", 0, PHYS, "3", NULL, 0, 3, "CPUEXEC_NUM_THREADS=3 sets 3"},
      {"8cores-smt2.xml", 0, PHYS, " 4 ", NULL, 0, 4, "CPUEXEC_NUM_THREADS= 4  sets 4"},
      {"8cores-smt2.xml", 0, PHYS, NULL, "5,2", 0, 5, "OMP_NUM_THREADS=5,2 sets 5"},
      {"8cores-smt2.xml", 0, PHYS, "3", "5", 0, 3, "OMP_NUM_THREADS=5 ignored"},
      {"8cores-smt2.xml", 2, PHYS, "3", "5", 0, 2, "CPUEXEC_NUM_THREADS=3 ignored"},
      {"8cores-smt2.xml", 2, PHYS, "3", "5", 0, 2, "OMP_NUM_THREADS=5 ignored"},
      {"8cores-smt2.xml", 0, PHYS, "0", "5", 0, 5, "CPUEXEC_NUM_THREADS=0 asks for the default"},
      {"8cores-smt2.xml", 0, PHYS, NULL, "abc", 0, 8, "OMP_NUM_THREADS=abc ignored"},
      {"8cores-smt2.xml", 0, PHYS, NULL, "0", 0, 8, "OMP_NUM_THREADS=0 ignored"},
      {"8cores-smt2.xml", 0, PHYS, NULL, "12", 0, 8, "OMP_NUM_THREADS asks for 12"},
      {"8cores-smt2.xml", 0, NONE, NULL, "12", 0, 12, "OMP_NUM_THREADS=12 sets 12"},
      {"8cores-smt2.xml", 0, NONE, "40", NULL, 0, 40, "oversubscribed"},
      {"8cores-smt2.xml", 0, PHYS, "12", NULL, CPUEXEC_EINVAL, 0, "CPUEXEC_NUM_THREADS:"},
      {"8cores-smt2.xml", 0, PHYS, "abc", NULL, CPUEXEC_EINVAL, 0, "CPUEXEC_NUM_THREADS:"},
      {"8cores-smt2.xml", 0, PHYS, "-2", NULL, CPUEXEC_EINVAL, 0, "CPUEXEC_NUM_THREADS:"},
      {"8cores-smt2.xml", 0, PHYS, "0x4", NULL, CPUEXEC_EINVAL, 0, "CPUEXEC_NUM_THREADS:"},
      {"8cores-smt2.xml", 0, NONE, "9999999999", NULL, CPUEXEC_EINVAL, 0, "CPUEXEC_NUM_THREADS: \"9999999999\" is too large"},
      {"8cores-smt2.xml", 0, NONE, "2147483648", NULL, CPUEXEC_EINVAL, 0, "CPUEXEC_NUM_THREADS: \"2147483648\" is too large"},
      {"8cores-smt2.xml", 0, NONE, "4x", NULL, CPUEXEC_EINVAL, 0, "CPUEXEC_NUM_THREADS: \"4x\" is not a thread count"},
      {"8cores-smt2.xml", 0, PHYS, "\n3\t", NULL, 0, 3, "sets 3"},
      {"quota-1.5", 0, PHYS, NULL, NULL, 0, 2, "caps the default at 2"},
      {"quota-1.5", 0, PHYS, "4", NULL, 0, 4, "exceed the cgroup quota"},
      {"quota-1.5", 0, PHYS, NULL, "3", 0, 3, "exceed the cgroup quota"},
      {"quota-1.5", 3, PHYS, NULL, NULL, 0, 3, "num_threads: 3 requested"},
      {"restricted-siblings.xml", 0, PHYS, NULL, NULL, 0, 4, "5 of the machine's 8 processors"},
      {"hybrid-8p-smt2-16e.xml", 0, PHYS, NULL, NULL, 0, 8, "performance cores of 24"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    clear_environment();
    if (cases[i].cpuexec_env != NULL)
      setenv("CPUEXEC_NUM_THREADS", cases[i].cpuexec_env, 1);
    if (cases[i].omp_env != NULL)
      setenv("OMP_NUM_THREADS", cases[i].omp_env, 1);
    cpuexec_topology *t = load_machine(machine_named(cases[i].machine), NULL);
    cpuexec_policy p = request(cases[i].threads, cases[i].affinity);
    cpuexec_resolved *r = NULL;
    int rc = cpuexec_policy_resolve(&p, t, &r);
    if (rc != cases[i].rc)
      fail_msg("case %zu: rc %d (%s)", i, rc, cpuexec_error_message());
    if (rc != 0) {
      if (strncmp(cpuexec_error_message(), cases[i].diagnostic, strlen(cases[i].diagnostic)) != 0)
        fail_msg("case %zu: \"%s\"", i, cpuexec_error_message());
    } else {
      assert_int_equal(cpuexec_resolved_effective_threads(r), cases[i].want);
      if (!has_diagnostic(r, cases[i].diagnostic))
        fail_msg("case %zu: no diagnostic \"%s\"", i, cases[i].diagnostic);
    }
    cpuexec_resolved_destroy(r);
    cpuexec_topology_destroy(t);
  }
  clear_environment();
}

/* The quota caps the topology default at ceil(quota), at least 1. */
static void quota_rounds_up_and_never_below_one(void **state) {
  (void)state;
  static const struct {
    double quota;
    uint32_t want;
  } cases[] = {{0.2, 1}, {1.0, 1}, {1.01, 2}, {1.5, 2}, {3.0, 3}, {7.99, 8}, {8.0, 8}, {64, 8}, {1e12, 8}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cpuexec_topology_options o;
    cpuexec_topology_options_init(&o);
    o.cpu_quota = cases[i].quota;
    cpuexec_topology *t;
    assert_int_equal(cpuexec_topology_load_xml(TOPOLOGIES "8cores-smt2.xml", &o, &t), 0);
    cpuexec_policy p = request(0, PHYS);
    cpuexec_resolved *r;
    assert_int_equal(cpuexec_policy_resolve(&p, t, &r), 0);
    if ((uint32_t)cpuexec_resolved_effective_threads(r) != cases[i].want)
      fail_msg("quota %g: %u threads, want %u", cases[i].quota, cpuexec_resolved_effective_threads(r),
               cases[i].want);
    assert_true(has_diagnostic(r, "cgroup quota"));
    cpuexec_resolved_destroy(r);
    cpuexec_topology_destroy(t);
  }
}

/* A NULL request is the process default: CPUEXEC_POLICY. */
static void null_request_reads_cpuexec_policy(void **state) {
  (void)state;
  cpuexec_topology *t = load_machine(machine_named("8cores-smt2.xml"), NULL);
  cpuexec_resolved *r;
  setenv("CPUEXEC_POLICY", "num_threads=3,affinity_policy=physical_then_smt", 1);
  assert_int_equal(cpuexec_policy_resolve(NULL, t, &r), 0);
  assert_int_equal(cpuexec_resolved_effective_threads(r), 3);
  assert_int_equal(cpuexec_resolved_request(r)->affinity_policy, SMT);
  cpuexec_resolved_destroy(r);
  setenv("CPUEXEC_POLICY", "num_threads=three", 1);
  assert_int_equal(cpuexec_policy_resolve(NULL, t, &r), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "CPUEXEC_POLICY"));
  unsetenv("CPUEXEC_POLICY");
  assert_int_equal(cpuexec_policy_resolve(NULL, t, &r), 0);
  assert_int_equal(cpuexec_resolved_effective_threads(r), 8);
  cpuexec_resolved_destroy(r);
  cpuexec_topology_destroy(t);
}

static char *key_of(const char *machine, cpuexec_policy p, const char *omp_env) {
  clear_environment();
  if (omp_env != NULL)
    setenv("OMP_NUM_THREADS", omp_env, 1);
  cpuexec_topology *t = load_machine(machine_named(machine), NULL);
  cpuexec_resolved *r;
  if (cpuexec_policy_resolve(&p, t, &r) != 0)
    fail_msg("%s", cpuexec_error_message());
  char *key = strdup(cpuexec_resolved_sharing_key(r));
  /* No request spelling or diagnostic text leaks into the key. */
  assert_null(strstr(key, "requested"));
  assert_null(strstr(key, "affinity"));
  assert_null(strstr(key, "num_threads"));
  cpuexec_resolved_destroy(r);
  cpuexec_topology_destroy(t);
  clear_environment();
  return key;
}

static cpuexec_policy with(cpuexec_policy p, cpuexec_spin_policy spin, uint64_t budget, bool nested) {
  p.spin_policy = spin;
  p.spin_budget = budget;
  p.allow_nested_parallelism = nested;
  return p;
}

static cpuexec_policy explicit_set(int32_t threads, int32_t a, int32_t b) {
  cpuexec_policy p = request(threads, EXPLICIT);
  p.cpu_set[0] = a;
  p.cpu_set[1] = b;
  p.cpu_set_count = 2;
  return p;
}

static void sharing_keys_hold_behaviour_only(void **state) {
  (void)state;
  const cpuexec_spin_policy A = CPUEXEC_SPIN_ADAPTIVE, D = CPUEXEC_SPIN_FIXED_DURATION,
                            I = CPUEXEC_SPIN_FIXED_ITERATIONS, K = CPUEXEC_SPIN_PARK_IMMEDIATELY;
  static const char *m8 = "8cores-smt2.xml";
  const struct {
    const char *machine_a;
    cpuexec_policy a;
    const char *omp_a;
    const char *machine_b;
    cpuexec_policy b;
    const char *omp_b;
    bool equal;
  } cases[] = {
      /* The default and the count it resolves to. */
      {m8, request(0, PHYS), NULL, m8, request(8, PHYS), NULL, true},
      /* An explicit set with num_threads 0 and with its count. */
      {m8, explicit_set(0, 0, 2), NULL, m8, explicit_set(2, 0, 2), NULL, true},
      /* Diagnostics differ (OMP_NUM_THREADS ignored), behaviour does not. */
      {m8, request(2, PHYS), "6", m8, request(2, PHYS), NULL, true},
      /* OMP_NUM_THREADS reaching the count the request names. */
      {m8, request(0, PHYS), "3", m8, request(3, PHYS), NULL, true},
      /* Performance and physical place alike without kinds. */
      {m8, request(4, PERF), NULL, m8, request(4, PHYS), NULL, true},
      /* Serial: no worker to place, whatever the affinity. */
      {m8, request(1, PHYS), NULL, m8, request(1, NONE), NULL, true},
      {m8, request(2, PHYS), NULL, m8, request(3, PHYS), NULL, false},
      {m8, request(2, NONE), NULL, m8, request(2, PHYS), NULL, false},
      {m8, request(9, SMT), NULL, m8, request(9, NONE), NULL, false},
      {m8, with(request(2, PHYS), A, 0, false), NULL, m8, with(request(2, PHYS), K, 0, false), NULL, false},
      {m8, with(request(2, PHYS), D, 50000, false), NULL, m8, with(request(2, PHYS), D, 60000, false), NULL, false},
      {m8, with(request(2, PHYS), D, 1000, false), NULL, m8, with(request(2, PHYS), I, 1000, false), NULL, false},
      {m8, with(request(2, PHYS), D, 100000, false), NULL, m8, with(request(2, PHYS), A, 0, false), NULL, false},
      {m8, with(request(2, PHYS), A, 0, true), NULL, m8, with(request(2, PHYS), A, 0, false), NULL, false},
      /* A pinned caller differs from a free one with the same worker. */
      {m8, explicit_set(2, 0, 2), NULL, m8, request(2, PHYS), NULL, false},
      {m8, explicit_set(2, 0, 2), NULL, m8, explicit_set(2, 4, 2), NULL, false},
      /* Same count, other machines: another visible count, other processors,
       * or the very same processors (then the executors are interchangeable). */
      {"8cores-smt2.xml", request(2, NONE), NULL, "2cores.xml", request(2, NONE), NULL, false},
      {"2packages-8cores-smt2.xml", request(10, PERF), NULL, "hybrid-8p-smt2-16e.xml", request(10, PERF), NULL,
       false},
      {"2packages-8cores-smt2.xml", request(4, PERF), NULL, "hybrid-8p-smt2-16e.xml", request(4, PERF), NULL,
       true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *a = key_of(cases[i].machine_a, cases[i].a, cases[i].omp_a);
    char *b = key_of(cases[i].machine_b, cases[i].b, cases[i].omp_b);
    if ((strcmp(a, b) == 0) != cases[i].equal)
      fail_msg("case %zu: \"%s\" %s \"%s\"", i, a, cases[i].equal ? "!=" : "==", b);
    free(a);
    free(b);
  }
}

/* The same request on the same machine, twice, from two loads: the same
 * bytes. */
static void resolution_is_deterministic(void **state) {
  (void)state;
  static const cpuexec_affinity_policy policies[] = {NONE, PHYS, PERF, SMT};
  for (size_t m = 0; m < MACHINES; m++) {
    cpuexec_topology *t1 = load_machine(&machines[m], NULL), *t2 = load_machine(&machines[m], NULL);
    for (size_t k = 0; k < sizeof policies / sizeof policies[0]; k++) {
      cpuexec_policy p = request(0, policies[k]);
      cpuexec_resolved *a, *b;
      assert_int_equal(cpuexec_policy_resolve(&p, t1, &a), 0);
      assert_int_equal(cpuexec_policy_resolve(&p, t2, &b), 0);
      char *ja = json_of(a), *jb = json_of(b);
      assert_string_equal(ja, jb);
      assert_string_equal(cpuexec_resolved_sharing_key(a), cpuexec_resolved_sharing_key(b));
      free(ja);
      free(jb);
      cpuexec_resolved_destroy(a);
      cpuexec_resolved_destroy(b);
    }
    cpuexec_topology_destroy(t1);
    cpuexec_topology_destroy(t2);
  }
}

static void *resolve_live(void *arg) {
  cpuexec_policy p = request(0, NONE);
  cpuexec_resolved *r;
  char **key = arg;
  if (cpuexec_policy_resolve(&p, NULL, &r) == 0) {
    *key = strdup(cpuexec_resolved_sharing_key(r));
    cpuexec_resolved_destroy(r);
  }
  return NULL;
}

/* This process's topology is loaded once, whichever thread gets there
 * first; every thread resolves the same thing. */
static void threads_resolving_at_once_agree(void **state) {
  (void)state;
  pthread_t threads[4];
  char *keys[4] = {NULL};
  for (int i = 0; i < 4; i++)
    assert_int_equal(pthread_create(&threads[i], NULL, resolve_live, &keys[i]), 0);
  for (int i = 0; i < 4; i++)
    assert_int_equal(pthread_join(threads[i], NULL), 0);
  for (int i = 0; i < 4; i++) {
    assert_non_null(keys[i]);
    assert_string_equal(keys[i], keys[0]);
  }
  for (int i = 0; i < 4; i++)
    free(keys[i]);
}

/* The only test that touches the process default (it is resolved once). */
static void default_is_resolved_once_and_displayed_once(void **state) {
  (void)state;
  char path[] = "/tmp/cpuexec-display-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  setenv("CPUEXEC_DISPLAY", "1", 1);
  const cpuexec_resolved *a = NULL, *b = NULL;
  int rca = cpuexec_policy_resolve_default(&a), rcb = cpuexec_policy_resolve_default(&b);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  unsetenv("CPUEXEC_DISPLAY");
  assert_int_equal(rca, 0);
  assert_int_equal(rcb, 0);
  assert_ptr_equal(a, b);
  assert_true(cpuexec_resolved_effective_threads(a) >= 1);
  char buf[8192] = "";
  ssize_t n = lseek(fd, 0, SEEK_SET) == 0 ? read(fd, buf, sizeof buf - 1) : -1;
  close(fd);
  unlink(path);
  assert_true(n > 0);
  char *first = strstr(buf, "sharing key:");
  assert_non_null(first);
  assert_null(strstr(first + 1, "sharing key:"));
  assert_int_equal(cpuexec_policy_resolve_default(NULL), CPUEXEC_EINVAL);
}
int main(void) {
  const struct CMUnitTest tests[] = {
      /* First: it is the first load of this process's topology. */
      cmocka_unit_test(threads_resolving_at_once_agree),
      cmocka_unit_test(precedence_request_env_quota_topology),
      cmocka_unit_test(quota_rounds_up_and_never_below_one),
      cmocka_unit_test(null_request_reads_cpuexec_policy),
      cmocka_unit_test(sharing_keys_hold_behaviour_only),
      cmocka_unit_test(resolution_is_deterministic),
      cmocka_unit_test(default_is_resolved_once_and_displayed_once),
  };
  return cmocka_run_group_tests_name("resolve inputs", tests, setup_environment, NULL);
}
