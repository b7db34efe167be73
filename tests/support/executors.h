/* Tests' support: executors from stored topologies: resolutions made by
 * cpuexec_policy_resolve() on tests/data/topologies/2cores.xml, so tests
 * never restate the resolution's rules. C and C++; TOP_SRCDIR comes from
 * test_cppflags. */
#ifndef CPUEXEC_TESTS_SUPPORT_EXECUTORS_H
#define CPUEXEC_TESTS_SUPPORT_EXECUTORS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cpuexec.h>

/* ---- executors from stored topologies ------------------------------------ */
/* The stored machines (tests/data/topologies/README). */
#define TEST_TOPOLOGIES TOP_SRCDIR "/tests/data/topologies/"

/* The resolution of num_threads=threads, affinity none and the given spin
 * on the stored 2-core machine: the executor tests' standard resolution,
 * independent of this machine's topology. Aborts when it fails. */
static inline cpuexec_resolved *test_resolved_spin(uint32_t threads, cpuexec_spin_policy spin, uint64_t budget) {
  cpuexec_topology_options o;
  cpuexec_topology_options_init(&o);
  cpuexec_topology *t = NULL;
  if (cpuexec_topology_load_xml(TEST_TOPOLOGIES "2cores.xml", &o, &t) != 0) {
    fprintf(stderr, "test_resolved_spin: %s\n", cpuexec_error_message());
    abort();
  }
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = (int32_t)threads;
  p.affinity_policy = CPUEXEC_AFFINITY_NONE;
  p.spin_policy = spin;
  p.spin_budget = (spin == CPUEXEC_SPIN_FIXED_ITERATIONS || spin == CPUEXEC_SPIN_FIXED_DURATION) ? budget : 0;
  cpuexec_resolved *r = NULL;
  int rc = cpuexec_policy_resolve(&p, t, &r);
  cpuexec_topology_destroy(t);
  if (rc != 0) {
    fprintf(stderr, "test_resolved_spin: %s\n", cpuexec_error_message());
    abort();
  }
  return r;
}

static inline cpuexec_resolved *test_resolved(uint32_t threads) {
  return test_resolved_spin(threads, CPUEXEC_SPIN_ADAPTIVE, 0);
}

/* An executor for a resolution it alone keeps (the test's reference is dropped). */
static inline cpuexec_executor *test_executor_spin(uint32_t threads, cpuexec_spin_policy spin, uint64_t budget) {
  cpuexec_resolved *r = test_resolved_spin(threads, spin, budget);
  cpuexec_executor *exec = NULL;
  int rc = cpuexec_executor_create(r, &exec);
  cpuexec_resolved_destroy(r);
  if (rc != 0) abort();
  return exec;
}

static inline cpuexec_executor *test_executor(uint32_t threads) {
  return test_executor_spin(threads, CPUEXEC_SPIN_ADAPTIVE, 0);
}

/* A session of its own pool on the standard resolution (test_resolved):
 * the adapters' tests run the libraries inside it. Aborts when it fails. */
static inline cpuexec_session *test_session(uint32_t threads) {
  cpuexec_resolved *r = test_resolved(threads);
  cpuexec_session_options o;
  cpuexec_session_options_init(&o);
  o.resolved = r;
  cpuexec_session *s = NULL;
  int rc = cpuexec_session_create_with_options(&o, &s);
  cpuexec_resolved_destroy(r);
  if (rc != 0) {
    fprintf(stderr, "test_session: %s\n", cpuexec_error_message());
    abort();
  }
  return s;
}

#endif
