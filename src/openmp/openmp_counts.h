/* Internal: where the OMPT tool counts OpenMP regions (defined in
 * src/openmp/openmp_report.c, which sums them for the public queries).
 *
 * The tool counts once or twice per OpenMP region, on the region's own
 * thread, so the counting is inline in its callbacks and makes no atomic
 * read-modify-write and takes no lock:
 *   - each thread counts into a block of its own, claimed from a static pool
 *     on its first count (cpuexec__openmp_claim_block) and handed back by a
 *     thread-exit destructor; the next thread that claims it continues its
 *     counts. Its owner is its only writer, so a count is a relaxed load and
 *     a relaxed store; readers sum the blocks. A thread that finds the pool
 *     exhausted counts into the shared last block, with atomic adds;
 *   - the report is a fixed table keyed by the raw codeptr_ra (open
 *     addressing; a key is claimed with a compare-and-swap and never
 *     freed). A region's count lives in its thread's block, in the column of
 *     its kind; the per-kind totals are the column sums plus the regions the
 *     full table could not hold (the OVERFLOW counters), summed on read;
 *   - team-size maxima are raised with a compare-and-swap, and only for
 *     teams above one: a slot that has counts reports at least one;
 *   - counts only grow: cpuexec_openmp_counters_reset() keeps a baseline that
 *     readers subtract. */
#ifndef CPUEXEC_SRC_OPENMP_COUNTS_H
#define CPUEXEC_SRC_OPENMP_COUNTS_H

#include <stdatomic.h>
#include <stdint.h>

#include "openmp_internal.h"

/* Table columns, in cpuexec__omp_region_kind order for the counted kinds. */
enum {
  CPUEXEC__T_INLINE,      /* in a callback, one thread */
  CPUEXEC__T_MULTI,       /* in a callback, more than one thread */
  CPUEXEC__T_TOP_SESSION, /* top level, an executor installed */
  CPUEXEC__T_TOP_OUTSIDE, /* top level, none installed */
  CPUEXEC__T_COUNT
};

/* Counters outside the table. OVERFLOW + column: a region of that column
 * whose calling function did not fit the table. */
enum {
  CPUEXEC__C_OVERFLOW = 0, /* ... + CPUEXEC__T_COUNT */
  CPUEXEC__C_NESTED = CPUEXEC__T_COUNT,
  CPUEXEC__C_WORKERS_CREATED,
  CPUEXEC__C_WORKERS_ENDED,
  CPUEXEC__C_UNTRACKED,
  CPUEXEC__C_COUNT
};

#define CPUEXEC__OMP_TABLE_SIZE 256 /* a power of two */
#define CPUEXEC__OMP_POOL 64        /* blocks owned by one thread at a time */

typedef struct cpuexec__omp_count_block {
  _Atomic uint64_t c[CPUEXEC__C_COUNT];
  _Atomic uint64_t n[CPUEXEC__OMP_TABLE_SIZE][CPUEXEC__T_COUNT];
  /* 1 while a thread holds the block: claimed with acquire, released with
   * release, so the next owner continues from the last one's stores. */
  _Atomic int owned;
} __attribute__((aligned(128))) cpuexec__omp_count_block;

/* Blocks 0..POOL-1 are owned; block POOL is shared (atomic adds only). */
extern cpuexec__omp_count_block cpuexec__omp_blocks[CPUEXEC__OMP_POOL + 1];
extern _Atomic uintptr_t cpuexec__omp_table_keys[CPUEXEC__OMP_TABLE_SIZE];
extern _Atomic uint32_t cpuexec__omp_table_max_requested[CPUEXEC__OMP_TABLE_SIZE];
extern _Atomic uint32_t cpuexec__omp_table_max_actual[CPUEXEC__OMP_TABLE_SIZE];
/* This thread's block, NULL until its first count. initial-exec: read on
 * every region; the default model in a shared library makes it a call. */
extern __thread cpuexec__omp_count_block *cpuexec__omp_my_block __attribute__((tls_model("initial-exec")));

/* Claims a block for this thread (or the shared one) and sets my_block. */
cpuexec__omp_count_block *cpuexec__openmp_claim_block(void);
/* The table slot of key, claimed if new; -1 when the table is full. */
int cpuexec__openmp_table_slot(uintptr_t key);

static inline cpuexec__omp_count_block *cpuexec__openmp_block(void) {
  cpuexec__omp_count_block *b = cpuexec__omp_my_block;
  return __builtin_expect(b != NULL, 1) ? b : cpuexec__openmp_claim_block();
}

/* One more in a counter of b: its owner's plain increment, or an atomic add
 * in the shared block. */
static inline void cpuexec__openmp_bump(cpuexec__omp_count_block *b, _Atomic uint64_t *counter) {
  if (__builtin_expect(b != &cpuexec__omp_blocks[CPUEXEC__OMP_POOL], 1))
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + 1, memory_order_relaxed);
  else
    atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
}

static inline void cpuexec__openmp_raise_max(_Atomic uint32_t *slot, uint32_t value) {
  uint32_t seen = atomic_load_explicit(slot, memory_order_relaxed);
  while (seen < value && !atomic_compare_exchange_weak_explicit(slot, &seen, value, memory_order_relaxed,
                                                                memory_order_relaxed)) {
  }
}

/* The whole of cpuexec__openmp_record_region, out of line: the first count
 * on a thread, the shared block, a key not in its first slot, or a team of
 * more than one. */
void cpuexec__openmp_record_region_slow(cpuexec__omp_region_kind kind, const void *codeptr, uint32_t requested,
                                        uint32_t actual);

/* A region ended on this thread (called by the tool, on that thread). The
 * common case (an owned block, the key in its first slot, one thread) is a
 * few instructions and no call; everything else is one tail call. */
static inline void cpuexec__openmp_record_region(cpuexec__omp_region_kind kind, const void *codeptr,
                                                 uint32_t requested, uint32_t actual) {
  cpuexec__omp_count_block *b = cpuexec__omp_my_block;
  uintptr_t key = (uintptr_t)codeptr;
  unsigned slot = (uint32_t)((key >> 4) * 0x9E3779B1u) & (CPUEXEC__OMP_TABLE_SIZE - 1);
  if (__builtin_expect(b == NULL || b == &cpuexec__omp_blocks[CPUEXEC__OMP_POOL] || kind == CPUEXEC__OMP_NESTED ||
                           requested > 1 || actual > 1 || key == 0 ||
                           atomic_load_explicit(&cpuexec__omp_table_keys[slot], memory_order_acquire) != key,
                       0)) {
    cpuexec__openmp_record_region_slow(kind, codeptr, requested, actual);
    return;
  }
  /* IN_CALLBACK (one thread here) is INLINE; the other kinds follow in order. */
  _Atomic uint64_t *counter = &b->n[slot][kind == CPUEXEC__OMP_IN_CALLBACK ? CPUEXEC__T_INLINE : (unsigned)kind + 1];
  atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + 1, memory_order_relaxed);
}

/* One call-site slot's counts per kind since the last cpuexec_openmp_counters_reset()
 * (openmp_counts.c). */
void cpuexec__openmp_slot_since_reset(int slot, uint64_t out[CPUEXEC__T_COUNT]);

#endif
