/* A foreign pool for the tests: plain pthreads, written the way an
 * application's own pool would be, wrapped as a libcpuexec executor
 * (include/cpuexec/foreign.h).
 *
 * A pool of `threads` runs threads - 1 persistent workers; a run of count
 * indices runs index 0 on the calling thread and index k on worker k (k <
 * count), waits for all of them and returns the first non-zero result. One
 * run at a time (a mutex serializes callers). Tests check participant
 * identity against foreign_pool_index_of_self(). */
#ifndef CPUEXEC_TESTS_FOREIGN_POOL_H
#define CPUEXEC_TESTS_FOREIGN_POOL_H

#include <stdint.h>

#include <cpuexec.h>

typedef struct foreign_pool foreign_pool;

foreign_pool *foreign_pool_create(uint32_t threads);
void foreign_pool_destroy(foreign_pool *pool);
/* cpuexec_foreign_executor_ops.run_ranges for a foreign_pool. */
int foreign_pool_run_ranges(void *pool, int64_t count, void *arg, cpuexec_range_fn fn);
/* The index this thread runs in the pool's current run: k on worker k, 0 on
 * the thread inside foreign_pool_run_ranges, -1 on any other thread. */
int foreign_pool_index_of_self(foreign_pool *pool);
/* Runs so far. */
uint64_t foreign_pool_runs(foreign_pool *pool);
/* The pool wrapped as an executor of `threads` participants, NULL on error. */
cpuexec_executor *foreign_pool_executor(foreign_pool *pool);

#endif
