/* Finding OpenBLAS, BLIS, oneTBB and MKL among the loaded objects, at run
 * time, and deciding how each is governed (src/guards/guards_internal.h).
 *
 * libcpuexec links none of them, and asks the dynamic loader through
 * src/os/loader.h only. A scan lists the loaded modules (names only:
 * nothing is opened while the loader's list may be locked), then finds each
 * (a reference to a module already loaded: nothing is mapped) and asks it
 * for one mark symbol per family. The module that defines the mark (the
 * object itself, or one of its dependencies) is the library: one slot per
 * defining module (its base address), and every other function of the
 * family is taken only from that module. A library found this way is
 * pinned when it is governed. A backend that cannot list modules
 * (os_posix.c) has the program's global scope looked at alone.
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
#include "guards_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"
#include "os/loader.h"

cpuexec__guard_lib cpuexec__guard_libs[CPUEXEC__GUARD_SLOTS];
_Atomic uint32_t cpuexec__guard_count;
_Atomic uint32_t cpuexec__guard_thread_mask;
_Atomic uint32_t cpuexec__guard_hold_mask[CPUEXEC__HOLDS];
_Atomic uint32_t cpuexec__guard_active;
_Atomic uint32_t cpuexec__guard_overflow;

/* Taken with trylock only: a thread that finds a scan running skips its own. */
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t seen_changes;
static bool seen_any;

/* ---- the loaded objects ------------------------------------------------------ */

typedef struct object_list {
  char **names; /* "" for the program itself */
  size_t count, capacity;
  bool failed;
} object_list;

static bool collect(const char *name, void *data) {
  object_list *list = data;
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? list->capacity * 2 : 64;
    char **grown = realloc(list->names, capacity * sizeof *grown);
    if (grown == NULL) {
      list->failed = true;
      return false;
    }
    list->names = grown;
    list->capacity = capacity;
  }
  char *copy = strdup(name);
  if (copy == NULL) {
    list->failed = true;
    return false;
  }
  list->names[list->count++] = copy;
  return true;
}

static void list_free(object_list *list) {
  for (size_t i = 0; i < list->count; i++)
    free(list->names[i]);
  free(list->names);
}

static bool known_object(const void *base) {
  uint32_t n = atomic_load_explicit(&cpuexec__guard_count, memory_order_acquire);
  for (uint32_t i = 0; i < n; i++)
    if (cpuexec__guard_libs[i].object == base)
      return true;
  return false;
}

/* One module being looked at: its reference, and the library a family's
 * mark was found in (base NULL until then). */
typedef struct probe {
  void *handle;
  const void *base;
  char path[256];
} probe;

/* A family's mark, as the module finds it: its defining module becomes the
 * probe's library, unless that module already has a slot. */
static void *mark_symbol(probe *p, const char *symbol) {
  void *address = cpuexec__os_module_symbol(p->handle, symbol);
  cpuexec__os_address info;
  if (address == NULL || !cpuexec__os_address_info(address, &info) || info.module_base == NULL ||
      known_object(info.module_base))
    return NULL;
  p->base = info.module_base;
  snprintf(p->path, sizeof p->path, "%s", info.module_path);
  return address;
}

/* symbol, when the probe's library (where the mark was) defines it. */
static void *own_symbol(const probe *p, const char *symbol) {
  void *address = cpuexec__os_module_symbol(p->handle, symbol);
  cpuexec__os_address info;
  if (address == NULL || !cpuexec__os_address_info(address, &info) || info.module_base != p->base)
    return NULL;
  return address;
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

#define SET_FN(field, p, name) (*(void **)&(field) = own_symbol((p), (name)))
#define SET_MARK(field, p, name) (*(void **)&(field) = mark_symbol((p), (name)))

/* OpenBLAS: the build from openblas_get_parallel() (0 serial, 1 pthreads,
 * 2 OpenMP), the version from openblas_get_config() ("OpenBLAS 0.3.21 ..."). */
static bool probe_openblas(cpuexec__guard_lib *lib, probe *p) {
  static const char *const prefixes[] = {"", "scipy_"};
  static const char *const suffixes[] = {"", "64_"};
  for (size_t x = 0; x < 2; x++)
    for (size_t s = 0; s < 2; s++) {
      char name[96];
      snprintf(name, sizeof name, "%sopenblas_get_parallel%s", prefixes[x], suffixes[s]);
      int (*get_parallel)(void);
      SET_MARK(get_parallel, p, name);
      if (get_parallel == NULL)
        continue;
      char *(*get_config)(void);
      snprintf(name, sizeof name, "%sopenblas_get_config%s", prefixes[x], suffixes[s]);
      SET_FN(get_config, p, name);
      snprintf(name, sizeof name, "%sopenblas_set_num_threads%s", prefixes[x], suffixes[s]);
      SET_FN(lib->fn.openblas.set_num_threads, p, name);
      snprintf(name, sizeof name, "%sopenblas_get_num_threads%s", prefixes[x], suffixes[s]);
      SET_FN(lib->fn.openblas.get_num_threads, p, name);
      lib->fn.openblas.cpu_number = x == 0 ? own_symbol(p, "blas_cpu_number") : NULL;
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
static bool probe_blis(cpuexec__guard_lib *lib, probe *p) {
  const char *(*version)(void);
  SET_MARK(version, p, "bli_info_get_version_str");
  if (version == NULL)
    return false;
  lib->family = CPUEXEC__GUARD_BLIS;
  copy_text(lib->version, sizeof lib->version, version());
  int64_t (*threading)(void), (*openmp)(void), (*pthreads)(void), (*tls)(void);
  SET_FN(threading, p, "bli_info_get_enable_threading");
  SET_FN(openmp, p, "bli_info_get_enable_openmp");
  SET_FN(pthreads, p, "bli_info_get_enable_pthreads");
  SET_FN(tls, p, "bli_info_get_enable_tls");
  SET_FN(lib->fn.blis.set_num_threads, p, "bli_thread_set_num_threads");
  SET_FN(lib->fn.blis.set_ways, p, "bli_thread_set_ways");
  SET_FN(lib->fn.blis.get_num_threads, p, "bli_thread_get_num_threads");
  static const char *const ways[5] = {"bli_thread_get_jc_nt", "bli_thread_get_pc_nt", "bli_thread_get_ic_nt",
                                      "bli_thread_get_jr_nt", "bli_thread_get_ir_nt"};
  bool complete = lib->fn.blis.set_num_threads != NULL && lib->fn.blis.set_ways != NULL &&
                  lib->fn.blis.get_num_threads != NULL && threading != NULL;
  for (int w = 0; w < 5; w++) {
    SET_FN(lib->fn.blis.get_ways[w], p, ways[w]);
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
static const char tbb_create_symbol[] = "_ZN3tbb6detail2r16createERNS0_2d114global_controlE";

/* Whether address is in the module whose base is base. */
static bool in_module(const void *address, const void *base) {
  cpuexec__os_address info;
  return address != NULL && cpuexec__os_address_info(address, &info) && info.module_base == base;
}

static void *load_tbb_module(const void *tbb_base, const char **why) {
  void *by_soname = cpuexec__os_module_find("libtbb.so.12");
  bool same_soname = by_soname != NULL && in_module(cpuexec__os_module_symbol(by_soname, tbb_create_symbol), tbb_base);
  cpuexec__os_module_close(by_soname);
  if (!same_soname) {
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
  cpuexec__os_address self;
  int n = 0;
  if (cpuexec__os_address_info((const void *)load_tbb_module, &self) && strchr(self.module_path, '/') != NULL) {
    int len = (int)(strrchr(self.module_path, '/') - self.module_path);
    snprintf(dirs[n++], sizeof dirs[0], "%.*s", len < 480 ? len : 480, self.module_path);
    snprintf(dirs[n++], sizeof dirs[0], "%.*s/libcpuexec", len < 480 ? len : 480, self.module_path);
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
    void *module = cpuexec__os_module_load(path);
    if (module == NULL)
      continue;
    int (*abi)(void);
    const void *(*bound)(void);
    *(void **)&abi = cpuexec__os_module_symbol(module, "cpuexec_tbb_shim_abi");
    *(void **)&bound = cpuexec__os_module_symbol(module, "cpuexec_tbb_shim_libtbb");
    bool same = abi != NULL && abi() == 1 && bound != NULL && in_module(bound(), tbb_base);
    if (same && cpuexec__os_module_loaded(path) != NULL) /* pinned */
      return module;
    cpuexec__os_module_close(module);
    *why = "the cpuexec-tbb module found is not bound to the process's oneTBB";
  }
  return NULL;
}

/* oneTBB: with the cpuexec-tbb module, each participant's callbacks run in a one-thread
 * task_arena of its own thread (per thread: nothing else changes); without
 * it, max_allowed_parallelism 1 through a global_control of its own while
 * any participant of libcpuexec's executors runs callbacks (process-wide).
 * Either way no TBB worker starts or joins a parallel_for in a callback. */
static bool probe_tbb(cpuexec__guard_lib *lib, probe *p) {
  int (*interface_version)(void);
  const char *(*runtime_version)(void);
  SET_MARK(interface_version, p, "TBB_runtime_interface_version");
  if (interface_version == NULL)
    SET_MARK(lib->fn.tbb.create, p, tbb_create_symbol);
  else
    SET_FN(lib->fn.tbb.create, p, tbb_create_symbol);
  if (interface_version == NULL && lib->fn.tbb.create == NULL)
    return false;
  lib->family = CPUEXEC__GUARD_TBB;
  SET_FN(runtime_version, p, "TBB_runtime_version");
  SET_FN(lib->fn.tbb.destroy, p, "_ZN3tbb6detail2r17destroyERNS0_2d114global_controlE");
  SET_FN(lib->fn.tbb.active_value, p, "_ZN3tbb6detail2r127global_control_active_valueEi");
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
  void *module = load_tbb_module(p->base, &why);
  if (module != NULL)
    *(void **)&lib->fn.tbb.call = cpuexec__os_module_symbol(module, "cpuexec_tbb_shim_call");
  if (lib->fn.tbb.call != NULL) {
    lib->mode = CPUEXEC__GUARD_PER_THREAD;
    copy_text(lib->reason, sizeof lib->reason,
              "each participant's callbacks and each task run in a one-thread task_arena of its own thread "
              "(the cpuexec-tbb module)");
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
static bool probe_mkl(cpuexec__guard_lib *lib, probe *p) {
  void (*version)(char *, int);
  SET_MARK(version, p, "mkl_get_version_string");
  if (version == NULL)
    SET_MARK(version, p, "MKL_Get_Version_String");
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

static bool (*const probes[])(cpuexec__guard_lib *, probe *) = {
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

/* Looks at one module; records each library of the families it finds
 * there (itself, or a dependency it resolves a family's mark to) that has
 * no slot yet. */
static void examine(const char *name) {
  probe p = {cpuexec__os_module_find(name[0] != '\0' ? name : NULL), NULL, ""};
  if (p.handle == NULL)
    return;
  cpuexec__guard_lib found;
  for (size_t f = 0; f < sizeof probes / sizeof probes[0]; f++) {
    memset(&found, 0, sizeof found);
    p.base = NULL;
    if (!probes[f](&found, &p))
      continue;
    uint32_t n = atomic_load_explicit(&cpuexec__guard_count, memory_order_relaxed);
    if (n >= CPUEXEC__GUARD_SLOTS) {
      atomic_store_explicit(&cpuexec__guard_overflow, 1, memory_order_relaxed);
      break;
    }
    found.object = p.base;
    bool own = p.path[0] != '\0';
    copy_text(found.path, sizeof found.path, own ? p.path : name[0] != '\0' ? name : "(the program)");
    if (found.mode == CPUEXEC__GUARD_PER_THREAD || found.mode == CPUEXEC__GUARD_PROCESS_WIDE) {
      /* Pinned: its functions stay valid for the life of the process. By
       * the library's own path, else by the module it was found through
       * (which keeps its dependencies loaded); the program needs no pin. */
      bool pinned = (own && cpuexec__os_module_loaded(p.path) != NULL) || name[0] == '\0' ||
                    cpuexec__os_module_loaded(name) != NULL;
      if (!pinned) {
        found.mode = CPUEXEC__GUARD_NONE;
        copy_text(found.reason, sizeof found.reason, "it could not be pinned (kept loaded)");
      }
    }
    cpuexec__guard_libs[n] = found;
    publish(n);
  }
  cpuexec__os_module_close(p.handle);
}

/* Every loaded module, when the loader's change count moved (or there is
 * none); the program's global scope alone where the backend cannot list
 * the modules. */
static void scan(bool force) {
  uint64_t changes = 0;
  bool counted = cpuexec__os_loader_changes(&changes);
  if (!force && counted && seen_any && changes == seen_changes)
    return;
  object_list list = {0};
  if (!cpuexec__os_modules_each(collect, &list)) {
    list_free(&list);
    examine("");
    return;
  }
  if (!list.failed) {
    seen_changes = changes;
    seen_any = counted;
  }
  for (size_t i = 0; i < list.count; i++)
    examine(list.names[i]);
  list_free(&list);
}

void cpuexec__guards_detect(bool force) {
  if (pthread_mutex_trylock(&scan_lock) != 0)
    return;
  scan(force);
  pthread_mutex_unlock(&scan_lock);
}

__attribute__((constructor)) static void detect_at_load(void) { cpuexec__guards_detect(true); }
