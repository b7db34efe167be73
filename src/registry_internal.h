/* Internal: what sessions need from the registry beyond the public API. */
#ifndef CPUEXEC_SRC_REGISTRY_INTERNAL_H
#define CPUEXEC_SRC_REGISTRY_INTERNAL_H

#include <cpuexec/registry.h>

/* 0, or the error (with its message recorded again for the calling thread)
 * of a malformed CPUEXEC_REGISTRY read when the process registry was made:
 * sessions on the process registry report it, as they report a malformed
 * CPUEXEC_POLICY. */
int cpuexec__registry_default_environment_error(void);

#endif
