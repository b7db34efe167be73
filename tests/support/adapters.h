/* Tests' support: the adapters' helpers (tests/support/adapters.c): an
 * owned executor, a (worker_id, worker_count) pool like the ones kernel
 * libraries own, coverage records. C only. */
#ifndef CPUEXEC_TESTS_SUPPORT_ADAPTERS_H
#define CPUEXEC_TESTS_SUPPORT_ADAPTERS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <cpuexec.h>
#include <cpuexec/compat/job_pool.h>

/* ---- adapters (tests/support/adapters.c) --------------------------------- */
/* An unshared, unpinned executor of `threads` participants (park immediately, so the
 * tests do not burn the shared CI cores between calls). */
typedef struct test_owned_executor {
  cpuexec_resolved *resolved;
  cpuexec_executor *exec;
} test_owned_executor;

int test_executor_create(uint32_t threads, test_owned_executor *out);
void test_executor_destroy(test_owned_executor *t);

/* A pool of `workers` persistent threads; the caller only waits. run_pool
 * waits for every worker, even after one failed, and returns the first
 * non-zero job result. Reusable for any number of runs. */
typedef struct test_pool test_pool;
test_pool *test_pool_create(uint32_t workers);
void test_pool_destroy(test_pool *pool);
int test_pool_run(void *pool, void *ctx, cpuexec_worker_job_fn job);
cpuexec_job_pool test_pool_as_job_pool(test_pool *pool);

/* Counts, per index, how often a callback covered it, and which threads ran
 * callbacks. */
#define TEST_MAX_RANGES 256
typedef struct test_coverage {
  int64_t count;
  atomic_uint *hits;
  atomic_uint callbacks;
  atomic_uint next_range;
  int64_t range_begin[TEST_MAX_RANGES];
  int64_t range_end[TEST_MAX_RANGES];
  pthread_t range_thread[TEST_MAX_RANGES];
  /* Set by a test whose every admitted participant gets a range: each one
   * then waits in its first range for the others (tests/rendezvous.h), so
   * all of them are observed. */
  int wait_for_all;
  _Atomic uint64_t arrived;
} test_coverage;

void test_coverage_init(test_coverage *c, int64_t count);
void test_coverage_free(test_coverage *c);
/* A cpuexec_range_fn recording [begin, end) into the test_coverage ctx. */
int test_coverage_record(void *ctx, int64_t begin, int64_t end);
/* 1 when every index was covered exactly once. */
int test_coverage_exact(const test_coverage *c);
/* Number of distinct threads among the recorded ranges. */
unsigned test_coverage_threads(const test_coverage *c);

#endif
