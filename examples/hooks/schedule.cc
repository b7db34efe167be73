// Recipe: libcpuexec as a C++ library's thread-pool interface
// (doc/executor-hooks.md).
//
// The library (a stand-in) declares Eigen's ThreadPoolInterface, with its
// exact signatures, and runs a loop as Eigen's parallelFor does: it
// schedules closures and waits for them on a barrier of its own. The
// recipe is a class over cpuexec::task_group: a closure that cannot be
// queued (no memory, a group inherited across fork) runs at once on the
// scheduling thread, so none is lost. The complete Eigen adapter, with
// thread ids and Eigen itself, is include/cpuexec/eigen.hpp
// (tests/test_eigen.cc). main checks every block ran exactly once and
// every closure ran on a worker.
#include <cpuexec.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace library { // ---- the library (stand-in): Eigen's interface and a loop on it

class ThreadPoolInterface {
public:
  virtual void Schedule(std::function<void()> fn) = 0;
  virtual void ScheduleWithHint(std::function<void()> fn, int, int) { Schedule(std::move(fn)); }
  virtual void Cancel() {}
  virtual int NumThreads() const = 0;
  virtual int CurrentThreadId() const = 0;
  virtual ~ThreadPoolInterface() {}
};

// Runs body(b) for b in [0, blocks) in NumThreads() closures and waits.
void parallel_blocks(ThreadPoolInterface &pool, int blocks, const std::function<void(int)> &body) {
  int closures = pool.NumThreads();
  std::atomic<int> next{0};
  std::mutex m;
  std::condition_variable cv;
  int left = closures;
  for (int c = 0; c < closures; c++)
    pool.Schedule([&] {
      for (int b; (b = next++) < blocks;) body(b);
      std::lock_guard<std::mutex> hold(m);
      if (--left == 0) cv.notify_one();
    });
  std::unique_lock<std::mutex> lock(m);
  cv.wait(lock, [&] { return left == 0; });
}

} // namespace library

// ---- the recipe -------------------------------------------------------------

class cpuexec_thread_pool final : public library::ThreadPoolInterface {
public:
  explicit cpuexec_thread_pool(cpuexec::executor_ref exec) : exec_(exec), group_(exec) {}
  void Schedule(std::function<void()> fn) override {
    try {
      group_.run(fn);
    } catch (...) {
      fn(); // not queued (no memory, a group inherited across fork): run it here, never lose it
    }
  }
  int NumThreads() const override { return exec_.effective_threads(); }
  int CurrentThreadId() const override { return -1; } // no ids here: include/cpuexec/eigen.hpp numbers threads

private:
  cpuexec::executor_ref exec_;
  cpuexec::task_group group_; // its destructor waits for the closures
};

// ---- the check --------------------------------------------------------------

int main() {
  cpuexec::session session(cpuexec::policy().num_threads(3));
  const int blocks = 10000;
  std::vector<std::atomic<int>> runs(blocks);
  std::atomic<int> on_caller{0};
  const std::thread::id caller = std::this_thread::get_id();
  {
    cpuexec_thread_pool pool(session.executor());
    library::parallel_blocks(pool, blocks, [&](int b) {
      runs[static_cast<size_t>(b)]++;
      if (std::this_thread::get_id() == caller) on_caller++;
    });
  }
  int wrong = 0;
  for (auto &r : runs) wrong += r.load() != 1;
  std::printf("schedule (C++): %d blocks, %d not run exactly once; %d on the scheduling thread\n", blocks, wrong,
              on_caller.load());
  return wrong == 0 && on_caller == 0 ? 0 : 1;
}
