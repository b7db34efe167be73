/** @file cxx/foreign.hpp
 * An application's pool as an executor (cpuexec/foreign.h) from C++: the
 * pool is written as a range-executor implementation, the same callable
 * range_executor_impl takes. Part of cpuexec.hpp. */
#ifndef CPUEXEC_CXX_FOREIGN_HPP
#define CPUEXEC_CXX_FOREIGN_HPP

#include <cpuexec/cxx/error.hpp>
#include <cpuexec/cxx/range_executor.hpp>
#include <cpuexec/cxx/session.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace cpuexec {

/** An executor that runs its regions on the application's own threads
 * (cpuexec_executor_create_foreign()). impl(int64_t count,
 * cpuexec::range_callback cb) is the pool's run_ranges: it calls cb(begin,
 * end) for disjoint half-open ranges covering [0, count), on any of its
 * threads, and returns after every started call returned, exactly as for
 * range_executor_impl; each index is one participant of the region (index i
 * is participant i: giving each index its own thread gives full
 * parallelism). An exception impl throws reaches the C++ call that ran the
 * region (cpuexec::parallel_for and the other loops of cpuexec.hpp), or
 * becomes CPUEXEC_ECALLBACK for a C caller; exceptions of loop bodies travel
 * as on any executor.
 *
 * The object owns one reference to the executor; sessions and scopes that
 * use it hold their own, and must end before the object is destroyed (the
 * executor calls impl, which lives here). Not copyable or movable: the
 * executor points at it. */
template <class Impl> class foreign_executor {
public:
  /** Wraps impl as an executor of `effective_threads` participants (>= 1;
   * 1 runs every region inline and never calls impl). Throws
   * cpuexec::error (CPUEXEC_EINVAL for effective_threads < 1,
   * CPUEXEC_ENOMEM). */
  foreign_executor(int32_t effective_threads, Impl impl) : impl_(std::move(impl)) {
    cpuexec_foreign_executor_ops ops;
    cpuexec_foreign_executor_ops_init(&ops);
    ops.effective_threads = effective_threads;
    ops.run_ranges = &range_executor_impl<Impl>::run_c;
    cpuexec_executor *raw = nullptr;
    detail::check(cpuexec_executor_create_foreign(&ops, &impl_, &raw));
    exec_ = executor::adopt(raw);
  }
  foreign_executor(const foreign_executor &) = delete;
  foreign_executor &operator=(const foreign_executor &) = delete;

  /** A view, for loops, scopes and sessions. */
  executor_ref ref() const noexcept { return exec_.ref(); }
  /** The same. */
  operator executor_ref() const noexcept { return exec_.ref(); }
  /** The C executor, still owned. */
  cpuexec_executor *get() const noexcept { return exec_.get(); }
  /** Most participants of a region on it. */
  int32_t effective_threads() const noexcept { return exec_.effective_threads(); }

private:
  range_executor_impl<Impl> impl_; /* before exec_: destroyed after it */
  executor exec_;
};

/** A foreign_executor for a lambda: `cpuexec::make_foreign_executor(4, [&](int64_t n, cpuexec::range_callback cb) {...})`
 * (C++17 guaranteed elision: the object is built in place). */
template <class Impl>
foreign_executor<std::decay_t<Impl>> make_foreign_executor(int32_t effective_threads, Impl &&impl) {
  return foreign_executor<std::decay_t<Impl>>(effective_threads, std::forward<Impl>(impl));
}

} // namespace cpuexec

#endif
