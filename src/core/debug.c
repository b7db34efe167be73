/* The debug checks' report (debug.h). */
#include "debug.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void cpuexec__check_failed(const char *file, int line, const char *condition, const char *format, ...) {
  fprintf(stderr, "libcpuexec debug check failed at %s:%d (%s): ", file, line, condition);
  va_list args;
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fputc('\n', stderr);
  abort();
}
