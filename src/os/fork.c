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
 *   7. the runtime guards' two hold locks      (guard_hold.c: taken by a
 *      participant when a process-wide library setting goes to one thread
 *      or back; the thread holds no other library lock then)
 *   8. executors: none taken. An executor's dispatch lock is never held
 *      while a lock above is taken, and a child never touches an inherited
 *      executor's lock or threads: it knows the executor is inherited from
 *      the generation below (cpuexec_parallel_for returns CPUEXEC_EFORKED,
 *      destroy frees memory only).
 *
 * So no library lock is held by another thread at the moment of fork, and
 * the child re-creates every lock of the list before anything else runs.
 * The list is fork.h's cpuexec__fork_slot: each module hands its handlers to
 * its slot (cpuexec__fork_handlers_set) from a constructor, and this file
 * calls them through the slots, so the fork module, low in the rank, names
 * no module above it. The os module's child handler is this module's own.
 *
 * The generation: one counter, bumped first thing in the child. Executors
 * and the default pool record it when made and compare it with one relaxed
 * load, instead of a getpid() system call on every dispatch. */
#include "fork.h"

#ifndef CPUEXEC__FORK_NONE /* Windows: no fork, nothing to compile (fork.h says why) */
#include <pthread.h>
#include <string.h>

#include "core/error.h"
#include "os.h"

_Atomic uint64_t cpuexec__fork_generation = 0;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int registered; /* pthread_atfork's result, written once under `once` */

static _Atomic(const cpuexec__fork_handlers *) slots[CPUEXEC__FORK_SLOTS];

void cpuexec__fork_handlers_set(cpuexec__fork_slot slot, const cpuexec__fork_handlers *handlers) {
  atomic_store_explicit(&slots[slot], handlers, memory_order_release);
}

static const cpuexec__fork_handlers *slot_at(int i) {
  return atomic_load_explicit(&slots[i], memory_order_acquire);
}

static void prepare(void) {
  for (int i = 0; i < CPUEXEC__FORK_SLOTS; i++)
    if (slot_at(i)) slot_at(i)->prepare();
}

static void parent(void) {
  for (int i = CPUEXEC__FORK_SLOTS - 1; i >= 0; i--)
    if (slot_at(i)) slot_at(i)->parent();
}

static void child(void) {
  atomic_fetch_add_explicit(&cpuexec__fork_generation, 1, memory_order_relaxed);
  cpuexec__os_fork_child();
  for (int i = CPUEXEC__FORK_SLOTS - 1; i >= 0; i--)
    if (slot_at(i)) slot_at(i)->child();
}

static void register_handlers(void) { registered = pthread_atfork(prepare, parent, child); }

int cpuexec__fork_init(void) {
  pthread_once(&once, register_handlers);
  if (registered == 0) return 0;
  return cpuexec__fail(CPUEXEC_ENOMEM, "fork handlers: pthread_atfork failed (%s); the library cannot be fork-safe",
                       strerror(registered));
}
#endif
