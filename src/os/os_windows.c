/* The Windows OS backend (see os.h), for the mingw-w64 toolchain.
 *
 * Threads stay on winpthreads (the toolchain's pthreads): the library's
 * threads, mutexes and condition variables are the same code on every
 * platform, and pthread_gethandle() gives the Win32 HANDLE this file
 * needs for affinity and names. What the OS layer does natively:
 *   - waits: WaitOnAddress / WakeByAddressAll on the 32-bit word (Windows 8
 *     and later, the synchronization API set: -lsynchronization);
 *   - processors: Windows numbers them per processor group (at most 64 in
 *     a group). The library's processor id is hwloc's: group * 64 + number
 *     in the group, so ids above 63 name later groups (a machine with more
 *     than 64 logical processors). Pinning is SetThreadGroupAffinity with
 *     the group and a one-bit mask, the current processor
 *     GetCurrentProcessorNumberEx, a thread's processors
 *     GetThreadGroupAffinity (one group: a thread runs in one group at a
 *     time), the process's GetProcessGroupAffinity with the active
 *     processors of each group (GetLogicalProcessorInformationEx) or, in a
 *     single group, GetProcessAffinityMask;
 *   - thread names: SetThreadDescription, looked up at run time (Windows 10
 *     1607 and later; wine 5 and later); nothing where it is missing;
 *   - the clock: QueryPerformanceCounter;
 *   - no cgroup (NULL paths), no timer slack, no fork (fork.h);
 *   - the loader's change count: a DLL load/unload notification
 *     (LdrRegisterDllNotification, looked up in ntdll), counting events. */
#define WIN32_LEAN_AND_MEAN
#include "os.h"
#include "loader.h"

#include <windows.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *cpuexec__os_backend(void) { return "windows"; }

bool cpuexec__os_has_processor_groups(void) { return true; }

bool cpuexec__os_has_affinity(void) { return true; }

static HANDLE handle_of(pthread_t thread) { return (HANDLE)pthread_gethandle(thread); }

/* ---- processor groups ---------------------------------------------------- */

#define GROUPS_MAX (CPUEXEC__OS_CPUS_MAX / 64)

/* The active processors of each group, read once (processors are not
 * hot-added under a running process in any case libcpuexec supports). */
static INIT_ONCE groups_once = INIT_ONCE_STATIC_INIT;
static KAFFINITY group_active[GROUPS_MAX];
static WORD group_count;

static BOOL CALLBACK read_groups(PINIT_ONCE once, PVOID parameter, PVOID *context) {
  (void)once;
  (void)parameter;
  (void)context;
  DWORD length = 0;
  GetLogicalProcessorInformationEx(RelationGroup, NULL, &length);
  SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *info = length ? malloc(length) : NULL;
  if (info != NULL && GetLogicalProcessorInformationEx(RelationGroup, info, &length) &&
      info->Relationship == RelationGroup) {
    WORD n = info->Group.ActiveGroupCount;
    for (WORD g = 0; g < n && g < GROUPS_MAX; g++) group_active[g] = info->Group.GroupInfo[g].ActiveProcessorMask;
    group_count = n < GROUPS_MAX ? n : GROUPS_MAX;
  } else {
    DWORD_PTR process = 0, system = 0;
    GetProcessAffinityMask(GetCurrentProcess(), &process, &system);
    group_active[0] = (KAFFINITY)system;
    group_count = 1;
  }
  free(info);
  return TRUE;
}

static void groups(void) { InitOnceExecuteOnce(&groups_once, read_groups, NULL, NULL); }

static void add_mask(cpuexec__os_cpus *set, WORD group, KAFFINITY mask) {
  for (int32_t bit = 0; bit < 64; bit++)
    if (mask >> bit & 1u) cpuexec__os_cpus_add(set, (int32_t)group * 64 + bit);
}

static int from_win32_error(DWORD error) {
  switch (error) {
    case ERROR_INVALID_PARAMETER: return EINVAL; /* no such processor, or a group without it */
    case ERROR_ACCESS_DENIED: return EPERM;
    default: return EINVAL;
  }
}

static int pin(HANDLE thread, int32_t cpu) {
  if (cpu < 0 || cpu >= CPUEXEC__OS_CPUS_MAX) return EINVAL;
  GROUP_AFFINITY affinity;
  memset(&affinity, 0, sizeof affinity);
  affinity.Group = cpuexec__os_group_of(cpu);
  affinity.Mask = (KAFFINITY)1 << cpuexec__os_number_in_group(cpu);
  if (!SetThreadGroupAffinity(thread, &affinity, NULL)) return from_win32_error(GetLastError());
  return 0;
}

int cpuexec__os_pin_thread(pthread_t thread, int32_t cpu) { return pin(handle_of(thread), cpu); }

int cpuexec__os_pin_self(int32_t cpu) { return pin(GetCurrentThread(), cpu); }

bool cpuexec__os_thread_cpus(pthread_t thread, cpuexec__os_cpus *set) {
  GROUP_AFFINITY affinity;
  if (!GetThreadGroupAffinity(handle_of(thread), &affinity)) return false;
  cpuexec__os_cpus_zero(set);
  add_mask(set, affinity.Group, affinity.Mask);
  return true;
}

int32_t cpuexec__os_affinity_self(int32_t *ids, int32_t max) {
  GROUP_AFFINITY affinity;
  if (!GetThreadGroupAffinity(GetCurrentThread(), &affinity)) return -1;
  int32_t n = 0;
  for (int32_t bit = 0; bit < 64; bit++)
    if (affinity.Mask >> bit & 1u) {
      if (n < max) ids[n] = (int32_t)affinity.Group * 64 + bit;
      n++;
    }
  return n;
}

bool cpuexec__os_process_cpus(cpuexec__os_cpus *set) {
  groups();
  cpuexec__os_cpus_zero(set);
  USHORT list[GROUPS_MAX], count = GROUPS_MAX;
  if (!GetProcessGroupAffinity(GetCurrentProcess(), &count, list)) {
    /* Not answered (wine 8 does not implement it): the process is in group
     * 0, as every process is on a machine of one group. */
    list[0] = 0;
    count = 1;
  }
  if (count == 1) {
    /* One group: the process mask, which SetProcessAffinityMask (and
     * `start /affinity`) restricts. */
    DWORD_PTR process = 0, system = 0;
    if (!GetProcessAffinityMask(GetCurrentProcess(), &process, &system)) return false;
    add_mask(set, list[0], (KAFFINITY)process);
    return true;
  }
  /* Several groups (Windows 11 spreads a process over all of them): every
   * active processor of each. */
  for (USHORT i = 0; i < count; i++)
    if (list[i] < group_count) add_mask(set, list[i], group_active[list[i]]);
  return true;
}

const char *cpuexec__os_process_cpus_source(void) { return "GetProcessGroupAffinity()"; }

int32_t cpuexec__os_current_cpu(void) {
  PROCESSOR_NUMBER number;
  GetCurrentProcessorNumberEx(&number);
  return (int32_t)number.Group * 64 + (int32_t)number.Number;
}

int32_t cpuexec__os_step_off(const int32_t *avoid, uint32_t count) {
  GROUP_AFFINITY mine, away;
  HANDLE self = GetCurrentThread();
  if (!GetThreadGroupAffinity(self, &mine)) return cpuexec__os_current_cpu();
  away = mine;
  for (uint32_t k = 0; k < count; k++)
    if (avoid[k] >= 0 && avoid[k] / 64 == mine.Group) away.Mask &= ~((KAFFINITY)1 << (avoid[k] % 64));
  if (away.Mask == 0) return cpuexec__os_current_cpu(); /* the thread may only run there */
  if (!SetThreadGroupAffinity(self, &away, NULL)) return cpuexec__os_current_cpu();
  /* Read where the move put the thread before the set is widened again:
   * Windows leaves a running thread where it is when its set grows, but
   * under wine the thread sleeps in the server call that widens it and may
   * be woken anywhere in the wider set. */
  int32_t now = cpuexec__os_current_cpu();
  SetThreadGroupAffinity(self, &mine, NULL);
  return now;
}

int32_t cpuexec__os_move_to(int32_t cpu) {
  GROUP_AFFINITY mine, there;
  HANDLE self = GetCurrentThread();
  if (cpu < 0 || !GetThreadGroupAffinity(self, &mine)) return cpuexec__os_current_cpu();
  KAFFINITY bit = (KAFFINITY)1 << (cpu % 64);
  if (cpu / 64 != mine.Group || !(mine.Mask & bit)) return cpuexec__os_current_cpu();
  there = mine;
  there.Mask = bit;
  if (!SetThreadGroupAffinity(self, &there, NULL)) return cpuexec__os_current_cpu();
  /* Read before the set is widened again (cpuexec__os_step_off says why). */
  int32_t now = cpuexec__os_current_cpu();
  SetThreadGroupAffinity(self, &mine, NULL);
  return now;
}

void cpuexec__os_yield(void) { SwitchToThread(); }

/* Windows keeps no per-thread count of preemptions it would hand out cheaply. */
uint64_t cpuexec__os_thread_preemptions(void) { return 0; }

/* ---- wait and wake -------------------------------------------------------- */

void cpuexec__os_wait(_Atomic uint32_t *word, uint32_t expected) {
  /* Returns at once when *word differs; a spurious return is allowed. */
  WaitOnAddress((volatile VOID *)word, &expected, sizeof expected, INFINITE);
}

void cpuexec__os_wait_until(_Atomic uint32_t *word, uint32_t expected, uint64_t deadline_ns) {
  uint64_t now = cpuexec__os_now_ns();
  if (now >= deadline_ns) return;
  uint64_t ms = (deadline_ns - now + 999999u) / 1000000u; /* rounded up: never early by the timer's grain */
  if (ms >= INFINITE) ms = INFINITE - 1;
  WaitOnAddress((volatile VOID *)word, &expected, sizeof expected, (DWORD)ms);
}

void cpuexec__os_wake_all(_Atomic uint32_t *word) { WakeByAddressAll((PVOID)word); }

void cpuexec__os_fork_child(void) {} /* no fork on Windows (fork.h) */

/* ---- threads, clock, files ------------------------------------------------ */

void cpuexec__os_timer_slack(uint64_t slack_ns) { (void)slack_ns; }

typedef HRESULT(WINAPI *set_description_fn)(HANDLE, PCWSTR);

void cpuexec__os_name_thread(pthread_t thread, const char *name) {
  static set_description_fn set_description;
  static _Atomic int looked_up;
  if (!atomic_load_explicit(&looked_up, memory_order_acquire)) {
    HMODULE kernel32 = GetModuleHandleW(L"kernel32.dll");
    FARPROC f = kernel32 ? GetProcAddress(kernel32, "SetThreadDescription") : NULL;
    set_description = (set_description_fn)(void (*)(void))f;
    atomic_store_explicit(&looked_up, 1, memory_order_release);
  }
  if (set_description == NULL) return;
  wchar_t wide[64];
  if (MultiByteToWideChar(CP_UTF8, 0, name, -1, wide, (int)(sizeof wide / sizeof *wide)) == 0) {
    wide[0] = L'\0';
    MultiByteToWideChar(CP_UTF8, 0, "cpuexec", -1, wide, 64);
  }
  set_description(handle_of(thread), wide);
}

static _Atomic uint64_t qpc_frequency;

uint64_t cpuexec__os_now_ns(void) {
  LARGE_INTEGER counter;
  uint64_t frequency = atomic_load_explicit(&qpc_frequency, memory_order_relaxed);
  if (frequency == 0) {
    LARGE_INTEGER f;
    QueryPerformanceFrequency(&f); /* fixed at boot; never fails on Windows XP and later */
    frequency = (uint64_t)f.QuadPart;
    atomic_store_explicit(&qpc_frequency, frequency, memory_order_relaxed);
  }
  QueryPerformanceCounter(&counter);
  uint64_t ticks = (uint64_t)counter.QuadPart;
  /* Split so that ticks * 1e9 cannot overflow (10 MHz: after 58 years). */
  return ticks / frequency * 1000000000u + ticks % frequency * 1000000000u / frequency;
}

const char *cpuexec__os_proc_self_cgroup(void) { return NULL; }

const char *cpuexec__os_cgroup_root(void) { return NULL; }

/* ---- the loader's change count ------------------------------------------ */

typedef VOID(CALLBACK *dll_notification_fn)(ULONG reason, const void *data, PVOID context);
typedef LONG(NTAPI *register_notification_fn)(ULONG flags, dll_notification_fn callback, PVOID context,
                                              PVOID *cookie);

static _Atomic uint64_t loader_events;
static INIT_ONCE notification_once = INIT_ONCE_STATIC_INIT;
static bool notification_registered;

static VOID CALLBACK count_event(ULONG reason, const void *data, PVOID context) {
  (void)reason;
  (void)data;
  (void)context;
  atomic_fetch_add_explicit(&loader_events, 1, memory_order_relaxed);
}

static BOOL CALLBACK register_notification(PINIT_ONCE once, PVOID parameter, PVOID *context) {
  (void)once;
  (void)parameter;
  (void)context;
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  FARPROC f = ntdll ? GetProcAddress(ntdll, "LdrRegisterDllNotification") : NULL;
  register_notification_fn reg = (register_notification_fn)(void (*)(void))f;
  PVOID cookie = NULL;
  notification_registered = reg != NULL && reg(0, count_event, NULL, &cookie) == 0;
  return TRUE;
}

bool cpuexec__os_loader_changes(uint64_t *count) {
  InitOnceExecuteOnce(&notification_once, register_notification, NULL, NULL);
  *count = atomic_load_explicit(&loader_events, memory_order_relaxed);
  return notification_registered;
}
