/* cpuexec_runtimes_get() / cpuexec_runtimes_describe(): every threaded
 * library found in the process and how it is governed: the OpenMP runtimes
 * (src/openmp/openmp_runtimes.c) and the libraries of src/guards/. */
#include <cpuexec/errors.h>
#include <cpuexec/runtimes.h>

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/strbuf.h"
#include "guards/guards_internal.h"
#include "openmp_internal.h"

static const char *const family_names[] = {"OpenBLAS", "BLIS", "oneTBB", "MKL"};

static void fill_openmp(cpuexec_runtime_info *e, int slot) {
  memset(e, 0, sizeof *e);
  const cpuexec__omp_runtime *rt = &cpuexec__omp_runtimes[slot];
  e->family = CPUEXEC_RUNTIME_OPENMP;
  e->guard = CPUEXEC_GUARD_PER_THREAD;
  e->governed = true;
  snprintf(e->name, sizeof e->name, "%s", slot == CPUEXEC__OMP_LIBOMP ? "libomp" : "libgomp");
  snprintf(e->threading, sizeof e->threading, "openmp");
  snprintf(e->path, sizeof e->path, "%s", rt->path);
  snprintf(e->reason, sizeof e->reason,
           "OpenMP guard: omp_set_num_threads(1) and omp_set_max_active_levels(0) on each participant, "
           "restored when it leaves");
}

static void fill_guarded(cpuexec_runtime_info *e, const cpuexec__guard_lib *lib) {
  memset(e, 0, sizeof *e);
  static const cpuexec_runtime_family families[] = {CPUEXEC_RUNTIME_OPENBLAS, CPUEXEC_RUNTIME_BLIS,
                                                    CPUEXEC_RUNTIME_TBB, CPUEXEC_RUNTIME_MKL};
  static const cpuexec_runtime_guard guards[] = {CPUEXEC_GUARD_PER_THREAD, CPUEXEC_GUARD_PROCESS_WIDE,
                                                 CPUEXEC_GUARD_THROUGH_OPENMP, CPUEXEC_GUARD_SERIAL_BUILD,
                                                 CPUEXEC_GUARD_NONE};
  e->family = families[lib->family];
  e->guard = guards[lib->mode];
  e->governed = lib->mode != CPUEXEC__GUARD_NONE;
  snprintf(e->name, sizeof e->name, "%s", family_names[lib->family]);
  snprintf(e->version, sizeof e->version, "%s", lib->version);
  snprintf(e->threading, sizeof e->threading, "%s", lib->threading);
  snprintf(e->path, sizeof e->path, "%s", lib->path);
  snprintf(e->reason, sizeof e->reason, "%s", lib->reason);
}

CPUEXEC_EXPORT int cpuexec_runtimes_get(cpuexec_runtime_info *entries, size_t capacity, size_t *count) {
  if (count == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "count: NULL; pass a size_t to receive the number of libraries");
  if (entries == NULL && capacity > 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "entries: NULL with capacity %zu; pass an array or capacity 0", capacity);
  uint32_t omp = cpuexec__openmp_detect(false);
  cpuexec__guards_detect(false);
  uint32_t n = atomic_load_explicit(&cpuexec__guard_count, memory_order_acquire);
  size_t k = 0;
  for (int slot = 0; slot < CPUEXEC__OMP_RUNTIMES; slot++)
    if (omp & (1U << slot)) {
      if (k < capacity)
        fill_openmp(&entries[k], slot);
      k++;
    }
  for (uint32_t i = 0; i < n; i++) {
    if (k < capacity)
      fill_guarded(&entries[k], &cpuexec__guard_libs[i]);
    k++;
  }
  *count = k;
  return 0;
}

static const char *guard_words(cpuexec_runtime_guard g) {
  switch (g) {
  case CPUEXEC_GUARD_PER_THREAD: return "governed per thread";
  case CPUEXEC_GUARD_PROCESS_WIDE: return "governed process-wide";
  case CPUEXEC_GUARD_THROUGH_OPENMP: return "governed through OpenMP";
  case CPUEXEC_GUARD_SERIAL_BUILD: return "nothing to govern";
  default: return "NOT governed";
  }
}

CPUEXEC_EXPORT int cpuexec_runtimes_describe(char *buf, size_t size) {
  if (buf == NULL && size > 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "buf: NULL with size %zu; pass a buffer or size 0", size);
  cpuexec_runtime_info list[CPUEXEC__OMP_RUNTIMES + CPUEXEC__GUARD_SLOTS];
  size_t n = 0;
  int rc = cpuexec_runtimes_get(list, sizeof list / sizeof list[0], &n);
  if (rc != 0)
    return rc;
  if (n > sizeof list / sizeof list[0])
    n = sizeof list / sizeof list[0];
  cpuexec__bounded out = cpuexec__bounded_on(buf, size);
  for (size_t i = 0; i < n; i++) {
    const cpuexec_runtime_info *e = &list[i];
    cpuexec__bounded_printf(&out, "%s%s%s (%s) %s: %s: %s\n", e->name, e->version[0] != '\0' ? " " : "", e->version,
                            e->threading[0] != '\0' ? e->threading : "?", e->path, guard_words(e->guard), e->reason);
  }
  uint32_t overflow = atomic_load_explicit(&cpuexec__guard_overflow, memory_order_relaxed);
  if (overflow > 0)
    cpuexec__bounded_printf(&out, "(%u more threaded libraries were found than the guards record; they are not "
                                  "governed)\n",
                            overflow);
  if (n == 0)
    cpuexec__bounded_printf(&out, "no threaded library (OpenMP, OpenBLAS, BLIS, oneTBB, MKL) is loaded\n");
  return (int)out.len;
}
