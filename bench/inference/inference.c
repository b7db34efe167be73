/* libcpuexec benchmarks: inference-shaped rows (bench/inference/model.h's model).
 *
 * One program per backend, like bench/peers/driver.c: this driver plus one
 * backend file, so every backend runs the same operator code. It speaks the
 * table protocol of bench/run.sh (--mode=round|smoke, --quick; --delay-len
 * is accepted and ignored) and prints, per sample,
 *
 *   infer_ips       inferences per second, back to back (one sample = a block
 *                   of inferences after warm-up)
 *   infer_gap2ms    latency of one inference (ms) after a 2 ms / 20 ms
 *   infer_gap20ms   clock_nanosleep: the bursty case, where workers have
 *                   gone idle (spun out or parked) between requests
 *   sess2_ips       two application threads each running inferences at the
 *   sess2_lat       same time: total inferences per second, and the latency
 *                   of each inference (ms); both sessions share the
 *                   backend's one pool (OpenMP: one runtime; oneTBB: one
 *                   arena). Backends with a second pool (libcpuexec,
 *                   pthreadpool, oneTBB: a task_arena) also print the rows
 *                   as "<name>-2pools",
 *                   each session on its own pool
 *   gemm_gflops     the 64 x 512 x 512 GEMM alone, GFLOP/s
 *
 * and a "# policy <row backend>: ..." line saying how the backend ran, which
 * bench/run.sh lists under the table. Every inference's output is compared
 * bit for bit with a serial inference computed first; a difference prints
 * FAIL and exits 1. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../peers/driver.h"
#include "model.h"

typedef struct scale {
  int ips_samples, ips_block;  /* samples, inferences per sample */
  int gap_samples[2];          /* per gap */
  int sess_inferences;         /* per session thread */
  int gemm_samples, gemm_block;
} scale;

static const scale scale_full = {3, 4, {12, 8}, 5, 5, 4};
static const scale scale_quick = {2, 3, {6, 4}, 3, 3, 3};
static const scale scale_smoke = {1, 1, {1, 1}, 1, 1, 1};

static unsigned participants = 2;
static float *reference;   /* the serial inference's output */
static float *gemm_reference;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void sleep_ns(double ns) {
  struct timespec ts = {(time_t)(ns / 1e9), (long)((int64_t)ns % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
  }
}

static void emit(const char *backend, const char *metric, const char *unit, double value) {
  printf("M %s %s %s %.6g\n", backend, metric, unit, value);
}

static void die(const char *what) {
  printf("FAIL %s: %s\n", bench_backend_name, what);
  fflush(stdout);
  exit(1);
}

/* ---- runners ----------------------------------------------------------- */

static void run_serial(void *runner, int64_t n, int64_t chunk, bench_range_fn body, void *ctx) {
  (void)runner, (void)chunk;
  body(ctx, 0, n);
}

static void run_backend(void *runner, int64_t n, int64_t chunk, bench_range_fn body, void *ctx) {
  (void)runner;
  bench_backend_for(n, chunk, body, ctx);
}

static void run_pool(void *runner, int64_t n, int64_t chunk, bench_range_fn body, void *ctx) {
  bench_backend_pool_for(runner, n, chunk, body, ctx);
}

static void check(const model *m, const char *what) {
  if (memcmp(model_output(m), reference, MODEL_VOCAB * sizeof(float)) != 0) {
    char text[128];
    snprintf(text, sizeof text, "%s: the output differs from the serial inference", what);
    die(text);
  }
}

/* ---- rows ------------------------------------------------------------- */

static void run_throughput(model *m, const scale *s) {
  model_infer(m, run_backend, NULL, participants); /* warm-up */
  for (int j = 0; j < s->ips_samples; j++) {
    double t0 = now_ns();
    for (int r = 0; r < s->ips_block; r++) model_infer(m, run_backend, NULL, participants);
    emit(bench_backend_name, "infer_ips", "inf/s", s->ips_block / ((now_ns() - t0) / 1e9));
  }
  check(m, "back to back");
}

static void run_bursty(model *m, const scale *s) {
  static const char *const names[] = {"infer_gap2ms", "infer_gap20ms"};
  static const double gaps[] = {2e6, 20e6};
  double samples[64];
  for (int g = 0; g < 2; g++) {
    int n = s->gap_samples[g] < 64 ? s->gap_samples[g] : 64;
    for (int j = 0; j < n; j++) {
      sleep_ns(gaps[g]);
      double t0 = now_ns();
      model_infer(m, run_backend, NULL, participants);
      samples[j] = (now_ns() - t0) / 1e6;
      check(m, names[g]);
    }
    for (int j = 0; j < n; j++) emit(bench_backend_name, names[g], "ms", samples[j]);
  }
}

typedef struct session {
  model *m;
  model_for_fn run;
  void *runner;
  int inferences;
  pthread_barrier_t *start;
  double lat_ms[16];
  double end_ns;
} session;

static void *session_main(void *arg) {
  session *s = arg;
  pthread_barrier_wait(s->start);
  for (int i = 0; i < s->inferences; i++) {
    double t0 = now_ns();
    model_infer(s->m, s->run, s->runner, participants);
    s->lat_ms[i] = (now_ns() - t0) / 1e6;
  }
  s->end_ns = now_ns();
  return NULL;
}

/* Two threads, each with its own activations, run `inferences` each. */
static void run_sessions(model *ms[2], const char *row, bool own_pools, const scale *s) {
  session ss[2];
  void *pools[2] = {NULL, NULL};
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, 3);
  int n = s->sess_inferences < 16 ? s->sess_inferences : 16;
  for (int k = 0; k < 2; k++) {
    if (own_pools && (pools[k] = bench_backend_pool_open(participants)) == NULL) die("a second pool did not start");
    ss[k] = (session){ms[k], own_pools ? run_pool : run_backend, pools[k], n, &start, {0}, 0};
    /* Warm the pool (a fresh one starts its threads). */
    model_infer(ms[k], ss[k].run, ss[k].runner, participants);
  }
  pthread_t threads[2];
  for (int k = 0; k < 2; k++)
    if (pthread_create(&threads[k], NULL, session_main, &ss[k]) != 0) die("pthread_create failed");
  pthread_barrier_wait(&start);
  double t0 = now_ns();
  for (int k = 0; k < 2; k++) pthread_join(threads[k], NULL);
  double end = ss[0].end_ns > ss[1].end_ns ? ss[0].end_ns : ss[1].end_ns;
  pthread_barrier_destroy(&start);
  for (int k = 0; k < 2; k++) {
    check(ms[k], own_pools ? "sessions on two pools" : "sessions on one pool");
    if (pools[k]) bench_backend_pool_close(pools[k]);
  }
  emit(row, "sess2_ips", "inf/s", 2.0 * n / ((end - t0) / 1e9));
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < n; i++) emit(row, "sess2_lat", "ms", ss[k].lat_ms[i]);
}

static void run_gemm(model *m, const scale *s) {
  model_gemm(m, run_serial, NULL, 1);
  memcpy(gemm_reference, model_gemm_output(m), MODEL_TOKENS * MODEL_HIDDEN * sizeof(float));
  model_gemm(m, run_backend, NULL, participants); /* warm-up */
  for (int j = 0; j < s->gemm_samples; j++) {
    double flops = 0, t0 = now_ns();
    for (int r = 0; r < s->gemm_block; r++) flops += model_gemm(m, run_backend, NULL, participants);
    emit(bench_backend_name, "gemm_gflops", "GFLOP/s", flops / (now_ns() - t0));
  }
  if (memcmp(model_gemm_output(m), gemm_reference, MODEL_TOKENS * MODEL_HIDDEN * sizeof(float)) != 0)
    die("gemm: the output differs from the serial GEMM");
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
    else if (strncmp(a, "--participants=", 15) == 0)
      participants = (unsigned)strtoul(a + 15, NULL, 10);
    else if (strcmp(a, "--quick") == 0)
      quick = true;
    else if (strncmp(a, "--delay-len=", 12) != 0) {
      fprintf(stderr, "usage: %s [--mode=round|smoke] [--quick] [--participants=N]\n", argv[0]);
      return 2;
    }
  }
  const scale *s = strcmp(mode, "smoke") == 0 ? &scale_smoke : quick ? &scale_quick : &scale_full;
  if (strcmp(mode, "smoke") != 0 && strcmp(mode, "round") != 0) {
    /* calibrate/hot are the side-by-side backends' modes, not ours. */
    fprintf(stderr, "%s: mode %s is not supported\n", argv[0], mode);
    return 2;
  }
  if (participants < 1 || participants > 1024) die("participants must be 1..1024");

  model *m = model_create(), *ms[2] = {model_create(), model_create()};
  reference = malloc(MODEL_VOCAB * sizeof(float));
  gemm_reference = malloc(MODEL_TOKENS * MODEL_HIDDEN * sizeof(float));
  if (!m || !ms[0] || !ms[1] || !reference || !gemm_reference) die("out of memory");
  model_infer(m, run_serial, NULL, 1);
  memcpy(reference, model_output(m), MODEL_VOCAB * sizeof(float));

  char err[256] = "";
  if (bench_backend_init(participants, err, sizeof err) != 0) {
    printf("FAIL %s: cannot start with %u participants: %s\n", bench_backend_name, participants, err);
    return 1;
  }
  char text[600];
  bench_backend_describe(text, sizeof text);
  printf("# policy %s: %s\n", bench_backend_name, text);
  bool two_pools = bench_backend_pool_open != NULL;
  if (two_pools) printf("# policy %s-2pools: two pools like the one above, one per session\n", bench_backend_name);

  double t = now_ns();
  run_throughput(m, s);
  run_bursty(m, s);
  printf("# inference rows %.3f s\n", (now_ns() - t) / 1e9);
  t = now_ns();
  run_sessions(ms, bench_backend_name, false, s);
  if (two_pools) {
    char row[64];
    snprintf(row, sizeof row, "%s-2pools", bench_backend_name);
    run_sessions(ms, row, true, s);
  }
  printf("# session rows %.3f s\n", (now_ns() - t) / 1e9);
  run_gemm(m, s);

  bench_backend_fini();
  model_destroy(m);
  model_destroy(ms[0]);
  model_destroy(ms[1]);
  free(reference);
  free(gemm_reference);
  if (s == &scale_smoke) printf("# %s: inference smoke ok\n", bench_backend_name);
  return 0;
}
