/* The storage the OMPT tool counts into (openmp_counts.h says how counting
 * works), and the public counters and reset over it. */
#include <cpuexec/errors.h>
#include <cpuexec/interop.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "openmp_counts.h"
#include "openmp_internal.h"

#define TABLE_SIZE CPUEXEC__OMP_TABLE_SIZE
#define POOL CPUEXEC__OMP_POOL
#define T_COUNT CPUEXEC__T_COUNT
#define C_COUNT CPUEXEC__C_COUNT
#define SHARED_BLOCK (&cpuexec__omp_blocks[POOL])

cpuexec__omp_count_block cpuexec__omp_blocks[POOL + 1];
_Atomic uintptr_t cpuexec__omp_table_keys[TABLE_SIZE];
_Atomic uint32_t cpuexec__omp_table_max_requested[TABLE_SIZE];
_Atomic uint32_t cpuexec__omp_table_max_actual[TABLE_SIZE];
__thread cpuexec__omp_count_block *cpuexec__omp_my_block __attribute__((tls_model("initial-exec")));

static pthread_key_t release_key;
static pthread_once_t release_key_once = PTHREAD_ONCE_INIT;
static bool release_key_made;

static void release_block(void *block) {
  cpuexec__omp_count_block *b = block;
  if (b != SHARED_BLOCK)
    atomic_store_explicit(&b->owned, 0, memory_order_release);
  cpuexec__omp_my_block = NULL; /* a count in a later destructor claims again */
}

static void make_release_key(void) { release_key_made = pthread_key_create(&release_key, release_block) == 0; }

/* The library may be unloaded before the process ends: no thread-exit
 * destructor may point into it then. */
__attribute__((destructor)) static void delete_release_key(void) {
  if (release_key_made)
    pthread_key_delete(release_key);
}

cpuexec__omp_count_block *cpuexec__openmp_claim_block(void) {
  pthread_once(&release_key_once, make_release_key);
  cpuexec__omp_count_block *b = SHARED_BLOCK;
  /* Without the key a block would never come back: share instead. */
  for (int i = 0; release_key_made && i < POOL; i++) {
    int expected = 0;
    if (atomic_load_explicit(&cpuexec__omp_blocks[i].owned, memory_order_relaxed) == 0 &&
        atomic_compare_exchange_strong_explicit(&cpuexec__omp_blocks[i].owned, &expected, 1, memory_order_acquire,
                                                memory_order_relaxed)) {
      b = &cpuexec__omp_blocks[i];
      break;
    }
  }
  if (b != SHARED_BLOCK && pthread_setspecific(release_key, b) != 0) {
    atomic_store_explicit(&b->owned, 0, memory_order_release);
    b = SHARED_BLOCK;
  }
  cpuexec__omp_my_block = b;
  return b;
}

int cpuexec__openmp_table_slot(uintptr_t key) {
  uint32_t start = (uint32_t)((key >> 4) * 0x9E3779B1u) & (TABLE_SIZE - 1);
  for (uint32_t i = 0; i < TABLE_SIZE; i++) {
    uint32_t index = (start + i) & (TABLE_SIZE - 1);
    uintptr_t seen = atomic_load_explicit(&cpuexec__omp_table_keys[index], memory_order_acquire);
    if (seen == key)
      return (int)index;
    if (seen == 0) {
      if (atomic_compare_exchange_strong_explicit(&cpuexec__omp_table_keys[index], &seen, key, memory_order_acq_rel,
                                                  memory_order_acquire) ||
          seen == key)
        return (int)index;
    }
  }
  return -1;
}

void cpuexec__openmp_record_region_slow(cpuexec__omp_region_kind kind, const void *codeptr, uint32_t requested,
                                        uint32_t actual) {
  cpuexec__omp_count_block *b = cpuexec__openmp_block();
  if (kind == CPUEXEC__OMP_NESTED) {
    cpuexec__openmp_bump(b, &b->c[CPUEXEC__C_NESTED]);
    return;
  }
  unsigned column = kind == CPUEXEC__OMP_IN_CALLBACK ? (actual > 1 ? CPUEXEC__T_MULTI : CPUEXEC__T_INLINE)
                                                     : (unsigned)kind + 1;
  int slot = cpuexec__openmp_table_slot(codeptr != NULL ? (uintptr_t)codeptr : 1);
  if (slot < 0) {
    cpuexec__openmp_bump(b, &b->c[CPUEXEC__C_OVERFLOW + column]);
    return;
  }
  cpuexec__openmp_bump(b, &b->n[slot][column]);
  cpuexec__openmp_raise_max(&cpuexec__omp_table_max_requested[slot], requested);
  cpuexec__openmp_raise_max(&cpuexec__omp_table_max_actual[slot], actual);
}

void cpuexec__openmp_record_thread(int thread_type, bool begin) {
  if (thread_type == 2 /* ompt_thread_worker */) {
    cpuexec__omp_count_block *b = cpuexec__openmp_block();
    cpuexec__openmp_bump(b, &b->c[begin ? CPUEXEC__C_WORKERS_CREATED : CPUEXEC__C_WORKERS_ENDED]);
  }
}

void cpuexec__openmp_record_untracked(void) {
  cpuexec__omp_count_block *b = cpuexec__openmp_block();
  cpuexec__openmp_bump(b, &b->c[CPUEXEC__C_UNTRACKED]);
}

/* What cpuexec_openmp_counters_reset() saw; guarded by baseline_lock, which only
 * readers take (never the tool). */
static pthread_mutex_t baseline_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t baseline_c[C_COUNT];
static uint64_t baseline_n[TABLE_SIZE][T_COUNT];

static void sum_counters(uint64_t sum[C_COUNT]) {
  memset(sum, 0, C_COUNT * sizeof *sum);
  for (int i = 0; i <= POOL; i++)
    for (int c = 0; c < C_COUNT; c++)
      sum[c] += atomic_load_explicit(&cpuexec__omp_blocks[i].c[c], memory_order_relaxed);
}

static void sum_slot(int slot, uint64_t sum[T_COUNT]) {
  memset(sum, 0, T_COUNT * sizeof *sum);
  for (int i = 0; i <= POOL; i++)
    for (int t = 0; t < T_COUNT; t++)
      sum[t] += atomic_load_explicit(&cpuexec__omp_blocks[i].n[slot][t], memory_order_relaxed);
}

/* A count since the reset; a count made concurrently with the reset may be
 * kept or lost, never wrap. */
static uint64_t since(uint64_t now, uint64_t base) { return now > base ? now - base : 0; }

CPUEXEC_EXPORT int cpuexec_openmp_counters_get(cpuexec_openmp_counters *out) {
  if (out == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass a cpuexec_openmp_counters to fill");
  memset(out, 0, sizeof *out); /* reserved_ too */
  uint64_t sum[C_COUNT], column[T_COUNT] = {0}, slot_sum[T_COUNT];
  pthread_mutex_lock(&baseline_lock);
  sum_counters(sum);
  for (int c = 0; c < C_COUNT; c++)
    sum[c] = since(sum[c], baseline_c[c]);
  /* A kind's total: its column over the table, plus its overflow. */
  for (int slot = 0; slot < TABLE_SIZE; slot++) {
    if (atomic_load_explicit(&cpuexec__omp_table_keys[slot], memory_order_acquire) == 0)
      continue;
    sum_slot(slot, slot_sum);
    for (int t = 0; t < T_COUNT; t++)
      column[t] += since(slot_sum[t], baseline_n[slot][t]);
  }
  pthread_mutex_unlock(&baseline_lock);
  for (int t = 0; t < T_COUNT; t++)
    column[t] += sum[CPUEXEC__C_OVERFLOW + t];
  out->regions_in_callbacks = column[CPUEXEC__T_INLINE] + column[CPUEXEC__T_MULTI];
  out->regions_inline = column[CPUEXEC__T_INLINE];
  out->regions_multithreaded = column[CPUEXEC__T_MULTI];
  out->toplevel_regions_in_sessions = column[CPUEXEC__T_TOP_SESSION];
  out->toplevel_regions_outside = column[CPUEXEC__T_TOP_OUTSIDE];
  out->nested_regions = sum[CPUEXEC__C_NESTED];
  out->openmp_workers_created = sum[CPUEXEC__C_WORKERS_CREATED];
  out->openmp_workers_ended = sum[CPUEXEC__C_WORKERS_ENDED];
  out->untracked_regions = sum[CPUEXEC__C_UNTRACKED];
  out->report_overflow = 0;
  for (int t = 0; t < T_COUNT; t++)
    out->report_overflow += sum[CPUEXEC__C_OVERFLOW + t];
  return 0;
}

CPUEXEC_EXPORT void cpuexec_openmp_counters_reset(void) {
  pthread_mutex_lock(&baseline_lock);
  sum_counters(baseline_c);
  for (int i = 0; i < TABLE_SIZE; i++) {
    sum_slot(i, baseline_n[i]);
    atomic_store_explicit(&cpuexec__omp_table_max_requested[i], 0, memory_order_relaxed);
    atomic_store_explicit(&cpuexec__omp_table_max_actual[i], 0, memory_order_relaxed);
  }
  pthread_mutex_unlock(&baseline_lock);
}

void cpuexec__openmp_slot_since_reset(int slot, uint64_t out[CPUEXEC__T_COUNT]) {
  uint64_t sum[T_COUNT];
  pthread_mutex_lock(&baseline_lock);
  sum_slot(slot, sum);
  for (int t = 0; t < T_COUNT; t++)
    out[t] = since(sum[t], baseline_n[slot][t]);
  pthread_mutex_unlock(&baseline_lock);
}
