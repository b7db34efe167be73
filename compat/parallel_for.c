/* The legacy free ParallelFor: the installed executor, else the process-wide
 * default pool (cpuexec_registry_default_executor, fork-safe, retried after
 * a failed start). A legacy call site ignores the return code, so the loop
 * always runs: on the caller when no pool can run it. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <cpuexec/registry.h>
#include <cpuexec/session.h>

#include "adapter_private.h"
#include <cpuexec/compat/parallel_for.h>

typedef struct legacy_call {
  ParallelForFunction fn;
  void *ctx;
} legacy_call;

static int call_legacy(void *arg, int64_t begin, int64_t end) {
  const legacy_call *call = arg;
  call->fn(call->ctx, begin, end);
  return 0;
}

typedef struct serial_call {
  const legacy_call *call;
  int64_t grain;
} serial_call;

static int serial_chunks(void *arg, int64_t begin, int64_t end) {
  const serial_call *sc = arg;
  for (int64_t i = begin; i < end; i += sc->grain)
    sc->call->fn(sc->call->ctx, i, end - i > sc->grain ? i + sc->grain : end);
  return 0;
}

/* The serial loop on the caller, one grain at a time, inside a region scope
 * (an executor-less cpuexec_parallel_for) so nested calls stay inline. */
static void serial_legacy(int64_t total, int64_t grain, const legacy_call *call) {
  serial_call sc = {call, grain};
  (void)cpuexec_parallel_for(NULL, total, total, &sc, serial_chunks, 1);
}

/* Prints msg once per process: what ParallelFor adjusted on its own would
 * otherwise go unseen at a call site that ignores the return code. */
static void warn_once(atomic_bool *said, const char *msg) {
  if (!atomic_exchange_explicit(said, true, memory_order_relaxed)) fprintf(stderr, "libcpuexec: %s\n", msg);
}

CPUEXEC_EXPORT int ParallelFor(int64_t total, int64_t grain, void *ctx, ParallelForFunction fn) {
  if (!fn) return cpuexec__fail(CPUEXEC_EINVAL, "fn: NULL; pass the range function to run");
  if (grain < 1) {
    /* Skipping the loop would lose the work silently: the smallest grain. */
    static atomic_bool said;
    warn_once(&said, "ParallelFor: a grain of 0 or below is treated as 1 (the smallest range)");
    grain = 1;
  }
  if (total <= 0) return 0;
  legacy_call call = {fn, ctx};
  cpuexec_executor *exec = cpuexec_executor_current();
  int rc = 0;
  if (!exec) rc = cpuexec_registry_default_executor(&exec);
  if (!exec) {
    /* No pool could be made: the work still runs, on the caller. */
    serial_legacy(total, grain, &call);
    return rc;
  }
  rc = cpuexec_parallel_for(exec, total, grain, &call, call_legacy, 0);
  if (rc == CPUEXEC_EFORKED) {
    /* An executor inherited across fork() runs nothing (its workers stayed
     * in the parent): run the loop here and say it could not run there. */
    serial_legacy(total, grain, &call);
    return cpuexec__fail(CPUEXEC_EFORKED,
                         "ParallelFor: the installed executor was inherited across fork(); the loop ran serially "
                         "(install an executor created in the child)");
  }
  return rc;
}

CPUEXEC_EXPORT int ParallelForRequiringExecutor(const char *kernel, int64_t total, int64_t grain, void *ctx,
                                                ParallelForFunction fn) {
  if (!fn) return cpuexec__fail(CPUEXEC_EINVAL, "fn: NULL; pass the range function to run");
  cpuexec_executor *exec;
  int rc = cpuexec_kernel_executor(kernel, CPUEXEC_EXECUTOR_REQUIRED, &exec);
  return rc != 0 ? rc : ParallelFor(total, grain, ctx, fn);
}

CPUEXEC_EXPORT int32_t ParallelForThreadCount(void) {
  cpuexec_executor *exec = cpuexec_executor_current();
  if (!exec) (void)cpuexec_registry_default_executor(&exec);
  return exec ? cpuexec_executor_effective_threads(exec) : 1;
}
