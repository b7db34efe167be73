/* Internal: what the OpenMP interop files share.
 *
 * openmp_runtimes.c finds the OpenMP runtimes loaded in the process and
 * publishes their per-thread setters; openmp_guard.c drives them around
 * callbacks and scopes; ompt_tool.c receives OMPT events and hands each
 * finished region to openmp_report.c, which counts them and answers the
 * public cpuexec_openmp_*() queries. */
#ifndef CPUEXEC_SRC_OPENMP_INTERNAL_H
#define CPUEXEC_SRC_OPENMP_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Runtime slots. LIBOMP is the LLVM runtime (libomp.so.5, libiomp5.so, or
 * any object that defines __kmpc_fork_call); LIBGOMP is GCC's libgomp.so.1
 * (or any other object that defines the omp_* setters). */
enum { CPUEXEC__OMP_LIBOMP = 0, CPUEXEC__OMP_LIBGOMP = 1, CPUEXEC__OMP_RUNTIMES = 2 };

typedef struct cpuexec__omp_runtime {
  void (*set_num_threads)(int);
  int (*get_max_threads)(void);
  void (*set_max_active_levels)(int);
  int (*get_max_active_levels)(void);
  void (*set_blocktime)(int); /* libomp's kmp_set_blocktime; NULL elsewhere */
  int (*get_blocktime)(void);
  char path[256]; /* the object the setters live in (dladdr) */
} cpuexec__omp_runtime;

/* Slot r is filled once, then bit r of cpuexec__omp_present is set with a
 * release store; a slot never changes afterwards, because detection pins the
 * runtime with RTLD_NODELETE. Readers load the mask with acquire and call
 * only the slots it names. */
extern cpuexec__omp_runtime cpuexec__omp_runtimes[CPUEXEC__OMP_RUNTIMES];
extern _Atomic uint32_t cpuexec__omp_present;

/* Rescans the loaded objects when the loader's load/unload counts changed
 * since the last scan (or always, with force). Thread-safe; a thread that
 * finds another scanning returns at once. Returns the present mask. */
uint32_t cpuexec__openmp_detect(bool force);
/* Asks the next region begin on any thread to rescan (cheap, lock-free),
 * and tells whether one was asked for. */
void cpuexec__openmp_request_detect(void);
bool cpuexec__openmp_detect_due(void);

/* What the tool knows about itself (written by ompt_tool.c). */
typedef enum cpuexec__ompt_state {
  CPUEXEC__OMPT_NOT_ASKED = 0, /* no runtime has called our ompt_start_tool */
  CPUEXEC__OMPT_DECLINED,      /* CPUEXEC_OMPT=off */
  CPUEXEC__OMPT_STARTED,       /* ompt_start_tool returned our tool; initialize not yet called */
  CPUEXEC__OMPT_LIVE,          /* initialized, callbacks registered */
  CPUEXEC__OMPT_INIT_FAILED,   /* initialize could not register the callbacks */
  CPUEXEC__OMPT_FINALIZED      /* the runtime shut the tool down */
} cpuexec__ompt_state;

extern _Atomic int cpuexec__ompt_tool_state;
/* 1 when a chained tool (OMP_TOOL_LIBRARIES or found after us) initialized. */
extern _Atomic int cpuexec__ompt_chained;
extern char cpuexec__ompt_chained_name[256];
/* True when this build defines ompt_start_tool. */
extern const bool cpuexec__ompt_built;

/* Where an OpenMP region began, decided at parallel_begin. */
typedef enum cpuexec__omp_region_kind {
  CPUEXEC__OMP_IN_CALLBACK = 0,  /* inside a libcpuexec callback */
  CPUEXEC__OMP_TOP_IN_SESSION,   /* top level, an executor installed on the thread */
  CPUEXEC__OMP_TOP_OUTSIDE,      /* top level, no executor installed */
  CPUEXEC__OMP_NESTED            /* inside another OpenMP region, outside callbacks */
} cpuexec__omp_region_kind;

/* cpuexec__openmp_record_region(), called by the tool when a region ends,
 * is inline: src/openmp/openmp_counts.h. */
/* Called by the tool when an OpenMP worker thread starts or ends. */
void cpuexec__openmp_record_thread(int thread_type, bool begin);
/* Regions whose begin/end pairing was lost (nesting deeper than the tool tracks). */
void cpuexec__openmp_record_untracked(void);

#endif
