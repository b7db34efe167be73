/* ThreadSanitizer and oneTBB, for examples/tbb_arena: libtbb is not
 * instrumented, so the synchronization inside it (its task queues, the
 * arena's handoff of a task to a worker) is invisible to TSan, which then
 * reports races between the caller and oneTBB's workers on memory whose
 * handoff went through libtbb. Ignore every report with libtbb on a stack,
 * as tests/support/openmp_tsan.h does for libomp. libcpuexec's own foreign-executor
 * path is proven under TSan without oneTBB, on the plain-pthreads pool of
 * tests/test_foreign_executor.c. Linked only into the example's program. */
const char *__tsan_default_suppressions(void);
__attribute__((visibility("default"), used)) const char *__tsan_default_suppressions(void) {
  return "called_from_lib:libtbb.so.12\n"
         "race:libtbb.so.12\n";
}
