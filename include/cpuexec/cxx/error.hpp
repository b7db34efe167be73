/** @file cxx/error.hpp
 * The C++ interface's errors: cpuexec::error (a std::system_error carrying
 * the CPUEXEC_E* code and cpuexec_error_message()'s message), its error
 * category and cpuexec::errc; without exceptions, a failure prints its
 * message and calls std::terminate(). Part of cpuexec.hpp. */
#ifndef CPUEXEC_CXX_ERROR_HPP
#define CPUEXEC_CXX_ERROR_HPP

#include <cpuexec/cxx/capi.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <system_error>

/** 1 when the translation unit is compiled with exceptions, else 0
 * (-fno-exceptions: failures print their message and call std::terminate). */
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define CPUEXEC_HPP_EXCEPTIONS 1
#else
#define CPUEXEC_HPP_EXCEPTIONS 0
#endif

namespace cpuexec {

/** The library's error codes (cpuexec/errors.h) as a std::error_code enum. */
enum class errc : int {
  einval = CPUEXEC_EINVAL,         /**< invalid argument */
  enomem = CPUEXEC_ENOMEM,         /**< out of memory */
  etopology = CPUEXEC_ETOPOLOGY,   /**< topology could not be read */
  eaffinity = CPUEXEC_EAFFINITY,   /**< processor affinity could not be applied */
  ethread = CPUEXEC_ETHREAD,       /**< a worker thread could not be started */
  ecapacity = CPUEXEC_ECAPACITY,   /**< registry capacity exhausted */
  eforked = CPUEXEC_EFORKED,       /**< executor was inherited across fork() */
  emismatch = CPUEXEC_EMISMATCH,   /**< execution descriptor does not match the executor */
  erange = CPUEXEC_ERANGE,         /**< range out of bounds */
  enotsup = CPUEXEC_ENOTSUP,       /**< not supported on this platform or build */
  ebusy = CPUEXEC_EBUSY,           /**< resource still in use */
  estate = CPUEXEC_ESTATE,         /**< call made in the wrong state */
  ecallback = CPUEXEC_ECALLBACK    /**< a callback failed */
};

namespace detail {

class category_impl final : public std::error_category {
public:
  const char *name() const noexcept override { return "cpuexec"; }
  std::string message(int value) const override { return cpuexec_error_string(value); }
  std::error_condition default_error_condition(int value) const noexcept override {
    switch (value) {
    case CPUEXEC_EINVAL: return std::errc::invalid_argument;
    case CPUEXEC_ENOMEM: return std::errc::not_enough_memory;
    case CPUEXEC_ERANGE: return std::errc::result_out_of_range;
    case CPUEXEC_ENOTSUP: return std::errc::not_supported;
    case CPUEXEC_EBUSY: return std::errc::device_or_resource_busy;
    default: return std::error_condition(value, *this);
    }
  }
};

} // namespace detail

/** The category of libcpuexec's codes: name "cpuexec", messages from
 * cpuexec_error_string(); EINVAL, ENOMEM, ERANGE, ENOTSUP and EBUSY compare
 * equal to the matching std::errc. One object for the whole program. */
inline const std::error_category &error_category() noexcept {
  static const detail::category_impl category;
  return category;
}

/** A std::error_code for one of the library's codes. */
inline std::error_code make_error_code(errc code) noexcept {
  return std::error_code(static_cast<int>(code), error_category());
}

/** A failure of the library: code() is the CPUEXEC_E* code in
 * error_category(); what() starts with cpuexec_error_message()'s message of the
 * failing call (which names what was wrong), then the code's string. */
class error : public std::system_error {
public:
  /** @param code a CPUEXEC_E* code. @param message what was wrong. */
  error(int code, const std::string &message)
      : std::system_error(code, error_category(), message), message_(message) {}
  /** The CPUEXEC_E* value (negative). */
  int value() const noexcept { return code().value(); }
  /** The library's message alone, without the code's string. */
  const char *message() const noexcept { return message_.what(); }

private:
  std::runtime_error message_; // a copy that cannot throw
};

namespace detail {

/** Throws cpuexec::error (or, without exceptions, prints and terminates). */
[[noreturn]] inline void fail(int code, const char *message) {
  const char *text = message != nullptr && message[0] != '\0' ? message : cpuexec_error_string(code);
#if CPUEXEC_HPP_EXCEPTIONS
  throw error(code, text);
#else
  std::fprintf(stderr, "cpuexec: %s: %s\n", cpuexec_error_name(code), text);
  std::fflush(stderr);
  std::terminate();
#endif
}
/** Throws for a failed C call (rc != 0), with the thread's last message. */
inline void check(int rc) {
  if (rc != 0) fail(rc, cpuexec_error_message());
}
inline uint32_t count(int32_t n, const char *what) {
  uint32_t out = 0;
  if (!capi::count(n, &out)) {
    std::string text = std::string(what) + ": " + std::to_string(n) + " is negative; use 0 for the executor's limit";
    fail(CPUEXEC_EINVAL, text.c_str());
  }
  return out;
}

} // namespace detail
} // namespace cpuexec

namespace std {
/** cpuexec::errc converts to std::error_code. */
template <> struct is_error_code_enum<cpuexec::errc> : true_type {};
} // namespace std

#endif
