/** @file cxx/capi.hpp
 * cpuexec.hpp's layer over the C calls whose shape the C API may still
 * change: those taking callbacks (argument order, what a callback's value
 * becomes) and thread counts (int32_t in C++). The other C calls of the C++
 * interface are one-line direct calls. Internal: include cpuexec.hpp. */
#ifndef CPUEXEC_CXX_CAPI_HPP
#define CPUEXEC_CXX_CAPI_HPP

#include <cpuexec.h>
#include <cpuexec/compat/job_pool.h>
#include <cpuexec/compat/range_executor.h>
#include <cpuexec/compat/ranges.h>

#include <cstdint>

namespace cpuexec {
namespace detail {

/** The C calls this header makes, in one place: adapting to a change of the
 * C API's argument order or types is done here only. Participant counts are
 * int32_t in C++; a negative one is rejected here. */
namespace capi {

/** A thread count from the C API, as the C++ interface gives it (int32_t). */
inline int32_t threads(int32_t n) noexcept { return n; }
/** A participant count for the C API; false when it is negative. */
inline bool count(int32_t n, uint32_t *out) noexcept {
  *out = static_cast<uint32_t>(n);
  return n >= 0;
}
inline int parallel_for(cpuexec_executor *exec, int64_t total, int64_t grain, uint32_t max_participants, void *ctx,
                        cpuexec_range_fn fn) noexcept {
  return cpuexec_parallel_for(exec, total, grain, ctx, fn, static_cast<int32_t>(max_participants));
}
inline int parallel_for_costed(cpuexec_executor *exec, int64_t total, const cpuexec_cost *cost,
                               const cpuexec_plan_constraints *constraints, void *ctx, cpuexec_range_fn fn) noexcept {
  return cpuexec_parallel_for_costed(exec, total, cost, constraints, ctx, fn);
}
inline int execute_ranges(int64_t total, const cpuexec_range_schedule *schedule, void *ctx,
                          cpuexec_range_fn fn) noexcept {
  return cpuexec_ranges_execute(total, schedule, ctx, fn);
}
inline int execute_costed_ranges(int64_t total, const cpuexec_cost *cost, const cpuexec_plan_constraints *constraints,
                                 int64_t block_multiple, void *ctx, cpuexec_range_fn fn) noexcept {
  return cpuexec_ranges_execute_costed(total, cost, constraints, block_multiple, ctx, fn);
}
inline int range_executor_run(const cpuexec_range_executor *executor, int64_t count, void *ctx,
                              cpuexec_range_fn fn) noexcept {
  return cpuexec_range_executor_run(executor, count, ctx, fn);
}
inline int range_executor_run_all(const cpuexec_range_executor *executor, int64_t count, void *ctx, cpuexec_range_fn fn,
                                  cpuexec_run_all_report *report) noexcept {
  return cpuexec_range_executor_run_all(executor, count, ctx, fn, report);
}
/** The signature of cpuexec_range_executor::run. */
using range_executor_run_fn = int (*)(void *self, int64_t count, void *ctx, cpuexec_range_fn callback);
inline cpuexec_range_executor make_range_executor(range_executor_run_fn run, void *self) noexcept {
  cpuexec_range_executor e;
  e.run = run;
  e.self = self;
  return e;
}
inline int run_worker_jobs(cpuexec_executor *exec, uint32_t worker_count, void *ctx,
                           cpuexec_worker_job_fn job) noexcept {
  return cpuexec_worker_jobs_run(exec, static_cast<int32_t>(worker_count), ctx, job);
}
inline int session_run(cpuexec_session *session, void *ctx, int (*fn)(void *)) noexcept {
  return cpuexec_session_run(session, ctx, fn);
}
/** The value a C++ trampoline returns to stop a loop; the C++ side never
 * reads it back (the exception travels in the call's state), so a change of
 * what the C API does with callback values does not matter here. */
constexpr int stop_value = 1;
/** What a range-executor implementation returns when it threw outside any
 * C++ call of this header (it was called from C code). */
constexpr int impl_threw = CPUEXEC_ECALLBACK;

} // namespace capi

} // namespace detail
} // namespace cpuexec

#endif
