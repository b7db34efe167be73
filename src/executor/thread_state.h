/* Internal: what libcpuexec knows about the running thread.
 *
 * Written only by the thread it describes, so no field needs atomics, and
 * only through the region primitive (src/executor/participant.h): participants set
 * the region fields around callbacks, scopes set installed. Everything else
 * reads it: cpuexec_executor_current(), cpuexec_participant_index/count(), the
 * adapters' nesting test, and the OMPT tool, which reads callback_depth and
 * installed to attribute OpenMP regions without taking a lock. */
#ifndef CPUEXEC_SRC_THREAD_STATE_H
#define CPUEXEC_SRC_THREAD_STATE_H

#include <cpuexec/executor.h>

typedef struct cpuexec__thread_state {
  /* The executor cpuexec_executor_current() returns: set by scopes on the thread that
   * entered them, and by the executor on every participant for the length
   * of a region (so a nested call sees the region's executor). */
  cpuexec_executor *installed;
  /* > 0 while this thread runs a libcpuexec callback (any executor, any
   * adapter). A parallel call made with depth > 0 runs inline. */
  uint32_t callback_depth;
  /* The running region's participant index and count (0 and 1 outside). */
  uint32_t participant_index;
  uint32_t participant_count;
  /* How many registered hooks the thread's outermost region began (0
   * outside any region): before_callback and end run exactly those. */
  uint32_t hooks_begun;
} cpuexec__thread_state;

/* initial-exec: every dispatch reads this on every participant; the default
 * model for a shared library would make each access a __tls_get_addr call.
 * The block is 24 bytes, well inside glibc's static TLS reserve, so the
 * library can still be dlopen()ed. */
extern __thread cpuexec__thread_state cpuexec__tls __attribute__((tls_model("initial-exec")));

#endif
