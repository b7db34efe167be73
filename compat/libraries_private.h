/* Private to the compat adapters (not installed): what the adapters count
 * for cpuexec_libraries_status() (compat/libraries.c). */
#ifndef CPUEXEC_COMPAT_LIBRARIES_PRIVATE_H
#define CPUEXEC_COMPAT_LIBRARIES_PRIVATE_H

#include <stdatomic.h>
#include <stdint.h>

/* FFTW loops cpuexec_fftw_parallel_loop ran (relaxed: a count only). */
extern atomic_uint_fast64_t cpuexec__fftw_loops;

#endif
