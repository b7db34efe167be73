/** @file cxx/call_state.hpp
 * How a C++ call carries exceptions: one state per call, shared by its
 * participants (stop flag, first exception), the trampolines that run a
 * callable behind a C callback, and cpuexec::cancelled(). Part of
 * cpuexec.hpp. */
#ifndef CPUEXEC_CXX_CALL_STATE_HPP
#define CPUEXEC_CXX_CALL_STATE_HPP

#include <cpuexec/cxx/capi.hpp>
#include <cpuexec/cxx/error.hpp>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <type_traits>
#include <utility>

namespace cpuexec {
namespace detail {

/** The state one C++ call shares between its participants: whether to stop,
 * and the first exception caught. `stopped` is written with release by the
 * thread that caught an exception and read with acquire before every body;
 * `error` is written only by the thread that wins `claimed`, and read by the
 * caller after the C call returned (every participant's last body has
 * finished by then: the C call's completion orders it). */
class call_state {
public:
  bool stopped() const noexcept { return stopped_.load(std::memory_order_acquire); }
#if CPUEXEC_HPP_EXCEPTIONS
  void capture(std::exception_ptr e) noexcept {
    stopped_.store(true, std::memory_order_release);
    if (!claimed_.exchange(true, std::memory_order_acq_rel)) error_ = std::move(e);
  }
#endif
  /** After the C call returned rc: rethrow the captured exception (once:
   * the state belongs to this call) or throw for a library failure. */
  void finish(int rc) {
#if CPUEXEC_HPP_EXCEPTIONS
    if (error_) {
      std::exception_ptr e = std::move(error_);
      error_ = nullptr;
      std::rethrow_exception(e);
    }
#endif
    check(rc);
  }

private:
  std::atomic<bool> stopped_{false};
#if CPUEXEC_HPP_EXCEPTIONS
  std::atomic<bool> claimed_{false};
  std::exception_ptr error_;
#endif
};

/** The innermost call of this header running a range-executor
 * implementation on this thread (see range_executor_impl: range executors,
 * and foreign pools, whose run_ranges runs on the thread that called the
 * loop); cleared while a body runs, so an exception is only ever given to
 * the call it escaped. */
inline thread_local call_state *active_call = nullptr;

/** The call whose body is running on this thread (innermost), for cancelled(). */
inline thread_local const call_state *body_call = nullptr;

/** Sets active_call for one scope and restores it. */
class active_call_guard {
public:
  explicit active_call_guard(call_state *state) noexcept : saved_(active_call) { active_call = state; }
  ~active_call_guard() { active_call = saved_; }
  active_call_guard(const active_call_guard &) = delete;
  active_call_guard &operator=(const active_call_guard &) = delete;

private:
  call_state *saved_;
};

/** Runs body() for one participant, unless the call has stopped; an
 * exception stops the call. Returns 0 or capi::stop_value. */
template <class Body> int guarded(call_state &state, const Body &body) noexcept {
  if (state.stopped()) return capi::stop_value;
  active_call_guard guard(nullptr);
  const call_state *saved = body_call;
  body_call = &state;
#if CPUEXEC_HPP_EXCEPTIONS
  try {
    body();
  } catch (...) {
    body_call = saved;
    state.capture(std::current_exception());
    return capi::stop_value;
  }
#else
  body();
#endif
  body_call = saved;
  return 0;
}

/** A range body f(begin, end) behind a C callback. */
template <class F> struct range_call {
  const F &f;
  call_state state;
  explicit range_call(const F &fn) : f(fn) {}
  static int invoke(void *ctx, int64_t begin, int64_t end) noexcept {
    auto *self = static_cast<range_call *>(ctx);
    return guarded(self->state, [&] { std::invoke(self->f, begin, end); });
  }
};

/** A job f(worker_id, worker_count) behind a C callback. */
template <class F> struct job_call {
  const F &f;
  call_state state;
  explicit job_call(const F &fn) : f(fn) {}
  static int invoke(void *ctx, int32_t id, int32_t count) noexcept {
    auto *self = static_cast<job_call *>(ctx);
    return guarded(self->state, [&] { std::invoke(self->f, capi::threads(id), capi::threads(count)); });
  }
};

template <class F> using range_body_ok = std::is_invocable<const std::remove_reference_t<F> &, int64_t, int64_t>;

} // namespace detail

/** Inside a body of a call of this header: true once another body of the
 * same call threw, so a long body may return early (its call will rethrow
 * that exception). False outside bodies. */
inline bool cancelled() noexcept { return detail::body_call != nullptr && detail::body_call->stopped(); }

} // namespace cpuexec

#endif
