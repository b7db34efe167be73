/** @file cxx/range_executor.hpp
 * The (count, callback) range executors from C++: running kernels
 * with lambdas through any range executor, and range executors implemented
 * by lambdas. Part of cpuexec.hpp. */
#ifndef CPUEXEC_CXX_RANGE_EXECUTOR_HPP
#define CPUEXEC_CXX_RANGE_EXECUTOR_HPP

#include <cpuexec/cxx/call_state.hpp>
#include <cpuexec/cxx/error.hpp>
#include <cpuexec/cxx/session.hpp>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <type_traits>
#include <utility>

namespace cpuexec {

/** What a range-executor implementation calls for each range (<cpuexec/compat/range_executor.h>):
 * cb(start, end) runs the kernel's callback and returns false when the run
 * should stop (a callback failed or threw, or the range was out of bounds).
 * Copy it to any thread; it is valid until the implementation returns. */
class range_callback {
public:
  /** Runs the range; false: stop starting ranges. */
  bool operator()(int64_t start, int64_t end) const noexcept {
    int rc = fn_(ctx_, start, end);
    if (rc == 0) return true;
    int expected = 0;
    first_->compare_exchange_strong(expected, rc, std::memory_order_acq_rel);
    return false;
  }
  /** True once a range has failed. */
  bool stopped() const noexcept { return first_->load(std::memory_order_acquire) != 0; }
  /** For range_executor_impl only. */
  range_callback(cpuexec_range_fn fn, void *ctx, std::atomic<int> *first) noexcept
      : fn_(fn), ctx_(ctx), first_(first) {}

private:
  cpuexec_range_fn fn_;
  void *ctx_;
  std::atomic<int> *first_;
};

/** What range_executor::run_all() reports (cpuexec_run_all_report): the
 * executor's or the library's error after which the ranges left ran on the
 * calling thread (0: none), and how many indices ran so. */
struct run_all_report {
  int error = 0;               /**< 0, or a negative CPUEXEC_E* (cpuexec_error_message() names it) */
  int64_t caller_indices = 0;  /**< indices run on the calling thread because of error */
};

/** A range executor (cpuexec_range_executor): a value naming how
 * to run the ranges of [0, count). Copy freely; what it refers to must
 * outlive its uses. */
class range_executor {
public:
  /** The serial executor. */
  range_executor() noexcept : e_(cpuexec_range_executor_serial()) {}
  /** A C range executor. */
  explicit range_executor(const cpuexec_range_executor &e) noexcept : e_(e) {}
  /** One range [0, count) on the caller. */
  static range_executor serial() noexcept { return range_executor(cpuexec_range_executor_serial()); }
  /** The executor installed on the calling thread at each run. */
  static range_executor installed() noexcept { return range_executor(cpuexec_range_executor_installed()); }
  /** A given executor (serial for an empty view). */
  static range_executor of(executor_ref exec) noexcept { return range_executor(cpuexec_range_executor_of(exec.get())); }
  /** The C value. */
  const cpuexec_range_executor &c_executor() const noexcept { return e_; }

  /** Runs f(start, end) over the ranges of [0, count) this executor
   * chooses, through cpuexec_range_executor_run() (bounds checked, nested
   * calls inline). The exception rules of parallel_for(), for exceptions of
   * f and of a C++ implementation alike; a range out of bounds or another
   * executor failure throws cpuexec::error. */
  template <class F> void run(int64_t count, F &&f) const {
    static_assert(detail::range_body_ok<F>::value, "f must be callable as f(int64_t begin, int64_t end) const");
    detail::range_call<std::remove_reference_t<F>> call(f);
    int rc;
    {
      detail::active_call_guard active(&call.state);
      rc = detail::capi::range_executor_run(&e_, count, &call, &call.invoke);
    }
    call.state.finish(rc);
  }

  /** Runs f(start, end) so that every index of [0, count) runs exactly
   * once whatever the executor does (cpuexec_range_executor_run_all(), for
   * hooks that return void): an error of the executor or the library is
   * not thrown; the indices left run on the calling thread and the error is
   * in the report. An exception of f stops the call and is rethrown, as by
   * run(); count < 0 throws cpuexec::error. */
  template <class F> run_all_report run_all(int64_t count, F &&f) const {
    static_assert(detail::range_body_ok<F>::value, "f must be callable as f(int64_t begin, int64_t end) const");
    detail::range_call<std::remove_reference_t<F>> call(f);
    cpuexec_run_all_report report{};
    int rc;
    {
      detail::active_call_guard active(&call.state);
      rc = detail::capi::range_executor_run_all(&e_, count, &call, &call.invoke, &report);
    }
    call.state.finish(rc);
    run_all_report out;
    out.error = report.error;
    out.caller_indices = report.caller_indices;
    return out;
  }

private:
  cpuexec_range_executor e_;
};

template <class Impl> class foreign_executor;

/** A range executor implemented in C++: impl(int64_t count,
 * cpuexec::range_callback cb) calls cb(start, end) for disjoint half-open
 * ranges covering [0, count), possibly on other threads, stops starting
 * ranges once cb returns false, and returns after every started cb call
 * returned (the range-executor contract). impl returns void, or an int: 0 or its
 * own negative CPUEXEC_E* error. An exception impl throws reaches the C++
 * run() that called it, or, when C code called it, becomes
 * CPUEXEC_ECALLBACK. Not copyable or movable: executor() points at it. */
template <class Impl> class range_executor_impl {
public:
  /** Keeps impl. */
  explicit range_executor_impl(Impl impl) : impl_(std::move(impl)) {}
  range_executor_impl(const range_executor_impl &) = delete;
  range_executor_impl &operator=(const range_executor_impl &) = delete;
  /** The range executor, valid while *this lives. */
  range_executor executor() const noexcept {
    return range_executor(detail::capi::make_range_executor(&run_c, const_cast<range_executor_impl *>(this)));
  }
  /** The same. */
  operator range_executor() const noexcept { return executor(); }

private:
  friend class foreign_executor<Impl>; /* a foreign pool's run_ranges is the same C function */
  static int run_c(void *self, int64_t count, void *ctx, cpuexec_range_fn fn) noexcept {
    auto *me = static_cast<range_executor_impl *>(self);
    std::atomic<int> first{0};
    range_callback cb(fn, ctx, &first);
    int own = 0;
#if CPUEXEC_HPP_EXCEPTIONS
    try {
#endif
      if constexpr (std::is_void_v<std::invoke_result_t<Impl &, int64_t, range_callback>>)
        std::invoke(me->impl_, count, cb);
      else
        own = static_cast<int>(std::invoke(me->impl_, count, cb));
#if CPUEXEC_HPP_EXCEPTIONS
    } catch (...) {
      if (detail::active_call == nullptr) return detail::capi::impl_threw;
      detail::active_call->capture(std::current_exception());
      return detail::capi::stop_value;
    }
#endif
    if (own != 0) return own;
    return first.load(std::memory_order_acquire);
  }
  Impl impl_;
};

/** A range_executor_impl for a lambda: `auto ex = cpuexec::make_range_executor([&](int64_t n, cpuexec::range_callback cb) {...});` */
template <class Impl> range_executor_impl<std::decay_t<Impl>> make_range_executor(Impl &&impl) {
  return range_executor_impl<std::decay_t<Impl>>(std::forward<Impl>(impl));
}

} // namespace cpuexec

#endif
