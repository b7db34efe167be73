/* cpuexec-info --openmp-report PROGRAM [ARGS...]: runs PROGRAM (linked with
 * libcpuexec) with CPUEXEC_OPENMP_REPORT pointing at a temporary file, which
 * the library fills when the program exits, then prints the report: per
 * calling function, the OpenMP regions seen inline in callbacks and at top
 * level in sessions, with team sizes. The list of kernels left to migrate.
 * cpuexec-info --libraries-report PROGRAM [ARGS...] does the same with
 * CPUEXEC_LIBRARIES_REPORT: which threaded libraries (FFTW, OpenCV, Eigen,
 * pthreadpool) the program loaded and whether each ran on libcpuexec. */
#include "info_openmp.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef _WIN32
#include <process.h>
#include <windows.h>
#else
#include <sys/wait.h>
#include <unistd.h>
#endif

/* Runs argv with `variable` naming a temporary file and prints what the
 * program wrote there at exit. */
static int run_with_report(const char *option, const char *variable, int argc, char **argv) {
  if (argc < 1) {
    fprintf(stderr, "cpuexec-info: %s needs a program to run, e.g. cpuexec-info %s ./my_program args\n", option,
            option);
    return 2;
  }
#ifdef _WIN32
  /* No fork: the program is spawned with the variable in this process's
   * environment, which it inherits. */
  char dir[MAX_PATH], path[MAX_PATH];
  if (GetTempPathA(sizeof dir, dir) == 0 || GetTempFileNameA(dir, "cpx", 0, path) == 0) {
    fprintf(stderr, "cpuexec-info: temporary report file: error %lu\n", (unsigned long)GetLastError());
    return 1;
  }
  SetEnvironmentVariableA(variable, path);
  _putenv_s(variable, path);
  intptr_t code = _spawnvp(_P_WAIT, argv[0], (const char *const *)argv);
  bool exited = code >= 0;
  int exit_status = exited ? (int)code : 127;
  if (!exited)
    perror("cpuexec-info: exec");
#define unlink _unlink
#else
  char path[] = "/tmp/cpuexec-info-report-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    perror("cpuexec-info: temporary report file");
    return 1;
  }
  close(fd);
  pid_t pid = fork();
  if (pid < 0) {
    perror("cpuexec-info: fork");
    unlink(path);
    return 1;
  }
  if (pid == 0) {
    setenv(variable, path, 1);
    execvp(argv[0], argv);
    perror("cpuexec-info: exec");
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  bool exited = WIFEXITED(status);
  int exit_status = exited ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
#endif
  FILE *in = fopen(path, "r");
  size_t n = 0;
  char buf[4096];
  while (in != NULL && (n = fread(buf, 1, sizeof buf, in)) > 0)
    fwrite(buf, 1, n, stdout);
  long size = in != NULL ? ftell(in) : 0;
  if (in != NULL)
    fclose(in);
  unlink(path);
  if (size <= 0)
    fprintf(stderr, "cpuexec-info: %s wrote no report (is it linked with libcpuexec?)\n", argv[0]);
  if (!exited || exit_status != 0)
    fprintf(stderr, "cpuexec-info: %s exited with status %d\n", argv[0], exit_status);
  return size > 0 && exited && exit_status == 0 ? 0 : 1;
}

int cpuexec_info_openmp_report(int argc, char **argv) {
  return run_with_report("--openmp-report", "CPUEXEC_OPENMP_REPORT", argc, argv);
}

int cpuexec_info_libraries_report(int argc, char **argv) {
  return run_with_report("--libraries-report", "CPUEXEC_LIBRARIES_REPORT", argc, argv);
}
