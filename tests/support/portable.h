/* Tests' support: the few POSIX calls the tests use that Windows (mingw-w64)
 * lacks, defined on top of its C runtime: setenv and unsetenv (_putenv_s,
 * which the library's getenv sees), rand_r, mkdir with a mode, mkdtemp;
 * and, everywhere, what the tests do with processes and files:
 * test_self_path, test_spawn (run a program with a changed environment:
 * fork and exec, or _spawnv), test_remove_tree (rm -rf). Included by watchdog.h and
 * threads.h; tests that include neither include it themselves. Nothing on
 * other systems. C and C++. */
#ifndef CPUEXEC_TESTS_SUPPORT_PORTABLE_H
#define CPUEXEC_TESTS_SUPPORT_PORTABLE_H

#include <stdlib.h>

#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <direct.h>
#include <io.h>
#include <process.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <windows.h>

/* mkdir(path, mode): Windows has no modes. (io.h and direct.h, which
 * declare the one-argument mkdir, are included first.) */
#define mkdir(path, mode) _mkdir(path)

static inline char *mkdtemp(char *template_path) {
  if (_mktemp_s(template_path, strlen(template_path) + 1) != 0) return NULL;
  return _mkdir(template_path) == 0 ? template_path : NULL;
}

/* This program's own path, into buf. 0, or -1. */
static inline int test_self_path(char *buf, size_t size) {
  DWORD n = GetModuleFileNameA(NULL, buf, (DWORD)size);
  return n > 0 && n < size ? 0 : -1;
}

/* Runs path with argv (argv[0] first, NULL last) in a new process whose
 * environment is this one's without the variables of unset (a NULL-ended
 * list, or NULL) and with variable=value (variable NULL: none). Windows has
 * no fork: the environment is changed here around _spawnv and put back.
 * Returns the exit status, or -1 when it could not run. */
static inline int test_spawn(const char *path, const char *const *argv, const char *const *unset,
                             const char *variable, const char *value) {
  char saved[8][1024];
  const char *names[9];
  int count = 0;
  for (const char *const *u = unset; u != NULL && *u != NULL && count < 8; u++) names[count++] = *u;
  if (variable != NULL && count < 8) names[count++] = variable;
  for (int i = 0; i < count; i++) {
    const char *v = getenv(names[i]);
    snprintf(saved[i], sizeof saved[i], "%s", v != NULL ? v : "");
    _putenv_s(names[i], "");
  }
  if (variable != NULL) _putenv_s(variable, value);
  intptr_t rc = _spawnv(_P_WAIT, path, argv);
  for (int i = 0; i < count; i++) _putenv_s(names[i], saved[i]);
  return rc < 0 ? -1 : (int)rc;
}

/* rm -rf path, by cmd.exe's rmdir. */
static inline int test_remove_tree(const char *path) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rmdir /s /q \"%s\"", path);
  for (char *c = cmd; *c; c++)
    if (*c == '/') *c = '\\';
  return system(cmd) == 0 ? 0 : -1;
}

static inline int setenv(const char *name, const char *value, int overwrite) {
  if (!overwrite && getenv(name) != NULL) return 0;
  return _putenv_s(name, value) == 0 ? 0 : -1;
}

/* An empty value removes the variable on Windows. */
static inline int unsetenv(const char *name) { return _putenv_s(name, "") == 0 ? 0 : -1; }

/* POSIX.1's example generator: the tests only need a per-thread sequence. */
static inline int rand_r(unsigned *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return (int)(*seed / 65536u % 32768u);
}
#else
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static inline int test_self_path(char *buf, size_t size) {
  ssize_t n = readlink("/proc/self/exe", buf, size - 1);
  if (n <= 0) return -1;
  buf[n] = '\0';
  return 0;
}

/* As above, with fork and execv; 128+signal when the child died of one. */
static inline int test_spawn(const char *path, const char *const *argv, const char *const *unset,
                             const char *variable, const char *value) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    for (const char *const *u = unset; u != NULL && *u != NULL; u++) unsetenv(*u);
    if (variable != NULL) setenv(variable, value, 1);
    execv(path, (char *const *)argv);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) != pid)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static inline int test_remove_tree(const char *path) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  return system(cmd) == 0 ? 0 : -1;
}
#endif

#endif
