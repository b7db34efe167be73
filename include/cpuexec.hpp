/** @file cpuexec.hpp
 * @brief libcpuexec for C++17: RAII handles, lambdas as loop bodies, exceptions carried to the caller.
 *
 * Header-only and thin over the C API of cpuexec.h (link the same library:
 * `pkg-config --libs cpuexec`, or CMake's `cpuexec::cpuexec`):
 *
 * @code
 * #include <cpuexec.hpp>
 * cpuexec::session s(cpuexec::policy().num_threads(4));
 * s.run([&] {
 *   cpuexec::parallel_for(cpuexec::current(), n, 1024, [&](int64_t b, int64_t e) {
 *     for (int64_t i = b; i < e; i++) y[i] += a * x[i];
 *   });
 * });
 * @endcode
 *
 * Exceptions. A loop body (or range-executor implementation, or session run)
 * may throw. The first exception caught on any participant stops ranges that
 * have not started (a body that starts after it was caught is never called),
 * every running body finishes, and then that exception, with its type and
 * message, is rethrown on the calling thread exactly once (it travels as a
 * std::exception_ptr in a state that belongs to the one call). Exceptions
 * thrown by other participants meanwhile are dropped. A failure of the
 * library itself throws cpuexec::error: the CPUEXEC_E* code (a
 * std::error_code of cpuexec::error_category()) and cpuexec_error_message()'s
 * message.
 *
 * Without exceptions (-fno-exceptions) the same calls compile; a library
 * failure prints its message to stderr and calls std::terminate().
 *
 * Bodies run concurrently on several threads, so they are called through a
 * const reference: a `mutable` lambda does not compile. The C calls whose
 * shape the C API may still change go through cpuexec::detail::capi
 * (cpuexec/cxx/capi.hpp). Thread and participant counts are int32_t throughout (a negative limit
 * is rejected with CPUEXEC_EINVAL).
 *
 * Shared libraries built with hidden visibility each get their own copy of
 * the header's inline state: an exception thrown by a range-executor
 * implementation defined in one of them and run from a call made in another
 * arrives as cpuexec::error (CPUEXEC_ECALLBACK) instead of with its type,
 * and error_category() objects of two libraries compare unequal. */
#ifndef CPUEXEC_HPP
#define CPUEXEC_HPP

#include <cpuexec/cxx/error.hpp>
#include <cpuexec/cxx/policy.hpp>
#include <cpuexec/cxx/session.hpp>
#include <cpuexec/cxx/loops.hpp>
#include <cpuexec/cxx/range_executor.hpp>
#include <cpuexec/cxx/foreign.hpp>
#include <cpuexec/cxx/tasks.hpp>
#include <cpuexec/cxx/counters.hpp>

/** The C++ interface of libcpuexec (cpuexec.hpp and cpuexec/cxx/). */
namespace cpuexec {}

#endif
