/** @file
 * libcpuexec: the error convention.
 *
 * Every function that can fail returns int: 0 on success, or one negative
 * CPUEXEC_E* code below. When a public call fails it also records, for the
 * calling thread, a message that names what was wrong: the field or argument,
 * the value given and what is allowed (for example
 * "num_threads: -3 is negative; use 0 for the topology default, 1 for serial
 * or a participant count"). cpuexec_error_message() returns that message until
 * the thread's next failing call. Successful calls leave it untouched (like
 * errno): read it right after a call returned a negative code, never to find
 * out whether a call failed.
 *
 * Callback failures (one rule for every call that runs a user callback:
 * cpuexec_parallel_for and _costed, cpuexec_session_run, and every compat
 * adapter: ranges, range executors, worker jobs). A callback returns 0 or
 * any other int, which is its own value, never a library code. When a
 * callback returns non-zero, the call stops starting new work, waits for
 * every started callback, and returns CPUEXEC_ECALLBACK; the first non-zero
 * value observed is then available from cpuexec_error_callback_value() on the
 * calling thread, and cpuexec_error_message() reads "callback failed with N
 * ...". So a return of CPUEXEC_ECALLBACK always means "your callback failed"
 * and every other negative code always means "the library failed", whatever
 * value the callback chose (-1, 1, INT_MIN, or a CPUEXEC_E* code it got
 * from a nested call, which then comes back as the callback's value).
 * Legacy adapters whose callbacks return void (ParallelFor, pthreadpool)
 * have no callback failures.
 *
 * Thread safety: every function here may be called from any thread; the
 * last-error state is per thread.
 *
 * The codes, their names and their strings come from one table,
 * CPUEXEC_ERRNO_MAP, so they never drift apart. */
#ifndef CPUEXEC_ERRORS_H
#define CPUEXEC_ERRORS_H

#include <cpuexec/common.h>

/** The table of error codes: X(name, value, text) once per code, expanded
 * into the enum below and into cpuexec_error_string()/cpuexec_error_name(). */
#define CPUEXEC_ERRNO_MAP(X)                                                           \
  X(EINVAL, -1, "invalid argument")                                                    \
  X(ENOMEM, -2, "out of memory")                                                       \
  X(ETOPOLOGY, -3, "topology could not be read")                                       \
  X(EAFFINITY, -4, "processor affinity could not be applied")                          \
  X(ETHREAD, -5, "a worker thread could not be started")                               \
  X(ECAPACITY, -6, "registry capacity exhausted")                                      \
  X(EFORKED, -7, "executor was inherited across fork()")                               \
  X(EMISMATCH, -8, "execution descriptor does not match the executor")                 \
  X(ERANGE, -9, "range out of bounds")                                                 \
  X(ENOTSUP, -10, "not supported on this platform or build")                           \
  X(EBUSY, -11, "resource still in use")                                               \
  X(ESTATE, -12, "call made in the wrong state")                                       \
  X(ECALLBACK, -13, "a callback failed (its value: cpuexec_error_callback_value())")

/** The error codes: 0 for success, one negative value per failure kind
 * (CPUEXEC_EINVAL ... CPUEXEC_ECALLBACK, from CPUEXEC_ERRNO_MAP). */
typedef enum cpuexec_error {
  CPUEXEC_OK = 0, /**< success */
#define CPUEXEC__ERRNO_ENUM(name, value, text) CPUEXEC_##name = (value),
  CPUEXEC_ERRNO_MAP(CPUEXEC__ERRNO_ENUM)
#undef CPUEXEC__ERRNO_ENUM
} cpuexec_error;

CPUEXEC_BEGIN_DECLS

/** The text of a code: "invalid argument" for CPUEXEC_EINVAL; "unknown
 * error" for values outside the table. Static storage; thread-safe. */
CPUEXEC_EXPORT const char *cpuexec_error_string(int code);
/** The name of a code: "CPUEXEC_EINVAL" for CPUEXEC_EINVAL; "CPUEXEC_OK" for 0;
 * "CPUEXEC_UNKNOWN" otherwise. Static storage; thread-safe. */
CPUEXEC_EXPORT const char *cpuexec_error_name(int code);
/** The detail message of the calling thread's last failed call, or "" if
 * none. Never NULL; valid until the thread's next libcpuexec call. */
CPUEXEC_EXPORT const char *cpuexec_error_message(void);
/** The value the callback returned, for the calling thread's last call that
 * returned CPUEXEC_ECALLBACK (0 before any). Successful calls leave it
 * untouched, as they leave cpuexec_error_message(). */
CPUEXEC_EXPORT int cpuexec_error_callback_value(void);
/** For a library built on libcpuexec (an adapter, an application's pool
 * behind a foreign executor, libcpuexec-pthreadpool) that fails on its own,
 * before or outside any libcpuexec call: records message (copied, cut at
 * 511 bytes; NULL records cpuexec_error_string(code)) as the calling
 * thread's last error, so its callers read one convention, and returns
 * code: `return cpuexec_error_report(CPUEXEC_ENOMEM, "pool: out of memory");`. */
CPUEXEC_EXPORT int cpuexec_error_report(int code, const char *message);

CPUEXEC_END_DECLS

#endif
