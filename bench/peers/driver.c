/* libcpuexec benchmarks: the shared driver (see driver.h).
 *
 * Every backend program is this file plus one backend file. main() runs one
 * mode and prints "M <backend> <metric> <unit> <value>" lines:
 *
 *   --mode=round      one round of every measurement (the runner interleaves
 *                     rounds of all backends, one process per round)
 *   --mode=calibrate  prints "C delay_len <iterations> <ns per delay>": the
 *                     delay length the runner then hands to every backend, so
 *                     every backend runs the very same body
 *   --mode=hot        N back-to-back calls and nothing else (--calls=N), and
 *                     their wall-clock bounds, for counting system calls under strace
 *   --mode=smoke      every measurement with tiny counts; checks checksums
 *
 * Options: --delay-len=N, --calls=N, --quick (fewer samples),
 * --participants=N (default: BENCH_PARTICIPANTS or 2). BENCH_GRAIN=1 gives
 * backends a chunk of 1 instead of one static block per participant.
 *
 * Every loop checks its result (each index run exactly once per call, axpy
 * values exact); a wrong result prints "FAIL" and exits 1. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "driver.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../clock.h"
#include "../stats.h"

/* ---- timing ------------------------------------------------------------ */

static void sleep_ns(double ns) {
  struct timespec ts = {(time_t)(ns / 1e9), (long)((int64_t)ns % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
  }
}

static void spin_until(double deadline_ns) {
  while (bench_now_ns() < deadline_ns) {
  }
}

/* ---- the bodies -------------------------------------------------------- */

/* EPCC's delay: a dependent floating-point chain the compiler cannot remove
 * or reorder. Out of line, so every caller pays the same call. */
__attribute__((noinline)) static void bench_delay(int64_t length) {
  float a = 0.0f;
  for (int64_t i = 0; i < length; i++) a += (float)i;
  if (a < 0.0f) printf("%f\n", (double)a);
}

/* Each index owns a cache line, so the participants never share a line and
 * the check "each index exactly once per call" costs the same in the serial
 * reference and in every backend. */
#define HIT_STRIDE 16 /* uint32_t per 64-byte line */
#define MAX_ITERATIONS 1024

typedef struct delay_ctx {
  int64_t length; /* delay iterations per index; 0 for the latency body */
  uint32_t *hits; /* hits[i * HIT_STRIDE] counts the runs of index i */
} delay_ctx;

/* The tiny body: count the index, then the calibrated delay. */
static int body_delay(void *ctx, int64_t begin, int64_t end) {
  delay_ctx *c = ctx;
  for (int64_t i = begin; i < end; i++) {
    c->hits[i * HIT_STRIDE]++;
    bench_delay(c->length);
  }
  return 0;
}

typedef struct axpy_ctx {
  float a;
  const float *x;
  float *y;
} axpy_ctx;

/* y[i] += a * x[i], eight lanes at a time through GCC/Clang vector types so
 * the loop is vectorized the same way whatever the optimisation flags. */
typedef float v8f __attribute__((vector_size(32)));
static int body_axpy(void *ctx, int64_t begin, int64_t end) {
  const axpy_ctx *c = ctx;
  const float *restrict x = c->x;
  float *restrict y = c->y;
  v8f a = {c->a, c->a, c->a, c->a, c->a, c->a, c->a, c->a};
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    v8f xv, yv;
    memcpy(&xv, x + i, sizeof xv);
    memcpy(&yv, y + i, sizeof yv);
    yv += a * xv;
    memcpy(y + i, &yv, sizeof yv);
  }
  for (; i < end; i++) y[i] += c->a * x[i];
  return 0;
}

/* ---- the run ----------------------------------------------------------- */

typedef struct scale {
  int epcc_samples;       /* (reference, test) block pairs per n */
  int cadence_calls[2];   /* calls of the 1 ms and 10 ms cadence streams (burn_cad*) */
  double epcc_block_ns;   /* target length of one timed block */
  int lat_samples[4];     /* per gap */
  double idle_s;          /* the idle period after the burst: a full second even when quick, since
                           * runtimes spin for up to 200 ms before they sleep */
  int axpy_sizes;         /* how many of the sizes below */
  int axpy_samples[3];    /* timed blocks per size */
  int axpy_calls[3];      /* calls per timed block */
} scale;

static const scale scale_full = {21, {300, 50}, 1e6, {2000, 400, 100, 30}, 1.0, 3, {15, 15, 11}, {200, 20, 2}};
static const scale scale_quick = {7, {150, 25}, 5e5, {500, 100, 30, 25}, 1.0, 3, {5, 3, 3}, {20, 2, 1}};
static const scale scale_smoke = {2, {3, 2}, 2e4, {20, 5, 2, 2}, 0.01, 2, {1, 1, 1}, {2, 2, 1}};

static unsigned participants = 2;
static bool grain_one;
static bool axpy_only; /* --mode=axpy: the idle second and the axpy rows only, for many rounds of them */
static int64_t delay_length = -1;
static uint32_t *hits;

static int64_t chunk_for(int64_t n) {
  return grain_one ? 1 : (n + participants - 1) / participants;
}

static void fail(const char *what, int64_t index, int64_t got, int64_t want) {
  printf("FAIL %s %s: index %" PRId64 " has %" PRId64 ", expected %" PRId64 "\n", bench_backend_name, what,
         index, got, want);
  fflush(stdout);
  exit(1);
}

/* Checks that indices [0, n) ran `times` times each and no index past them ran; clears the counts. */
static void check_hits(const char *what, int64_t n, uint32_t times) {
  for (int64_t i = 0; i < MAX_ITERATIONS; i++) {
    uint32_t want = i < n ? times : 0;
    if (hits[i * HIT_STRIDE] != want) fail(what, i, hits[i * HIT_STRIDE], want);
    hits[i * HIT_STRIDE] = 0;
  }
}

static void clear_hits(void) {
  for (int64_t i = 0; i < MAX_ITERATIONS; i++) hits[i * HIT_STRIDE] = 0;
}

static void *xcalloc(size_t count, size_t size) {
  void *p = calloc(count, size);
  if (p == NULL) {
    printf("FAIL %s: out of memory\n", bench_backend_name);
    exit(1);
  }
  return p;
}

static void emit(const char *metric, const char *unit, double value) {
  printf("M %s %s %s %.6g\n", bench_backend_name, metric, unit, value);
}

/* (1) EPCC syncbench PARALLEL FOR: overhead = median(test) - median(reference),
 * where the reference is the serial share (ceil(n / participants) delays on
 * the caller) and the test is the parallel loop of n delays. Reference and
 * test blocks alternate, so slow drifts of a busy machine hit both. */
static void run_epcc(const scale *s) {
  static const int64_t sizes[] = {2, 8, 64, 1024};
  delay_ctx ctx = {delay_length, hits};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    int64_t n = sizes[k], chunk = chunk_for(n);
    int64_t share = (n + participants - 1) / participants;
    /* Calls per block: the block lasts about epcc_block_ns. */
    double t0 = bench_now_ns();
    body_delay(&ctx, 0, share);
    double per_call = bench_now_ns() - t0 + 1000.0;
    int reps = (int)(s->epcc_block_ns / per_call);
    if (reps < 2) reps = 2;
    if (reps > 100000) reps = 100000;
    int warm = reps / 8 < 2 ? 2 : (reps / 8 > 50 ? 50 : reps / 8);
    double *ref = xcalloc((size_t)s->epcc_samples, sizeof *ref);
    double *test = xcalloc((size_t)s->epcc_samples, sizeof *test);
    clear_hits();
    for (int j = 0; j < s->epcc_samples; j++) {
      t0 = bench_now_ns();
      for (int r = 0; r < reps; r++) body_delay(&ctx, 0, share);
      ref[j] = (bench_now_ns() - t0) / reps;
      check_hits("epcc reference", share, (uint32_t)reps);
      for (int r = 0; r < warm; r++) bench_backend_for(n, chunk, body_delay, &ctx);
      t0 = bench_now_ns();
      for (int r = 0; r < reps; r++) bench_backend_for(n, chunk, body_delay, &ctx);
      test[j] = (bench_now_ns() - t0) / reps;
      check_hits("epcc parallel for", n, (uint32_t)(reps + warm));
    }
    char metric[32];
    snprintf(metric, sizeof metric, "epcc_n%" PRId64, n);
    size_t samples = (size_t)s->epcc_samples;
    emit(metric, "us", (bench_median(test, samples) - bench_median(ref, samples)) / 1e3);
    free(ref);
    free(test);
  }
}

/* The serial time of the latency body (participants indices, no delay):
 * the fastest of several timed blocks, in us. */
static double latency_body_us(void) {
  delay_ctx ctx = {0, hits};
  double best = 1e30;
  for (int t = 0; t < 20; t++) {
    double t0 = bench_now_ns();
    for (int r = 0; r < 100; r++) body_delay(&ctx, 0, participants);
    double per = (bench_now_ns() - t0) / 100.0;
    if (per < best) best = per;
  }
  clear_hits();
  return best / 1e3;
}

/* (2) Latency of one call (n = participants indices, the body without delay)
 * after a gap: 0, a 50 us busy-wait by the caller, or a 1 ms / 10 ms
 * clock_nanosleep. Every sample is printed; the runner pools the rounds and
 * takes median and p99. Then worst_region: over the four gap rows of this
 * round, the largest p99 of (call time - serial body time), the figure a
 * latency budget has to allow for. */
static void run_latency(const scale *s) {
  static const char *const names[] = {"lat_gap0", "lat_gap50us", "lat_gap1ms", "lat_gap10ms"};
  static const double gaps[] = {0, 50e3, 1e6, 10e6};
  delay_ctx ctx = {0, hits};
  int64_t n = participants;
  clear_hits();
  int most = 0;
  for (int g = 0; g < 4; g++) most = s->lat_samples[g] > most ? s->lat_samples[g] : most;
  double *samples = xcalloc((size_t)most, sizeof *samples);
  double body_us = latency_body_us(), worst = 0;
  for (int g = 0; g < 4; g++) {
    uint32_t calls = 0;
    for (int w = 0; w < 20; w++, calls++) bench_backend_for(n, chunk_for(n), body_delay, &ctx);
    double end = bench_now_ns();
    for (int j = 0; j < s->lat_samples[g]; j++, calls++) {
      if (gaps[g] >= 1e6)
        sleep_ns(gaps[g]);
      else if (gaps[g] > 0)
        spin_until(end + gaps[g]);
      double t0 = bench_now_ns();
      bench_backend_for(n, chunk_for(n), body_delay, &ctx);
      end = bench_now_ns();
      samples[j] = (end - t0) / 1e3;
    }
    check_hits("latency", n, calls);
    /* Printed after the series, so no output falls between timed calls. */
    for (int j = 0; j < s->lat_samples[g]; j++) emit(names[g], "us", samples[j]);
    bench_sort(samples, (size_t)s->lat_samples[g]);
    int k = (int)(0.99 * s->lat_samples[g] + 0.999) - 1;
    double p99 = samples[k < 0 ? 0 : k] - body_us;
    if (p99 > worst) worst = p99;
  }
  emit("worst_region", "us", worst);
  free(samples);
}

/* (2b) CPU the runtime burns per second of a steady stream of calls, one
 * every 1 ms and one every 10 ms (a clock_nanosleep before each tiny call,
 * as an inference server between requests): process CPU time minus the
 * caller's own thread CPU time, over the stream's wall time (ms/s). */
static void run_cadence_burn(const scale *s) {
  static const char *const names[] = {"burn_cad1ms", "burn_cad10ms"};
  static const double gaps[] = {1e6, 10e6};
  delay_ctx ctx = {0, hits};
  int64_t n = participants;
  for (int g = 0; g < 2; g++) {
    clear_hits();
    /* A few calls first, so the stream is steady when measured. */
    for (int w = 0; w < 5; w++) {
      sleep_ns(gaps[g]);
      bench_backend_for(n, chunk_for(n), body_delay, &ctx);
    }
    double w0 = bench_now_ns(), p0 = bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID), t0 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int j = 0; j < s->cadence_calls[g]; j++) {
      sleep_ns(gaps[g]);
      bench_backend_for(n, chunk_for(n), body_delay, &ctx);
    }
    double w1 = bench_now_ns(), p1 = bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID), t1 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    check_hits("cadence stream", n, (uint32_t)s->cadence_calls[g] + 5);
    emit(names[g], "ms/s", ((p1 - p0) - (t1 - t0)) / 1e6 / ((w1 - w0) / 1e9));
  }
}

/* (3) CPU time the runtime burns while the caller sleeps for idle_s right
 * after a burst of 1000 calls: process CPU time minus the caller's own
 * thread CPU time over the idle period, in ms per idle second. */
static void run_idle(const scale *s) {
  delay_ctx ctx = {0, hits};
  int64_t n = participants;
  clear_hits();
  for (int r = 0; r < 1000; r++) bench_backend_for(n, chunk_for(n), body_delay, &ctx);
  double p0 = bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID), t0 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
  sleep_ns(s->idle_s * 1e9);
  double p1 = bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID), t1 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
  check_hits("burst", n, 1000);
  emit("idle_burn", "ms/s", ((p1 - p0) - (t1 - t0)) / 1e6 / s->idle_s);
}

/* (4) axpy y += a * x on 64K, 1M and 16M floats: 12 bytes per element
 * (two loads, one store), GB/s of the median timed block. A full round's
 * blocks last a millisecond or more (200, 20 and 2 calls) and there are
 * 11-15 of them, so a round's median is not one descheduled call. */
static void run_axpy(const scale *s) {
  static const int64_t sizes[] = {64 << 10, 1 << 20, 16 << 20};
  static const char *const names[] = {"axpy_64k", "axpy_1m", "axpy_16m"};
  int64_t max = sizes[s->axpy_sizes - 1];
  float *x = aligned_alloc(64, (size_t)max * sizeof(float));
  float *y = aligned_alloc(64, (size_t)max * sizeof(float));
  if (!x || !y) {
    printf("FAIL %s axpy: out of memory\n", bench_backend_name);
    exit(1);
  }
  for (int64_t i = 0; i < max; i++) x[i] = (float)(i % 8);
  axpy_ctx ctx = {1.0f, x, y};
  for (int k = 0; k < s->axpy_sizes; k++) {
    int64_t n = sizes[k];
    memset(y, 0, (size_t)n * sizeof(float));
    bench_backend_for(n, chunk_for(n), body_axpy, &ctx); /* warm-up */
    double *gbs = xcalloc((size_t)s->axpy_samples[k], sizeof *gbs);
    for (int j = 0; j < s->axpy_samples[k]; j++) {
      double t0 = bench_now_ns();
      for (int r = 0; r < s->axpy_calls[k]; r++) bench_backend_for(n, chunk_for(n), body_axpy, &ctx);
      gbs[j] = 12.0 * (double)n * s->axpy_calls[k] / (bench_now_ns() - t0);
    }
    /* Small integers: every value is exact in float, so equality is right. */
    float calls = (float)(1 + s->axpy_samples[k] * s->axpy_calls[k]);
    for (int64_t i = 0; i < n; i++)
      if (y[i] != calls * x[i]) fail(names[k], i, (int64_t)y[i], (int64_t)(calls * x[i]));
    emit(names[k], "GB/s", bench_median(gbs, (size_t)s->axpy_samples[k]));
    free(gbs);
  }
  free(x);
  free(y);
}

/* (5) support: N back-to-back calls and nothing else, after 1000 warm-up
 * calls. Prints "H <begin> <end>", the loop's wall-clock (CLOCK_REALTIME)
 * bounds in seconds, so a `strace -f -ttt` of the process can count the
 * system calls any thread starts inside the loop. Timestamps rather than
 * marker system calls: under strace a marker call is slow enough to let
 * workers park, which would put the wake-ups it causes into the count. */
static void run_hot(long calls) {
  delay_ctx ctx = {0, hits};
  int64_t n = participants;
  struct timespec begin, end;
  clear_hits();
  for (int w = 0; w < 1000; w++) bench_backend_for(n, chunk_for(n), body_delay, &ctx);
  clock_gettime(CLOCK_REALTIME, &begin);
  for (long r = 0; r < calls; r++) bench_backend_for(n, chunk_for(n), body_delay, &ctx);
  clock_gettime(CLOCK_REALTIME, &end);
  check_hits("hot loop", n, (uint32_t)calls + 1000);
  printf("H %lld.%06ld %lld.%06ld\n", (long long)begin.tv_sec, begin.tv_nsec / 1000, (long long)end.tv_sec,
         end.tv_nsec / 1000);
}

/* Nanoseconds per EPCC delay iteration: the fastest of several timings
 * (preemption on a busy machine only ever makes a timing longer). */
static double delay_ns_per_iteration(void) {
  const int64_t length = 2000;
  double best = 1e30;
  for (int t = 0; t < 30; t++) {
    double t0 = bench_now_ns();
    for (int r = 0; r < 50; r++) bench_delay(length);
    double per = (bench_now_ns() - t0) / (50.0 * length);
    if (per < best) best = per;
  }
  return best;
}

static void usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [--mode=round|calibrate|hot|smoke|axpy] [--delay-len=N] [--calls=N] [--quick] "
          "[--participants=N]\n",
          argv0);
  exit(2);
}

int main(int argc, char **argv) {
  const char *mode = "round";
  long calls = 10000;
  bool quick = false;
  const char *env = getenv("BENCH_PARTICIPANTS");
  if (env && *env) participants = (unsigned)strtoul(env, NULL, 10);
  env = getenv("BENCH_GRAIN");
  grain_one = env && strcmp(env, "1") == 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--mode=", 7) == 0)
      mode = a + 7;
    else if (strncmp(a, "--delay-len=", 12) == 0)
      delay_length = strtoll(a + 12, NULL, 10);
    else if (strncmp(a, "--calls=", 8) == 0)
      calls = strtol(a + 8, NULL, 10);
    else if (strncmp(a, "--participants=", 15) == 0)
      participants = (unsigned)strtoul(a + 15, NULL, 10);
    else if (strcmp(a, "--quick") == 0)
      quick = true;
    else
      usage(argv[0]);
  }
  if (participants < 1 || participants > MAX_ITERATIONS / 2 || calls < 1) usage(argv[0]);

  if (strcmp(mode, "calibrate") == 0) {
    double per = delay_ns_per_iteration();
    int64_t length = (int64_t)(100.0 / per + 0.5);
    if (length < 1) length = 1;
    printf("C delay_len %" PRId64 " %.1f\n", length, per * (double)length);
    return 0;
  }
  const scale *s;
  if (strcmp(mode, "round") == 0)
    s = quick ? &scale_quick : &scale_full;
  else if (strcmp(mode, "smoke") == 0)
    s = &scale_smoke;
  else if (strcmp(mode, "hot") == 0)
    s = NULL;
  else if (strcmp(mode, "axpy") == 0)
    s = &scale_full, axpy_only = true;
  else
    usage(argv[0]);
  if (delay_length < 0) delay_length = (int64_t)(100.0 / delay_ns_per_iteration() + 0.5);

  hits = aligned_alloc(64, MAX_ITERATIONS * HIT_STRIDE * sizeof *hits);
  char err[256] = "";
  if (!hits) {
    printf("FAIL %s: out of memory\n", bench_backend_name);
    return 1;
  }
  clear_hits();
  if (bench_backend_init(participants, err, sizeof err) != 0) {
    printf("FAIL %s: cannot start with %u participants: %s\n", bench_backend_name, participants, err);
    return 1;
  }
  printf("# %s: %u participants, chunk %s, delay %" PRId64 " iterations\n", bench_backend_name, participants,
         grain_one ? "1" : "ceil(n/participants)", delay_length);
  if (s == NULL) {
    run_hot(calls);
  } else if (axpy_only) {
    run_idle(s);
    run_axpy(s);
  } else {
    /* Phase times go to the output as comments: a backend that stalls shows it. */
    double t = bench_now_ns();
    run_epcc(s);
    printf("# epcc %.3f s\n", (bench_now_ns() - t) / 1e9);
    t = bench_now_ns();
    run_latency(s);
    printf("# latency %.3f s\n", (bench_now_ns() - t) / 1e9);
    t = bench_now_ns();
    run_cadence_burn(s);
    printf("# cadence burn %.3f s\n", (bench_now_ns() - t) / 1e9);
    t = bench_now_ns();
    run_idle(s);
    printf("# idle %.3f s\n", (bench_now_ns() - t) / 1e9);
    t = bench_now_ns();
    run_axpy(s);
    printf("# axpy %.3f s\n", (bench_now_ns() - t) / 1e9);
  }
  bench_backend_fini();
  free(hits);
  if (s == &scale_smoke) printf("# %s: smoke ok\n", bench_backend_name);
  return 0;
}
