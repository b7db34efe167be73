/* libcpuexec: OpenMP interop (the OMPT tool, the inline guard, the report).
 * Owned by src/openmp_*.c; see doc/migrating-openmp.md. */
#ifndef CPUEXEC_INTEROP_H
#define CPUEXEC_INTEROP_H

#include <cpuexec/common.h>

CPUEXEC_BEGIN_DECLS

CPUEXEC_END_DECLS

#endif
