/* Recipe: libcpuexec as OpenBLAS's threads callback (doc/executor-hooks.md).
 *
 * OpenBLAS 0.3.27 and later let the application run its jobs:
 * openblas_set_threads_callback_function(cb), and each threaded call then
 * calls cb(sync, dojob, numjobs, jobdata_elsize, jobdata, dojob_data),
 * which returns void and must have run dojob(i, jobdata + i * elsize,
 * dojob_data) for every i < numjobs when it returns. OpenBLAS's level-3
 * jobs wait for each other, so they must all run at once, each on its own
 * thread: one job a participant, every participant taking part
 * (CPUEXEC_FOR_EVERY_PARTICIPANT), and OpenBLAS's thread count at most the
 * executor's. Debian 12 ships OpenBLAS 0.3.21, which has no such callback,
 * so the library here is a stand-in with its exact signatures whose jobs
 * wait for each other as level-3 jobs do. main checks every job ran once,
 * all of them at once. */
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cpuexec.h>

/* ---- the library (stand-in): OpenBLAS's callback and a threaded call ------ */

typedef void (*openblas_dojob_callback)(int thread_num, void *jobdata, int dojob_data);
typedef void (*openblas_threads_callback)(int sync, openblas_dojob_callback dojob, int numjobs,
                                          size_t jobdata_elsize, void *jobdata, int dojob_data);

static openblas_threads_callback threads_callback;
static int blas_threads = 1;
static void openblas_set_threads_callback_function(openblas_threads_callback cb) { threads_callback = cb; }
static void openblas_set_num_threads(int n) { blas_threads = n; }

typedef struct blas_job { /* one job's record; OpenBLAS's are larger, hence jobdata_elsize */
  int index_seen;
  atomic_int runs;
  double pad[5];
} blas_job;

static atomic_int arrived; /* the jobs of the call that reached the rendezvous */

static void level3_job(int thread_num, void *jobdata, int dojob_data) {
  blas_job *job = jobdata;
  job->index_seen = thread_num;
  atomic_fetch_add(&job->runs, 1);
  /* Like a level-3 job: go on only once every job of the call has started. */
  atomic_fetch_add(&arrived, 1);
  while (atomic_load(&arrived) < dojob_data) sched_yield();
}

static void blas_threaded_call(blas_job *jobs) {
  atomic_store(&arrived, 0);
  threads_callback(1, level3_job, blas_threads, sizeof(blas_job), jobs, blas_threads);
}

/* ---- the recipe ------------------------------------------------------------ */

static cpuexec_executor *blas_executor; /* the kept session's */

typedef struct blas_jobs {
  openblas_dojob_callback dojob;
  char *jobdata;
  size_t elsize;
  int dojob_data;
} blas_jobs;

static int run_jobs(void *ctx, int64_t begin, int64_t end) {
  const blas_jobs *j = ctx;
  for (int64_t i = begin; i < end; i++) j->dojob((int)i, j->jobdata + (size_t)i * j->elsize, j->dojob_data);
  return 0;
}

static void cpuexec_threads_callback(int sync, openblas_dojob_callback dojob, int numjobs, size_t jobdata_elsize,
                                     void *jobdata, int dojob_data) {
  (void)sync; /* OpenBLAS passes 1: every job is done when this returns, as here */
  blas_jobs j = {dojob, jobdata, jobdata_elsize, dojob_data};
  if (cpuexec_parallel_for_flags(blas_executor, numjobs, 1, &j, run_jobs, 0, CPUEXEC_FOR_EVERY_PARTICIPANT) != 0)
    run_jobs(&j, 0, numjobs); /* refused before any job started: the caller runs them (the fork rule) */
}

static void use_cpuexec_for_openblas(cpuexec_executor *exec) {
  blas_executor = exec;
  openblas_set_num_threads(cpuexec_executor_effective_threads(exec)); /* numjobs <= participants */
  openblas_set_threads_callback_function(cpuexec_threads_callback);
}

/* ---- the check ------------------------------------------------------------- */

int main(void) {
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = 3;
  cpuexec_session *session;
  if (cpuexec_session_create(&policy, &session) != 0) {
    fprintf(stderr, "threads_callback: %s\n", cpuexec_error_message());
    return 1;
  }
  use_cpuexec_for_openblas(cpuexec_session_executor(session));
  blas_job jobs[3];
  int wrong = 0;
  for (int call = 0; call < 100; call++) { /* a hang here: the jobs did not run at once */
    for (int i = 0; i < 3; i++) {
      jobs[i].index_seen = -1;
      atomic_init(&jobs[i].runs, 0);
    }
    blas_threaded_call(jobs);
    for (int i = 0; i < 3; i++) wrong += jobs[i].index_seen != i || atomic_load(&jobs[i].runs) != 1;
  }
  cpuexec_session_destroy(session);
  printf("threads_callback: 100 calls of 3 jobs that wait for each other; %d jobs not run exactly once\n", wrong);
  return wrong == 0 ? 0 : 1;
}
