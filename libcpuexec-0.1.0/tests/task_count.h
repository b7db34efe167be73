/* Test helpers shared by the session-area suites: counting this process's
 * threads, waiting for a count, running a check in a forked child. */
#ifndef CPUEXEC_TESTS_TASK_COUNT_H
#define CPUEXEC_TESTS_TASK_COUNT_H

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Under ThreadSanitizer a forked child of a threaded parent may start
 * threads of its own (the fork tests need that). Exported despite
 * -fvisibility=hidden so the sanitizer runtime finds it. */
__attribute__((visibility("default"))) const char *__tsan_default_options(void);
__attribute__((visibility("default"))) const char *__tsan_default_options(void) { return "die_after_fork=0"; }

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

static inline uint64_t test_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void test_sleep_ms(unsigned ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Threads of this process, from /proc/self/task. */
static inline int task_count(void) {
  DIR *dir = opendir("/proc/self/task");
  if (!dir) return -1;
  int n = 0;
  struct dirent *d;
  while ((d = readdir(dir)) != NULL)
    if (d->d_name[0] != '.') n++;
  closedir(dir);
  return n;
}

/* The thread count to compare against: settled, and after one thread has
 * come and gone, so a sanitizer's helper thread (started with the first
 * thread) is already counted. */
static inline void *task_count_nothing(void *arg) { return arg; }
static inline int task_baseline(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, task_count_nothing, NULL) == 0) pthread_join(t, NULL);
  int n = task_count(), last = -1;
  for (int i = 0; i < 50 && n != last; i++) {
    test_sleep_ms(10);
    last = n;
    n = task_count();
  }
  return n;
}

/* A joined thread leaves /proc/self/task shortly after pthread_join
 * returns, so poll (up to 5 s) for the expected count; returns the last
 * count seen. */
static inline int wait_task_count(int expected) {
  int n = task_count();
  for (int i = 0; i < 500 && n != expected; i++) {
    test_sleep_ms(10);
    n = task_count();
  }
  return n;
}

/* Runs check() in a forked child with an alarm of seconds; returns the
 * child's exit status (0: passed), 128+signal when it died, or -1 when it
 * did not finish within seconds + 5 and was killed. */
static inline int run_in_child(int (*check)(void), unsigned seconds) {
  pid_t pid = fork();
  if (pid < 0) return -2;
  if (pid == 0) {
    alarm(seconds);
    _exit(check());
  }
  uint64_t deadline = test_now_ns() + (uint64_t)(seconds + 5) * 1000000000u;
  int status = 0;
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (test_now_ns() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    test_sleep_ms(5);
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -3;
}

#endif
