/* Internal: who a process is, so the node table gives back a dead
 * process's slots by its identity (pid and start time), never by trust. */
#ifndef CPUEXEC_SRC_NODE_PROCESS_IDENTITY_H
#define CPUEXEC_SRC_NODE_PROCESS_IDENTITY_H

#include <stdbool.h>
#include <stdint.h>

/* Whether pid names a running process (not gone, not a zombie) and its
 * start time in clock ticks after boot (/proc/<pid>/stat, field 22), 0
 * where the system has no /proc: then only kill(pid, 0) says it lives. */
bool cpuexec__process_alive(int64_t pid, uint64_t *start_time);

#endif
