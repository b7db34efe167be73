/* The run-time side of the version check in cpuexec/common.h. */
#include <cpuexec/common.h>

#define CPUEXEC__STR2(x) #x
#define CPUEXEC__STR(x) CPUEXEC__STR2(x)

CPUEXEC_EXPORT unsigned cpuexec_version(void) { return CPUEXEC_VERSION_HEX; }

CPUEXEC_EXPORT const char *cpuexec_version_string(void) {
  return CPUEXEC__STR(CPUEXEC_VERSION_MAJOR) "." CPUEXEC__STR(CPUEXEC_VERSION_MINOR) "." CPUEXEC__STR(
      CPUEXEC_VERSION_PATCH);
}
