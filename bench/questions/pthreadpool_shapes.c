/* Dispatch time of every pthreadpool shape, 1D to 6D with their tile
 * variants, as rows of `make bench`'s table (bench/run.sh protocol). The
 * same source is built twice: against libcpuexec's pthreadpool.h
 * (libcpuexec-pthreadpool, rows "libcpuexec") and against Debian's
 * (-lpthreadpool, rows "pthreadpool"); the runner runs each in its own
 * process, in rotating order every round, and reports medians and ratios.
 *
 * usage: bench_pthreadpool_shapes [--mode=round|smoke] [--quick] [--delay-len=N (ignored)]
 * prints "M <backend> pp_<shape> ns <ns per call>", several samples per
 * shape; BENCH_PARTICIPANTS sets the threads (default 2). Exits 1 when an
 * item was skipped or repeated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthreadpool.h>
#include "../clock.h"

#ifdef CPUEXEC_PTHREADPOOL_COMPAT
#define BACKEND "libcpuexec"
#else
#define BACKEND "pthreadpool"
#endif

/* The body every shape runs: the call adds its item count (1, or the tile's
 * area) to the slot of its first item. Calls own distinct slots, so the
 * body is race-free, and after K calls the slots sum to K * ITEMS. */
#define ITEMS 1024
static float out[ITEMS];

static inline void touch(size_t linear, size_t n) { out[linear] += (float)n; }

static void t1d(void *c, size_t i) { (void)c; touch(i, 1); }
static void t1d_t1(void *c, size_t i, size_t ti) { (void)c; touch(i, ti); }
static void t2d(void *c, size_t i, size_t j) { (void)c; touch(i * 32 + j, 1); }
static void t2d_t1(void *c, size_t i, size_t j, size_t tj) { (void)c; touch(i * 32 + j, tj); }
static void t2d_t2(void *c, size_t i, size_t j, size_t ti, size_t tj) { (void)c; touch(i * 32 + j, ti * tj); }
static void t3d(void *c, size_t i, size_t j, size_t k) { (void)c; touch((i * 8 + j) * 16 + k, 1); }
static void t3d_t1(void *c, size_t i, size_t j, size_t k, size_t tk) { (void)c; touch((i * 8 + j) * 16 + k, tk); }
static void t3d_t2(void *c, size_t i, size_t j, size_t k, size_t tj, size_t tk) {
  (void)c;
  touch((i * 8 + j) * 16 + k, tj * tk);
}
static void t4d(void *c, size_t i, size_t j, size_t k, size_t l) { (void)c; touch(((i * 4 + j) * 8 + k) * 8 + l, 1); }
static void t4d_t1(void *c, size_t i, size_t j, size_t k, size_t l, size_t tl) {
  (void)c;
  touch(((i * 4 + j) * 8 + k) * 8 + l, tl);
}
static void t4d_t2(void *c, size_t i, size_t j, size_t k, size_t l, size_t tk, size_t tl) {
  (void)c;
  touch(((i * 4 + j) * 8 + k) * 8 + l, tk * tl);
}
static void t5d(void *c, size_t i, size_t j, size_t k, size_t l, size_t m) {
  (void)c;
  touch((((i * 4 + j) * 4 + k) * 4 + l) * 4 + m, 1);
}
static void t5d_t1(void *c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t tm) {
  (void)c;
  touch((((i * 4 + j) * 4 + k) * 4 + l) * 4 + m, tm);
}
static void t5d_t2(void *c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t tl, size_t tm) {
  (void)c;
  touch((((i * 4 + j) * 4 + k) * 4 + l) * 4 + m, tl * tm);
}
static void t6d(void *c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n) {
  (void)c;
  touch(((((i * 4 + j) * 4 + k) * 4 + l) * 2 + m) * 2 + n, 1);
}
static void t6d_t1(void *c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n, size_t tn) {
  (void)c;
  touch(((((i * 4 + j) * 4 + k) * 4 + l) * 2 + m) * 2 + n, tn);
}
static void t6d_t2(void *c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n, size_t tm, size_t tn) {
  (void)c;
  touch(((((i * 4 + j) * 4 + k) * 4 + l) * 2 + m) * 2 + n, tm * tn);
}

/* Each shape: 1024 items; tiled shapes split them into 256 tiles (6d_tile_1d: 512). */
static void run_shape(pthreadpool_t p, int s) {
  switch (s) {
  case 0: pthreadpool_parallelize_1d(p, t1d, NULL, 1024, 0); break;
  case 1: pthreadpool_parallelize_1d_tile_1d(p, t1d_t1, NULL, 1024, 4, 0); break;
  case 2: pthreadpool_parallelize_2d(p, t2d, NULL, 32, 32, 0); break;
  case 3: pthreadpool_parallelize_2d_tile_1d(p, t2d_t1, NULL, 32, 32, 4, 0); break;
  case 4: pthreadpool_parallelize_2d_tile_2d(p, t2d_t2, NULL, 32, 32, 2, 2, 0); break;
  case 5: pthreadpool_parallelize_3d(p, t3d, NULL, 8, 8, 16, 0); break;
  case 6: pthreadpool_parallelize_3d_tile_1d(p, t3d_t1, NULL, 8, 8, 16, 4, 0); break;
  case 7: pthreadpool_parallelize_3d_tile_2d(p, t3d_t2, NULL, 8, 8, 16, 2, 2, 0); break;
  case 8: pthreadpool_parallelize_4d(p, t4d, NULL, 4, 4, 8, 8, 0); break;
  case 9: pthreadpool_parallelize_4d_tile_1d(p, t4d_t1, NULL, 4, 4, 8, 8, 4, 0); break;
  case 10: pthreadpool_parallelize_4d_tile_2d(p, t4d_t2, NULL, 4, 4, 8, 8, 2, 2, 0); break;
  case 11: pthreadpool_parallelize_5d(p, t5d, NULL, 4, 4, 4, 4, 4, 0); break;
  case 12: pthreadpool_parallelize_5d_tile_1d(p, t5d_t1, NULL, 4, 4, 4, 4, 4, 4, 0); break;
  case 13: pthreadpool_parallelize_5d_tile_2d(p, t5d_t2, NULL, 4, 4, 4, 4, 4, 2, 2, 0); break;
  case 14: pthreadpool_parallelize_6d(p, t6d, NULL, 4, 4, 4, 4, 2, 2, 0); break;
  case 15: pthreadpool_parallelize_6d_tile_1d(p, t6d_t1, NULL, 4, 4, 4, 4, 2, 2, 2, 0); break;
  case 16: pthreadpool_parallelize_6d_tile_2d(p, t6d_t2, NULL, 4, 4, 4, 4, 2, 2, 2, 2, 0); break;
  }
}

static const char *const shape_names[] = {
    "1d",         "1d_tile_1d", "2d",         "2d_tile_1d", "2d_tile_2d", "3d",
    "3d_tile_1d", "3d_tile_2d", "4d",         "4d_tile_1d", "4d_tile_2d", "5d",
    "5d_tile_1d", "5d_tile_2d", "6d",         "6d_tile_1d", "6d_tile_2d",
};
#define SHAPES ((int)(sizeof shape_names / sizeof shape_names[0]))

/* Sums the slots and clears them; ok when the sum is calls * ITEMS. */
static int check_and_clear(double calls) {
  double sum = 0;
  for (size_t i = 0; i < ITEMS; i++) {
    sum += out[i];
    out[i] = 0;
  }
  return sum == calls * ITEMS;
}

int main(int argc, char **argv) {
  const char *mode = "round";
  int quick = 0;
  for (int a = 1; a < argc; a++) {
    if (strncmp(argv[a], "--mode=", 7) == 0)
      mode = argv[a] + 7;
    else if (strcmp(argv[a], "--quick") == 0)
      quick = 1;
    else if (strncmp(argv[a], "--delay-len=", 12) != 0) {
      fprintf(stderr, "usage: %s [--mode=round|smoke] [--quick] [--delay-len=N]\n", argv[0]);
      return 2;
    }
  }
  int smoke = strcmp(mode, "smoke") == 0;
  if (!smoke && strcmp(mode, "round") != 0) {
    fprintf(stderr, "%s: --mode=%s is not supported (round, smoke)\n", argv[0], mode);
    return 2;
  }
  const char *env = getenv("BENCH_PARTICIPANTS");
  size_t threads = env && *env ? strtoul(env, NULL, 10) : 2;
  pthreadpool_t pool = pthreadpool_create(threads);
  if (pool == NULL || pthreadpool_get_threads_count(pool) != threads) {
    printf("FAIL %s: no pool of %zu threads\n", BACKEND, threads);
    return 1;
  }
  printf("# %s pthreadpool shapes: %zu threads, %d items a call\n", BACKEND, threads, ITEMS);
  /* Per shape: a warm-up sizes a block of calls to ~budget / blocks; each
   * block is one sample. Smoke: a few calls, results checked only. */
  const double budget_ns = smoke ? 0 : (quick ? 8e6 : 30e6);
  const int blocks = smoke ? 1 : (quick ? 3 : 5);
  int failed = 0;
  for (int s = 0; s < SHAPES; s++) {
    double start = bench_now_ns(), calls = 0;
    while (bench_now_ns() - start < budget_ns / blocks || calls < 3) {
      run_shape(pool, s);
      calls++;
    }
    long block_calls = (long)calls;
    for (int b = 0; b < blocks; b++) {
      double t0 = bench_now_ns();
      for (long c = 0; c < block_calls; c++)
        run_shape(pool, s);
      double per_call = (bench_now_ns() - t0) / (double)block_calls;
      calls += (double)block_calls;
      if (!smoke)
        printf("M %s pp_%s ns %.0f\n", BACKEND, shape_names[s], per_call);
    }
    if (!check_and_clear(calls)) {
      printf("FAIL %s: pp_%s did not call every item exactly once\n", BACKEND, shape_names[s]);
      failed = 1;
    }
  }
  pthreadpool_destroy(pool);
  if (smoke && !failed)
    printf("# %s pthreadpool shapes: smoke ok\n", BACKEND);
  return failed;
}
