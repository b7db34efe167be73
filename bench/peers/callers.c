/* libcpuexec benchmarks: several calling threads on one pool (issue 18).
 *
 * One program per backend, like bench/common.c: this driver plus one
 * backend file. K = 1, 2, 4 calling threads each repeat: S us of serial
 * work (S = 0, 50, 200), then a parallel region of 64 items that is W =
 * 200 us of work in all, chunk ceil(64 / participants) (BENCH_GRAIN=1: 1).
 * Rows (one sample per round each), metric kK_sS_<what>:
 *   rps    regions per second, all callers together
 *   ceil   rps over the ceiling min(K / (W/P + S), ncpu / (W + S)), with
 *          W and S as measured on one thread in this process (so a
 *          calibration error moves both sides)
 *   p50    median time of one region (us), over every region of the sample
 *   p99    its 99th percentile (us)
 *   fair   fewest regions of one caller / most of another (1 when K = 1)
 *   cpu    CPU time of the process per region (us; getrusage)
 * Backends: "<name>" shares the backend's one pool among the callers
 * (libcpuexec: one executor; oneTBB: parallel_for in each caller, the
 * implicit arena; pthreadpool: one pool; OpenMP: a team per calling
 * thread, the runtime's own rule); "<name>-pools" gives each caller its
 * own pool (libcpuexec executors, oneTBB task_arenas, pthreadpools) where
 * the backend has bench_backend_pool_open.
 *
 * Task rows (backends with bench_backend_tasks: libcpuexec's task group,
 * oneTBB's task_group, OpenMP tasks): tasks_10us and tasks_100us, 10000
 * independent tasks of 10 / 100 us submitted from one thread and waited
 * for, in tasks per second.
 *
 * Every region's indices are checked (each exactly once); a wrong result
 * prints FAIL and exits 1. --mode=round|smoke, --quick; --delay-len is
 * accepted and ignored. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../clock.h"
#include "driver.h"
#include "../stats.h"

#define ITEMS 64
#define MAX_CALLERS 4
#define WORK_NS 200000.0

static unsigned participants = 2;
static int64_t chunk = 1;
static double iters_per_ns; /* of spin() */

__attribute__((noinline)) static void spin(int64_t iterations) {
  float a = 0.0f;
  for (int64_t i = 0; i < iterations; i++) a += (float)i;
  if (a < 0.0f) printf("%f\n", (double)a);
}

static void die(const char *what) {
  printf("FAIL %s: %s\n", bench_backend_name, what);
  fflush(stdout);
  exit(1);
}

/* The fastest of a few runs: the machine's speed, not its load. */
static double time_spin(int64_t iterations) {
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    double t0 = bench_now_ns();
    spin(iterations);
    double t = bench_now_ns() - t0;
    if (t < best) best = t;
  }
  return best;
}

typedef struct caller {
  void *pool; /* NULL: the backend's shared pool */
  int64_t item_iters, serial_iters;
  int max_regions; /* smoke: stop after this many */
  pthread_barrier_t *start;
  _Atomic int *stop;
  unsigned char hits[ITEMS];
  double *lat;
  int lat_cap;
  _Atomic int regions;
} caller;

static int body(void *ctx, int64_t begin, int64_t end) {
  caller *c = ctx;
  for (int64_t i = begin; i < end; i++) {
    spin(c->item_iters);
    c->hits[i]++;
  }
  return 0;
}

static void *caller_main(void *arg) {
  caller *c = arg;
  pthread_barrier_wait(c->start);
  while (!atomic_load_explicit(c->stop, memory_order_relaxed) && c->regions < c->max_regions) {
    spin(c->serial_iters);
    memset(c->hits, 0, sizeof c->hits);
    double t0 = bench_now_ns();
    if (c->pool)
      bench_backend_pool_for(c->pool, ITEMS, chunk, body, c);
    else
      bench_backend_for(ITEMS, chunk, body, c);
    double t = bench_now_ns() - t0;
    for (int i = 0; i < ITEMS; i++)
      if (c->hits[i] != 1) die("an index did not run exactly once");
    int r = atomic_load_explicit(&c->regions, memory_order_relaxed);
    if (r < c->lat_cap) c->lat[r] = t / 1e3;
    atomic_store_explicit(&c->regions, r + 1, memory_order_relaxed);
  }
  return NULL;
}

static double cpu_ns(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e9 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e3;
}

static void emit(const char *row, int k, int s, const char *what, const char *unit, double v) {
  printf("M %s k%d_s%d_%s %s %.6g\n", row, k, s, what, unit, v);
}

static void run_row(const char *row, bool own_pools, int k, int s_us, double duration_ns, int max_regions,
                    double work_ns, double serial_ns, long ncpu) {
  caller cs[MAX_CALLERS];
  pthread_t t[MAX_CALLERS];
  pthread_barrier_t start;
  _Atomic int stop = 0;
  pthread_barrier_init(&start, NULL, (unsigned)k + 1);
  int cap = 200000;
  for (int i = 0; i < k; i++) {
    memset(&cs[i], 0, sizeof cs[i]);
    atomic_init(&cs[i].regions, 0);
    cs[i].pool = own_pools ? bench_backend_pool_open(participants) : NULL;
    if (own_pools && !cs[i].pool) die("a pool per caller did not start");
    cs[i].item_iters = (int64_t)(WORK_NS / ITEMS * iters_per_ns + 0.5);
    cs[i].serial_iters = (int64_t)(s_us * 1e3 * iters_per_ns + 0.5);
    cs[i].max_regions = max_regions;
    cs[i].start = &start;
    cs[i].stop = &stop;
    cs[i].lat_cap = cap;
    cs[i].lat = malloc(sizeof(double) * (size_t)cap);
    if (!cs[i].lat) die("out of memory");
  }
  /* Warm-up: a few regions per pool before the clock starts. */
  for (int i = 0; i < k; i++)
    for (int w = 0; w < 3; w++) {
      memset(cs[i].hits, 0, sizeof cs[i].hits);
      if (cs[i].pool)
        bench_backend_pool_for(cs[i].pool, ITEMS, chunk, body, &cs[i]);
      else
        bench_backend_for(ITEMS, chunk, body, &cs[i]);
    }
  for (int i = 0; i < k; i++)
    if (pthread_create(&t[i], NULL, caller_main, &cs[i]) != 0) die("pthread_create");
  double c0 = cpu_ns();
  pthread_barrier_wait(&start);
  double t0 = bench_now_ns();
  while (bench_now_ns() - t0 < duration_ns) {
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    bool all_done = true;
    for (int i = 0; i < k; i++) all_done = all_done && atomic_load(&cs[i].regions) >= max_regions;
    if (all_done) break;
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < k; i++) pthread_join(t[i], NULL);
  double elapsed = bench_now_ns() - t0, cpu = cpu_ns() - c0;
  pthread_barrier_destroy(&start);
  int total = 0, fewest = cs[0].regions, most = cs[0].regions;
  for (int i = 0; i < k; i++) {
    int r = cs[i].regions;
    total += r;
    if (r < fewest) fewest = r;
    if (r > most) most = r;
  }
  double *all = malloc(sizeof(double) * (size_t)(total ? total : 1));
  int n = 0;
  for (int i = 0; i < k; i++)
    for (int r = 0; r < (int)cs[i].regions && r < cap; r++) all[n++] = cs[i].lat[r];
  bench_sort(all, (size_t)n);
  double rps = total / (elapsed / 1e9);
  double w = work_ns, s = serial_ns;
  double ceiling = 1e9 * (k / (w / participants + s) < ncpu / (w + s) ? k / (w / participants + s) : ncpu / (w + s));
  emit(row, k, s_us, "rps", "reg/s", rps);
  emit(row, k, s_us, "ceil", "ratio", rps / ceiling);
  emit(row, k, s_us, "p50", "us", n ? all[n / 2] : 0);
  emit(row, k, s_us, "p99", "us", n ? all[(int)(0.99 * (n - 1))] : 0);
  emit(row, k, s_us, "fair", "ratio", most ? (double)fewest / most : 0);
  emit(row, k, s_us, "cpu", "us/reg", total ? cpu / total / 1e3 : 0);
  free(all);
  for (int i = 0; i < k; i++) {
    free(cs[i].lat);
    if (cs[i].pool) bench_backend_pool_close(cs[i].pool);
  }
}

/* ---- tasks ---------------------------------------------------------- */

typedef struct task_run {
  int64_t iters;
  unsigned char *hits;
} task_run;

static void task_body(void *ctx, int64_t i) {
  task_run *t = ctx;
  spin(t->iters);
  t->hits[i]++;
}

/* n tasks of task_us each from this thread, then the wait: tasks per
 * second (metric tasks_<us>us). */
static void run_tasks(int64_t n, int task_us) {
  task_run t = {(int64_t)(task_us * 1e3 * iters_per_ns + 0.5), calloc((size_t)n, 1)};
  if (!t.hits) die("out of memory");
  bench_backend_tasks(n < 100 ? n : 100, task_body, &t); /* warm-up */
  memset(t.hits, 0, (size_t)n);
  double t0 = bench_now_ns();
  bench_backend_tasks(n, task_body, &t);
  double elapsed = bench_now_ns() - t0;
  for (int64_t i = 0; i < n; i++)
    if (t.hits[i] != 1) die("a task did not run exactly once");
  printf("M %s tasks_%dus tasks/s %.6g\n", bench_backend_name, task_us, n / (elapsed / 1e9));
  /* The same over its ceiling, participants / task time as measured here:
   * a calibration error cancels out. */
  double task_ns = time_spin(t.iters);
  printf("M %s tasks_%dus_eff ratio %.6g\n", bench_backend_name, task_us, n / (elapsed / 1e9) * task_ns / 1e9 / participants);
  free(t.hits);
}

int main(int argc, char **argv) {
  const char *mode = "round";
  bool quick = false;
  const char *env = getenv("BENCH_PARTICIPANTS");
  if (env && *env) participants = (unsigned)strtoul(env, NULL, 10);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--mode=", 7) == 0)
      mode = a + 7;
    else if (strcmp(a, "--quick") == 0)
      quick = true;
    else if (strncmp(a, "--delay-len=", 12) != 0) {
      fprintf(stderr, "usage: %s [--mode=round|smoke] [--quick]\n", argv[0]);
      return 2;
    }
  }
  bool smoke = strcmp(mode, "smoke") == 0;
  if (!smoke && strcmp(mode, "round") != 0) {
    fprintf(stderr, "%s: mode %s is not supported\n", argv[0], mode);
    return 2;
  }
  if (participants < 1 || participants > 1024) die("participants must be 1..1024");
  const char *grain = getenv("BENCH_GRAIN");
  chunk = grain && strcmp(grain, "1") == 0 ? 1 : (ITEMS + participants - 1) / participants;
  char err[256] = "";
  if (bench_backend_init(participants, err, sizeof err) != 0) die(err);
  char described[512];
  bench_backend_describe(described, sizeof described);
  printf("# policy %s: %s\n", bench_backend_name, described);
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  if (ncpu < 1) ncpu = 1;

  iters_per_ns = 1e6 / time_spin(1000000);
  /* W and S as this thread runs them, for the ceiling. */
  double work_ns = time_spin((int64_t)(WORK_NS / ITEMS * iters_per_ns + 0.5)) * ITEMS;
  static const int ks[] = {1, 2, 4}, ss[] = {0, 50, 200};
  double duration = smoke ? 1e9 : quick ? 40e6 : 80e6;
  int max_regions = smoke ? 3 : 1 << 30;
  bool pools = bench_backend_pool_open && bench_backend_pool_for && bench_backend_pool_close;
  char pools_row[64];
  snprintf(pools_row, sizeof pools_row, "%s-pools", bench_backend_name);
  for (size_t a = 0; a < sizeof ks / sizeof ks[0]; a++)
    for (size_t b = 0; b < sizeof ss / sizeof ss[0]; b++) {
      double serial_ns = ss[b] ? time_spin((int64_t)(ss[b] * 1e3 * iters_per_ns + 0.5)) : 0;
      run_row(bench_backend_name, false, ks[a], ss[b], duration, max_regions, work_ns, serial_ns, ncpu);
      if (pools) run_row(pools_row, true, ks[a], ss[b], duration, max_regions, work_ns, serial_ns, ncpu);
    }
  if (bench_backend_tasks) {
    run_tasks(smoke ? 50 : quick ? 2000 : 10000, 10);
    run_tasks(smoke ? 50 : quick ? 1000 : 10000, 100);
  }
  bench_backend_fini();
  return 0;
}
