/* The process default never fails for a topology hwloc cannot load or a
 * malformed cgroup cpu.max: resolutions without a topology fall back and
 * say so; explicit loads still fail (issue 13, seed 000 S000-5). Driven
 * with the topology's test hooks (src/topology/topology_internal.h), then
 * cpuexec_topology_refresh(). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support/portable.h"

#include <cpuexec.h>

#include "os/os.h"
#include "topology/topology_internal.h"

#define FIXTURE TOP_SRCDIR "/tests/data/topologies/bad-cpu-max/"

static const char *diagnostic_with(const cpuexec_resolved *r, const char *text) {
  for (size_t i = 0; i < cpuexec_resolved_diagnostic_count(r); i++)
    if (strstr(cpuexec_resolved_diagnostic(r, i), text)) return cpuexec_resolved_diagnostic(r, i);
  return NULL;
}

static int restore(void **state) {
  (void)state;
  atomic_store(&cpuexec__test_hwloc_load_fails, 0);
  atomic_store(&cpuexec__test_process_options, NULL);
  return cpuexec_topology_refresh();
}

static void hwloc_failure_falls_back_to_the_affinity_set(void **state) {
  (void)state;
  /* The set the OS layer reports (Linux: sched_getaffinity), or none
   * (posix): then the fallback is serial. */
  cpuexec__os_cpus set;
  bool have_set = cpuexec__os_process_cpus(&set);
  atomic_store(&cpuexec__test_hwloc_load_fails, 1);
  assert_int_equal(cpuexec_topology_refresh(), 0);

  cpuexec_resolved *r = NULL;
  assert_int_equal(cpuexec_policy_resolve(NULL, NULL, &r), 0);
  const char *d = diagnostic_with(r, "topology fallback:");
  assert_non_null(d);
  if (have_set)
    assert_non_null(strstr(d, cpuexec__os_process_cpus_source()));
  else
    assert_non_null(strstr(d, "serial (no CPU set either)"));
  assert_non_null(strstr(d, "hwloc could not load"));
  /* physical_cores default: one participant per processor of the set. */
  assert_int_equal(cpuexec_resolved_effective_threads(r), have_set ? (uint32_t)cpuexec__os_cpus_count(&set) : 1u);
  cpuexec_resolved_destroy(r);

  /* The default follows the refresh, and a default session can be made. */
  const cpuexec_resolved *def;
  assert_int_equal(cpuexec_policy_resolve_default(&def), 0);
  assert_non_null(diagnostic_with(def, "topology fallback:"));
  cpuexec_session *s;
  assert_int_equal(cpuexec_session_create(NULL, &s), 0);
  cpuexec_session_destroy(s);

  /* An explicit load still fails. */
  cpuexec_topology *t = NULL;
  assert_int_equal(cpuexec_topology_load(NULL, &t), CPUEXEC_ETOPOLOGY);
  assert_null(t);

  assert_int_equal(restore(NULL), 0);
  assert_int_equal(cpuexec_policy_resolve(NULL, NULL, &r), 0);
  assert_null(diagnostic_with(r, "topology fallback:"));
  cpuexec_resolved_destroy(r);
  assert_int_equal(cpuexec_policy_resolve_default(&def), 0);
  assert_null(diagnostic_with(def, "topology fallback:"));
}

static void malformed_cpu_max_is_ignored_by_the_default_only(void **state) {
  (void)state;
  static cpuexec_topology_options o;
  cpuexec_topology_options_init(&o);
  o.cgroup_root = FIXTURE "cgroup";
  o.proc_self_cgroup = FIXTURE "proc-self-cgroup";
  atomic_store(&cpuexec__test_process_options, &o);
  assert_int_equal(cpuexec_topology_refresh(), 0);

  cpuexec_resolved *r = NULL;
  assert_int_equal(cpuexec_policy_resolve(NULL, NULL, &r), 0);
  const char *d = diagnostic_with(r, "cgroup quota ignored:");
  assert_non_null(d);
  assert_non_null(strstr(d, "fifty 100000"));
  cpuexec_resolved_destroy(r);
  cpuexec_session *s;
  assert_int_equal(cpuexec_session_create(NULL, &s), 0);
  cpuexec_session_destroy(s);

  cpuexec_topology *t = NULL;
  assert_int_equal(cpuexec_topology_load(&o, &t), CPUEXEC_ETOPOLOGY);
  assert_non_null(strstr(cpuexec_error_message(), "cpu.max"));
  assert_null(t);
  assert_int_equal(restore(NULL), 0);
}

int main(void) {
  unsetenv("CPUEXEC_POLICY");
  unsetenv("CPUEXEC_NUM_THREADS");
  unsetenv("OMP_NUM_THREADS");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(hwloc_failure_falls_back_to_the_affinity_set, restore),
      cmocka_unit_test_teardown(malformed_cpu_max_is_ignored_by_the_default_only, restore),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
