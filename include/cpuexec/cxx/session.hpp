/** @file cxx/session.hpp
 * RAII handles: executor views and owned leases, scopes and sessions (a
 * session's run carries exceptions to the caller). Part of cpuexec.hpp. */
#ifndef CPUEXEC_CXX_SESSION_HPP
#define CPUEXEC_CXX_SESSION_HPP

#include <cpuexec/cxx/call_state.hpp>
#include <cpuexec/cxx/error.hpp>
#include <cpuexec/cxx/policy.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

namespace cpuexec {

class executor;

/** A non-owning view of an executor (what cpuexec_executor_current() returns). An
 * empty view is the serial executor: loops run on the caller. Copy freely;
 * the executor it names must outlive its uses. */
class executor_ref {
public:
  /** The serial executor. */
  constexpr executor_ref() noexcept = default;
  /** A view of a C executor (NULL: serial). */
  constexpr executor_ref(cpuexec_executor *exec) noexcept : e_(exec) {}
  /** A view of an owned executor. */
  executor_ref(const executor &owner) noexcept;
  /** The C executor, or NULL for serial. */
  cpuexec_executor *get() const noexcept { return e_; }
  /** True unless serial. */
  explicit operator bool() const noexcept { return e_ != nullptr; }
  /** Most participants of a region on it (1 for serial). */
  int32_t effective_threads() const noexcept { return detail::capi::threads(cpuexec_executor_effective_threads(e_)); }
  /** Process-local identity, never reused; 0 for serial. */
  uint64_t id() const noexcept { return cpuexec_executor_id(e_); }
  /** Same executor. */
  friend bool operator==(executor_ref a, executor_ref b) noexcept { return a.e_ == b.e_; }
  /** Different executors. */
  friend bool operator!=(executor_ref a, executor_ref b) noexcept { return a.e_ != b.e_; }

private:
  cpuexec_executor *e_ = nullptr;
};

/** An owned lease on a shared pool of the process registry (or an owned
 * unshared executor): move-only, released exactly once, by the destructor
 * or reset(). A moved-from executor is empty (serial). */
class executor {
public:
  /** Empty: no lease; views of it are serial. */
  executor() noexcept = default;
  /** Resolves p and leases a compatible pool from the process registry
   * (cpuexec_registry_default()); throws cpuexec::error on failure. */
  explicit executor(const policy &p) : executor(resolved(p)) {}
  /** Leases a pool for a resolution; throws cpuexec::error on failure. */
  explicit executor(const resolved &r) {
    detail::check(cpuexec_registry_acquire(cpuexec_registry_default(), r.get(), &e_));
  }
  /** Takes ownership of a lease (or of an executor from cpuexec_executor_create()). */
  static executor adopt(cpuexec_executor *lease) noexcept {
    executor out;
    out.e_ = lease;
    return out;
  }
  /** Takes o's lease; o becomes empty. */
  executor(executor &&o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  /** Releases this lease, then takes o's; o becomes empty. */
  executor &operator=(executor &&o) noexcept {
    if (this != &o) {
      reset();
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  executor(const executor &) = delete;
  executor &operator=(const executor &) = delete;
  ~executor() { reset(); }

  /** Releases the lease now (cpuexec_executor_release()); then empty. */
  void reset() noexcept { cpuexec_executor_release(std::exchange(e_, nullptr)); }
  /** Gives up ownership: the caller releases what is returned. */
  cpuexec_executor *detach() noexcept { return std::exchange(e_, nullptr); }
  /** The C executor, still owned (NULL when empty). */
  cpuexec_executor *get() const noexcept { return e_; }
  /** A view. */
  executor_ref ref() const noexcept { return executor_ref(e_); }
  /** Most participants of a region on it. */
  int32_t effective_threads() const noexcept { return detail::capi::threads(cpuexec_executor_effective_threads(e_)); }
  /** Process-local identity; 0 when empty. */
  uint64_t id() const noexcept { return cpuexec_executor_id(e_); }

private:
  cpuexec_executor *e_ = nullptr;
};

inline executor_ref::executor_ref(const executor &owner) noexcept : e_(owner.get()) {}

/** The executor installed on this thread (cpuexec_executor_current()); serial when none. */
inline executor_ref current() noexcept { return executor_ref(cpuexec_executor_current()); }
/** What a kernel needs of the executor it runs on (cpuexec_executor_need). */
enum class executor_need {
  supported = CPUEXEC_EXECUTOR_SUPPORTED, /**< the installed executor, else the process default pool */
  required = CPUEXEC_EXECUTOR_REQUIRED    /**< the installed executor only */
};

/** The executor the kernel `kernel` runs on (cpuexec_kernel_executor):
 * the installed one; with none, the process default pool when the kernel
 * supports one, else cpuexec::error with CPUEXEC_ESTATE naming the kernel. */
inline executor_ref kernel_executor(const char *kernel, executor_need need = executor_need::required) {
  cpuexec_executor *exec = nullptr;
  detail::check(cpuexec_kernel_executor(kernel, static_cast<cpuexec_executor_need>(need), &exec));
  return executor_ref(exec);
}

/** Inside a body: this participant's index (0 = the caller); 0 outside. */
inline int32_t participant_index() noexcept { return detail::capi::threads(cpuexec_participant_index()); }
/** Inside a body: the region's participants; 1 outside. */
inline int32_t participant_count() noexcept { return detail::capi::threads(cpuexec_participant_count()); }

/** Installs an executor on this thread for the object's lifetime
 * (cpuexec_scope_enter/leave). Not copyable or movable: scopes nest on one
 * thread and end in reverse order. */
class scope {
public:
  /** Installs exec; throws cpuexec::error when it cannot (exec serial is CPUEXEC_EINVAL). */
  explicit scope(executor_ref exec) { detail::check(cpuexec_scope_enter(exec.get(), &s_)); }
  /** Leaves the scope unless leave() already did; errors are not reported
   * here (a destructor cannot throw): call leave() to see them. */
  ~scope() {
    if (active_) (void)cpuexec_scope_leave(&s_);
  }
  /** Leaves now; throws cpuexec::error (CPUEXEC_ESTATE) when an inner scope is still entered. */
  void leave() {
    if (!active_) return;
    active_ = false;
    detail::check(cpuexec_scope_leave(&s_));
  }
  scope(const scope &) = delete;
  scope &operator=(const scope &) = delete;

private:
  cpuexec_scope s_{};
  bool active_ = true;
};

/** A session (cpuexec_session): a policy resolved and leased once, installed
 * for each run. Move-only, destroyed once. Several threads may run one
 * session at once. */
class session {
public:
  /** Policy NULL: the executor installed on this thread, else the process default. */
  session() { detail::check(cpuexec_session_create(nullptr, &s_)); }
  /** A session for p; throws cpuexec::error naming what was wrong. */
  explicit session(const policy &p) { detail::check(cpuexec_session_create(&p.c_policy(), &s_)); }
  /** Takes o's session; o becomes empty. */
  session(session &&o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  /** Destroys this session, then takes o's; o becomes empty. */
  session &operator=(session &&o) noexcept {
    if (this != &o) {
      cpuexec_session_destroy(s_);
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  session(const session &) = delete;
  session &operator=(const session &) = delete;
  ~session() { cpuexec_session_destroy(s_); }

  /** The session's executor (serial for a moved-from session). */
  executor_ref executor() const noexcept { return executor_ref(cpuexec_session_executor(s_)); }
  /** The C session, still owned. */
  cpuexec_session *get() const noexcept { return s_; }

  /** Runs f() with the session's executor installed on this thread and
   * returns its result (by value); an exception from f is rethrown after
   * the scope is left; a library failure throws cpuexec::error. */
  template <class F>
  std::conditional_t<std::is_void_v<std::invoke_result_t<F &>>, void, std::decay_t<std::invoke_result_t<F &>>>
  run(F &&f) {
    using R = std::invoke_result_t<F &>;
    struct run_call {
      F &fn;
      detail::call_state state;
      std::conditional_t<std::is_void_v<R>, bool, std::optional<std::decay_t<R>>> result{};
      static int invoke(void *ctx) noexcept {
        auto *self = static_cast<run_call *>(ctx);
        return detail::guarded(self->state, [self] {
          if constexpr (std::is_void_v<R>)
            std::invoke(self->fn);
          else
            self->result.emplace(std::invoke(self->fn));
        });
      }
    } call{f, {}, {}};
    call.state.finish(detail::capi::session_run(s_, &call, &run_call::invoke));
    if constexpr (!std::is_void_v<R>) return std::move(*call.result);
  }

private:
  cpuexec_session *s_ = nullptr;
};

} // namespace cpuexec

#endif
