/* The checking range executor (cpuexec_range_executor_checking() in
 * include/cpuexec/compat/range_executor.h): for tests and debugging of executors written by
 * others. It costs O(count) memory and a pass over every index, which is why
 * the core does not do it. */
#include <cpuexec/compat/range_executor.h>

#include <inttypes.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "violation_private.h"
#include "adapter_private.h"

enum { CHECK_OUT_OF_BOUNDS = CPUEXEC__VIOLATION_RECORDING + 1, CHECK_OVERLAP };

/* One checked call, on the caller's stack. Callbacks may run on any thread:
 *   - seen[i] is set by exchange, so exactly one callback sees it unset;
 *   - in_flight counts callbacks between entry and exit (acq_rel), so the
 *     caller, after the inner executor returns, knows whether any is still
 *     running and waits for it before the frame goes away;
 *   - the first violation is published like the core's (compat/violation_private.h). */
typedef struct check_call {
  int64_t count;
  void *ctx;
  cpuexec_range_fn callback;
  atomic_uchar *seen; /* NULL unless verify_coverage */
  atomic_uint in_flight;
  cpuexec__violation violation;
} check_call;

static void record(check_call *call, int kind, int64_t start, int64_t end) {
  cpuexec__violation_record(&call->violation, kind, start, end);
}

static int check_range(check_call *call, int64_t start, int64_t end) {
  if (start < 0 || start > end || end > call->count) {
    record(call, CHECK_OUT_OF_BOUNDS, start, end);
    return CPUEXEC_ERANGE;
  }
  if (call->seen != NULL) {
    for (int64_t i = start; i < end; i++) {
      if (atomic_exchange_explicit(&call->seen[i], 1, memory_order_relaxed) != 0) {
        record(call, CHECK_OVERLAP, i, end);
        return CPUEXEC_ERANGE;
      }
    }
  }
  return call->callback(call->ctx, start, end);
}

static int check_run_range(void *arg, int64_t start, int64_t end) {
  check_call *call = arg;
  atomic_fetch_add_explicit(&call->in_flight, 1, memory_order_acq_rel);
  int rc = check_range(call, start, end);
  atomic_fetch_sub_explicit(&call->in_flight, 1, memory_order_acq_rel);
  return rc;
}

static int report(const check_call *call, int kind, int64_t start, int64_t end) {
  if (kind == CHECK_OUT_OF_BOUNDS)
    return cpuexec__fail(CPUEXEC_ERANGE,
                         "range executor: passed the range [%" PRId64 ", %" PRId64
                         "), outside 0 <= start <= end <= count = %" PRId64,
                         start, end, call->count);
  return cpuexec__fail(CPUEXEC_ERANGE,
                       "range executor: index %" PRId64 " passed twice (again in a range ending at %" PRId64
                       "); ranges must be disjoint",
                       start, end);
}

static int check_run(void *self, int64_t count, void *ctx, cpuexec_range_fn callback) {
  const cpuexec_range_checker *checker = self;
  if (checker == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "checker: NULL; pass a cpuexec_range_checker to cpuexec_range_executor_checking()");
  if (count <= 0)
    return 0;
  check_call call = {.count = count, .ctx = ctx, .callback = callback, .seen = NULL};
  atomic_init(&call.in_flight, 0);
  cpuexec__violation_init(&call.violation);
  if (checker->verify_coverage) {
    if ((uint64_t)count > SIZE_MAX || (call.seen = calloc((size_t)count, sizeof *call.seen)) == NULL)
      return cpuexec__fail(CPUEXEC_ENOMEM, "verify_coverage: no memory for a map of %" PRId64 " indices", count);
  }

  int rc = checker->inner.run != NULL ? checker->inner.run(checker->inner.self, count, &call, check_run_range)
                                      : check_run_range(&call, 0, count);

  bool returned_early = atomic_load_explicit(&call.in_flight, memory_order_acquire) != 0;
  while (atomic_load_explicit(&call.in_flight, memory_order_acquire) != 0)
    sched_yield();
  int64_t bad_start, bad_end;
  int kind = cpuexec__violation_read(&call.violation, &bad_start, &bad_end);
  int64_t uncovered = -1;
  if (call.seen != NULL && kind == CPUEXEC__VIOLATION_NONE && rc == 0) {
    for (int64_t i = 0; i < count && uncovered < 0; i++)
      if (atomic_load_explicit(&call.seen[i], memory_order_relaxed) == 0)
        uncovered = i;
  }
  free(call.seen);

  if (kind != CPUEXEC__VIOLATION_NONE)
    return report(&call, kind, bad_start, bad_end);
  if (returned_early)
    return cpuexec__fail(CPUEXEC_ESTATE, "range executor: returned while callbacks were still running; it "
                                         "must wait for every started callback");
  if (uncovered >= 0)
    return cpuexec__fail(CPUEXEC_ERANGE,
                         "range executor: index %" PRId64 " of [0, %" PRId64
                         ") was not covered and no callback failed",
                         uncovered, count);
  return rc;
}

CPUEXEC_EXPORT cpuexec_range_executor cpuexec_range_executor_checking(cpuexec_range_checker *checker,
                                                                      cpuexec_range_executor inner,
                                                                      bool verify_coverage) {
  if (checker == NULL) /* the executor it returns fails each run with CPUEXEC_EINVAL */
    return (cpuexec_range_executor){check_run, NULL};
  checker->inner = inner;
  checker->verify_coverage = verify_coverage;
  return (cpuexec_range_executor){check_run, checker};
}
