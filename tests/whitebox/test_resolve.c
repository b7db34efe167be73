/* Resolution: every affinity policy and every validation rule on every
 * stored machine, the hybrid done criterion, a caller pinned by someone
 * else (stored and live), the resolved spin, descriptions and references. */
#include "support/test_util.h"
#include "support/resolve_fixtures.h"
#include "os/os.h"

/* The first processor of the most performant visible kind (the caller's
 * core for physical_cores and performance_cores), or the first processor
 * (the others). */
static const cpuexec__processor *first_of_order(const cpuexec_topology *t, cpuexec_affinity_policy a) {
  if ((a == PERF || a == PHYS) && t->kinds_ranked)
    for (uint32_t i = 0; i < t->processor_count; i++)
      if (t->processors[i].kind_rank == t->best_kind_rank)
        return &t->processors[i];
  return &t->processors[0];
}

/* What every resolution with a pinning policy must satisfy. */
static void check_pinned(const cpuexec_topology *t, const cpuexec_resolved *r, cpuexec_affinity_policy a,
                         const char *where) {
  uint32_t threads = (uint32_t)cpuexec_resolved_effective_threads(r);
  int32_t worker_count;
  const int32_t *w = cpuexec_resolved_worker_processors(r, &worker_count);
  uint32_t n = (uint32_t)worker_count;
  if (n != threads - 1)
    fail_msg("%s: %u workers for %u threads", where, n, threads);
  assert_int_equal(cpuexec_resolved_caller_processor(r), -1);
  assert_false(r->pin_caller);
  uint32_t *per_core = calloc(t->core_count, sizeof *per_core);
  uint32_t caller_core = first_of_order(t, a)->core;
  uint32_t efficiency_workers = 0, later_siblings = 0;
  for (uint32_t i = 0; i < n; i++) {
    const cpuexec__processor *p = proc(t, w[i]);
    for (uint32_t j = 0; j < i; j++)
      if (w[j] == w[i])
        fail_msg("%s: processor %d used twice", where, (int)w[i]);
    per_core[p->core]++;
    efficiency_workers += p->kind_rank > 0;
    later_siblings += p->sibling > 0;
    if (a != SMT && p->sibling != 0)
      fail_msg("%s: worker on processor %d, not the first of its core", where, (int)w[i]);
  }
  /* The caller's core is the last resort: a worker lands there only when
   * every other visible processor of the order is taken. */
  if (a == SMT && per_core[caller_core] > 0)
    for (uint32_t i = 0; i < t->processor_count; i++)
      if (t->processors[i].core != caller_core) {
        bool used = false;
        for (uint32_t j = 0; j < n; j++)
          used |= w[j] == t->processors[i].os_index;
        if (!used)
          fail_msg("%s: a worker on the caller's core while processor %d is free", where,
                   (int)t->processors[i].os_index);
      }
  if (a != SMT) {
    for (uint32_t c = 0; c < t->core_count; c++)
      if (per_core[c] > 1)
        fail_msg("%s: two workers on core %u", where, c);
    assert_false(cpuexec_resolved_uses_smt(r));
    assert_int_equal(later_siblings, 0);
    /* Fewer participants than cores: the caller's core stays free. */
    assert_int_equal(per_core[caller_core], 0);
  } else {
    /* Every core first (the caller's counts as used), then siblings. */
    bool smt_expected = threads > t->core_count;
    if (cpuexec_resolved_uses_smt(r) != smt_expected)
      fail_msg("%s: uses_smt %d for %u threads on %u cores", where, cpuexec_resolved_uses_smt(r), threads,
               t->core_count);
    if (!smt_expected)
      assert_int_equal(later_siblings, 0);
    /* Outside the caller's core, siblings come in rounds: every first
     * sibling, then every second one, and so on. */
    uint32_t round = 0;
    for (uint32_t i = 0; i < n; i++) {
      const cpuexec__processor *p = proc(t, w[i]);
      if (p->core == caller_core)
        continue;
      if (p->sibling < round)
        fail_msg("%s: processor %d (sibling %u) placed after sibling %u", where, (int)w[i], p->sibling, round);
      round = p->sibling;
    }
  }
  if ((a == PERF || a == PHYS) && t->kinds_ranked) {
    uint32_t performance = cpuexec_topology_performance_core_count(t);
    /* P-cores first: E-cores only once every P-core but the caller's is taken. */
    uint32_t expected_e = threads > performance ? threads - performance : 0;
    assert_int_equal(efficiency_workers, expected_e);
    assert_int_equal(cpuexec_resolved_uses_efficiency_cores(r), expected_e > 0);
  }
  free(per_core);
}

/* Every affinity policy on every machine, at the default, serial, two, the
 * capacity and one past it. */
static void every_affinity_policy_on_every_machine(void **state) {
  (void)state;
  static const cpuexec_affinity_policy policies[] = {NONE, PHYS, PERF, SMT};
  for (size_t m = 0; m < MACHINES; m++) {
    cpuexec_topology *t = load_machine(&machines[m], NULL);
    for (size_t k = 0; k < sizeof policies / sizeof policies[0]; k++) {
      cpuexec_affinity_policy a = policies[k];
      uint32_t capacity = a == NONE ? 4 * t->processor_count : a == SMT ? t->processor_count : t->core_count;
      const int32_t counts[] = {0, 1, 2, (int32_t)capacity, (int32_t)capacity + 1};
      for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        char where[160];
        snprintf(where, sizeof where, "%s affinity_policy=%s num_threads=%d", machines[m].dir_or_file,
                 cpuexec_affinity_policy_name(a), (int)counts[c]);
        cpuexec_policy p = request(counts[c], a);
        cpuexec_resolved *r = NULL;
        int rc = cpuexec_policy_resolve(&p, t, &r);
        if ((uint32_t)counts[c] > capacity && a != NONE) {
          if (rc != CPUEXEC_EINVAL)
            fail_msg("%s: accepted past the capacity %u", where, capacity);
          assert_null(r);
          assert_int_equal(strncmp(cpuexec_error_message(), "num_threads:", 12), 0);
          continue;
        }
        if (rc != 0)
          fail_msg("%s: %s", where, cpuexec_error_message());
        uint32_t want = counts[c] == 0 ? machines[m].default_threads : (uint32_t)counts[c];
        if ((uint32_t)cpuexec_resolved_effective_threads(r) != want)
          fail_msg("%s: %u threads, want %u", where, cpuexec_resolved_effective_threads(r), want);
        assert_int_equal(r->effective_threads, want);
        assert_int_equal(r->visible_processors, t->processor_count);
        assert_non_null(cpuexec_resolved_sharing_key(r));
        assert_true(cpuexec_resolved_diagnostic_count(r) >= 1);
        if (a == NONE) {
          int32_t n = 99;
          assert_null(cpuexec_resolved_worker_processors(r, &n));
          assert_int_equal(n, 0);
          assert_false(cpuexec_resolved_uses_smt(r));
          assert_false(cpuexec_resolved_uses_efficiency_cores(r));
          assert_int_equal(cpuexec_resolved_caller_processor(r), -1);
          assert_true(has_diagnostic(r, "no participant is pinned"));
          assert_non_null(strstr(cpuexec_resolved_sharing_key(r), "workers=none"));
        } else {
          check_pinned(t, r, a, where);
        }
        if (a == PERF)
          assert_int_equal(has_diagnostic(r, "no ranked CPU kinds"), !t->kinds_ranked);
        cpuexec_resolved_destroy(r);
      }
    }
    cpuexec_topology_destroy(t);
  }
}

/* Explicit: the set's first processor is the caller's, the rest the
 * workers'; num_threads 0 takes the set's size; the caller is pinned. */
static void explicit_sets_place_caller_first_on_every_machine(void **state) {
  (void)state;
  for (size_t m = 0; m < MACHINES; m++) {
    cpuexec_topology *t = load_machine(&machines[m], NULL);
    uint32_t k = t->processor_count < 3 ? t->processor_count : 3;
    cpuexec_policy p = request(0, EXPLICIT);
    /* The last k visible processors, last first. */
    for (uint32_t i = 0; i < k; i++)
      p.cpu_set[i] = t->processors[t->processor_count - 1 - i].os_index;
    p.cpu_set_count = k;
    for (int pass = 0; pass < 2; pass++) {
      p.num_threads = pass == 0 ? 0 : (int32_t)k;
      cpuexec_resolved *r;
      if (cpuexec_policy_resolve(&p, t, &r) != 0)
        fail_msg("%s: %s", machines[m].dir_or_file, cpuexec_error_message());
      assert_int_equal(cpuexec_resolved_effective_threads(r), k);
      assert_int_equal(cpuexec_resolved_caller_processor(r), p.cpu_set[0]);
      assert_true(r->pin_caller);
      int32_t n;
      const int32_t *w = cpuexec_resolved_worker_processors(r, &n);
      assert_int_equal(n, k - 1);
      for (int32_t i = 0; i < n; i++)
        assert_int_equal(w[i], p.cpu_set[i + 1]);
      /* uses_smt: two participants of the set on one core. */
      bool shared = false;
      for (uint32_t i = 0; i < k; i++)
        for (uint32_t j = 0; j < i; j++)
          shared |= proc(t, p.cpu_set[i])->core == proc(t, p.cpu_set[j])->core;
      assert_int_equal(cpuexec_resolved_uses_smt(r), shared);
      bool efficiency = false;
      for (uint32_t i = 0; i < k; i++)
        efficiency |= proc(t, p.cpu_set[i])->kind_rank > 0;
      assert_int_equal(cpuexec_resolved_uses_efficiency_cores(r), efficiency);
      cpuexec_resolved_destroy(r);
    }
    cpuexec_topology_destroy(t);
  }
}

typedef enum rule {
  NEGATIVE_THREADS,
  FIXED_DURATION_WITHOUT_BUDGET,
  FIXED_ITERATIONS_WITHOUT_BUDGET,
  ADAPTIVE_WITH_BUDGET,
  PARK_WITH_BUDGET,
  CPU_SET_WITHOUT_EXPLICIT,
  EXPLICIT_WITHOUT_SET,
  DUPLICATE_IDS,
  ID_OUTSIDE_VISIBLE_SET,
  COUNT_NOT_MATCHING_SET,
  MORE_THREADS_THAN_CORES_PHYSICAL,
  MORE_THREADS_THAN_CORES_PERFORMANCE,
  MORE_THREADS_THAN_PROCESSORS_SMT,
  SPIN_POLICY_OUT_OF_RANGE,
  AFFINITY_POLICY_OUT_OF_RANGE,
} rule;

static const struct {
  rule rule;
  const char *field; /* the message starts with it */
  const char *value; /* the message quotes it ("%d" means the machine-dependent number) */
} rules[] = {
    {NEGATIVE_THREADS, "num_threads", "-3"},
    {FIXED_DURATION_WITHOUT_BUDGET, "spin_budget", "fixed_duration"},
    {FIXED_ITERATIONS_WITHOUT_BUDGET, "spin_budget", "fixed_iterations"},
    {ADAPTIVE_WITH_BUDGET, "spin_budget", "adaptive"},
    {PARK_WITH_BUDGET, "spin_budget", "park_immediately"},
    {CPU_SET_WITHOUT_EXPLICIT, "cpu_set", "physical_cores"},
    {EXPLICIT_WITHOUT_SET, "affinity_policy", "cpu_set"},
    {DUPLICATE_IDS, "cpu_set", "0"},
    {ID_OUTSIDE_VISIBLE_SET, "cpu_set", "%d"},
    {COUNT_NOT_MATCHING_SET, "num_threads", "2"},
    {MORE_THREADS_THAN_CORES_PHYSICAL, "num_threads", "%d"},
    {MORE_THREADS_THAN_CORES_PERFORMANCE, "num_threads", "%d"},
    {MORE_THREADS_THAN_PROCESSORS_SMT, "num_threads", "%d"},
    {SPIN_POLICY_OUT_OF_RANGE, "spin_policy", "9"},
    {AFFINITY_POLICY_OUT_OF_RANGE, "affinity_policy", "9"},
};

/* Builds the request that breaks rule on t; *number is the value the
 * message must quote for machine-dependent rules. */
static cpuexec_policy breaking(rule broken, const cpuexec_topology *t, int *number) {
  cpuexec_policy p = request(0, PHYS);
  int32_t first = t->processors[0].os_index;
  int32_t last = t->processors[t->processor_count - 1].os_index;
  switch (broken) {
  case NEGATIVE_THREADS:
    p.num_threads = -3;
    break;
  case FIXED_DURATION_WITHOUT_BUDGET:
    p.spin_policy = CPUEXEC_SPIN_FIXED_DURATION;
    break;
  case FIXED_ITERATIONS_WITHOUT_BUDGET:
    p.spin_policy = CPUEXEC_SPIN_FIXED_ITERATIONS;
    break;
  case ADAPTIVE_WITH_BUDGET:
    p.spin_budget = 5;
    break;
  case PARK_WITH_BUDGET:
    p.spin_policy = CPUEXEC_SPIN_PARK_IMMEDIATELY;
    p.spin_budget = 5;
    break;
  case CPU_SET_WITHOUT_EXPLICIT:
    p.cpu_set[0] = first;
    p.cpu_set_count = 1;
    break;
  case EXPLICIT_WITHOUT_SET:
    p.affinity_policy = EXPLICIT;
    break;
  case DUPLICATE_IDS:
    p.affinity_policy = EXPLICIT;
    p.cpu_set[0] = 0;
    p.cpu_set[1] = 0;
    p.cpu_set_count = 2;
    break;
  case ID_OUTSIDE_VISIBLE_SET:
    p.affinity_policy = EXPLICIT;
    p.cpu_set[0] = first;
    p.cpu_set[1] = *number = last + 1;
    /* On the restricted machine, a sibling the process may not use. */
    if (t->processor_count < t->machine_processors && find(t, 2) == NULL)
      p.cpu_set[1] = *number = 2;
    p.cpu_set_count = 2;
    break;
  case COUNT_NOT_MATCHING_SET:
    p.affinity_policy = EXPLICIT;
    p.num_threads = 2;
    p.cpu_set[0] = first;
    p.cpu_set_count = 1;
    break;
  case MORE_THREADS_THAN_CORES_PHYSICAL:
    p.num_threads = *number = (int)t->core_count + 1;
    break;
  case MORE_THREADS_THAN_CORES_PERFORMANCE:
    p.affinity_policy = PERF;
    p.num_threads = *number = (int)t->core_count + 1;
    break;
  case MORE_THREADS_THAN_PROCESSORS_SMT:
    p.affinity_policy = SMT;
    p.num_threads = *number = (int)t->processor_count + 1;
    break;
  case SPIN_POLICY_OUT_OF_RANGE:
    p.spin_policy = (cpuexec_spin_policy)9;
    break;
  case AFFINITY_POLICY_OUT_OF_RANGE:
    p.affinity_policy = (cpuexec_affinity_policy)9;
    break;
  }
  return p;
}

static void every_validation_rule_on_every_machine(void **state) {
  (void)state;
  for (size_t m = 0; m < MACHINES; m++) {
    cpuexec_topology *t = load_machine(&machines[m], NULL);
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
      int number = 0;
      cpuexec_policy p = breaking(rules[i].rule, t, &number);
      cpuexec_resolved *r = (cpuexec_resolved *)0x1;
      int rc = cpuexec_policy_resolve(&p, t, &r);
      const char *msg = cpuexec_error_message();
      char value[32];
      if (strcmp(rules[i].value, "%d") == 0)
        snprintf(value, sizeof value, "%d", number);
      else
        snprintf(value, sizeof value, "%s", rules[i].value);
      printf("# %-26s rule %-2zu -> %s\n", machines[m].dir_or_file, i, msg);
      if (rc != CPUEXEC_EINVAL)
        fail_msg("%s rule %zu: rc %d", machines[m].dir_or_file, i, rc);
      assert_null(r);
      if (strncmp(msg, rules[i].field, strlen(rules[i].field)) != 0 || strstr(msg, value) == NULL)
        fail_msg("%s rule %zu: \"%s\" should name %s and %s", machines[m].dir_or_file, i, msg, rules[i].field,
                 value);
    }
    cpuexec_topology_destroy(t);
  }
  cpuexec_resolved *r;
  cpuexec_policy p = request(0, PHYS);
  assert_int_equal(cpuexec_policy_resolve(&p, NULL, NULL), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_policy_resolve(&p, NULL, &r), 0);
  cpuexec_resolved_destroy(r);
}

/* Seed 000: the default placement prefers performance cores when the
 * topology identifies them. On a machine whose E-cores come first in
 * hwloc order, physical_cores still places the P-cores first. */
/* Worker k of a resolution of `threads` runs on want[k - 1]. */
static void check_workers(const cpuexec_resolved *r, int32_t threads, const int32_t *want) {
  int32_t n = 0;
  const int32_t *w = cpuexec_resolved_worker_processors(r, &n);
  assert_int_equal(n, threads - 1);
  for (int32_t i = 0; i < n; i++)
    if (w[i] != want[i])
      fail_msg("%d threads: worker %d on processor %d, want %d", (int)threads, (int)i + 1, (int)w[i], (int)want[i]);
}

static void physical_cores_prefer_performance_cores(void **state) {
  (void)state;
  cpuexec_topology *t = load_machine(machine_named("hybrid-4e-first-2p.xml"), NULL);
  static const struct {
    int32_t threads;
    int32_t workers[3];
    bool efficiency;
  } cases[] = {{2, {5}, false}, {3, {5, 0}, true}, {4, {5, 0, 1}, true}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    cpuexec_policy p = request(cases[c].threads, PHYS);
    cpuexec_resolved *r = NULL;
    assert_int_equal(cpuexec_policy_resolve(&p, t, &r), 0);
    check_workers(r, cases[c].threads, cases[c].workers);
    assert_int_equal(cpuexec_resolved_uses_efficiency_cores(r), cases[c].efficiency);
    assert_false(has_diagnostic(r, "no ranked CPU kinds"));
    cpuexec_resolved_destroy(r);
  }
  cpuexec_topology_destroy(t);
}

/* SMT siblings numbered apart (processors i and i + 8 share core i): the
 * placements read the cores from the topology, never from adjacent ids. A
 * core taken as id / 2 would put physical_cores' workers on 2, 4, 6 and
 * the SMT siblings past the cores on 1, 3, 5 ... Here the workers take
 * cores 1-7, then the siblings of cores 1-4 (9-12); core 0 is the
 * caller's, its sibling 8 left free. */
static void siblings_numbered_apart_are_placed_by_their_cores(void **state) {
  (void)state;
  cpuexec_topology *t = load_machine(machine_named("8cores-smt2-siblings-apart.xml"), NULL);
  static const struct {
    cpuexec_affinity_policy affinity;
    int32_t threads;
    int32_t workers[11];
    bool smt;
  } cases[] = {
      {PHYS, 4, {1, 2, 3}, false},
      {PHYS, 8, {1, 2, 3, 4, 5, 6, 7}, false},
      {SMT, 8, {1, 2, 3, 4, 5, 6, 7}, false},
      {SMT, 12, {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12}, true},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    cpuexec_policy p = request(cases[c].threads, cases[c].affinity);
    cpuexec_resolved *r = NULL;
    assert_int_equal(cpuexec_policy_resolve(&p, t, &r), 0);
    check_workers(r, cases[c].threads, cases[c].workers);
    assert_int_equal(cpuexec_resolved_uses_smt(r), cases[c].smt);
    cpuexec_resolved_destroy(r);
  }
  cpuexec_topology_destroy(t);
}

/* The done criterion: the hybrid with performance_cores puts every worker
 * on a P-core and no two participants on one core. */
static void hybrid_performance_cores_use_only_p_cores(void **state) {
  (void)state;
  cpuexec_topology *t = load_machine(machine_named("hybrid-8p-smt2-16e.xml"), NULL);
  cpuexec_policy p = request(0, PERF);
  cpuexec_resolved *r;
  assert_int_equal(cpuexec_policy_resolve(&p, t, &r), 0);
  int32_t n;
  const int32_t *w = cpuexec_resolved_worker_processors(r, &n);
  assert_int_equal(n, 7);
  bool core_used[8] = {true}; /* core 0 (P#0-1) is the caller's */
  for (int32_t i = 0; i < n; i++) {
    assert_true(w[i] >= 0 && w[i] < 16); /* P#0-15 are the P-cores */
    assert_false(core_used[w[i] / 2]);
    core_used[w[i] / 2] = true;
  }
  assert_false(cpuexec_resolved_uses_efficiency_cores(r));
  assert_false(cpuexec_resolved_uses_smt(r));
  cpuexec_resolved_destroy(r);
  /* physical_then_smt on the hybrid: every core first, so E-cores before
   * the P-cores' second siblings. */
  p = request(25, SMT);
  assert_int_equal(cpuexec_policy_resolve(&p, t, &r), 0);
  w = cpuexec_resolved_worker_processors(r, &n);
  assert_int_equal(n, 24);
  assert_int_equal(w[23], 3); /* core 1's second sibling comes after all 23 other cores */
  assert_true(cpuexec_resolved_uses_efficiency_cores(r));
  assert_true(cpuexec_resolved_uses_smt(r));
  cpuexec_resolved_destroy(r);
  cpuexec_topology_destroy(t);
}

/* A stored caller binding: the caller keeps it, workers avoid its core. */
static void a_caller_pinned_by_someone_else_keeps_its_place(void **state) {
  (void)state;
  static const struct {
    const char *caller;
    cpuexec_affinity_policy affinity;
    int32_t threads;
    int32_t want_caller;
    bool want_pin;
    int32_t want_workers[8];
    uint32_t want_count;
  } cases[] = {
      /* 8cores-smt2: core c holds P#2c and P#2c+1. */
      {"2", PHYS, 4, 2, false, {0, 4, 6}, 3},
      {"2-3", PHYS, 4, -1, false, {0, 4, 6}, 3},
      {"2", PHYS, 8, 2, false, {0, 4, 6, 8, 10, 12, 14}, 7},
      {"2", PERF, 3, 2, false, {0, 4}, 2},
      {"2", SMT, 9, 2, false, {0, 4, 6, 8, 10, 12, 14, 1}, 8},
      {"2", NONE, 4, 2, false, {0}, 0},
      {"0-15", PHYS, 3, -1, false, {2, 4}, 2}, /* bound to everything: not pinned */
      {"2", EXPLICIT, 2, 4, true, {6}, 1},     /* explicit overrides the binding */
      /* Bound to cores 0-3: workers fill cores 4-7, then cores 0-2; core 3
       * (reached last) is left to the caller, so no core holds two. */
      {"0-7", PHYS, 8, -1, false, {8, 10, 12, 14, 0, 2, 4}, 7},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cpuexec_topology *t = load_machine(machine_named("8cores-smt2.xml"), cases[i].caller);
    cpuexec_policy p = request(cases[i].threads, cases[i].affinity);
    if (cases[i].affinity == EXPLICIT) {
      p.cpu_set[0] = 4;
      p.cpu_set[1] = 6;
      p.cpu_set_count = 2;
    }
    cpuexec_resolved *r;
    assert_int_equal(cpuexec_policy_resolve(&p, t, &r), 0);
    assert_int_equal(cpuexec_resolved_caller_processor(r), cases[i].want_caller);
    assert_int_equal(r->pin_caller, cases[i].want_pin);
    int32_t n;
    const int32_t *w = cpuexec_resolved_worker_processors(r, &n);
    assert_int_equal(n, cases[i].want_count);
    for (int32_t k = 0; k < n; k++)
      assert_int_equal(w[k], cases[i].want_workers[k]);
    bool bound = strcmp(cases[i].caller, "0-15") != 0;
    assert_false(cpuexec_resolved_uses_smt(r) && cases[i].affinity == PHYS);
    assert_int_equal(has_diagnostic(r, "keeps that placement"), bound && cases[i].affinity != EXPLICIT);
    assert_int_equal(has_diagnostic(r, "explicit pins it to 4"), bound && cases[i].affinity == EXPLICIT);
    /* The caller's own binding is not executor behaviour. */
    assert_null(strstr(cpuexec_resolved_sharing_key(r), "caller=2"));
    cpuexec_resolved_destroy(r);
    cpuexec_topology_destroy(t);
  }
}

typedef struct live_result {
  int rc;
  int32_t cpu, caller;
  int32_t workers;
  int32_t worker0;
} live_result;

/* Binds the calling thread to cpu: on Linux with glibc's call, whichever
 * OS backend this build has (the posix one cannot see the binding), else
 * through the OS layer. */
static int bind_self(int32_t cpu) {
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
#else
  return cpuexec__os_pin_self(cpu);
#endif
}

/* The process's processors: how many, and the last one (-1: none). */
static int32_t process_processors(int32_t *last) {
  *last = -1;
#ifdef __linux__
  cpu_set_t set;
  assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
  for (int i = 0; i < CPU_SETSIZE; i++)
    if (CPU_ISSET(i, &set))
      *last = i;
  return CPU_COUNT(&set);
#else
  cpuexec__os_cpus set;
  assert_true(cpuexec__os_process_cpus(&set));
  for (int32_t i = 0; i < CPUEXEC__OS_CPUS_MAX; i++)
    if (cpuexec__os_cpus_has(&set, i))
      *last = i;
  return cpuexec__os_cpus_count(&set);
#endif
}

static void *resolve_bound_to_last_cpu(void *arg) {
  live_result *out = arg;
  out->rc = bind_self(out->cpu);
  if (out->rc != 0)
    return NULL;
  cpuexec_policy p = request(2, PHYS);
  cpuexec_resolved *r;
  out->rc = cpuexec_policy_resolve(&p, NULL, &r);
  if (out->rc == 0) {
    out->caller = cpuexec_resolved_caller_processor(r);
    const int32_t *w = cpuexec_resolved_worker_processors(r, &out->workers);
    out->worker0 = out->workers > 0 ? w[0] : -1;
    cpuexec_resolved_destroy(r);
  }
  return NULL;
}

/* This process: a thread bound more narrowly than the process keeps its
 * binding, and the worker goes elsewhere. */
static void a_live_thread_bound_narrower_keeps_its_place(void **state) {
  (void)state;
  live_result out = {.cpu = -1};
  int32_t processors = process_processors(&out.cpu);
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, resolve_bound_to_last_cpu, &out), 0);
  assert_int_equal(pthread_join(thread, NULL), 0);
  if (!cpuexec__os_has_affinity()) {
    /* This OS backend cannot see or apply a binding: the pinning policy
     * resolves unpinned, and says why. */
    assert_int_equal(out.rc, 0);
    assert_int_equal(out.caller, -1);
    assert_int_equal(out.workers, 0);
    cpuexec_policy p = request(2, PHYS);
    cpuexec_resolved *r;
    assert_int_equal(cpuexec_policy_resolve(&p, NULL, &r), 0);
    assert_true(has_diagnostic(r, "cannot pin threads"));
    cpuexec_resolved_destroy(r);
    p.affinity_policy = CPUEXEC_AFFINITY_EXPLICIT;
    p.num_threads = 1;
    p.cpu_set[0] = out.cpu;
    p.cpu_set_count = 1;
    assert_int_equal(cpuexec_policy_resolve(&p, NULL, &r), CPUEXEC_ENOTSUP);
    assert_non_null(strstr(cpuexec_error_message(), "explicit"));
    return;
  }
  if (processors == 1) {
    /* One processor: the binding is not narrower, and two threads on one
     * core cannot be pinned by physical_cores. */
    assert_int_equal(out.rc, CPUEXEC_EINVAL);
    return;
  }
  const cpuexec_topology *t;
  cpuexec_policy p = request(2, PHYS);
  cpuexec_resolved *probe;
  if (cpuexec_policy_resolve(&p, NULL, &probe) != 0) {
    /* Fewer than two cores visible: physical_cores cannot place two. */
    assert_int_equal(out.rc, CPUEXEC_EINVAL);
    return;
  }
  cpuexec_resolved_destroy(probe);
  assert_int_equal(out.rc, 0);
  assert_int_equal(out.caller, out.cpu);
  assert_int_equal(out.workers, 1);
  assert_int_not_equal(out.worker0, out.cpu);
  cpuexec_topology *live;
  assert_int_equal(cpuexec_topology_load(NULL, &live), 0);
  t = live;
  const cpuexec__processor *pc = find(t, out.cpu), *pw = find(t, out.worker0);
  assert_non_null(pc);
  assert_non_null(pw);
  assert_int_not_equal(pc->core, pw->core);
  cpuexec_topology_destroy(live);
}

/* The JSON's spin object says what a waiting thread does, per the
 * executor's plan (the agreement with cpuexec__spin_plan_of itself is
 * test_executor_lifecycle's spin_policies_resolve_to_the_waits_they_promise):
 * the stages in order, the long spin and when it is skipped, the cadence. */
static void spin_resolves_to_concrete_behaviour(void **state) {
  (void)state;
  static const struct {
    cpuexec_spin_policy policy;
    int32_t threads; /* on 2 visible processors */
    cpuexec_affinity_policy affinity;
    uint64_t budget, spin_ns, iterations;
    bool park_oversubscribed;
    const char *json_tail; /* the spin object from cadence_burn_permille on */
  } cases[] = {
      {CPUEXEC_SPIN_ADAPTIVE, 2, PHYS, 0, CPUEXEC__ADAPTIVE_SPIN_NS, 0, true,
       "\"cadence_burn_permille\":200,\"parks_at_once\":false,\"yields_when_sharing_processor\":true,"
       "\"long_spin_ns\":1000000,\"gap_spin_max_ns\":2000000,\"long_spin_skipped_when\":\"preempted within 10 ms\","
       "\"follows_cadence\":true,\"stages\":[\"spin\",\"long_spin\",\"gap_spin\",\"cadence\",\"park\"]}"},
      /* More threads than processors: parks at once, none of the rest. */
      {CPUEXEC_SPIN_ADAPTIVE, 3, NONE, 0, CPUEXEC__ADAPTIVE_SPIN_NS, 0, true,
       "\"cadence_burn_permille\":200,\"parks_at_once\":true,\"yields_when_sharing_processor\":false,"
       "\"long_spin_ns\":0,\"gap_spin_max_ns\":0,\"long_spin_skipped_when\":null,\"follows_cadence\":false,\"stages\":[\"park\"]}"},
      {CPUEXEC_SPIN_PARK_IMMEDIATELY, 2, PHYS, 0, 0, 0, false,
       "\"cadence_burn_permille\":0,\"parks_at_once\":true,\"yields_when_sharing_processor\":false,"
       "\"long_spin_ns\":0,\"gap_spin_max_ns\":0,\"long_spin_skipped_when\":null,\"follows_cadence\":false,\"stages\":[\"park\"]}"},
      {CPUEXEC_SPIN_FIXED_DURATION, 2, PHYS, 50000, 50000, 0, false,
       "\"cadence_burn_permille\":0,\"parks_at_once\":false,\"yields_when_sharing_processor\":true,"
       "\"long_spin_ns\":0,\"gap_spin_max_ns\":0,\"long_spin_skipped_when\":null,\"follows_cadence\":false,\"stages\":[\"spin\",\"park\"]}"},
      /* Fixed policies spin as asked, oversubscribed or not. */
      {CPUEXEC_SPIN_FIXED_ITERATIONS, 3, NONE, 1000, 0, 1000, false,
       "\"cadence_burn_permille\":0,\"parks_at_once\":false,\"yields_when_sharing_processor\":false,"
       "\"long_spin_ns\":0,\"gap_spin_max_ns\":0,\"long_spin_skipped_when\":null,\"follows_cadence\":false,\"stages\":[\"spin\",\"park\"]}"},
  };
  cpuexec_topology *t = load_machine(machine_named("2cores.xml"), NULL);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cpuexec_policy p = request(cases[i].threads, cases[i].affinity);
    p.spin_policy = cases[i].policy;
    p.spin_budget = cases[i].budget;
    cpuexec_resolved *r;
    assert_int_equal(cpuexec_policy_resolve(&p, t, &r), 0);
    cpuexec_resolved_spin s = cpuexec_resolved_spin_behaviour(r);
    assert_int_equal(s.policy, cases[i].policy);
    assert_int_equal(s.spin_ns, cases[i].spin_ns);
    assert_int_equal(s.spin_iterations, cases[i].iterations);
    assert_int_equal(s.park_when_oversubscribed, cases[i].park_oversubscribed);
    /* Only the adaptive policy follows the call cadence (doc/spinning.md). */
    assert_int_equal(s.cadence_burn_permille, cases[i].policy == CPUEXEC_SPIN_ADAPTIVE ? 200u : 0u);
    char *json = json_of(r);
    const char *spin = strstr(json, "\"spin\":{");
    assert_non_null(spin);
    const char *tail = strstr(spin, "\"cadence_burn_permille\"");
    assert_non_null(tail);
    if (strncmp(tail, cases[i].json_tail, strlen(cases[i].json_tail)) != 0)
      fail_msg("case %zu: spin JSON\n  %.*s\nexpected\n  %s", i, (int)strlen(cases[i].json_tail), tail,
               cases[i].json_tail);
    free(json);
    cpuexec_resolved_destroy(r);
  }
  cpuexec_topology_destroy(t);
}

/* The text says the same in words, stage by stage. */
static void the_text_tells_each_stage_of_a_wait(void **state) {
  (void)state;
  static const struct {
    cpuexec_spin_policy policy;
    int32_t threads;
    uint64_t budget;
    const char *has[10];
    const char *lacks;
  } cases[] = {
      {CPUEXEC_SPIN_ADAPTIVE,
       2,
       0,
       {"adaptive, 2 threads on 2 visible processors: a waiting thread\n",
        "1. spins 100000 ns, yielding while the thread it waits for runs on its processor (lane 0's caller and its workers)\n",
        "2. spins up to 1000000 ns more while what will wake it runs",
        "unless it was preempted within the last 10 ms\n",
        "3. a worker that follows no cadence spins through the gaps it keeps seeing: woken by a region within 2000000 ns",
        "while such gaps recur within 64 waits; skipped as in 2\n",
        "4. a worker follows a steady call cadence", "5. parks\n",
        "and for 64 regions after callers met"},
       NULL},
      {CPUEXEC_SPIN_ADAPTIVE,
       3,
       0,
       {"adaptive, 3 threads on 2 visible processors: oversubscribed, so a waiting thread parks at once"},
       "1. spins"},
      {CPUEXEC_SPIN_FIXED_DURATION,
       3,
       20000,
       {"fixed_duration: a waiting thread\n", "1. spins 20000 ns, yielding", "2. parks\n",
        "exactly as asked: no long or gap spin, no cadence"},
       "spins up to"},
      {CPUEXEC_SPIN_FIXED_ITERATIONS, 2, 700, {"1. spins 700 pause iterations\n", "2. parks\n"}, "yielding"},
      {CPUEXEC_SPIN_PARK_IMMEDIATELY, 2, 0, {"park_immediately: a waiting thread parks at once\n"}, "spins"},
      {CPUEXEC_SPIN_ADAPTIVE, 1, 0, {"spin:                  adaptive (serial: no thread waits)\n"}, "spins"},
  };
  cpuexec_topology *t = load_machine(machine_named("2cores.xml"), NULL);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cpuexec_policy p = request(cases[i].threads, NONE);
    p.spin_policy = cases[i].policy;
    p.spin_budget = cases[i].budget;
    cpuexec_resolved *r;
    assert_int_equal(cpuexec_policy_resolve(&p, t, &r), 0);
    char text[4096];
    assert_in_range(cpuexec_resolved_describe(r, CPUEXEC_FORMAT_TEXT, text, sizeof text), 1, sizeof text - 1);
    for (size_t k = 0; k < 10 && cases[i].has[k]; k++)
      if (!strstr(text, cases[i].has[k])) fail_msg("case %zu: no \"%s\" in\n%s", i, cases[i].has[k], text);
    if (cases[i].lacks && strstr(text, cases[i].lacks))
      fail_msg("case %zu: \"%s\" in\n%s", i, cases[i].lacks, text);
    cpuexec_resolved_destroy(r);
  }
  cpuexec_topology_destroy(t);
}

static void describe_names_everything_and_truncates_like_snprintf(void **state) {
  (void)state;
  setenv("OMP_NUM_THREADS", "say \"hi\"\\", 1); /* ignored, quoted in a diagnostic */
  cpuexec_topology *t = load_machine(machine_named("hybrid-8p-smt2-16e.xml"), NULL);
  cpuexec_policy p = request(0, PERF);
  cpuexec_resolved *r;
  assert_int_equal(cpuexec_policy_resolve(&p, t, &r), 0);
  clear_environment();
  char *json = json_of(r);
  assert_non_null(strstr(json, "\"effective_threads\":8,"));
  assert_non_null(strstr(json, "\"worker_processors\":[2,4,6,8,10,12,14]"));
  assert_non_null(strstr(json, "\"affinity_policy\":\"performance_cores\""));
  assert_non_null(strstr(json, "\"caller_processor\":null"));
  assert_non_null(strstr(json, "OMP_NUM_THREADS=say \\\"hi\\\"\\\\ ignored"));
  free(json);
  int n = cpuexec_resolved_describe(r, CPUEXEC_FORMAT_TEXT, NULL, 0);
  char *text = malloc((size_t)n + 1);
  assert_int_equal(cpuexec_resolved_describe(r, CPUEXEC_FORMAT_TEXT, text, (size_t)n + 1), n);
  assert_non_null(strstr(text, "effective threads:     8"));
  assert_non_null(strstr(text, "worker processors:     2,4,6,8,10,12,14"));
  assert_non_null(strstr(text, "adaptive, 8 threads on 32 visible processors: a waiting thread\n"));
  assert_non_null(strstr(text, "1. spins 100000 ns"));
  assert_non_null(strstr(text, "5. parks\n"));
  assert_non_null(strstr(text, cpuexec_resolved_sharing_key(r)));
  char small[16];
  assert_int_equal(cpuexec_resolved_describe(r, CPUEXEC_FORMAT_TEXT, small, sizeof small), n);
  assert_int_equal(strlen(small), sizeof small - 1);
  assert_memory_equal(small, text, sizeof small - 1);
  free(text);
  assert_int_equal(cpuexec_resolved_describe(r, (cpuexec_format)5, small, sizeof small), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "format"));
  cpuexec_resolved_destroy(r);
  cpuexec_topology_destroy(t);
}

/* The node budget of a resolution (cpuexec/policy.h's node_budget): the
 * policy's choice, else CPUEXEC_NODE_BUDGET's, else the cgroup's; the
 * text and the JSON say which and where it came from, and a pool out of
 * the budget or of the host's does not share a key with the others. */
#ifdef _WIN32
#define NODE_KEY(suffix) "" /* no node level there: no key tells pools apart by it */
#else
#define NODE_KEY(suffix) suffix
#endif

static void node_budget_is_resolved_and_described(void **state) {
  (void)state;
  static const struct {
    const char *env, *policy, *line, *key; /* key: the sharing key's suffix, "" none */
  } cases[] = {
#ifdef _WIN32
      {NULL, "num_threads=2", "node budget:           off (none: the pool counts alone; from the node budget is not built for Windows)\n", ""},
#else
      {NULL, "num_threads=2", "node budget:           cgroup (one budget of the cgroup's quota or cpuset for this user's libcpuexec processes in it; from the default)\n", ""},
      {"host", "num_threads=2", "node budget:           host (one budget of the visible processors for all of this user's libcpuexec processes; from CPUEXEC_NODE_BUDGET)\n", ";node=host"},
      {"off", "num_threads=2", "node budget:           off (none: the pool counts alone; from CPUEXEC_NODE_BUDGET)\n", ";node=off"},
      {"sometimes", "num_threads=2", "; from the default (CPUEXEC_NODE_BUDGET is not off, on, cgroup or host))\n", ""},
      {"off", "num_threads=2,node_budget=cgroup", "node budget:           cgroup (one budget of the cgroup's quota or cpuset for this user's libcpuexec processes in it; from the policy's node_budget)\n", ""},
#endif
      {"host", "num_threads=2,node_budget=off", "node budget:           off (none: the pool counts alone; from the policy's node_budget)\n", NODE_KEY(";node=off")},
  };
  cpuexec_topology *t = load_machine(machine_named("2cores.xml"), NULL);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    clear_environment();
    if (cases[i].env) setenv("CPUEXEC_NODE_BUDGET", cases[i].env, 1);
    cpuexec_policy p;
    assert_int_equal(cpuexec_policy_parse(cases[i].policy, &p), 0);
    cpuexec_resolved *r;
    assert_int_equal(cpuexec_policy_resolve(&p, t, &r), 0);
    char text[4096];
    assert_in_range(cpuexec_resolved_describe(r, CPUEXEC_FORMAT_TEXT, text, sizeof text), 1, sizeof text - 1);
    if (!strstr(text, cases[i].line)) fail_msg("case %zu: no \"%s\" in\n%s", i, cases[i].line, text);
    const char *key = cpuexec_resolved_sharing_key(r), *node = strstr(key, ";node=");
    if (cases[i].key[0] ? node == NULL || strcmp(node, cases[i].key) != 0 : node != NULL)
      fail_msg("case %zu: sharing key %s, want the suffix \"%s\"", i, key, cases[i].key);
    /* This process shares no scope yet: nothing to tell. */
    for (size_t d = 0; d < cpuexec_resolved_diagnostic_count(r); d++)
      assert_null(strstr(cpuexec_resolved_diagnostic(r, d), "node_budget"));
    cpuexec_resolved_destroy(r);
  }
  clear_environment();
  /* The JSON: the request names the key only when not the default. */
  cpuexec_policy p;
  assert_int_equal(cpuexec_policy_parse("num_threads=2,node_budget=off", &p), 0);
  cpuexec_resolved *r;
  assert_int_equal(cpuexec_policy_resolve(&p, t, &r), 0);
  char *json = json_of(r);
  assert_non_null(strstr(json, "\"allow_nested_parallelism\":false,\"node_budget\":\"off\"}"));
  assert_non_null(strstr(json, "\"node_budget\":\"off\",\"node_budget_from\":\"the policy's node_budget\""));
  free(json);
  cpuexec_resolved_destroy(r);
  cpuexec_topology_destroy(t);
}

static void references_keep_a_resolution_alive(void **state) {
  (void)state;
  cpuexec_policy p = request(2, NONE);
  cpuexec_resolved *r;
  assert_int_equal(cpuexec_policy_resolve(&p, NULL, &r), 0);
  assert_ptr_equal(cpuexec__resolved_retain(r), r);
  assert_int_equal(atomic_load(&r->refcount), 2);
  cpuexec_resolved_destroy(r);
  /* Still readable: one reference is left. */
  assert_int_equal(cpuexec_resolved_effective_threads(r), 2);
  cpuexec_resolved_destroy(r);
  cpuexec_resolved_destroy(NULL);
}
int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_affinity_policy_on_every_machine),
      cmocka_unit_test(explicit_sets_place_caller_first_on_every_machine),
      cmocka_unit_test(every_validation_rule_on_every_machine),
      cmocka_unit_test(hybrid_performance_cores_use_only_p_cores),
      cmocka_unit_test(physical_cores_prefer_performance_cores),
      cmocka_unit_test(siblings_numbered_apart_are_placed_by_their_cores),
      cmocka_unit_test(a_caller_pinned_by_someone_else_keeps_its_place),
      cmocka_unit_test(a_live_thread_bound_narrower_keeps_its_place),
      cmocka_unit_test(spin_resolves_to_concrete_behaviour),
      cmocka_unit_test(the_text_tells_each_stage_of_a_wait),
      cmocka_unit_test(describe_names_everything_and_truncates_like_snprintf),
      cmocka_unit_test(node_budget_is_resolved_and_described),
      cmocka_unit_test(references_keep_a_resolution_alive),
  };
  return cmocka_run_group_tests_name("resolve", tests, setup_environment, NULL);
}
