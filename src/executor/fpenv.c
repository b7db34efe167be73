/* Capturing and applying the floating-point control state (fpenv.h). Off
 * the hot path: a region calls these only when it was asked to carry the
 * caller's state (policy inherit_fp_environment, or the per-call flag). */
#include "fpenv.h"

#if defined(__x86_64__)
/* MXCSR bits 0-5 are exception status flags; 6-15 are control. */
#define MXCSR_STATUS 0x3fu

const bool cpuexec__fpenv_supported = true;

static inline uint32_t read_mxcsr(void) {
  uint32_t v;
  __asm__ __volatile__("stmxcsr %0" : "=m"(v));
  return v;
}
static inline void write_mxcsr(uint32_t v) { __asm__ __volatile__("ldmxcsr %0" : : "m"(v)); }
static inline uint16_t read_x87(void) {
  uint16_t v;
  __asm__ __volatile__("fnstcw %0" : "=m"(v));
  return v;
}
static inline void write_x87(uint16_t v) { __asm__ __volatile__("fldcw %0" : : "m"(v)); }

void cpuexec__fpenv_capture(cpuexec__fpenv *env) {
  env->control = read_mxcsr() & ~MXCSR_STATUS;
  env->x87 = read_x87();
}

void cpuexec__fpenv_restore(const cpuexec__fpenv *saved) {
  /* Only the control bits are set: the thread's status flags stay its own. */
  uint32_t now = read_mxcsr();
  if ((now & ~MXCSR_STATUS) != saved->control) write_mxcsr((now & MXCSR_STATUS) | (uint32_t)saved->control);
  if (read_x87() != saved->x87) write_x87(saved->x87);
}

#elif defined(__aarch64__)
const bool cpuexec__fpenv_supported = true;

static inline uint64_t read_fpcr(void) {
  uint64_t v;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
  return v;
}
static inline void write_fpcr(uint64_t v) { __asm__ __volatile__("msr fpcr, %0" : : "r"(v)); }

void cpuexec__fpenv_capture(cpuexec__fpenv *env) {
  env->control = read_fpcr();
  env->x87 = 0;
}

void cpuexec__fpenv_restore(const cpuexec__fpenv *saved) {
  if (read_fpcr() != saved->control) write_fpcr(saved->control);
}

#else
const bool cpuexec__fpenv_supported = false;

void cpuexec__fpenv_capture(cpuexec__fpenv *env) {
  env->control = 0;
  env->x87 = 0;
}
void cpuexec__fpenv_restore(const cpuexec__fpenv *saved) { (void)saved; }
#endif

/* Setting a state is restoring it: one writer of the control bits. */
void cpuexec__fpenv_apply(const cpuexec__fpenv *want, cpuexec__fpenv *saved) {
  cpuexec__fpenv_capture(saved);
  cpuexec__fpenv_restore(want);
}
