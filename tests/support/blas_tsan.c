/* ThreadSanitizer and the BLAS builds of tests/test_guard_blas.c: OpenBLAS,
 * BLIS and the libgomp their OpenMP builds use are not instrumented, so the
 * way a dgemm hands its result from the library's threads back to its caller
 * (the libraries' own spin-waits and barriers) is invisible to TSan, which
 * then reports, now and then, the caller's check of C against the library
 * threads' writes into it. Ignore every race with one of them on a stack.
 * Not called_from_lib, as tests/support/tbb_tsan.c has for libtbb: the
 * guards call into the libraries holding their locks, and TSan would lose
 * the libraries' mutexes. What the guards themselves do (src/guards/,
 * instrumented) stays checked. Linked into the guard tests. */
const char *__tsan_default_suppressions(void);
__attribute__((visibility("default"), used)) const char *__tsan_default_suppressions(void) {
  return "race:libopenblas.so.0\n"
         "race:libblis.so.4\n"
         "race:libgomp.so.1\n";
}
