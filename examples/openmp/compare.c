/* The migration guide's test (doc/migrating-openmp.md): every kernel of
 * kernels.h runs as its OpenMP original and migrated, on the same inputs,
 * and the outputs must be the same bits. The migrated kernels run outside
 * any session and inside sessions of 1, 2 and 3 threads, and the counters
 * say where they ran: outside sessions on the process default pool (which
 * cpuexec_kernel_executor() gives them), inside on the session's pool. atax's inputs are small integers, so its sum of squares is exact
 * in any order (a reduction's order is OpenMP's choice, and ours differs).
 * Exits 1 naming the first difference. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cpuexec.h>

#include "kernels.h"

enum kernel { GEMM, JACOBI_2D, ATAX };
static const char *const kernel_names[] = {"gemm", "jacobi_2d", "atax"};

/* One kernel on one shape: its arrays (inputs and outputs alike). */
typedef struct kernel_case {
  enum kernel kernel;
  int d[3]; /* gemm: ni nj nk; jacobi_2d: tsteps n; atax: m n */
  double *v[4];
  size_t len[4];
  double norm;
} kernel_case;

static void fill(kernel_case *c) {
  for (int a = 0; a < 4; a++)
    for (size_t i = 0; i < c->len[a]; i++)
      c->v[a][i] = c->kernel == ATAX ? (double)((i * 31 + (size_t)a) % 5) - 2
                                     : (double)((i * 7919 + (size_t)a * 13) % 1013) / 997.0 - 0.5;
  c->norm = 0;
}

static bool make_case(kernel_case *c, enum kernel kernel, int d0, int d1, int d2) {
  *c = (kernel_case){kernel, {d0, d1, d2}, {NULL}, {0}, 0};
  size_t a = (size_t)d0, b = (size_t)d1, k = (size_t)d2;
  size_t lens[3][4] = {{a * b, a * k, k * b, 0}, {b * b, b * b, 0, 0}, {a * b, b, b, a}};
  for (int i = 0; i < 4; i++) {
    c->len[i] = lens[kernel][i];
    c->v[i] = malloc((c->len[i] > 0 ? c->len[i] : 1) * sizeof(double));
    if (c->v[i] == NULL)
      return false;
  }
  fill(c);
  return true;
}

static void free_case(kernel_case *c) {
  for (int i = 0; i < 4; i++)
    free(c->v[i]);
}

static void run_original(kernel_case *c) {
  double **v = c->v;
  switch (c->kernel) {
  case GEMM: kernel_gemm_omp(c->d[0], c->d[1], c->d[2], 1.5, 0.75, v[0], v[1], v[2]); break;
  case JACOBI_2D: kernel_jacobi_2d_omp(c->d[0], c->d[1], v[0], v[1]); break;
  case ATAX: kernel_atax_omp(c->d[0], c->d[1], v[0], v[1], v[2], v[3], &c->norm); break;
  }
}

/* A cpuexec_session_fn too: the migrated kernels run inside sessions. */
static int run_migrated(void *arg) {
  kernel_case *c = arg;
  double **v = c->v;
  switch (c->kernel) {
  case GEMM: return kernel_gemm(c->d[0], c->d[1], c->d[2], 1.5, 0.75, v[0], v[1], v[2]);
  case JACOBI_2D: return kernel_jacobi_2d(c->d[0], c->d[1], v[0], v[1]);
  case ATAX: return kernel_atax(c->d[0], c->d[1], v[0], v[1], v[2], v[3], &c->norm);
  }
  return 1;
}

/* Regions exec opened to its workers so far (counting is on). */
static uint64_t regions_of(const cpuexec_executor *exec) {
  cpuexec_counters n;
  return cpuexec_executor_counters_get(exec, &n) == 0 ? n.dispatches : 0;
}

/* Runs the migrated kernel on a fresh copy of c's inputs, outside any
 * session (session NULL) or in one, and compares with want; adds the
 * regions it opened on exec (the pool it should run on) to *regions. */
static bool same_bits(const kernel_case *want, kernel_case *got, cpuexec_session *session, const char *where,
                      const cpuexec_executor *exec, uint64_t *regions) {
  fill(got);
  uint64_t before = regions_of(exec);
  int rc = session != NULL ? cpuexec_session_run(session, got, run_migrated) : run_migrated(got);
  *regions += regions_of(exec) - before;
  if (rc != 0) {
    fprintf(stderr, "FAIL: %s %d %d %d %s: %s\n", kernel_names[got->kernel], got->d[0], got->d[1], got->d[2], where,
            cpuexec_error_message());
    return false;
  }
  for (int a = 0; a < 4; a++)
    if (memcmp(want->v[a], got->v[a], want->len[a] * sizeof(double)) != 0) {
      fprintf(stderr, "FAIL: %s %d %d %d %s: array %d differs from the OpenMP original's\n",
              kernel_names[got->kernel], got->d[0], got->d[1], got->d[2], where, a);
      return false;
    }
  if (memcmp(&want->norm, &got->norm, sizeof want->norm) != 0) {
    fprintf(stderr, "FAIL: %s %d %d %d %s: sum %.17g, the OpenMP original's %.17g\n", kernel_names[got->kernel],
            got->d[0], got->d[1], got->d[2], where, got->norm, want->norm);
    return false;
  }
  return true;
}

int main(void) {
  static const struct {
    enum kernel kernel;
    int d[3];
  } shapes[] = {{GEMM, {1, 1, 1}}, {GEMM, {7, 5, 3}}, {GEMM, {64, 48, 33}}, {GEMM, {129, 70, 90}},
                {JACOBI_2D, {1, 1}}, {JACOBI_2D, {2, 3}}, {JACOBI_2D, {5, 20}}, {JACOBI_2D, {10, 97}},
                {ATAX, {1, 1}}, {ATAX, {7, 5}}, {ATAX, {100, 57}}, {ATAX, {157, 201}}};
  cpuexec_session *sessions[3] = {NULL};
  for (int k = 0; k < 3; k++) {
    cpuexec_policy policy;
    cpuexec_policy_init(&policy);
    policy.num_threads = k + 1;
    policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
    if (cpuexec_session_create(&policy, &sessions[k]) != 0) {
      fprintf(stderr, "FAIL: session of %d threads: %s\n", k + 1, cpuexec_error_message());
      return 1;
    }
  }
  /* Outside a session the kernels find the default pool: count its regions,
   * and each session's. (Pools are shared: count only around the runs.) */
  cpuexec_executor *pool = NULL;
  cpuexec_executor *execs[4] = {NULL};
  uint64_t regions[3][4] = {{0}}; /* per kernel, per pool */
  if (cpuexec_registry_default_executor(&pool) != 0) {
    fprintf(stderr, "FAIL: the default pool: %s\n", cpuexec_error_message());
    return 1;
  }
  execs[0] = pool;
  for (int k = 0; k < 3; k++)
    execs[k + 1] = cpuexec_session_executor(sessions[k]);
  for (int e = 0; e < 4; e++)
    if (cpuexec_executor_counters_enable(execs[e]) != 0) {
      fprintf(stderr, "FAIL: counters: %s\n", cpuexec_error_message());
      return 1;
    }
  bool ok = true;
  for (size_t s = 0; ok && s < sizeof shapes / sizeof shapes[0]; s++) {
    kernel_case want = {0}, got = {0};
    ok = make_case(&want, shapes[s].kernel, shapes[s].d[0], shapes[s].d[1], shapes[s].d[2]) &&
         make_case(&got, shapes[s].kernel, shapes[s].d[0], shapes[s].d[1], shapes[s].d[2]);
    if (!ok)
      fprintf(stderr, "FAIL: out of memory\n");
    if (ok) {
      run_original(&want);
      ok = same_bits(&want, &got, NULL, "outside sessions", pool, &regions[shapes[s].kernel][0]);
    }
    static const char *const in_session[] = {"in a 1-thread session", "in a 2-thread session",
                                             "in a 3-thread session"};
    for (int k = 0; ok && k < 3; k++)
      ok = same_bits(&want, &got, sessions[k], in_session[k], execs[k + 1], &regions[shapes[s].kernel][k + 1]);
    free_case(&want);
    free_case(&got);
  }
  /* A pool of one thread opens no region: it runs every loop on its caller. */
  static const char *const pools[] = {"the default pool", "the 1-thread session's pool",
                                      "the 2-thread session's pool", "the 3-thread session's pool"};
  for (int kernel = 0; kernel < 3; kernel++)
    for (int e = 0; ok && e < 4; e++)
      if (cpuexec_executor_effective_threads(execs[e]) > 1 && regions[kernel][e] == 0) {
        fprintf(stderr, "FAIL: the migrated %s opened no region on %s\n", kernel_names[kernel], pools[e]);
        ok = false;
      }
  if (ok)
    printf("ok: %zu kernel shapes, the same bits as OpenMP outside sessions (on the default pool of %d threads) and "
           "in sessions of 1, 2 and 3 threads\n",
           sizeof shapes / sizeof shapes[0], cpuexec_executor_effective_threads(pool));
  for (int k = 0; k < 3; k++)
    cpuexec_session_destroy(sessions[k]);
  return ok ? 0 : 1;
}
