/* cpuexec_openmp_report_get(): the counted call sites, resolved to functions
 * (the OS layer's loader, os/loader.h: dladdr on Unix) only when the report is read, and call sites in the same function
 * merged. */
#include <cpuexec/errors.h>
#include <cpuexec/interop.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "os/loader.h"
#include "openmp_counts.h"
#include "openmp_internal.h"

#define TABLE_SIZE CPUEXEC__OMP_TABLE_SIZE
#define POOL CPUEXEC__OMP_POOL
#define T_COUNT CPUEXEC__T_COUNT
#define C_COUNT CPUEXEC__C_COUNT

static int by_regions_descending(const void *a, const void *b) {
  const cpuexec_openmp_report_entry *x = a, *y = b;
  uint64_t nx = x->inline_in_callbacks + x->multithreaded_in_callbacks + x->toplevel_in_sessions + x->toplevel_outside;
  uint64_t ny = y->inline_in_callbacks + y->multithreaded_in_callbacks + y->toplevel_in_sessions + y->toplevel_outside;
  if (nx != ny)
    return nx < ny ? 1 : -1;
  return strcmp(x->function, y->function);
}

/* Resolves one table slot into an entry; false when it holds no region. */
static bool read_slot(int slot, cpuexec_openmp_report_entry *entry, const void **function_start) {
  uintptr_t key = atomic_load_explicit(&cpuexec__omp_table_keys[slot], memory_order_acquire);
  if (key == 0)
    return false;
  memset(entry, 0, sizeof *entry);
  uint64_t *columns[T_COUNT] = {&entry->inline_in_callbacks, &entry->multithreaded_in_callbacks,
                                &entry->toplevel_in_sessions, &entry->toplevel_outside};
  uint64_t counts[T_COUNT], total = 0;
  cpuexec__openmp_slot_since_reset(slot, counts);
  for (int t = 0; t < T_COUNT; t++) {
    *columns[t] = counts[t];
    total += counts[t];
  }
  if (total == 0)
    return false;
  entry->codeptr = key == 1 ? NULL : (const void *)key;
  /* Maxima are only raised above one (src/openmp/openmp_counts.h). */
  entry->max_requested_threads = atomic_load_explicit(&cpuexec__omp_table_max_requested[slot], memory_order_relaxed);
  entry->max_actual_threads = atomic_load_explicit(&cpuexec__omp_table_max_actual[slot], memory_order_relaxed);
  if (entry->max_requested_threads == 0)
    entry->max_requested_threads = 1;
  if (entry->max_actual_threads == 0)
    entry->max_actual_threads = 1;
  *function_start = entry->codeptr;
  cpuexec__os_address info;
  /* codeptr_ra is a return address: look up the byte before it, which is
   * still inside the calling function even when the call ends it. */
  if (entry->codeptr != NULL && cpuexec__os_address_info((const char *)entry->codeptr - 1, &info)) {
    snprintf(entry->object, sizeof entry->object, "%s", info.module_path);
    entry->offset = (uint64_t)((uintptr_t)entry->codeptr - (uintptr_t)info.module_base);
    if (info.symbol != NULL) {
      snprintf(entry->function, sizeof entry->function, "%s", info.symbol);
      *function_start = info.symbol_address;
    }
  }
  return true;
}

static void merge_into(cpuexec_openmp_report_entry *into, const cpuexec_openmp_report_entry *from) {
  into->inline_in_callbacks += from->inline_in_callbacks;
  into->multithreaded_in_callbacks += from->multithreaded_in_callbacks;
  into->toplevel_in_sessions += from->toplevel_in_sessions;
  into->toplevel_outside += from->toplevel_outside;
  if (from->max_requested_threads > into->max_requested_threads)
    into->max_requested_threads = from->max_requested_threads;
  if (from->max_actual_threads > into->max_actual_threads)
    into->max_actual_threads = from->max_actual_threads;
}

CPUEXEC_EXPORT int cpuexec_openmp_report_get(cpuexec_openmp_report_entry *entries, size_t capacity, size_t *count) {
  if (count == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "count: NULL; pass a size_t to receive the number of entries");
  if (entries == NULL && capacity > 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "entries: NULL with capacity %zu; pass an array or capacity 0", capacity);
  cpuexec_openmp_report_entry *all = calloc(TABLE_SIZE, sizeof *all);
  const void **starts = calloc(TABLE_SIZE, sizeof *starts);
  if (all == NULL || starts == NULL) {
    free(all);
    free(starts);
    return cpuexec__fail(CPUEXEC_ENOMEM, "report: %zu bytes for %d entries", TABLE_SIZE * sizeof *all, TABLE_SIZE);
  }
  size_t n = 0;
  for (int slot = 0; slot < TABLE_SIZE; slot++) {
    const void *start = NULL;
    if (!read_slot(slot, &all[n], &start))
      continue;
    /* Call sites of one named function are one line of the report. */
    size_t same = n;
    if (all[n].function[0] != '\0')
      for (size_t i = 0; i < n; i++)
        if (starts[i] == start) {
          same = i;
          break;
        }
    if (same != n) {
      merge_into(&all[same], &all[n]);
      continue;
    }
    starts[n++] = start;
  }
  qsort(all, n, sizeof *all, by_regions_descending);
  if (entries != NULL && capacity > 0 && n > 0)
    memcpy(entries, all, (n < capacity ? n : capacity) * sizeof *all);
  *count = n;
  free(all);
  free(starts);
  return 0;
}
