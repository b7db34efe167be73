// cpuexec-tbb: the oneTBB guard's module, built against the installed oneTBB
// headers and linked with libtbb. libcpuexec itself neither links oneTBB nor
// contains C++: it loads this module (src/guards/guard_libraries.c) only
// when the process has already loaded oneTBB's libtbb.so.12, and only when
// the module's libtbb is that one.
//
// cpuexec_tbb_shim_call runs one call (a participant's whole share, or one
// callback: src/executor/participant.h) inside a task_arena of one thread
// (max_concurrency 1, its one slot reserved for the caller), one arena per
// thread, made at the thread's first call and destroyed when it exits. A
// tbb::parallel_for inside the callback runs in that arena: on the
// callback's thread only, asking oneTBB for no worker, so none is started,
// woken or sent later; other threads' oneTBB use is untouched.
#include <cstdint>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

extern "C" {

typedef int (*cpuexec_tbb_range_fn)(void *ctx, int64_t begin, int64_t end);

// The module's interface version, checked by libcpuexec.
__attribute__((visibility("default"))) int cpuexec_tbb_shim_abi(void) { return 1; }

// An entry point of the libtbb this module is bound to (libcpuexec checks
// that it is the process's).
__attribute__((visibility("default"))) const void *cpuexec_tbb_shim_libtbb(void) {
  void (*create)(tbb::detail::d1::global_control &) = &tbb::detail::r1::create;
  return reinterpret_cast<const void *>(create);
}

__attribute__((visibility("default"))) int cpuexec_tbb_shim_call(cpuexec_tbb_range_fn fn, void *ctx, int64_t begin,
                                                                 int64_t end) {
  static thread_local tbb::task_arena arena(1, 1);
  int rc = 0;
  arena.execute([&] { rc = fn(ctx, begin, end); });
  return rc;
}

}  // extern "C"
