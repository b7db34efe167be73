/** @file
 * libcpuexec: resolving a requested policy against a topology.
 *
 * cpuexec_policy_resolve() is deterministic: the same request on the same topology
 * (and environment) gives the same resolution, byte for byte. The result is
 * immutable and says exactly what will run: how many participants, which
 * processors, how waiting threads spin and park, and every fallback taken.
 *
 * Thread safety: a resolution is immutable and reference counted inside the
 * library (executors keep their own reference), so any number of threads
 * may read one at once, and destroying the caller's reference never affects
 * an executor made from it. cpuexec_policy_resolve() may be called from any thread
 * at once. */
#ifndef CPUEXEC_RESOLVE_H
#define CPUEXEC_RESOLVE_H

#include <cpuexec/common.h>
#include <cpuexec/policy.h>
#include <cpuexec/topology.h>

/** A resolution (opaque, immutable). */
typedef struct cpuexec_resolved cpuexec_resolved;

/** What a waiting thread will do, in concrete terms. */
typedef struct cpuexec_resolved_spin {
  cpuexec_spin_policy policy;    /**< as requested */
  uint64_t spin_ns;              /**< time spun before parking (0: parks at once); FIXED_ITERATIONS: 0 */
  uint64_t spin_iterations;      /**< FIXED_ITERATIONS: pause iterations before parking; else 0 */
  bool park_when_oversubscribed; /**< ADAPTIVE: an executor made from this resolution parks its waiting threads at once when its participants outnumber the visible processors (decided once, when the executor is made) */
  /** ADAPTIVE: follows a steady call cadence (workers sleep until shortly
   * before the next expected region and spin across a window around it),
   * spinning at most this many thousandths of each worker's time; 0: never
   * (doc/spinning.md, cpuexec_executor_spin_state_get). */
  uint32_t cadence_burn_permille;
} cpuexec_resolved_spin;

CPUEXEC_BEGIN_DECLS

/** Resolves request (NULL: the process default, cpuexec_policy_from_environment)
 * on topology (NULL: this process's topology, loaded once and cached). The
 * caller destroys *out with cpuexec_resolved_destroy(). out NULL is
 * CPUEXEC_EINVAL; *out is NULL on failure. */
CPUEXEC_EXPORT int cpuexec_policy_resolve(const cpuexec_policy *request, const cpuexec_topology *topology,
                                   cpuexec_resolved **out);
/** Resolves the process default once and returns the shared result; when
 * CPUEXEC_DISPLAY=1 (or verbose) it is printed to stderr the first time. The
 * caller must not destroy it; it lives until the process exits. The first
 * call's failure (a malformed CPUEXEC_POLICY) is returned, with its message,
 * by every call. Thread-safe: concurrent first calls resolve once. */
CPUEXEC_EXPORT int cpuexec_policy_resolve_default(const cpuexec_resolved **out);
/** Frees a resolution from cpuexec_policy_resolve(); NULL is ignored (like free).
 * No thread may use it during or after the call. */
CPUEXEC_EXPORT void cpuexec_resolved_destroy(cpuexec_resolved *resolved);
/* The accessors below on NULL return neutral values and never crash:
 * request, worker processors, diagnostic and sharing key NULL (and *count
 * 0), counts and effective threads 0, caller processor -1, the bools false,
 * spin behaviour PARK_IMMEDIATELY with no spin. A diagnostic index at or
 * past the count is NULL too. */

/** The request as given (with defaults filled in); NULL for NULL. */
CPUEXEC_EXPORT const cpuexec_policy *cpuexec_resolved_request(const cpuexec_resolved *resolved);
/** Participants a region will have at most, the caller included (1:
 * serial, no worker thread); 0 for NULL. */
CPUEXEC_EXPORT int32_t cpuexec_resolved_effective_threads(const cpuexec_resolved *resolved);
/** The caller's logical processor, or -1 when the caller is not placed:
 * EXPLICIT pins the caller to cpu_set[0] at each dispatch; otherwise a
 * caller bound to one processor by someone else is reported and kept. */
CPUEXEC_EXPORT int32_t cpuexec_resolved_caller_processor(const cpuexec_resolved *resolved);
/** Worker k (1..threads-1) runs on processors[k-1]; *count is 0 without
 * affinity (and the result NULL). count must not be NULL. */
CPUEXEC_EXPORT const int32_t *cpuexec_resolved_worker_processors(const cpuexec_resolved *resolved,
                                                                 int32_t *count);
/** Over the participants that have a place (the workers, and the caller on
 * its pinned processor or on the core kept for it): uses_smt when two of
 * them share a physical core, uses_efficiency_cores when one is on a core
 * of a less performant kind. Both false with affinity_policy=none. */
CPUEXEC_EXPORT bool cpuexec_resolved_uses_smt(const cpuexec_resolved *resolved);
/** Whether a placed participant is on a core of a less performant kind (see
 * cpuexec_resolved_uses_smt()); false for NULL. */
CPUEXEC_EXPORT bool cpuexec_resolved_uses_efficiency_cores(const cpuexec_resolved *resolved);
/** The request's allow_nested_parallelism; false for NULL. */
CPUEXEC_EXPORT bool cpuexec_resolved_allows_nesting(const cpuexec_resolved *resolved);
/** What a waiting thread will do; PARK_IMMEDIATELY with no spin for NULL. */
CPUEXEC_EXPORT cpuexec_resolved_spin cpuexec_resolved_spin_behaviour(const cpuexec_resolved *resolved);
/** How many diagnostics (fallbacks taken, inputs ignored) were recorded. */
CPUEXEC_EXPORT size_t cpuexec_resolved_diagnostic_count(const cpuexec_resolved *resolved);
/** Diagnostic index (0-based, in the order the steps were taken), or NULL
 * at or past the count. */
CPUEXEC_EXPORT const char *cpuexec_resolved_diagnostic(const cpuexec_resolved *resolved, size_t index);
/** Behaviour-only identity: equal keys <=> interchangeable executors. */
CPUEXEC_EXPORT const char *cpuexec_resolved_sharing_key(const cpuexec_resolved *resolved);
/** Text or JSON description (request, resolution, diagnostics, key).
 * snprintf-like: returns the full length. resolved NULL, a format outside
 * the enum, or buf NULL with size > 0 is CPUEXEC_EINVAL naming it. */
CPUEXEC_EXPORT int cpuexec_resolved_describe(const cpuexec_resolved *resolved, cpuexec_format format,
                                             char *buf, size_t size);

CPUEXEC_END_DECLS

#endif
