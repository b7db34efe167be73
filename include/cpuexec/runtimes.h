/** @file
 * libcpuexec: the threaded libraries found in the process, and whether the
 * built-in guards keep their calls inside callbacks on the callback's thread.
 * See doc/runtime-guards.md.
 *
 * libcpuexec links none of these libraries. It looks for them among the
 * objects the process has loaded (at load, and again when the loader's list
 * changed: at every scope enter, on a thread's first region and every 64th
 * after it, and on every call below), and governs each one it knows:
 *   - OpenMP runtimes (libomp, libgomp): per thread, by the OpenMP guard
 *     (<cpuexec/interop.h>);
 *   - OpenBLAS: the pthreads build's thread count is one setting for the
 *     whole process, so it is 1 while at least one thread runs callbacks,
 *     and the value it had comes back when the last leaves (top-level calls
 *     on other threads run on one thread meanwhile, never longer); the OpenMP
 *     build is kept inline by the OpenMP guard; the serial build needs nothing;
 *   - BLIS: 0.x keeps one runtime for the process, governed like OpenBLAS's
 *     pthreads build (every loop's ways set to 1); 1.x and 2.x built with
 *     thread-local storage are set per participant; OpenMP builds of 0.x
 *     are kept inline by the OpenMP guard;
 *   - oneTBB (binary interface 12): a global_control of
 *     max_allowed_parallelism 1 is held while any participant of
 *     libcpuexec's own executors runs callbacks, so a tbb::parallel_for
 *     inside a callback starts and wakes no TBB worker (participants of
 *     foreign executors do not hold it: the foreign pool may be oneTBB's);
 *   - MKL is found and listed, not governed.
 * A library the guards cannot govern (MKL, a version they do not know, a
 * build without the calls they need) is listed with the reason. */
#ifndef CPUEXEC_RUNTIMES_H
#define CPUEXEC_RUNTIMES_H

#include <cpuexec/common.h>

/** Which kind of library an entry is. */
typedef enum cpuexec_runtime_family {
  CPUEXEC_RUNTIME_OPENMP = 0, /**< an OpenMP runtime (libomp, libiomp5, libgomp) */
  CPUEXEC_RUNTIME_OPENBLAS,   /**< OpenBLAS (any build) */
  CPUEXEC_RUNTIME_BLIS,       /**< BLIS (any build) */
  CPUEXEC_RUNTIME_TBB,        /**< oneTBB, or the legacy TBB */
  CPUEXEC_RUNTIME_MKL         /**< Intel MKL / oneMKL */
} cpuexec_runtime_family;

/** How an entry's calls inside callbacks are kept on the callback's thread. */
typedef enum cpuexec_runtime_guard {
  CPUEXEC_GUARD_PER_THREAD = 0, /**< its per-thread setting is one thread on each participant, restored when it leaves */
  CPUEXEC_GUARD_PROCESS_WIDE,   /**< its process-wide setting is one thread while any thread runs callbacks */
  CPUEXEC_GUARD_THROUGH_OPENMP, /**< it threads with OpenMP, which the OpenMP guard keeps to one thread */
  CPUEXEC_GUARD_SERIAL_BUILD,   /**< a build that starts no thread: nothing to keep inline */
  CPUEXEC_GUARD_NONE            /**< not governed: reason says why */
} cpuexec_runtime_guard;

/** One library found in the process (cpuexec_runtimes_get()). */
typedef struct cpuexec_runtime_info {
  cpuexec_runtime_family family; /**< which kind of library */
  cpuexec_runtime_guard guard;   /**< how it is governed */
  bool governed;                 /**< guard is not CPUEXEC_GUARD_NONE */
  char name[32];                 /**< "libomp", "libgomp", "OpenBLAS", "BLIS", "oneTBB", "MKL" */
  char version[32];              /**< as the library reports it, or "" */
  char threading[16];            /**< its threading: "pthreads", "openmp", "serial", "tbb", or "" */
  char path[256];                /**< the object it was found in */
  char reason[256];              /**< in words: what the guard does with it, or why nothing */
  uint64_t reserved_[4];
} cpuexec_runtime_info;

CPUEXEC_BEGIN_DECLS

/** The libraries found, OpenMP runtimes first, then in the order found.
 * Looks for newly loaded ones first. Writes at most capacity entries and
 * sets *count to the number available (capacity 0 sizes the array). count
 * NULL, or entries NULL with capacity > 0, is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_runtimes_get(cpuexec_runtime_info *entries, size_t capacity, size_t *count);

/** The same list as text, one library a line ("OpenBLAS 0.3.21 (pthreads)
 * /path: governed process-wide: ..."), or a line saying none was found.
 * snprintf-like: returns the full length; writes at most size bytes
 * including the NUL. buf NULL with size > 0 is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_runtimes_describe(char *buf, size_t size);

CPUEXEC_END_DECLS

#endif
