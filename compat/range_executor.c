/* The range-executor core and libcpuexec's own range executors
 * (include/cpuexec/compat/range_executor.h). */
#include <cpuexec/compat/range_executor.h>

#include <inttypes.h>
#include <stdatomic.h>

#include <cpuexec/session.h>

#include "adapter_private.h"
#include "violation_private.h"

static int run_serial(void *self, int64_t count, void *ctx, cpuexec_range_fn callback) {
  (void)self;
  return count > 0 ? callback(ctx, 0, count) : 0;
}

/* About one range per participant: the groups of these kernels are coarse
 * (an output row, a retained coordinate) and each callback sets up its own
 * scratch, so fewer, larger ranges win; the executor still balances them. */
static int run_on(cpuexec_executor *exec, int64_t count, void *ctx, cpuexec_range_fn callback) {
  if (count <= 0)
    return 0;
  int32_t threads = exec != NULL ? cpuexec_executor_effective_threads(exec) : 1;
  if (threads <= 1 || cpuexec__compat_nested())
    return callback(ctx, 0, count);
  int64_t grain = count / threads + (count % threads != 0);
  return cpuexec_parallel_for(exec, count, grain, ctx, callback, 0);
}

static int run_installed(void *self, int64_t count, void *ctx, cpuexec_range_fn callback) {
  (void)self;
  return run_on(cpuexec_executor_current(), count, ctx, callback);
}

static int run_executor(void *self, int64_t count, void *ctx, cpuexec_range_fn callback) {
  return run_on(self, count, ctx, callback);
}

CPUEXEC_EXPORT cpuexec_range_executor cpuexec_range_executor_serial(void) {
  return (cpuexec_range_executor){run_serial, NULL};
}

CPUEXEC_EXPORT cpuexec_range_executor cpuexec_range_executor_installed(void) {
  return (cpuexec_range_executor){run_installed, NULL};
}

CPUEXEC_EXPORT cpuexec_range_executor cpuexec_range_executor_of(cpuexec_executor *exec) {
  return (cpuexec_range_executor){run_executor, exec};
}

/* One core call. The callback may run on any thread the executor uses, so
 * the first bounds violation is published by compat/violation_private.h. */
enum { OUT_OF_BOUNDS = CPUEXEC__VIOLATION_RECORDING + 1 };

typedef struct core_call {
  int64_t count;
  void *ctx;
  cpuexec_range_fn callback;
  cpuexec__violation violation;
  /* The first callback failure: 0 none, 1 being recorded, 2 recorded. The
   * executor may be a foreign pool that returns the callback's value as it
   * is, so the core records it itself rather than trust the return. */
  atomic_int failed;
  int failed_value;
} core_call;

static int core_run_range(void *arg, int64_t start, int64_t end) {
  core_call *call = arg;
  if (start < 0 || start > end || end > call->count) {
    cpuexec__violation_record(&call->violation, OUT_OF_BOUNDS, start, end);
    return CPUEXEC_ERANGE;
  }
  if (start == end)
    return 0;
  int rc = cpuexec__compat_call_in_region(call->ctx, call->callback, start, end);
  if (rc != 0) {
    int expected = 0;
    if (atomic_compare_exchange_strong_explicit(&call->failed, &expected, 1, memory_order_relaxed,
                                                memory_order_relaxed)) {
      call->failed_value = rc;
      atomic_store_explicit(&call->failed, 2, memory_order_release);
    }
  }
  return rc;
}

CPUEXEC_EXPORT int cpuexec_range_executor_run(const cpuexec_range_executor *executor, int64_t count, void *ctx,
                                              cpuexec_range_fn callback) {
  if (callback == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "callback: NULL; pass the range callback");
  if (count < 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "count: %" PRId64 " is negative; use 0 or more groups", count);
  if (count == 0)
    return 0;
  if (count == 1 || executor == NULL || executor->run == NULL || cpuexec__compat_nested())
    return cpuexec__callback_rc(cpuexec__compat_run_serial(ctx, callback, 0, count));

  core_call call = {.count = count, .ctx = ctx, .callback = callback};
  cpuexec__violation_init(&call.violation);
  atomic_init(&call.failed, 0);
  int rc = executor->run(executor->self, count, &call, core_run_range);
  int64_t bad_start, bad_end;
  int violation = cpuexec__violation_read(&call.violation, &bad_start, &bad_end);
  if (violation == OUT_OF_BOUNDS)
    return cpuexec__fail(CPUEXEC_ERANGE,
                         "range executor: passed the range [%" PRId64 ", %" PRId64
                         "), outside 0 <= start <= end <= count = %" PRId64,
                         bad_start, bad_end, count);
  if (violation == CPUEXEC__VIOLATION_RECORDING)
    return cpuexec__fail(CPUEXEC_ERANGE,
                         "range executor: passed a range outside [0, %" PRId64
                         ") and returned before that callback did",
                         count);
  /* A conforming executor returns only after every started callback. It
   * returns the callback's value as it is (a foreign pool), our
   * CPUEXEC_ECALLBACK, or its own error, which is kept (a checking
   * wrapper's violation takes precedence over a callback's failure). */
  if (atomic_load_explicit(&call.failed, memory_order_acquire) == 2 &&
      (rc == 0 || rc == call.failed_value || rc == CPUEXEC_ECALLBACK))
    return cpuexec__callback_failed(call.failed_value);
  return rc;
}
