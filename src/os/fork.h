/* Internal: the fork module (fork.c), the library's one pthread_atfork
 * registration and its one generation counter. */
#ifndef CPUEXEC_SRC_FORK_H
#define CPUEXEC_SRC_FORK_H

#include <stdatomic.h>
#include <stdint.h>

#ifdef _WIN32
/* Windows has no fork(): a process starts with no thread of its parent's
 * and no copy of its memory, so there is nothing to make safe. fork.c
 * compiles to nothing there, the generation is always 0, and the handlers
 * the modules hand in are never called (winpthreads has no pthread_atfork
 * either). The declarations below keep the modules' code the same. */
#define CPUEXEC__FORK_NONE 1
static inline uint64_t cpuexec__fork_generation_now(void) { return 0; }
#else
/* Bumped in a fork child, before any handler of the modules runs, while the
 * child has one thread. Anything made in one generation and found in a
 * later one was inherited: its threads do not exist in this process. */
extern _Atomic uint64_t cpuexec__fork_generation;

static inline uint64_t cpuexec__fork_generation_now(void) {
  return atomic_load_explicit(&cpuexec__fork_generation, memory_order_relaxed);
}
#endif

/* Registers the fork handlers once per process. Every module that holds a
 * lock the handlers take, or state that must not cross fork, calls it
 * before making such state. Returns 0, or a CPUEXEC_E* (with the reason
 * in cpuexec_error_message()) when pthread_atfork failed; every later call
 * returns the same failure. */
#ifdef CPUEXEC__FORK_NONE
static inline int cpuexec__fork_init(void) { return 0; }
#else
int cpuexec__fork_init(void);
#endif

/* The modules that hold a lock across fork, in the lock order: a thread
 * holding a lock of an earlier slot may take one of a later slot, never the
 * reverse. The prepare handler takes them in this order, parent and child
 * run in the reverse one (fork.c, top comment, says why the order is this). */
typedef enum cpuexec__fork_slot {
  CPUEXEC__FORK_DEFAULT_POOL,     /* sessions/default_pool.c: pool_lock */
  CPUEXEC__FORK_RESOLVE_DEFAULT,  /* resolve/resolve_default.c: default_lock */
  CPUEXEC__FORK_TOPOLOGY_PROCESS, /* topology/topology_process.c: lock */
  CPUEXEC__FORK_REGISTRY,         /* sessions/registry.c: default_lock, list_lock, then every registry's lock */
  CPUEXEC__FORK_GUARD_HOLDS,      /* guards/guard_hold.c: the two holds' locks */
  CPUEXEC__FORK_SLOTS
} cpuexec__fork_slot;

typedef struct cpuexec__fork_handlers {
  void (*prepare)(void); /* takes the module's locks */
  void (*parent)(void);  /* releases them */
  void (*child)(void);   /* re-creates them and forgets what the child cannot use */
} cpuexec__fork_handlers;

/* A module's part, given once from a constructor of the file that holds its
 * locks, so the handlers are known before any thread can take those locks
 * (and a file a static link leaves out registers nothing: it has no lock).
 * The fork module calls no module by name: every tie points down to it. */
#ifdef CPUEXEC__FORK_NONE
static inline void cpuexec__fork_handlers_set(cpuexec__fork_slot slot, const cpuexec__fork_handlers *handlers) {
  (void)slot;
  (void)handlers;
}
#else
void cpuexec__fork_handlers_set(cpuexec__fork_slot slot, const cpuexec__fork_handlers *handlers);
#endif

#endif
