/** @file eigen.hpp
 * libcpuexec under Eigen: Eigen::ThreadPoolInterface on an executor's tasks.
 *
 * Eigen's Tensor module runs its parallel work on any
 * Eigen::ThreadPoolInterface handed to Eigen::ThreadPoolDevice. This
 * header-only pool runs it on a libcpuexec executor's workers through a task
 * group (cpuexec/tasks.h); Eigen is used as installed and libcpuexec gains no
 * build dependency (define EIGEN_USE_THREADS and include Eigen's Tensor
 * header as usual; `pkg-config --cflags eigen3`):
 *
 * @code
 * #include <cpuexec/eigen.hpp>
 * cpuexec::eigen::thread_pool pool;              // the calling thread's executor
 * Eigen::ThreadPoolDevice device(&pool, pool.NumThreads());
 * c.device(device) = a.contract(b, dims);        // on the session's workers
 * @endcode
 *
 * What each member does:
 *   - the executor is the one given to the constructor, or (nullptr) the
 *     one installed on the constructing thread (a session run or scope),
 *     else the process default pool; the pool keeps a reference on it (its
 *     task group does) until it is destroyed;
 *   - Schedule(fn) submits fn as one task of the pool's group: a worker of
 *     the executor runs it when free, through the executor's scheduler (a
 *     group holds one of its region lanes while tasks are queued). A
 *     thread that is not running one of the pool's closures (the thread
 *     evaluating an Eigen expression, which Eigen then blocks until the
 *     work is done) runs its closure itself instead when none of the pool's
 *     closures is queued, and then the queued ones, as a worker would
 *     (cpuexec_task_group_help()): Eigen's closures run on as many threads
 *     as NumThreads(), as on Eigen's own pool of that size, the executor's
 *     workers and that thread; closures scheduled by closures go to the
 *     workers. When a closure so run schedules nothing (a full reduction
 *     schedules its blocks one by one), the next ones go to the workers
 *     until as many as the workers have. So a closure must not wait for
 *     the thread that schedules it to go on, which Eigen's never do. fn
 *     also runs at once on the calling thread when that thread is inside
 *     a libcpuexec callback that is not one of this pool's tasks (a
 *     region's range, another group's task: Eigen inside a callback runs
 *     inline, on one thread), when the group's queue is full, and when the
 *     executor is serial or none could be had. A closure that throws ends
 *     the process (std::terminate), as on Eigen's own threads;
 *   - Cancel(): closures not started yet are dropped without being called,
 *     and so is every later one; running ones finish;
 *   - NumThreads(): the executor's effective threads (1 without one), the
 *     count Eigen splits its work by: the same count as a
 *     NonBlockingThreadPool of that many threads splits it the same way;
 *   - CurrentThreadId(): on an executor's worker, while it runs or after it
 *     ran one of this pool's closures, its participant index among the
 *     pool's threads, 1 .. NumThreads() - 1 in the order the workers first
 *     ran one; -1 on every other thread, including a thread that ran
 *     closures itself (one evaluating an expression, an inline call):
 *     several such threads may share one pool, and an index is one thread's.
 * The destructor waits for every closure scheduled and not cancelled.
 *
 * Limits. The pool's task group takes one of the executor's 8 region lanes
 * (cpuexec/executor.h) at its first Schedule and keeps it until the pool is
 * destroyed (a group gives its lane back only when waited on, and Eigen
 * never waits on the pool: its caller blocks in its own Barrier). So make
 * one pool per executor and keep it, rather than one per call; and when all
 * 8 lanes are held by other callers as the pool's first closure is
 * scheduled, its closures wait for a later Schedule that finds a lane free.
 *
 * Thread safety: every member may be called from any thread at once, but
 * the destructor, while no other thread schedules. */
#ifndef CPUEXEC_EIGEN_HPP
#define CPUEXEC_EIGEN_HPP

#include <cpuexec.h>
#include <cpuexec/compat/libraries.h>
#include <cpuexec/tasks.h>

#ifndef EIGEN_USE_THREADS
#define EIGEN_USE_THREADS
#endif
#include <unsupported/Eigen/CXX11/ThreadPool>

#include <atomic>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace cpuexec {
namespace eigen {

/** Eigen::ThreadPoolInterface on a libcpuexec executor (see the top of this file). */
class thread_pool : public Eigen::ThreadPoolInterface {
public:
  /** exec: the executor to run on (nullptr: the constructing thread's
   * installed executor, else the process default pool). */
  explicit thread_pool(cpuexec_executor *exec = nullptr) : serial_(next_serial()) {
    if (exec == nullptr) (void)cpuexec_kernel_executor("eigen", CPUEXEC_EXECUTOR_SUPPORTED, &exec);
    threads_ = exec != nullptr ? cpuexec_executor_effective_threads(exec) : 1;
    if (threads_ < 1) threads_ = 1;
    if (exec != nullptr && threads_ > 1 && cpuexec_task_group_create(exec, nullptr, &group_) != 0) group_ = nullptr;
    if (group_ == nullptr) threads_ = 1;
    cpuexec_library_adapter_made("eigen"); /* for cpuexec_libraries_status() */
  }
  ~thread_pool() override {
    thread_pool *outer = not_worker_;
    not_worker_ = this; /* the wait runs queued closures here: not on a worker */
    (void)cpuexec_task_group_destroy(group_);
    not_worker_ = outer;
  }
  thread_pool(const thread_pool &) = delete;
  thread_pool &operator=(const thread_pool &) = delete;

  /** Runs fn on one of the executor's workers, or here (see the top). */
  void Schedule(std::function<void()> fn) override {
    if (cancelled_.load(std::memory_order_acquire)) return;
    if (group_ == nullptr || (cpuexec_library_call_inline() && running_ != this)) {
      fn();
      return;
    }
    closure *c = new closure{this, std::move(fn), false};
    thread_pool *outer = not_worker_;
    not_worker_ = this; /* closures it runs itself (a full queue, help): not on a worker */
    int rc;
    if (runs_here()) {
      uint64_t before = submitted_.load(std::memory_order_relaxed);
      rc = cpuexec_task_group_help(group_, c, &closure::run); /* fn here, then the queued ones */
      if (rc == 0 && submitted_.load(std::memory_order_relaxed) == before) {
        under_leaf_.store(0, std::memory_order_relaxed); /* fn scheduled nothing: blocks come one by one */
        leaf_.store(true, std::memory_order_relaxed);
      }
    } else {
      c->queued = true;
      queued_.fetch_add(1, std::memory_order_acq_rel);
      submitted_.fetch_add(1, std::memory_order_relaxed);
      if (leaf_.load(std::memory_order_relaxed)) under_leaf_.fetch_add(1, std::memory_order_relaxed);
      rc = cpuexec_task_group_submit(group_, c, &closure::run);
    }
    not_worker_ = outer;
    if (rc != 0) { /* cannot happen with a group and a task; keep Eigen's work done */
      if (c->queued) queued_.fetch_sub(1, std::memory_order_acq_rel);
      std::function<void()> f = std::move(c->fn);
      delete c;
      f();
    }
  }

  /** Drops every closure not started, now and later. */
  void Cancel() override { cancelled_.store(true, std::memory_order_release); }

  /** The executor's effective threads (1 without one). */
  int NumThreads() const override { return threads_; }

  /** 1 .. NumThreads() - 1 on the executor's workers that ran this pool's
   * closures; -1 elsewhere. */
  int CurrentThreadId() const override {
    for (const slot &s : ids_)
      if (s.serial == serial_) return s.id;
    return -1;
  }

private:
  struct closure {
    thread_pool *pool;
    std::function<void()> fn;
    bool queued; /* given to the workers: counted in queued_ until it starts */
    static int run(void *ctx) noexcept {
      closure *c = static_cast<closure *>(ctx);
      thread_pool *p = c->pool;
      if (c->queued) p->queued_.fetch_sub(1, std::memory_order_acq_rel);
      if (!p->cancelled_.load(std::memory_order_acquire)) {
        if (not_worker_ != p) p->note_worker();
        thread_pool *outer = running_;
        running_ = p;
        c->fn(); /* noexcept: a throwing closure terminates, as on Eigen's threads */
        running_ = outer;
      }
      delete c;
      return 0;
    }
  };
  struct slot {
    uint64_t serial;
    int id;
  };

  static uint64_t next_serial() {
    static std::atomic<uint64_t> serials{0};
    return serials.fetch_add(1, std::memory_order_relaxed) + 1;
  }

  /* Whether the calling thread runs the closure it schedules itself
   * (doc/libraries.md, "Eigen"). Eigen blocks a thread that schedules from
   * outside the pool's closures in its own Barrier until the work is done,
   * and for work of more blocks than threads it schedules only the root of
   * its tree of closures: on the executor's workers alone that runs on one
   * thread fewer than Eigen's own pool of NumThreads() threads. So such a
   * thread, when none of the pool's closures waits in the queue (the
   * workers keep up), runs its closure itself and then the queued ones, as
   * one of NumThreads() threads; the closures scheduled from closures go to
   * the workers. A closure run so that schedules nothing shows an operation
   * that schedules its blocks one by one from its caller (a full
   * reduction): the next closures go to the workers, rather than one
   * after another here, until as many as the workers (a full reduction's
   * other blocks) have gone to them and all have started, which the end of
   * the operation implies (Eigen returns when all are done): the next
   * operation starts as the first did. Only counts of closures not started
   * are asked, never whether one has returned: Eigen's caller wakes when a
   * closure's work is done, before the closure itself returns. Counts and
   * this state are the pool's, and with threads sharing a pool a guess:
   * where a closure runs changes no result. */
  bool runs_here() {
    if (running_ == this) return false;
    bool idle = queued_.load(std::memory_order_acquire) == 0;
    if (!leaf_.load(std::memory_order_relaxed)) return idle;
    if (idle && under_leaf_.load(std::memory_order_relaxed) >= threads_ - 1) { /* the other blocks started */
      leaf_.store(false, std::memory_order_relaxed);
      return true;
    }
    return false;
  }

  /* The first closure a worker runs gives it the next index; more workers
   * than the executor has (none: its workers are fixed) would get -1. */
  void note_worker() {
    for (const slot &s : ids_)
      if (s.serial == serial_) return;
    int id = next_id_.fetch_add(1, std::memory_order_relaxed);
    ids_.push_back(slot{serial_, id < threads_ ? id : -1});
  }

  static inline thread_local std::vector<slot> ids_;
  static inline thread_local thread_pool *running_ = nullptr;
  static inline thread_local thread_pool *not_worker_ = nullptr; /* runs closures inline, not as a worker */

  const uint64_t serial_;
  int threads_ = 1;
  cpuexec_task_group *group_ = nullptr;
  std::atomic<bool> cancelled_{false};
  std::atomic<int> next_id_{1};
  /* Where closures run (runs_here()). */
  std::atomic<int> queued_{0};           /* closures given to the workers, not started */
  std::atomic<uint64_t> submitted_{0};   /* closures ever given to the workers */
  std::atomic<bool> leaf_{false};        /* a closure run here scheduled nothing */
  std::atomic<int> under_leaf_{0};       /* closures given to the workers since */
};

} // namespace eigen
} // namespace cpuexec

#endif
