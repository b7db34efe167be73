/* ThreadSanitizer and Eigen's own pool, for tests/test_eigen: the reference
 * the test compares against, Eigen's NonBlockingThreadPool, hands tasks
 * between threads through std::atomic_thread_fence (EventCount, RunQueue),
 * which ThreadSanitizer does not model, so it reports races on the tasks
 * and the tensors they write. Ignore reports with that pool on a stack;
 * the adapter (cpuexec/eigen.hpp) runs on libcpuexec's task groups, whose
 * synchronization TSan sees, and its cases keep every report. (No
 * ThreadSanitizer on Windows: nothing there.) */
#ifndef _WIN32
const char *__tsan_default_suppressions(void);
__attribute__((visibility("default"), used)) const char *__tsan_default_suppressions(void) {
  return "race:Eigen::ThreadPoolTempl\n"
         "race:Eigen::RunQueue\n"
         "race:Eigen::EventCount\n"
         "race:Eigen::Barrier\n";
}
#else
typedef int eigen_tsan_nothing_on_windows;
#endif
