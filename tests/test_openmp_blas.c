/* OpenBLAS's OpenMP build inside callbacks, on every participant.
 *
 * Linked -lomp ahead of OpenBLAS, so every OpenMP symbol OpenBLAS uses binds
 * to libomp (libgomp, which OpenBLAS names, is loaded but idle). Each
 * callback multiplies its own matrices with cblas_sgemm; the guard must keep
 * OpenBLAS to one thread (it sizes its work from omp_get_max_threads(), so
 * max-active-levels alone would deadlock it: the test's timeout catches
 * that), start no OpenMP worker, and give the reference result. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cblas.h>
#include <cmocka.h>

#include <cpuexec.h>

#include "support/test_util.h"
#include "support/openmp_tsan.h"

#define THREADS 4
#define ITEMS 16
#define N 96

typedef struct gemm_ctx {
  float a[ITEMS][N * N], b[ITEMS][N * N], c[ITEMS][N * N];
  uint32_t participant[ITEMS];
} gemm_ctx;

static int gemm_each(void *arg, int64_t begin, int64_t end) {
  gemm_ctx *g = arg;
  for (int64_t i = begin; i < end; i++) {
    g->participant[i] = cpuexec_participant_index();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, g->a[i], N, g->b[i], N, 0.0f, g->c[i], N);
  }
  return 0;
}

static void sgemm_in_callbacks_matches_the_reference_without_threads(void **state) {
  (void)state;
  assert_int_equal(openblas_get_parallel(), 2); /* 2: the OpenMP build */
  cpuexec_executor *exec = test_executor(THREADS);
  static gemm_ctx g;
  for (int i = 0; i < ITEMS; i++)
    for (int k = 0; k < N * N; k++) {
      g.a[i][k] = (float)((k * 7 + i) % 13) / 13.0f;
      g.b[i][k] = (float)((k * 5 + 3 * i) % 11) / 11.0f;
    }
  cpuexec_openmp_counters_reset();
  int tasks_before = task_baseline();
  for (int round = 0; round < 3; round++)
    assert_int_equal(cpuexec_parallel_for_flags(exec, ITEMS, 1, &g, gemm_each, 0, CPUEXEC_FOR_EVERY_PARTICIPANT), 0);
  assert_int_equal(wait_task_count(tasks_before), tasks_before);
  for (int i = 0; i < ITEMS; i++)
    for (int r = 0; r < N; r++)
      for (int col = 0; col < N; col++) {
        double want = 0;
        for (int k = 0; k < N; k++)
          want += (double)g.a[i][r * N + k] * g.b[i][k * N + col];
        assert_true(fabs(want - g.c[i][r * N + col]) <= 1e-3 * (1 + fabs(want)));
      }
  for (uint32_t p = 0; p < THREADS; p++) {
    bool seen = false;
    for (int i = 0; i < ITEMS; i++)
      seen = seen || g.participant[i] == p;
    assert_true(seen);
  }
  cpuexec_openmp_counters n;
  cpuexec_openmp_counters_get(&n);
  assert_int_equal(n.openmp_workers_created, 0);
  assert_int_equal(n.regions_multithreaded, 0);
  cpuexec_openmp_state s;
  cpuexec_openmp_status_get(&s);
  assert_true(s.libomp_loaded);
  assert_true(s.libgomp_loaded); /* OpenBLAS names libgomp: loaded, idle */
#if CPUEXEC_WITH_OMPT
  assert_true(s.live);
#else
  assert_int_equal(s.detection, CPUEXEC_OPENMP_DECLINED);
#endif
  cpuexec_executor_release(exec);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sgemm_in_callbacks_matches_the_reference_without_threads),
  };
  return cmocka_run_group_tests_name("openmp_openblas", tests, NULL, NULL);
}
