/* The Linux OS backend (see os.h): futex waits, thread affinity through
 * glibc's cpu_set_t calls, sched_getcpu, thread names, cgroup v2 paths,
 * and the loader's change count (loader.h) from dl_iterate_phdr. */
#include "os.h"
#include "loader.h"

#include <errno.h>
#include <limits.h>
#include <link.h>
#include <linux/futex.h>
#include <stddef.h>
#include <sched.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *cpuexec__os_backend(void) { return "linux"; }

bool cpuexec__os_has_processor_groups(void) { return false; }

bool cpuexec__os_has_affinity(void) { return true; }

/* A set just large enough for cpu, so processor ids above CPU_SETSIZE work. */
static int pin(pthread_t thread, int32_t cpu) {
  if (cpu < 0) return EINVAL;
  size_t size = CPU_ALLOC_SIZE((size_t)cpu + 1);
  cpu_set_t *set = CPU_ALLOC((size_t)cpu + 1);
  if (!set) return ENOMEM;
  CPU_ZERO_S(size, set);
  CPU_SET_S((size_t)cpu, size, set);
  int rc = pthread_setaffinity_np(thread, size, set);
  CPU_FREE(set);
  return rc;
}

int cpuexec__os_pin_thread(pthread_t thread, int32_t cpu) { return pin(thread, cpu); }

int cpuexec__os_pin_self(int32_t cpu) { return pin(pthread_self(), cpu); }

int32_t cpuexec__os_affinity_self(int32_t *ids, int32_t max) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) != 0) return -1;
  int32_t n = 0;
  for (int32_t id = 0; id < CPU_SETSIZE; id++)
    if (CPU_ISSET(id, &set)) {
      if (n < max) ids[n] = id;
      n++;
    }
  return n;
}

static void from_cpu_set(const cpu_set_t *from, cpuexec__os_cpus *set) {
  cpuexec__os_cpus_zero(set);
  for (int32_t id = 0; id < CPU_SETSIZE && id < CPUEXEC__OS_CPUS_MAX; id++)
    if (CPU_ISSET(id, from)) cpuexec__os_cpus_add(set, id);
}

bool cpuexec__os_process_cpus(cpuexec__os_cpus *set) {
  cpu_set_t s;
  CPU_ZERO(&s);
  if (sched_getaffinity(getpid(), sizeof s, &s) != 0) return false;
  from_cpu_set(&s, set);
  return true;
}

const char *cpuexec__os_process_cpus_source(void) { return "sched_getaffinity()"; }

bool cpuexec__os_thread_cpus(pthread_t thread, cpuexec__os_cpus *set) {
  cpu_set_t s;
  CPU_ZERO(&s);
  if (pthread_getaffinity_np(thread, sizeof s, &s) != 0) return false;
  from_cpu_set(&s, set);
  return true;
}

int32_t cpuexec__os_step_off(const int32_t *avoid, uint32_t count) {
  cpu_set_t mine, away;
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) return sched_getcpu();
  away = mine;
  for (uint32_t k = 0; k < count; k++)
    if (avoid[k] >= 0 && avoid[k] < CPU_SETSIZE) CPU_CLR(avoid[k], &away);
  if (CPU_COUNT(&away) == 0) return sched_getcpu(); /* the thread may only run there */
  if (sched_setaffinity(0, sizeof away, &away) != 0) return sched_getcpu();
  sched_setaffinity(0, sizeof mine, &mine);
  return sched_getcpu();
}

int32_t cpuexec__os_move_to(int32_t cpu) {
  cpu_set_t mine, there;
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof mine, &mine) != 0 || !CPU_ISSET(cpu, &mine))
    return sched_getcpu();
  CPU_ZERO(&there);
  CPU_SET(cpu, &there);
  if (sched_setaffinity(0, sizeof there, &there) != 0) return sched_getcpu();
  sched_setaffinity(0, sizeof mine, &mine);
  return sched_getcpu();
}

int32_t cpuexec__os_current_cpu(void) { return sched_getcpu(); }

void cpuexec__os_yield(void) { sched_yield(); }

uint64_t cpuexec__os_thread_preemptions(void) {
  struct rusage usage;
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
  return (uint64_t)usage.ru_nivcsw;
}

void cpuexec__os_wait(_Atomic uint32_t *word, uint32_t expected) {
  /* EINTR and EAGAIN both mean "look again", which every caller does. */
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

void cpuexec__os_wait_until(_Atomic uint32_t *word, uint32_t expected, uint64_t deadline_ns) {
  /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline. */
  struct timespec ts = {(time_t)(deadline_ns / 1000000000u), (long)(deadline_ns % 1000000000u)};
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_BITSET_PRIVATE, expected, &ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

void cpuexec__os_timer_slack(uint64_t slack_ns) { prctl(PR_SET_TIMERSLACK, (unsigned long)slack_ns, 0, 0, 0); }

void cpuexec__os_wake_all(_Atomic uint32_t *word) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void cpuexec__os_fork_child(void) {} /* futexes hold no lock */

void cpuexec__os_name_thread(pthread_t thread, const char *name) {
  char limited[16]; /* the kernel's limit, NUL included */
  snprintf(limited, sizeof limited, "%s", name);
  pthread_setname_np(thread, limited);
}

const char *cpuexec__os_proc_self_cgroup(void) { return "/proc/self/cgroup"; }

const char *cpuexec__os_cgroup_root(void) { return "/sys/fs/cgroup"; }

static int loader_counts(struct dl_phdr_info *info, size_t size, void *data) {
  uint64_t *counts = data;
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    counts[0] = info->dlpi_adds;
    counts[1] = info->dlpi_subs;
  }
  return 1; /* the counts are the same in every entry: stop at the first */
}

/* Both counts only grow, so their sum changes whenever either does. */
bool cpuexec__os_loader_changes(uint64_t *count) {
  uint64_t counts[2] = {0, 0};
  dl_iterate_phdr(loader_counts, counts);
  *count = counts[0] + counts[1];
  return true;
}
