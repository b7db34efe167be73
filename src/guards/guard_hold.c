/* The process-wide rule, and each library's save / one thread / restore.
 *
 * OpenBLAS's thread count (0.3.21: blas_cpu_number), BLIS 0.x's global
 * runtime and oneTBB's max_allowed_parallelism are one setting for the whole
 * process: setting one thread for a callback sets it for every thread. The
 * rule ("a hold"):
 *   - a count of the participants inside regions that hold it; the first to
 *     enter (0 -> 1) saves each library's setting and sets one thread, with
 *     the hold marked busy, before any participant counted can run a callback;
 *   - the last to leave (1 -> 0) puts the saved settings back, busy too,
 *     before its region returns (a worker ends its hooks before it reports
 *     its share done, so when cpuexec_parallel_for returns, every
 *     participant that joined has left);
 *   - in between, entering and leaving is one compare-and-swap on the count;
 *     only the two transitions (and a library found while the hold was
 *     already up, which is then set too) mark it busy, and a participant
 *     that meets a busy hold spins, then yields, until it is not.
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
 * Fork: the prepare handler waits out any transition and marks both holds
 * busy (after every other module's locks: a participant in a transition
 * holds no other library lock), so a child never inherits a half-made
 * transition; in the child, a hold that was up (its participants do not
 * exist there) is put down and the settings are restored. */
#include "guards_internal.h"

#include <sched.h>
#include <stdalign.h>

#include "core/cache_line.h"
#include "executor/wait.h"
#include "os/fork.h"

/* word: the count of participants inside, and BUSY while one thread saves,
 * sets or restores (the first in, the last out, a library found while up,
 * a recheck that found a changed count). Whoever sets BUSY owns `applied`
 * and the slots' saved values until it clears it; everyone else waits for
 * BUSY to clear (spinning, then yielding), so nobody sleeps in the kernel
 * for a transition and a participant that joins a hold already up pays one
 * compare-and-swap. */
#define BUSY 0x80000000u

typedef struct hold {
  alignas(CPUEXEC__LINE) _Atomic uint32_t word;
  _Atomic uint32_t applied; /* slots set to one thread: written under BUSY, read in the fast path */
} hold;

static hold holds[CPUEXEC__HOLDS];

#define SLOTS_FOR_EACH(mask, i) \
  for (uint32_t m_ = (mask), i; m_ != 0 && (i = (uint32_t)__builtin_ctz(m_), 1); m_ &= m_ - 1)

/* The hold's word once no transition holds it BUSY: spins, then yields. */
static uint32_t load_settled(hold *h) {
  unsigned spins = 0;
  uint32_t v;
  while ((v = atomic_load_explicit(&h->word, memory_order_acquire)) & BUSY) {
    if (++spins < 64)
      cpuexec__cpu_relax();
    else
      sched_yield();
  }
  return v;
}

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

/* OpenBLAS's count: blas_cpu_number itself where exported (what
 * openblas_set_num_threads stores for a count no larger than its threads,
 * without the re-pinning a build with affinity does), else the setter. */
static void openblas_set(const cpuexec__guard_lib *lib, int n) {
  if (lib->fn.openblas.cpu_number != NULL)
    __atomic_store_n(lib->fn.openblas.cpu_number, n, __ATOMIC_RELAXED);
  else
    lib->fn.openblas.set_num_threads(n);
}

static int openblas_get(const cpuexec__guard_lib *lib) {
  if (lib->fn.openblas.cpu_number != NULL)
    return __atomic_load_n(lib->fn.openblas.cpu_number, __ATOMIC_RELAXED);
  return lib->fn.openblas.get_num_threads();
}

static void apply_one(cpuexec__guard_lib *lib) {
  switch (lib->family) {
  case CPUEXEC__GUARD_OPENBLAS:
    /* The function once: it also starts OpenBLAS if nothing has yet. */
    lib->fn.openblas.saved = lib->fn.openblas.get_num_threads();
    if (lib->fn.openblas.saved != 1)
      openblas_set(lib, 1); /* never starts a thread: 1 is below any count it has */
    break;
  case CPUEXEC__GUARD_BLIS:
    /* 0.x: the ways alone (one call, one BLIS mutex): set ways take
     * precedence over the thread count, which is left as it is. */
    for (int w = 0; w < 5; w++)
      lib->fn.blis.saved[1 + w] = lib->fn.blis.get_ways[w]();
    lib->fn.blis.set_ways(1, 1, 1, 1, 1);
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
    int now = openblas_get(lib);
    int want = now != 1 ? now : lib->fn.openblas.saved; /* a change made meanwhile is kept */
    if (want != now)
      openblas_set(lib, want); /* the count it had: starts no thread it did not have */
    break;
  }
  case CPUEXEC__GUARD_BLIS: {
    const int64_t *w = lib->fn.blis.saved;
    lib->fn.blis.set_ways(w[1], w[2], w[3], w[4], w[5]);
    break;
  }
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
  for (;;) {
    uint32_t v = load_settled(h);
    if (v > 0 && (atomic_load_explicit(&h->applied, memory_order_relaxed) & mask) == mask) {
      /* Up, with every library of mask set: one more inside. */
      if (atomic_compare_exchange_weak_explicit(&h->word, &v, v + 1, memory_order_acquire, memory_order_relaxed))
        return;
      continue;
    }
    /* First in, or a library found since the hold went up. */
    if (!atomic_compare_exchange_weak_explicit(&h->word, &v, v | BUSY, memory_order_acquire, memory_order_relaxed))
      continue;
    uint32_t applied = v == 0 ? 0 : atomic_load_explicit(&h->applied, memory_order_relaxed);
    SLOTS_FOR_EACH(mask & ~applied, i) apply_one(&cpuexec__guard_libs[i]);
    atomic_store_explicit(&h->applied, applied | mask, memory_order_relaxed);
    atomic_store_explicit(&h->word, v + 1, memory_order_release);
    return;
  }
}

void cpuexec__hold_leave(int which) {
  hold *h = &holds[which];
  for (;;) {
    uint32_t v = load_settled(h);
    if (v > 1) {
      if (atomic_compare_exchange_weak_explicit(&h->word, &v, v - 1, memory_order_release, memory_order_relaxed))
        return;
      continue;
    }
    /* Last out (v == 1): restore before anyone can enter again. */
    if (!atomic_compare_exchange_weak_explicit(&h->word, &v, BUSY, memory_order_acquire, memory_order_relaxed))
      continue;
    uint32_t applied = atomic_load_explicit(&h->applied, memory_order_relaxed);
    SLOTS_FOR_EACH(applied, i) restore_one(&cpuexec__guard_libs[i]);
    atomic_store_explicit(&h->applied, 0, memory_order_relaxed);
    atomic_store_explicit(&h->word, 0, memory_order_release);
    return;
  }
}

/* Takes BUSY on a hold that is up (v > 0); false when it is down. */
static bool take_busy_if_up(hold *h, uint32_t *v) {
  for (;;) {
    *v = load_settled(h);
    if (*v == 0)
      return false;
    if (atomic_compare_exchange_weak_explicit(&h->word, v, *v | BUSY, memory_order_acquire, memory_order_relaxed))
      return true;
  }
}

void cpuexec__hold_recheck(uint32_t mask) {
  SLOTS_FOR_EACH(mask, i) {
    cpuexec__guard_lib *lib = &cpuexec__guard_libs[i];
    if (lib->family != CPUEXEC__GUARD_OPENBLAS || openblas_get(lib) == 1)
      continue;
    hold *h = &holds[lib->hold];
    uint32_t v;
    if (!take_busy_if_up(h, &v))
      continue;
    int now = openblas_get(lib);
    if (now != 1 && (atomic_load_explicit(&h->applied, memory_order_relaxed) & (1U << i))) {
      lib->fn.openblas.saved = now;
      openblas_set(lib, 1);
    }
    atomic_store_explicit(&h->word, v, memory_order_release);
  }
}

uint32_t cpuexec__hold_inside(int which) {
  return atomic_load_explicit(&holds[which].word, memory_order_acquire) & ~BUSY;
}

/* ---- per-thread libraries --------------------------------------------------------- */

void cpuexec__guard_thread_save(const cpuexec__guard_lib *lib, int64_t saved[6]) {
  blis_save((cpuexec__guard_lib *)lib, saved);
}

void cpuexec__guard_thread_one(const cpuexec__guard_lib *lib) { blis_one(lib); }

void cpuexec__guard_thread_restore(const cpuexec__guard_lib *lib, const int64_t saved[6]) {
  blis_restore(lib, saved);
}

/* ---- fork ----------------------------------------------------------------------------- */

static uint32_t held_at_fork[CPUEXEC__HOLDS];

/* Waits out any transition and keeps BUSY until parent or child. */
static void fork_prepare(void) {
  for (int i = 0; i < CPUEXEC__HOLDS; i++) {
    hold *h = &holds[i];
    for (;;) {
      uint32_t v = load_settled(h);
      if (atomic_compare_exchange_weak_explicit(&h->word, &v, v | BUSY, memory_order_acquire, memory_order_relaxed)) {
        held_at_fork[i] = v;
        break;
      }
    }
  }
}

static void fork_parent(void) {
  for (int i = CPUEXEC__HOLDS; i-- > 0;)
    atomic_store_explicit(&holds[i].word, held_at_fork[i], memory_order_release);
}

/* The participants inside do not exist here: put a hold that was up down. */
static void fork_child(void) {
  for (int i = CPUEXEC__HOLDS; i-- > 0;) {
    hold *h = &holds[i];
    if (held_at_fork[i] > 0) {
      uint32_t applied = atomic_load_explicit(&h->applied, memory_order_relaxed);
      SLOTS_FOR_EACH(applied, s) restore_one(&cpuexec__guard_libs[s]);
    }
    atomic_store_explicit(&h->applied, 0, memory_order_relaxed);
    atomic_store_explicit(&h->word, 0, memory_order_release);
  }
}

__attribute__((constructor)) static void register_fork_handlers(void) {
  static const cpuexec__fork_handlers handlers = {fork_prepare, fork_parent, fork_child};
  cpuexec__fork_handlers_set(CPUEXEC__FORK_GUARD_HOLDS, &handlers);
  (void)cpuexec__fork_init();
}
