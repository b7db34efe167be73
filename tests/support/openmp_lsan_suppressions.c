/* Linked into the OpenMP examples in the AddressSanitizer build only. The
 * guard calls omp_* on every participant, and libomp registers each thread
 * that does, allocating its per-thread structures. The process default
 * pool's workers (the examples' migrated kernels run on it outside
 * sessions) live until exit, never released; libomp's exit-time shutdown
 * frees its thread table but not the structures of threads still running,
 * which LeakSanitizer then reports as leaked. They are libomp's: ignore
 * leaks allocated inside libomp, nothing else. */
const char *__lsan_default_suppressions(void);
__attribute__((visibility("default"), used)) const char *__lsan_default_suppressions(void) {
  return "leak:libomp.so.5\n";
}
