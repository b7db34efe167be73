/* Internal: the layout of a loaded topology, so resolution and description
 * read plain arrays and never call hwloc.
 *
 * A cpuexec_topology is immutable after loading and may be read by any
 * number of threads at once. Only process-visible processors are listed
 * (hwloc's allowed cpuset intersected with the process binding). */
#ifndef CPUEXEC_SRC_TOPOLOGY_INTERNAL_H
#define CPUEXEC_SRC_TOPOLOGY_INTERNAL_H

#include <stdatomic.h>

#include <cpuexec/topology.h>

#include "core/test_hooks.h"

/* Kind rank of a processor when the topology reports fewer than two kinds,
 * or hwloc could not rank them by efficiency. */
#define CPUEXEC__KIND_UNKNOWN (-1)

typedef struct cpuexec__processor {
  int32_t os_index; /* the logical processor id the OS uses (taskset, sched_setaffinity) */
  uint32_t core;    /* dense index of its physical core, in hwloc's logical order */
  uint32_t package; /* dense index of its package, in hwloc's logical order */
  /* 0: the most performant kind (highest hwloc efficiency), 1 the next ...;
   * CPUEXEC__KIND_UNKNOWN when kinds are unknown. */
  int32_t kind_rank;
  /* 0 for the first visible processor of its core, 1 for the next visible
   * SMT sibling, and so on. Siblings the process may not use are not counted. */
  uint32_t sibling;
} cpuexec__processor;

struct cpuexec_topology {
  /* Visible processors in hwloc's logical order: by package, core, sibling. */
  cpuexec__processor *processors;
  uint32_t processor_count;
  uint32_t core_count;      /* physical cores holding at least one visible processor */
  uint32_t package_count;   /* packages holding at least one visible processor */
  uint32_t kind_count;      /* kinds hwloc reports over the whole machine */
  bool kinds_ranked;        /* kind_count >= 2 and hwloc ranked them by efficiency */
  /* The most performant kind among visible processors (the lowest
   * kind_rank), CPUEXEC__KIND_UNKNOWN when kinds are not ranked. */
  int32_t best_kind_rank;
  uint32_t machine_processors; /* every processor in the topology, visible or not */
  uint32_t smt_max;         /* the most visible processors on one core */
  double cpu_quota;         /* CPUs, 0: unlimited */
  char *quota_source;       /* the cpu.max file the quota came from, or "option"; NULL: none */
  bool live;                /* this process (the caller's thread binding is read at resolution) */
  /* Stored topologies only: the calling thread's binding from the options,
   * as a sorted list of OS indices (NULL/0: the caller is not pinned). */
  int32_t *caller_binding;
  uint32_t caller_binding_count;
  char *source;             /* "this process", "xml:<path>" or "synthetic:<description>" */
  /* The process default only: what was unavailable and what was used
   * instead (a resolution records it as a diagnostic); NULL: nothing. */
  char *fallback;
};

/* The visible processor with this OS index, or NULL. */
const cpuexec__processor *cpuexec__topology_find(const cpuexec_topology *topology, int32_t os_index);

/* This process's topology for default resolutions (topology_process.c):
 * loaded on first use and again whenever the process CPU set changed or
 * cpuexec_topology_refresh() was called; every version is kept until exit
 * (callers hold plain pointers). Never fails for a topology hwloc cannot
 * load or a malformed cgroup file: it falls back and says so in
 * ->fallback. */
int cpuexec__topology_process(const cpuexec_topology **out);
/* Bumped each time the process topology is replaced (resolve.c re-resolves
 * the process default when it moved). */
unsigned cpuexec__topology_process_generation(void);

/* Loads the live topology; with tolerant, a cgroup quota that cannot be
 * read is ignored and noted in ->fallback instead of failing (topology.c). */
int cpuexec__topology_load_live(const cpuexec_topology_options *options, bool tolerant, cpuexec_topology **out);

/* 0 when path holds well-formed XML of hwloc's shape (one <topology>
 * root); CPUEXEC_ETOPOLOGY naming the line and the problem otherwise
 * (topology_xml_check.c, which lists what it checks). */
int cpuexec__xml_check(const char *path);

/* Test hooks (the test build only, core/test_hooks.h): hwloc fails to load the live topology
 * as if it could not read the machine; options the process default loads
 * with (cgroup fixture paths) instead of NULL. */
#if CPUEXEC_TEST_HOOKS
extern _Atomic int cpuexec__test_hwloc_load_fails;
extern const cpuexec_topology_options *_Atomic cpuexec__test_process_options;
#endif

/* Reads the cgroup v2 quota named by the options (cgroup_root,
 * proc_self_cgroup). *quota is 0 when unlimited; *source names the file the
 * smallest quota came from (malloc'd) or NULL. */
int cpuexec__cgroup_cpu_quota(const cpuexec_topology_options *options, double *quota, char **source);

/* The arguments every *_describe call checks (the topology's and the
 * resolution's; topology_describe.c): the object (named `what`), the
 * format, and buf NULL only with size 0. 0 or CPUEXEC_EINVAL. */
int cpuexec__describe_check(const void *object, cpuexec_format format, const char *buf, size_t size,
                            const char *what);

#endif
