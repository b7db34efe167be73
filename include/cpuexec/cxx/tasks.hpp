/** @file cxx/tasks.hpp
 * Task groups with callables (cpuexec/tasks.h): tasks on an executor's
 * workers, the first exception carried to wait(). Part of cpuexec.hpp. */
#ifndef CPUEXEC_CXX_TASKS_HPP
#define CPUEXEC_CXX_TASKS_HPP

#include <cpuexec/tasks.h>

#include <cpuexec/cxx/call_state.hpp>
#include <cpuexec/cxx/error.hpp>
#include <cpuexec/cxx/session.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

namespace cpuexec {

/** Options of a task_group (cpuexec_task_group_options). */
struct task_group_options {
  int32_t max_concurrency = 0; /**< most pool workers running its tasks at once; 0: every worker */
  int32_t queue_capacity = 0;  /**< queued tasks at most (a full queue runs the task in run()); 0: 1024 */
};

/** Independent tasks on exec's workers (cpuexec/tasks.h):
 * @code
 * cpuexec::task_group g(exec);
 * for (auto &item : items) g.run([&item] { prepare(item); });
 * g.wait();  // every task ran; rethrows the first exception a task threw
 * @endcode
 * run(f) queues f (a callable taking no argument; moved or copied into the
 * group, called once) or, with the queue full, calls it at once. The first
 * exception a task throws stops the group: tasks not started are dropped
 * (destroyed without being called), started ones finish, and wait()
 * rethrows it once. The waiting thread runs queued tasks itself. run() may
 * be called from tasks and loop bodies; wait() from inside one of the
 * group's own tasks throws cpuexec::error (CPUEXEC_EBUSY). The destructor
 * waits and drops an exception still pending. Not copyable or movable. */
class task_group {
public:
  /** A group on exec (serial: tasks run at once in run()). */
  explicit task_group(executor_ref exec, const task_group_options &options = {}) {
    cpuexec_task_group_options o;
    cpuexec_task_group_options_init(&o);
    o.max_concurrency = detail::count(options.max_concurrency, "max_concurrency");
    o.queue_capacity = detail::count(options.queue_capacity, "queue_capacity");
    detail::check(cpuexec_task_group_create(exec.get(), &o, &group_));
  }
  ~task_group() {
    cpuexec_task_group_destroy(group_);
  }
  task_group(const task_group &) = delete;
  task_group &operator=(const task_group &) = delete;

  /** Queues f() (or runs it now when the queue is full). */
  template <class F> void run(F &&f) {
    static_assert(std::is_invocable_v<std::decay_t<F> &>, "f must be callable as f()");
    node_base *raw;
    {
      std::lock_guard<std::mutex> hold(lock_);
      auto owned = std::make_unique<node<std::decay_t<F>>>(std::forward<F>(f), state_.get());
      raw = owned.get();
      nodes_.push_back(std::move(owned));
    }
    detail::check(cpuexec_task_group_submit(group_, raw, &node_base::invoke));
  }

  /** Waits for every task (running queued ones on this thread), then
   * rethrows the first exception a task threw, or throws cpuexec::error. */
  void wait() {
    int rc = cpuexec_task_group_wait(group_);
    /* Called from one of the group's own tasks: the group still runs, so
     * its tasks and their state stay where they are. */
    if (rc == CPUEXEC_EBUSY) detail::check(rc);
    std::vector<std::unique_ptr<node_base>> done;
    std::unique_ptr<detail::call_state> state;
    {
      std::lock_guard<std::mutex> hold(lock_);
      done.swap(nodes_);
      state = std::move(state_);
      state_ = std::make_unique<detail::call_state>();
    }
    done.clear();
    state->finish(rc);
  }

  /** The C group (owned by this object). */
  cpuexec_task_group *get() const noexcept { return group_; }

private:
  struct node_base {
    explicit node_base(detail::call_state *s) noexcept : state(s) {}
    virtual ~node_base() = default;
    virtual void call() = 0;
    detail::call_state *state;
    static int invoke(void *ctx) noexcept {
      auto *self = static_cast<node_base *>(ctx);
      return detail::guarded(*self->state, [self] { self->call(); });
    }
  };
  template <class F> struct node final : node_base {
    template <class G> node(G &&g, detail::call_state *s) : node_base(s), f(std::forward<G>(g)) {}
    void call() override { f(); }
    F f;
  };

  cpuexec_task_group *group_ = nullptr;
  std::mutex lock_;
  std::vector<std::unique_ptr<node_base>> nodes_;
  std::unique_ptr<detail::call_state> state_ = std::make_unique<detail::call_state>();
};

} // namespace cpuexec

#endif
