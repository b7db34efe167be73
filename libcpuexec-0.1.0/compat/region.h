/* Internal to the compat adapters: the region scope every adapter callback
 * runs in.
 *
 * A callback the adapters run themselves (the serial paths) raises the
 * thread's callback depth, the one the executor keeps for its own callbacks
 * (src/thread_state.h), so nested libcpuexec calls see they are nested and
 * run inline, and the OMPT tool attributes OpenMP regions to the callback.
 * At depth 0 it also applies the OpenMP inline guard, as the executor does
 * on its participants, so an OpenMP region inside a serial block is kept to
 * one thread as it would be inside a parallel one. The adapters wrap the
 * callbacks the executor runs for them the same way: on a participant the
 * executor has already raised the depth and applied the guard, so this only
 * raises the depth once more; on a thread of a foreign pool (a job-pool
 * range executor) it gives that thread the same region scope. The depth is
 * thread-local: only the running thread reads or writes it. */
#ifndef CPUEXEC_COMPAT_REGION_H
#define CPUEXEC_COMPAT_REGION_H

#include "src/openmp_guard.h"
#include "src/thread_state.h"

/* True inside any libcpuexec callback on this thread: parallel adapters run
 * one block inline. */
static inline bool cpuexec__compat_nested(void) { return cpuexec__tls.callback_depth > 0; }

/* Runs fn(ctx, begin, end) on the calling thread inside a region scope and
 * returns what fn returned. */
static inline int cpuexec__compat_call_inline(void *ctx, cpuexec_range_fn fn, int64_t begin, int64_t end) {
  if (cpuexec__tls.callback_depth > 0) {
    cpuexec__tls.callback_depth++;
    int rc = fn(ctx, begin, end);
    cpuexec__tls.callback_depth--;
    return rc;
  }
  cpuexec__openmp_saved saved;
  cpuexec__openmp_guard_begin(&saved);
  cpuexec__openmp_guard_callback();
  cpuexec__tls.callback_depth = 1;
  int rc = fn(ctx, begin, end);
  cpuexec__tls.callback_depth = 0;
  cpuexec__openmp_guard_end(&saved);
  return rc;
}

#endif
