/* ThreadSanitizer and the OpenMP runtimes: libomp is not instrumented, so
 * the synchronization inside it (its own locks, its workers' barriers) is
 * invisible to TSan, which then reports races between libomp's threads on
 * libomp's own memory. Those reports are about libomp, not about us: ignore
 * what libomp does internally (called_from_lib). And the OpenMP kernels are
 * built by the OpenMP compiler without instrumentation, but a libc call in
 * them is still seen (gcc turns a zeroing loop into memset): its ordering
 * by libomp's fork and join is not, so races in gcc's outlined region
 * bodies (name._omp_fn.N) are ignored too. Included by exactly one file of
 * each OpenMP test program. */
#ifndef CPUEXEC_TESTS_OPENMP_TSAN_H
#define CPUEXEC_TESTS_OPENMP_TSAN_H

const char *__tsan_default_suppressions(void);
__attribute__((visibility("default"), used)) const char *__tsan_default_suppressions(void) {
  return "called_from_lib:libomp.so.5\n"
         "race:libomp.so.5\n"
         "race:._omp_fn.\n";
}

#endif
