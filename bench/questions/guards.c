/* What the runtime guards cost per callback, with none of the guarded
 * libraries loaded and with each of them loaded (OpenBLAS's pthreads
 * build, BLIS's pthreads and OpenMP builds, oneTBB, and all of them),
 * against the same build with the guards switched off (the OpenMP guard's
 * test hook cpuexec__test_guards_off: its hook then runs the OpenMP part
 * alone, as a library without these guards did). Linked with the white-box
 * build for that hook, so every row runs the same machine code.
 *
 *   inline call   cpuexec_parallel_for of one range on the caller (a region
 *                 of one participant and one callback): the hook's begin,
 *                 per-callback and end steps plus the call itself. With a
 *                 process-wide library loaded every call is a first-in and
 *                 a last-out of the hold: the library's setting is saved,
 *                 set to one thread and restored each time.
 *   64 in one    one participant running 64 callbacks, as a region's
 *   participant   participant runs its share (the white-box build's
 *                 cpuexec__test_participant_share): ns per callback. The
 *                 per-participant steps (a hold's first-in and last-out,
 *                 oneTBB's arena entry) are paid once for the 64.
 *   2-part region a region of the 2-thread executor, one callback on each
 *                 participant (CPUEXEC_FOR_EVERY_PARTICIPANT): the hold's
 *                 count is shared by both; only the first in and the last
 *                 out touch the library.
 * Each state runs in a child of its own (the libraries are dlopen()ed
 * there, so every row starts from a process with only what it names). The
 * inline call is the median of 7 batches of the calling thread's CPU time;
 * the region of two, the fastest of 7 batches of wall time. Budgets (issue
 * 20): "none" within 5 ns of "no guards"; each library within 40 ns.
 *
 * Usage: guards [iterations]          the table (inline and region columns)
 *        guards --mode=round|smoke [--quick]
 *                                     bench/run.sh's table protocol: the
 *                                     inline call of every state, as
 *                                     "M libcpuexec guard_<state> ns" with
 *                                     "M libcpuexec-noguards guard_<state> ns"
 *                                     from the same round beside it
 *        guards ITER --child STATE [--inline-only]   one state (what both run)
 *        guards ITER --library PATH    one row, PATH dlopen()ed */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dlfcn.h>

#include <cpuexec.h>
#include "../clock.h"
#include "../stats.h"

/* The white-box build's entry points this program uses (test hooks: the
 * shipped library has neither). */
extern _Atomic int cpuexec__test_guards_off;
int cpuexec__test_participant_share(cpuexec_executor *exec, int64_t callbacks, cpuexec_range_fn fn, void *ctx);

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
/* The cpuexec-tbb module of this build: a statically linked libcpuexec has
 * no directory of its own to find it in. */
#ifndef GUARD_TBB_MODULE
#define GUARD_TBB_MODULE ""
#endif

#define BATCHES 7
static long iterations = 200000;

typedef struct state {
  const char *name; /* the table's row */
  const char *key;  /* the metric's suffix */
  bool guards_off;
  const char *libs[3];
} state;

static const state states[] = {
    {"no guards", "noguards", true, {NULL}},
    {"none", "none", false, {NULL}},
    {"openblas-pthread", "openblas_pthread", false, {GUARD_OPENBLAS_PTHREAD_LIB, NULL}},
    {"blis-pthread", "blis_pthread", false, {GUARD_BLIS_PTHREAD_LIB, NULL}},
    {"blis-openmp", "blis_openmp", false, {GUARD_BLIS_OPENMP_LIB, NULL}},
    {"onetbb", "onetbb", false, {GUARD_TBB_LIB, NULL}},
    {"all three kinds", "all", false, {GUARD_OPENBLAS_PTHREAD_LIB, GUARD_BLIS_PTHREAD_LIB, GUARD_TBB_LIB}},
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

#define SHARE_CALLBACKS 64

/* ns per callback of one participant of exec running SHARE_CALLBACKS
 * callbacks (median of the batches, thread CPU time). */
static double time_share(cpuexec_executor *exec) {
  double v[BATCHES];
  long participants = iterations / SHARE_CALLBACKS > 0 ? iterations / SHARE_CALLBACKS : 1;
  for (int b = 0; b < BATCHES; b++) {
    double t0 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < participants; i++)
      if (cpuexec__test_participant_share(exec, SHARE_CALLBACKS, empty_range, NULL) != 0)
        abort();
    v[b] = (bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / (double)(participants * SHARE_CALLBACKS);
  }
  return bench_median(v, BATCHES);
}

/* Loads the libraries, has the guards find them, prints "inline share
 * region runtimes-found" (region -1 with inline_only). */
static int child(const state *s, bool inline_only) {
  if (GUARD_TBB_MODULE[0] != '\0')
    setenv("CPUEXEC_TBB_MODULE", GUARD_TBB_MODULE, 0);
  for (int i = 0; i < 3 && s->libs[i] != NULL; i++)
    if (s->libs[i][0] == '\0' || dlopen(s->libs[i], RTLD_NOW | RTLD_GLOBAL) == NULL)
      return 3; /* not installed */
  atomic_store(&cpuexec__test_guards_off, s->guards_off ? 1 : 0);
  size_t n = 0;
  cpuexec_runtimes_get(NULL, 0, &n); /* finds what was just loaded */
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
  double share_ns = time_share(exec);
  double region_ns = inline_only ? -1 : time_calls(exec, 2, 0, CPUEXEC_FOR_EVERY_PARTICIPANT, CLOCK_MONOTONIC);
  printf("%.2f %.2f %.1f %zu\n", inline_ns, share_ns, region_ns, n);
  cpuexec_executor_release(exec);
  return 0;
}

/* Runs one state in a child; false when it could not run (not installed). */
static bool run_state(const char *self, size_t index, bool inline_only, double *inline_ns, double *share_ns,
                      double *region_ns) {
  char command[1400];
  snprintf(command, sizeof command, "'%s' %ld --child %zu%s", self, iterations, index,
           inline_only ? " --inline-only" : "");
  FILE *out = popen(command, "r");
  if (out == NULL)
    return false;
  size_t found = 0;
  bool ok = fscanf(out, "%lf %lf %lf %zu", inline_ns, share_ns, region_ns, &found) == 4;
  return pclose(out) == 0 && ok;
}

/* bench/run.sh's round: every state once, each loaded state's row beside
 * the "no guards" figure of this round. */
static int round_rows(const char *self) {
  double base = 0, base_share = 0, region = 0;
  if (!run_state(self, 0, true, &base, &base_share, &region)) {
    printf("FAIL guards: the \"no guards\" child did not run\n");
    return 1;
  }
  for (size_t i = 1; i < STATES; i++) {
    double ns = 0, share = 0;
    if (!run_state(self, i, true, &ns, &share, &region))
      continue; /* not installed: no row */
    printf("M libcpuexec guard_%s ns %.6g\n", states[i].key, ns);
    printf("M libcpuexec-noguards guard_%s ns %.6g\n", states[i].key, base);
    printf("M libcpuexec guard_%s_in64 ns %.6g\n", states[i].key, share);
    printf("M libcpuexec-noguards guard_%s_in64 ns %.6g\n", states[i].key, base_share);
  }
  return 0;
}

static int table(const char *self) {
  printf("runtime guards: cost per callback, %d batches of %ld calls (inline: median, thread CPU time; region: "
         "fastest, wall time), each state in a child; delta: the row minus \"no guards\"\n",
         BATCHES, iterations);
  printf("%-18s %14s %8s %16s %8s %18s %8s\n", "libraries loaded", "inline call ns", "delta", "64 in one ns", "delta",
         "2-part region ns", "delta");
  double base_inline = 0, base_share = 0, base_region = 0;
  int failures = 0;
  for (size_t i = 0; i < STATES; i++) {
    double inline_ns = 0, share_ns = 0, region_ns = 0;
    if (!run_state(self, i, false, &inline_ns, &share_ns, &region_ns)) {
      if (i == 0)
        failures++;
      printf("%-18s %14s\n", states[i].name, i <= 1 ? "FAILED" : "(not installed)");
      continue;
    }
    if (i == 0) {
      base_inline = inline_ns, base_share = share_ns, base_region = region_ns;
      printf("%-18s %14.1f %8s %16.2f %8s %18.1f %8s\n", states[i].name, inline_ns, "", share_ns, "", region_ns, "");
    } else {
      printf("%-18s %14.1f %+8.1f %16.2f %+8.2f %18.1f %+8.1f\n", states[i].name, inline_ns, inline_ns - base_inline,
             share_ns, share_ns - base_share, region_ns, region_ns - base_region);
    }
  }
  return failures == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc > 3 && strcmp(argv[2], "--library") == 0) {
    iterations = atol(argv[1]);
    const state mine = {argv[3], "library", false, {argv[3], NULL, NULL}};
    return child(&mine, false);
  }
  if (argc > 3 && strcmp(argv[2], "--child") == 0) {
    iterations = atol(argv[1]);
    size_t index = (size_t)atol(argv[3]);
    return index < STATES ? child(&states[index], argc > 4 && strcmp(argv[4], "--inline-only") == 0) : 2;
  }
  char self[1024];
  ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0)
    return 1;
  self[length] = '\0';
  const char *mode = NULL;
  bool quick = false;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--mode=", 7) == 0)
      mode = argv[i] + 7;
    else if (strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (strncmp(argv[i], "--", 2) == 0)
      ; /* the protocol's other options (--delay-len=N) */
    else
      iterations = atol(argv[i]);
  }
  if (mode != NULL) {
    iterations = strcmp(mode, "smoke") == 0 ? 200 : quick ? 5000 : 20000;
    return round_rows(self);
  }
  return table(self);
}
