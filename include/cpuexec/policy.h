/** @file
 * libcpuexec: the requested CPU execution policy.
 *
 * A cpuexec_policy says what a caller asks for; cpuexec_policy_resolve()
 * (cpuexec/resolve.h) turns it into what will actually run on a topology.
 * Start from cpuexec_policy_init() or {0}: both are the defaults (unpinned,
 * adaptive spin, the topology's thread count), so fields added later get
 * their defaults too.
 *
 * Thread safety: a policy is a plain value owned by the caller; every
 * function here may be called from any thread, on distinct policies (or the
 * same one, read only). Pointers are never kept after a call returns. */
#ifndef CPUEXEC_POLICY_H
#define CPUEXEC_POLICY_H

#include <cpuexec/common.h>

/** How waiting threads (workers between regions, the caller waiting for
 * workers) behave before they park in the kernel. */
typedef enum cpuexec_spin_policy {
  CPUEXEC_SPIN_ADAPTIVE = 0,      /**< bounded time-based spin chosen by the library; spin_budget must be 0 */
  CPUEXEC_SPIN_FIXED_ITERATIONS,  /**< spin exactly spin_budget pause iterations, then park */
  CPUEXEC_SPIN_FIXED_DURATION,    /**< spin spin_budget nanoseconds, then park */
  CPUEXEC_SPIN_PARK_IMMEDIATELY   /**< never spin; spin_budget must be 0 */
} cpuexec_spin_policy;

/** Where workers (and, for EXPLICIT, the caller) are placed. */
typedef enum cpuexec_affinity_policy {
  CPUEXEC_AFFINITY_NONE = 0,          /**< no placement: the OS schedules */
  CPUEXEC_AFFINITY_PHYSICAL_CORES,    /**< one logical processor per physical core, performance cores first */
  CPUEXEC_AFFINITY_PERFORMANCE_CORES, /**< as PHYSICAL_CORES; says so when the topology cannot rank kinds */
  CPUEXEC_AFFINITY_PHYSICAL_THEN_SMT, /**< every physical core first, then SMT siblings */
  CPUEXEC_AFFINITY_EXPLICIT           /**< cpu_set[0] is the caller, the rest the workers */
} cpuexec_affinity_policy;

/** Which participants of a region run a range (cpuexec/executor.h). */
typedef enum cpuexec_participation {
  /** Default: a worker that has not checked in when another participant
   * runs out of work has its share run by that participant; a short region
   * may run on fewer threads than admitted, never waiting for a wake-up. */
  CPUEXEC_PARTICIPATION_TAKE_OVER = 0,
  /** Every admitted participant runs its range, the caller waiting for it,
   * as CPUEXEC_FOR_EVERY_PARTICIPANT does per call: a session's requested
   * threads are the threads its kernels observe. Costs a wake-up per idle
   * worker on every region (doc/spinning.md), and such regions run one at a
   * time per executor. */
  CPUEXEC_PARTICIPATION_EVERY_PARTICIPANT
} cpuexec_participation;

/** Whether, and with whom, an executor's threads share the node's CPU
 * budget (cpuexec/node.h, doc/node-budget.md). */
typedef enum cpuexec_node_budget {
  /** Default: as CPUEXEC_NODE_BUDGET says, else CGROUP. */
  CPUEXEC_NODE_BUDGET_DEFAULT = 0,
  /** Every libcpuexec process of the user in the cgroup shares one budget
   * of its quota or cpuset. */
  CPUEXEC_NODE_BUDGET_CGROUP,
  /** Every libcpuexec process of the user shares one budget of the visible
   * processors, whatever its cgroup. */
  CPUEXEC_NODE_BUDGET_HOST,
  /** The executor counts alone: its workers take no slot and its callers
   * hold none, as with CPUEXEC_NODE_BUDGET=off. */
  CPUEXEC_NODE_BUDGET_OFF
} cpuexec_node_budget;

/** The most processors an explicit cpu_set can name. */
#define CPUEXEC_CPU_SET_MAX 1024

/** The layout is versioned by struct_size so it can grow: new fields take
 * the reserved room, and cpu_set is last so a later version can hold more
 * processors without moving anything else; struct_size tells the library
 * how many entries the caller's layout holds. */
typedef struct cpuexec_policy {
  /** sizeof(cpuexec_policy) as the caller compiled it, set by
   * cpuexec_policy_init(); 0 ({0}) means this version's layout. Any other
   * value is CPUEXEC_EINVAL. Not part of the request: cpuexec_policy_equal()
   * ignores it. */
  uint32_t struct_size;
  /** 0: topology default; 1: serial (no workers); N > 1: N participants
   * including the caller. Negative values are rejected. */
  int32_t num_threads;
  /** How waiting threads spin before they park; see spin_budget. */
  cpuexec_spin_policy spin_policy;
  /** FIXED_ITERATIONS: pause iterations. FIXED_DURATION: nanoseconds.
   * Must be 0 for ADAPTIVE and PARK_IMMEDIATELY, and > 0 for the fixed ones. */
  uint64_t spin_budget;
  /** Default NONE: pinning is always an explicit choice. */
  cpuexec_affinity_policy affinity_policy;
  /** Recorded in the sharing key; nested calls still run inline (see executor.h). */
  bool allow_nested_parallelism;
  /** Every region hands the dispatching thread's floating-point control
   * state (flush-to-zero, denormals-are-zero, rounding: x86-64 MXCSR and
   * x87 control word, aarch64 FPCR) to the workers for its length, as
   * CPUEXEC_FOR_INHERIT_FP_ENV does per call (cpuexec/executor.h).
   * Default false: workers keep the default environment. */
  bool inherit_fp_environment;
  /** The rule for every region of executors made from this policy; part of
   * the sharing key when not TAKE_OVER (executors carry it, and kernels see
   * only their executor). */
  cpuexec_participation participation;
  /** The node budget the executor's threads share: part of the sharing key
   * when not DEFAULT. A process shares one scope: the first executor that
   * asks for CGROUP or HOST (or, before any does, CPUEXEC_NODE_BUDGET)
   * decides it; an executor that asks for the other one shares the
   * process's, and cpuexec_node_budget_describe() says so. */
  cpuexec_node_budget node_budget;
  uint64_t reserved_[7];  /**< zero: room for fields of later versions */
  /** Logical processor ids (OS indices), only with CPUEXEC_AFFINITY_EXPLICIT. */
  int32_t cpu_set_count;
  int32_t cpu_set[CPUEXEC_CPU_SET_MAX]; /**< the ids; the first is the caller's */
} cpuexec_policy;

/** The kind of text cpuexec_*_describe() writes. */
typedef enum cpuexec_format {
  CPUEXEC_FORMAT_TEXT = 0, /**< lines of "key: value" text for people */
  CPUEXEC_FORMAT_JSON      /**< one JSON object */
} cpuexec_format;

CPUEXEC_BEGIN_DECLS

/** Defaults: num_threads 0, ADAPTIVE spin with budget 0, affinity NONE
 * (unpinned, like every implicit default; pin with
 * affinity_policy=physical_cores or another placement), empty cpu_set,
 * nesting not allowed; every field 0 except struct_size. NULL is ignored. */
CPUEXEC_EXPORT void cpuexec_policy_init(cpuexec_policy *policy);

/** Parses "key=value,key=value" into *policy, starting from the defaults.
 * Keys: num_threads, spin_policy (adaptive|fixed_iterations|fixed_duration|
 * park_immediately), spin_budget (an integer; durations take a unit:
 * ns, us, ms, s), affinity_policy (none|physical_cores|performance_cores|
 * physical_then_smt|explicit), cpu_set (a Linux cpulist "0,2,4-7"; an item
 * without '=' continues the list before it), allow_nested_parallelism
 * (true|false), inherit_fp_environment (true|false), participation
 * (take_over|every_participant), node_budget (default|cgroup|host|off). Strict: decimal only, no repeated or unknown keys, no
 * trailing garbage, no overflow. An empty text gives the defaults.
 * The details, chosen so a typo never becomes a different policy:
 * - keys in any order; no whitespace anywhere; names are lower case;
 * - numbers are digits without sign or leading zeros; num_threads fits int32;
 * - spin_budget is a plain count with fixed_iterations ("1000"), a duration
 *   with fixed_duration ("50us"), and absent or 0 otherwise; it is checked
 *   against spin_policy after the whole text is read;
 * - cpu_set keeps its order (the first id is the caller's); ranges ascend;
 *   no id twice; at most CPUEXEC_CPU_SET_MAX ids; no stride form ("0-7:2");
 *   "cpu_set=" is the empty list, the only empty value accepted;
 * - the rules that need no topology are applied here as in cpuexec_policy_resolve():
 *   num_threads >= 0, a fixed spin needs a budget > 0, adaptive and
 *   park_immediately take none, cpu_set if and only if affinity is explicit.
 * On failure *policy is unchanged and cpuexec_error_message() names the key.
 * text or policy NULL is CPUEXEC_EINVAL. The text is only read during the
 * call; nothing is kept. */
CPUEXEC_EXPORT int cpuexec_policy_parse(const char *text, cpuexec_policy *policy);

/** Writes the policy in the grammar above, every key present in a fixed
 * order (num_threads, spin_policy, spin_budget, affinity_policy,
 * allow_nested_parallelism, inherit_fp_environment, participation, then
 * node_budget only when not the default, so that texts written before it
 * existed read the same; cpu_set last since its value holds commas);
 * durations in the largest exact unit (50000 ns is "50us"), cpu_set with
 * ascending runs as ranges. parse(format(p)) == p for every p that meets
 * the rules above; other policies are still written, for messages. Returns the length of the full text (like
 * snprintf), or CPUEXEC_EINVAL for an enum out of range or a cpu_set_count
 * above CPUEXEC_CPU_SET_MAX; writes at most size bytes including NUL.
 * policy NULL, or buf NULL with size > 0, is CPUEXEC_EINVAL; buf NULL with
 * size 0 measures the text. */
CPUEXEC_EXPORT int cpuexec_policy_format(const cpuexec_policy *policy, char *buf, size_t size);

/** True when the two requests are field-for-field equal (cpu_set entries
 * past cpu_set_count are ignored). NULL equals only NULL. */
CPUEXEC_EXPORT bool cpuexec_policy_equal(const cpuexec_policy *a, const cpuexec_policy *b);

/** 0 when policy meets the rules cpuexec_policy_parse() applies to every text
 * (those that need no topology; see the list above); otherwise CPUEXEC_EINVAL
 * with cpuexec_error_message() naming the field, the value and what is allowed,
 * as cpuexec_policy_resolve() would. For requests built field by field (bindings
 * validate eagerly with it). NULL is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_policy_validate(const cpuexec_policy *policy);

/** The process default request: CPUEXEC_POLICY from the environment parsed
 * with the grammar above (unset or empty: cpuexec_policy_init()). A
 * malformed CPUEXEC_POLICY is an error whose message starts
 * "CPUEXEC_POLICY: " and then names the key; *policy is then unchanged.
 * policy NULL is CPUEXEC_EINVAL. Reading the environment is not safe
 * against a concurrent setenv() (as for getenv()). */
CPUEXEC_EXPORT int cpuexec_policy_from_environment(cpuexec_policy *policy);

/** The name of a spin policy as it appears in the text form ("adaptive"),
 * or NULL for values outside the enum. Static storage; thread-safe. */
CPUEXEC_EXPORT const char *cpuexec_spin_policy_name(cpuexec_spin_policy spin);
/** The name of an affinity policy as it appears in the text form
 * ("physical_cores"), or NULL for values outside the enum. Static storage;
 * thread-safe. */
CPUEXEC_EXPORT const char *cpuexec_affinity_policy_name(cpuexec_affinity_policy affinity);
/** The name of a participation rule as it appears in the text form
 * ("take_over", "every_participant"), or NULL for values outside the enum.
 * Static storage; thread-safe. */
CPUEXEC_EXPORT const char *cpuexec_participation_name(cpuexec_participation participation);
/** The name of a node budget choice as it appears in the text form
 * ("default", "cgroup", "host", "off"), or NULL for values outside the
 * enum. Static storage; thread-safe. */
CPUEXEC_EXPORT const char *cpuexec_node_budget_name(cpuexec_node_budget budget);

CPUEXEC_END_DECLS

#endif
