/* cpuexec-info's "Runtimes" section: the threaded libraries this process has
 * loaded (cpuexec_runtimes_get), and, for each library the loader can find
 * by its usual name, what the guards would do with it in a program that
 * loads it: found in a child, which loads it and asks the same call, so this
 * process never loads a library it did not already have. */
#include "info_runtimes.h"

#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <cpuexec.h>

#ifndef _WIN32

/* The names a program usually loads them by (the system's choice of build
 * where there are several: Debian's alternatives). */
static const char *const candidates[] = {"libopenblas.so.0", "libblis.so.4", "libtbb.so.12", "libtbb.so.2",
                                         "libmkl_rt.so.2", "libmkl_rt.so"};
#define CANDIDATES (sizeof candidates / sizeof candidates[0])

#endif

static const char *guard_name(cpuexec_runtime_guard g) {
  switch (g) {
  case CPUEXEC_GUARD_PER_THREAD: return "per_thread";
  case CPUEXEC_GUARD_PROCESS_WIDE: return "process_wide";
  case CPUEXEC_GUARD_THROUGH_OPENMP: return "through_openmp";
  case CPUEXEC_GUARD_SERIAL_BUILD: return "serial_build";
  default: return "none";
  }
}

static void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c < 0x20)
      fprintf(out, "\\u%04x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

static void print_entry(FILE *out, const cpuexec_runtime_info *e, bool json, const char *indent) {
  if (json) {
    fprintf(out, "{\"name\":");
    json_string(out, e->name);
    fprintf(out, ",\"version\":");
    json_string(out, e->version);
    fprintf(out, ",\"threading\":");
    json_string(out, e->threading);
    fprintf(out, ",\"path\":");
    json_string(out, e->path);
    fprintf(out, ",\"guard\":\"%s\",\"governed\":%s,\"reason\":", guard_name(e->guard), e->governed ? "true" : "false");
    json_string(out, e->reason);
    fputc('}', out);
  } else {
    fprintf(out, "%s%s%s%s (%s) %s\n%s  %s: %s\n", indent, e->name, e->version[0] ? " " : "", e->version,
            e->threading[0] ? e->threading : "?", e->path, indent, e->governed ? "governed" : "NOT governed",
            e->reason);
  }
}

#ifndef _WIN32
/* The entries a child finds after loading name (those that are not OpenMP
 * runtimes, which the OpenMP section lists), written to fd as raw structs. */
static void child_probe(const char *name, int fd) {
  int devnull = open("/dev/null", O_WRONLY);
  if (devnull >= 0)
    dup2(devnull, 2); /* a library's constructor may complain: not ours to print */
  if (dlopen(name, RTLD_NOW | RTLD_GLOBAL) == NULL)
    _exit(3);
  cpuexec_runtime_info list[32];
  size_t n = 0;
  if (cpuexec_runtimes_get(list, 32, &n) != 0)
    _exit(1);
  for (size_t i = 0; i < n && i < 32; i++)
    if (list[i].family != CPUEXEC_RUNTIME_OPENMP && write(fd, &list[i], sizeof list[i]) != (ssize_t)sizeof list[i])
      _exit(1);
  _exit(0);
}

/* Runs the probe; returns how many entries it found (at most max), or -1
 * when the library cannot be loaded. */
static int probe(const char *name, cpuexec_runtime_info *found, int max) {
  int fds[2];
  if (pipe(fds) != 0)
    return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    child_probe(name, fds[1]);
  }
  close(fds[1]);
  int n = 0;
  cpuexec_runtime_info e;
  size_t got = 0;
  ssize_t r;
  while ((r = read(fds[0], (char *)&e + got, sizeof e - got)) > 0) {
    got += (size_t)r;
    if (got == sizeof e) {
      if (n < max)
        found[n++] = e;
      got = 0;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return -1;
  return n;
}

static void print_installed(FILE *out, bool json) {
  for (size_t c = 0; c < CANDIDATES; c++) {
    cpuexec_runtime_info found[8];
    int n = probe(candidates[c], found, 8);
    if (json) {
      fprintf(out, "%s{\"library\":\"%s\",\"installed\":%s,\"found\":[", c ? "," : "", candidates[c],
              n >= 0 ? "true" : "false");
      for (int i = 0; i < n; i++) {
        if (i)
          fputc(',', out);
        print_entry(out, &found[i], true, "");
      }
      fprintf(out, "]}");
    } else if (n < 0) {
      fprintf(out, "  %-17s not installed\n", candidates[c]);
    } else {
      fprintf(out, "  %-17s installed%s\n", candidates[c], n == 0 ? " (no guarded library in it)" : ":");
      for (int i = 0; i < n; i++)
        print_entry(out, &found[i], false, "    ");
    }
  }
}
#else
/* The probe loads each library in a forked child, and Windows has no fork:
 * only what this process has loaded is listed there. */
static void print_installed(FILE *out, bool json) {
  if (!json)
    fprintf(out, "  not probed on Windows (the probe loads each library in a forked child)\n");
}
#endif

void info_runtimes_print(FILE *out, bool json) {
  size_t loaded = 0;
  cpuexec_runtime_info here[32];
  if (cpuexec_runtimes_get(here, 32, &loaded) != 0)
    loaded = 0;
  if (loaded > 32)
    loaded = 32;
  if (json) {
    fprintf(out, ",\"runtimes\":{\"loaded\":[");
    for (size_t i = 0; i < loaded; i++) {
      if (i)
        fputc(',', out);
      print_entry(out, &here[i], true, "");
    }
    fprintf(out, "],\"installed\":[");
  } else {
    fprintf(out, "\n== Threaded libraries (runtime guards) ==\nloaded in this process:%s\n", loaded ? "" : " none");
    for (size_t i = 0; i < loaded; i++)
      print_entry(out, &here[i], false, "  ");
    fprintf(out, "installed (what the guards do in a program that loads it):\n");
  }
  print_installed(out, json);
  if (json)
    fprintf(out, "]}");
}
