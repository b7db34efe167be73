/* Internal: what libcpuexec asks of the operating system, behind one header.
 *
 * Two backends implement it, chosen by configure (--with-os-backend):
 *   os_linux.c  futex waits, thread affinity, sched_getcpu, thread names,
 *               cgroup v2 and /proc paths;
 *   os_posix.c  any POSIX system: condition-variable waits, no affinity
 *               (cpuexec__os_pin_* return ENOTSUP), no current processor,
 *               no cgroup; thread names where pthread_setname_np exists.
 * The clock is POSIX everywhere and inline here, since spins read it. The
 * dynamic loader is loader.h's.
 *
 * Nothing outside these files calls a platform interface for these
 * services (tests/check-posix-portability.sh checks the posix build); the spin-then-park logic stays in wait.h and calls
 * cpuexec__os_wait / cpuexec__os_wake_all only to park and to wake. */
#ifndef CPUEXEC_SRC_OS_H
#define CPUEXEC_SRC_OS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#ifdef _WIN32
#include <malloc.h> /* _aligned_malloc */
#endif

/* The backend's name as configure's summary and cpuexec-info print it. */
const char *cpuexec__os_backend(void);

/* ---- processors and affinity --------------------------------------------- */

/* Whether threads can be placed on processors at all. When false, pinning
 * policies resolve unpinned with a diagnostic and an explicit cpu_set fails
 * with CPUEXEC_ENOTSUP (see resolve.c). */
bool cpuexec__os_has_affinity(void);

/* A set of processors by OS index (0 to CPUEXEC__OS_CPUS_MAX - 1: Linux's
 * CPU_SETSIZE; on Windows, group * 64 + number in group, as hwloc numbers
 * them, so sixteen groups of 64). The OS layer's own type, so no caller
 * needs cpu_set_t (glibc), cpuset_t (FreeBSD) or GROUP_AFFINITY. */
#define CPUEXEC__OS_CPUS_MAX 1024
typedef struct cpuexec__os_cpus {
  uint64_t bits[CPUEXEC__OS_CPUS_MAX / 64];
} cpuexec__os_cpus;

static inline void cpuexec__os_cpus_zero(cpuexec__os_cpus *set) {
  for (unsigned i = 0; i < CPUEXEC__OS_CPUS_MAX / 64; i++) set->bits[i] = 0;
}
static inline bool cpuexec__os_cpus_has(const cpuexec__os_cpus *set, int32_t cpu) {
  return cpu >= 0 && cpu < CPUEXEC__OS_CPUS_MAX && (set->bits[cpu / 64] >> (cpu % 64) & 1u);
}
static inline void cpuexec__os_cpus_add(cpuexec__os_cpus *set, int32_t cpu) {
  if (cpu >= 0 && cpu < CPUEXEC__OS_CPUS_MAX) set->bits[cpu / 64] |= (uint64_t)1 << (cpu % 64);
}
static inline int32_t cpuexec__os_cpus_count(const cpuexec__os_cpus *set) {
  int32_t n = 0;
  for (unsigned i = 0; i < CPUEXEC__OS_CPUS_MAX / 64; i++) n += __builtin_popcountll(set->bits[i]);
  return n;
}
static inline bool cpuexec__os_cpus_equal(const cpuexec__os_cpus *a, const cpuexec__os_cpus *b) {
  for (unsigned i = 0; i < CPUEXEC__OS_CPUS_MAX / 64; i++)
    if (a->bits[i] != b->bits[i]) return false;
  return true;
}

/* Processor groups (Windows): at most 64 processors to a group, and the
 * processor id is group * 64 + number in the group, as hwloc numbers them
 * (so a machine with two groups of 48 has ids 0-47 and 64-111). Every
 * backend uses these ids; only the windows one has groups to report. */
#define CPUEXEC__OS_GROUP_WIDTH 64
static inline uint16_t cpuexec__os_group_of(int32_t cpu) { return (uint16_t)(cpu / CPUEXEC__OS_GROUP_WIDTH); }
static inline uint8_t cpuexec__os_number_in_group(int32_t cpu) { return (uint8_t)(cpu % CPUEXEC__OS_GROUP_WIDTH); }
bool cpuexec__os_has_processor_groups(void);

/* The process's CPU set (Linux: the main thread's affinity, what `taskset
 * -p` and a cgroup cpuset change move; Windows: the process affinity over
 * its processor groups). False when the system cannot say (posix). */
bool cpuexec__os_process_cpus(cpuexec__os_cpus *set);
/* The call the process CPU set comes from, for messages
 * ("sched_getaffinity()"); NULL when the backend has none. */
const char *cpuexec__os_process_cpus_source(void);

/* The processors a thread may run on. False when unknown (no affinity, or
 * the query failed). */
bool cpuexec__os_thread_cpus(pthread_t thread, cpuexec__os_cpus *set);

/* Pins a thread (or the calling one) to one processor. 0, or an errno
 * value: ENOTSUP when the backend has no affinity. */
int cpuexec__os_pin_thread(pthread_t thread, int32_t cpu);
int cpuexec__os_pin_self(int32_t cpu);

/* The processors the calling thread may run on, ascending, into ids[0,
 * max). Returns how many there are (may exceed max), or -1 when unknown
 * (no affinity, or the query failed). */
int32_t cpuexec__os_affinity_self(int32_t *ids, int32_t max);

/* Moves the calling thread off the given processors and back, leaving its
 * affinity as it was: only where it runs changes, as a migration by the
 * scheduler would. Returns where it runs now (-1 unknown). Costs two system
 * calls; only the adaptive dispatch path uses it, on a seen collision. */
int32_t cpuexec__os_step_off(const int32_t *avoid, uint32_t count);

/* Moves the calling thread onto processor cpu and back to its own
 * affinity, which must allow cpu: only where it runs changes, as a
 * migration by the scheduler would. Returns where it runs now (-1
 * unknown). Costs three system calls; only a crowded caller that sees its
 * process's callers placed unevenly uses it (src/executor/crowd_places.h). */
int32_t cpuexec__os_move_to(int32_t cpu);

/* The processor the calling thread runs on, -1 when unknown. Linux reads it
 * from the rseq area (no system call), so hot paths may call it. */
int32_t cpuexec__os_current_cpu(void);

/* Gives the processor to another runnable thread. */
void cpuexec__os_yield(void);

/* How many times the scheduler has preempted the calling thread (taken its
 * processor while it could still run: Linux's involuntary context switches),
 * a system call; 0 where the OS does not say. A waiter that finds the count
 * moved since its last look is on a crowded machine (wait.c). */
uint64_t cpuexec__os_thread_preemptions(void);

/* ---- wait and wake -------------------------------------------------------- */

/* Sleeps while *word == expected; returns on a wake, when *word differs, or
 * spuriously: callers re-check. Only a waiter that announced itself (wait.h's
 * parked flag) may call it, so a waker that saw no announcement need not
 * call cpuexec__os_wake_all. */
void cpuexec__os_wait(_Atomic uint32_t *word, uint32_t expected);

/* The same, returning at deadline_ns (CLOCK_MONOTONIC, cpuexec__os_now_ns)
 * at the latest. */
void cpuexec__os_wait_until(_Atomic uint32_t *word, uint32_t expected, uint64_t deadline_ns);

/* Wakes every thread sleeping in cpuexec__os_wait(_until) on word. The caller
 * stores the new value (seq_cst) before calling. */
void cpuexec__os_wake_all(_Atomic uint32_t *word);

/* In a fork child, before anything else runs (the fork module calls it):
 * re-creates whatever lock a parent thread may have held at fork. */
void cpuexec__os_fork_child(void);

/* ---- threads, clock, files ------------------------------------------------ */

/* Asks that the calling thread's timed waits end within slack_ns of their
 * deadline (Linux: the timer slack, 50 us by default). Best effort. */
void cpuexec__os_timer_slack(uint64_t slack_ns);

/* Names a thread for debuggers and top (truncated to the system's limit).
 * Cosmetic: failure, or no support, changes nothing. */
void cpuexec__os_name_thread(pthread_t thread, const char *name);

/* CLOCK_MONOTONIC in nanoseconds: the library's one clock (a vDSO read on
 * Linux, ~20 ns). Windows: QueryPerformanceCounter, in os_windows.c (so
 * that no file that includes os.h includes <windows.h>). */
#ifdef _WIN32
uint64_t cpuexec__os_now_ns(void);
#else
static inline uint64_t cpuexec__os_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

/* Memory aligned to align (a power of two; size a multiple of it), freed
 * with cpuexec__os_aligned_free and nothing else: C11 aligned_alloc, or
 * _aligned_malloc on Windows, whose C runtime has no aligned_alloc. */
static inline void *cpuexec__os_aligned_alloc(size_t align, size_t size) {
#ifdef _WIN32
  return _aligned_malloc(size, align);
#else
  return aligned_alloc(align, size);
#endif
}
static inline void cpuexec__os_aligned_free(void *p) {
#ifdef _WIN32
  _aligned_free(p);
#else
  free(p);
#endif
}

/* Where the cgroup v2 quota is read from: the file naming the process's
 * cgroup and the cgroup mount. NULL: the system has none (no quota). */
const char *cpuexec__os_proc_self_cgroup(void);
const char *cpuexec__os_cgroup_root(void);

#endif
