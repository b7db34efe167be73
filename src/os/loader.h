/* Internal: the dynamic loader, as the modules above ask it: is a module
 * loaded, which module defines a symbol, which module an address is in.
 *
 * Two implementations, one per kind of system:
 *   loader_dlfcn.c    dlopen(RTLD_NOLOAD | RTLD_NODELETE), dlsym with
 *                     RTLD_DEFAULT and RTLD_NEXT, dladdr: the dlfcn
 *                     extensions every Unix libcpuexec targets has (glibc,
 *                     musl, macOS, FreeBSD, NetBSD, OpenBSD, Solaris), in
 *                     the one file that asks for them (the portability
 *                     check, tests/check-posix-portability.sh, allows
 *                     them there only);
 *   loader_windows.c  GetModuleHandleEx (pinned), GetProcAddress over the
 *                     loaded modules (EnumProcessModules), LoadLibrary.
 * The cheap change count (cpuexec__os_loader_changes) is the OS backend's:
 * dl_iterate_phdr's load and unload counts in os_linux.c, a DLL
 * notification in os_windows.c, none in os_posix.c. The list of the loaded
 * modules (cpuexec__os_modules_each) is the loader file's: dl_iterate_phdr
 * in loader_dlfcn.c where the system has it (glibc, musl, the BSDs,
 * Solaris; not macOS), EnumProcessModules in loader_windows.c. */
#ifndef CPUEXEC_SRC_OS_LOADER_H
#define CPUEXEC_SRC_OS_LOADER_H

#include <stdbool.h>
#include <stdint.h>

/* A module the process has already loaded, by file name ("libgomp.so.1",
 * "libgomp-1.dll"), pinned so that it stays loaded for the life of the
 * process (its function pointers may be kept). NULL when it is not loaded;
 * never loads anything. */
void *cpuexec__os_module_loaded(const char *name);

/* A module the process has already loaded, by file name or path (NULL: the
 * program itself), as a reference that cpuexec__os_module_close drops;
 * neither loads nor pins anything (the module may be unloaded after the
 * close). NULL when it is not loaded. A symbol looked up in the program's
 * reference (Unix) is found in the global scope, as
 * cpuexec__os_global_symbol would; on Windows in the program's exports. */
void *cpuexec__os_module_find(const char *name);

/* Loads a module by path; NULL on failure. */
void *cpuexec__os_module_load(const char *path);

/* Drops a reference cpuexec__os_module_loaded or _load returned (a pinned
 * module stays loaded). */
void cpuexec__os_module_close(void *module);

/* symbol as looked up in module (Unix: dlsym, which may find it in one of
 * the module's dependencies; Windows: the module's own exports). NULL when
 * there is none. */
void *cpuexec__os_module_symbol(void *module, const char *symbol);

/* The definition of symbol that the global search order finds first (Unix:
 * dlsym(RTLD_DEFAULT); Windows: the loaded modules in load order). */
void *cpuexec__os_global_symbol(const char *symbol);

/* The next definition of symbol after libcpuexec's own in the search order
 * (dlsym(RTLD_NEXT)); NULL where the system has no such order (Windows). */
void *cpuexec__os_next_symbol(const char *symbol);

/* What is known of an address: the module it is in and, where the system
 * says, the nearest symbol at or below it. */
typedef struct cpuexec__os_address {
  const void *module_base;    /* NULL: unknown */
  const char *module_path;    /* "" when unknown */
  const char *symbol;         /* NULL: unknown (Windows: never known) */
  const void *symbol_address; /* the symbol's start, NULL with symbol */
  char storage[512];          /* where a backend keeps what it copied */
} cpuexec__os_address;

/* False when the address is in no module the loader knows. Two addresses
 * are in one module when their module_base is the same. */
bool cpuexec__os_address_info(const void *address, cpuexec__os_address *out);

/* Calls each with the name of every module loaded now, in load order, the
 * program first as "" (Linux: dl_iterate_phdr's names; Windows: the
 * modules' paths), until each returns false. each runs with the loader's
 * list locked on some systems: it may copy the name, never call the loader.
 * False when the system cannot list them (loader_dlfcn.c without
 * dl_iterate_phdr): callers then look in the program's global scope alone
 * (cpuexec__os_module_find(NULL)). */
bool cpuexec__os_modules_each(bool (*each)(const char *name, void *data), void *data);

/* A number that changes whenever a module is loaded or unloaded, cheap
 * enough to read on a hot path's slow branch (Linux: one dl_iterate_phdr
 * step, ~25 ns). False when the backend has no such count: callers then
 * look again every time they would have compared. */
bool cpuexec__os_loader_changes(uint64_t *count);

#endif
