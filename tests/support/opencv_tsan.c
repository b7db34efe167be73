/* ThreadSanitizer and OpenCV, for tests/test_opencv: OpenCV and the oneTBB
 * it was built on are not instrumented, so TSan cannot see their
 * synchronization and reports races on memory handed through them; and
 * glibc's freeing of a finished thread's TLS block (_dl_deallocate_tls),
 * reused for the next thread, is reported against the finished thread's
 * last write, a handoff TSan does not model (CI saw it once in this
 * program). Ignore reports with those on a stack; libcpuexec's own paths
 * are proven under TSan by the suites that do not load OpenCV. */
const char *__tsan_default_suppressions(void);
__attribute__((visibility("default"), used)) const char *__tsan_default_suppressions(void) {
  return "called_from_lib:libtbb.so.12\n"
         "race:libtbb.so.12\n"
         "race:libopencv_core.so\n"
         "race:_dl_deallocate_tls\n";
}
