/* Fork safety: the library's one pthread_atfork triple.
 *
 * Lock order. A thread holding a lock higher in this list may take one
 * lower in it, never the reverse, and the prepare handler takes them in
 * this order (the parent handler releases them in reverse):
 *
 *   1. the process-wide default pool's lock    (default_pool.c: pool_lock;
 *      held while it acquires from the default registry)
 *   2. the process default resolution's lock   (resolve_default.c:
 *      default_lock; held while it reads the process topology)
 *   3. the process topology's lock              (topology_process.c: lock)
 *   4. the process registry's making lock      (registry.c: default_lock;
 *      held while the process registry joins the list)
 *   5. the registry list lock                   (registry.c: list_lock)
 *   6. every registry's lock, in list order     (registry.c: r->lock)
 *   7. executors: none taken. An executor's dispatch lock is never held
 *      while a lock above is taken, and a child never touches an inherited
 *      executor's lock or threads: it knows the executor is inherited from
 *      the generation below (cpuexec_parallel_for returns CPUEXEC_EFORKED,
 *      destroy frees memory only).
 *
 * So no library lock is held by another thread at the moment of fork, and
 * the child re-creates every lock of the list before anything else runs.
 *
 * The generation: one counter, bumped first thing in the child. Executors
 * and the default pool record it when made and compare it with one relaxed
 * load, instead of a getpid() system call on every dispatch. */
#include "fork.h"

#include <pthread.h>
#include <string.h>

#include "error.h"

_Atomic uint64_t cpuexec__fork_generation = 0;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int registered; /* pthread_atfork's result, written once under `once` */

static void prepare(void) {
  cpuexec__default_pool_fork_prepare();
  cpuexec__resolve_default_fork_prepare();
  cpuexec__topology_process_fork_prepare();
  cpuexec__registry_fork_prepare();
}

static void parent(void) {
  cpuexec__registry_fork_parent();
  cpuexec__topology_process_fork_parent();
  cpuexec__resolve_default_fork_parent();
  cpuexec__default_pool_fork_parent();
}

static void child(void) {
  atomic_fetch_add_explicit(&cpuexec__fork_generation, 1, memory_order_relaxed);
  cpuexec__os_fork_child();
  cpuexec__registry_fork_child();
  cpuexec__topology_process_fork_child();
  cpuexec__resolve_default_fork_child();
  cpuexec__default_pool_fork_child();
}

static void register_handlers(void) { registered = pthread_atfork(prepare, parent, child); }

int cpuexec__fork_init(void) {
  pthread_once(&once, register_handlers);
  if (registered == 0) return 0;
  return cpuexec__fail(CPUEXEC_ENOMEM, "fork handlers: pthread_atfork failed (%s); the library cannot be fork-safe",
                       strerror(registered));
}
