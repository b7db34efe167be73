/* The report as text (cpuexec_openmp_report_describe), and the writer that
 * prints it at exit when CPUEXEC_OPENMP_REPORT asks. */
#include <cpuexec/errors.h>
#include <cpuexec/interop.h>
#include <cpuexec/runtimes.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"
#include "core/error.h"
#include "openmp_counts.h"
#include "openmp_internal.h"
#include "core/strbuf.h"

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash != NULL ? slash + 1 : path;
}

#define APPEND(...) cpuexec__bounded_printf(&out, __VA_ARGS__)

CPUEXEC_EXPORT int cpuexec_openmp_report_describe(char *buf, size_t size) {
  if (buf == NULL && size > 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "buf: NULL with size %zu; pass a buffer or size 0", size);
  cpuexec_openmp_state status;
  cpuexec_openmp_counters c;
  cpuexec_openmp_status_get(&status);
  cpuexec_openmp_counters_get(&c);
  size_t n = 0;
  int rc = cpuexec_openmp_report_get(NULL, 0, &n);
  cpuexec_openmp_report_entry *entries = n > 0 ? calloc(n, sizeof *entries) : NULL;
  if (rc == 0 && n > 0 && entries == NULL)
    return cpuexec__fail(CPUEXEC_ENOMEM, "report: %zu entries", n);
  if (rc == 0 && n > 0)
    rc = cpuexec_openmp_report_get(entries, n, &n);
  if (rc != 0) {
    free(entries);
    return rc;
  }
  cpuexec__bounded out = cpuexec__bounded_on(buf, size);
  APPEND("OpenMP detection: %s\n", status.reason);
  APPEND("runtimes: libomp %s, libgomp %s%s%s\n", status.libomp_loaded ? status.libomp_path : "(not loaded)",
         status.libgomp_loaded ? status.libgomp_path : "(not loaded)", status.chained_tool ? "; chained tool " : "",
         status.chained_tool ? status.chained_tool_name : "");
  APPEND("regions in callbacks: %llu (inline %llu, more than one thread %llu); top-level in sessions: %llu; "
         "top-level outside sessions: %llu; nested: %llu\n",
         (unsigned long long)c.regions_in_callbacks, (unsigned long long)c.regions_inline,
         (unsigned long long)c.regions_multithreaded, (unsigned long long)c.toplevel_regions_in_sessions,
         (unsigned long long)c.toplevel_regions_outside, (unsigned long long)c.nested_regions);
  APPEND("OpenMP worker threads created: %llu\n", (unsigned long long)c.openmp_workers_created);
  APPEND("%-40s %10s %10s %10s %10s %9s\n", "calling function (object+offset)", "inline-cb", "multi-cb", "top-sess",
         "top-other", "team r/a");
  for (size_t i = 0; i < n; i++) {
    const cpuexec_openmp_report_entry *e = &entries[i];
    char where[200];
    snprintf(where, sizeof where, "%s (%s+0x%llx)", e->function[0] != '\0' ? e->function : "?",
             e->object[0] != '\0' ? base_name(e->object) : "?", (unsigned long long)e->offset);
    APPEND("%-40s %10llu %10llu %10llu %10llu %4u/%-4u\n", where, (unsigned long long)e->inline_in_callbacks,
           (unsigned long long)e->multithreaded_in_callbacks, (unsigned long long)e->toplevel_in_sessions,
           (unsigned long long)e->toplevel_outside, e->max_requested_threads, e->max_actual_threads);
  }
  if (n == 0)
    APPEND("(no OpenMP region seen)\n");
  free(entries);
  return (int)out.len;
}

/* CPUEXEC_OPENMP_REPORT=FILE (or "-" for stderr): write the report when the
 * process exits (cpuexec-info --openmp-report sets it for the program it
 * runs). Registered at load, so it runs before the runtimes' destructors. */
static void write_report_at_exit(void) {
  char *path = cpuexec__env_copy("CPUEXEC_OPENMP_REPORT", NULL); /* the blanks rule: core/env.h */
  if (path == NULL)
    return;
  int length = cpuexec_openmp_report_describe(NULL, 0);
  char *text = length > 0 ? malloc((size_t)length + 1) : NULL;
  if (text == NULL) {
    free(path);
    return;
  }
  cpuexec_openmp_report_describe(text, (size_t)length + 1);
  /* And the threaded libraries the process loaded, with what the guards do. */
  int libs_length = cpuexec_runtimes_describe(NULL, 0);
  char *libs = libs_length > 0 ? malloc((size_t)libs_length + 1) : NULL;
  if (libs != NULL)
    cpuexec_runtimes_describe(libs, (size_t)libs_length + 1);
  FILE *out = strcmp(path, "-") == 0 ? stderr : fopen(path, "w");
  if (out != NULL) {
    fputs(text, out);
    if (libs != NULL)
      fprintf(out, "threaded libraries (runtime guards, doc/runtime-guards.md):\n%s", libs);
    if (out != stderr)
      fclose(out);
  }
  free(libs);
  free(text);
  free(path);
}

__attribute__((constructor)) static void report_at_exit_if_asked(void) {
  if (cpuexec__env_raw("CPUEXEC_OPENMP_REPORT") != NULL)
    atexit(write_report_at_exit);
}
