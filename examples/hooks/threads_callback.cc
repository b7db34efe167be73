// Recipe: libcpuexec as OpenBLAS's threads callback, in C++
// (doc/executor-hooks.md).
//
// The callback of examples/hooks/threads_callback.c written with
// cpuexec.hpp: OpenBLAS's jobs wait for each other, so the executor's
// policy makes every participant take part in every region
// (participation every_participant) and OpenBLAS runs at most as many jobs
// as the executor has participants. A library error is thrown as
// cpuexec::error, which must not cross OpenBLAS's C frames: the callback
// catches it and runs the jobs on the caller. The library is the same
// stand-in (Debian 12's OpenBLAS 0.3.21 has no threads callback).
#include <cpuexec.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <thread>

namespace library { // ---- the library (stand-in): OpenBLAS's callback and a threaded call

extern "C" {
typedef void (*openblas_dojob_callback)(int thread_num, void *jobdata, int dojob_data);
typedef void (*openblas_threads_callback)(int sync, openblas_dojob_callback dojob, int numjobs,
                                          size_t jobdata_elsize, void *jobdata, int dojob_data);
}
openblas_threads_callback threads_callback;
int blas_threads = 1;
void openblas_set_threads_callback_function(openblas_threads_callback cb) { threads_callback = cb; }
void openblas_set_num_threads(int n) { blas_threads = n; }

struct blas_job {
  int index_seen = -1;
  std::atomic<int> runs{0};
  double pad[5] = {};
};
std::atomic<int> arrived{0};

extern "C" void level3_job(int thread_num, void *jobdata, int dojob_data) {
  auto *job = static_cast<blas_job *>(jobdata);
  job->index_seen = thread_num;
  job->runs++;
  arrived++; // like a level-3 job: go on only once every job of the call has started
  while (arrived.load() < dojob_data) std::this_thread::yield();
}

void threaded_call(blas_job *jobs) {
  arrived = 0;
  threads_callback(1, level3_job, blas_threads, sizeof(blas_job), jobs, blas_threads);
}

} // namespace library

// ---- the recipe -------------------------------------------------------------

cpuexec::executor_ref blas_executor; // a session's, whose policy is participation every_participant

extern "C" void cpuexec_threads_callback(int, library::openblas_dojob_callback dojob, int numjobs, size_t elsize,
                                         void *jobdata, int dojob_data) {
  auto job = [&](int64_t i) {
    dojob(static_cast<int>(i), static_cast<char *>(jobdata) + elsize * static_cast<size_t>(i), dojob_data);
  };
  try {
    cpuexec::parallel_for(blas_executor, numjobs, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) job(i);
    });
  } catch (const cpuexec::error &) {
    for (int64_t i = 0; i < numjobs; i++) job(i); // refused before any job started (the fork rule)
  }
}

// ---- the check --------------------------------------------------------------

int main() {
  cpuexec::session session(cpuexec::policy().num_threads(3).participation_rule(
      cpuexec::participation::every_participant));
  blas_executor = session.executor();
  library::openblas_set_num_threads(blas_executor.effective_threads()); // numjobs <= participants
  library::openblas_set_threads_callback_function(cpuexec_threads_callback);
  int wrong = 0;
  for (int call = 0; call < 100; call++) { // a hang here: the jobs did not run at once
    library::blas_job jobs[3];
    library::threaded_call(jobs);
    for (int i = 0; i < 3; i++) wrong += jobs[i].index_seen != i || jobs[i].runs.load() != 1;
  }
  std::printf("threads_callback (C++): 100 calls of 3 jobs that wait for each other; %d jobs not run exactly once\n",
              wrong);
  return wrong == 0 ? 0 : 1;
}
