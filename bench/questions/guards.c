/* What the runtime guards cost per callback, with none of the guarded
 * libraries loaded and with each of them loaded (OpenBLAS's pthreads
 * build, BLIS's pthreads and OpenMP builds, oneTBB, and all of them),
 * through the public API only.
 *
 *   inline call   cpuexec_parallel_for of one range on the caller (a region
 *                 of one participant and one callback): the hook's begin,
 *                 per-callback and end steps plus the call itself. With a
 *                 process-wide library loaded every call is a first-in and
 *                 a last-out of the hold: the library's setting is saved,
 *                 set to one thread and restored each time.
 *   2-part region a region of the 2-thread executor, one callback on each
 *                 participant (CPUEXEC_FOR_EVERY_PARTICIPANT): the hold's
 *                 count is shared by both; only the first in and the last
 *                 out touch the library.
 * Each state runs in a child of its own (the libraries are dlopen()ed
 * there, so every row starts from a process with only what it names). The
 * inline call is the median of 7 batches of the calling thread's CPU time;
 * the region of two, the fastest of 7 batches of wall time. The delta
 * column is the row minus "none" from the same run. Budgets: "none" within 5 ns of the
 * library without these guards; each library loaded, within 40 ns of "none".
 *
 * Usage: guards [iterations]          the table
 *        guards ITER --child STATE    one row (what the table runs)
 *        guards ITER --library PATH   one row, PATH dlopen()ed */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cpuexec.h>
#include "../clock.h"
#include "../stats.h"

#ifndef GUARD_OPENBLAS_PTHREAD_LIB
#define GUARD_OPENBLAS_PTHREAD_LIB ""
#endif
#ifndef GUARD_BLIS_PTHREAD_LIB
#define GUARD_BLIS_PTHREAD_LIB ""
#endif
#ifndef GUARD_BLIS_OPENMP_LIB
#define GUARD_BLIS_OPENMP_LIB ""
#endif
#ifndef GUARD_TBB_LIB
#define GUARD_TBB_LIB ""
#endif

#define BATCHES 7
static long iterations = 200000;

typedef struct state {
  const char *name;
  const char *libs[3];
} state;

static const state states[] = {
    {"none", {NULL}},
    {"openblas-pthread", {GUARD_OPENBLAS_PTHREAD_LIB, NULL}},
    {"blis-pthread", {GUARD_BLIS_PTHREAD_LIB, NULL}},
    {"blis-openmp", {GUARD_BLIS_OPENMP_LIB, NULL}},
    {"onetbb", {GUARD_TBB_LIB, NULL}},
    {"all three kinds", {GUARD_OPENBLAS_PTHREAD_LIB, GUARD_BLIS_PTHREAD_LIB, GUARD_TBB_LIB}},
};
#define STATES (sizeof states / sizeof states[0])

static int empty_range(void *arg, int64_t begin, int64_t end) {
  (void)arg, (void)begin, (void)end;
  return 0;
}

/* clock: the calling thread's CPU time for the inline call (one thread
 * does all the work, and a busy machine's preemption is not counted), the
 * wall clock for the region of two; the median of the batches for the
 * first, the fastest batch for the second (on a busy machine every other
 * batch waits for a descheduled worker). */
static double time_calls(cpuexec_executor *exec, int64_t total, int32_t max, int flags, clockid_t clock) {
  double v[BATCHES];
  for (int b = 0; b < BATCHES; b++) {
    double t0 = bench_clock_ns(clock);
    for (long i = 0; i < iterations; i++)
      if (cpuexec_parallel_for_flags(exec, total, 1, NULL, empty_range, max, flags) != 0)
        abort();
    v[b] = (bench_clock_ns(clock) - t0) / (double)iterations;
  }
  if (clock == CLOCK_MONOTONIC) {
    bench_sort(v, BATCHES);
    return v[0];
  }
  return bench_median(v, BATCHES);
}

/* Loads the libraries, has the guards find them, prints "inline region". */
static int child(const char *const *libs) {
  for (int i = 0; i < 3 && libs[i] != NULL; i++)
    if (libs[i][0] == '\0' || dlopen(libs[i], RTLD_NOW | RTLD_GLOBAL) == NULL)
      return 3; /* not installed */
  /* Looks for newly loaded libraries (a build without it: the OpenMP status does). */
  int (*runtimes_get)(void *, size_t, size_t *);
  *(void **)&runtimes_get = dlsym(RTLD_DEFAULT, "cpuexec_runtimes_get");
  size_t n = 0;
  if (runtimes_get != NULL)
    runtimes_get(NULL, 0, &n);
  cpuexec_openmp_state s;
  cpuexec_openmp_status_get(&s);
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = 2;
  policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
  cpuexec_resolved *resolved = NULL;
  cpuexec_executor *exec = NULL;
  if (cpuexec_policy_resolve(&policy, NULL, &resolved) != 0 || cpuexec_executor_create(resolved, &exec) != 0) {
    fprintf(stderr, "guards: %s\n", cpuexec_error_message());
    return 1;
  }
  cpuexec_resolved_destroy(resolved);
  time_calls(exec, 1, 1, 0, CLOCK_THREAD_CPUTIME_ID); /* warm up */
  double inline_ns = time_calls(exec, 1, 1, 0, CLOCK_THREAD_CPUTIME_ID);
  double region_ns = time_calls(exec, 2, 0, CPUEXEC_FOR_EVERY_PARTICIPANT, CLOCK_MONOTONIC);
  printf("%.1f %.1f %zu\n", inline_ns, region_ns, n);
  cpuexec_executor_release(exec);
  return 0;
}

/* Runs one state in a child; false when it could not run (not installed). */
static bool run_state(const char *self, size_t index, double *inline_ns, double *region_ns) {
  char command[1400];
  snprintf(command, sizeof command, "'%s' %ld --child %zu", self, iterations, index);
  FILE *out = popen(command, "r");
  if (out == NULL)
    return false;
  size_t found = 0;
  bool ok = fscanf(out, "%lf %lf %zu", inline_ns, region_ns, &found) == 3;
  return pclose(out) == 0 && ok;
}

int main(int argc, char **argv) {
  if (argc > 1)
    iterations = atol(argv[1]);
  if (argc > 3 && strcmp(argv[2], "--child") == 0) {
    size_t index = (size_t)atol(argv[3]);
    return index < STATES ? child(states[index].libs) : 2;
  }
  if (argc > 3 && strcmp(argv[2], "--library") == 0) {
    const char *libs[3] = {argv[3], NULL, NULL};
    return child(libs);
  }
  char self[1024];
  ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0)
    return 1;
  self[length] = '\0';
  printf("runtime guards: cost per callback, %d batches of %ld calls (inline: median, thread CPU time; region: "
         "fastest, wall time), each state in a child\n",
         BATCHES, iterations);
  printf("%-18s %14s %8s %20s %8s\n", "libraries loaded", "inline call ns", "delta", "2-part region ns", "delta");
  double base_inline = 0, base_region = 0;
  int failures = 0;
  for (size_t i = 0; i < STATES; i++) {
    double inline_ns = 0, region_ns = 0;
    if (!run_state(self, i, &inline_ns, &region_ns)) {
      if (i == 0)
        failures++;
      printf("%-18s %14s\n", states[i].name, i == 0 ? "FAILED" : "(not installed)");
      continue;
    }
    if (i == 0) {
      base_inline = inline_ns, base_region = region_ns;
      printf("%-18s %14.1f %8s %20.1f %8s\n", states[i].name, inline_ns, "", region_ns, "");
    } else {
      printf("%-18s %14.1f %+8.1f %20.1f %+8.1f\n", states[i].name, inline_ns, inline_ns - base_inline, region_ns,
             region_ns - base_region);
    }
  }
  return failures == 0 ? 0 : 1;
}
