/* Internal: recording failures for cpuexec_last_error(). */
#ifndef CPUEXEC_SRC_ERROR_H
#define CPUEXEC_SRC_ERROR_H

#include <cpuexec/errors.h>

/* Records a printf-style detail for the calling thread and returns code, so
 * a failing path reads: return cpuexec__fail(CPUEXEC_EINVAL, "grain: %lld is below 1", g); */
int cpuexec__fail(int code, const char *format, ...) __attribute__((format(printf, 2, 3)));

#endif
