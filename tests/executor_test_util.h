/* Shared by the executor tests: resolutions built by hand (the layout of
 * src/resolved.h), so each test states exactly the threads and spin it
 * runs, independent of this machine's topology. */
#ifndef CPUEXEC_TESTS_EXECUTOR_TEST_UTIL_H
#define CPUEXEC_TESTS_EXECUTOR_TEST_UTIL_H

#include <stdlib.h>
#include <string.h>

#include <cpuexec.h>

#include "resolved.h"

static inline cpuexec_resolved *test_resolved_spin(uint32_t threads, cpuexec_spin_policy spin, uint64_t budget) {
  cpuexec_resolved *r = calloc(1, sizeof *r);
  if (!r) abort();
  atomic_init(&r->refcount, 1);
  memset(&r->request, 0, sizeof r->request);
  r->request.num_threads = (int32_t)threads;
  r->request.affinity_policy = CPUEXEC_AFFINITY_NONE;
  r->request.spin_policy = spin;
  r->request.spin_budget = (spin == CPUEXEC_SPIN_FIXED_ITERATIONS || spin == CPUEXEC_SPIN_FIXED_DURATION) ? budget : 0;
  r->effective_threads = threads;
  r->caller_processor = -1;
  r->visible_processors = 2;
  r->spin.policy = spin;
  switch (spin) {
  case CPUEXEC_SPIN_ADAPTIVE:
    r->spin.spin_ns = CPUEXEC__ADAPTIVE_SPIN_NS;
    r->spin.park_when_oversubscribed = true;
    r->spin.cadence_burn_permille = CPUEXEC__CADENCE_BURN_PERMILLE;
    break;
  case CPUEXEC_SPIN_FIXED_DURATION:
    r->spin.spin_ns = budget;
    break;
  case CPUEXEC_SPIN_FIXED_ITERATIONS:
    r->spin.spin_iterations = budget;
    break;
  case CPUEXEC_SPIN_PARK_IMMEDIATELY:
    break;
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

#endif
