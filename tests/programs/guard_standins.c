/* Stand-ins for the libraries the runtime guards look for, built as small
 * shared objects (mk/guards.am), one per macro, for the rules the real
 * packages cannot show on Debian 12 (tests/test_guard_rules.c):
 *   STANDIN_OPENBLAS   OpenBLAS 0.3.21, pthreads build: a process-wide count
 *                      that records how often it was set;
 *   STANDIN_OPENBLAS_NEXT  "OpenBLAS 0.4.0": a version the guard does not know;
 *   STANDIN_BLIS_TLS   BLIS 1.0 with thread-local storage: per-thread runtime;
 *   STANDIN_MKL        MKL: found, never governed;
 *   STANDIN_TBB_LEGACY TBB 2020 (binary interface 11): not governed.
 * Each also exports standin_* calls the test reads them through. */
#include <stdint.h>
#include <stdio.h>

#define EXPORT __attribute__((visibility("default")))

#if defined(STANDIN_OPENBLAS) || defined(STANDIN_OPENBLAS_NEXT)
EXPORT int blas_cpu_number = 4;
static int sets;
EXPORT int openblas_get_parallel(void) { return 1; }
EXPORT char *openblas_get_config(void) {
#ifdef STANDIN_OPENBLAS
  return (char *)"OpenBLAS 0.3.21 NO_AFFINITY standin MAX_THREADS=64";
#else
  return (char *)"OpenBLAS 0.4.0 NO_AFFINITY standin MAX_THREADS=64";
#endif
}
EXPORT void openblas_set_num_threads(int n) {
  __atomic_store_n(&blas_cpu_number, n, __ATOMIC_RELAXED);
  __atomic_fetch_add(&sets, 1, __ATOMIC_RELAXED);
}
EXPORT int openblas_get_num_threads(void) { return __atomic_load_n(&blas_cpu_number, __ATOMIC_RELAXED); }
EXPORT int standin_sets(void) { return __atomic_load_n(&sets, __ATOMIC_RELAXED); }
#endif

#ifdef STANDIN_BLIS_TLS
/* Thread-local, as BLIS 1.0 keeps its runtime: num_threads, then the ways. */
static __thread int64_t rntm[6] = {4, -1, -1, -1, -1, -1};
EXPORT const char *bli_info_get_version_str(void) { return "1.0"; }
EXPORT int64_t bli_info_get_enable_threading(void) { return 1; }
EXPORT int64_t bli_info_get_enable_pthreads(void) { return 1; }
EXPORT int64_t bli_info_get_enable_openmp(void) { return 0; }
EXPORT int64_t bli_info_get_enable_tls(void) { return 1; }
EXPORT void bli_thread_set_num_threads(int64_t n) { rntm[0] = n; }
EXPORT void bli_thread_set_ways(int64_t jc, int64_t pc, int64_t ic, int64_t jr, int64_t ir) {
  rntm[1] = jc, rntm[2] = pc, rntm[3] = ic, rntm[4] = jr, rntm[5] = ir;
}
EXPORT int64_t bli_thread_get_num_threads(void) { return rntm[0]; }
EXPORT int64_t bli_thread_get_jc_nt(void) { return rntm[1]; }
EXPORT int64_t bli_thread_get_pc_nt(void) { return rntm[2]; }
EXPORT int64_t bli_thread_get_ic_nt(void) { return rntm[3]; }
EXPORT int64_t bli_thread_get_jr_nt(void) { return rntm[4]; }
EXPORT int64_t bli_thread_get_ir_nt(void) { return rntm[5]; }
/* What a BLIS call on this thread would use: ways take precedence. */
EXPORT int64_t standin_blis_threads(void) {
  int64_t ways = 1;
  int any = 0;
  for (int i = 1; i < 6; i++)
    if (rntm[i] > 0) ways *= rntm[i], any = 1;
  return any ? ways : rntm[0];
}
#endif

#ifdef STANDIN_MKL
EXPORT void mkl_get_version_string(char *buf, int len) {
  snprintf(buf, (size_t)len, "Intel(R) oneAPI Math Kernel Library Version 2024.0-Product Build 20231011");
}
EXPORT int mkl_get_max_threads(void) { return 4; }
#endif

#ifdef STANDIN_TBB_LEGACY
EXPORT int TBB_runtime_interface_version(void) { return 11102; }
EXPORT const char *TBB_runtime_version(void) { return "2020.3"; }
#endif
