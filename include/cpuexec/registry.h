/** @file
 * libcpuexec: the registry of shared, compatible pools.
 *
 * Resolved policies with equal sharing keys share one executor; leases are
 * reference counted; at most `capacity` incompatible pools are live.
 * Every function here is thread-safe: any thread may acquire and release
 * on one registry at once (a lock guards it). A lease is owned by its
 * acquirer and released exactly once. */
#ifndef CPUEXEC_REGISTRY_H
#define CPUEXEC_REGISTRY_H

#include <cpuexec/common.h>
#include <cpuexec/executor.h>

/** A registry of shared pools (opaque). */
typedef struct cpuexec_registry cpuexec_registry;

/** Options of cpuexec_registry_create(); start from cpuexec_registry_options_init(). */
typedef struct cpuexec_registry_options {
  uint32_t capacity;           /**< live incompatible pools; default 8 */
  uint64_t idle_retention_ns;  /**< keep an unleased pool this long; default 0: stop at once */
} cpuexec_registry_options;
/* Idle retention needs no timer thread: a retained pool is reused by a
 * compatible acquire, evicted when an incompatible acquire needs its
 * capacity, and stopped by the first call on the registry (acquire,
 * release, live_pools, destroy) after its retention has passed. Until then
 * its workers stay parked; expired pools never count against capacity. */

CPUEXEC_BEGIN_DECLS

/** Sets the defaults above; NULL is ignored. */
CPUEXEC_EXPORT void cpuexec_registry_options_init(cpuexec_registry_options *options);
/** Creates a registry into *out (the caller destroys it). options NULL: the
 * defaults. out NULL or capacity 0 is CPUEXEC_EINVAL; CPUEXEC_ENOMEM. */
CPUEXEC_EXPORT int cpuexec_registry_create(const cpuexec_registry_options *options, cpuexec_registry **out);
/** CPUEXEC_EBUSY while leases are live; otherwise stops retained pools and
 * frees. NULL is ignored and returns 0 (like free). */
CPUEXEC_EXPORT int cpuexec_registry_destroy(cpuexec_registry *registry);
/** The process-owned registry (capacity 8, no idle retention), created on
 * first use; never destroy it. NULL only when it could not be allocated. */
CPUEXEC_EXPORT cpuexec_registry *cpuexec_registry_default(void);

/** Stores in *lease a lease on a pool whose sharing key equals resolved's,
 * creating and starting it if needed (the pool keeps its own copy of
 * resolved). The caller releases it once with cpuexec_executor_release().
 * registry, resolved or lease NULL is CPUEXEC_EINVAL; CPUEXEC_ECAPACITY when
 * `capacity` incompatible pools are live; a pool that cannot start fails as
 * cpuexec_executor_create() does (CPUEXEC_ETHREAD, CPUEXEC_EAFFINITY). */
CPUEXEC_EXPORT int cpuexec_registry_acquire(cpuexec_registry *registry, const cpuexec_resolved *resolved,
                                            cpuexec_executor **lease);
/** Releases a lease from the registry (or destroys an executor from
 * cpuexec_executor_create()); the last release of a pool stops its workers
 * (or retains it, see idle_retention_ns). NULL is ignored (like free). No
 * call may be in progress through this lease, and it must not be used
 * afterwards; other leases of the same pool are unaffected. */
CPUEXEC_EXPORT void cpuexec_executor_release(cpuexec_executor *lease);
/** Pools currently holding threads or leases (serial pools never count);
 * 0 for NULL. */
CPUEXEC_EXPORT uint32_t cpuexec_registry_live_pools(const cpuexec_registry *registry);

CPUEXEC_END_DECLS

#endif
