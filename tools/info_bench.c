/* cpuexec-info --bench.
 *
 * Dispatch overhead: the time of one empty parallel region with every
 * participant taking part (total = participants, grain 1), back to back,
 * on the default executor (CPUEXEC_POLICY or the resolution default), next
 * to the same region on each OpenMP runtime installed: GOMP_parallel with
 * the same thread count, which both libgomp and LLVM libomp export.
 *
 * The library must not link an OpenMP runtime, so the tool loads each one
 * with dlopen in a forked child (one runtime per process, so two runtimes
 * never share an address space and the parent never holds OpenMP threads)
 * and reads the result back through a pipe. Each runtime keeps its own
 * defaults for waiting (libomp KMP_BLOCKTIME, libgomp GOMP_SPINCOUNT), as an
 * application would; the report says so.
 *
 * Then a short run with counters on shows what the executor did, and the
 * planner's constants are measured here (tools/info_plan.c). */
#include "info_bench.h"
#include "info_plan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifndef _WIN32
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <cpuexec.h>

/* An OpenMP runtime is not instrumented for ThreadSanitizer, which then
 * reports its internal synchronisation as races; a sanitizer build's
 * timings mean nothing anyway, so such a build does not time OpenMP. */
#if defined(__SANITIZE_THREAD__)
#define TIME_OPENMP 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TIME_OPENMP 0
#endif
#endif
#ifndef TIME_OPENMP
#define TIME_OPENMP 1
#endif

/* Per measurement: time-bounded batches, median batch. */
#define BATCHES 5
#define BATCH_NS 200000000ull

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ns per region: the median over BATCHES batches of ~BATCH_NS each. */
static double time_regions(void (*region)(void *), void *ctx) {
  double samples[BATCHES];
  for (int i = 0; i < 1000; i++) region(ctx); /* warm up: threads started and spinning */
  for (int b = 0; b < BATCHES; b++) {
    uint64_t start = now_ns(), elapsed = 0;
    long n = 0;
    do {
      for (int i = 0; i < 100; i++) region(ctx);
      n += 100;
      elapsed = now_ns() - start;
    } while (elapsed < BATCH_NS);
    samples[b] = (double)elapsed / (double)n;
  }
  qsort(samples, BATCHES, sizeof samples[0], cmp_double);
  return samples[BATCHES / 2];
}

/* ---- OpenMP, in a child ---------------------------------------------------- */

#ifdef _WIN32
/* Windows has no fork to keep each runtime in a process of its own: the
 * OpenMP rows are not timed there. */
static double time_openmp(const char *const *names, unsigned threads, const char **loaded) {
  (void)names;
  (void)threads;
  (void)loaded;
  return -1;
}
#else
typedef void (*gomp_parallel_fn)(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);

typedef struct omp_ctx {
  gomp_parallel_fn parallel;
  unsigned threads;
} omp_ctx;

static void omp_body(void *data) { (void)data; }

static void omp_region(void *arg) {
  omp_ctx *c = arg;
  c->parallel(omp_body, NULL, c->threads, 0);
}

/* Loads the first of names that exists and times its regions in a child.
 * Returns ns per region, or a negative value when no such runtime loads. */
static double time_openmp(const char *const *names, unsigned threads, const char **loaded) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    double result = -1;
    int index = -1;
    for (int i = 0; names[i] && index < 0; i++) {
      void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
      if (!lib) continue;
      gomp_parallel_fn parallel = (gomp_parallel_fn)(uintptr_t)dlsym(lib, "GOMP_parallel");
      if (!parallel) continue;
      index = i;
      omp_ctx c = {parallel, threads};
      result = time_regions(omp_region, &c);
    }
    struct {
      double ns;
      int index;
    } msg = {result, index};
    ssize_t w = write(fds[1], &msg, sizeof msg);
    _exit(w == (ssize_t)sizeof msg ? 0 : 1);
  }
  close(fds[1]);
  struct {
    double ns;
    int index;
  } msg = {-1, -1};
  ssize_t r = read(fds[0], &msg, sizeof msg);
  close(fds[0]);
  int status;
  waitpid(pid, &status, 0);
  if (r != (ssize_t)sizeof msg || msg.index < 0) return -1;
  *loaded = names[msg.index];
  return msg.ns;
}
#endif

/* ---- libcpuexec ------------------------------------------------------------ */

typedef struct exec_ctx {
  cpuexec_executor *exec;
  int64_t total;
  int failures;
} exec_ctx;

static int empty_range(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  (void)begin;
  (void)end;
  return 0;
}

static void exec_region(void *arg) {
  exec_ctx *c = arg;
  if (cpuexec_parallel_for(c->exec, c->total, 1, NULL, empty_range, 0) != 0) c->failures++;
}

static int nested_range(void *ctx, int64_t begin, int64_t end) {
  cpuexec_executor *exec = ctx;
  (void)begin;
  (void)end;
  return cpuexec_parallel_for(exec, 4, 1, NULL, empty_range, 0); /* runs inline */
}

static void show_counters(FILE *out, cpuexec_executor *exec, uint32_t threads) {
  int rc = cpuexec_executor_counters_enable(exec);
  if (rc != 0) {
    fprintf(out, "counters: unavailable (%s: %s)\n", cpuexec_error_name(rc), cpuexec_error_message());
    return;
  }
  cpuexec_counters before, after;
  cpuexec_executor_counters_get(exec, &before);
  /* A scripted short run: regions of every participant, one-grain regions
   * (inline), nested calls, and a pause long enough for workers to park. */
  for (int i = 0; i < 1000; i++) cpuexec_parallel_for(exec, threads, 1, NULL, empty_range, 0);
  for (int i = 0; i < 100; i++) cpuexec_parallel_for(exec, 1, 1, NULL, empty_range, 0);
  cpuexec_parallel_for(exec, threads, 1, exec, nested_range, 0);
  struct timespec pause = {0, 20000000};
  nanosleep(&pause, NULL);
  for (int i = 0; i < 10; i++) cpuexec_parallel_for(exec, threads, 1, NULL, empty_range, 0);
  cpuexec_executor_counters_get(exec, &after);
  fprintf(out, "counters (1010 full regions, 100 one-grain regions, %u nested calls, one 20 ms pause):\n",
          threads);
#define SHOW(field) fprintf(out, "  %-18s %llu\n", #field, (unsigned long long)(after.field - before.field))
  SHOW(dispatches);
  SHOW(nested_inline);
  SHOW(limited_inline);
  SHOW(spins_found_work);
  SHOW(parks);
  SHOW(wakeups);
  SHOW(caller_waits);
  SHOW(worker_active_ns);
  SHOW(takeovers);
  SHOW(late_arrivals);
  SHOW(cadence_hits);
  SHOW(cadence_misses);
  SHOW(concurrent_regions);
  SHOW(participants_run);
  SHOW(caller_wait_ns);
  SHOW(bound_inline);
  SHOW(occupied_inline);
  SHOW(stood_aside);
  SHOW(step_offs);
  SHOW(long_spins);
  SHOW(parallel_regions);
  SHOW(node_slots_taken);
  SHOW(node_slot_waits);
#undef SHOW
}

int info_bench_run(FILE *out) {
  const cpuexec_resolved *resolved = NULL;
  if (cpuexec_policy_resolve_default(&resolved) != 0) {
    fprintf(out, "bench: the default policy does not resolve: %s\n", cpuexec_error_message());
    return 1;
  }
  uint32_t threads = cpuexec_resolved_effective_threads(resolved);

  /* OpenMP first, while this process has no threads of its own to fork. */
  static const char *const libomp_names[] = {"libomp.so.5", "libomp.so", NULL};
  static const char *const libgomp_names[] = {"libgomp.so.1", NULL};
  const char *libomp = NULL, *libgomp = NULL;
  double omp_ns = TIME_OPENMP ? time_openmp(libomp_names, threads, &libomp) : 0;
  double gomp_ns = TIME_OPENMP ? time_openmp(libgomp_names, threads, &libgomp) : 0;
#ifdef _WIN32
  const char *absent = "not timed on Windows (each runtime is timed in a forked child)";
#else
  const char *absent = TIME_OPENMP ? "not installed" : "not timed in a ThreadSanitizer build";
#endif

  cpuexec_executor *exec = NULL;
  if (cpuexec_registry_acquire(cpuexec_registry_default(), resolved, &exec) != 0) {
    fprintf(out, "bench: the default executor could not be made: %s\n", cpuexec_error_message());
    return 1;
  }
  exec_ctx c = {exec, threads, 0};
  double ours = time_regions(exec_region, &c);

  fprintf(out, "dispatch overhead: one empty region of %u participants, back to back (median of %d batches)\n",
          threads, BATCHES);
  fprintf(out, "  %-34s %10.0f ns   1.00x\n", "libcpuexec default executor", ours);
  if (omp_ns > 0) fprintf(out, "  %-34s %10.0f ns   %.2fx\n", libomp, omp_ns, omp_ns / ours);
  else fprintf(out, "  %-34s %s\n", "LLVM libomp", absent);
  if (gomp_ns > 0) fprintf(out, "  %-34s %10.0f ns   %.2fx\n", libgomp, gomp_ns, gomp_ns / ours);
  else fprintf(out, "  %-34s %s\n", "GNU libgomp", absent);
  fprintf(out, "  (ratios are runtime / libcpuexec; each runtime waits with its own defaults)\n");
  if (c.failures) fprintf(out, "  %d libcpuexec regions failed: %s\n", c.failures, cpuexec_error_message());

  show_counters(out, exec, threads);
  cpuexec_executor_release(exec);
  int plan_rc = info_plan_calibrate(out);
  return c.failures != 0 || plan_rc != 0;
}
