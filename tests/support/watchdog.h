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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

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
  ssize_t ignored = write(2, head, sizeof head - 1);
  ignored = write(2, test_watchdog_case, strlen(test_watchdog_case));
  ignored = write(2, tail, sizeof tail - 1);
  (void)ignored;
  _exit(124);
}

static inline int test_watchdog_setup(void **state) {
  test_watchdog_case = *state ? (const char *)*state : "?";
  *state = NULL; /* the case sees the state a plain cmocka_unit_test gives */
  const char *env = getenv("CPUEXEC_TEST_CASE_TIMEOUT");
  unsigned seconds = env && atoi(env) > 0 ? (unsigned)atoi(env) : 120u;
  signal(SIGALRM, test_watchdog_fire);
  alarm(seconds);
  return 0;
}

static inline int test_watchdog_teardown(void **state) {
  (void)state;
  alarm(0);
  return 0;
}

#undef cmocka_unit_test
#define cmocka_unit_test(f) {#f, f, test_watchdog_setup, test_watchdog_teardown, (void *)#f}

#endif
