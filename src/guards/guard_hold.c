/* The process-wide rule, and each library's save / one thread / restore.
 *
 * OpenBLAS's thread count (0.3.21: blas_cpu_number), BLIS 0.x's global
 * runtime and oneTBB's max_allowed_parallelism are one setting for the whole
 * process: setting one thread for a callback sets it for every thread. The
 * rule ("a hold"):
 *   - a count of the participants inside regions that hold it; the first to
 *     enter (0 -> 1) saves each library's setting and sets one thread, under
 *     the hold's lock, before any participant counted can run a callback;
 *   - the last to leave (1 -> 0) puts the saved settings back, under the
 *     lock, before its region returns (a worker ends its hooks before it
 *     reports its share done, so when cpuexec_parallel_for returns, every
 *     participant that joined has left);
 *   - in between, entering and leaving is one compare-and-swap on the count
 *     (no lock); the lock is taken only at the two transitions, and when a
 *     library was found while the hold was already up (it is then set too).
 * So a BLAS call made at top level on another thread runs on one thread
 * exactly while some participant of some region is between its begin and
 * its end, and on the library's own threads otherwise: it is never
 * serialized longer than a region runs.
 *
 * A setting changed while the hold is up (by another thread, or by a
 * callback) is not lost: before each callback the OpenBLAS count is checked,
 * and a value other than one becomes the value to restore (and one thread is
 * set again); the last to leave checks once more. BLIS's ways and oneTBB's
 * limit stay at one whatever is set meanwhile (BLIS takes the ways over the
 * thread count; oneTBB takes the smallest active limit).
 *
 * Fork: the prepare handler takes both locks (after every other module's:
 * the participants that take them hold no other library lock), so a child
 * never inherits a half-made transition; in the child, a hold that was up
 * (its participants do not exist there) is put down and the settings are
 * restored. */
#include "guards_internal.h"

#include <pthread.h>
#include <stdalign.h>

#include "core/cache_line.h"
#include "os/fork.h"

typedef struct hold {
  alignas(CPUEXEC__LINE) _Atomic uint32_t inside;
  _Atomic uint32_t applied; /* slots set to one thread; changed under lock */
  pthread_mutex_t lock;
} hold;

static hold holds[CPUEXEC__HOLDS] = {
    {.lock = PTHREAD_MUTEX_INITIALIZER},
    {.lock = PTHREAD_MUTEX_INITIALIZER},
};

#define SLOTS_FOR_EACH(mask, i) \
  for (uint32_t m_ = (mask), i; m_ != 0 && (i = (uint32_t)__builtin_ctz(m_), 1); m_ &= m_ - 1)

/* ---- each library ------------------------------------------------------------ */

static void blis_save(cpuexec__guard_lib *lib, int64_t saved[6]) {
  saved[0] = lib->fn.blis.get_num_threads();
  for (int w = 0; w < 5; w++)
    saved[1 + w] = lib->fn.blis.get_ways[w]();
}

/* Ways 1 for every loop, then one thread: BLIS 0.x and later both take set
 * ways over a thread count, so this is one thread whatever else is set. */
static void blis_one(const cpuexec__guard_lib *lib) {
  lib->fn.blis.set_ways(1, 1, 1, 1, 1);
  lib->fn.blis.set_num_threads(1);
}

/* The ways first, then the count: 0.x stores both as given; 1.x and 2.x
 * make the last call's kind win, and a saved state always has its thread
 * count consistent with its ways. */
static void blis_restore(const cpuexec__guard_lib *lib, const int64_t saved[6]) {
  lib->fn.blis.set_ways(saved[1], saved[2], saved[3], saved[4], saved[5]);
  lib->fn.blis.set_num_threads(saved[0]);
}

static void apply_one(cpuexec__guard_lib *lib) {
  switch (lib->family) {
  case CPUEXEC__GUARD_OPENBLAS:
    lib->fn.openblas.saved = lib->fn.openblas.get_num_threads();
    if (lib->fn.openblas.saved != 1)
      lib->fn.openblas.set_num_threads(1); /* never starts a thread: 1 is below any count it has */
    break;
  case CPUEXEC__GUARD_BLIS:
    blis_save(lib, lib->fn.blis.saved);
    blis_one(lib);
    break;
  case CPUEXEC__GUARD_TBB:
    lib->fn.tbb.control.value = 1;
    lib->fn.tbb.control.reserved = 0;
    lib->fn.tbb.control.param = 0; /* max_allowed_parallelism */
    lib->fn.tbb.create(&lib->fn.tbb.control);
    break;
  default:
    break;
  }
}

static void restore_one(cpuexec__guard_lib *lib) {
  switch (lib->family) {
  case CPUEXEC__GUARD_OPENBLAS: {
    int now = lib->fn.openblas.get_num_threads();
    int want = now != 1 ? now : lib->fn.openblas.saved; /* a change made meanwhile is kept */
    if (want != now)
      lib->fn.openblas.set_num_threads(want); /* the count it had: starts no thread it did not have */
    break;
  }
  case CPUEXEC__GUARD_BLIS:
    blis_restore(lib, lib->fn.blis.saved);
    break;
  case CPUEXEC__GUARD_TBB:
    lib->fn.tbb.destroy(&lib->fn.tbb.control);
    break;
  default:
    break;
  }
}

/* ---- the holds ------------------------------------------------------------------ */

void cpuexec__hold_enter(int which, uint32_t mask) {
  hold *h = &holds[which];
  uint32_t n = atomic_load_explicit(&h->inside, memory_order_relaxed);
  /* Up, with every library of mask set: one more inside. */
  while (n > 0 && (atomic_load_explicit(&h->applied, memory_order_relaxed) & mask) == mask)
    if (atomic_compare_exchange_weak_explicit(&h->inside, &n, n + 1, memory_order_acquire, memory_order_relaxed))
      return;
  pthread_mutex_lock(&h->lock);
  uint32_t applied = atomic_load_explicit(&h->applied, memory_order_relaxed);
  SLOTS_FOR_EACH(mask & ~applied, i) apply_one(&cpuexec__guard_libs[i]);
  atomic_store_explicit(&h->applied, applied | mask, memory_order_relaxed);
  atomic_fetch_add_explicit(&h->inside, 1, memory_order_acq_rel);
  pthread_mutex_unlock(&h->lock);
}

void cpuexec__hold_leave(int which) {
  hold *h = &holds[which];
  uint32_t n = atomic_load_explicit(&h->inside, memory_order_relaxed);
  while (n > 1)
    if (atomic_compare_exchange_weak_explicit(&h->inside, &n, n - 1, memory_order_release, memory_order_relaxed))
      return;
  pthread_mutex_lock(&h->lock);
  if (atomic_fetch_sub_explicit(&h->inside, 1, memory_order_acq_rel) == 1) {
    /* Last out; anyone entering now waits on the lock, then saves afresh. */
    uint32_t applied = atomic_load_explicit(&h->applied, memory_order_relaxed);
    SLOTS_FOR_EACH(applied, i) restore_one(&cpuexec__guard_libs[i]);
    atomic_store_explicit(&h->applied, 0, memory_order_relaxed);
  }
  pthread_mutex_unlock(&h->lock);
}

void cpuexec__hold_recheck(uint32_t mask) {
  SLOTS_FOR_EACH(mask, i) {
    cpuexec__guard_lib *lib = &cpuexec__guard_libs[i];
    if (lib->family != CPUEXEC__GUARD_OPENBLAS || lib->fn.openblas.get_num_threads() == 1)
      continue;
    hold *h = &holds[lib->hold];
    pthread_mutex_lock(&h->lock);
    int now = lib->fn.openblas.get_num_threads();
    if (now != 1 && (atomic_load_explicit(&h->applied, memory_order_relaxed) & (1U << i))) {
      lib->fn.openblas.saved = now;
      lib->fn.openblas.set_num_threads(1);
    }
    pthread_mutex_unlock(&h->lock);
  }
}

uint32_t cpuexec__hold_inside(int which) { return atomic_load_explicit(&holds[which].inside, memory_order_acquire); }

/* ---- per-thread libraries --------------------------------------------------------- */

void cpuexec__guard_thread_save(const cpuexec__guard_lib *lib, int64_t saved[6]) {
  blis_save((cpuexec__guard_lib *)lib, saved);
}

void cpuexec__guard_thread_one(const cpuexec__guard_lib *lib) { blis_one(lib); }

void cpuexec__guard_thread_restore(const cpuexec__guard_lib *lib, const int64_t saved[6]) {
  blis_restore(lib, saved);
}

/* ---- fork ----------------------------------------------------------------------------- */

static void fork_prepare(void) {
  for (int i = 0; i < CPUEXEC__HOLDS; i++)
    pthread_mutex_lock(&holds[i].lock);
}

static void fork_parent(void) {
  for (int i = CPUEXEC__HOLDS; i-- > 0;)
    pthread_mutex_unlock(&holds[i].lock);
}

static void fork_child(void) {
  for (int i = CPUEXEC__HOLDS; i-- > 0;) {
    hold *h = &holds[i];
    pthread_mutex_init(&h->lock, NULL);
    if (atomic_load_explicit(&h->inside, memory_order_relaxed) > 0) {
      uint32_t applied = atomic_load_explicit(&h->applied, memory_order_relaxed);
      SLOTS_FOR_EACH(applied, s) restore_one(&cpuexec__guard_libs[s]);
    }
    atomic_store_explicit(&h->inside, 0, memory_order_relaxed);
    atomic_store_explicit(&h->applied, 0, memory_order_relaxed);
  }
}

__attribute__((constructor)) static void register_fork_handlers(void) {
  static const cpuexec__fork_handlers handlers = {fork_prepare, fork_parent, fork_child};
  cpuexec__fork_handlers_set(CPUEXEC__FORK_GUARD_HOLDS, &handlers);
  (void)cpuexec__fork_init();
}
