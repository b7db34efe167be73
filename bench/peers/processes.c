/* libcpuexec benchmarks: several processes on one machine, each with its
 * own pool (issue 32: the node budget, doc/node-budget.md).
 *
 * One program per backend, like bench/peers/callers.c: this driver plus
 * one backend file. NP processes (NP = 2, 4) are started together; each
 * has one calling thread that repeats S us of serial work (S = 0, 50, 200)
 * and a parallel region of 64 items that is W = 200 us of work in all
 * (each item a 3.125 us spin on the clock, so the work does not depend on
 * the processor's speed), chunk ceil(64 / participants). Each process's
 * pool is either the runtime's default size, every processor ("default"),
 * or processors / NP by hand ("split", at least 1). Rows, one sample per
 * run, metric npN_sS_<pool>_<what>:
 *   rps    regions per second, all processes together
 *   p99    the worst process's 99th percentile of one region (us)
 *   fair   fewest regions of one process / most of another
 *   runnable  the most threads of the NP processes found runnable (state R
 *          in /proc/PID/task/TID/stat: running or waiting for a processor)
 *          at once, sampled every 2 ms while they run; the node budget's
 *          bound is N + NP (doc/node-budget.md). The sampling costs the
 *          bench's own process a few percent of one processor.
 * Every region's items are counted (each exactly once); a wrong count
 * prints FAIL and exits 1. Arguments: --seconds=X (default 1.5) per cell,
 * --np=N and --serial=S for one cell. The libcpuexec rows with the node
 * budget off: run with CPUEXEC_NODE_BUDGET=off.
 *
 * Then the make row (issue 32), make_j2_x4: GNU make -j2 runs four such
 * processes of JOB_REGIONS regions each (S = 0, the default pool), its
 * recipes marked '+' so each sees make's jobserver; against the same four
 * run one after another. Metric: the make run's time over the sequential
 * one (medians of 3 interleaved pairs; 1.0 is as fast as one at a time,
 * the pool of each using every processor). Skipped, with its reason,
 * without make. --make runs this row alone; --regions=N runs one such
 * process (what the recipes run).
 *
 * Then the quota rows, quota1_np2_s0_<pool>_*: the NP = 2, S = 0 cell
 * inside a cgroup the bench makes with a quota of one CPU (cgroup v2
 * cpu.max, else v1 cpu.cfs_quota_us), where the hand split is one thread
 * each. Skipped, with its reason, when not root or without a cpu
 * controller; --quota runs them alone. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../clock.h"
#include "driver.h"

#define ITEMS 64
#define REGION_WORK_NS 200000.0

static _Atomic int64_t items_done;

static void spin_ns(double ns) {
  double end = bench_now_ns() + ns;
  while (bench_now_ns() < end) {
  }
}

static int item_body(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  for (int64_t i = begin; i < end; i++) spin_ns(REGION_WORK_NS / ITEMS);
  atomic_fetch_add_explicit(&items_done, end - begin, memory_order_relaxed);
  return 0;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One process of a cell: "regions p99_us" on out, or FAIL. */
static int child(unsigned threads, double serial_us, double seconds, int ready, int start, int out) {
  char err[256] = "";
  if (bench_backend_init(threads, err, sizeof err) != 0) {
    dprintf(out, "FAIL %s\n", err);
    return 1;
  }
  size_t cap = 1u << 20, count = 0;
  double *lat = malloc(cap * sizeof *lat);
  char c = 1;
  if (lat == NULL || write(ready, &c, 1) != 1 || read(start, &c, 1) != 1) return 1;
  int64_t chunk = (ITEMS + threads - 1) / threads;
  double end = bench_now_ns() + seconds * 1e9;
  while (bench_now_ns() < end && count < cap) {
    int64_t before = atomic_load(&items_done);
    double t = bench_now_ns();
    bench_backend_for(ITEMS, chunk, item_body, NULL);
    lat[count++] = (bench_now_ns() - t) / 1e3;
    if (atomic_load(&items_done) - before != ITEMS) {
      dprintf(out, "FAIL a region ran %lld items of %d\n", (long long)(atomic_load(&items_done) - before), ITEMS);
      return 1;
    }
    if (serial_us > 0) spin_ns(serial_us * 1e3);
  }
  qsort(lat, count, sizeof *lat, compare_double);
  dprintf(out, "%zu %.1f\n", count, count ? lat[(size_t)((double)(count - 1) * 0.99)] : 0.0);
  bench_backend_fini();
  return 0;
}

/* One process of the make row: `regions` regions, S = 0, the default pool. */
static int job(long regions) {
  char err[256] = "";
  unsigned threads = 0;
  cpu_set_t set;
  threads = sched_getaffinity(0, sizeof set, &set) == 0 ? (unsigned)CPU_COUNT(&set) : 1;
  if (bench_backend_init(threads, err, sizeof err) != 0) {
    fprintf(stderr, "FAIL %s\n", err);
    return 1;
  }
  int64_t chunk = (ITEMS + threads - 1) / threads;
  for (long i = 0; i < regions; i++) {
    int64_t before = atomic_load(&items_done);
    bench_backend_for(ITEMS, chunk, item_body, NULL);
    if (atomic_load(&items_done) - before != ITEMS) {
      fprintf(stderr, "FAIL a region ran %lld items of %d\n", (long long)(atomic_load(&items_done) - before), ITEMS);
      return 1;
    }
  }
  bench_backend_fini();
  return 0;
}

#define JOB_REGIONS 1000
#define JOBS 4

/* Seconds a shell command took, or -1 when it failed. */
static double timed(const char *command) {
  double t = bench_now_ns();
  int rc = system(command);
  return rc == 0 ? (bench_now_ns() - t) / 1e9 : -1;
}

static int make_row(void) {
  char self[1024];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return printf("# make_j2_x4: skipped: /proc/self/exe unreadable\n"), 0;
  self[n] = '\0';
  if (system("command -v make >/dev/null 2>&1") != 0) return printf("# make_j2_x4: skipped: no make installed\n"), 0;
  char dir[] = "/tmp/cpuexec-bench-make.XXXXXX", path[1100], seq[2400], par[1200];
  if (mkdtemp(dir) == NULL) return printf("# make_j2_x4: skipped: no temporary directory\n"), 0;
  snprintf(path, sizeof path, "%s/Makefile", dir);
  FILE *mk = fopen(path, "w");
  if (mk == NULL) return printf("# make_j2_x4: skipped: cannot write %s\n", path), 0;
  fprintf(mk, "all: j1 j2 j3 j4\nj1 j2 j3 j4:\n\t+@'%s' --regions=%d >/dev/null\n.PHONY: all j1 j2 j3 j4\n", self, JOB_REGIONS);
  fclose(mk);
  snprintf(par, sizeof par, "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -j2 -f '%s'", path);
  snprintf(seq, sizeof seq, "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL sh -c \"for j in 1 2 3 4; do '%s' --regions=%d >/dev/null || exit 1; done\"",
           self, JOB_REGIONS);
  double ratios[3];
  int rc = 0;
  for (int round = 0; round < 3 && rc == 0; round++) {
    double t_seq = timed(seq), t_make = timed(par);
    if (t_seq <= 0 || t_make <= 0) rc = 1;
    else ratios[round] = t_make / t_seq;
  }
  snprintf(seq, sizeof seq, "rm -rf '%s'", dir);
  if (system(seq) != 0) rc = 1;
  if (rc != 0) return printf("FAIL %s: make_j2_x4: a job failed\n", bench_backend_name), 1;
  qsort(ratios, 3, sizeof ratios[0], compare_double);
  printf("M %s make_j2_x4_time ratio %.3f\n", bench_backend_name, ratios[1]);
  fflush(stdout);
  return 0;
}

static unsigned processors(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return (unsigned)CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1;
}

/* Rows of the quota cell are named with this in front. */
static const char *row_prefix = "";

/* Threads of process pid in state R now (running or runnable). */
static unsigned runnable_threads(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
  DIR *tasks = opendir(path);
  if (tasks == NULL) return 0;
  unsigned runnable = 0;
  for (struct dirent *t; (t = readdir(tasks)) != NULL;) {
    if (t->d_name[0] == '.') continue;
    char stat_path[300], text[512];
    snprintf(stat_path, sizeof stat_path, "/proc/%ld/task/%s/stat", (long)pid, t->d_name);
    FILE *f = fopen(stat_path, "r");
    if (f == NULL) continue;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *state = strrchr(text, ')'); /* after the name, which may hold anything */
    if (state != NULL && state[1] == ' ' && state[2] == 'R') runnable++;
  }
  closedir(tasks);
  return runnable;
}

/* The most threads of the np processes runnable at once, sampled every
 * 2 ms for `seconds`. */
static unsigned sample_runnable(const pid_t *pids, unsigned np, double seconds) {
  unsigned most = 0;
  double end = bench_now_ns() + seconds * 1e9;
  const struct timespec gap = {0, 2000000};
  while (bench_now_ns() < end) {
    unsigned now = 0;
    for (unsigned i = 0; i < np; i++) now += runnable_threads(pids[i]);
    if (now > most) most = now;
    nanosleep(&gap, NULL);
  }
  return most;
}

/* One cell: NP processes started together; prints its rows. `cpus`: the
 * CPUs the hand split divides (0: the processors). */
static int cell_of(unsigned np, unsigned serial, bool split, double seconds, unsigned cpus) {
  unsigned ncpu = cpus ? cpus : processors(), threads = split ? (ncpu / np > 0 ? ncpu / np : 1) : processors();
  int ready[2], start[2], out[2];
  if (pipe(ready) || pipe(start) || pipe(out)) return 1;
  pid_t pids[16];
  for (unsigned i = 0; i < np; i++) {
    pids[i] = fork();
    if (pids[i] == 0) {
      close(ready[0]);
      close(start[1]);
      close(out[0]);
      _exit(child(threads, serial, seconds, ready[1], start[0], out[1]));
    }
  }
  close(ready[1]);
  close(start[0]);
  close(out[1]);
  char c;
  for (unsigned i = 0; i < np; i++)
    if (read(ready[0], &c, 1) != 1) break;
  for (unsigned i = 0; i < np; i++)
    if (write(start[1], &c, 1) != 1) break;
  unsigned runnable = sample_runnable(pids, np, seconds * 0.9);
  FILE *results = fdopen(out[0], "r");
  double sum = 0, worst = 0, fewest = 1e300, most = 0;
  int rc = 0;
  char line[512];
  for (unsigned i = 0; i < np; i++) {
    size_t regions;
    double p99;
    if (fgets(line, sizeof line, results) == NULL || sscanf(line, "%zu %lf", &regions, &p99) != 2) {
      printf("FAIL %s: np=%u serial=%u: %s", bench_backend_name, np, serial, line);
      rc = 1;
      break;
    }
    sum += (double)regions / seconds;
    if (p99 > worst) worst = p99;
    if ((double)regions < fewest) fewest = (double)regions;
    if ((double)regions > most) most = (double)regions;
  }
  fclose(results);
  close(ready[0]);
  close(start[1]);
  for (unsigned i = 0; i < np; i++) {
    int status;
    waitpid(pids[i], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = 1;
  }
  if (rc != 0) return rc;
  const char *pool = split ? "split" : "default";
  printf("M %s %snp%u_s%u_%s_rps regions/s %.0f\n", bench_backend_name, row_prefix, np, serial, pool, sum);
  printf("M %s %snp%u_s%u_%s_p99 us %.0f\n", bench_backend_name, row_prefix, np, serial, pool, worst);
  printf("M %s %snp%u_s%u_%s_fair ratio %.2f\n", bench_backend_name, row_prefix, np, serial, pool,
         most > 0 ? fewest / most : 0);
  printf("M %s %snp%u_s%u_%s_runnable threads %u\n", bench_backend_name, row_prefix, np, serial, pool, runnable);
  fflush(stdout);
  return 0;
}

static int cell(unsigned np, unsigned serial, bool split, double seconds) {
  return cell_of(np, serial, split, seconds, 0);
}

/* Writes text to path; false when it could not. */
static bool write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f == NULL) return false;
  bool ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok;
}

static int quota_rows(double seconds) {
  if (geteuid() != 0) return printf("# quota1_np2: skipped: not root (the bench makes a cgroup for it)\n"), 0;
  char dir[200], path[300];
  bool v2 = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0;
  if (v2) snprintf(dir, sizeof dir, "/sys/fs/cgroup/cpuexec-bench-%ld", (long)getpid());
  else if (access("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", F_OK) == 0)
    snprintf(dir, sizeof dir, "/sys/fs/cgroup/cpu/cpuexec-bench-%ld", (long)getpid());
  else
    return printf("# quota1_np2: skipped: no cgroup cpu controller found\n"), 0;
  if (v2) (void)write_file("/sys/fs/cgroup/cgroup.subtree_control", "+cpu");
  if (mkdir(dir, 0755) != 0) return printf("# quota1_np2: skipped: cannot make %s\n", dir), 0;
  bool set;
  if (v2) {
    snprintf(path, sizeof path, "%s/cpu.max", dir);
    set = write_file(path, "100000 100000");
  } else {
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
    set = write_file(path, "100000");
    snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
    set = set && write_file(path, "100000");
  }
  int rc = 0;
  if (!set) {
    printf("# quota1_np2: skipped: cannot set the quota in %s\n", dir);
  } else {
    fflush(stdout);
    /* A child moves into the cgroup and runs the cells (their processes
     * are its children, in it too); this process stays where it was. */
    pid_t pid = fork();
    if (pid == 0) {
      char me[32];
      snprintf(path, sizeof path, "%s/cgroup.procs", dir);
      snprintf(me, sizeof me, "%ld", (long)getpid());
      if (!write_file(path, me)) {
        printf("# quota1_np2: skipped: cannot move into %s\n", dir);
        _exit(0);
      }
      row_prefix = "quota1_";
      int r = cell_of(2, 0, false, seconds, 1) | cell_of(2, 0, true, seconds, 1);
      fflush(stdout);
      _exit(r);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = 1;
  }
  if (rmdir(dir) != 0) printf("# quota1_np2: could not remove %s\n", dir);
  return rc;
}

int main(int argc, char **argv) {
  double seconds = 1.5;
  int np = 0, serial = -1;
  long regions = 0;
  bool make_only = false, quota_only = false;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--seconds=", 10) == 0) seconds = atof(argv[i] + 10);
    else if (strncmp(argv[i], "--np=", 5) == 0) np = atoi(argv[i] + 5);
    else if (strncmp(argv[i], "--serial=", 9) == 0) serial = atoi(argv[i] + 9);
    else if (strncmp(argv[i], "--regions=", 10) == 0) regions = atol(argv[i] + 10);
    else if (strcmp(argv[i], "--make") == 0) make_only = true;
    else if (strcmp(argv[i], "--quota") == 0) quota_only = true;
    else if (strncmp(argv[i], "--mode=", 7) == 0 || strncmp(argv[i], "--delay-len", 11) == 0) continue;
    else {
      fprintf(stderr, "usage: %s [--seconds=X] [--np=N] [--serial=S] [--make] [--quota] [--regions=N]\n", argv[0]);
      return 2;
    }
  }
  if (regions > 0) return job(regions);
  if (make_only) return make_row();
  if (quota_only) return quota_rows(seconds);
  if (np < 0 || np > 16 || seconds <= 0) return 2;
  printf("# %s: NP processes, each one caller repeating S us serial + a 200 us region of 64 items; %u processors\n",
         bench_backend_name, processors());
  fflush(stdout);
  static const unsigned nps[] = {2, 4}, serials[] = {0, 50, 200};
  int rc = 0;
  for (size_t a = 0; a < 2; a++)
    for (size_t b = 0; b < 3; b++)
      for (int split = 0; split < 2; split++) {
        if ((np && (unsigned)np != nps[a]) || (serial >= 0 && (unsigned)serial != serials[b])) continue;
        rc |= cell(nps[a], serials[b], split, seconds);
      }
  if (np == 0 && serial < 0) rc |= make_row() | quota_rows(seconds);
  return rc;
}
