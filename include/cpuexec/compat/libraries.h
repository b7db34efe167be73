/** @file
 * libcpuexec compat: which of the threaded libraries libcpuexec has adapters
 * for the process has loaded, and whether each runs on libcpuexec.
 *
 * The libraries: "fftw" (FFTW 3's threads, any precision:
 * cpuexec/compat/fftw.h), "opencv" (cpuexec/opencv.hpp), "eigen"
 * (cpuexec/eigen.hpp) and "pthreadpool" (libcpuexec-pthreadpool, or
 * another pthreadpool). Each entry says whether
 * the library's code is in the process (its symbols are found in the
 * process's global scope, without calling it) and whether its parallel work
 * runs on libcpuexec:
 *   - fftw: cpuexec_fftw_parallel_loop has run FFTW's loops in this process;
 *   - opencv: a cpuexec::opencv::parallel_for_backend was made (it calls
 *     cpuexec_library_adapter_made("opencv")) and, when asked while the
 *     program runs, OpenCV names "cpuexec" as its parallel framework;
 *   - eigen: header-only, so its code leaves no symbol to look up: it
 *     counts as loaded, and on libcpuexec, once a cpuexec::eigen::thread_pool
 *     was made (it calls cpuexec_library_adapter_made("eigen")); a
 *     program using Eigen's own NonBlockingThreadPool cannot be seen;
 *   - pthreadpool: pthreadpool_create resolves to libcpuexec-pthreadpool.
 * `cpuexec-info --libraries-report PROGRAM [ARGS...]` prints this for a
 * program when it exits (CPUEXEC_LIBRARIES_REPORT=FILE, or "-" for stderr,
 * asks any program linked with libcpuexec for it).
 *
 * Thread safety: every function may be called from any thread. */
#ifndef CPUEXEC_COMPAT_LIBRARIES_H
#define CPUEXEC_COMPAT_LIBRARIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cpuexec/common.h>

/** One library. */
typedef struct cpuexec_library_status {
  const char *name;   /**< "fftw", "opencv", "eigen" or "pthreadpool" (static storage) */
  bool loaded;        /**< its code is in the process */
  bool on_libcpuexec; /**< its parallel work runs on libcpuexec's executors */
  uint64_t uses;      /**< fftw: loops run by the callback; opencv, eigen: adapters made; else 0 */
  char detail[200];   /**< how that was found, in words */
  uint64_t reserved_[4]; /**< zero: room for fields of later versions */
} cpuexec_library_status;

CPUEXEC_BEGIN_DECLS

/** Writes at most capacity entries and sets *count to the number there are
 * (capacity 0 sizes the array). count NULL, or entries NULL with capacity >
 * 0, is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_libraries_status(cpuexec_library_status *entries, size_t capacity, size_t *count);
/** The entries as text, one library a line. snprintf-like: returns the full
 * length and writes at most size bytes including the NUL; buf NULL with
 * size > 0 is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_libraries_describe(char *buf, size_t size);
/** For header-only adapters: notes that one was made for library ("opencv"),
 * so the status can say so even when the library can no longer be asked
 * (at exit). Unknown names and NULL are ignored. */
CPUEXEC_EXPORT void cpuexec_library_adapter_made(const char *library);
/** For header-only adapters: true when the calling thread is inside a
 * libcpuexec callback (a region's range, a task, a job pool's job), where a
 * library's parallel work runs inline on that thread; false elsewhere. */
CPUEXEC_EXPORT bool cpuexec_library_call_inline(void);

CPUEXEC_END_DECLS

#endif
