/* CPU time per thread, for the runtime-guard tests: which threads of the
 * process ran during a stretch of code, including threads that started and
 * exited inside it (BLIS's pthreads build starts its threads per call).
 *
 * A snapshot holds every listed thread's CPU time (its thread CPU clock,
 * made from the tid as pthread_getcpuclockid() makes it, which brings a
 * running thread's time up to date, unlike /proc's per-thread files) and the
 * process's CPU time from getrusage(), which also counts threads that have
 * exited. A thread running on another processor at the moment of reading is
 * counted up to the last tick in the process's total: the tests read while
 * their pools are parked (spin_policy park_immediately). Between two
 * snapshots:
 *   - a listed thread's time that grew: it ran;
 *   - the process's time minus every listed thread's growth: what threads
 *     that are no longer listed ran (plus the reading's own few
 *     microseconds on the calling thread, hence a tolerance).
 * The kernel's own counters are read; nothing here waits or sleeps. */
#ifndef CPUEXEC_TESTS_GUARD_CPU_H
#define CPUEXEC_TESTS_GUARD_CPU_H

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define GUARD_CPU_THREADS 256

typedef struct guard_cpu_snapshot {
  int count;
  int tid[GUARD_CPU_THREADS];
  uint64_t ns[GUARD_CPU_THREADS];
  uint64_t process_ns;
} guard_cpu_snapshot;

static inline int guard_cpu_gettid(void) { return (int)syscall(SYS_gettid); }

static inline uint64_t guard_cpu_process_ns(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return ((uint64_t)u.ru_utime.tv_sec + (uint64_t)u.ru_stime.tv_sec) * 1000000000u +
         ((uint64_t)u.ru_utime.tv_usec + (uint64_t)u.ru_stime.tv_usec) * 1000u;
}

/* Linux's per-thread CPU clock of tid (CPUCLOCK_SCHED, per thread). */
static inline bool guard_cpu_thread_ns(int tid, uint64_t *ns) {
  clockid_t clock = (clockid_t)((~(unsigned)tid << 3) | 6u);
  struct timespec ts;
  if (clock_gettime(clock, &ts) != 0)
    return false;
  *ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  return true;
}

/* The thread's name (comm), or "" when it has gone. */
static inline void guard_cpu_thread_name(int tid, char *name, size_t size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/comm", tid);
  name[0] = '\0';
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return;
  if (fgets(name, (int)size, f) != NULL)
    name[strcspn(name, "\n")] = '\0';
  fclose(f);
}

static inline void guard_cpu_threads(guard_cpu_snapshot *s) {
  s->count = 0;
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  while (d != NULL && (e = readdir(d)) != NULL && s->count < GUARD_CPU_THREADS) {
    if (e->d_name[0] == '.')
      continue;
    int tid = atoi(e->d_name);
    if (guard_cpu_thread_ns(tid, &s->ns[s->count]))
      s->tid[s->count++] = tid;
  }
  if (d != NULL)
    closedir(d);
}

/* Before: the process first, so the reading's own time counts against the
 * listed threads, never as an unlisted one's. After: the other order. */
static inline void guard_cpu_before(guard_cpu_snapshot *s) {
  s->process_ns = guard_cpu_process_ns();
  guard_cpu_threads(s);
}

static inline void guard_cpu_after(guard_cpu_snapshot *s) {
  guard_cpu_threads(s);
  s->process_ns = guard_cpu_process_ns();
}

static inline uint64_t guard_cpu_of(const guard_cpu_snapshot *s, int tid) {
  for (int i = 0; i < s->count; i++)
    if (s->tid[i] == tid)
      return s->ns[i];
  return 0;
}

static inline bool guard_cpu_listed(const guard_cpu_snapshot *s, int tid) {
  for (int i = 0; i < s->count; i++)
    if (s->tid[i] == tid)
      return true;
  return false;
}

typedef struct guard_cpu_report {
  uint64_t allowed_ns; /* the allowed threads' growth */
  uint64_t others_ns;  /* every other thread's: listed ones plus the unlisted remainder */
  uint64_t exited_ns;  /* of which: threads not listed after (exited), from getrusage */
  int others_ran;      /* listed threads outside allowed whose time grew */
  int worst_tid;       /* the listed other thread that ran most, or 0 */
  uint64_t worst_ns;
} guard_cpu_report;

static inline bool guard_cpu_in(const int *tids, int n, int tid) {
  for (int i = 0; i < n; i++)
    if (tids[i] == tid)
      return true;
  return false;
}

/* allowed: the caller and the pool's workers (tids). */
static inline guard_cpu_report guard_cpu_compare(const guard_cpu_snapshot *before, const guard_cpu_snapshot *after,
                                                 const int *allowed, int n_allowed) {
  guard_cpu_report r = {0, 0, 0, 0, 0, 0};
  uint64_t listed_growth = 0;
  for (int i = 0; i < after->count; i++) {
    uint64_t was = guard_cpu_of(before, after->tid[i]);
    uint64_t grew = after->ns[i] > was ? after->ns[i] - was : 0;
    listed_growth += grew;
    if (guard_cpu_in(allowed, n_allowed, after->tid[i])) {
      r.allowed_ns += grew;
    } else if (grew > 0) {
      r.others_ns += grew;
      r.others_ran++;
      if (grew > r.worst_ns)
        r.worst_ns = grew, r.worst_tid = after->tid[i];
    }
  }
  uint64_t process = after->process_ns - before->process_ns;
  r.exited_ns = process > listed_growth ? process - listed_growth : 0;
  r.others_ns += r.exited_ns;
  return r;
}

static inline void guard_cpu_print(const char *what, const guard_cpu_report *r) {
  char name[32] = "";
  if (r->worst_tid != 0)
    guard_cpu_thread_name(r->worst_tid, name, sizeof name);
  printf("%s: caller and pool %.2f ms; other threads %.2f ms (%d listed ran%s%s%s; exited or unlisted %.2f ms)\n",
         what, r->allowed_ns / 1e6, r->others_ns / 1e6, r->others_ran, r->worst_tid ? ", most: \"" : "", name,
         r->worst_tid ? "\"" : "", r->exited_ns / 1e6);
}

#endif
