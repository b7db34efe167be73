/* Finding the OpenMP runtimes a process has loaded, at run time.
 *
 * libcpuexec links no OpenMP runtime. It looks for the ones the process
 * loaded: LLVM's libomp (also shipped as libiomp5.so) and GCC's libgomp,
 * first by their sonames (dlopen RTLD_NOLOAD), then through the global
 * symbol scope (dlsym RTLD_DEFAULT + dladdr, which also finds a runtime
 * under another name). Each setter is looked up in the runtime's own object
 * and checked with dladdr, so with both runtimes loaded each slot drives its
 * own runtime, whichever one the omp_* names bind to.
 *
 * A runtime found is pinned with RTLD_NODELETE, so its function pointers stay
 * valid for the life of the process: slots are written once and never
 * cleared, and the hot path needs no lock or reference count.
 *
 * The first scan runs in a library constructor, before any region can start,
 * so the runtimes the program was linked with are guarded from the first
 * callback on every thread. (It only maps nothing: RTLD_NOLOAD lookups.)
 *
 * When to look again (the cost is the point): one dl_iterate_phdr() call
 * that stops at the first object reads the loader's load and unload counts
 * (about 25 ns, under the loader's lock); the full scan (a few dlopen and
 * dlsym calls, microseconds) runs only when those counts changed. The check
 * runs
 *   - on a thread's first region begin, then on every 64th region begin of
 *     that thread (staggered per thread, so the participants of one region
 *     do not all take the loader's lock together);
 *   - at every scope enter (once per session run, on the session thread);
 *   - on the next region begin after libomp asked for a tool (a libomp loaded
 *     late announces itself that way) and on every cpuexec_openmp_status_get().
 * So a runtime dlopen()ed later is guarded from the next scope enter, or
 * within 64 regions per thread: see doc/migrating-openmp.md, "Limits". */
#include "openmp_internal.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

cpuexec__omp_runtime cpuexec__omp_runtimes[CPUEXEC__OMP_RUNTIMES];
_Atomic uint32_t cpuexec__omp_present;

/* Set by anyone who wants the next region begin to rescan; cleared by the
 * scanning thread. Relaxed: a late rescan is harmless. */
static _Atomic int detect_requested = 1;

/* Guards seen_adds/seen_subs and the writing of slots. Taken only with
 * trylock (a thread finding it busy skips its check), so detection never
 * blocks a participant and cannot deadlock with the loader's own locks. */
static pthread_mutex_t detect_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long seen_adds = ~0ULL, seen_subs = ~0ULL;

void cpuexec__openmp_request_detect(void) { atomic_store_explicit(&detect_requested, 1, memory_order_relaxed); }

static int loader_counts(struct dl_phdr_info *info, size_t size, void *data) {
  unsigned long long *counts = data;
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    counts[0] = info->dlpi_adds;
    counts[1] = info->dlpi_subs;
  }
  return 1; /* the counts are the same in every entry: stop at the first */
}

/* The object that defines symbol, looked up in handle, or NULL. */
static void *lookup_in(void *handle, const char *symbol, const void *object_base) {
  void *address = dlsym(handle, symbol);
  Dl_info info;
  if (address == NULL || dladdr(address, &info) == 0 || info.dli_fbase != object_base)
    return NULL;
  return address;
}

/* Fills rt from the object at object_base (handle: that object, or
 * RTLD_DEFAULT). False when a required setter is missing. */
static bool fill_slot(cpuexec__omp_runtime *rt, void *handle, const void *object_base, const char *path,
                      bool has_blocktime) {
  cpuexec__omp_runtime found;
  memset(&found, 0, sizeof found);
  *(void **)&found.set_num_threads = lookup_in(handle, "omp_set_num_threads", object_base);
  *(void **)&found.get_max_threads = lookup_in(handle, "omp_get_max_threads", object_base);
  *(void **)&found.set_max_active_levels = lookup_in(handle, "omp_set_max_active_levels", object_base);
  *(void **)&found.get_max_active_levels = lookup_in(handle, "omp_get_max_active_levels", object_base);
  if (has_blocktime) {
    *(void **)&found.set_blocktime = lookup_in(handle, "kmp_set_blocktime", object_base);
    *(void **)&found.get_blocktime = lookup_in(handle, "kmp_get_blocktime", object_base);
    if (found.set_blocktime == NULL || found.get_blocktime == NULL)
      found.set_blocktime = NULL, found.get_blocktime = NULL;
  }
  if (found.set_num_threads == NULL || found.get_max_threads == NULL || found.set_max_active_levels == NULL ||
      found.get_max_active_levels == NULL)
    return false;
  snprintf(found.path, sizeof found.path, "%s", path != NULL ? path : "");
  *rt = found;
  return true;
}

/* The loaded object that defines symbol in the global scope: its base and
 * file name, or false. */
static bool global_definer(const char *symbol, Dl_info *info) {
  void *address = dlsym(RTLD_DEFAULT, symbol);
  return address != NULL && dladdr(address, info) != 0 && info->dli_fbase != NULL;
}

static void publish(int slot) {
  atomic_fetch_or_explicit(&cpuexec__omp_present, 1U << slot, memory_order_release);
}

/* Tries the sonames, then the global scope. Called with detect_lock held. */
static void scan_slot(int slot, const char *const *sonames) {
  uint32_t present = atomic_load_explicit(&cpuexec__omp_present, memory_order_relaxed);
  if (present & (1U << slot))
    return; /* pinned: never changes */
  bool blocktime = slot == CPUEXEC__OMP_LIBOMP;
  for (const char *const *name = sonames; *name != NULL; name++) {
    void *handle = dlopen(*name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    if (handle == NULL)
      continue;
    Dl_info info;
    void *probe = dlsym(handle, "omp_set_num_threads");
    if (probe != NULL && dladdr(probe, &info) != 0 &&
        fill_slot(&cpuexec__omp_runtimes[slot], handle, info.dli_fbase, info.dli_fname, blocktime)) {
      publish(slot);
      return; /* the handle stays open on purpose: it pins the runtime */
    }
    dlclose(handle);
  }
  /* A runtime under another name, or linked into the program. */
  Dl_info setter, mark;
  if (!global_definer("omp_set_num_threads", &setter))
    return;
  bool is_llvm = global_definer("__kmpc_fork_call", &mark) && mark.dli_fbase == setter.dli_fbase;
  if (is_llvm != (slot == CPUEXEC__OMP_LIBOMP))
    return;
  if (slot == CPUEXEC__OMP_LIBGOMP && (present & (1U << CPUEXEC__OMP_LIBOMP)) &&
      strcmp(cpuexec__omp_runtimes[CPUEXEC__OMP_LIBOMP].path, setter.dli_fname) == 0)
    return;
  void *handle = dlopen(setter.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
  if (fill_slot(&cpuexec__omp_runtimes[slot], handle != NULL ? handle : RTLD_DEFAULT, setter.dli_fbase,
                setter.dli_fname, blocktime))
    publish(slot);
}

static const char *const libomp_sonames[] = {"libomp.so.5", "libiomp5.so", "libomp.so", NULL};
static const char *const libgomp_sonames[] = {"libgomp.so.1", NULL};

uint32_t cpuexec__openmp_detect(bool force) {
  if (pthread_mutex_trylock(&detect_lock) != 0)
    return atomic_load_explicit(&cpuexec__omp_present, memory_order_acquire);
  atomic_store_explicit(&detect_requested, 0, memory_order_relaxed);
  unsigned long long counts[2] = {0, 0};
  dl_iterate_phdr(loader_counts, counts);
  if (force || counts[0] != seen_adds || counts[1] != seen_subs) {
    seen_adds = counts[0];
    seen_subs = counts[1];
    scan_slot(CPUEXEC__OMP_LIBOMP, libomp_sonames);
    scan_slot(CPUEXEC__OMP_LIBGOMP, libgomp_sonames);
  }
  pthread_mutex_unlock(&detect_lock);
  return atomic_load_explicit(&cpuexec__omp_present, memory_order_acquire);
}

__attribute__((constructor)) static void detect_at_load(void) { cpuexec__openmp_detect(true); }

bool cpuexec__openmp_detect_due(void) { return atomic_load_explicit(&detect_requested, memory_order_relaxed) != 0; }
