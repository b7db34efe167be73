/** @file cpuexec.hpp
 * @brief libcpuexec for C++17: RAII handles, lambdas as loop bodies, exceptions carried to the caller.
 *
 * Header-only and thin over the C API of cpuexec.h (link the same library:
 * `pkg-config --libs cpuexec`, or CMake's `cpuexec::cpuexec`):
 *
 * @code
 * #include <cpuexec.hpp>
 * cpuexec::session s(cpuexec::policy().num_threads(4));
 * s.run([&] {
 *   cpuexec::parallel_for(cpuexec::current(), n, 1024, [&](int64_t b, int64_t e) {
 *     for (int64_t i = b; i < e; i++) y[i] += a * x[i];
 *   });
 * });
 * @endcode
 *
 * Exceptions. A loop body (or range-executor implementation, or session run)
 * may throw. The first exception caught on any participant stops ranges that
 * have not started (a body that starts after it was caught is never called),
 * every running body finishes, and then that exception, with its type and
 * message, is rethrown on the calling thread exactly once (it travels as a
 * std::exception_ptr in a state that belongs to the one call). Exceptions
 * thrown by other participants meanwhile are dropped. A failure of the
 * library itself throws cpuexec::error: the CPUEXEC_E* code (a
 * std::error_code of cpuexec::error_category()) and cpuexec_last_error()'s
 * message.
 *
 * Without exceptions (-fno-exceptions) the same calls compile; a library
 * failure prints its message to stderr and calls std::terminate().
 *
 * Bodies run concurrently on several threads, so they are called through a
 * const reference: a `mutable` lambda does not compile. Everything the
 * header calls in the C library is in namespace cpuexec::detail::capi.
 * Thread and participant counts are int32_t throughout (a negative limit
 * is rejected with CPUEXEC_EINVAL).
 *
 * Shared libraries built with hidden visibility each get their own copy of
 * the header's inline state: an exception thrown by a range-executor
 * implementation defined in one of them and run from a call made in another
 * arrives as cpuexec::error (CPUEXEC_ECALLBACK) instead of with its type,
 * and error_category() objects of two libraries compare unequal. */
#ifndef CPUEXEC_HPP
#define CPUEXEC_HPP

#include <cpuexec.h>
#include <cpuexec/compat/job_pool.h>
#include <cpuexec/compat/range_executor.h>
#include <cpuexec/compat/ranges.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

/** 1 when the translation unit is compiled with exceptions, else 0
 * (-fno-exceptions: failures print their message and call std::terminate). */
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define CPUEXEC_HPP_EXCEPTIONS 1
#else
#define CPUEXEC_HPP_EXCEPTIONS 0
#endif

/** The C++ interface of libcpuexec. */
namespace cpuexec {

/** The library's error codes (cpuexec/errors.h) as a std::error_code enum. */
enum class errc : int {
  einval = CPUEXEC_EINVAL,         /**< invalid argument */
  enomem = CPUEXEC_ENOMEM,         /**< out of memory */
  etopology = CPUEXEC_ETOPOLOGY,   /**< topology could not be read */
  eaffinity = CPUEXEC_EAFFINITY,   /**< processor affinity could not be applied */
  ethread = CPUEXEC_ETHREAD,       /**< a worker thread could not be started */
  ecapacity = CPUEXEC_ECAPACITY,   /**< registry capacity exhausted */
  eforked = CPUEXEC_EFORKED,       /**< executor was inherited across fork() */
  emismatch = CPUEXEC_EMISMATCH,   /**< execution descriptor does not match the executor */
  erange = CPUEXEC_ERANGE,         /**< range out of bounds */
  enotsup = CPUEXEC_ENOTSUP,       /**< not supported on this platform or build */
  ebusy = CPUEXEC_EBUSY,           /**< resource still in use */
  estate = CPUEXEC_ESTATE,         /**< call made in the wrong state */
  ecallback = CPUEXEC_ECALLBACK    /**< a callback failed */
};

namespace detail {

/** The C calls this header makes, in one place: adapting to a change of the
 * C API's argument order or types is done here only. Participant counts are
 * int32_t in C++; a negative one is rejected here. */
namespace capi {

/** A thread count from the C API, as the C++ interface gives it (int32_t). */
inline int32_t threads(uint32_t n) noexcept { return static_cast<int32_t>(n); }
/** A participant count for the C API; false when it is negative. */
inline bool count(int32_t n, uint32_t *out) noexcept {
  *out = static_cast<uint32_t>(n);
  return n >= 0;
}
inline int parallel_for(cpuexec_executor *exec, int64_t total, int64_t grain, uint32_t max_participants, void *ctx,
                        cpuexec_range_fn fn) noexcept {
  return cpuexec_parallel_for(exec, total, grain, ctx, fn, max_participants);
}
inline int parallel_for_costed(cpuexec_executor *exec, int64_t total, const cpuexec_cost *cost,
                               const cpuexec_plan_constraints *constraints, void *ctx, cpuexec_range_fn fn) noexcept {
  return cpuexec_parallel_for_costed(exec, total, cost, constraints, ctx, fn);
}
inline int execute_ranges(int64_t total, const cpuexec_range_schedule *schedule, void *ctx,
                          cpuexec_range_fn fn) noexcept {
  return cpuexec_execute_ranges(total, schedule, ctx, fn);
}
inline int execute_costed_ranges(int64_t total, const cpuexec_cost *cost, const cpuexec_plan_constraints *constraints,
                                 int64_t block_multiple, void *ctx, cpuexec_range_fn fn) noexcept {
  return cpuexec_execute_costed_ranges(total, cost, constraints, block_multiple, ctx, fn);
}
inline int range_executor_run(const cpuexec_range_executor *executor, int64_t count, void *ctx,
                              cpuexec_range_fn fn) noexcept {
  return cpuexec_range_executor_run(executor, count, ctx, fn);
}
/** The signature of cpuexec_range_executor::run. */
using range_executor_run_fn = int (*)(void *self, int64_t count, void *ctx, cpuexec_range_callback callback);
inline cpuexec_range_executor make_range_executor(range_executor_run_fn run, void *self) noexcept {
  cpuexec_range_executor e;
  e.run = run;
  e.self = self;
  return e;
}
inline int run_worker_jobs(cpuexec_executor *exec, uint32_t worker_count, void *ctx,
                           cpuexec_worker_job_fn job) noexcept {
  return cpuexec_run_worker_jobs(exec, worker_count, ctx, job);
}
inline int session_run(cpuexec_session *session, void *ctx, int (*fn)(void *)) noexcept {
  return cpuexec_session_run(session, fn, ctx);
}
/** The value a C++ trampoline returns to stop a loop; the C++ side never
 * reads it back (the exception travels in the call's state), so a change of
 * what the C API does with callback values does not matter here. */
constexpr int stop_value = 1;
/** What a range-executor implementation returns when it threw outside any
 * C++ call of this header (it was called from C code). */
constexpr int impl_threw = CPUEXEC_ECALLBACK;

} // namespace capi

class category_impl final : public std::error_category {
public:
  const char *name() const noexcept override { return "cpuexec"; }
  std::string message(int value) const override { return cpuexec_strerror(value); }
  std::error_condition default_error_condition(int value) const noexcept override {
    switch (value) {
    case CPUEXEC_EINVAL: return std::errc::invalid_argument;
    case CPUEXEC_ENOMEM: return std::errc::not_enough_memory;
    case CPUEXEC_ERANGE: return std::errc::result_out_of_range;
    case CPUEXEC_ENOTSUP: return std::errc::not_supported;
    case CPUEXEC_EBUSY: return std::errc::device_or_resource_busy;
    default: return std::error_condition(value, *this);
    }
  }
};

} // namespace detail

/** The category of libcpuexec's codes: name "cpuexec", messages from
 * cpuexec_strerror(); EINVAL, ENOMEM, ERANGE, ENOTSUP and EBUSY compare
 * equal to the matching std::errc. One object for the whole program. */
inline const std::error_category &error_category() noexcept {
  static const detail::category_impl category;
  return category;
}

/** A std::error_code for one of the library's codes. */
inline std::error_code make_error_code(errc code) noexcept {
  return std::error_code(static_cast<int>(code), error_category());
}

/** A failure of the library: code() is the CPUEXEC_E* code in
 * error_category(); what() starts with cpuexec_last_error()'s message of the
 * failing call (which names what was wrong), then the code's string. */
class error : public std::system_error {
public:
  /** @param code a CPUEXEC_E* code. @param message what was wrong. */
  error(int code, const std::string &message)
      : std::system_error(code, error_category(), message), message_(message) {}
  /** The CPUEXEC_E* value (negative). */
  int value() const noexcept { return code().value(); }
  /** The library's message alone, without the code's string. */
  const char *message() const noexcept { return message_.what(); }

private:
  std::runtime_error message_; // a copy that cannot throw
};

namespace detail {

/** Throws cpuexec::error (or, without exceptions, prints and terminates). */
[[noreturn]] inline void fail(int code, const char *message) {
  const char *text = message != nullptr && message[0] != '\0' ? message : cpuexec_strerror(code);
#if CPUEXEC_HPP_EXCEPTIONS
  throw error(code, text);
#else
  std::fprintf(stderr, "cpuexec: %s: %s\n", cpuexec_err_name(code), text);
  std::fflush(stderr);
  std::terminate();
#endif
}
/** Throws for a failed C call (rc != 0), with the thread's last message. */
inline void check(int rc) {
  if (rc != 0) fail(rc, cpuexec_last_error());
}
inline uint32_t count(int32_t n, const char *what) {
  uint32_t out = 0;
  if (!capi::count(n, &out)) {
    std::string text = std::string(what) + ": " + std::to_string(n) + " is negative; use 0 for the executor's limit";
    fail(CPUEXEC_EINVAL, text.c_str());
  }
  return out;
}

/** The state one C++ call shares between its participants: whether to stop,
 * and the first exception caught. `stopped` is written with release by the
 * thread that caught an exception and read with acquire before every body;
 * `error` is written only by the thread that wins `claimed`, and read by the
 * caller after the C call returned (every participant's last body has
 * finished by then: the C call's completion orders it). */
class call_state {
public:
  bool stopped() const noexcept { return stopped_.load(std::memory_order_acquire); }
#if CPUEXEC_HPP_EXCEPTIONS
  void capture(std::exception_ptr e) noexcept {
    stopped_.store(true, std::memory_order_release);
    if (!claimed_.exchange(true, std::memory_order_acq_rel)) error_ = std::move(e);
  }
#endif
  /** After the C call returned rc: rethrow the captured exception (once:
   * the state belongs to this call) or throw for a library failure. */
  void finish(int rc) {
#if CPUEXEC_HPP_EXCEPTIONS
    if (error_) {
      std::exception_ptr e = std::move(error_);
      error_ = nullptr;
      std::rethrow_exception(e);
    }
#endif
    check(rc);
  }

private:
  std::atomic<bool> stopped_{false};
#if CPUEXEC_HPP_EXCEPTIONS
  std::atomic<bool> claimed_{false};
  std::exception_ptr error_;
#endif
};

/** The innermost call of this header running a range-executor
 * implementation on this thread (see range_executor_impl); cleared while a
 * body runs, so an exception is only ever given to the call it escaped. */
inline thread_local call_state *active_call = nullptr;

/** The call whose body is running on this thread (innermost), for cancelled(). */
inline thread_local const call_state *body_call = nullptr;

/** Sets active_call for one scope and restores it. */
class active_call_guard {
public:
  explicit active_call_guard(call_state *state) noexcept : saved_(active_call) { active_call = state; }
  ~active_call_guard() { active_call = saved_; }
  active_call_guard(const active_call_guard &) = delete;
  active_call_guard &operator=(const active_call_guard &) = delete;

private:
  call_state *saved_;
};

/** Runs body() for one participant, unless the call has stopped; an
 * exception stops the call. Returns 0 or capi::stop_value. */
template <class Body> int guarded(call_state &state, const Body &body) noexcept {
  if (state.stopped()) return capi::stop_value;
  active_call_guard guard(nullptr);
  const call_state *saved = body_call;
  body_call = &state;
#if CPUEXEC_HPP_EXCEPTIONS
  try {
    body();
  } catch (...) {
    body_call = saved;
    state.capture(std::current_exception());
    return capi::stop_value;
  }
#else
  body();
#endif
  body_call = saved;
  return 0;
}

/** A range body f(begin, end) behind a C callback. */
template <class F> struct range_call {
  const F &f;
  call_state state;
  explicit range_call(const F &fn) : f(fn) {}
  static int invoke(void *ctx, int64_t begin, int64_t end) noexcept {
    auto *self = static_cast<range_call *>(ctx);
    return guarded(self->state, [&] { std::invoke(self->f, begin, end); });
  }
};

/** A job f(worker_id, worker_count) behind a C callback. */
template <class F> struct job_call {
  const F &f;
  call_state state;
  explicit job_call(const F &fn) : f(fn) {}
  static int invoke(void *ctx, uint32_t id, uint32_t count) noexcept {
    auto *self = static_cast<job_call *>(ctx);
    return guarded(self->state, [&] { std::invoke(self->f, capi::threads(id), capi::threads(count)); });
  }
};

template <class F> using range_body_ok = std::is_invocable<const std::remove_reference_t<F> &, int64_t, int64_t>;

} // namespace detail

/** How waiting threads behave before they park (cpuexec_spin_policy). */
enum class spin : int {
  adaptive = CPUEXEC_SPIN_ADAPTIVE,                 /**< bounded spin chosen by the library */
  fixed_iterations = CPUEXEC_SPIN_FIXED_ITERATIONS, /**< spin spin_budget pause iterations */
  fixed_duration = CPUEXEC_SPIN_FIXED_DURATION,     /**< spin spin_budget nanoseconds */
  park_immediately = CPUEXEC_SPIN_PARK_IMMEDIATELY  /**< never spin */
};

/** Where workers are placed (cpuexec_affinity_policy). */
enum class affinity : int {
  none = CPUEXEC_AFFINITY_NONE,                           /**< the OS schedules */
  physical_cores = CPUEXEC_AFFINITY_PHYSICAL_CORES,       /**< one processor per physical core */
  performance_cores = CPUEXEC_AFFINITY_PERFORMANCE_CORES, /**< physical cores, performance kind first */
  physical_then_smt = CPUEXEC_AFFINITY_PHYSICAL_THEN_SMT, /**< every core first, then SMT siblings */
  explicit_cpu_set = CPUEXEC_AFFINITY_EXPLICIT            /**< cpu_set()[0] is the caller, the rest workers */
};

/** A requested policy (cpuexec_policy) as a value with builder-style
 * setters: `cpuexec::policy().num_threads(4).spin_duration(50us)`.
 * Setters store what they are given; the rules are checked where the C API
 * checks them (parse(), and resolution when an executor or session is made). */
class policy {
public:
  /** The defaults of cpuexec_policy_init(). */
  policy() noexcept { cpuexec_policy_init(&p_); }
  /** A copy of a C policy. */
  explicit policy(const cpuexec_policy &c) noexcept : p_(c) {}

  /** Parses the grammar of cpuexec_policy_parse(); throws cpuexec::error
   * (CPUEXEC_EINVAL, naming the key) when the text is malformed. */
  static policy parse(std::string_view text) {
    policy out;
    std::string copy(text);
    detail::check(cpuexec_policy_parse(copy.c_str(), &out.p_));
    return out;
  }
  /** The process default request (CPUEXEC_POLICY); throws when it is malformed. */
  static policy from_environment() {
    policy out;
    detail::check(cpuexec_policy_from_environment(&out.p_));
    return out;
  }
  /** The text form (cpuexec_policy_format()); parse(to_string()) == *this
   * for every valid policy. Throws for an enum out of range. */
  std::string to_string() const {
    int n = cpuexec_policy_format(&p_, nullptr, 0);
    if (n < 0) detail::check(n);
    std::string text(static_cast<size_t>(n) + 1, '\0');
    int m = cpuexec_policy_format(&p_, &text[0], text.size());
    if (m < 0) detail::check(m);
    text.resize(static_cast<size_t>(n));
    return text;
  }

  /** 0: topology default; 1: serial; N: N participants including the caller. */
  policy &num_threads(int32_t n) noexcept { p_.num_threads = n; return *this; }
  /** The requested participants. */
  int32_t num_threads() const noexcept { return p_.num_threads; }
  /** The spin policy; see spin_budget() for the budget it needs. */
  policy &spin_policy(spin s) noexcept { p_.spin_policy = static_cast<cpuexec_spin_policy>(s); return *this; }
  /** The requested spin policy. */
  spin spin_policy() const noexcept { return static_cast<spin>(p_.spin_policy); }
  /** Pause iterations (fixed_iterations) or nanoseconds (fixed_duration); 0 otherwise. */
  policy &spin_budget(uint64_t budget) noexcept { p_.spin_budget = budget; return *this; }
  /** The requested spin budget. */
  uint64_t spin_budget() const noexcept { return p_.spin_budget; }
  /** spin::fixed_duration for d (negative counts as 0). */
  policy &spin_duration(std::chrono::nanoseconds d) noexcept {
    return spin_policy(spin::fixed_duration).spin_budget(d.count() > 0 ? static_cast<uint64_t>(d.count()) : 0);
  }
  /** spin::fixed_iterations for n pause iterations. */
  policy &spin_iterations(uint64_t n) noexcept { return spin_policy(spin::fixed_iterations).spin_budget(n); }
  /** The placement of workers. */
  policy &affinity_policy(affinity a) noexcept {
    p_.affinity_policy = static_cast<cpuexec_affinity_policy>(a);
    return *this;
  }
  /** The requested placement. */
  affinity affinity_policy() const noexcept { return static_cast<affinity>(p_.affinity_policy); }
  /** Explicit processors (the first is the caller's); also sets
   * affinity::explicit_cpu_set. More than CPUEXEC_CPU_SET_MAX ids throws
   * cpuexec::error (CPUEXEC_EINVAL). */
  policy &cpu_set(const std::vector<int32_t> &ids) {
    if (ids.size() > CPUEXEC_CPU_SET_MAX) {
      std::string text = "cpu_set: " + std::to_string(ids.size()) + " ids; at most " +
                         std::to_string(CPUEXEC_CPU_SET_MAX) + " are allowed";
      detail::fail(CPUEXEC_EINVAL, text.c_str());
    }
    p_.cpu_set_count = static_cast<uint32_t>(ids.size());
    for (size_t i = 0; i < ids.size(); i++) p_.cpu_set[i] = ids[i];
    return affinity_policy(affinity::explicit_cpu_set);
  }
  /** The same with a braced list: `cpu_set({0, 2})`. */
  policy &cpu_set(std::initializer_list<int32_t> ids) { return cpu_set(std::vector<int32_t>(ids)); }
  /** The explicit processors, in order. */
  std::vector<int32_t> cpu_set() const {
    uint32_t n = p_.cpu_set_count <= CPUEXEC_CPU_SET_MAX ? p_.cpu_set_count : CPUEXEC_CPU_SET_MAX;
    return std::vector<int32_t>(p_.cpu_set, p_.cpu_set + n);
  }
  /** Recorded in the sharing key; nested calls still run inline. */
  policy &allow_nested_parallelism(bool allow) noexcept { p_.allow_nested_parallelism = allow; return *this; }
  /** Whether nesting was requested. */
  bool allow_nested_parallelism() const noexcept { return p_.allow_nested_parallelism; }

  /** The C struct, for C calls. */
  const cpuexec_policy &c_policy() const noexcept { return p_; }
  /** Field-for-field equality (cpuexec_policy_equal()). */
  friend bool operator==(const policy &a, const policy &b) noexcept { return cpuexec_policy_equal(&a.p_, &b.p_); }
  /** Not equal. */
  friend bool operator!=(const policy &a, const policy &b) noexcept { return !(a == b); }

private:
  cpuexec_policy p_;
};

/** A resolution of a policy on this process's topology (cpuexec_resolved),
 * owned: move-only, destroyed once. */
class resolved {
public:
  /** Resolves p (cpuexec_resolve() on this process's topology); throws on failure. */
  explicit resolved(const policy &p) { detail::check(cpuexec_resolve(&p.c_policy(), nullptr, &r_)); }
  /** Takes ownership of a C resolution (NULL: empty). */
  explicit resolved(cpuexec_resolved *owned) noexcept : r_(owned) {}
  /** Takes o's resolution; o becomes empty. */
  resolved(resolved &&o) noexcept : r_(std::exchange(o.r_, nullptr)) {}
  /** Destroys this resolution, then takes o's; o becomes empty. */
  resolved &operator=(resolved &&o) noexcept {
    if (this != &o) {
      cpuexec_resolved_destroy(r_);
      r_ = std::exchange(o.r_, nullptr);
    }
    return *this;
  }
  resolved(const resolved &) = delete;
  resolved &operator=(const resolved &) = delete;
  ~resolved() { cpuexec_resolved_destroy(r_); }

  /** The C resolution (still owned by this object). */
  const cpuexec_resolved *get() const noexcept { return r_; }
  /** Participants that will run, the caller included. */
  int32_t effective_threads() const noexcept { return detail::capi::threads(cpuexec_resolved_effective_threads(r_)); }
  /** Behaviour-only identity: equal keys share a pool. */
  std::string sharing_key() const {
    const char *k = cpuexec_resolved_sharing_key(r_);
    return k != nullptr ? k : "";
  }
  /** Every fallback and ignored input, in order. */
  std::vector<std::string> diagnostics() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < cpuexec_resolved_diagnostic_count(r_); i++) out.emplace_back(cpuexec_resolved_diagnostic(r_, i));
    return out;
  }
  /** The description as text (json false) or JSON; throws on failure. */
  std::string describe(bool json = false) const {
    cpuexec_format f = json ? CPUEXEC_FORMAT_JSON : CPUEXEC_FORMAT_TEXT;
    int n = cpuexec_resolved_describe(r_, f, nullptr, 0);
    if (n < 0) detail::check(n);
    std::string text(static_cast<size_t>(n) + 1, '\0');
    int m = cpuexec_resolved_describe(r_, f, &text[0], text.size());
    if (m < 0) detail::check(m);
    text.resize(static_cast<size_t>(n));
    return text;
  }

private:
  cpuexec_resolved *r_ = nullptr;
};

class executor;

/** A non-owning view of an executor (what cpuexec_current() returns). An
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

/** The executor installed on this thread (cpuexec_current()); serial when none. */
inline executor_ref current() noexcept { return executor_ref(cpuexec_current()); }
/** Inside a body of a call of this header: true once another body of the
 * same call threw, so a long body may return early (its call will rethrow
 * that exception). False outside bodies. */
inline bool cancelled() noexcept { return detail::body_call != nullptr && detail::body_call->stopped(); }
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

/** Per-iteration cost of a loop body (cpuexec_cost). */
struct cost {
  double bytes_read = 0;     /**< bytes read per index */
  double bytes_written = 0;  /**< bytes written per index */
  double compute_cycles = 0; /**< compute cycles per index */
};

/** Limits for planned calls (cpuexec_plan_constraints). */
struct plan_constraints {
  int32_t max_participants = 0;       /**< 0: the executor's limit */
  int32_t preferred_participants = 0; /**< 0: no preference */
};

/** A plan: grain and participants (cpuexec_plan). */
struct plan {
  int64_t grain = 1;         /**< indices per range, at least */
  int32_t participants = 1;  /**< participants to run */
};

namespace detail {
inline cpuexec_cost c_cost(const cost &c) noexcept {
  cpuexec_cost out;
  out.bytes_read = c.bytes_read;
  out.bytes_written = c.bytes_written;
  out.compute_cycles = c.compute_cycles;
  return out;
}
inline cpuexec_plan_constraints c_constraints(const plan_constraints &c) {
  cpuexec_plan_constraints out;
  out.max_participants = count(c.max_participants, "max_participants");
  out.preferred_participants = count(c.preferred_participants, "preferred_participants");
  return out;
}
} // namespace detail

/** The serial loop
 * @code
 * for (int64_t i = 0; i < total; i += grain) f(i, std::min(i + grain, total));
 * @endcode
 * made parallel on exec (cpuexec_parallel_for()): every index exactly once,
 * contiguous half-open ranges, the caller is participant 0, at most
 * max_participants participants (0: the executor's limit). A serial exec
 * runs the loop on the caller; a call from inside a body runs inline.
 * f(int64_t begin, int64_t end) is called concurrently through a const
 * reference. The first exception it throws is rethrown here, once, after
 * every started body finished; no body starts after it was caught. Throws
 * cpuexec::error for grain < 1, a negative max_participants, or an executor
 * failure (CPUEXEC_EFORKED). */
template <class F> void parallel_for(executor_ref exec, int64_t total, int64_t grain, int32_t max_participants, F &&f) {
  static_assert(detail::range_body_ok<F>::value, "f must be callable as f(int64_t begin, int64_t end) const");
  uint32_t limit = detail::count(max_participants, "max_participants");
  detail::range_call<std::remove_reference_t<F>> call(f);
  call.state.finish(detail::capi::parallel_for(exec.get(), total, grain, limit, &call, &call.invoke));
}
/** parallel_for() with the executor's participant limit. */
template <class F> void parallel_for(executor_ref exec, int64_t total, int64_t grain, F &&f) {
  parallel_for(exec, total, grain, 0, std::forward<F>(f));
}

/** The grain and participants cpuexec_plan_parallel_for() chooses for
 * total indices of cost c on exec; throws for a negative or non-finite cost. */
inline plan plan_parallel_for(executor_ref exec, int64_t total, const cost &c, const plan_constraints &limits = {}) {
  cpuexec_cost cc = detail::c_cost(c);
  cpuexec_plan_constraints cl = detail::c_constraints(limits);
  cpuexec_plan p{};
  detail::check(cpuexec_plan_parallel_for(exec.get(), total, &cc, &cl, &p));
  plan out;
  out.grain = p.grain;
  out.participants = detail::capi::threads(p.participants);
  return out;
}

/** parallel_for() with grain and participants planned from the cost of one
 * index (cpuexec_parallel_for_costed()); the same exception rules. */
template <class F>
void parallel_for_costed(executor_ref exec, int64_t total, const cost &c, const plan_constraints &limits, F &&f) {
  static_assert(detail::range_body_ok<F>::value, "f must be callable as f(int64_t begin, int64_t end) const");
  cpuexec_cost cc = detail::c_cost(c);
  cpuexec_plan_constraints cl = detail::c_constraints(limits);
  detail::range_call<std::remove_reference_t<F>> call(f);
  call.state.finish(detail::capi::parallel_for_costed(exec.get(), total, &cc, &cl, &call, &call.invoke));
}
/** parallel_for_costed() with at most max_participants participants. */
template <class F>
void parallel_for_costed(executor_ref exec, int64_t total, const cost &c, int32_t max_participants, F &&f) {
  plan_constraints limits;
  limits.max_participants = max_participants;
  parallel_for_costed(exec, total, c, limits, std::forward<F>(f));
}
/** parallel_for_costed() without limits. */
template <class F> void parallel_for_costed(executor_ref exec, int64_t total, const cost &c, F &&f) {
  parallel_for_costed(exec, total, c, plan_constraints{}, std::forward<F>(f));
}

/** A range schedule for kernels (seed 001; cpuexec_range_schedule) with
 * builder-style setters. The defaults are serial until the kernel raises
 * max_participants. */
class range_schedule {
public:
  /** The defaults of cpuexec_range_schedule_init(). */
  range_schedule() noexcept { cpuexec_range_schedule_init(&s_); }
  /** A total below n runs as one block. */
  range_schedule &min_parallel_size(int64_t n) noexcept { s_.min_parallel_size = n; return *this; }
  /** The fewest indices a block should hold. */
  range_schedule &min_block_size(int64_t n) noexcept { s_.min_block_size = n; return *this; }
  /** Block boundaries are multiples of n. */
  range_schedule &block_multiple(int64_t n) noexcept { s_.block_multiple = n; return *this; }
  /** At most n blocks (0: the executor's limit); negative throws. */
  range_schedule &max_participants(int32_t n) {
    s_.max_participants = detail::count(n, "max_participants");
    return *this;
  }
  /** The block count wanted when the limits allow it (0: none); negative throws. */
  range_schedule &preferred_participants(int32_t n) {
    s_.preferred_participants = detail::count(n, "preferred_participants");
    return *this;
  }
  /** The C struct. */
  const cpuexec_range_schedule &c_schedule() const noexcept { return s_; }

private:
  cpuexec_range_schedule s_;
};

/** The serial loop `f(0, total)` split into blocks by the schedule and run on
 * the installed executor (cpuexec_execute_ranges(), seed 001); the exception
 * rules of parallel_for(). */
template <class F> void execute_ranges(int64_t total, const range_schedule &schedule, F &&f) {
  static_assert(detail::range_body_ok<F>::value, "f must be callable as f(int64_t begin, int64_t end) const");
  detail::range_call<std::remove_reference_t<F>> call(f);
  call.state.finish(detail::capi::execute_ranges(total, &schedule.c_schedule(), &call, &call.invoke));
}

/** execute_ranges() with the block size planned from the cost of one index
 * (cpuexec_execute_costed_ranges()). */
template <class F>
void execute_costed_ranges(int64_t total, const cost &c, const plan_constraints &limits, int64_t block_multiple,
                           F &&f) {
  static_assert(detail::range_body_ok<F>::value, "f must be callable as f(int64_t begin, int64_t end) const");
  cpuexec_cost cc = detail::c_cost(c);
  cpuexec_plan_constraints cl = detail::c_constraints(limits);
  detail::range_call<std::remove_reference_t<F>> call(f);
  call.state.finish(detail::capi::execute_costed_ranges(total, &cc, &cl, block_multiple, &call, &call.invoke));
}

/** The serial loop
 * @code
 * for (int32_t id = 0; id < worker_count; id++) job(id, worker_count);
 * @endcode
 * run on exec (cpuexec_run_worker_jobs(); worker_count 0: exec's effective
 * threads); jobs must not wait for each other. The exception rules of
 * parallel_for(). */
template <class F> void run_worker_jobs(executor_ref exec, int32_t worker_count, F &&job) {
  static_assert(std::is_invocable_v<const std::remove_reference_t<F> &, int32_t, int32_t>,
                "job must be callable as job(int32_t worker_id, int32_t worker_count) const");
  uint32_t n = detail::count(worker_count, "worker_count");
  detail::job_call<std::remove_reference_t<F>> call(job);
  call.state.finish(detail::capi::run_worker_jobs(exec.get(), n, &call, &call.invoke));
}

/** What a range-executor implementation calls for each range (seed 003):
 * cb(start, end) runs the kernel's callback and returns false when the run
 * should stop (a callback failed or threw, or the range was out of bounds).
 * Copy it to any thread; it is valid until the implementation returns. */
class range_callback {
public:
  /** Runs the range; false: stop starting ranges. */
  bool operator()(int64_t start, int64_t end) const noexcept {
    int rc = fn_(ctx_, start, end);
    if (rc == 0) return true;
    int expected = 0;
    first_->compare_exchange_strong(expected, rc, std::memory_order_acq_rel);
    return false;
  }
  /** True once a range has failed. */
  bool stopped() const noexcept { return first_->load(std::memory_order_acquire) != 0; }
  /** For range_executor_impl only. */
  range_callback(cpuexec_range_callback fn, void *ctx, std::atomic<int> *first) noexcept
      : fn_(fn), ctx_(ctx), first_(first) {}

private:
  cpuexec_range_callback fn_;
  void *ctx_;
  std::atomic<int> *first_;
};

/** A range executor (seed 003; cpuexec_range_executor): a value naming how
 * to run the ranges of [0, count). Copy freely; what it refers to must
 * outlive its uses. */
class range_executor {
public:
  /** The serial executor. */
  range_executor() noexcept : e_(cpuexec_range_executor_serial()) {}
  /** A C range executor. */
  explicit range_executor(const cpuexec_range_executor &e) noexcept : e_(e) {}
  /** One range [0, count) on the caller. */
  static range_executor serial() noexcept { return range_executor(cpuexec_range_executor_serial()); }
  /** The executor installed on the calling thread at each run. */
  static range_executor installed() noexcept { return range_executor(cpuexec_range_executor_installed()); }
  /** A given executor (serial for an empty view). */
  static range_executor of(executor_ref exec) noexcept { return range_executor(cpuexec_range_executor_of(exec.get())); }
  /** The C value. */
  const cpuexec_range_executor &c_executor() const noexcept { return e_; }

  /** Runs f(start, end) over the ranges of [0, count) this executor
   * chooses, through cpuexec_range_executor_run() (bounds checked, nested
   * calls inline). The exception rules of parallel_for(), for exceptions of
   * f and of a C++ implementation alike; a range out of bounds or another
   * executor failure throws cpuexec::error. */
  template <class F> void run(int64_t count, F &&f) const {
    static_assert(detail::range_body_ok<F>::value, "f must be callable as f(int64_t begin, int64_t end) const");
    detail::range_call<std::remove_reference_t<F>> call(f);
    int rc;
    {
      detail::active_call_guard active(&call.state);
      rc = detail::capi::range_executor_run(&e_, count, &call, &call.invoke);
    }
    call.state.finish(rc);
  }

private:
  cpuexec_range_executor e_;
};

/** A range executor implemented in C++: impl(int64_t count,
 * cpuexec::range_callback cb) calls cb(start, end) for disjoint half-open
 * ranges covering [0, count), possibly on other threads, stops starting
 * ranges once cb returns false, and returns after every started cb call
 * returned (seed 003's contract). impl returns void, or an int: 0 or its
 * own negative CPUEXEC_E* error. An exception impl throws reaches the C++
 * run() that called it, or, when C code called it, becomes
 * CPUEXEC_ECALLBACK. Not copyable or movable: executor() points at it. */
template <class Impl> class range_executor_impl {
public:
  /** Keeps impl. */
  explicit range_executor_impl(Impl impl) : impl_(std::move(impl)) {}
  range_executor_impl(const range_executor_impl &) = delete;
  range_executor_impl &operator=(const range_executor_impl &) = delete;
  /** The range executor, valid while *this lives. */
  range_executor executor() const noexcept {
    return range_executor(detail::capi::make_range_executor(&run_c, const_cast<range_executor_impl *>(this)));
  }
  /** The same. */
  operator range_executor() const noexcept { return executor(); }

private:
  static int run_c(void *self, int64_t count, void *ctx, cpuexec_range_callback fn) noexcept {
    auto *me = static_cast<range_executor_impl *>(self);
    std::atomic<int> first{0};
    range_callback cb(fn, ctx, &first);
    int own = 0;
#if CPUEXEC_HPP_EXCEPTIONS
    try {
#endif
      if constexpr (std::is_void_v<std::invoke_result_t<Impl &, int64_t, range_callback>>)
        std::invoke(me->impl_, count, cb);
      else
        own = static_cast<int>(std::invoke(me->impl_, count, cb));
#if CPUEXEC_HPP_EXCEPTIONS
    } catch (...) {
      if (detail::active_call == nullptr) return detail::capi::impl_threw;
      detail::active_call->capture(std::current_exception());
      return detail::capi::stop_value;
    }
#endif
    if (own != 0) return own;
    return first.load(std::memory_order_acquire);
  }
  Impl impl_;
};

/** A range_executor_impl for a lambda: `auto ex = cpuexec::make_range_executor([&](int64_t n, cpuexec::range_callback cb) {...});` */
template <class Impl> range_executor_impl<std::decay_t<Impl>> make_range_executor(Impl &&impl) {
  return range_executor_impl<std::decay_t<Impl>>(std::forward<Impl>(impl));
}

} // namespace cpuexec

namespace std {
/** cpuexec::errc converts to std::error_code. */
template <> struct is_error_code_enum<cpuexec::errc> : true_type {};
} // namespace std

#endif
