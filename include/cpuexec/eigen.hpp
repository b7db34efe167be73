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
 *   - Schedule(fn) submits fn as one task of the task group that every
 *     pool on the executor shares: a worker of the executor runs it when
 *     free, through the executor's scheduler (a group holds one of its
 *     region lanes while tasks are queued). A thread that is not running
 *     one of the pool's closures (the thread evaluating an Eigen
 *     expression, which Eigen then blocks until the work is done) runs its
 *     closure itself instead, and then the queued ones, as a worker would
 *     (cpuexec_task_group_help()): Eigen's closures run on as many threads
 *     as NumThreads(), as on Eigen's own pool of that size, the executor's
 *     workers and that thread; closures scheduled by closures go to the
 *     workers. When a closure so run schedules nothing (a full reduction
 *     schedules its blocks one by one; a contraction's last kernel), the
 *     next ones go to the workers until as many as the workers have, and
 *     the thread stays until every closure it scheduled, and every closure
 *     these scheduled in turn, has finished, running the queued closures
 *     of every pool on the executor meanwhile (a contraction's later
 *     kernels, another caller's closures) and sleeping while none is
 *     queued. So a closure must not wait for the thread that schedules it
 *     to go on, which Eigen's never do. fn
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
 * The destructor waits for every closure scheduled and not cancelled,
 * running queued ones meanwhile.
 *
 * Limits. The task group of the pools on one executor takes one of its 8
 * region lanes (cpuexec/executor.h) at the first Schedule and keeps it
 * until the last of those pools is destroyed (a group gives its lane back
 * only when waited on, and Eigen never waits on the pool: its caller
 * blocks in its own Barrier). So keep a pool rather than make one per
 * call; and when all 8 lanes are held by other callers as the first
 * closure is scheduled, closures wait for a later Schedule that finds a
 * lane free, or for a thread that runs them itself.
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
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
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
    if (exec != nullptr && threads_ > 1) shared_ = shared::acquire(exec);
    if (shared_ == nullptr) threads_ = 1;
    cpuexec_library_adapter_made("eigen"); /* for cpuexec_libraries_status() */
  }
  ~thread_pool() override {
    if (shared_ == nullptr) return;
    /* Every closure scheduled and not cancelled has run: the queued ones
     * run here meanwhile (not as a worker). */
    helping_++;
    bool here = shared_->help_while([&] { return live_.load(std::memory_order_seq_cst) != 0; });
    helping_--;
    while (here && finishing_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield(); /* a last epilogue */
    shared::release(shared_);
  }
  thread_pool(const thread_pool &) = delete;
  thread_pool &operator=(const thread_pool &) = delete;

  /** Runs fn on one of the executor's workers, or here (see the top). */
  void Schedule(std::function<void()> fn) override {
    if (cancelled_.load(std::memory_order_acquire)) return;
    if (shared_ == nullptr || (cpuexec_library_call_inline() && running_ != this)) {
      fn();
      return;
    }
    origin *from = running_ == this ? running_origin_ : own_origin();
    closure *c = new closure{this, std::move(fn), false, from};
    live_.fetch_add(1, std::memory_order_seq_cst);
    from->outstanding.fetch_add(1, std::memory_order_seq_cst);
    helping_++; /* closures it runs itself (a full queue, help): not on a worker */
    int rc;
    bool here = runs_here(), scheduled_nothing = false;
    if (here) {
      uint64_t before = submitted_.load(std::memory_order_relaxed);
      rc = cpuexec_task_group_help(shared_->group, c, &closure::run); /* fn here, then the queued ones */
      scheduled_nothing = rc == 0 && submitted_.load(std::memory_order_relaxed) == before;
      if (scheduled_nothing) {
        under_leaf_.store(0, std::memory_order_relaxed); /* blocks may come one by one */
        leaf_.store(true, std::memory_order_relaxed);
      }
    } else {
      c->queued = true;
      shared_->queued.fetch_add(1, std::memory_order_seq_cst);
      submitted_.fetch_add(1, std::memory_order_relaxed);
      if (leaf_.load(std::memory_order_relaxed)) under_leaf_.fetch_add(1, std::memory_order_relaxed);
      rc = cpuexec_task_group_submit(shared_->group, c, &closure::run);
      if (rc == 0) shared_->wake(); /* a thread in settle() may run it */
    }
    if (rc != 0) { /* cannot happen with a group and a task (but after fork): keep Eigen's work done */
      if (c->queued) shared_->queued.fetch_sub(1, std::memory_order_acq_rel);
      std::function<void()> f = std::move(c->fn);
      delete c;
      f();
      finished(from);
    } else if (scheduled_nothing) {
      settle(from);
    }
    helping_--;
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
  /* What the pools on one executor share: one task group, so a thread that
   * helps (runs_here(), settle()) runs any of their queued closures, and a
   * caller of one pool keeps working while another caller's closures wait
   * for the workers; the count of closures queued for the workers and not
   * started, and where threads in settle() or in a destructor sleep. The
   * list and the counts of users are under `pools_lock()`. */
  struct shared {
    cpuexec_executor *exec = nullptr;
    cpuexec_task_group *group = nullptr;
    int users = 0;
    std::atomic<int> queued{0};
    std::mutex lock;
    std::condition_variable changed;
    std::atomic<int> sleepers{0};

    static std::mutex &pools_lock() {
      static std::mutex m;
      return m;
    }
    static std::vector<shared *> &all() {
      static std::vector<shared *> v;
      return v;
    }
    static shared *acquire(cpuexec_executor *exec) {
      std::lock_guard<std::mutex> hold(pools_lock());
      for (shared *s : all())
        if (s->exec == exec) {
          s->users++;
          return s;
        }
      shared *s = new shared;
      if (cpuexec_task_group_create(exec, nullptr, &s->group) != 0) {
        delete s;
        return nullptr;
      }
      s->exec = exec;
      s->users = 1;
      all().push_back(s);
      return s;
    }
    static void release(shared *s) {
      {
        std::lock_guard<std::mutex> hold(pools_lock());
        if (--s->users > 0) return;
        std::vector<shared *> &v = all();
        for (size_t i = 0; i < v.size(); i++)
          if (v[i] == s) {
            v[i] = v.back();
            v.pop_back();
            break;
          }
      }
      (void)cpuexec_task_group_destroy(s->group); /* no closure is left: the users waited for theirs */
      delete s;
    }
    /* While `still()`: runs the queued closures, and sleeps while none is
     * queued. The counts are changed before wake() reads `sleepers`
     * (seq_cst on both sides), so a thread about to sleep sees the change
     * or is woken. In a fork child the group runs nothing (help fails) and
     * no worker is left to finish a closure of the parent's: it returns
     * false. */
    template <class F> bool help_while(F still) {
      while (still()) {
        if (cpuexec_task_group_help(group, nullptr, nullptr) != 0) return false;
        if (!still() || queued.load(std::memory_order_seq_cst) > 0) continue;
        std::unique_lock<std::mutex> hold(lock);
        sleepers.fetch_add(1, std::memory_order_seq_cst);
        while (still() && queued.load(std::memory_order_seq_cst) == 0) changed.wait(hold);
        sleepers.fetch_sub(1, std::memory_order_seq_cst);
      }
      return true;
    }
    /* A closure queued, an origin's or a pool's last closure finished. */
    void wake() {
      if (sleepers.load(std::memory_order_seq_cst) == 0) return;
      std::lock_guard<std::mutex> hold(lock);
      changed.notify_all();
    }
  };

  /* The closures one thread scheduled from outside the pool's closures,
   * and those these scheduled in turn, not finished yet: what that thread
   * waits for in settle(). One per thread and pool, kept by the pool. */
  struct origin {
    std::thread::id thread;
    std::atomic<long> outstanding{0};
  };

  struct closure {
    thread_pool *pool;
    std::function<void()> fn;
    bool queued; /* given to the workers: counted in shared::queued until it starts */
    origin *from;
    static int run(void *ctx) noexcept {
      closure *c = static_cast<closure *>(ctx);
      thread_pool *p = c->pool;
      origin *from = c->from;
      if (c->queued) p->shared_->queued.fetch_sub(1, std::memory_order_acq_rel);
      if (!p->cancelled_.load(std::memory_order_acquire)) {
        if (helping_ == 0) p->note_worker();
        thread_pool *outer = running_;
        origin *outer_origin = running_origin_;
        running_ = p;
        running_origin_ = from;
        c->fn(); /* noexcept: a throwing closure terminates, as on Eigen's threads */
        running_ = outer;
        running_origin_ = outer_origin;
      }
      delete c;
      p->finished(from);
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

  /* A closure of `from` finished (ran or was dropped). `finishing_` spans
   * every touch of the pool here, and its decrement is the last: the
   * destructor, which returns once live_ is 0, waits for it too. */
  void finished(origin *from) {
    finishing_.fetch_add(1, std::memory_order_seq_cst);
    bool last_of_origin = from->outstanding.fetch_sub(1, std::memory_order_seq_cst) == 1;
    bool last_of_pool = live_.fetch_sub(1, std::memory_order_seq_cst) == 1;
    if (last_of_origin || last_of_pool) shared_->wake();
    finishing_.fetch_sub(1, std::memory_order_seq_cst);
  }

  /* Whether the calling thread runs the closure it schedules itself
   * (doc/libraries.md, "Eigen"). Eigen blocks a thread that schedules from
   * outside the pool's closures in its own Barrier until the work is done,
   * and for work of more blocks than threads it schedules only the root of
   * its tree of closures: on the executor's workers alone that runs on one
   * thread fewer than Eigen's own pool of NumThreads() threads. So such a
   * thread runs its closure itself and then the queued ones, as one of
   * NumThreads() threads; the closures scheduled from closures go to the
   * workers. It does so also when closures wait in the queue: the workers
   * are behind (a contraction's calling thread schedules a kernel while the
   * worker has not started the packing it gave it), and a closure queued
   * behind them would leave this thread to Eigen's Barrier with work still
   * to do. A closure run so that schedules nothing shows an operation that
   * schedules its blocks one by one from its caller (a full reduction): the
   * next closures go to the workers, rather than one after another here,
   * until as many as the workers (a full reduction's other blocks) have
   * gone to them. Counts and this state are the pool's, and with threads
   * sharing a pool a guess: where a closure runs changes no result. */
  bool runs_here() {
    if (running_ == this) return false;
    if (!leaf_.load(std::memory_order_relaxed)) return true;
    if (under_leaf_.load(std::memory_order_relaxed) >= threads_ - 1) { /* the other blocks went to the workers */
      leaf_.store(false, std::memory_order_relaxed);
      return true;
    }
    return false;
  }

  /* A closure the calling thread ran itself (runs_here()) scheduled
   * nothing: it may be the last of that thread's work before Eigen blocks
   * it in its own Barrier or Notification (a contraction's last kernel, run
   * from the thread's own share), while closures that closures scheduled
   * earlier still run or wait for the workers (the contraction's other
   * kernels, and the next ones they start), and every later one would run
   * on the N-1 workers alone where Eigen's own pool has N threads. So the
   * thread stays until every closure of its origin has finished: it runs
   * the queued closures of every pool on the executor and sleeps only while
   * nothing is queued and a worker runs one of its closures. It waits only
   * for closures, which need nothing from it to finish (doc/libraries.md,
   * "Eigen"). */
  void settle(origin *from) {
    (void)shared_->help_while([&] { return from->outstanding.load(std::memory_order_seq_cst) != 0; });
  }

  /* The calling thread's origin in this pool (made at its first Schedule
   * from outside the pool's closures; kept until the pool is destroyed). */
  origin *own_origin() {
    if (last_origin_.serial == serial_) return last_origin_.at;
    std::thread::id me = std::this_thread::get_id();
    origin *found = nullptr;
    {
      std::lock_guard<std::mutex> hold(origins_lock_);
      for (const std::unique_ptr<origin> &o : origins_)
        if (o->thread == me) found = o.get();
      if (found == nullptr) {
        origins_.push_back(std::unique_ptr<origin>(new origin));
        found = origins_.back().get();
        found->thread = me;
      }
    }
    last_origin_ = origin_cache{serial_, found};
    return found;
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
  static inline thread_local origin *running_origin_ = nullptr; /* the origin of the closure running here */
  static inline thread_local int helping_ = 0; /* > 0: closures run here are not on a worker */
  struct origin_cache {
    uint64_t serial;
    origin *at;
  };
  static inline thread_local origin_cache last_origin_{0, nullptr}; /* own_origin()'s last answer */

  const uint64_t serial_;
  int threads_ = 1;
  shared *shared_ = nullptr;
  std::atomic<bool> cancelled_{false};
  std::atomic<int> next_id_{1};
  std::atomic<long> live_{0};     /* closures scheduled, not finished */
  std::atomic<int> finishing_{0}; /* threads inside finished() */
  /* Where closures run (runs_here()). */
  std::atomic<uint64_t> submitted_{0};   /* closures ever given to the workers */
  std::atomic<bool> leaf_{false};        /* a closure run here scheduled nothing */
  std::atomic<int> under_leaf_{0};       /* closures given to the workers since */
  std::mutex origins_lock_;
  std::vector<std::unique_ptr<origin>> origins_;
};

} // namespace eigen
} // namespace cpuexec

#endif
