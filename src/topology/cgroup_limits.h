/* Internal: the CPU limits of the process's cgroups, v1 and v2, read from
 * the files the kernel shows (doc/node-budget.md, "Where N comes from").
 *
 * The process's cgroups come from <root>/proc/self/cgroup, where each
 * hierarchy is mounted from <root>/proc/self/mountinfo, and the limits
 * from the cgroup directories under <root>: cgroup v1's cpu controller
 * (cpu.cfs_quota_us / cpu.cfs_period_us, -1 unlimited) and cgroup v2's
 * cpu.max ("max PERIOD" or "QUOTA PERIOD"), each of the process's cgroup
 * and of every ancestor up to the mount's root: the smallest quota wins.
 * The cpuset is the process's cpuset cgroup's effective list (v1
 * cpuset.effective_cpus, v2 cpuset.cpus.effective), which the kernel
 * already narrowed by the ancestors'.
 *
 * root is "" or NULL on a live system; the tests pass a stored tree
 * (tests/data/cgroups). Reading costs a few file opens (tens of
 * microseconds): callers that re-read a live quota do it at most once a
 * second (src/node/node_budget.c). */
#ifndef CPUEXEC_SRC_TOPOLOGY_CGROUP_LIMITS_H
#define CPUEXEC_SRC_TOPOLOGY_CGROUP_LIMITS_H

#include <stdint.h>

#define CPUEXEC__CGROUP_PATH_MAX 1024

typedef struct cpuexec__cgroup_limits {
  double quota;                              /* CPUs, 0: unlimited */
  int quota_version;                         /* 1 or 2: the hierarchy the quota came from; 0: none */
  char quota_file[CPUEXEC__CGROUP_PATH_MAX + 64]; /* the file of the smallest quota; "": none */
  /* The cgroup whose quota won ("v1:/sys/fs/cgroup/cpu/a"), or "host" when
   * no quota limits the process: what processes share a budget by. */
  char identity[CPUEXEC__CGROUP_PATH_MAX + 80];
  uint32_t cpuset_count;                     /* processors in the cpuset; 0: no cpuset read */
  char cpuset_file[CPUEXEC__CGROUP_PATH_MAX + 64]; /* where it came from; "": none */
  /* How the quota that won held the cgroup back, as the kernel counts it in
   * that cgroup's cpu.stat since the cgroup was made: the periods in which
   * the quota was enforced, those that ran out of it (nr_throttled), and
   * the time spent throttled (v1 throttled_time, v2 throttled_usec). All 0
   * and throttle_file "" without a quota or without a cpu.stat naming
   * them: they only inform, so a cpu.stat that cannot be read is no error. */
  uint64_t periods, throttled_periods, throttled_ns;
  char throttle_file[CPUEXEC__CGROUP_PATH_MAX + 64];
} cpuexec__cgroup_limits;

/* Fills *out from the tree under root (NULL or "": the live system). A
 * system without cgroups, or a hierarchy that is not mounted, is no limit
 * (0). A limit file that exists but cannot be parsed is CPUEXEC_ETOPOLOGY
 * naming the file and its text. */
int cpuexec__cgroup_limits_read(const char *root, cpuexec__cgroup_limits *out);

/* The budget the limits allow, as the resolver rounds a quota (up) and
 * capped by the cpuset; visible when neither limits (at least 1). */
uint32_t cpuexec__cgroup_limits_cpus(const cpuexec__cgroup_limits *limits, uint32_t visible);

#endif
