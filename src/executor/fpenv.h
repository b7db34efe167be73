/* Internal: the floating-point control state a region hands from the
 * caller to its workers (seed 003: executors own "the workers'
 * floating-point environment"; issue 13).
 *
 * Only control bits travel, never status flags: on x86-64 the MXCSR
 * control bits (flush-to-zero, denormals-are-zero, rounding, exception
 * masks) and the x87 control word (rounding, precision, masks); on aarch64
 * FPCR (flush-to-zero, default NaN, rounding, trap enables), whose status
 * lives apart in FPSR. Other architectures capture nothing and apply
 * nothing (cpuexec__fpenv_supported is false).
 *
 * A worker applies the caller's state for one region and restores its own
 * after, keeping any exception flags the region raised on it. */
#ifndef CPUEXEC_SRC_FPENV_H
#define CPUEXEC_SRC_FPENV_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cpuexec__fpenv {
  uint64_t control; /* MXCSR control bits, or FPCR */
  uint16_t x87;     /* x86-64: the x87 control word */
} cpuexec__fpenv;

extern const bool cpuexec__fpenv_supported;

/* The calling thread's control state. */
void cpuexec__fpenv_capture(cpuexec__fpenv *env);
/* Saves the calling thread's state in *saved, then applies *want. */
void cpuexec__fpenv_apply(const cpuexec__fpenv *want, cpuexec__fpenv *saved);
/* Puts back what cpuexec__fpenv_apply() saved (status flags stay). */
void cpuexec__fpenv_restore(const cpuexec__fpenv *saved);

#endif
