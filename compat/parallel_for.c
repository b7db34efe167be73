/* The legacy free ParallelFor: the installed executor, else the process-wide
 * default pool (cpuexec_registry_default_executor, fork-safe). */
#include <stdint.h>

#include <cpuexec/registry.h>
#include <cpuexec/session.h>

#include "../src/error.h"
#include "parallel_for.h"

typedef struct legacy_call {
  ParallelForFunction fn;
  void *ctx;
} legacy_call;

static int call_legacy(void *arg, int64_t begin, int64_t end) {
  const legacy_call *call = arg;
  call->fn(call->ctx, begin, end);
  return 0;
}

CPUEXEC_EXPORT int ParallelFor(int64_t total, int64_t grain, void *ctx, ParallelForFunction fn) {
  if (!fn) return cpuexec__fail(CPUEXEC_EINVAL, "fn: NULL; pass the range function to run");
  if (grain < 1)
    return cpuexec__fail(CPUEXEC_EINVAL, "grain: %lld is below 1; pass the smallest range worth one call",
                         (long long)grain);
  if (total <= 0) return 0;
  legacy_call call = {fn, ctx};
  cpuexec_executor *exec = cpuexec_current();
  int rc = 0;
  if (!exec) rc = cpuexec_registry_default_executor(&exec);
  if (!exec) {
    /* No pool could be made: the work still runs, on the caller. */
    for (int64_t i = 0; i < total; i += grain) fn(ctx, i, total - i > grain ? i + grain : total);
    return rc;
  }
  return cpuexec_parallel_for(exec, total, grain, &call, call_legacy, 0);
}

CPUEXEC_EXPORT int32_t ParallelForThreadCount(void) {
  cpuexec_executor *exec = cpuexec_current();
  if (!exec) (void)cpuexec_registry_default_executor(&exec);
  return exec ? cpuexec_executor_effective_threads(exec) : 1;
}
