/** @file opencv.hpp
 * libcpuexec under OpenCV: cv::parallel::ParallelForAPI on an executor.
 *
 * OpenCV 4.5.5 and later let an application replace the threads behind
 * cv::parallel_for_ (and so behind every parallel OpenCV function) with its
 * own backend. This header-only backend runs them on a libcpuexec executor;
 * OpenCV is used as installed, nothing is rebuilt, and libcpuexec gains no
 * build dependency (include this header after, or instead of, OpenCV's
 * headers; link with `pkg-config --libs cpuexec opencv4`):
 *
 * @code
 * #include <cpuexec/opencv.hpp>
 * cpuexec::opencv::install();   // once, in main(), before other threads use OpenCV
 * @endcode
 *
 * What each call of the interface does:
 *   - parallel_for(tasks, body, data) is OpenCV's serial loop
 *     `body(0, tasks, data)` split into stripes: body(begin, end, data) over
 *     contiguous stripe ranges covering [0, tasks) exactly once, on the
 *     executor with the rules of cpuexec_parallel_for() (the caller is
 *     participant 0, at most min(tasks, the cap, the executor's effective
 *     threads) participants, nobody waits for a worker that has not
 *     started). It returns when every stripe has returned. An exception a
 *     body throws stops stripes that have not started and is rethrown on the
 *     caller once the started ones have returned. Called from inside a
 *     libcpuexec callback, every stripe runs inline on the calling thread.
 *     When the executor cannot run at all (inherited across fork()), the
 *     stripes run serially on the caller;
 *   - the executor is the one given to the constructor, or (nullptr) at each
 *     call the executor installed on the calling thread (a session run or
 *     scope), else the process default pool: so each session thread's
 *     OpenCV calls run on its own session;
 *   - getNumThreads(): the participants a parallel_for made now from this
 *     thread may use: min(the cap, that executor's effective threads);
 *   - setNumThreads(n): caps the participants at n (n <= 0: no cap, the
 *     executor's limit); returns the previous cap. cv::setNumThreads(n)
 *     calls it, and OpenCV itself runs serially when n <= 1;
 *   - getThreadNum(): inside a stripe, the participant index running it
 *     (0 = the caller, below getNumThreads()); outside one, 0 (like
 *     OpenCV's own backends).
 * install() passes propagateNumThreads = false, so the participants follow
 * each call's executor; OpenCV's own thread count (cv::setNumThreads()
 * before install(), else the processors OpenCV sees) only decides whether
 * OpenCV parallelises at all (more than 1).
 *
 * OpenCV 4.x runs a cv::parallel_for_ made while another is running anywhere
 * in the process serially on its caller (one process-wide flag): two threads
 * calling OpenCV at once get correct results, one of them serially, with
 * this backend as with OpenCV's own.
 *
 * Thread safety: every member may be called from any thread at once. */
#ifndef CPUEXEC_OPENCV_HPP
#define CPUEXEC_OPENCV_HPP

#include <cpuexec.h>
#include <cpuexec/compat/libraries.h>

#include <opencv2/core.hpp>
#include <opencv2/core/parallel/parallel_backend.hpp>

#include <atomic>
#include <exception>
#include <memory>

namespace cpuexec {
namespace opencv {

/** cv::parallel::ParallelForAPI on a libcpuexec executor (see the top of this file). */
class parallel_for_backend : public cv::parallel::ParallelForAPI {
public:
  /** exec: the executor to run on, borrowed (it must outlive the backend's
   * use by OpenCV); nullptr: at each call, the calling thread's installed
   * executor, else the process default pool. */
  explicit parallel_for_backend(cpuexec_executor *exec = nullptr) noexcept : exec_(exec), cap_(0) {
    cpuexec_library_adapter_made("opencv"); /* for cpuexec_libraries_status() */
  }
  ~parallel_for_backend() override {}

  /** Runs body over the stripes [0, tasks) on the executor. */
  void parallel_for(int tasks, FN_parallel_for_body_cb_t body, void *data) override {
    if (tasks <= 0 || body == nullptr) return;
    call c(body, data);
    int cap = cap_.load(std::memory_order_relaxed);
    int rc = cpuexec_parallel_for(executor(), tasks, 1, &c, &call::run, cap > 0 ? cap : 0);
    if (c.error) std::rethrow_exception(c.error);
    if (rc != 0) /* nothing ran: the executor could not (no body failed) */
      (void)cpuexec_parallel_for(nullptr, tasks, tasks, &c, &call::run, 1);
    if (c.error) std::rethrow_exception(c.error);
  }

  /** The participant index inside a stripe; 0 outside. */
  int getThreadNum() const override { return cpuexec_participant_index(); }

  /** min(the cap, the effective threads of the executor a call made now would use). */
  int getNumThreads() const override {
    int threads = cpuexec_executor_effective_threads(executor());
    int cap = cap_.load(std::memory_order_relaxed);
    return cap > 0 && cap < threads ? cap : threads;
  }

  /** Caps the participants at n (n <= 0: no cap); returns the previous cap. */
  int setNumThreads(int n) override { return cap_.exchange(n > 0 ? n : 0, std::memory_order_relaxed); }

  /** "cpuexec". */
  const char *getName() const override { return "cpuexec"; }

private:
  struct call {
    call(FN_parallel_for_body_cb_t b, void *d) noexcept : body(b), data(d), failed(false) {}
    FN_parallel_for_body_cb_t body;
    void *data;
    std::atomic<bool> failed;
    std::exception_ptr error; /* written once, by the participant that set failed */
    static int run(void *ctx, int64_t begin, int64_t end) noexcept {
      call *c = static_cast<call *>(ctx);
      try {
        c->body(static_cast<int>(begin), static_cast<int>(end), c->data);
        return 0;
      } catch (...) {
        if (!c->failed.exchange(true)) c->error = std::current_exception();
        return 1;
      }
    }
  };

  cpuexec_executor *executor() const noexcept {
    if (exec_ != nullptr) return exec_;
    cpuexec_executor *exec = nullptr;
    (void)cpuexec_kernel_executor("opencv", CPUEXEC_EXECUTOR_SUPPORTED, &exec);
    return exec; /* nullptr (no pool could start): serial on the caller */
  }

  cpuexec_executor *exec_;
  std::atomic<int> cap_;
};

/** Makes a parallel_for_backend on exec (nullptr: each call's installed
 * executor, else the default pool) OpenCV's parallel_for backend, with
 * propagateNumThreads = false. Not thread-safe, like
 * cv::parallel::setParallelForBackend(): call it before other threads use
 * OpenCV. Returns the backend. */
inline std::shared_ptr<parallel_for_backend> install(cpuexec_executor *exec = nullptr) {
  std::shared_ptr<parallel_for_backend> backend = std::make_shared<parallel_for_backend>(exec);
  cv::parallel::setParallelForBackend(backend, false);
  return backend;
}

} // namespace opencv
} // namespace cpuexec

#endif
