/** @file
 * libcpuexec: the process-visible processor topology, read with hwloc.
 *
 * "Process-visible" means the processors this process may run on: hwloc's
 * allowed cpuset (cgroup cpusets, containers) intersected with the process
 * binding (taskset, MPI rank binding). Stored XML or synthetic topologies
 * can be loaded with an explicit allowed set and binding, so every machine
 * shape can be resolved on any machine.
 *
 * Thread safety: a topology is immutable once loaded; any number of threads
 * may read and resolve against one at once. Destroying it while another
 * thread uses it, or while a resolution made against it is being made, is
 * the caller's error (resolutions keep no pointer to it). */
#ifndef CPUEXEC_TOPOLOGY_H
#define CPUEXEC_TOPOLOGY_H

#include <cpuexec/common.h>
#include <cpuexec/policy.h>

/** A loaded topology (opaque). */
typedef struct cpuexec_topology cpuexec_topology;

/** Inputs that normally come from the running process. NULL or 0 fields
 * mean "read from the process" for cpuexec_topology_load() and "not
 * restricted / no quota" for stored topologies. */
typedef struct cpuexec_topology_options {
  const char *allowed_cpulist; /**< Linux cpulist ("0-3,8"), NULL: everything the topology allows */
  const char *binding_cpulist; /**< the process binding, NULL: not bound */
  const char *cgroup_root;     /**< cgroup v2 mount to read cpu.max from, NULL: /sys/fs/cgroup */
  const char *proc_self_cgroup;/**< file naming the process cgroup ("0::/path"), NULL: /proc/self/cgroup */
  double cpu_quota;            /**< > 0: use this many CPUs as the quota instead of reading cgroup files */
  /** Stored topologies: the calling thread's binding when resolving against
   * them (a caller pinned by someone else keeps its placement), NULL: the
   * caller is not pinned. Ignored by cpuexec_topology_load(), which reads
   * the calling thread's binding at each cpuexec_policy_resolve(). */
  const char *caller_cpulist;
  uint64_t reserved_[4]; /**< zero: room for fields of later versions */
} cpuexec_topology_options;

CPUEXEC_BEGIN_DECLS

/** Zeroes every field (all "from the process"), the same as {0}; NULL is
 * ignored. The strings are read during the load only. */
CPUEXEC_EXPORT void cpuexec_topology_options_init(cpuexec_topology_options *options);

/** Loads this process's topology into *out (the caller destroys it).
 * options may be NULL. out NULL or a malformed cpulist is CPUEXEC_EINVAL;
 * hwloc failures and unreadable cgroup files are CPUEXEC_ETOPOLOGY, with the
 * file or field named. */
CPUEXEC_EXPORT int cpuexec_topology_load(const cpuexec_topology_options *options, cpuexec_topology **out);
/** Loads a stored hwloc XML topology from path into *out (the caller
 * destroys it). path or out NULL is CPUEXEC_EINVAL; an unreadable or
 * malformed file is CPUEXEC_ETOPOLOGY naming it.
 * What input it trusts: files hwloc itself wrote (`lstopo --of xml`, or
 * edited by hand with care). Before hwloc reads the file, the library
 * checks that it is well-formed XML of hwloc's shape (one \<topology\> root,
 * terminated tags and quoted attributes, no DTD internal subset or unknown
 * entity, at most 64 MiB and 512 levels deep) and fails with
 * CPUEXEC_ETOPOLOGY naming the line otherwise, because hwloc 2.9's loader
 * crashes on some malformed files (one that ends inside the root's start
 * tag). hwloc's loader is not hardened against hostile input beyond that:
 * a program that reads files from an untrusted source should load them in
 * a child process, as `cpuexec-info --topology` does. */
CPUEXEC_EXPORT int cpuexec_topology_load_xml(const char *path, const cpuexec_topology_options *options,
                                             cpuexec_topology **out);
/** Builds a topology from an hwloc synthetic description such as
 * "package:2 core:8 pu:2" into *out (the caller destroys it). description
 * or out NULL is CPUEXEC_EINVAL; a description hwloc rejects is
 * CPUEXEC_ETOPOLOGY. */
CPUEXEC_EXPORT int cpuexec_topology_load_synthetic(const char *description,
                                                   const cpuexec_topology_options *options,
                                                   cpuexec_topology **out);
/** Frees a topology; NULL is ignored (like free). No thread may use it
 * during or after the call. */
CPUEXEC_EXPORT void cpuexec_topology_destroy(cpuexec_topology *topology);

/** The process topology behind resolutions made without a topology
 * (cpuexec_policy_resolve(..., NULL, ...), sessions, the legacy pool) and what
 * happens when the process CPU set changes at run time:
 *   - it is read again whenever the process CPU set (the main thread's
 *     affinity: `taskset -p`, a cgroup cpuset resize) differs from the one
 *     it was read under, so new resolutions, and the process default
 *     resolution (cpuexec_policy_resolve_default()), see the current set;
 *   - cpuexec_topology_refresh() reads it again now, for what cannot be
 *     seen cheaply (a changed cgroup cpu.max quota). 0, or CPUEXEC_ENOMEM;
 *   - pools already running keep their threads: a pool whose pinned worker
 *     lost its processor (the kernel moves such a thread when the set
 *     shrinks) is refused to new leases with CPUEXEC_EAFFINITY naming the
 *     processor (cpuexec_registry_acquire()), and leases held keep working,
 *     the moved workers unpinned; release them and resolve again;
 *   - fallbacks: when hwloc cannot load this machine's topology, resolutions
 *     without a topology use one processor per core for each processor
 *     sched_getaffinity() reports (serial when that fails too), and a
 *     cgroup cpu.max that cannot be read is ignored; each fallback is a
 *     diagnostic of the resolution. Explicit loads (cpuexec_topology_load*())
 *     still fail with CPUEXEC_ETOPOLOGY. */
CPUEXEC_EXPORT int cpuexec_topology_refresh(void);

/** Visible logical processors. Like every accessor below, it counts over
 * the process-visible part of the topology, returns 0 for a NULL topology
 * (processor_id -1), never fails and may run on any thread. */
CPUEXEC_EXPORT int32_t cpuexec_topology_processor_count(const cpuexec_topology *topology);
/** Visible physical cores (a core with at least one visible processor). */
CPUEXEC_EXPORT int32_t cpuexec_topology_core_count(const cpuexec_topology *topology);
/** Packages (sockets) holding a visible processor. */
CPUEXEC_EXPORT int32_t cpuexec_topology_package_count(const cpuexec_topology *topology);
/** Number of CPU kinds hwloc reports (0 or 1: kinds unknown or homogeneous). */
CPUEXEC_EXPORT int32_t cpuexec_topology_kind_count(const cpuexec_topology *topology);
/** The cgroup CPU quota in CPUs (cpu.max quota / period), or 0 when unlimited. */
CPUEXEC_EXPORT double cpuexec_topology_cpu_quota(const cpuexec_topology *topology);
/** Most visible logical processors on one physical core (1: no SMT in use). */
CPUEXEC_EXPORT int32_t cpuexec_topology_smt_width(const cpuexec_topology *topology);
/** Visible physical cores of the most performant kind (every visible core
 * when kinds are unknown or homogeneous). */
CPUEXEC_EXPORT int32_t cpuexec_topology_performance_core_count(const cpuexec_topology *topology);
/** The OS index of visible processor i (0 <= i < processor_count), in
 * hwloc's logical order, or -1 when i is out of range. */
CPUEXEC_EXPORT int32_t cpuexec_topology_processor_id(const cpuexec_topology *topology, int32_t i);

/** Human-readable summary (packages, cores, SMT, kinds, visible processors,
 * quota) in text or JSON. snprintf-like: returns the full length.
 * topology NULL, a format outside the enum, or buf NULL with size > 0 is
 * CPUEXEC_EINVAL naming it. */
CPUEXEC_EXPORT int cpuexec_topology_describe(const cpuexec_topology *topology, cpuexec_format format,
                                             char *buf, size_t size);

CPUEXEC_END_DECLS

#endif
