/* FFTW's parallel_loop callback on a libcpuexec executor (cpuexec/compat/fftw.h).
 *
 * The participants claim jobs one at a time from a shared cursor rather than
 * running the ranges cpuexec_parallel_for() hands them: a job claimed is run
 * exactly once whatever happened to the region, so when the executor cannot
 * run it at all (inherited across fork()) or runs only part of it (a foreign
 * pool that failed), the caller runs whatever is left, and FFTW's loop always
 * completes. FFTW's jobs are a handful of long blocks (one per thread it
 * planned for), so one atomic increment per job costs nothing measurable. */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cpuexec/executor.h>
#include <cpuexec/session.h>

#include <cpuexec/compat/fftw.h>

#include "libraries_private.h"

typedef struct fftw_loop {
  void *(*work)(char *);
  char *jobdata;
  size_t elsize;
  int64_t njobs;
  atomic_int_fast64_t next; /* the next job to claim; any participant, relaxed:
                               the region's completion publishes the jobs' writes */
} fftw_loop;

static void run_jobs(fftw_loop *loop) {
  for (;;) {
    int64_t i = atomic_fetch_add_explicit(&loop->next, 1, memory_order_relaxed);
    if (i >= loop->njobs) return;
    (void)loop->work(loop->jobdata + loop->elsize * (size_t)i);
  }
}

static int fftw_range(void *ctx, int64_t begin, int64_t end) {
  (void)begin;
  (void)end;
  run_jobs(ctx);
  return 0;
}

CPUEXEC_EXPORT void cpuexec_fftw_parallel_loop(void *(*work)(char *), char *jobdata, size_t elsize, int njobs,
                                               void *data) {
  if (!work || njobs <= 0) return;
  atomic_fetch_add_explicit(&cpuexec__fftw_loops, 1, memory_order_relaxed);
  fftw_loop loop = {work, jobdata, elsize, njobs, 0};
  cpuexec_executor *exec = data;
  if (!exec && njobs > 1) (void)cpuexec_kernel_executor("fftw", CPUEXEC_EXECUTOR_SUPPORTED, &exec);
  /* exec NULL (one job, or no pool) is the serial loop on the caller, inside a
   * region so that parallel calls made by the jobs stay inline. */
  if (cpuexec_parallel_for(exec, njobs, 1, &loop, fftw_range, 0) != 0 || atomic_load(&loop.next) < njobs)
    (void)cpuexec_parallel_for(NULL, 1, 1, &loop, fftw_range, 1);
}
