/* Internal: recording failures for cpuexec_error_message(). */
#ifndef CPUEXEC_SRC_ERROR_H
#define CPUEXEC_SRC_ERROR_H

#include <cpuexec/errors.h>

/* Records a printf-style detail for the calling thread and returns code, so
 * a failing path reads: return cpuexec__fail(CPUEXEC_EINVAL, "grain: %lld is below 1", g); */
int cpuexec__fail(int code, const char *format, ...) __attribute__((format(CPUEXEC_PRINTF_FORMAT, 2, 3)));

/* The same for a call sequence that breaks a handle's rules (releasing a
 * reference not held, releasing the last one from inside its own region):
 * returns code with the message, and in --enable-debug builds (CPUEXEC_DEBUG)
 * prints the message to stderr and aborts, so the bug stops where it is. */
int cpuexec__misuse(int code, const char *format, ...) __attribute__((format(CPUEXEC_PRINTF_FORMAT, 2, 3)));

/* A user callback returned value != 0: records it for
 * cpuexec_error_callback_value(), says so in cpuexec_error_message(), and
 * returns CPUEXEC_ECALLBACK. Every public call that runs user callbacks
 * passes their failure through here, so no callback value reaches a caller
 * as a return code (include/cpuexec/errors.h). */
int cpuexec__callback_failed(int value);
static inline int cpuexec__callback_rc(int rc) { return rc == 0 ? 0 : cpuexec__callback_failed(rc); }

#endif
