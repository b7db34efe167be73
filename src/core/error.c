/* The error table, its strings, and the per-thread detail message. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <cpuexec/common.h>

/* Long enough for a message that quotes a whole policy text. */
#define CPUEXEC__ERROR_DETAIL_MAX 512

static __thread char last_error_detail[CPUEXEC__ERROR_DETAIL_MAX];
/* The value of the callback behind the thread's last CPUEXEC_ECALLBACK. */
static __thread int last_callback_value;

CPUEXEC_EXPORT const char *cpuexec_error_string(int code) {
  switch (code) {
  case CPUEXEC_OK:
    return "success";
#define CPUEXEC__ERRNO_STR(name, value, text) \
  case CPUEXEC_##name:                        \
    return text;
    CPUEXEC_ERRNO_MAP(CPUEXEC__ERRNO_STR)
#undef CPUEXEC__ERRNO_STR
  default:
    return "unknown error";
  }
}

CPUEXEC_EXPORT const char *cpuexec_error_name(int code) {
  switch (code) {
  case CPUEXEC_OK:
    return "CPUEXEC_OK";
#define CPUEXEC__ERRNO_NAME(name, value, text) \
  case CPUEXEC_##name:                         \
    return "CPUEXEC_" #name;
    CPUEXEC_ERRNO_MAP(CPUEXEC__ERRNO_NAME)
#undef CPUEXEC__ERRNO_NAME
  default:
    return "CPUEXEC_UNKNOWN";
  }
}

CPUEXEC_EXPORT const char *cpuexec_error_message(void) { return last_error_detail; }

CPUEXEC_EXPORT int cpuexec_error_callback_value(void) { return last_callback_value; }

int cpuexec__misuse(int code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(last_error_detail, sizeof last_error_detail, format, args);
  va_end(args);
  if (CPUEXEC_DEBUG) {
    fprintf(stderr, "libcpuexec: misuse (%s): %s\n", cpuexec_error_name(code), last_error_detail);
    abort();
  }
  return code;
}

int cpuexec__callback_failed(int value) {
  last_callback_value = value;
  snprintf(last_error_detail, sizeof last_error_detail,
           "callback failed with %d (the callback's own value, see cpuexec_error_callback_value(); "
           "the library itself did not fail)",
           value);
  return CPUEXEC_ECALLBACK;
}

CPUEXEC_EXPORT int cpuexec_error_report(int code, const char *message) {
  return cpuexec__fail(code, "%s", message != NULL ? message : cpuexec_error_string(code));
}

int cpuexec__fail(int code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(last_error_detail, sizeof last_error_detail, format, args);
  va_end(args);
  return code;
}
