/** @file
 * libcpuexec compat: helpers for moving a `#pragma omp parallel for` kernel
 * to cpuexec_parallel_for, one kernel at a time (doc/migrating-openmp.md).
 *
 *   \#pragma omp parallel for           CPUEXEC_RANGE_FN(name, type, ctx, i) { body }
 *   for (i = 0; i < n; i++) body        cpuexec_parallel_for(exec, n, grain, &ctx, name, 0)
 *   omp_get_thread_num()                cpuexec_omp_thread_num()
 *   omp_get_max_threads() (scratch)     cpuexec_omp_max_participants(exec)
 *   reduction(+:x)                      one cpuexec_omp_partial per participant, summed after
 *
 * Header only; needs no OpenMP compiler or runtime. Every helper is
 * thread-safe (it reads the calling thread's region state). */
#ifndef CPUEXEC_COMPAT_OMP_MIGRATE_H
#define CPUEXEC_COMPAT_OMP_MIGRATE_H

#include <cpuexec/executor.h>

CPUEXEC_BEGIN_DECLS

/** Defines `static int name(void *ctx, int64_t begin, int64_t end)`, a
 * cpuexec_range_fn that runs the body that follows once per index i in
 * [begin, end), with ctx_name a `ctx_type *`. The body is a function body:
 * `return;` skips the rest of one index (like `continue` in the loop). */
#define CPUEXEC_RANGE_FN(name, ctx_type, ctx_name, index_name)                   \
  static void name##_cpuexec_body(ctx_type *ctx_name, int64_t index_name);        \
  static int name(void *cpuexec_ctx_, int64_t cpuexec_begin_, int64_t cpuexec_end_) { \
    for (int64_t cpuexec_i_ = cpuexec_begin_; cpuexec_i_ < cpuexec_end_; cpuexec_i_++) \
      name##_cpuexec_body((ctx_type *)cpuexec_ctx_, cpuexec_i_);                  \
    return 0;                                                                     \
  }                                                                               \
  static void name##_cpuexec_body(ctx_type *ctx_name, int64_t index_name)

/** omp_get_thread_num(): this participant's index, 0 .. count - 1, stable for
 * the whole callback; 0 outside callbacks. Use it to pick scratch. */
static inline int32_t cpuexec_omp_thread_num(void) { return cpuexec_participant_index(); }
/** omp_get_num_threads() inside the loop: participants of this region. */
static inline int32_t cpuexec_omp_num_threads(void) { return cpuexec_participant_count(); }
/** omp_get_max_threads() before the loop: the most participants a region of
 * exec can have, so per-participant scratch sized with it always suffices
 * (1 for exec == NULL, which runs the loop on the caller). */
static inline int32_t cpuexec_omp_max_participants(const cpuexec_executor *exec) {
  return exec != NULL ? cpuexec_executor_effective_threads(exec) : 1;
}

/** One participant's share of a reduction, on its own cache line (false
 * sharing between participants would cost more than the reduction). */
typedef struct cpuexec_omp_partial {
  double value; /**< the participant's partial result */
  char padding_[64 - sizeof(double)];
} cpuexec_omp_partial;

CPUEXEC_END_DECLS

#endif
