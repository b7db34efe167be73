/* Internal: the environment, read in one place (env.c holds the library's
 * only getenv).
 *
 * libcpuexec's own variables (CPUEXEC_*) and OMP_NUM_THREADS follow the one
 * whitespace rule of text.h: the blanks before and after a value are
 * ignored, the value itself is parsed strictly, and an error names the
 * variable ("CPUEXEC_POLICY: ..."). Variables whose grammar belongs to the
 * OpenMP runtime (OMP_TOOL, OMP_TOOL_LIBRARIES) are read as the runtime
 * reads them (cpuexec__env_raw).
 *
 * getenv is not safe against a concurrent setenv; like the OpenMP runtimes
 * the library reads the environment and expects the process not to change
 * it meanwhile. doc/environment.md lists every variable for users. */
#ifndef CPUEXEC_SRC_CORE_ENV_H
#define CPUEXEC_SRC_CORE_ENV_H

#include <stdbool.h>
#include <stddef.h>

/* The variable as the process has it, or NULL when it is unset. */
const char *cpuexec__env_raw(const char *name);

/* The variable under the whitespace rule: its value without the blanks
 * around it (*len characters from the result), or NULL when it is unset. */
const char *cpuexec__env_value(const char *name, size_t *len);

/* The trimmed value as a string the caller frees; NULL when the variable is
 * unset or on allocation failure (*unset tells which; may be NULL). */
char *cpuexec__env_copy(const char *name, bool *unset);

/* Reads, trims and parses the variable: parse(value, out) on the trimmed
 * value, whose error message comes back prefixed with the variable's name
 * ("CPUEXEC_REGISTRY: capacity: ..."). *found says whether the variable is
 * set; unset is 0 with out untouched. */
int cpuexec__env_parse(const char *name, int (*parse)(const char *text, void *out), void *out, bool *found);

#endif
