/* Processor groups (issue 23): Windows puts at most 64 logical processors
 * in a group, and the library's processor id is hwloc's, group * 64 +
 * number in the group. A stored machine of two groups of 48
 * (tests/data/topologies/windows-2groups.xml: P#0-47 and P#64-111) proves
 * on any machine that resolution, placement and the report work across
 * groups: the ids of group 1 resolve and map to (1, number); the topology
 * text names the groups on the windows backend; and a pool pinned on group
 * 1 either runs (on a machine that has it) or is refused naming the
 * processor (where the live machine has no such processor). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_util.h"

#include <cpuexec.h>

#include "os/os.h"

#define MACHINE TOP_SRCDIR "/tests/data/topologies/windows-2groups.xml"

static cpuexec_topology *two_groups(void) {
  cpuexec_topology *t = NULL;
  assert_int_equal(cpuexec_topology_load_xml(MACHINE, NULL, &t), 0);
  return t;
}

static cpuexec_resolved *resolve_text(const char *text, const cpuexec_topology *t) {
  cpuexec_policy p;
  assert_int_equal(cpuexec_policy_parse(text, &p), 0);
  cpuexec_resolved *r = NULL;
  if (cpuexec_policy_resolve(&p, t, &r) != 0) fail_msg("%s: %s", text, cpuexec_error_message());
  return r;
}

static void the_machine_has_two_groups_of_48(void **state) {
  (void)state;
  cpuexec_topology *t = two_groups();
  assert_int_equal(cpuexec_topology_processor_count(t), 96);
  assert_int_equal(cpuexec_topology_core_count(t), 48);
  uint32_t in_group[2] = {0, 0};
  for (uint32_t i = 0; i < (uint32_t)cpuexec_topology_processor_count(t); i++) {
    int32_t id = cpuexec_topology_processor_id(t, i);
    uint16_t group = cpuexec__os_group_of(id);
    assert_true(group < 2);
    assert_true(cpuexec__os_number_in_group(id) < 48);
    assert_int_equal(group * CPUEXEC__OS_GROUP_WIDTH + cpuexec__os_number_in_group(id), id);
    in_group[group]++;
  }
  assert_int_equal(in_group[0], 48);
  assert_int_equal(in_group[1], 48);
  cpuexec_topology_destroy(t);
}

/* physical_cores on all 48 cores: one processor per core, half of them in
 * group 1, each worker's id naming its group and number. */
static void physical_cores_resolve_across_both_groups(void **state) {
  (void)state;
  cpuexec_topology *t = two_groups();
  cpuexec_resolved *r = resolve_text("affinity_policy=physical_cores", t);
  assert_int_equal(cpuexec_resolved_effective_threads(r), 48);
  assert_int_equal(cpuexec_resolved_caller_processor(r), -1); /* the caller stays free; core 0 is its */
  int32_t count = 0;
  const int32_t *workers = cpuexec_resolved_worker_processors(r, &count);
  assert_int_equal(count, 47);
  uint32_t in_group[2] = {0, 0};
  for (int32_t k = 0; k < count; k++) {
    uint16_t group = cpuexec__os_group_of(workers[k]);
    assert_true(group < 2);
    in_group[group]++;
  }
  assert_int_equal(in_group[0], 23); /* the caller has core 0 */
  assert_int_equal(in_group[1], 24);
  cpuexec_resolved_destroy(r);
  /* The text names the ids as they are (P#64-111 for group 1). */
  char text[8192];
  r = resolve_text("affinity_policy=physical_cores", t);
  assert_true(cpuexec_resolved_describe(r, CPUEXEC_FORMAT_TEXT, text, sizeof text) > 0);
  assert_non_null(strstr(text, "110"));
  cpuexec_resolved_destroy(r);
  cpuexec_topology_destroy(t);
}

/* An explicit set in group 1: the caller on P#70 (group 1, number 6). */
static void an_explicit_set_in_group_1_resolves(void **state) {
  (void)state;
  cpuexec_topology *t = two_groups();
  cpuexec_resolved *r = resolve_text("num_threads=3,affinity_policy=explicit,cpu_set=70,5,111", t);
  assert_int_equal(cpuexec_resolved_caller_processor(r), 70);
  assert_int_equal(cpuexec__os_group_of(70), 1);
  assert_int_equal(cpuexec__os_number_in_group(70), 6);
  int32_t count = 0;
  const int32_t *workers = cpuexec_resolved_worker_processors(r, &count);
  assert_int_equal(count, 2);
  assert_int_equal(workers[0], 5);
  assert_int_equal(workers[1], 111);
  cpuexec_resolved_destroy(r);
  cpuexec_topology_destroy(t);
}

/* The topology's text names the groups where the OS has them. */
static void the_report_names_the_groups_on_windows(void **state) {
  (void)state;
  cpuexec_topology *t = two_groups();
  char text[16384];
  assert_true(cpuexec_topology_describe(t, CPUEXEC_FORMAT_TEXT, text, sizeof text) > 0);
  if (cpuexec__os_has_processor_groups())
    assert_non_null(strstr(text, "processor groups:      2 (group 0: 0-47; group 1: 64-111)"));
  else
    assert_null(strstr(text, "processor groups:"));
  assert_non_null(strstr(text, "visible processors:    0-47,64-111"));
  cpuexec_topology_destroy(t);
}

/* A pool with a worker pinned on group 1: the OS pin goes to (group 1,
 * number 0). Where this machine has P#64 the pool runs; where it has not
 * (a CI machine, wine), creation is refused naming the processor; where the
 * backend cannot pin, as unsupported. */
static int count_range(void *ctx, int64_t begin, int64_t end) {
  *(_Atomic int64_t *)ctx += end - begin;
  return 0;
}

static void a_worker_pinned_in_group_1_runs_or_is_refused_by_name(void **state) {
  (void)state;
  cpuexec_topology *t = two_groups();
  cpuexec_resolved *r = resolve_text("num_threads=2,affinity_policy=explicit,cpu_set=0,64", t);
  cpuexec_executor *exec = NULL;
  int rc = cpuexec_executor_create(r, &exec);
  cpuexec__os_cpus live;
  bool have_64 = cpuexec__os_process_cpus(&live) && cpuexec__os_cpus_has(&live, 0) && cpuexec__os_cpus_has(&live, 64);
  if (!cpuexec__os_has_affinity()) {
    assert_int_equal(rc, CPUEXEC_ENOTSUP);
  } else if (have_64) {
    assert_int_equal(rc, 0);
    _Atomic int64_t n = 0;
    assert_int_equal(cpuexec_parallel_for(exec, 1000, 1, &n, count_range, 0), 0);
    assert_int_equal(n, 1000);
    cpuexec_executor_release(exec);
  } else {
    assert_int_not_equal(rc, 0);
    assert_null(exec);
    assert_non_null(strstr(cpuexec_error_message(), "processor 64"));
  }
  cpuexec_resolved_destroy(r);
  cpuexec_topology_destroy(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_machine_has_two_groups_of_48),
      cmocka_unit_test(physical_cores_resolve_across_both_groups),
      cmocka_unit_test(an_explicit_set_in_group_1_resolves),
      cmocka_unit_test(the_report_names_the_groups_on_windows),
      cmocka_unit_test(a_worker_pinned_in_group_1_runs_or_is_refused_by_name),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
