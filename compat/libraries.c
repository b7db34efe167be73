/* Which of the threaded libraries with a libcpuexec adapter the process has
 * loaded, and whether each runs on libcpuexec (cpuexec/compat/libraries.h).
 * A library is looked up by one of its symbols in the process's global scope
 * (the OS layer's loader: the global search order, and the module an address
 * is in), which never calls into it; only
 * OpenCV is asked its framework's name, and never at exit, where its static
 * objects may already be gone. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter_private.h"
#include "libraries_private.h"
#include <cpuexec/compat/libraries.h>

atomic_uint_fast64_t cpuexec__fftw_loops;
static atomic_uint_fast64_t opencv_backends;
static atomic_uint_fast64_t eigen_pools;
static atomic_bool at_exit; /* the exit-time report: do not call into other libraries */

CPUEXEC_EXPORT void cpuexec_library_adapter_made(const char *library) {
  if (library == NULL) return;
  if (strcmp(library, "opencv") == 0) atomic_fetch_add_explicit(&opencv_backends, 1, memory_order_relaxed);
  if (strcmp(library, "eigen") == 0) atomic_fetch_add_explicit(&eigen_pools, 1, memory_order_relaxed);
}

CPUEXEC_EXPORT bool cpuexec_library_call_inline(void) { return cpuexec__compat_nested(); }

/* The file name of the module symbol is in, without its folder; the name
 * is copied to out (the loader's answer lives in its own storage). */
static const char *object_of(void *symbol, char *out, size_t size) {
  cpuexec__os_address info;
  if (symbol == NULL || !cpuexec__os_address_info(symbol, &info) || info.module_path[0] == '\0') return "?";
  const char *name = info.module_path;
  for (const char *p = info.module_path; *p != '\0'; p++)
    if (*p == '/' || *p == '\\') name = p + 1;
  snprintf(out, size, "%s", name);
  return out;
}

static void fill_fftw(cpuexec_library_status *s) {
  char object[256];
  void *core = cpuexec__os_global_symbol("fftw_execute");
  if (core == NULL) core = cpuexec__os_global_symbol("fftwf_execute");
  void *threads = cpuexec__os_global_symbol("fftw_threads_set_callback");
  if (threads == NULL) threads = cpuexec__os_global_symbol("fftwf_threads_set_callback");
  s->uses = atomic_load_explicit(&cpuexec__fftw_loops, memory_order_relaxed);
  s->loaded = core != NULL || s->uses > 0;
  s->on_libcpuexec = s->uses > 0;
  if (!s->loaded)
    snprintf(s->detail, sizeof s->detail, "not loaded");
  else if (s->on_libcpuexec)
    snprintf(s->detail, sizeof s->detail, "cpuexec_fftw_parallel_loop ran %llu of its loops",
             (unsigned long long)s->uses);
  else if (threads != NULL)
    snprintf(s->detail, sizeof s->detail,
             "%s: no loop ran on libcpuexec (fftw_threads_set_callback(cpuexec_fftw_parallel_loop, ...) not set, "
             "or no plan of 2 or more threads ran)", object_of(threads, object, sizeof object));
  else
    snprintf(s->detail, sizeof s->detail, "%s without its threads library: runs serially", object_of(core, object, sizeof object));
}

static void fill_opencv(cpuexec_library_status *s) {
  char object[256];
  /* cv::currentParallelFramework(): the backend's name once one is set. */
  void *name_fn = cpuexec__os_global_symbol("_ZN2cv24currentParallelFrameworkEv");
  s->uses = atomic_load_explicit(&opencv_backends, memory_order_relaxed);
  s->loaded = name_fn != NULL || s->uses > 0;
  const char *framework = NULL;
  if (name_fn != NULL && !atomic_load(&at_exit)) {
    const char *(*current)(void);
    memcpy(&current, &name_fn, sizeof current);
    framework = current();
  }
  if (framework != NULL)
    s->on_libcpuexec = strcmp(framework, "cpuexec") == 0;
  else
    s->on_libcpuexec = s->uses > 0;
  if (!s->loaded)
    snprintf(s->detail, sizeof s->detail, "not loaded");
  else if (framework != NULL)
    snprintf(s->detail, sizeof s->detail, "%s: parallel framework \"%s\"%s", object_of(name_fn, object, sizeof object), framework,
             s->on_libcpuexec ? "" : " (install cpuexec::opencv's backend)");
  else
    snprintf(s->detail, sizeof s->detail, "%llu backend(s) of cpuexec/opencv.hpp made", (unsigned long long)s->uses);
}

/* Eigen is header-only: nothing of it is in the process to look up, only the
 * adapters cpuexec/eigen.hpp made. */
static void fill_eigen(cpuexec_library_status *s) {
  s->uses = atomic_load_explicit(&eigen_pools, memory_order_relaxed);
  s->loaded = s->uses > 0;
  s->on_libcpuexec = s->uses > 0;
  if (s->loaded)
    snprintf(s->detail, sizeof s->detail, "%llu thread pool(s) of cpuexec/eigen.hpp made", (unsigned long long)s->uses);
  else
    snprintf(s->detail, sizeof s->detail,
             "none of cpuexec/eigen.hpp made (header-only: Eigen's own NonBlockingThreadPool cannot be seen)");
}

static void fill_pthreadpool(cpuexec_library_status *s) {
  void *create = cpuexec__os_global_symbol("pthreadpool_create");
  char object_buf[256];
  const char *object = object_of(create, object_buf, sizeof object_buf);
  s->uses = 0;
  s->loaded = create != NULL;
  s->on_libcpuexec = create != NULL && strncmp(object, "libcpuexec-pthreadpool", 22) == 0;
  if (!s->loaded)
    snprintf(s->detail, sizeof s->detail, "not loaded");
  else
    snprintf(s->detail, sizeof s->detail, "pthreadpool_create from %s%s", object,
             s->on_libcpuexec ? "" : " (its own threads; link libcpuexec-pthreadpool instead)");
}

static void (*const fillers[])(cpuexec_library_status *) = {fill_fftw, fill_opencv, fill_eigen, fill_pthreadpool};
static const char *const names[] = {"fftw", "opencv", "eigen", "pthreadpool"};
#define LIBRARIES (sizeof names / sizeof names[0])

CPUEXEC_EXPORT int cpuexec_libraries_status(cpuexec_library_status *entries, size_t capacity, size_t *count) {
  if (count == NULL) return cpuexec__fail(CPUEXEC_EINVAL, "count: NULL; pass where to store the number of libraries");
  if (entries == NULL && capacity > 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "entries: NULL with capacity %zu; pass an array or capacity 0", capacity);
  *count = LIBRARIES;
  for (size_t i = 0; i < LIBRARIES && i < capacity; i++) {
    memset(&entries[i], 0, sizeof entries[i]);
    entries[i].name = names[i];
    fillers[i](&entries[i]);
  }
  return 0;
}

CPUEXEC_EXPORT int cpuexec_libraries_describe(char *buf, size_t size) {
  if (buf == NULL && size > 0) return cpuexec__fail(CPUEXEC_EINVAL, "buf: NULL with size %zu", size);
  cpuexec_library_status s[LIBRARIES];
  size_t n = 0;
  (void)cpuexec_libraries_status(s, LIBRARIES, &n);
  size_t len = 0;
  char line[320];
  for (size_t i = 0; i < n; i++) {
    int w = snprintf(line, sizeof line, "%-12s %-10s %-16s %s\n", s[i].name, s[i].loaded ? "loaded" : "-",
                     s[i].loaded ? (s[i].on_libcpuexec ? "on libcpuexec" : "own threads") : "-", s[i].detail);
    if (w < 0) continue;
    if (len < size) snprintf(buf + len, size - len, "%s", line);
    len += (size_t)w;
  }
  return (int)len;
}

/* CPUEXEC_LIBRARIES_REPORT=FILE (or "-" for stderr): the status when the
 * process exits (cpuexec-info --libraries-report sets it). */
static void write_report_at_exit(void) {
  char *path = cpuexec__env_copy("CPUEXEC_LIBRARIES_REPORT", NULL);
  if (path == NULL) return;
  atomic_store(&at_exit, true);
  int length = cpuexec_libraries_describe(NULL, 0);
  char *text = length > 0 ? malloc((size_t)length + 1) : NULL;
  if (text != NULL) {
    cpuexec_libraries_describe(text, (size_t)length + 1);
    FILE *out = strcmp(path, "-") == 0 ? stderr : fopen(path, "w");
    if (out != NULL) {
      fputs(text, out);
      if (out != stderr) fclose(out);
    }
  }
  free(text);
  free(path);
}

__attribute__((constructor)) static void report_at_exit_if_asked(void) {
  if (cpuexec__env_raw("CPUEXEC_LIBRARIES_REPORT") != NULL) atexit(write_report_at_exit);
}
