/* The migration example: the OpenMP kernel and its cpuexec_parallel_for
 * version give the same output and the same total, on every shape and
 * executor size. Inputs are small integers, so every sum is exact and the
 * totals compare with ==, whatever order the ranges ran in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cpuexec.h>

#include "support/test_util.h"
#include "support/openmp_tsan.h"
#include "openmp_kernel.h"

static void migrated_kernel_equals_the_openmp_kernel(void **state) {
  (void)state;
  static const struct {
    int64_t rows, cols;
  } shapes[] = {{1, 1}, {1, 9}, {7, 5}, {64, 33}, {257, 100}};
  static const uint32_t threads[] = {0 /* NULL executor */, 1, 2, 4};
  for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
    cpuexec_executor *exec = threads[t] == 0 ? NULL : test_executor(threads[t]);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      int64_t rows = shapes[s].rows, cols = shapes[s].cols, n = rows * cols;
      double *in = malloc(sizeof(double) * (size_t)n);
      double *want = malloc(sizeof(double) * (size_t)n), *got = malloc(sizeof(double) * (size_t)n);
      assert_non_null(in);
      assert_non_null(want);
      assert_non_null(got);
      for (int64_t i = 0; i < n; i++)
        in[i] = (double)((i * 31 + s) % 23);
      double total_want = blur_rows_openmp(in, want, rows, cols), total_got = -1;
      assert_int_equal(blur_rows_cpuexec(exec, in, got, rows, cols, &total_got), 0);
      assert_true(total_want == total_got);
      assert_memory_equal(want, got, sizeof(double) * (size_t)n);
      free(in);
      free(want);
      free(got);
    }
    cpuexec_executor_release(exec);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(migrated_kernel_equals_the_openmp_kernel),
  };
  return cmocka_run_group_tests_name("openmp_migration_example", tests, NULL, NULL);
}
