/* Tests' support, white-box (tests/whitebox/, with $(whitebox_cppflags)):
 * the stored machines, what their defaults resolve to, and fixtures that
 * read the resolution's and the topology's layout. C only. */
#ifndef CPUEXEC_TESTS_SUPPORT_RESOLVE_FIXTURES_H
#define CPUEXEC_TESTS_SUPPORT_RESOLVE_FIXTURES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cpuexec.h>

#include "portable.h"

#include "executors.h"

/* ---- resolve fixtures ----------------------------------------------------- */
#include "resolve/resolved.h"
#include "topology/topology_internal.h"

#define TOPOLOGIES TEST_TOPOLOGIES

#define NONE CPUEXEC_AFFINITY_NONE
#define PHYS CPUEXEC_AFFINITY_PHYSICAL_CORES
#define PERF CPUEXEC_AFFINITY_PERFORMANCE_CORES
#define SMT CPUEXEC_AFFINITY_PHYSICAL_THEN_SMT
#define EXPLICIT CPUEXEC_AFFINITY_EXPLICIT

/* The stored machines and what their default resolves to. */
static const struct machine {
  const char *dir_or_file; /* a directory is a cgroup fixture holding topology.xml */
  bool fixture;
  uint32_t default_threads;
} machines[] = {
    {"2cores.xml", false, 2},
    {"1core.xml", false, 1},
    {"8cores-smt2.xml", false, 8},
    {"2packages-8cores-smt2.xml", false, 16},
    {"hybrid-8p-smt2-16e.xml", false, 8}, /* performance cores only */
    {"smt4.xml", false, 4},
    {"restricted-siblings.xml", false, 4},
    {"quota-1.5", true, 2}, /* 4 cores capped by ceil(1.5) */
    /* SMT siblings numbered apart (i and i + 8), as most x86 servers do:
     * a core computed as id / 2 would be wrong on every one. */
    {"8cores-smt2-siblings-apart.xml", false, 8},
    /* E-cores first in hwloc order, then two P-cores: only a placement
     * that ranks kinds puts the P-cores first. */
    {"hybrid-4e-first-2p.xml", false, 2},
};
#define MACHINES (sizeof machines / sizeof machines[0])

static inline cpuexec_topology *load_machine(const struct machine *m, const char *caller_cpulist) {
  cpuexec_topology_options o;
  cpuexec_topology_options_init(&o);
  o.caller_cpulist = caller_cpulist;
  char xml[512], proc[512], root[512];
  if (m->fixture) {
    snprintf(xml, sizeof xml, TOPOLOGIES "%s/topology.xml", m->dir_or_file);
    snprintf(proc, sizeof proc, TOPOLOGIES "%s/proc-self-cgroup", m->dir_or_file);
    snprintf(root, sizeof root, TOPOLOGIES "%s/cgroup", m->dir_or_file);
    o.proc_self_cgroup = proc;
    o.cgroup_root = root;
  } else {
    snprintf(xml, sizeof xml, TOPOLOGIES "%s", m->dir_or_file);
  }
  cpuexec_topology *t = NULL;
  if (cpuexec_topology_load_xml(xml, &o, &t) != 0)
    fail_msg("%s: %s", m->dir_or_file, cpuexec_error_message());
  return t;
}

static inline const struct machine *machine_named(const char *name) {
  for (size_t i = 0; i < MACHINES; i++)
    if (strcmp(machines[i].dir_or_file, name) == 0)
      return &machines[i];
  fail_msg("no machine %s", name);
  return NULL;
}

static inline cpuexec_policy request(int32_t threads, cpuexec_affinity_policy affinity) {
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = threads;
  p.affinity_policy = affinity;
  return p;
}

static inline void clear_environment(void) {
  unsetenv("CPUEXEC_NUM_THREADS");
  unsetenv("OMP_NUM_THREADS");
  unsetenv("CPUEXEC_POLICY");
  unsetenv("CPUEXEC_NODE_BUDGET");
}

static inline int setup_environment(void **state) {
  (void)state;
  clear_environment();
  return 0;
}

static inline const cpuexec__processor *find(const cpuexec_topology *t, int32_t id) {
  for (uint32_t i = 0; i < t->processor_count; i++)
    if (t->processors[i].os_index == id)
      return &t->processors[i];
  return NULL;
}

static inline const cpuexec__processor *proc(const cpuexec_topology *t, int32_t id) {
  const cpuexec__processor *p = find(t, id);
  if (p == NULL)
    fail_msg("processor %d is not visible", (int)id);
  return p;
}

static inline bool has_diagnostic(const cpuexec_resolved *r, const char *needle) {
  for (size_t i = 0; i < cpuexec_resolved_diagnostic_count(r); i++)
    if (strstr(cpuexec_resolved_diagnostic(r, i), needle) != NULL)
      return true;
  return false;
}

static inline char *json_of(const cpuexec_resolved *r) {
  int n = cpuexec_resolved_describe(r, CPUEXEC_FORMAT_JSON, NULL, 0);
  assert_true(n > 0);
  char *text = malloc((size_t)n + 1);
  assert_int_equal(cpuexec_resolved_describe(r, CPUEXEC_FORMAT_JSON, text, (size_t)n + 1), n);
  return text;
}

#endif
