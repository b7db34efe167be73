/** @file
 * libcpuexec: OpenMP interop (the OMPT tool, the inline guard, the report).
 * See doc/migrating-openmp.md.
 * The inline guard and the scope settings are one runtime hook
 * (<cpuexec/hooks.h>), registered when the library loads, so they run
 * on every participant of every executor, foreign ones included.
 *
 * What libcpuexec does about OpenMP, without linking an OpenMP runtime:
 *   - the inline guard: before every callback, on every participant, it sets
 *     omp_set_num_threads(1) and omp_set_max_active_levels(0) in every OpenMP
 *     runtime the process has loaded (libomp, libgomp), and restores the
 *     participant's own settings when the region ends; so an OpenMP region
 *     (or OpenMP-threaded BLAS) called from a callback runs inline, on the
 *     callback's thread, and starts no OpenMP worker;
 *   - sessions: while a scope is installed on a thread (outside callbacks),
 *     top-level OpenMP regions that thread starts use the executor's
 *     effective thread count, and libomp's block time follows its spin
 *     policy; both are restored when the scope is left;
 *   - detection: an OMPT tool (libomp only) counts the regions that begin
 *     inside callbacks, those that still got more than one thread, the
 *     OpenMP worker threads created, and top-level regions run inside
 *     sessions, per calling function: the list of kernels left to migrate.
 *
 * Environment: CPUEXEC_OMPT=off makes the tool decline (a chained tool then
 * takes its place); OMP_TOOL=disabled turns every OMPT tool off;
 * OMP_TOOL_LIBRARIES names a tool that libcpuexec starts after its own.
 *
 * Thread safety: every function here may be called from any thread at any
 * time; counts made concurrently with a call may or may not be included.
 * The structs are written by the library (reserved_ zeroed): allocate them
 * anywhere; later versions only use the reserved room. A NULL out, entries
 * NULL with capacity > 0, count NULL, or buf NULL with size > 0 is
 * CPUEXEC_EINVAL. */
#ifndef CPUEXEC_INTEROP_H
#define CPUEXEC_INTEROP_H

#include <cpuexec/common.h>

/** Why OpenMP detection is, or is not, live. */
typedef enum cpuexec_openmp_detection {
  CPUEXEC_OPENMP_LIVE = 0,           /**< the tool receives libomp's events */
  CPUEXEC_OPENMP_NO_RUNTIME,         /**< no OpenMP runtime is loaded */
  CPUEXEC_OPENMP_NOT_STARTED,        /**< libomp is loaded but has not run OpenMP yet */
  CPUEXEC_OPENMP_NO_OMPT,            /**< only libgomp is loaded: it has no OMPT */
  CPUEXEC_OPENMP_TOOL_DISABLED,      /**< OMP_TOOL=disabled */
  CPUEXEC_OPENMP_DECLINED,           /**< CPUEXEC_OMPT=off, or built with --disable-ompt */
  CPUEXEC_OPENMP_OTHER_TOOL,         /**< another ompt_start_tool took precedence and did not chain to ours */
  CPUEXEC_OPENMP_STARTED_BEFORE,     /**< OpenMP started before libcpuexec was loaded */
  CPUEXEC_OPENMP_INIT_FAILED,        /**< the runtime refused the tool's callbacks */
  CPUEXEC_OPENMP_FINALIZED           /**< the runtime shut the tool down */
} cpuexec_openmp_detection;

/** Where OpenMP detection stands (cpuexec_openmp_status_get()). */
typedef struct cpuexec_openmp_state {
  cpuexec_openmp_detection detection; /**< why detection is or is not live */
  bool live;            /**< detection == CPUEXEC_OPENMP_LIVE */
  bool libomp_loaded;   /**< LLVM libomp (or libiomp5) found in the process */
  bool libgomp_loaded;  /**< GCC libgomp (or another runtime) found */
  bool guard_active;    /**< a runtime was found: the inline guard drives it */
  bool chained_tool;    /**< another OMPT tool receives its callbacks through ours */
  /** Why, in words (static storage), e.g. "libgomp has no OMPT: OpenMP
   * regions are kept inline but cannot be counted". */
  const char *reason;
  char chained_tool_name[256]; /**< the chained tool's file, or "" */
  char libomp_path[256];       /**< where the runtimes were found, or "" */
  char libgomp_path[256];      /**< where libgomp was found, or "" */
  uint64_t reserved_[4];
} cpuexec_openmp_state;

/** Process-wide counts since start (or the last cpuexec_openmp_counters_reset()).
 * Region counts are made when a region ends. */
typedef struct cpuexec_openmp_counters {
  uint64_t regions_in_callbacks;       /**< regions begun inside a libcpuexec callback */
  uint64_t regions_inline;             /**< ... that ran with one thread */
  uint64_t regions_multithreaded;      /**< ... that still got more than one thread */
  uint64_t toplevel_regions_in_sessions; /**< top-level regions while an executor was installed */
  uint64_t toplevel_regions_outside;   /**< top-level regions with no executor installed */
  uint64_t nested_regions;             /**< regions inside other OpenMP regions, outside callbacks */
  uint64_t openmp_workers_created;     /**< OpenMP worker threads started by the runtime */
  uint64_t openmp_workers_ended;       /**< OpenMP worker threads that ended */
  uint64_t untracked_regions;          /**< nesting too deep to attribute */
  uint64_t report_overflow;            /**< regions whose calling function did not fit the report */
  uint64_t reserved_[6];
} cpuexec_openmp_counters;

/** One calling function (or call site, when it has no dynamic symbol). */
typedef struct cpuexec_openmp_report_entry {
  const void *codeptr;         /**< a return address inside the function that began the region */
  char function[128];          /**< its symbol (dladdr), or "" when not exported */
  char object[256];            /**< the object file holding it */
  uint64_t offset;             /**< codeptr's offset in that object (for addr2line) */
  uint64_t inline_in_callbacks;        /**< its regions inside callbacks that ran with one thread */
  uint64_t multithreaded_in_callbacks; /**< its regions inside callbacks that got more threads */
  uint64_t toplevel_in_sessions;       /**< its top-level regions while an executor was installed */
  uint64_t toplevel_outside;           /**< its top-level regions with no executor installed */
  int32_t max_requested_threads; /**< the largest team asked for */
  int32_t max_actual_threads;    /**< the largest team it got */
  uint64_t reserved_[4];
} cpuexec_openmp_report_entry;

CPUEXEC_BEGIN_DECLS

/** Writes where OpenMP detection stands to *out; looks for newly loaded
 * runtimes first. out NULL is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_openmp_status_get(cpuexec_openmp_state *out);
/** Writes the process-wide counts to *out. out NULL is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_openmp_counters_get(cpuexec_openmp_counters *out);
/** Zeroes the counters and the report's counts (counts made concurrently
 * with the reset may be kept or lost). */
CPUEXEC_EXPORT void cpuexec_openmp_counters_reset(void);

/** The report, one entry per calling function, most regions first. Writes at
 * most capacity entries and sets *count to the number available (so a call
 * with capacity 0 sizes the array). count NULL, or entries NULL with
 * capacity > 0, is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_openmp_report_get(cpuexec_openmp_report_entry *entries, size_t capacity, size_t *count);
/** The status, counters and report as text, one function a line. snprintf-like:
 * returns the full length; writes at most size bytes including the NUL.
 * buf NULL with size > 0 is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_openmp_report_describe(char *buf, size_t size);

CPUEXEC_END_DECLS

#endif
