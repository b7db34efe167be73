/* Dispatch time of every pthreadpool shape, 1D to 6D with their tile
 * variants. The same source is built twice: against libcpuexec's
 * pthreadpool.h (libcpuexec-pthreadpool) and against Debian's pthreadpool
 * (-lpthreadpool). bench/run_pthreadpool_shapes.sh alternates the two
 * processes and compares medians.
 *
 * usage: bench_pthreadpool_shapes [threads (2)] [milliseconds per shape (40)]
 * prints: "backend <name>" then one line per shape: "<shape> <ns per call> <items per call>" */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthreadpool.h>

#ifdef CPUEXEC_PTHREADPOOL_COMPAT
#define BACKEND "cpuexec"
#else
#define BACKEND "pthreadpool"
#endif

/* The body every shape runs: one store per item of a grid that holds 1024
 * items, addressed from the item's coordinates. */
#define ITEMS 1024
static float out[ITEMS];

static inline void touch(size_t linear, size_t n) {
  for (size_t i = 0; i < n; i++)
    out[(linear + i) & (ITEMS - 1)] += 1.0f;
}

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
  touch(((((i * 4 + j) * 4 + k) * 4 + l) * 4 + m) * 2 + n, 1);
}
static void t6d_t1(void *c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n, size_t tn) {
  (void)c;
  touch(((((i * 4 + j) * 4 + k) * 4 + l) * 4 + m) * 2 + n, tn);
}
static void t6d_t2(void *c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n, size_t tm, size_t tn) {
  (void)c;
  touch(((((i * 4 + j) * 4 + k) * 4 + l) * 4 + m) * 2 + n, tm * tn);
}

/* Each shape: 1024 items; tiled shapes split them into 256 tiles. */
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
  case 14: pthreadpool_parallelize_6d(p, t6d, NULL, 4, 4, 4, 4, 4, 2, 0); break;
  case 15: pthreadpool_parallelize_6d_tile_1d(p, t6d_t1, NULL, 4, 4, 4, 4, 4, 2, 2, 0); break;
  case 16: pthreadpool_parallelize_6d_tile_2d(p, t6d_t2, NULL, 4, 4, 4, 4, 4, 2, 2, 2, 0); break;
  }
}

static const char *const shape_names[] = {
    "1d",         "1d_tile_1d", "2d",         "2d_tile_1d", "2d_tile_2d", "3d",
    "3d_tile_1d", "3d_tile_2d", "4d",         "4d_tile_1d", "4d_tile_2d", "5d",
    "5d_tile_1d", "5d_tile_2d", "6d",         "6d_tile_1d", "6d_tile_2d",
};
#define SHAPES ((int)(sizeof shape_names / sizeof shape_names[0]))

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  size_t threads = argc > 1 ? strtoul(argv[1], NULL, 10) : 2;
  double budget_ns = (argc > 2 ? atof(argv[2]) : 40.0) * 1e6;
  pthreadpool_t pool = pthreadpool_create(threads);
  if (pool == NULL) {
    fprintf(stderr, "pthreadpool_create(%zu) failed\n", threads);
    return 1;
  }
  printf("backend %s threads %zu\n", BACKEND, pthreadpool_get_threads_count(pool));
  for (int s = 0; s < SHAPES; s++) {
    /* Warm up (workers started and spinning), then size a block of calls
     * to ~1/9 of the budget and keep the median of 9 blocks. */
    double start = now_ns();
    long calls = 0;
    while (now_ns() - start < budget_ns / 9 || calls < 10) {
      run_shape(pool, s);
      calls++;
    }
    double block[9];
    for (int b = 0; b < 9; b++) {
      double t0 = now_ns();
      for (long c = 0; c < calls; c++)
        run_shape(pool, s);
      block[b] = (now_ns() - t0) / (double)calls;
    }
    qsort(block, 9, sizeof block[0], compare_double);
    printf("%s %.0f %d\n", shape_names[s], block[4], ITEMS);
  }
  pthreadpool_destroy(pool);
  return out[0] < 0.0f; /* keeps the body observable */
}
