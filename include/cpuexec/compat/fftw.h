/** @file
 * libcpuexec compat: FFTW's threads run on a libcpuexec executor.
 *
 * FFTW's threads library (libfftw3_threads, 3.3.9 and later) lets the
 * application run its parallel loops: fftw_threads_set_callback(parallel_loop,
 * data) replaces the threads FFTW would start with a function that must run
 *
 *     for (int i = 0; i < njobs; i++) work(jobdata + elsize * i);
 *
 * possibly in parallel, and return when every job has returned.
 * cpuexec_fftw_parallel_loop() is such a function, with FFTW's exact
 * signature, so this header needs no FFTW header and libcpuexec gains no
 * build dependency:
 *
 *     fftw_init_threads();
 *     fftw_threads_set_callback(cpuexec_fftw_parallel_loop, NULL);
 *     fftw_plan_with_nthreads(cpuexec_executor_effective_threads(cpuexec_session_executor(session)));
 *
 * The same function serves every precision (fftwf_, fftwl_, fftwq_). Set
 * the callback before the first plan executes on more than one thread: FFTW
 * starts its own threads at that point otherwise, and keeps them.
 *
 * Where the jobs run:
 *   - data NULL: on cpuexec_kernel_executor("fftw", CPUEXEC_EXECUTOR_SUPPORTED)
 *     at the time of each call: the executor installed on the calling thread
 *     (a session run or scope), else the process default pool; so two
 *     session threads executing plans at once each run on their own session;
 *   - data non-NULL: a cpuexec_executor * the caller keeps alive for as long
 *     as FFTW may call back (until fftw_threads_set_callback() replaces it,
 *     or fftw_cleanup_threads());
 *   - on the executor, with the rules of cpuexec_parallel_for(): the caller
 *     is participant 0, at most min(njobs, the executor's effective threads)
 *     participants, every job exactly once, nobody waits for a worker that has
 *     not started (an idle participant runs the jobs that are left);
 *   - called from inside a libcpuexec callback (an FFTW plan executed inside
 *     a parallel region), every job runs inline on the calling thread;
 *   - njobs of 1 or less, or an executor that cannot run here (inherited across
 *     fork(), no default pool could start): the jobs run serially on the
 *     calling thread.
 * It returns only when every job has returned, and never fails: FFTW's
 * callback has no error return, and the jobs always run. FFTW's jobs are
 * independent (no job waits for another), so the serial fallback computes
 * the same transform; which thread runs which job does not change any
 * result, which is bit-identical to FFTW's own threads for the same plan.
 *
 * Thread safety: may be called from any number of threads at once (FFTW
 * executes plans from several threads at once; planning is FFTW's business:
 * serialise it, or call fftw_make_planner_thread_safe()). */
#ifndef CPUEXEC_COMPAT_FFTW_H
#define CPUEXEC_COMPAT_FFTW_H

#include <stddef.h>

#include <cpuexec/common.h>

CPUEXEC_BEGIN_DECLS

/** FFTW's parallel_loop callback: runs work(jobdata + elsize * i) for every
 * i in [0, njobs) on the executor `data` (a cpuexec_executor *), or with data
 * NULL on the calling thread's installed executor, else the process default
 * pool (see the top of this file). work NULL or njobs <= 0 runs nothing. */
CPUEXEC_EXPORT void cpuexec_fftw_parallel_loop(void *(*work)(char *), char *jobdata, size_t elsize, int njobs,
                                               void *data);

CPUEXEC_END_DECLS

#endif
