/* Planner quality: what cpuexec_parallel_for_plan picks against the best
 * choice measured (the oracle).
 *
 * For each kernel x size x executor thread count, every (participants,
 * grain) pair of a grid is timed, and so is the plan; the regret is
 * time(plan) / time(best of the grid and the plan). The kernels, each with
 * the per-item cost a caller would declare (cpuexec_cost):
 *   abs      y = |x| over floats                     4 B read, 4 B written, 1 cycle
 *   exp      y = exp(x) over floats (libm)           4 B read, 4 B written, 20 cycles
 *   axpy     y += a*x over floats                    8 B read, 4 B written, 1 cycle (one multiply-add)
 *   softmax  rows of 256 floats                      1 KiB read, 1 KiB written, 256 x 20 cycles
 *   gemm     one 64-float output row of a K = 64 tile loop (B, 16 KiB, stays cached)
 *                                                    256 B read, 256 B written, 64 x 64 x 2 / 8 cycles
 * sizes: 256, 1024, 4096, 65536, 2^20 and 2^24 floats (the items are floats, rows or
 * output rows: size / floats per item); thread counts: 2, 4, 8, ... up to the
 * processors online (at least 2). The grid: participants 1..threads, and for
 * each count p > 1 the grains ceil(items / (p x k)), k = 1, 2, 4, 8, 16.
 *
 * Timing: a configuration's time is the fastest of `blocks` blocks of
 * back-to-back calls (each block about BLOCK_NS long); the blocks of all the
 * configurations of a case are interleaved, so a busy machine's drifts hit
 * them alike; the plan, the grid's best and serial are then timed again,
 * head to head, and the regret comes from that second pass. Workers stay warm between calls (the spin policy's budget),
 * which is the case the plan is for: a caller that plans runs loops.
 *
 * Output: one line per case, then the median and p90 regret over all cases,
 * and over the "tiny" cases (the best measured choice is 1 participant) the
 * worst time(plan) / time(serial). Targets (issue 12): median <= 1.10,
 * p90 <= 1.25, tiny <= 1.05; the program exits 1 when one is missed only
 * with --strict. Usage: plan-regret [--quick] [--strict] [--threads=N]
 * (--quick: sizes up to 2^20, fewer blocks; about 10 s on 2 cores). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cpuexec.h>
#include "../stats.h"

#define MAX_GRID 256

static int blocks = 7;
static double block_ns = 2e5;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}


/* ---- kernels ------------------------------------------------------------ */

typedef struct data {
  float *x, *y, *b; /* b: the GEMM's 64 x 64 B */
} data;

typedef float v8f __attribute__((vector_size(32)));

static int k_abs(void *ctx, int64_t begin, int64_t end) {
  const data *d = ctx;
  for (int64_t i = begin; i < end; i++) d->y[i] = fabsf(d->x[i]);
  return 0;
}

static int k_exp(void *ctx, int64_t begin, int64_t end) {
  const data *d = ctx;
  for (int64_t i = begin; i < end; i++) d->y[i] = expf(d->x[i]);
  return 0;
}

static int k_axpy(void *ctx, int64_t begin, int64_t end) {
  const data *d = ctx;
  for (int64_t i = begin; i < end; i++) d->y[i] += 0.5f * d->x[i];
  return 0;
}

static int k_softmax(void *ctx, int64_t begin, int64_t end) {
  const data *d = ctx;
  for (int64_t r = begin; r < end; r++) {
    const float *x = d->x + r * 256;
    float *y = d->y + r * 256, max = x[0], sum = 0.0f;
    for (int c = 1; c < 256; c++) max = x[c] > max ? x[c] : max;
    for (int c = 0; c < 256; c++) sum += y[c] = expf(x[c] - max);
    for (int c = 0; c < 256; c++) y[c] /= sum;
  }
  return 0;
}

static int k_gemm(void *ctx, int64_t begin, int64_t end) {
  const data *d = ctx;
  for (int64_t r = begin; r < end; r++) {
    const float *a = d->x + r * 64;
    for (int j = 0; j < 64; j += 8) {
      v8f c = {0};
      for (int k = 0; k < 64; k++) {
        v8f bv;
        memcpy(&bv, d->b + k * 64 + j, sizeof bv);
        c += a[k] * bv;
      }
      memcpy(d->y + r * 64 + j, &c, sizeof c);
    }
  }
  return 0;
}

typedef struct kernel {
  const char *name;
  cpuexec_range_fn fn;
  int64_t floats_per_item;
  cpuexec_cost cost;
} kernel;

static const kernel kernels[] = {
    {"abs", k_abs, 1, {.bytes_read = 4, .bytes_written = 4, .compute_cycles = 1}},
    {"exp", k_exp, 1, {.bytes_read = 4, .bytes_written = 4, .compute_cycles = 20}},
    {"axpy", k_axpy, 1, {.bytes_read = 8, .bytes_written = 4, .compute_cycles = 1}},
    {"softmax", k_softmax, 256, {.bytes_read = 1024, .bytes_written = 1024, .compute_cycles = 256 * 20}},
    {"gemm", k_gemm, 64, {.bytes_read = 256, .bytes_written = 256, .compute_cycles = 64 * 64 * 2 / 8}},
};

/* ---- measuring ---------------------------------------------------------- */

typedef struct config {
  uint32_t participants;
  int64_t grain;
  int reps;
  double samples[16];
  double ns;
} config;

static void call(cpuexec_executor *e, const kernel *k, data *d, int64_t items, const config *c) {
  int rc = cpuexec_parallel_for(e, items, c->grain, d, k->fn, c->participants);
  if (rc != 0) {
    printf("FAIL: cpuexec_parallel_for: %s\n", cpuexec_error_message());
    exit(1);
  }
}

/* Times every configuration, blocks interleaved; fills c->ns. */
static void measure(cpuexec_executor *e, const kernel *k, data *d, int64_t items, config *cs, int n) {
  for (int i = 0; i < n; i++) {
    call(e, k, d, items, &cs[i]); /* warm-up, and a first estimate */
    double t0 = now_ns();
    call(e, k, d, items, &cs[i]);
    double one = now_ns() - t0;
    cs[i].reps = (int)(block_ns / (one + 1.0)) + 1;
    if (cs[i].reps > 20000) cs[i].reps = 20000;
  }
  for (int b = 0; b < blocks; b++)
    for (int i = 0; i < n; i++) {
      double t0 = now_ns();
      for (int r = 0; r < cs[i].reps; r++) call(e, k, d, items, &cs[i]);
      cs[i].samples[b] = (now_ns() - t0) / cs[i].reps;
    }
  /* The fastest block: on a shared machine a block only ever gets slower
   * (a participant preempted stalls the whole region for a time slice), so
   * the minimum estimates the machine's own speed best. */
  for (int i = 0; i < n; i++) {
    cs[i].ns = cs[i].samples[0];
    for (int b = 1; b < blocks; b++)
      if (cs[i].samples[b] < cs[i].ns) cs[i].ns = cs[i].samples[b];
  }
}

static cpuexec_executor *make(uint32_t threads, long online) {
  cpuexec_policy policy;
  if (cpuexec_policy_from_environment(&policy) != 0) cpuexec_policy_init(&policy);
  policy.num_threads = (int32_t)threads;
  if ((long)threads > online) policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
  cpuexec_resolved *r = NULL;
  cpuexec_executor *e = NULL;
  if (cpuexec_policy_resolve(&policy, NULL, &r) != 0 || cpuexec_executor_create(r, &e) != 0) {
    printf("FAIL: %u threads: %s\n", threads, cpuexec_error_message());
    exit(1);
  }
  char text[512];
  cpuexec_policy_format(&policy, text, sizeof text);
  printf("# policy %s; resolved %s\n", text, cpuexec_resolved_sharing_key(r));
  cpuexec_resolved_destroy(r);
  return e;
}

static double percentile(double *v, int n, double q) {
  bench_sort(v, (size_t)n);
  int i = (int)ceil(q * n) - 1;
  return v[i < 0 ? 0 : i];
}

int main(int argc, char **argv) {
  bool quick = false, strict = false;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  long max_threads = online < 2 ? 2 : online;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (strcmp(argv[i], "--strict") == 0)
      strict = true;
    else if (strncmp(argv[i], "--threads=", 10) == 0)
      max_threads = strtol(argv[i] + 10, NULL, 10);
    else {
      fprintf(stderr, "usage: %s [--quick] [--strict] [--threads=N]\n", argv[0]);
      return 2;
    }
  }
  if (max_threads < 2 || max_threads > 1024) max_threads = 2;
  if (quick) blocks = 5, block_ns = 1e5;
  const int64_t sizes[] = {256, 1024, 4096, 65536, 1 << 20, 1 << 24};
  int nsizes = quick ? 5 : 6;
  int64_t max_floats = sizes[nsizes - 1];
  data d = {aligned_alloc(64, (size_t)max_floats * 4), aligned_alloc(64, (size_t)max_floats * 4),
            aligned_alloc(64, 64 * 64 * 4)};
  if (!d.x || !d.y || !d.b) {
    printf("FAIL: out of memory\n");
    return 1;
  }
  for (int64_t i = 0; i < max_floats; i++) d.x[i] = (float)(i % 17) * 0.125f - 1.0f, d.y[i] = 0.0f;
  for (int i = 0; i < 64 * 64; i++) d.b[i] = (float)(i % 5) * 0.25f;

  static double regrets[4096], tiny[4096];
  int nr = 0, nt = 0;
  printf("load average: ");
  fflush(stdout);
  FILE *load = fopen("/proc/loadavg", "r");
  char line[128] = "?";
  if (load && fgets(line, sizeof line, load)) line[strcspn(line, "\n")] = 0;
  if (load) fclose(load);
  printf("%s\n", line);
  printf("%-8s %9s %7s | %-16s %10s | %-16s %10s | %7s %7s\n", "kernel", "items", "threads", "plan (p, grain)",
         "ns", "best (p, grain)", "ns", "regret", "/serial");
  for (long t = 2; t <= max_threads; t *= 2) {
    cpuexec_executor *e = make((uint32_t)t, online);
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++)
      for (int s = 0; s < nsizes; s++) {
        const kernel *kn = &kernels[k];
        int64_t items = sizes[s] / kn->floats_per_item;
        if (items < 1) continue;
        cpuexec_plan plan;
        if (cpuexec_parallel_for_plan(e, items, &kn->cost, NULL, &plan) != 0) {
          printf("FAIL: plan: %s\n", cpuexec_error_message());
          return 1;
        }
        /* cs[0] is the plan; a grid entry equal to it (or to serial,
         * whatever its grain) is the same measurement, not a second one. */
        static config cs[MAX_GRID];
        int n = 0, serial = -1;
        cs[n++] = (config){.participants = plan.participants, .grain = plan.grain};
        if (plan.participants == 1)
          serial = 0;
        else
          serial = n, cs[n++] = (config){.participants = 1, .grain = items};
        for (uint32_t p = 2; p <= (uint32_t)t && p <= items; p++)
          for (int64_t m = 1; m <= 16; m *= 2) {
            int64_t g = (items + p * m - 1) / (p * m);
            bool dup = false;
            for (int i = 0; i < n; i++) dup = dup || (cs[i].participants == p && cs[i].grain == g);
            if (!dup && n < MAX_GRID) cs[n++] = (config){.participants = p, .grain = g};
          }
        measure(e, kn, &d, items, cs, n);
        int best = 0;
        for (int i = 1; i < n; i++)
          if (cs[i].ns < cs[best].ns) best = i;
        /* Picking the least of several noisy times favours the grid (the
         * winner's curse): the plan, the winner and serial are timed once
         * more, head to head, and the regret is taken from that pass. */
        if (best != 0 || serial != 0) {
          config again[3] = {cs[0], cs[best], cs[serial]};
          measure(e, kn, &d, items, again, 3);
          cs[0].ns = again[0].ns, cs[best].ns = again[1].ns, cs[serial].ns = again[2].ns;
          if (best == serial) cs[best].ns = again[1].ns < again[2].ns ? again[1].ns : again[2].ns;
          if (cs[0].ns < cs[best].ns) best = 0;
        }
        double regret = cs[0].ns / cs[best].ns, vs_serial = cs[0].ns / cs[serial].ns;
        regrets[nr++] = regret;
        if (cs[best].participants == 1) tiny[nt++] = vs_serial;
        char pl[32], bs[32];
        snprintf(pl, sizeof pl, "%u, %lld", plan.participants, (long long)plan.grain);
        snprintf(bs, sizeof bs, "%u, %lld", cs[best].participants, (long long)cs[best].grain);
        printf("%-8s %9lld %7ld | %-16s %10.0f | %-16s %10.0f | %7.3f %7.3f\n", kn->name, (long long)items, t, pl,
               cs[0].ns, bs, cs[best].ns, regret, vs_serial);
        fflush(stdout);
      }
    cpuexec_executor_release(e);
  }
  double med = percentile(regrets, nr, 0.5), p90 = percentile(regrets, nr, 0.9);
  double worst_tiny = nt ? percentile(tiny, nt, 1.0) : 1.0;
  bool ok = med <= 1.10 && p90 <= 1.25 && worst_tiny <= 1.05;
  printf("regret over %d cases: median %.3f (target <= 1.10), p90 %.3f (target <= 1.25)\n", nr, med, p90);
  printf("tiny cases (best measured is serial): %d, worst plan/serial %.3f (target <= 1.05)\n", nt, worst_tiny);
  printf("verdict: %s\n", ok ? "PASS" : "MISS");
  free(d.x);
  free(d.y);
  free(d.b);
  return strict && !ok ? 1 : 0;
}
