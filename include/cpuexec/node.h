/** @file
 * libcpuexec: the node budget, one CPU budget shared by every libcpuexec
 * process of a user in a cgroup (and by GNU make's jobserver when the
 * process runs under make).
 *
 * A worker thread holds one of the budget's CPUs while it runs a region or
 * spins, and gives it back before it sleeps; a process's calling threads
 * hold one for the process while they run regions, and never wait for it. CPUEXEC_NODE_BUDGET=off turns it off, =host
 * shares one budget across every cgroup of the user; a policy's node_budget
 * key chooses the same for its pool, before the variable (cpuexec/policy.h); CPUEXEC_NODE_DIR names
 * the directory of its tables (default /dev/shm). Thread safety: any thread,
 * any time. */
#ifndef CPUEXEC_NODE_H
#define CPUEXEC_NODE_H

#include <cpuexec/common.h>

CPUEXEC_BEGIN_DECLS

/** The budget that applies to this process, one line of text: its size and
 * where it came from (a cgroup quota, a cpuset, the visible processors),
 * the slots held and who holds them (pid and slots of each process: a
 * process's callers hold one while they run regions, its workers one each
 * while they run or spin), where a quota sets the size the periods it
 * throttled the cgroup in since the process joined (the cgroup's
 * cpu.stat), and make's jobserver when one bounds it; or why the
 * process keeps its own count (off, a table refused). Joins the budget if
 * the process had not yet. snprintf-like: returns the full length; buf NULL
 * with size > 0 is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_node_budget_describe(char *buf, size_t size);

CPUEXEC_END_DECLS

#endif
