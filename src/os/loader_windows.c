/* The dynamic loader on Windows (see loader.h): the loaded modules.
 *   loaded:  GetModuleHandleEx with GET_MODULE_HANDLE_EX_FLAG_PIN (the
 *            module stays loaded until the process ends; never loads one);
 *   find:    GetModuleHandleEx counting a reference (FreeLibrary drops it);
 *   symbol:  GetProcAddress, the module's own exports;
 *   global:  the loaded modules in load order (EnumProcessModules, the
 *            program first), the first that exports the name;
 *   list:    EnumProcessModules (the program first), each by its path;
 *   next:    none: Windows binds each import to one named DLL, there is no
 *            search order to continue (so an OMPT tool chains through
 *            OMP_TOOL_LIBRARIES only);
 *   address: GetModuleHandleEx(FROM_ADDRESS), GetModuleFileName, and the
 *            nearest exported function at or below the address, read from
 *            the module's export directory (as dladdr knows only dynamic
 *            symbols, this knows only exported ones). */
#define WIN32_LEAN_AND_MEAN
#include "loader.h"

#include <windows.h>
#include <psapi.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

void *cpuexec__os_module_loaded(const char *name) {
  HMODULE module = NULL;
  if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_PIN, name, &module)) return NULL;
  return module;
}

/* Without GET_MODULE_HANDLE_EX_FLAG_PIN or _UNCHANGED_REFCOUNT: a counted
 * reference, which cpuexec__os_module_close (FreeLibrary) drops. A NULL
 * name is the program's module. */
void *cpuexec__os_module_find(const char *name) {
  HMODULE module = NULL;
  if (!GetModuleHandleExA(0, name, &module)) return NULL;
  return module;
}

void *cpuexec__os_module_load(const char *path) { return LoadLibraryA(path); }

void cpuexec__os_module_close(void *module) {
  if (module != NULL) FreeLibrary((HMODULE)module); /* a pinned module stays */
}

static void *proc_address(HMODULE module, const char *symbol) {
  FARPROC f = GetProcAddress(module, symbol);
  return (void *)(uintptr_t)f;
}

void *cpuexec__os_module_symbol(void *module, const char *symbol) {
  return module != NULL ? proc_address((HMODULE)module, symbol) : cpuexec__os_global_symbol(symbol);
}

void *cpuexec__os_global_symbol(const char *symbol) {
  HMODULE modules[512];
  DWORD needed = 0;
  if (!EnumProcessModules(GetCurrentProcess(), modules, sizeof modules, &needed)) return NULL;
  DWORD count = needed / sizeof *modules;
  if (count > sizeof modules / sizeof *modules) count = sizeof modules / sizeof *modules;
  for (DWORD i = 0; i < count; i++) {
    void *address = proc_address(modules[i], symbol);
    if (address != NULL) return address;
  }
  return NULL;
}

bool cpuexec__os_modules_each(bool (*each)(const char *name, void *data), void *data) {
  HMODULE modules[512];
  DWORD needed = 0;
  if (!EnumProcessModules(GetCurrentProcess(), modules, sizeof modules, &needed)) return false;
  DWORD count = needed / sizeof *modules;
  if (count > sizeof modules / sizeof *modules) count = sizeof modules / sizeof *modules;
  for (DWORD i = 0; i < count; i++) {
    char path[MAX_PATH];
    DWORD n = GetModuleFileNameA(modules[i], path, (DWORD)sizeof path);
    if (n == 0 || n >= sizeof path) continue; /* a path too long to name it by */
    path[n] = '\0';
    /* The program is "" here as on every system. */
    if (!each(i == 0 ? "" : path, data)) break;
  }
  return true;
}

void *cpuexec__os_next_symbol(const char *symbol) {
  (void)symbol;
  return NULL;
}

/* The exported function of module nearest at or below address: its name
 * (in the module's image, valid while it is loaded) and start. */
static const char *nearest_export(HMODULE module, const void *address, const void **start) {
  const unsigned char *base = (const unsigned char *)module;
  const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)base;
  if (dos->e_magic != IMAGE_DOS_SIGNATURE) return NULL;
  const IMAGE_NT_HEADERS *nt = (const IMAGE_NT_HEADERS *)(base + dos->e_lfanew);
  if (nt->Signature != IMAGE_NT_SIGNATURE) return NULL;
  const IMAGE_DATA_DIRECTORY *dir = &nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_EXPORT];
  if (dir->VirtualAddress == 0 || dir->Size == 0) return NULL;
  const IMAGE_EXPORT_DIRECTORY *exports = (const IMAGE_EXPORT_DIRECTORY *)(base + dir->VirtualAddress);
  const DWORD *functions = (const DWORD *)(base + exports->AddressOfFunctions);
  const DWORD *names = (const DWORD *)(base + exports->AddressOfNames);
  const WORD *ordinals = (const WORD *)(base + exports->AddressOfNameOrdinals);
  uintptr_t target = (uintptr_t)address, best = 0;
  const char *best_name = NULL;
  for (DWORD i = 0; i < exports->NumberOfNames; i++) {
    WORD ordinal = ordinals[i];
    if (ordinal >= exports->NumberOfFunctions) continue;
    DWORD rva = functions[ordinal];
    if (rva >= dir->VirtualAddress && rva < dir->VirtualAddress + dir->Size) continue; /* a forwarder */
    uintptr_t at = (uintptr_t)(base + rva);
    if (at <= target && at >= best) {
      best = at;
      best_name = (const char *)(base + names[i]);
    }
  }
  if (best_name != NULL) *start = (const void *)best;
  return best_name;
}

bool cpuexec__os_address_info(const void *address, cpuexec__os_address *out) {
  out->module_base = NULL;
  out->module_path = "";
  out->symbol = NULL;
  out->symbol_address = NULL;
  out->storage[0] = '\0';
  HMODULE module = NULL;
  if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          (LPCSTR)address, &module))
    return false;
  out->module_base = module;
  DWORD n = GetModuleFileNameA(module, out->storage, (DWORD)sizeof out->storage);
  if (n >= sizeof out->storage) n = sizeof out->storage - 1;
  out->storage[n] = '\0';
  out->module_path = out->storage;
  const void *start = NULL;
  const char *name = nearest_export(module, address, &start);
  if (name != NULL) {
    out->symbol = name;
    out->symbol_address = start;
  }
  return true;
}
