/* Tests' support: the per-case watchdog. Include it (or test_util.h) after
 * nothing but system headers: it includes <cmocka.h> and redefines
 * cmocka_unit_test() so every case arms an alarm, and a case that hangs
 * prints its own name and ends the program. C and C++. */
#ifndef CPUEXEC_TESTS_SUPPORT_WATCHDOG_H
#define CPUEXEC_TESTS_SUPPORT_WATCHDOG_H

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <io.h>
#include <windows.h>
#else
#include <unistd.h>
#endif

#include <cmocka.h>

#include "portable.h"

/* ---- the per-case watchdog ------------------------------------------------
 * cmocka_unit_test(f) below gives every case a setup that arms alarm() for
 * CPUEXEC_TEST_CASE_TIMEOUT seconds (default 120) and a teardown that
 * disarms it. A case still running then prints "test case hung: <name>" and
 * the program exits 124, the status of tests/run-test.sh's timeout. The
 * alarm only ends a hung case; no test waits on it. */
static const char *test_watchdog_case = "?";

static inline void test_watchdog_fire(int sig) {
  (void)sig;
  static const char head[] = "\ntest case hung: ";
  static const char tail[] = " (no result within CPUEXEC_TEST_CASE_TIMEOUT seconds)\n";
  int ignored = (int)write(2, head, sizeof head - 1);
  ignored = (int)write(2, test_watchdog_case, (unsigned)strlen(test_watchdog_case));
  ignored = (int)write(2, tail, sizeof tail - 1);
  (void)ignored;
  _exit(124);
}

static inline unsigned test_watchdog_seconds(void) {
  const char *env = getenv("CPUEXEC_TEST_CASE_TIMEOUT");
  return env && atoi(env) > 0 ? (unsigned)atoi(env) : 120u;
}

#ifdef _WIN32
/* Windows has no alarm(): a one-shot timer-queue timer runs the same
 * handler on a pool thread. */
static HANDLE test_watchdog_timer;

static inline VOID CALLBACK test_watchdog_timer_fired(PVOID arg, BOOLEAN fired) {
  (void)arg;
  (void)fired;
  test_watchdog_fire(0);
}

static inline int test_watchdog_setup(void **state) {
  test_watchdog_case = *state ? (const char *)*state : "?";
  *state = NULL; /* the case sees the state a plain cmocka_unit_test gives */
  CreateTimerQueueTimer(&test_watchdog_timer, NULL, test_watchdog_timer_fired, NULL,
                        test_watchdog_seconds() * 1000u, 0, WT_EXECUTEONLYONCE);
  return 0;
}

static inline int test_watchdog_teardown(void **state) {
  (void)state;
  if (test_watchdog_timer != NULL) DeleteTimerQueueTimer(NULL, test_watchdog_timer, NULL);
  test_watchdog_timer = NULL;
  return 0;
}
#else
static inline int test_watchdog_setup(void **state) {
  test_watchdog_case = *state ? (const char *)*state : "?";
  *state = NULL; /* the case sees the state a plain cmocka_unit_test gives */
  signal(SIGALRM, test_watchdog_fire);
  alarm(test_watchdog_seconds());
  return 0;
}

static inline int test_watchdog_teardown(void **state) {
  (void)state;
  alarm(0);
  return 0;
}
#endif

#undef cmocka_unit_test
#define cmocka_unit_test(f) {#f, f, test_watchdog_setup, test_watchdog_teardown, (void *)#f}

/* ---- cases a platform cannot run ------------------------------------------
 * TEST_UNIX_ONLY(f, why): the case f where the system has fork(), /proc or
 * cgroups; on Windows a case of the same name that prints why and is
 * reported SKIPPED by CMocka (never PASSED). Keep f itself inside
 * `#if !TEST_ON_WINDOWS`. */
#ifdef _WIN32
#define TEST_ON_WINDOWS 1
#else
#define TEST_ON_WINDOWS 0
#endif
static inline void test_not_on_this_platform(void **state) {
  print_message("skipped on Windows: %s\n", *state ? (const char *)*state : "not meaningful there");
  skip();
}
#if TEST_ON_WINDOWS
#define TEST_UNIX_ONLY(f, why) {#f, test_not_on_this_platform, NULL, NULL, (void *)(why)}
#else
#define TEST_UNIX_ONLY(f, why) cmocka_unit_test(f)
#endif

/* A whole program a platform cannot run: its main, printing why, with the
 * exit status automake counts as SKIP (77). */
#define TEST_PROGRAM_NOT_ON_WINDOWS(why) \
  int main(void) { \
    printf("SKIP: not run on Windows: %s\n", why); \
    return 77; \
  }

#endif
