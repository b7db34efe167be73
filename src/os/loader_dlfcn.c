/* The dynamic loader on Unix (see loader.h): dlfcn. dlopen, dlsym and
 * dlclose are POSIX; RTLD_NOLOAD, RTLD_NODELETE, RTLD_DEFAULT, RTLD_NEXT
 * and dladdr are not, but glibc, musl, macOS, FreeBSD, NetBSD, OpenBSD and
 * Solaris all have them, behind their own feature macros, which this file
 * (and only this file) asks for. */
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

void *cpuexec__os_module_loaded(const char *name) { return dlopen(name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE); }

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
