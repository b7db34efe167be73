/** @file
 * libcpuexec: the registry of shared, compatible pools.
 *
 * Resolved policies with equal sharing keys share one executor; leases are
 * reference counted; at most `capacity` incompatible pools are live.
 *
 * Who releases what: every cpuexec_registry_acquire() that returns 0 hands
 * out one reference, which its holder gives back with exactly one
 * cpuexec_executor_release() (cpuexec/executor.h); cpuexec_executor_retain()
 * adds one more. The last release stops the pool, or keeps it idle for
 * idle_retention_ns. No sequence of these calls can stop a pool another
 * holder still uses.
 *
 * Thread safety: every function here may be called from any thread at once
 * on the same registry, except that cpuexec_registry_destroy() must not race
 * other calls on the registry it destroys. */
#ifndef CPUEXEC_REGISTRY_H
#define CPUEXEC_REGISTRY_H

#include <cpuexec/common.h>
#include <cpuexec/executor.h>

/** A registry of shared pools (opaque). */
typedef struct cpuexec_registry cpuexec_registry;

/** Zero-initialised ({0}) options are the defaults, like
 * cpuexec_registry_options_init(). */
typedef struct cpuexec_registry_options {
  int32_t capacity;            /**< live incompatible pools; 0: the default, 8; negative is CPUEXEC_EINVAL */
  uint64_t idle_retention_ns;  /**< keep an unleased pool this long; 0 (default): stop it at once */
  uint64_t reserved_[4];       /**< zero: room for fields of later versions */
} cpuexec_registry_options;
/* Idle retention needs no timer thread: a retained pool is reused by a
 * compatible acquire, evicted when an incompatible acquire needs its
 * capacity, and stopped by the first call on the registry (acquire,
 * release, live_pools, configure, destroy) after its retention has passed.
 * Until then its workers stay parked; expired pools never count against
 * capacity. */

CPUEXEC_BEGIN_DECLS

/** Sets the defaults above (every field 0); NULL is ignored. */
CPUEXEC_EXPORT void cpuexec_registry_options_init(cpuexec_registry_options *options);
/** Parses "capacity=8,idle_retention=50ms" into *options, starting from the
 * defaults, with the strict rules of cpuexec_policy_parse(): keys capacity
 * (a decimal >= 1) and idle_retention (digits and a unit ns, us, ms or s,
 * or 0), each at most once, in any order, no whitespace; "" gives the
 * defaults. On failure *options is unchanged and cpuexec_error_message() names
 * the key. text or options NULL is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_registry_options_parse(const char *text, cpuexec_registry_options *options);
/** The same for the CPUEXEC_REGISTRY environment variable (unset: the
 * defaults); a malformed value is an error whose message starts
 * "CPUEXEC_REGISTRY: ". */
CPUEXEC_EXPORT int cpuexec_registry_options_from_environment(cpuexec_registry_options *options);

/** options NULL: the defaults. out NULL is CPUEXEC_EINVAL; *out is NULL on failure. */
CPUEXEC_EXPORT int cpuexec_registry_create(const cpuexec_registry_options *options, cpuexec_registry **out);
/** CPUEXEC_EBUSY while leases are live; otherwise stops retained pools and
 * frees. NULL is ignored and returns 0 (like free). The process registry
 * cannot be destroyed (CPUEXEC_EINVAL). */
CPUEXEC_EXPORT int cpuexec_registry_destroy(cpuexec_registry *registry);
/** The process-owned registry: created on first use with
 * cpuexec_registry_options_from_environment() (CPUEXEC_REGISTRY; when it is
 * malformed the registry takes the defaults, and sessions that would use it
 * fail with that error), never destroyed. NULL only when out of memory. */
CPUEXEC_EXPORT cpuexec_registry *cpuexec_registry_default(void);
/** Changes a live registry's capacity and idle retention (options NULL: the
 * defaults), for example to give the process registry a retention from the
 * application: pools already live stay; a lower capacity applies to later
 * acquires; a shorter retention applies at once. registry NULL or a
 * negative capacity is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_registry_configure(cpuexec_registry *registry, const cpuexec_registry_options *options);
/** The process-wide default pool: one lease from cpuexec_registry_default()
 * on cpuexec_policy_resolve_default(), made on the first call and shared by every
 * caller (the legacy ParallelFor uses it outside any session). The process
 * owns the lease: never release it. In a fork child the first call makes a
 * fresh one. Returns 0 and *out; or, when it could not be made, *out NULL
 * and that error again on every call (of this process). */
CPUEXEC_EXPORT int cpuexec_registry_default_executor(cpuexec_executor **out);

/** A lease (one reference) on a pool whose sharing key equals resolved's,
 * creating the pool if needed. The caller releases it with
 * cpuexec_executor_release(). Any NULL argument is CPUEXEC_EINVAL; *lease
 * is NULL on failure. */
CPUEXEC_EXPORT int cpuexec_registry_acquire(cpuexec_registry *registry, const cpuexec_resolved *resolved,
                                            cpuexec_executor **lease);
/** Pools currently holding threads or leases (serial pools never count);
 * 0 for NULL. */
CPUEXEC_EXPORT int32_t cpuexec_registry_live_pools(const cpuexec_registry *registry);

CPUEXEC_END_DECLS

#endif
