/* Tests' support: threads and processes: whether ThreadSanitizer is on,
 * a monotonic clock, counting this process's threads, busy work, running a
 * check in a forked child. A program made of two test files defines
 * TEST_UTIL_SECOND_FILE in the second, so definitions the sanitizer runtime
 * looks up appear once. C; C++ tests include it themselves, in extern "C". */
#ifndef CPUEXEC_TESTS_SUPPORT_THREADS_H
#define CPUEXEC_TESTS_SUPPORT_THREADS_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#ifndef __cplusplus
#include <stdatomic.h>
#endif
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <tlhelp32.h>
#else
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <cmocka.h>

#include "portable.h"

/* ---- threads and processes ----------------------------------------------- */
/* Under ThreadSanitizer a forked child of a threaded parent may start
 * threads of its own (the fork tests need that). Exported despite
 * -fvisibility=hidden so the sanitizer runtime finds it. */
#if !defined(TEST_UTIL_SECOND_FILE) && !defined(_WIN32)
__attribute__((visibility("default"))) const char *__tsan_default_options(void);
__attribute__((visibility("default"))) const char *__tsan_default_options(void) { return "die_after_fork=0"; }
#endif

#if defined(__SANITIZE_THREAD__)
#define TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_UNDER_TSAN 1
#endif
#endif
#ifndef TEST_UNDER_TSAN
#define TEST_UNDER_TSAN 0
#endif

/* ThreadSanitizer keeps the parent's threads in its registry in a forked
 * child, and a thread started there that reuses one of their stacks (glibc
 * hands those stacks out again) kills the child ("dup thread with used
 * id"). So under ThreadSanitizer the fork tests check everything in the
 * child that starts no thread; the normal build checks the rest. */
#define TEST_CHILD_MAY_START_THREADS (!TEST_UNDER_TSAN)

/* CLOCK_MONOTONIC in ns: only to bound a poll of the kernel's own state
 * (below), never to wait for another thread of the test. */
static inline uint64_t test_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#ifdef _WIN32
/* Threads of this process, from a Toolhelp snapshot (a joined winpthreads
 * thread has ended: its handle was waited on). */
static inline int task_count(void) {
  HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
  if (snap == INVALID_HANDLE_VALUE) return -1;
  THREADENTRY32 e;
  e.dwSize = sizeof e;
  int n = 0;
  DWORD self = GetCurrentProcessId();
  for (BOOL ok = Thread32First(snap, &e); ok; ok = Thread32Next(snap, &e))
    if (e.th32OwnerProcessID == self) n++;
  CloseHandle(snap);
  return n;
}
#else
/* Whether /proc/self/task/<tid> is a thread that still runs: a joined
 * thread stays listed until the kernel reaps it, a little after
 * pthread_join returned, but by then it has PF_EXITING (0x4) in its flags,
 * the ninth field of its stat; a thread already gone has no stat. */
static inline bool task_alive(const char *tid) {
  char path[sizeof "/proc/self/task//stat" + 256], text[512]; /* a d_name is at most 255 */
  snprintf(path, sizeof path, "/proc/self/task/%s/stat", tid);
  FILE *f = fopen(path, "r");
  if (!f) return false;
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  const char *after_name = strrchr(text, ')');
  unsigned long flags = 0;
  if (!after_name || sscanf(after_name + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1) return true;
  return (flags & 0x4u) == 0;
}

/* Threads of this process that still run, from /proc/self/task. */
static inline int task_count(void) {
  DIR *dir = opendir("/proc/self/task");
  if (!dir) return -1;
  int n = 0;
  struct dirent *d;
  while ((d = readdir(dir)) != NULL)
    if (d->d_name[0] != '.' && task_alive(d->d_name)) n++;
  closedir(dir);
  return n;
}
#endif

/* The thread count to compare against: settled, and after one thread has
 * come and gone, so a sanitizer's helper thread (started with the first
 * thread) is already counted. */
static inline void *task_count_nothing(void *arg) { return arg; }
static inline int task_baseline(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, task_count_nothing, NULL) == 0) pthread_join(t, NULL);
  return task_count(); /* the joined helper is not counted (task_alive) */
}

/* Polls count() (bounded by 5 s) until it equals expected; returns the last
 * value seen. Joined threads are never counted (task_alive), so a right
 * count is there at once: the poll covers a kernel that marks an exiting
 * thread late, and the bound only limits how long a wrong count takes to
 * be reported. wait_task_count: every running thread of the process. */
static inline int wait_count(int (*count)(void), int expected) {
  int n = count();
  uint64_t deadline = test_now_ns() + 5000000000u;
  while (n != expected && test_now_ns() < deadline) {
    sched_yield();
    n = count();
  }
  return n;
}
static inline int wait_task_count(int expected) { return wait_count(task_count, expected); }

/* A callback that takes a while without waiting on anything: `rounds`
 * rounds of arithmetic and a yield (so other participants get the
 * processor), about a microsecond each. Widens the window in which a broken
 * executor would return before its callbacks; a correct one passes however
 * long it takes. */
static inline void test_busy_work(unsigned rounds) {
  volatile uint64_t x = 1;
  for (unsigned r = 0; r < rounds; r++) {
    for (unsigned i = 0; i < 256; i++) x = x * 6364136223846793005u + 1442695040888963407u;
    sched_yield();
  }
}

#if !defined(_WIN32)
/* Runs check() in a forked child with an alarm of seconds (SIGALRM's
 * default action ends it, so waiting for it cannot hang); returns the
 * child's exit status (0: passed), or 128+signal when it died. */
static inline int run_in_child(int (*check)(void), unsigned seconds) {
  pid_t pid = fork();
  if (pid < 0) return -2;
  if (pid == 0) {
    signal(SIGALRM, SIG_DFL);
    alarm(seconds);
    _exit(check());
  }
  int status = 0;
  while (waitpid(pid, &status, 0) != pid)
    if (errno != EINTR) return -3;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -3;
}
#else
/* Windows has no fork: the fork cases are TEST_UNIX_ONLY (watchdog.h);
 * a call left in code a Windows build never reaches fails its case. */
static inline int run_in_child(int (*check)(void), unsigned seconds) {
  (void)check;
  (void)seconds;
  fail_msg("%s", "run_in_child: Windows has no fork()");
  return -1;
}
#endif

#endif
