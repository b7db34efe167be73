/* libcpuexec-pthreadpool: the interface of pthreadpool's current header
 * beyond Debian's, each function against the behaviour its declaration
 * promises: the dynamic tilings (runs of whole tiles covering the grid
 * exactly once, few calls, on every participant), the uarch shapes tiled
 * along the last dimension, pthreadpool_set_threads_count, and pools on an
 * application's struct pthreadpool_executor (pthreadpool_create_v2,
 * pthreadpool_update_executor, pthreadpool_release_executor_threads, the
 * DONT_SPIN_WORKERS flag), including an executor that runs its tasks late. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cpuexec.h>
#include <cpuexec/compat/libraries.h>
#include <pthreadpool.h>

#include "support/portable.h"
#include "support/rendezvous.h"
#include "support/test_util.h"

#define MAX_DIMS 4
#define UARCH 42u /* the default uarch index the calls pass */

/* ---- a grid that records every call -----------------------------------------
 * kind[d]: 0 one item along d per call, 1 a fixed tile (min(tile, range -
 * start)), 2 dynamic (a multiple of tile unless the run reaches range). */
typedef struct grid {
  int dims;
  size_t range[MAX_DIMS], tile[MAX_DIMS];
  int kind[MAX_DIMS];
  size_t elements;
  atomic_int *hits;
  atomic_size_t calls;
  atomic_size_t bad;      /* a call outside the grid, misaligned, or of a wrong count */
  atomic_size_t bad_thread;
  atomic_size_t bad_uarch;
  atomic_uint threads_seen; /* bit t: thread index t made a call */
  size_t thread_limit;
  bool rendezvous;           /* each participant's first call waits for the others */
  _Atomic uint64_t arrived;
} grid;

static void grid_init(grid *g, int dims, const size_t *range, const size_t *tile, const int *kind,
                      size_t thread_limit) {
  memset(g, 0, sizeof *g);
  g->dims = dims;
  g->elements = 1;
  for (int d = 0; d < dims; d++) {
    g->range[d] = range[d];
    g->tile[d] = tile[d];
    g->kind[d] = kind[d];
    g->elements *= range[d];
  }
  g->hits = calloc(g->elements ? g->elements : 1, sizeof *g->hits);
  assert_non_null(g->hits);
  g->thread_limit = thread_limit;
}

static void grid_mark(grid *g, const size_t *start, const size_t *count) {
  atomic_fetch_add(&g->calls, 1);
  if (g->rendezvous) test_rendezvous(&g->arrived);
  for (int d = 0; d < g->dims; d++) {
    size_t s = start[d], c = count[d], r = g->range[d], t = g->tile[d];
    bool ok = s < r && c > 0 && c <= r - s;
    if (ok && g->kind[d] == 0) ok = c == 1;
    if (ok && g->kind[d] == 1) ok = s % t == 0 && c == (t < r - s ? t : r - s);
    if (ok && g->kind[d] == 2) ok = s % t == 0 && (c % t == 0 || s + c == r);
    if (!ok) {
      atomic_fetch_add(&g->bad, 1);
      return;
    }
  }
  size_t pos[MAX_DIMS] = {0};
  for (int d = 0; d < g->dims; d++) pos[d] = start[d];
  for (;;) {
    size_t flat = 0;
    for (int d = 0; d < g->dims; d++) flat = flat * g->range[d] + pos[d];
    atomic_fetch_add(&g->hits[flat], 1);
    int d = g->dims - 1;
    for (; d >= 0; d--) {
      if (++pos[d] < start[d] + count[d]) break;
      pos[d] = start[d];
    }
    if (d < 0) return;
  }
}

static void grid_thread(grid *g, size_t thread) {
  if (thread >= g->thread_limit) atomic_fetch_add(&g->bad_thread, 1);
  else if (thread < 32) atomic_fetch_or(&g->threads_seen, 1u << thread);
}

static void grid_uarch(grid *g, uint32_t uarch) {
  if (uarch != UARCH) atomic_fetch_add(&g->bad_uarch, 1);
}

static void grid_assert(grid *g, const char *what) {
  if (atomic_load(&g->bad) || atomic_load(&g->bad_thread) || atomic_load(&g->bad_uarch))
    fail_msg("%s: %zu calls off the grid or of wrong counts, %zu thread indices out of range, %zu wrong uarch", what,
             atomic_load(&g->bad), atomic_load(&g->bad_thread), atomic_load(&g->bad_uarch));
  for (size_t e = 0; e < g->elements; e++)
    if (atomic_load(&g->hits[e]) != 1) fail_msg("%s: element %zu ran %d times", what, e, atomic_load(&g->hits[e]));
}

static void grid_free(grid *g) { free(g->hits); }

#define Z(...) ((size_t[]){__VA_ARGS__})

/* ---- the callbacks ---------------------------------------------------------- */
static void d1(void *c, size_t i, size_t n) { grid_mark(c, Z(i), Z(n)); }
static void d1_t(void *c, uint32_t t, size_t i, size_t n) { grid_thread(c, t); d1(c, i, n); }
static void d1_ut(void *c, uint32_t u, size_t t, size_t i, size_t n) { grid_uarch(c, u); grid_thread(c, t); d1(c, i, n); }
static void d2t1(void *c, size_t i, size_t j, size_t nj) { grid_mark(c, Z(i, j), Z(1, nj)); }
static void d2t1_t(void *c, uint32_t t, size_t i, size_t j, size_t nj) { grid_thread(c, t); d2t1(c, i, j, nj); }
static void d2t1_ut(void *c, uint32_t u, size_t t, size_t i, size_t j, size_t nj) {
  grid_uarch(c, u);
  grid_thread(c, t);
  d2t1(c, i, j, nj);
}
static void d2t2(void *c, size_t i, size_t j, size_t ni, size_t nj) { grid_mark(c, Z(i, j), Z(ni, nj)); }
static void d2t2_u(void *c, uint32_t u, size_t i, size_t j, size_t ni, size_t nj) { grid_uarch(c, u); d2t2(c, i, j, ni, nj); }
static void d2t2_t(void *c, uint32_t t, size_t i, size_t j, size_t ni, size_t nj) { grid_thread(c, t); d2t2(c, i, j, ni, nj); }
static void d3t1(void *c, size_t i, size_t j, size_t k, size_t nk) { grid_mark(c, Z(i, j, k), Z(1, 1, nk)); }
static void d3t1_t(void *c, uint32_t t, size_t i, size_t j, size_t k, size_t nk) { grid_thread(c, t); d3t1(c, i, j, k, nk); }
static void d3t1_ut(void *c, uint32_t u, size_t t, size_t i, size_t j, size_t k, size_t nk) {
  grid_uarch(c, u);
  grid_thread(c, t);
  d3t1(c, i, j, k, nk);
}
static void d3t2(void *c, size_t i, size_t j, size_t k, size_t nj, size_t nk) { grid_mark(c, Z(i, j, k), Z(1, nj, nk)); }
static void d3t2_u(void *c, uint32_t u, size_t i, size_t j, size_t k, size_t nj, size_t nk) {
  grid_uarch(c, u);
  d3t2(c, i, j, k, nj, nk);
}
static void d3t2_t(void *c, uint32_t t, size_t i, size_t j, size_t k, size_t nj, size_t nk) {
  grid_thread(c, t);
  d3t2(c, i, j, k, nj, nk);
}
static void d4t2(void *c, size_t i, size_t j, size_t k, size_t l, size_t nk, size_t nl) {
  grid_mark(c, Z(i, j, k, l), Z(1, 1, nk, nl));
}
static void d4t2_u(void *c, uint32_t u, size_t i, size_t j, size_t k, size_t l, size_t nk, size_t nl) {
  grid_uarch(c, u);
  d4t2(c, i, j, k, l, nk, nl);
}
/* The uarch shapes tiled along the last dimension (a fixed tile). */
static void u2t1(void *c, uint32_t u, size_t i, size_t j, size_t tj) { grid_uarch(c, u); grid_mark(c, Z(i, j), Z(1, tj)); }
static void u2t1_t(void *c, uint32_t u, size_t t, size_t i, size_t j, size_t tj) { grid_thread(c, t); u2t1(c, u, i, j, tj); }
static void u3t1(void *c, uint32_t u, size_t i, size_t j, size_t k, size_t tk) {
  grid_uarch(c, u);
  grid_mark(c, Z(i, j, k), Z(1, 1, tk));
}
static void u3t1_t(void *c, uint32_t u, size_t t, size_t i, size_t j, size_t k, size_t tk) {
  grid_thread(c, t);
  u3t1(c, u, i, j, k, tk);
}

/* ---- every function of the matrix -------------------------------------------- */
typedef struct fn_case {
  const char *name;
  int dims;
  int kind[MAX_DIMS];
  void (*run)(pthreadpool_t pool, grid *g, uint32_t flags);
} fn_case;

#define R g->range
#define T g->tile
static void r_d1(pthreadpool_t p, grid *g, uint32_t f) { pthreadpool_parallelize_1d_tile_1d_dynamic(p, d1, g, R[0], T[0], f); }
static void r_d1_t(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_1d_tile_1d_dynamic_with_thread(p, d1_t, g, R[0], T[0], f);
}
static void r_d1_ut(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_1d_tile_1d_dynamic_with_uarch_with_thread(p, d1_ut, g, UARCH, 0, R[0], T[0], f);
}
static void r_d2t1(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_2d_tile_1d_dynamic(p, d2t1, g, R[0], R[1], T[1], f);
}
static void r_d2t1_t(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_2d_tile_1d_dynamic_with_thread(p, d2t1_t, g, R[0], R[1], T[1], f);
}
static void r_d2t1_ut(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_2d_tile_1d_dynamic_with_uarch_with_thread(p, d2t1_ut, g, UARCH, 0, R[0], R[1], T[1], f);
}
static void r_d2t2(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_2d_tile_2d_dynamic(p, d2t2, g, R[0], R[1], T[0], T[1], f);
}
static void r_d2t2_u(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_2d_tile_2d_dynamic_with_uarch(p, d2t2_u, g, UARCH, 0, R[0], R[1], T[0], T[1], f);
}
static void r_d2t2_t(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_2d_tile_2d_dynamic_with_thread(p, d2t2_t, g, R[0], R[1], T[0], T[1], f);
}
static void r_d3t1(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_3d_tile_1d_dynamic(p, d3t1, g, R[0], R[1], R[2], T[2], f);
}
static void r_d3t1_t(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_3d_tile_1d_dynamic_with_thread(p, d3t1_t, g, R[0], R[1], R[2], T[2], f);
}
static void r_d3t1_ut(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_3d_tile_1d_dynamic_with_uarch_with_thread(p, d3t1_ut, g, UARCH, 0, R[0], R[1], R[2], T[2],
                                                                   f);
}
static void r_d3t2(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_3d_tile_2d_dynamic(p, d3t2, g, R[0], R[1], R[2], T[1], T[2], f);
}
static void r_d3t2_u(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_3d_tile_2d_dynamic_with_uarch(p, d3t2_u, g, UARCH, 0, R[0], R[1], R[2], T[1], T[2], f);
}
static void r_d3t2_t(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_3d_tile_2d_dynamic_with_thread(p, d3t2_t, g, R[0], R[1], R[2], T[1], T[2], f);
}
static void r_d4t2(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_4d_tile_2d_dynamic(p, d4t2, g, R[0], R[1], R[2], R[3], T[2], T[3], f);
}
static void r_d4t2_u(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_4d_tile_2d_dynamic_with_uarch(p, d4t2_u, g, UARCH, 0, R[0], R[1], R[2], R[3], T[2], T[3],
                                                        f);
}
static void r_u2t1(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_2d_tile_1d_with_uarch(p, u2t1, g, UARCH, 0, R[0], R[1], T[1], f);
}
static void r_u2t1_t(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_2d_tile_1d_with_uarch_with_thread(p, u2t1_t, g, UARCH, 0, R[0], R[1], T[1], f);
}
static void r_u3t1(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_3d_tile_1d_with_uarch(p, u3t1, g, UARCH, 0, R[0], R[1], R[2], T[2], f);
}
static void r_u3t1_t(pthreadpool_t p, grid *g, uint32_t f) {
  pthreadpool_parallelize_3d_tile_1d_with_uarch_with_thread(p, u3t1_t, g, UARCH, 0, R[0], R[1], R[2], T[2], f);
}
#undef R
#undef T

static const fn_case cases[] = {
    {"1d_tile_1d_dynamic", 1, {2}, r_d1},
    {"1d_tile_1d_dynamic_with_thread", 1, {2}, r_d1_t},
    {"1d_tile_1d_dynamic_with_uarch_with_thread", 1, {2}, r_d1_ut},
    {"2d_tile_1d_dynamic", 2, {0, 2}, r_d2t1},
    {"2d_tile_1d_dynamic_with_thread", 2, {0, 2}, r_d2t1_t},
    {"2d_tile_1d_dynamic_with_uarch_with_thread", 2, {0, 2}, r_d2t1_ut},
    {"2d_tile_2d_dynamic", 2, {2, 2}, r_d2t2},
    {"2d_tile_2d_dynamic_with_uarch", 2, {2, 2}, r_d2t2_u},
    {"2d_tile_2d_dynamic_with_thread", 2, {2, 2}, r_d2t2_t},
    {"3d_tile_1d_dynamic", 3, {0, 0, 2}, r_d3t1},
    {"3d_tile_1d_dynamic_with_thread", 3, {0, 0, 2}, r_d3t1_t},
    {"3d_tile_1d_dynamic_with_uarch_with_thread", 3, {0, 0, 2}, r_d3t1_ut},
    {"3d_tile_2d_dynamic", 3, {0, 2, 2}, r_d3t2},
    {"3d_tile_2d_dynamic_with_uarch", 3, {0, 2, 2}, r_d3t2_u},
    {"3d_tile_2d_dynamic_with_thread", 3, {0, 2, 2}, r_d3t2_t},
    {"4d_tile_2d_dynamic", 4, {0, 0, 2, 2}, r_d4t2},
    {"4d_tile_2d_dynamic_with_uarch", 4, {0, 0, 2, 2}, r_d4t2_u},
    {"2d_tile_1d_with_uarch", 2, {0, 1}, r_u2t1},
    {"2d_tile_1d_with_uarch_with_thread", 2, {0, 1}, r_u2t1_t},
    {"3d_tile_1d_with_uarch", 3, {0, 0, 1}, r_u3t1},
    {"3d_tile_1d_with_uarch_with_thread", 3, {0, 0, 1}, r_u3t1_t},
};
#define CASES (sizeof cases / sizeof cases[0])

/* Ranges and tiles per dimension count: an uneven last tile, a last
 * dimension of one tile (runs merge along the one before), tiles of 1. */
typedef struct grid_size {
  size_t range[MAX_DIMS], tile[MAX_DIMS];
} grid_size;
static const grid_size sizes[][3] = {
    {{{1223}, {11}}, {{64}, {64}}, {{7}, {1}}},
    {{{43, 53}, {3, 5}}, {{17, 6}, {4, 8}}, {{5, 9}, {1, 1}}},
    {{{5, 7, 61}, {1, 3, 4}}, {{6, 23, 5}, {1, 4, 6}}, {{3, 4, 5}, {1, 1, 1}}},
    {{{3, 4, 29, 31}, {1, 1, 5, 6}}, {{2, 3, 19, 3}, {1, 1, 4, 8}}, {{2, 2, 3, 3}, {1, 1, 1, 1}}},
};

static void run_matrix(pthreadpool_t pool, size_t thread_limit, const char *pool_name) {
  for (size_t c = 0; c < CASES; c++)
    for (int s = 0; s < 3; s++) {
      const grid_size *gs = &sizes[cases[c].dims - 1][s];
      grid g;
      grid_init(&g, cases[c].dims, gs->range, gs->tile, cases[c].kind, thread_limit);
      cases[c].run(pool, &g, s == 2 ? PTHREADPOOL_FLAG_DONT_SPIN_WORKERS : 0);
      char what[160];
      snprintf(what, sizeof what, "%s on %s, size %d", cases[c].name, pool_name, s);
      grid_assert(&g, what);
      grid_free(&g);
    }
}

static void every_function_covers_each_item_once_with_a_null_pool(void **state) {
  (void)state;
  run_matrix(NULL, 1, "a NULL pool");
}

static void every_function_covers_each_item_once_on_one_thread(void **state) {
  (void)state;
  pthreadpool_t pool = pthreadpool_create(1);
  assert_non_null(pool);
  run_matrix(pool, 1, "a one-thread pool");
  pthreadpool_destroy(pool);
}

static int matrix_in_session(void *ctx) {
  pthreadpool_t pool = pthreadpool_create(0);
  assert_non_null(pool);
  assert_int_equal(pthreadpool_get_threads_count(pool), 2);
  run_matrix(pool, 2, ctx);
  pthreadpool_destroy(pool);
  return 0;
}

static void every_function_covers_each_item_once_on_two_threads(void **state) {
  (void)state;
  cpuexec_session *s = test_session(2);
  assert_int_equal(cpuexec_session_run(s, "a two-thread session pool", matrix_in_session), 0);
  cpuexec_session_destroy(s);
}

/* ---- dynamic calls are few, and run on every participant ---------------------- */
static void a_serial_dynamic_call_makes_one_call_per_row(void **state) {
  (void)state;
  struct {
    size_t c;
    int s;
    size_t calls;
  } expect[] = {
      {0, 0, 1},                 /* 1d: the whole range at once */
      {3, 0, 43},                /* 2d_tile_1d: one run per i */
      {6, 0, 15},                /* 2d_tile_2d, 11 tiles along j: one run per i tile */
      {6, 1, 1},                 /* 2d_tile_2d, one tile along j: one run along i */
      {9, 0, 5 * 7},             /* 3d_tile_1d: one per (i, j) */
      {12, 1, 6},                /* 3d_tile_2d, one tile along k: one run along j per i */
      {15, 0, 3 * 4 * 6},        /* 4d_tile_2d, 6 tiles along l: one run per (i, j, k tile) */
      {15, 1, 2 * 3},            /* 4d_tile_2d, one tile along l: one run along k per (i, j) */
  };
  for (size_t e = 0; e < sizeof expect / sizeof expect[0]; e++) {
    const fn_case *fc = &cases[expect[e].c];
    const grid_size *gs = &sizes[fc->dims - 1][expect[e].s];
    grid g;
    grid_init(&g, fc->dims, gs->range, gs->tile, fc->kind, 1);
    fc->run(NULL, &g, 0);
    grid_assert(&g, fc->name);
    if (atomic_load(&g.calls) != expect[e].calls)
      fail_msg("%s, size %d: %zu calls on a NULL pool, expected %zu", fc->name, expect[e].s, atomic_load(&g.calls),
               expect[e].calls);
    grid_free(&g);
  }
}

static int dynamic_on_both(void *ctx) {
  (void)ctx;
  pthreadpool_t pool = pthreadpool_create(2);
  assert_non_null(pool);
  for (size_t c = 0; c < CASES; c++) {
    const grid_size *gs = &sizes[cases[c].dims - 1][0];
    grid g;
    grid_init(&g, cases[c].dims, gs->range, gs->tile, cases[c].kind, 2);
    g.rendezvous = true;
    cases[c].run(pool, &g, 0);
    grid_assert(&g, cases[c].name);
    /* The rendezvous held each participant's first call until the other
     * had made one: both ran, and (with_thread) with indices 0 and 1. */
    if (strstr(cases[c].name, "thread") != NULL && atomic_load(&g.threads_seen) != 3u)
      fail_msg("%s: thread indices seen 0x%x, expected 0 and 1", cases[c].name, atomic_load(&g.threads_seen));
    /* A parallel dynamic call still merges: fewer calls than tiles. */
    size_t tiles = 1;
    for (int d = 0; d < g.dims; d++) tiles *= (g.range[d] + g.tile[d] - 1) / g.tile[d];
    if (cases[c].kind[g.dims - 1] == 2 && tiles > 8 && atomic_load(&g.calls) >= tiles)
      fail_msg("%s: %zu calls for %zu tiles", cases[c].name, atomic_load(&g.calls), tiles);
    grid_free(&g);
  }
  pthreadpool_destroy(pool);
  return 0;
}

static void a_parallel_call_runs_on_every_participant_in_few_calls(void **state) {
  (void)state;
  cpuexec_session *s = test_session(2);
  assert_int_equal(cpuexec_session_run(s, NULL, dynamic_on_both), 0);
  cpuexec_session_destroy(s);
}

typedef struct nested {
  pthreadpool_t pool;
  atomic_int wrong;
} nested;

static void nested_dynamic(void *ctx, size_t i, size_t n) {
  (void)i;
  nested *outer = ctx;
  for (size_t k = 0; k < n; k++) {
    /* From inside a task: inline, on this thread, in one call (thread index 0). */
    grid g;
    grid_init(&g, 1, Z(100), Z(7), (int[]){2}, 1);
    pthreadpool_parallelize_1d_tile_1d_dynamic_with_thread(outer->pool, d1_t, &g, 100, 7, 0);
    if (atomic_load(&g.calls) != 1 || atomic_load(&g.bad) || atomic_load(&g.bad_thread)) atomic_fetch_add(&outer->wrong, 1);
    grid_free(&g);
  }
}

static int nested_in_session(void *ctx) {
  (void)ctx;
  pthreadpool_t pool = pthreadpool_create(2);
  nested outer = {pool, 0};
  pthreadpool_parallelize_1d_tile_1d_dynamic(pool, nested_dynamic, &outer, 16, 1, 0);
  assert_int_equal(atomic_load(&outer.wrong), 0);
  pthreadpool_destroy(pool);
  return 0;
}

static void a_dynamic_call_from_inside_a_task_runs_inline(void **state) {
  (void)state;
  cpuexec_session *s = test_session(2);
  assert_int_equal(cpuexec_session_run(s, NULL, nested_in_session), 0);
  cpuexec_session_destroy(s);
}

/* ---- pthreadpool_set_threads_count ------------------------------------------------ */
static void count_participants(void *ctx, size_t i) {
  (void)i;
  atomic_int *most = ctx;
  int n = cpuexec_participant_count(), seen = atomic_load(most);
  while (n > seen && !atomic_compare_exchange_weak(most, &seen, n)) {
  }
}

static int set_threads_in_session(void *ctx) {
  (void)ctx;
  pthreadpool_t pool = pthreadpool_create(0);
  assert_int_equal(pthreadpool_get_threads_count(pool), 2);
  assert_int_equal(pthreadpool_set_threads_count(pool, 1), 1);
  assert_int_equal(pthreadpool_get_threads_count(pool), 1);
  atomic_int most = 0;
  pthreadpool_parallelize_1d(pool, count_participants, &most, 1000, 0);
  assert_int_equal(atomic_load(&most), 1); /* one participant: the caller alone */
  /* Clamped to the count the pool was made with; 0 restores it. */
  assert_int_equal(pthreadpool_set_threads_count(pool, 64), 2);
  assert_int_equal(pthreadpool_set_threads_count(pool, 1), 1);
  assert_int_equal(pthreadpool_set_threads_count(pool, 0), 2);
  assert_int_equal(pthreadpool_get_threads_count(pool), 2);
  grid g;
  grid_init(&g, 1, Z(200), Z(1), (int[]){2}, 2);
  g.rendezvous = true;
  pthreadpool_parallelize_1d_tile_1d_dynamic_with_thread(pool, d1_t, &g, 200, 1, 0);
  grid_assert(&g, "after set_threads_count(0)");
  assert_int_equal(atomic_load(&g.threads_seen), 3u);
  grid_free(&g);
  pthreadpool_destroy(pool);
  return 0;
}

static void set_threads_count_limits_later_calls_within_the_created_count(void **state) {
  (void)state;
  assert_int_equal(pthreadpool_set_threads_count(NULL, 8), 1);
  pthreadpool_t one = pthreadpool_create(1);
  assert_int_equal(pthreadpool_set_threads_count(one, 4), 1);
  assert_int_equal(pthreadpool_set_threads_count(one, 0), 1);
  pthreadpool_destroy(one);
  cpuexec_session *s = test_session(2);
  assert_int_equal(cpuexec_session_run(s, NULL, set_threads_in_session), 0);
  cpuexec_session_destroy(s);
}

/* ---- an application's executor ------------------------------------------------------ */
/* A small executor of the application's own: `threads` threads taking tasks
 * from a queue. With threads 0 it only queues them (a "late" executor): the
 * test runs them itself, when it wants. */
#define APP_MAX_TASKS 4096

typedef struct app_executor app_executor;
typedef struct app_thread_arg {
  app_executor *a;
  int index;
} app_thread_arg;

struct app_executor {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  struct {
    void *context;
    void (*task)(void *);
  } queue[APP_MAX_TASKS];
  size_t head, tail;
  bool stop;
  int lent;          /* what num_threads() says */
  int threads;
  pthread_t thread[8];
  int tid[8];        /* the kernel ids of its threads */
  atomic_int ready;
  atomic_size_t scheduled;
  atomic_size_t ran;
  app_thread_arg args[8];
};

static int app_num_threads(void *ctx) { return ((app_executor *)ctx)->lent; }

static void app_schedule(void *ctx, void *context, void (*task)(void *)) {
  app_executor *a = ctx;
  atomic_fetch_add(&a->scheduled, 1);
  pthread_mutex_lock(&a->lock);
  if (a->tail - a->head < APP_MAX_TASKS) {
    a->queue[a->tail % APP_MAX_TASKS].context = context;
    a->queue[a->tail % APP_MAX_TASKS].task = task;
    a->tail++;
  } else {
    abort(); /* the test never queues this many */
  }
  pthread_cond_signal(&a->wake);
  pthread_mutex_unlock(&a->lock);
}

/* Runs one queued task; false when the queue is empty (or stopping). */
static bool app_run_one(app_executor *a, bool wait) {
  pthread_mutex_lock(&a->lock);
  while (wait && a->head == a->tail && !a->stop) pthread_cond_wait(&a->wake, &a->lock);
  if (a->head == a->tail) {
    pthread_mutex_unlock(&a->lock);
    return false;
  }
  void *context = a->queue[a->head % APP_MAX_TASKS].context;
  void (*task)(void *) = a->queue[a->head % APP_MAX_TASKS].task;
  a->head++;
  pthread_mutex_unlock(&a->lock);
  task(context);
  atomic_fetch_add(&a->ran, 1);
  return true;
}

static void *app_thread_main(void *p) {
  app_thread_arg *arg = p;
  app_executor *a = arg->a;
  a->tid[arg->index] = test_thread_id();
  atomic_fetch_add(&a->ready, 1);
  while (app_run_one(a, true)) {
  }
  return NULL;
}

static const struct pthreadpool_executor app_ops = {app_num_threads, app_schedule};

static app_executor *app_start(int threads, int lent) {
  app_executor *a = calloc(1, sizeof *a);
  assert_non_null(a);
  pthread_mutex_init(&a->lock, NULL);
  pthread_cond_init(&a->wake, NULL);
  a->lent = lent;
  a->threads = threads;
  for (int k = 0; k < threads; k++) {
    a->args[k] = (app_thread_arg){a, k};
    assert_int_equal(pthread_create(&a->thread[k], NULL, app_thread_main, &a->args[k]), 0);
  }
  while (atomic_load(&a->ready) < threads) sched_yield(); /* their ids are written */
  return a;
}

static void app_stop(app_executor *a) {
  pthread_mutex_lock(&a->lock);
  a->stop = true;
  pthread_cond_broadcast(&a->wake);
  pthread_mutex_unlock(&a->lock);
  for (int k = 0; k < a->threads; k++) pthread_join(a->thread[k], NULL);
  while (app_run_one(a, false)) {
  }
  pthread_mutex_destroy(&a->lock);
  pthread_cond_destroy(&a->wake);
  free(a);
}

/* Which threads made the calls. */
typedef struct where {
  grid g;
  int caller;
  const app_executor *app;
  atomic_int on_caller, on_app, elsewhere;
} where;

static void where_item(void *ctx, uint32_t thread, size_t i, size_t n) {
  where *w = ctx;
  int tid = test_thread_id();
  bool app = false;
  for (int k = 0; k < w->app->threads; k++) app |= w->app->tid[k] == tid;
  atomic_fetch_add(tid == w->caller ? &w->on_caller : app ? &w->on_app : &w->elsewhere, 1);
  d1_t(&w->g, thread, i, n);
}

static void run_where(pthreadpool_t pool, const app_executor *app, where *w, size_t limit) {
  memset(w, 0, sizeof *w);
  grid_init(&w->g, 1, Z(500), Z(1), (int[]){2}, limit);
  w->g.rendezvous = true;
  w->caller = test_thread_id();
  w->app = app;
  pthreadpool_parallelize_1d_tile_1d_dynamic_with_thread(pool, where_item, w, 500, 1, 0);
  grid_assert(&w->g, "on the application's executor");
  grid_free(&w->g);
}

static int v2_in_session(void *ctx) {
  app_executor *a = ctx;
  struct pthreadpool_executor ops = app_ops;
  pthreadpool_t pool = pthreadpool_create_v2(&ops, a, 2);
  assert_non_null(pool);
  assert_int_equal(pthreadpool_get_threads_count(pool), 2);
  size_t before = atomic_load(&a->scheduled);
  where w;
  run_where(pool, a, &w, 2);
  /* The second participant was one of the application's threads, not the
   * session's worker, and the call borrowed exactly one. */
  assert_true(atomic_load(&w.on_app) > 0);
  assert_int_equal(atomic_load(&w.elsewhere), 0);
  assert_int_equal(atomic_load(&a->scheduled) - before, 1);
  pthreadpool_destroy(pool);
  return 0;
}

static void create_v2_borrows_the_applications_threads_even_in_a_session(void **state) {
  (void)state;
  app_executor *a = app_start(3, 3);
  struct pthreadpool_executor ops = app_ops;
  /* min(max_num_threads, num_threads() + 1). */
  pthreadpool_t pool = pthreadpool_create_v2(&ops, a, 8);
  assert_non_null(pool);
  assert_int_equal(pthreadpool_get_threads_count(pool), 4);
  where w;
  run_where(pool, a, &w, 4);
  assert_true(atomic_load(&w.on_app) > 0);
  assert_int_equal(atomic_load(&w.elsewhere), 0);
  assert_int_equal(atomic_load(&w.g.threads_seen) & ~0xfu, 0);
  pthreadpool_release_executor_threads(pool); /* nothing held between calls: returns at once */
  pthreadpool_destroy(pool);
  pool = pthreadpool_create_v2(&ops, a, 2);
  assert_int_equal(pthreadpool_get_threads_count(pool), 2);
  pthreadpool_destroy(pool);
  /* 0: the processors the default policy counts. */
  const cpuexec_resolved *process = NULL;
  assert_int_equal(cpuexec_policy_resolve_default(&process), 0);
  size_t cpus = (size_t)cpuexec_resolved_effective_threads(process);
  pool = pthreadpool_create_v2(&ops, a, 0);
  assert_int_equal(pthreadpool_get_threads_count(pool), cpus < 4 ? cpus : 4);
  pthreadpool_destroy(pool);
  cpuexec_session *s = test_session(2);
  assert_int_equal(cpuexec_session_run(s, a, v2_in_session), 0);
  cpuexec_session_destroy(s);
  app_stop(a);
}

static void create_v2_checks_its_executor(void **state) {
  (void)state;
  app_executor *a = app_start(0, 2);
  struct pthreadpool_executor missing = {app_num_threads, NULL};
  assert_null(pthreadpool_create_v2(&missing, a, 4));
  a->lent = -1;
  struct pthreadpool_executor ops = app_ops;
  assert_null(pthreadpool_create_v2(&ops, a, 4));
  a->lent = 0; /* lends none: a one-thread pool that schedules nothing */
  pthreadpool_t pool = pthreadpool_create_v2(&ops, a, 4);
  assert_non_null(pool);
  assert_int_equal(pthreadpool_get_threads_count(pool), 1);
  grid g;
  grid_init(&g, 1, Z(50), Z(3), (int[]){2}, 1);
  pthreadpool_parallelize_1d_tile_1d_dynamic(pool, d1, &g, 50, 3, 0);
  grid_assert(&g, "a pool lent no thread");
  grid_free(&g);
  assert_int_equal(atomic_load(&a->scheduled), 0);
  pthreadpool_destroy(pool);
  /* executor NULL: pthreadpool_create(max). */
  pool = pthreadpool_create_v2(NULL, NULL, 1);
  assert_non_null(pool);
  assert_int_equal(pthreadpool_get_threads_count(pool), 1);
  pthreadpool_destroy(pool);
  app_stop(a);
}

static void a_late_executor_never_holds_up_a_call_and_its_tasks_run_after_destroy(void **state) {
  (void)state;
  /* The executor runs no task until the test says so: the caller does every
   * item itself, and the tasks, run after the pool is gone, do nothing. */
  app_executor *late = app_start(0, 3);
  struct pthreadpool_executor ops = app_ops;
  pthreadpool_t pool = pthreadpool_create_v2(&ops, late, 4);
  assert_int_equal(pthreadpool_get_threads_count(pool), 4);
  for (int round = 0; round < 3; round++) {
    grid g;
    grid_init(&g, 2, Z(20, 30), Z(3, 4), (int[]){2, 2}, 4);
    pthreadpool_parallelize_2d_tile_2d_dynamic_with_thread(pool, d2t2_t, &g, 20, 30, 3, 4, 0);
    grid_assert(&g, "with a late executor");
    grid_free(&g);
  }
  assert_int_equal(atomic_load(&late->scheduled), 9);
  assert_int_equal(atomic_load(&late->ran), 0);
  pthreadpool_destroy(pool);
  while (app_run_one(late, false)) {
  }
  assert_int_equal(atomic_load(&late->ran), 9);
  app_stop(late);
}

static void update_executor_swaps_only_a_different_executor(void **state) {
  (void)state;
  app_executor *a = app_start(2, 2), *b = app_start(2, 2);
  struct pthreadpool_executor ops = app_ops;
  pthreadpool_t pool = pthreadpool_create_v2(&ops, a, 3);
  assert_int_equal(pthreadpool_get_threads_count(pool), 3);
  assert_false(pthreadpool_update_executor(pool, &ops, a)); /* the same */
  assert_false(pthreadpool_update_executor(pool, NULL, b));
  assert_false(pthreadpool_update_executor(NULL, &ops, b));
  struct pthreadpool_executor half = {app_num_threads, NULL};
  assert_false(pthreadpool_update_executor(pool, &half, b));
  assert_true(pthreadpool_update_executor(pool, &ops, b));
  assert_int_equal(pthreadpool_get_threads_count(pool), 3); /* unchanged */
  size_t a_before = atomic_load(&a->scheduled);
  where w;
  run_where(pool, b, &w, 3);
  assert_int_equal(atomic_load(&a->scheduled), a_before);
  assert_int_equal(atomic_load(&b->scheduled), 2);
  assert_true(atomic_load(&w.on_app) > 0);
  assert_int_equal(atomic_load(&w.elsewhere), 0);
  pthreadpool_destroy(pool);
  /* A pool of pthreadpool_create() takes an executor too. */
  cpuexec_session *s = test_session(2);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(cpuexec_session_executor(s), &scope), 0);
  pool = pthreadpool_create(2);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  assert_int_equal(pthreadpool_get_threads_count(pool), 2);
  assert_true(pthreadpool_update_executor(pool, &ops, a));
  run_where(pool, a, &w, 2);
  assert_true(atomic_load(&w.on_app) > 0);
  assert_int_equal(atomic_load(&w.elsewhere), 0);
  pthreadpool_release_executor_threads(pool);
  pthreadpool_release_executor_threads(NULL);
  pthreadpool_destroy(pool);
  cpuexec_session_destroy(s);
  app_stop(a);
  app_stop(b);
}

/* Calls from several threads at once on one pool of an application's executor. */
typedef struct caller_arg {
  pthreadpool_t pool;
  pthread_barrier_t *start;
  int wrong;
} caller_arg;

static void *caller_main(void *p) {
  caller_arg *c = p;
  pthread_barrier_wait(c->start);
  for (int r = 0; r < 50; r++) {
    grid g;
    grid_init(&g, 3, Z(5, 23, 40), Z(1, 4, 6), (int[]){0, 2, 2}, 4);
    pthreadpool_parallelize_3d_tile_2d_dynamic(c->pool, d3t2, &g, 5, 23, 40, 4, 6, 0);
    if (atomic_load(&g.bad)) c->wrong++;
    for (size_t e = 0; e < g.elements; e++) c->wrong += atomic_load(&g.hits[e]) != 1;
    grid_free(&g);
  }
  return NULL;
}

static void calls_from_several_threads_share_the_applications_executor(void **state) {
  (void)state;
  app_executor *a = app_start(3, 3);
  struct pthreadpool_executor ops = app_ops;
  pthreadpool_t pool = pthreadpool_create_v2(&ops, a, 4);
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, 3);
  caller_arg args[3];
  pthread_t t[3];
  for (int k = 0; k < 3; k++) {
    args[k] = (caller_arg){pool, &start, 0};
    assert_int_equal(pthread_create(&t[k], NULL, caller_main, &args[k]), 0);
  }
  for (int k = 0; k < 3; k++) pthread_join(t[k], NULL);
  for (int k = 0; k < 3; k++) assert_int_equal(args[k].wrong, 0);
  pthread_barrier_destroy(&start);
  pthreadpool_destroy(pool);
  app_stop(a);
}

static void the_status_says_pthreadpool_is_ours(void **state) {
  (void)state;
  cpuexec_library_status s[8];
  size_t n = 0;
  assert_int_equal(cpuexec_libraries_status(s, 8, &n), 0);
  for (size_t i = 0; i < n; i++)
    if (strcmp(s[i].name, "pthreadpool") == 0) {
      assert_true(s[i].loaded);
      assert_true(s[i].on_libcpuexec);
      assert_non_null(strstr(s[i].detail, "libcpuexec-pthreadpool"));
      return;
    }
  fail_msg("no pthreadpool entry");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_function_covers_each_item_once_with_a_null_pool),
      cmocka_unit_test(every_function_covers_each_item_once_on_one_thread),
      cmocka_unit_test(every_function_covers_each_item_once_on_two_threads),
      cmocka_unit_test(a_serial_dynamic_call_makes_one_call_per_row),
      cmocka_unit_test(a_parallel_call_runs_on_every_participant_in_few_calls),
      cmocka_unit_test(a_dynamic_call_from_inside_a_task_runs_inline),
      cmocka_unit_test(set_threads_count_limits_later_calls_within_the_created_count),
      cmocka_unit_test(create_v2_borrows_the_applications_threads_even_in_a_session),
      cmocka_unit_test(create_v2_checks_its_executor),
      cmocka_unit_test(a_late_executor_never_holds_up_a_call_and_its_tasks_run_after_destroy),
      cmocka_unit_test(update_executor_swaps_only_a_different_executor),
      cmocka_unit_test(calls_from_several_threads_share_the_applications_executor),
      cmocka_unit_test(the_status_says_pthreadpool_is_ours),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
