/* A process's identity: pid and start time (process_identity.h). */
#include "process_identity.h"

#ifndef _WIN32
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

bool cpuexec__process_alive(int64_t pid, uint64_t *start_time) {
  *start_time = 0;
  char file[64], line[1024];
  snprintf(file, sizeof file, "/proc/%lld/stat", (long long)pid);
  FILE *f = fopen(file, "r");
  if (f == NULL) {
    /* No /proc at all: the signal test; with /proc, a missing file is a
     * process that is gone. */
    FILE *self = fopen("/proc/self/stat", "r");
    if (self != NULL) {
      fclose(self);
      return false;
    }
    return kill((pid_t)pid, 0) == 0 || errno != ESRCH;
  }
  bool got = fgets(line, sizeof line, f) != NULL;
  fclose(f);
  /* "pid (comm) state ppid ...": comm may hold spaces and parentheses, so
   * the fields are counted from the last ')'. */
  const char *p = got ? strrchr(line, ')') : NULL;
  if (p == NULL) return false;
  char state;
  unsigned long long start;
  /* After ") ": state (3), then fields 4..21 skipped, starttime (22). */
  if (sscanf(p + 2, "%c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu", &state,
             &start) != 2)
    return false;
  if (state == 'Z' || state == 'X') return false; /* died, not yet reaped */
  *start_time = start;
  return true;
}
#else
bool cpuexec__process_alive(int64_t pid, uint64_t *start_time) {
  (void)pid;
  *start_time = 0;
  return true;
}
#endif
