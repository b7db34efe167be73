/** @file cxx/loops.hpp
 * Parallel loops with callables: parallel_for (and its costed and planned
 * forms), range schedules, and worker jobs. Part of cpuexec.hpp. */
#ifndef CPUEXEC_CXX_LOOPS_HPP
#define CPUEXEC_CXX_LOOPS_HPP

#include <cpuexec/cxx/call_state.hpp>
#include <cpuexec/cxx/error.hpp>
#include <cpuexec/cxx/session.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace cpuexec {

/** Per-iteration cost of a loop body (cpuexec_cost). */
struct cost {
  double bytes_read = 0;     /**< bytes read per index */
  double bytes_written = 0;  /**< bytes written per index */
  double compute_cycles = 0; /**< compute cycles per index */
};

/** Limits for planned calls (cpuexec_plan_constraints). */
struct plan_constraints {
  int32_t max_participants = 0;       /**< 0: the executor's limit */
  int32_t preferred_participants = 0; /**< 0: no preference */
};

/** A plan: grain and participants (cpuexec_plan). */
struct plan {
  int64_t grain = 1;         /**< indices per range, at least */
  int32_t participants = 1;  /**< participants to run */
};

namespace detail {
inline cpuexec_cost c_cost(const cost &c) noexcept {
  cpuexec_cost out;
  out.bytes_read = c.bytes_read;
  out.bytes_written = c.bytes_written;
  out.compute_cycles = c.compute_cycles;
  return out;
}
inline cpuexec_plan_constraints c_constraints(const plan_constraints &c) {
  cpuexec_plan_constraints out;
  out.max_participants = count(c.max_participants, "max_participants");
  out.preferred_participants = count(c.preferred_participants, "preferred_participants");
  return out;
}
} // namespace detail

/** The serial loop
 * @code
 * for (int64_t i = 0; i < total; i += grain) f(i, std::min(i + grain, total));
 * @endcode
 * made parallel on exec (cpuexec_parallel_for()): every index exactly once,
 * contiguous half-open ranges, the caller is participant 0, at most
 * max_participants participants (0: the executor's limit). A serial exec
 * runs the loop on the caller; a call from inside a body runs inline.
 * f(int64_t begin, int64_t end) is called concurrently through a const
 * reference. The first exception it throws is rethrown here, once, after
 * every started body finished; no body starts after it was caught. Throws
 * cpuexec::error for grain < 1, a negative max_participants, or an executor
 * failure (CPUEXEC_EFORKED). */
template <class F> void parallel_for(executor_ref exec, int64_t total, int64_t grain, int32_t max_participants, F &&f) {
  static_assert(detail::range_body_ok<F>::value, "f must be callable as f(int64_t begin, int64_t end) const");
  uint32_t limit = detail::count(max_participants, "max_participants");
  detail::range_call<std::remove_reference_t<F>> call(f);
  detail::active_call_guard active(&call.state); /* a foreign pool's exception joins this call */
  call.state.finish(detail::capi::parallel_for(exec.get(), total, grain, limit, &call, &call.invoke));
}
/** parallel_for() with the executor's participant limit. */
template <class F> void parallel_for(executor_ref exec, int64_t total, int64_t grain, F &&f) {
  parallel_for(exec, total, grain, 0, std::forward<F>(f));
}

/** The grain and participants cpuexec_parallel_for_plan() chooses for
 * total indices of cost c on exec; throws for a negative or non-finite cost. */
inline plan plan_parallel_for(executor_ref exec, int64_t total, const cost &c, const plan_constraints &limits = {}) {
  cpuexec_cost cc = detail::c_cost(c);
  cpuexec_plan_constraints cl = detail::c_constraints(limits);
  cpuexec_plan p{};
  detail::check(cpuexec_parallel_for_plan(exec.get(), total, &cc, &cl, &p));
  plan out;
  out.grain = p.grain;
  out.participants = detail::capi::threads(p.participants);
  return out;
}

/** parallel_for() with grain and participants planned from the cost of one
 * index (cpuexec_parallel_for_costed()); the same exception rules. */
template <class F>
void parallel_for_costed(executor_ref exec, int64_t total, const cost &c, const plan_constraints &limits, F &&f) {
  static_assert(detail::range_body_ok<F>::value, "f must be callable as f(int64_t begin, int64_t end) const");
  cpuexec_cost cc = detail::c_cost(c);
  cpuexec_plan_constraints cl = detail::c_constraints(limits);
  detail::range_call<std::remove_reference_t<F>> call(f);
  detail::active_call_guard active(&call.state); /* a foreign pool's exception joins this call */
  call.state.finish(detail::capi::parallel_for_costed(exec.get(), total, &cc, &cl, &call, &call.invoke));
}
/** parallel_for_costed() with at most max_participants participants. */
template <class F>
void parallel_for_costed(executor_ref exec, int64_t total, const cost &c, int32_t max_participants, F &&f) {
  plan_constraints limits;
  limits.max_participants = max_participants;
  parallel_for_costed(exec, total, c, limits, std::forward<F>(f));
}
/** parallel_for_costed() without limits. */
template <class F> void parallel_for_costed(executor_ref exec, int64_t total, const cost &c, F &&f) {
  parallel_for_costed(exec, total, c, plan_constraints{}, std::forward<F>(f));
}

/** A range schedule for kernels (cpuexec_range_schedule) with
 * builder-style setters. The defaults are serial until the kernel raises
 * max_participants. */
class range_schedule {
public:
  /** The defaults of cpuexec_range_schedule_init(). */
  range_schedule() noexcept { cpuexec_range_schedule_init(&s_); }
  /** A total below n runs as one block. */
  range_schedule &min_parallel_size(int64_t n) noexcept { s_.min_parallel_size = n; return *this; }
  /** The fewest indices a block should hold. */
  range_schedule &min_block_size(int64_t n) noexcept { s_.min_block_size = n; return *this; }
  /** Block boundaries are multiples of n. */
  range_schedule &block_multiple(int64_t n) noexcept { s_.block_multiple = n; return *this; }
  /** At most n blocks (0: the executor's limit); negative throws. */
  range_schedule &max_participants(int32_t n) {
    s_.max_participants = detail::count(n, "max_participants");
    return *this;
  }
  /** The block count wanted when the limits allow it (0: none); negative throws. */
  range_schedule &preferred_participants(int32_t n) {
    s_.preferred_participants = detail::count(n, "preferred_participants");
    return *this;
  }
  /** The C struct. */
  const cpuexec_range_schedule &c_schedule() const noexcept { return s_; }

private:
  cpuexec_range_schedule s_;
};

/** The serial loop `f(0, total)` split into blocks by the schedule and run on
 * the installed executor (cpuexec_ranges_execute()); the exception
 * rules of parallel_for(). */
template <class F> void execute_ranges(int64_t total, const range_schedule &schedule, F &&f) {
  static_assert(detail::range_body_ok<F>::value, "f must be callable as f(int64_t begin, int64_t end) const");
  detail::range_call<std::remove_reference_t<F>> call(f);
  detail::active_call_guard active(&call.state); /* a foreign pool's exception joins this call */
  call.state.finish(detail::capi::execute_ranges(total, &schedule.c_schedule(), &call, &call.invoke));
}

/** execute_ranges() with the block size planned from the cost of one index
 * (cpuexec_ranges_execute_costed()). */
template <class F>
void execute_costed_ranges(int64_t total, const cost &c, const plan_constraints &limits, int64_t block_multiple,
                           F &&f) {
  static_assert(detail::range_body_ok<F>::value, "f must be callable as f(int64_t begin, int64_t end) const");
  cpuexec_cost cc = detail::c_cost(c);
  cpuexec_plan_constraints cl = detail::c_constraints(limits);
  detail::range_call<std::remove_reference_t<F>> call(f);
  detail::active_call_guard active(&call.state); /* a foreign pool's exception joins this call */
  call.state.finish(detail::capi::execute_costed_ranges(total, &cc, &cl, block_multiple, &call, &call.invoke));
}

/** The serial loop
 * @code
 * for (int32_t id = 0; id < worker_count; id++) job(id, worker_count);
 * @endcode
 * run on exec (cpuexec_worker_jobs_run(); worker_count 0: exec's effective
 * threads); jobs must not wait for each other. The exception rules of
 * parallel_for(). */
template <class F> void run_worker_jobs(executor_ref exec, int32_t worker_count, F &&job) {
  static_assert(std::is_invocable_v<const std::remove_reference_t<F> &, int32_t, int32_t>,
                "job must be callable as job(int32_t worker_id, int32_t worker_count) const");
  uint32_t n = detail::count(worker_count, "worker_count");
  detail::job_call<std::remove_reference_t<F>> call(job);
  detail::active_call_guard active(&call.state); /* a foreign pool's exception joins this call */
  call.state.finish(detail::capi::run_worker_jobs(exec.get(), n, &call, &call.invoke));
}

} // namespace cpuexec

#endif
