/* Finding the OpenMP runtimes a process has loaded, at run time.
 *
 * libcpuexec links no OpenMP runtime. It looks for the ones the process
 * loaded: LLVM's libomp (also shipped as libiomp5.so) and GCC's libgomp,
 * first by their file names (a loaded module, never loading one), then
 * through the global symbol scope (which also finds a runtime under another
 * name), all through the OS layer's loader (os/loader.h: dlfcn on Unix,
 * the loaded modules and GetProcAddress on Windows). Each setter is looked
 * up in the runtime's own object and checked against the module it is in,
 * so with both runtimes loaded each slot drives its own runtime, whichever
 * one the omp_* names bind to.
 *
 * A runtime found is pinned (RTLD_NODELETE, GET_MODULE_HANDLE_EX_FLAG_PIN),
 * so its function pointers stay valid for the life of the process: slots
 * are written once and never cleared, and the hot path needs no lock or
 * reference count.
 *
 * The first scan runs in a library constructor, before any region can start,
 * so the runtimes the program was linked with are guarded from the first
 * callback on every thread. (It maps nothing: loaded-module lookups only.)
 *
 * When to look again (the cost is the point): the loader's change count
 * (cpuexec__os_loader_changes: on Linux one dl_iterate_phdr() call that
 * stops at the first object, about 25 ns, under the loader's lock); the
 * full scan (a few lookups, microseconds) runs only when it changed, or on
 * every check where the OS backend has no count (posix). The check
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

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "os/loader.h"

cpuexec__omp_runtime cpuexec__omp_runtimes[CPUEXEC__OMP_RUNTIMES];
_Atomic uint32_t cpuexec__omp_present;

/* Set by anyone who wants the next region begin to rescan; cleared by the
 * scanning thread. Relaxed: a late rescan is harmless. */
static _Atomic int detect_requested = 1;

/* Guards seen_adds/seen_subs and the writing of slots. Taken only with
 * trylock (a thread finding it busy skips its check), so detection never
 * blocks a participant and cannot deadlock with the loader's own locks. */
static pthread_mutex_t detect_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t seen_changes;
static bool seen_any;

void cpuexec__openmp_request_detect(void) { atomic_store_explicit(&detect_requested, 1, memory_order_relaxed); }

/* symbol as defined by the object at object_base, looked up in handle
 * (NULL: the global scope), or NULL. */
static void *lookup_in(void *handle, const char *symbol, const void *object_base) {
  void *address = handle != NULL ? cpuexec__os_module_symbol(handle, symbol) : cpuexec__os_global_symbol(symbol);
  cpuexec__os_address info;
  if (address == NULL || !cpuexec__os_address_info(address, &info) || info.module_base != object_base)
    return NULL;
  return address;
}

/* Fills rt from the object at object_base (handle: that object, or NULL
 * for the global scope). False when a required setter is missing. */
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
static bool global_definer(const char *symbol, cpuexec__os_address *info) {
  void *address = cpuexec__os_global_symbol(symbol);
  return address != NULL && cpuexec__os_address_info(address, info) && info->module_base != NULL;
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
    void *handle = cpuexec__os_module_loaded(*name);
    if (handle == NULL)
      continue;
    cpuexec__os_address info;
    void *probe = cpuexec__os_module_symbol(handle, "omp_set_num_threads");
    if (probe != NULL && cpuexec__os_address_info(probe, &info) &&
        fill_slot(&cpuexec__omp_runtimes[slot], handle, info.module_base, info.module_path, blocktime)) {
      publish(slot);
      return; /* the handle stays open on purpose: it pins the runtime */
    }
    cpuexec__os_module_close(handle);
  }
  /* A runtime under another name, or linked into the program. */
  cpuexec__os_address setter, mark;
  if (!global_definer("omp_set_num_threads", &setter))
    return;
  bool is_llvm = global_definer("__kmpc_fork_call", &mark) && mark.module_base == setter.module_base;
  if (is_llvm != (slot == CPUEXEC__OMP_LIBOMP))
    return;
  if (slot == CPUEXEC__OMP_LIBGOMP && (present & (1U << CPUEXEC__OMP_LIBOMP)) &&
      strcmp(cpuexec__omp_runtimes[CPUEXEC__OMP_LIBOMP].path, setter.module_path) == 0)
    return;
  void *handle = cpuexec__os_module_loaded(setter.module_path);
  if (fill_slot(&cpuexec__omp_runtimes[slot], handle, setter.module_base, setter.module_path, blocktime))
    publish(slot);
}

/* The runtimes' file names: Unix sonames, or the DLLs of the mingw-w64
 * toolchain (libgomp-1.dll) and of LLVM and Intel on Windows. */
#ifdef _WIN32
static const char *const libomp_sonames[] = {"libomp.dll", "libiomp5md.dll", NULL};
static const char *const libgomp_sonames[] = {"libgomp-1.dll", NULL};
#else
static const char *const libomp_sonames[] = {"libomp.so.5", "libiomp5.so", "libomp.so", NULL};
static const char *const libgomp_sonames[] = {"libgomp.so.1", NULL};
#endif

uint32_t cpuexec__openmp_detect(bool force) {
  if (pthread_mutex_trylock(&detect_lock) != 0)
    return atomic_load_explicit(&cpuexec__omp_present, memory_order_acquire);
  atomic_store_explicit(&detect_requested, 0, memory_order_relaxed);
  uint64_t changes = 0;
  bool counted = cpuexec__os_loader_changes(&changes);
  if (force || !counted || !seen_any || changes != seen_changes) {
    seen_changes = changes;
    seen_any = true;
    scan_slot(CPUEXEC__OMP_LIBOMP, libomp_sonames);
    scan_slot(CPUEXEC__OMP_LIBGOMP, libgomp_sonames);
  }
  pthread_mutex_unlock(&detect_lock);
  return atomic_load_explicit(&cpuexec__omp_present, memory_order_acquire);
}

__attribute__((constructor)) static void detect_at_load(void) { cpuexec__openmp_detect(true); }

bool cpuexec__openmp_detect_due(void) { return atomic_load_explicit(&detect_requested, memory_order_relaxed) != 0; }
