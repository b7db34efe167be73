/** @file cxx/policy.hpp
 * The requested policy as a C++ value with builder-style setters and
 * parse/to_string, and an owned resolution. Part of cpuexec.hpp. */
#ifndef CPUEXEC_CXX_POLICY_HPP
#define CPUEXEC_CXX_POLICY_HPP

#include <cpuexec/cxx/error.hpp>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cpuexec {

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

/** Which participants of a region run a range (cpuexec_participation). */
enum class participation : int {
  take_over = CPUEXEC_PARTICIPATION_TAKE_OVER,                /**< late workers' shares are taken over */
  every_participant = CPUEXEC_PARTICIPATION_EVERY_PARTICIPANT /**< every admitted participant runs a range */
};

/** With whom the executor's threads share the node's CPUs (cpuexec_node_budget). */
enum class node_budget : int {
  environment = CPUEXEC_NODE_BUDGET_DEFAULT, /**< as CPUEXEC_NODE_BUDGET says, else cgroup */
  cgroup = CPUEXEC_NODE_BUDGET_CGROUP,       /**< this user's processes in the cgroup */
  host = CPUEXEC_NODE_BUDGET_HOST,           /**< all of this user's processes */
  off = CPUEXEC_NODE_BUDGET_OFF              /**< nobody: the executor counts alone */
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
  /** Every region hands the caller's floating-point control state to the workers. */
  policy &inherit_fp_environment(bool inherit) noexcept { p_.inherit_fp_environment = inherit; return *this; }
  /** Whether regions carry the caller's floating-point control state. */
  bool inherit_fp_environment() const noexcept { return p_.inherit_fp_environment; }
  /** The rule for every region of this policy's executors. */
  policy &participation_rule(participation rule) noexcept {
    p_.participation = static_cast<cpuexec_participation>(rule);
    return *this;
  }
  /** The participation rule requested. */
  participation participation_rule() const noexcept { return static_cast<participation>(p_.participation); }
  /** With whom this policy's executors share the node's CPUs. */
  policy &node_budget_scope(node_budget scope) noexcept {
    p_.node_budget = static_cast<cpuexec_node_budget>(scope);
    return *this;
  }
  /** The node budget requested. */
  node_budget node_budget_scope() const noexcept { return static_cast<node_budget>(p_.node_budget); }

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
  /** Resolves p (cpuexec_policy_resolve() on this process's topology); throws on failure. */
  explicit resolved(const policy &p) { detail::check(cpuexec_policy_resolve(&p.c_policy(), nullptr, &r_)); }
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

} // namespace cpuexec

#endif
