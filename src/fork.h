/* Internal: the fork module (fork.c), the library's one pthread_atfork
 * registration and its one generation counter. */
#ifndef CPUEXEC_SRC_FORK_H
#define CPUEXEC_SRC_FORK_H

#include <stdatomic.h>
#include <stdint.h>

/* Bumped in a fork child, before any handler of the modules runs, while the
 * child has one thread. Anything made in one generation and found in a
 * later one was inherited: its threads do not exist in this process. */
extern _Atomic uint64_t cpuexec__fork_generation;

static inline uint64_t cpuexec__fork_generation_now(void) {
  return atomic_load_explicit(&cpuexec__fork_generation, memory_order_relaxed);
}

/* Registers the fork handlers once per process. Every module that holds a
 * lock the handlers take, or state that must not cross fork, calls it
 * before making such state. Returns 0, or a CPUEXEC_E* (with the reason
 * in cpuexec_error_message()) when pthread_atfork failed; every later call
 * returns the same failure. */
int cpuexec__fork_init(void);

/* Each module's part, called by fork.c only, in the lock order written at
 * the top of fork.c. */
void cpuexec__default_pool_fork_prepare(void);
void cpuexec__default_pool_fork_parent(void);
void cpuexec__default_pool_fork_child(void);
void cpuexec__resolve_default_fork_prepare(void);
void cpuexec__resolve_default_fork_parent(void);
void cpuexec__resolve_default_fork_child(void);
void cpuexec__topology_process_fork_prepare(void);
void cpuexec__topology_process_fork_parent(void);
void cpuexec__topology_process_fork_child(void);
void cpuexec__registry_fork_prepare(void);
void cpuexec__registry_fork_parent(void);
void cpuexec__registry_fork_child(void);
void cpuexec__os_fork_child(void);

#endif
