/* Finding OpenBLAS, BLIS, oneTBB and MKL among the loaded objects, at run
 * time, and deciding how each is governed (src/guards/guards_internal.h).
 *
 * libcpuexec links none of them. A scan lists the loaded objects
 * (dl_iterate_phdr, names only: nothing is opened while the loader's list
 * is locked), then opens each with RTLD_NOLOAD (which maps nothing) and asks
 * that object, and only that object, for one mark symbol per family
 * (dlsym on its handle, the definer checked with dladdr1's link map, so a
 * dependency's symbol is not taken for the object's own). A library found
 * this way is pinned with RTLD_NODELETE when it is governed.
 *
 * Marks: OpenBLAS openblas_get_parallel (also with the scipy_ prefix and
 * the 64_ suffix of the ILP64 builds), BLIS bli_info_get_version_str,
 * oneTBB tbb::detail::r1::create(global_control&) (oneTBB's binary
 * interface 12; TBB_runtime_interface_version without it is the legacy
 * TBB 2020 interface), MKL mkl_get_version_string.
 *
 * When: like the OpenMP runtimes (src/openmp/openmp_runtimes.c), a scan
 * runs in a library constructor and whenever the loader's load/unload
 * counts changed, checked on a thread's first region, on every 64th region
 * of each thread, at every scope enter and on every status call. */
#define _GNU_SOURCE 1
#include "guards_internal.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"

cpuexec__guard_lib cpuexec__guard_libs[CPUEXEC__GUARD_SLOTS];
_Atomic uint32_t cpuexec__guard_count;
_Atomic uint32_t cpuexec__guard_thread_mask;
_Atomic uint32_t cpuexec__guard_hold_mask[CPUEXEC__HOLDS];
_Atomic uint32_t cpuexec__guard_active;
_Atomic uint32_t cpuexec__guard_overflow;

/* Taken with trylock only: a thread that finds a scan running skips its own. */
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long seen_adds = ~0ULL, seen_subs = ~0ULL;

static int loader_counts(struct dl_phdr_info *info, size_t size, void *data) {
  unsigned long long *counts = data;
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    counts[0] = info->dlpi_adds;
    counts[1] = info->dlpi_subs;
  }
  return 1;
}

/* ---- the loaded objects ------------------------------------------------------ */

typedef struct object_list {
  char **names; /* "" for the program itself */
  size_t count, capacity;
  bool failed;
} object_list;

static int collect(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  object_list *list = data;
  const char *name = info->dlpi_name != NULL ? info->dlpi_name : "";
  /* The program is the first entry with an empty name; later empty names
   * (the vDSO on some systems) cannot be opened by name. */
  if (name[0] == '\0' && list->count > 0)
    return 0;
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? list->capacity * 2 : 64;
    char **grown = realloc(list->names, capacity * sizeof *grown);
    if (grown == NULL) {
      list->failed = true;
      return 1;
    }
    list->names = grown;
    list->capacity = capacity;
  }
  char *copy = strdup(name);
  if (copy == NULL) {
    list->failed = true;
    return 1;
  }
  list->names[list->count++] = copy;
  return 0;
}

static void list_free(object_list *list) {
  for (size_t i = 0; i < list->count; i++)
    free(list->names[i]);
  free(list->names);
}

/* symbol, when the object of handle (whose link map is map) defines it. */
static void *own_symbol(void *handle, const struct link_map *map, const char *symbol) {
  void *address = dlsym(handle, symbol);
  Dl_info info;
  struct link_map *definer = NULL;
  if (address == NULL || dladdr1(address, &info, (void **)&definer, RTLD_DL_LINKMAP) == 0 || definer != map)
    return NULL;
  return address;
}

static bool known_object(const struct link_map *map) {
  uint32_t n = atomic_load_explicit(&cpuexec__guard_count, memory_order_acquire);
  for (uint32_t i = 0; i < n; i++)
    if (cpuexec__guard_libs[i].object == map)
      return true;
  return false;
}

/* ---- the families -------------------------------------------------------------- */

/* "0.3.21" -> 0, 3; false when text does not start with two numbers. */
static bool parse_version(const char *text, long *major, long *minor) {
  char *end;
  *major = strtol(text, &end, 10);
  if (end == text || *end != '.')
    return false;
  const char *rest = end + 1;
  *minor = strtol(rest, &end, 10);
  return end != rest;
}

static void copy_text(char *out, size_t size, const char *text) { snprintf(out, size, "%s", text != NULL ? text : ""); }

#define SET_FN(field, handle, map, name) (*(void **)&(field) = own_symbol((handle), (map), (name)))

/* OpenBLAS: the build from openblas_get_parallel() (0 serial, 1 pthreads,
 * 2 OpenMP), the version from openblas_get_config() ("OpenBLAS 0.3.21 ..."). */
static bool probe_openblas(cpuexec__guard_lib *lib, void *handle, const struct link_map *map) {
  static const char *const prefixes[] = {"", "scipy_"};
  static const char *const suffixes[] = {"", "64_"};
  for (size_t p = 0; p < 2; p++)
    for (size_t s = 0; s < 2; s++) {
      char name[96];
      snprintf(name, sizeof name, "%sopenblas_get_parallel%s", prefixes[p], suffixes[s]);
      int (*get_parallel)(void);
      SET_FN(get_parallel, handle, map, name);
      if (get_parallel == NULL)
        continue;
      char *(*get_config)(void);
      snprintf(name, sizeof name, "%sopenblas_get_config%s", prefixes[p], suffixes[s]);
      SET_FN(get_config, handle, map, name);
      snprintf(name, sizeof name, "%sopenblas_set_num_threads%s", prefixes[p], suffixes[s]);
      SET_FN(lib->fn.openblas.set_num_threads, handle, map, name);
      snprintf(name, sizeof name, "%sopenblas_get_num_threads%s", prefixes[p], suffixes[s]);
      SET_FN(lib->fn.openblas.get_num_threads, handle, map, name);
      lib->fn.openblas.cpu_number = p == 0 ? own_symbol(handle, map, "blas_cpu_number") : NULL;
      lib->family = CPUEXEC__GUARD_OPENBLAS;
      const char *config = get_config != NULL ? get_config() : NULL;
      long major = -1, minor = -1;
      if (config != NULL && strncmp(config, "OpenBLAS ", 9) == 0) {
        const char *v = config + 9;
        size_t len = strcspn(v, " ");
        snprintf(lib->version, sizeof lib->version, "%.*s", (int)(len < 31 ? len : 31), v);
        parse_version(lib->version, &major, &minor);
      }
      int parallel = get_parallel();
      copy_text(lib->threading, sizeof lib->threading,
                parallel == 0 ? "serial" : parallel == 1 ? "pthreads" : parallel == 2 ? "openmp" : "");
      if (parallel == 0) {
        lib->mode = CPUEXEC__GUARD_SERIAL;
        copy_text(lib->reason, sizeof lib->reason, "single-threaded build: it starts no thread");
      } else if (parallel == 2) {
        lib->mode = CPUEXEC__GUARD_THROUGH_OPENMP;
        copy_text(lib->reason, sizeof lib->reason,
                  "OpenMP build: kept inline by the OpenMP guard (one thread per participant)");
      } else if (parallel != 1) {
        lib->mode = CPUEXEC__GUARD_NONE;
        snprintf(lib->reason, sizeof lib->reason,
                 "openblas_get_parallel() says %d, a threading the guard does not know", parallel);
      } else if (major != 0 || minor < 2 || minor > 3) {
        lib->mode = CPUEXEC__GUARD_NONE;
        snprintf(lib->reason, sizeof lib->reason,
                 "version \"%s\" is not one the guard knows (0.2, 0.3), whose thread count is "
                 "process-wide",
                 lib->version[0] != '\0' ? lib->version : "?");
      } else if (lib->fn.openblas.set_num_threads == NULL || lib->fn.openblas.get_num_threads == NULL) {
        lib->mode = CPUEXEC__GUARD_NONE;
        copy_text(lib->reason, sizeof lib->reason,
                  "openblas_set_num_threads or openblas_get_num_threads is missing");
      } else if (lib->fn.openblas.cpu_number == NULL && (config == NULL || strstr(config, "NO_AFFINITY") == NULL)) {
        lib->mode = CPUEXEC__GUARD_NONE;
        copy_text(lib->reason, sizeof lib->reason,
                  "a build with affinity (openblas_set_num_threads re-pins the calling thread) "
                  "that does not export blas_cpu_number");
      } else {
        lib->mode = CPUEXEC__GUARD_PROCESS_WIDE;
        lib->hold = CPUEXEC__HOLD_BLAS;
        copy_text(lib->reason, sizeof lib->reason,
                  "pthreads build: its process-wide thread count is 1 while any thread runs callbacks, "
                  "then restored");
      }
      return true;
    }
  return false;
}

/* BLIS: 0.x keeps one runtime for the process (under a mutex); 1.x and 2.x
 * keep it per thread when built with thread-local storage (the default;
 * bli_info_get_enable_tls() says). */
static bool probe_blis(cpuexec__guard_lib *lib, void *handle, const struct link_map *map) {
  const char *(*version)(void);
  SET_FN(version, handle, map, "bli_info_get_version_str");
  if (version == NULL)
    return false;
  lib->family = CPUEXEC__GUARD_BLIS;
  copy_text(lib->version, sizeof lib->version, version());
  int64_t (*threading)(void), (*openmp)(void), (*pthreads)(void), (*tls)(void);
  SET_FN(threading, handle, map, "bli_info_get_enable_threading");
  SET_FN(openmp, handle, map, "bli_info_get_enable_openmp");
  SET_FN(pthreads, handle, map, "bli_info_get_enable_pthreads");
  SET_FN(tls, handle, map, "bli_info_get_enable_tls");
  SET_FN(lib->fn.blis.set_num_threads, handle, map, "bli_thread_set_num_threads");
  SET_FN(lib->fn.blis.set_ways, handle, map, "bli_thread_set_ways");
  SET_FN(lib->fn.blis.get_num_threads, handle, map, "bli_thread_get_num_threads");
  static const char *const ways[5] = {"bli_thread_get_jc_nt", "bli_thread_get_pc_nt", "bli_thread_get_ic_nt",
                                      "bli_thread_get_jr_nt", "bli_thread_get_ir_nt"};
  bool complete = lib->fn.blis.set_num_threads != NULL && lib->fn.blis.set_ways != NULL &&
                  lib->fn.blis.get_num_threads != NULL && threading != NULL;
  for (int w = 0; w < 5; w++) {
    SET_FN(lib->fn.blis.get_ways[w], handle, map, ways[w]);
    complete = complete && lib->fn.blis.get_ways[w] != NULL;
  }
  bool threaded = threading != NULL && threading() != 0;
  bool uses_pthreads = pthreads != NULL && pthreads() != 0, uses_openmp = openmp != NULL && openmp() != 0;
  copy_text(lib->threading, sizeof lib->threading,
            !threaded                      ? "serial"
            : uses_pthreads && uses_openmp ? "openmp+pthreads"
            : uses_pthreads                ? "pthreads"
            : uses_openmp                  ? "openmp"
                                           : "");
  long major = -1, minor = -1;
  bool parsed = parse_version(lib->version, &major, &minor);
  bool thread_local = major >= 1 && tls != NULL && tls() != 0;
  if (threading != NULL && !threaded) {
    lib->mode = CPUEXEC__GUARD_SERIAL;
    copy_text(lib->reason, sizeof lib->reason, "single-threaded build: it starts no thread");
  } else if (!parsed || major < 0 || major > 2 || (major == 0 && minor < 5)) {
    lib->mode = CPUEXEC__GUARD_NONE;
    snprintf(lib->reason, sizeof lib->reason,
             "version \"%s\" is not one the guard knows (0.5 to 2.x)", lib->version);
  } else if (!complete) {
    lib->mode = CPUEXEC__GUARD_NONE;
    copy_text(lib->reason, sizeof lib->reason,
              "a bli_thread_set/get call or bli_info_get_enable_threading is missing");
  } else if (thread_local) {
    lib->mode = CPUEXEC__GUARD_PER_THREAD;
    copy_text(lib->reason, sizeof lib->reason,
              "thread-local runtime: one thread on each participant, restored when it leaves");
  } else if (uses_openmp && !uses_pthreads) {
    lib->mode = CPUEXEC__GUARD_THROUGH_OPENMP;
    copy_text(lib->reason, sizeof lib->reason,
              "OpenMP build: kept inline by the OpenMP guard (its teams get one thread in callbacks)");
  } else {
    lib->mode = CPUEXEC__GUARD_PROCESS_WIDE;
    lib->hold = CPUEXEC__HOLD_BLAS;
    copy_text(lib->reason, sizeof lib->reason,
              "process-wide runtime: 1 thread (every loop's ways 1) while any thread runs callbacks, then "
              "restored");
  }
  return true;
}

/* The cpuexec-tbb module (src/guards/tbb_shim.cc) next to libcpuexec (the
 * build tree's .libs/), under it in libcpuexec/ (an installed libdir), or in
 * the configured pkglibdir. Loaded only when the libtbb.so.12 it would bind
 * to is the one the process has (tbb_map), so it never brings a second
 * oneTBB in; pinned. NULL, with why in *why, when not. */
#ifndef CPUEXEC_PKGLIBDIR
#define CPUEXEC_PKGLIBDIR ""
#endif
static void *load_tbb_module(const struct link_map *tbb_map, const char **why) {
  void *by_soname = dlopen("libtbb.so.12", RTLD_LAZY | RTLD_NOLOAD);
  struct link_map *soname_map = NULL;
  if (by_soname != NULL) {
    dlinfo(by_soname, RTLD_DI_LINKMAP, &soname_map);
    dlclose(by_soname);
  }
  if (soname_map != tbb_map) {
    *why = "the process's oneTBB is not the libtbb.so.12 the module links";
    return NULL;
  }
  size_t chosen_len = 0;
  const char *chosen = cpuexec__env_value("CPUEXEC_TBB_MODULE", &chosen_len);
  if (chosen != NULL && chosen_len == 3 && strncmp(chosen, "off", 3) == 0) {
    *why = "CPUEXEC_TBB_MODULE=off";
    return NULL;
  }
  char dirs[4][512];
  char files[4][600];
  Dl_info self;
  int n = 0;
  if (dladdr((void *)load_tbb_module, &self) != 0 && self.dli_fname != NULL && strchr(self.dli_fname, '/') != NULL) {
    int len = (int)(strrchr(self.dli_fname, '/') - self.dli_fname);
    snprintf(dirs[n++], sizeof dirs[0], "%.*s", len < 480 ? len : 480, self.dli_fname);
    snprintf(dirs[n++], sizeof dirs[0], "%.*s/libcpuexec", len < 480 ? len : 480, self.dli_fname);
  }
  if (CPUEXEC_PKGLIBDIR[0] != '\0')
    snprintf(dirs[n++], sizeof dirs[0], "%.500s", CPUEXEC_PKGLIBDIR);
  *why = "the cpuexec-tbb module is not installed (libcpuexec was built without oneTBB's headers, or is linked "
         "statically)";
  int count = 0;
  if (chosen != NULL && chosen_len > 0 && chosen_len < sizeof files[0])
    snprintf(files[count++], sizeof files[0], "%.*s", (int)chosen_len, chosen);
  for (int i = 0; i < n; i++)
    snprintf(files[count++], sizeof files[0], "%.500s/cpuexec-tbb.so", dirs[i]);
  for (int i = 0; i < count; i++) {
    const char *path = files[i];
    void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (module == NULL)
      continue;
    int (*abi)(void);
    const void *(*bound)(void);
    *(void **)&abi = dlsym(module, "cpuexec_tbb_shim_abi");
    *(void **)&bound = dlsym(module, "cpuexec_tbb_shim_libtbb");
    Dl_info info;
    struct link_map *definer = NULL;
    bool same = abi != NULL && abi() == 1 && bound != NULL &&
                dladdr1(bound(), &info, (void **)&definer, RTLD_DL_LINKMAP) != 0 && definer == tbb_map;
    if (same && dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD | RTLD_NODELETE) != NULL)
      return module;
    dlclose(module);
    *why = "the cpuexec-tbb module found is not bound to the process's oneTBB";
  }
  return NULL;
}

/* oneTBB: with the cpuexec-tbb module, each callback runs in a one-thread
 * task_arena of its own thread (per thread: nothing else changes); without
 * it, max_allowed_parallelism 1 through a global_control of its own while
 * any participant of libcpuexec's executors runs callbacks (process-wide).
 * Either way no TBB worker starts or joins a parallel_for in a callback. */
static bool probe_tbb(cpuexec__guard_lib *lib, void *handle, const struct link_map *map) {
  int (*interface_version)(void);
  const char *(*runtime_version)(void);
  SET_FN(interface_version, handle, map, "TBB_runtime_interface_version");
  SET_FN(lib->fn.tbb.create, handle, map, "_ZN3tbb6detail2r16createERNS0_2d114global_controlE");
  if (interface_version == NULL && lib->fn.tbb.create == NULL)
    return false;
  lib->family = CPUEXEC__GUARD_TBB;
  SET_FN(runtime_version, handle, map, "TBB_runtime_version");
  SET_FN(lib->fn.tbb.destroy, handle, map, "_ZN3tbb6detail2r17destroyERNS0_2d114global_controlE");
  SET_FN(lib->fn.tbb.active_value, handle, map, "_ZN3tbb6detail2r127global_control_active_valueEi");
  copy_text(lib->version, sizeof lib->version, runtime_version != NULL ? runtime_version() : "");
  copy_text(lib->threading, sizeof lib->threading, "tbb");
  int iface = interface_version != NULL ? interface_version() : 0;
  if (lib->fn.tbb.create == NULL || lib->fn.tbb.destroy == NULL || iface / 1000 != 12) {
    lib->mode = CPUEXEC__GUARD_NONE;
    snprintf(lib->reason, sizeof lib->reason,
             "binary interface %d is not oneTBB's 12 (legacy TBB, or a oneTBB the guard does not "
             "know)",
             iface);
    return true;
  }
  const char *why = "";
  void *module = load_tbb_module(map, &why);
  if (module != NULL)
    *(void **)&lib->fn.tbb.call = dlsym(module, "cpuexec_tbb_shim_call");
  if (lib->fn.tbb.call != NULL) {
    lib->mode = CPUEXEC__GUARD_PER_THREAD;
    copy_text(lib->reason, sizeof lib->reason,
              "each callback runs in a one-thread task_arena of its own thread (the cpuexec-tbb module)");
  } else {
    lib->mode = CPUEXEC__GUARD_PROCESS_WIDE;
    lib->hold = CPUEXEC__HOLD_TBB;
    snprintf(lib->reason, sizeof lib->reason,
             "global_control max_allowed_parallelism 1 while any thread runs callbacks of libcpuexec's own "
             "executors (%s)",
             why);
  }
  return true;
}

/* MKL is found and named, never governed. */
static bool probe_mkl(cpuexec__guard_lib *lib, void *handle, const struct link_map *map) {
  void (*version)(char *, int);
  SET_FN(version, handle, map, "mkl_get_version_string");
  if (version == NULL)
    SET_FN(version, handle, map, "MKL_Get_Version_String");
  if (version == NULL)
    return false;
  lib->family = CPUEXEC__GUARD_MKL;
  char text[128] = "";
  version(text, (int)sizeof text);
  /* "Intel(R) oneAPI Math Kernel Library Version 2023.1-Product Build ..." */
  const char *v = strstr(text, "Version ");
  copy_text(lib->version, sizeof lib->version, "");
  if (v != NULL)
    snprintf(lib->version, sizeof lib->version, "%.*s", (int)strcspn(v + 8, " -"), v + 8);
  lib->mode = CPUEXEC__GUARD_NONE;
  copy_text(lib->reason, sizeof lib->reason,
            "libcpuexec has no guard for MKL; register a runtime hook that calls "
            "mkl_set_num_threads_local(1) (<cpuexec/hooks.h>)");
  return true;
}

static bool (*const probes[])(cpuexec__guard_lib *, void *, const struct link_map *) = {
    probe_openblas, probe_blis, probe_tbb, probe_mkl};

/* Publishes slot n (complete) and its masks. Called with scan_lock held. */
static void publish(uint32_t n) {
  const cpuexec__guard_lib *lib = &cpuexec__guard_libs[n];
  uint32_t bit = 1U << n;
  atomic_store_explicit(&cpuexec__guard_count, n + 1, memory_order_release);
  if (lib->mode == CPUEXEC__GUARD_PER_THREAD)
    atomic_fetch_or_explicit(&cpuexec__guard_thread_mask, bit, memory_order_release);
  else if (lib->mode == CPUEXEC__GUARD_PROCESS_WIDE)
    atomic_fetch_or_explicit(&cpuexec__guard_hold_mask[lib->hold], bit, memory_order_release);
  else
    return;
  atomic_fetch_or_explicit(&cpuexec__guard_active, bit, memory_order_release);
}

/* Looks at one object; records it when it is one of the families. */
static void examine(const char *name) {
  void *handle = dlopen(name[0] != '\0' ? name : NULL, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == NULL)
    return;
  struct link_map *map = NULL;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == NULL || known_object(map)) {
    dlclose(handle);
    return;
  }
  uint32_t n = atomic_load_explicit(&cpuexec__guard_count, memory_order_relaxed);
  cpuexec__guard_lib found;
  for (size_t p = 0; p < sizeof probes / sizeof probes[0]; p++) {
    memset(&found, 0, sizeof found);
    if (!probes[p](&found, handle, map))
      continue;
    if (n >= CPUEXEC__GUARD_SLOTS) {
      atomic_store_explicit(&cpuexec__guard_overflow, 1, memory_order_relaxed);
      break;
    }
    found.object = map;
    copy_text(found.path, sizeof found.path, name[0] != '\0' ? name : "(the program)");
    if (found.mode == CPUEXEC__GUARD_PER_THREAD || found.mode == CPUEXEC__GUARD_PROCESS_WIDE) {
      /* Pinned: its functions stay valid for the life of the process. */
      void *pin = dlopen(name[0] != '\0' ? name : NULL, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
      if (pin == NULL) {
        found.mode = CPUEXEC__GUARD_NONE;
        copy_text(found.reason, sizeof found.reason, "it could not be pinned (RTLD_NODELETE)");
      }
    }
    cpuexec__guard_libs[n] = found;
    publish(n);
    break; /* one family per object */
  }
  dlclose(handle);
}

void cpuexec__guards_detect(bool force) {
  if (pthread_mutex_trylock(&scan_lock) != 0)
    return;
  unsigned long long counts[2] = {0, 0};
  dl_iterate_phdr(loader_counts, counts);
  if (force || counts[0] != seen_adds || counts[1] != seen_subs) {
    object_list list = {0};
    dl_iterate_phdr(collect, &list);
    if (!list.failed) {
      seen_adds = counts[0];
      seen_subs = counts[1];
    }
    for (size_t i = 0; i < list.count; i++)
      examine(list.names[i]);
    list_free(&list);
  }
  pthread_mutex_unlock(&scan_lock);
}

__attribute__((constructor)) static void detect_at_load(void) { cpuexec__guards_detect(true); }
