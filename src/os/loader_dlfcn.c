/* The dynamic loader on Unix (see loader.h): dlfcn. dlopen, dlsym and
 * dlclose are POSIX; RTLD_NOLOAD, RTLD_NODELETE, RTLD_DEFAULT, RTLD_NEXT
 * and dladdr are not, but glibc, musl, macOS, FreeBSD, NetBSD, OpenBSD and
 * Solaris all have them, behind their own feature macros, which this file
 * (and only this file) asks for. The module list is dl_iterate_phdr
 * (<link.h>), which all of those but macOS have. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* glibc, musl: dladdr, RTLD_DEFAULT, RTLD_NEXT */
#endif
#ifndef _DARWIN_C_SOURCE
#define _DARWIN_C_SOURCE 1 /* macOS: the same, when _POSIX_C_SOURCE is set */
#endif
#ifndef __BSD_VISIBLE
#define __BSD_VISIBLE 1 /* FreeBSD: the same */
#endif
#include "loader.h"

#include <dlfcn.h>
#include <stddef.h>

#if defined(__linux__) || defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__) || \
    defined(__DragonFly__) || defined(__sun)
#define LOADER_HAS_DL_ITERATE_PHDR 1
#include <link.h>
#endif

void *cpuexec__os_module_loaded(const char *name) { return dlopen(name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE); }

void *cpuexec__os_module_find(const char *name) { return dlopen(name, RTLD_LAZY | RTLD_NOLOAD); }

void *cpuexec__os_module_load(const char *path) { return dlopen(path, RTLD_LAZY); }

void cpuexec__os_module_close(void *module) {
  if (module != NULL) dlclose(module);
}

void *cpuexec__os_module_symbol(void *module, const char *symbol) { return dlsym(module, symbol); }

void *cpuexec__os_global_symbol(const char *symbol) { return dlsym(RTLD_DEFAULT, symbol); }

/* RTLD_NEXT searches after the object that makes the call: this file is in
 * libcpuexec (or the program it is linked into), as the callers are. */
void *cpuexec__os_next_symbol(const char *symbol) { return dlsym(RTLD_NEXT, symbol); }

bool cpuexec__os_address_info(const void *address, cpuexec__os_address *out) {
  Dl_info info;
  out->module_base = NULL;
  out->module_path = "";
  out->symbol = NULL;
  out->symbol_address = NULL;
  out->storage[0] = '\0';
  if (dladdr(address, &info) == 0) return false;
  out->module_base = info.dli_fbase;
  out->module_path = info.dli_fname != NULL ? info.dli_fname : "";
  if (info.dli_sname != NULL) {
    out->symbol = info.dli_sname;
    out->symbol_address = info.dli_saddr;
  }
  return true;
}

#if LOADER_HAS_DL_ITERATE_PHDR
typedef struct module_walk {
  bool (*each)(const char *name, void *data);
  void *data;
  bool first;
} module_walk;

static int each_module(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  module_walk *walk = data;
  const char *name = info->dlpi_name != NULL ? info->dlpi_name : "";
  bool first = walk->first;
  walk->first = false;
  /* The program is the first entry, named ""; a later empty name (the vDSO
   * on some systems) cannot be found by name. */
  if (name[0] == '\0' && !first) return 0;
  return walk->each(name, walk->data) ? 0 : 1;
}

bool cpuexec__os_modules_each(bool (*each)(const char *name, void *data), void *data) {
  module_walk walk = {each, data, true};
  dl_iterate_phdr(each_module, &walk);
  return true;
}
#else
bool cpuexec__os_modules_each(bool (*each)(const char *name, void *data), void *data) {
  (void)each;
  (void)data;
  return false; /* macOS: _dyld_image_count and _dyld_get_image_name would list them */
}
#endif
