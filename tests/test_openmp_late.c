/* A process that starts without OpenMP: the hooks find nothing and cost a
 * branch; then a library using libomp is dlopen()ed, and the guard picks
 * the runtime up within 64 region begins per thread (src/openmp/openmp_runtimes.c)
 * without anyone asking, and the tool (asked by libomp at its first use,
 * through the global scope) goes live. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include <cpuexec.h>

#include "support/test_util.h"
#include "support/openmp_tsan.h"

#define KERNELS TOP_BUILDDIR "/tests/support/libopenmp_kernels_clang.so"
#define ITEMS 32

static cpuexec_executor *exec;
static int (*kernel_parallel)(int *team);

static int nothing(void *arg, int64_t begin, int64_t end) {
  (void)arg, (void)begin, (void)end;
  return 0;
}

static void without_a_runtime_the_status_says_so_and_regions_run(void **state) {
  (void)state;
  cpuexec_openmp_state s;
  assert_int_equal(cpuexec_openmp_status_get(&s), 0);
  assert_int_equal(s.detection, CPUEXEC_OPENMP_NO_RUNTIME);
  assert_false(s.guard_active);
  assert_false(s.live);
  assert_null(dlopen("libomp.so.5", RTLD_LAZY | RTLD_NOLOAD)); /* the library loaded none */
  assert_null(dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD));
  assert_int_equal(cpuexec_parallel_for(exec, ITEMS, 1, NULL, nothing, 0), 0);
}

typedef struct teams {
  int team[ITEMS];
} teams;

static int run_kernel(void *arg, int64_t begin, int64_t end) {
  teams *t = arg;
  for (int64_t i = begin; i < end; i++)
    kernel_parallel(&t->team[i]);
  return 0;
}

static void a_runtime_dlopened_later_is_guarded_within_64_regions(void **state) {
  (void)state;
  void *kernels = dlopen(KERNELS, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(kernels);
  *(void **)&kernel_parallel = dlsym(kernels, "kernel_parallel");
  assert_non_null(kernel_parallel);
  for (int i = 0; i < 64; i++) /* every thread's countdown runs out within 64 */
    assert_int_equal(cpuexec_parallel_for(exec, ITEMS, 1, NULL, nothing, 0), 0);
  cpuexec_openmp_counters_reset();
  static teams t;
  assert_int_equal(cpuexec_parallel_for(exec, ITEMS, 1, &t, run_kernel, 0), 0);
  for (int i = 0; i < ITEMS; i++)
    assert_int_equal(t.team[i], 1);
  cpuexec_openmp_state s;
  assert_int_equal(cpuexec_openmp_status_get(&s), 0);
  assert_true(s.libomp_loaded);
  cpuexec_openmp_counters n;
  cpuexec_openmp_counters_get(&n);
#if CPUEXEC_WITH_OMPT
  assert_int_equal(s.detection, CPUEXEC_OPENMP_LIVE);
  assert_int_equal(n.regions_in_callbacks, ITEMS);
  assert_int_equal(n.regions_inline, ITEMS);
#else
  assert_int_equal(s.detection, CPUEXEC_OPENMP_DECLINED);
  assert_int_equal(n.regions_in_callbacks, 0);
#endif
  assert_int_equal(n.openmp_workers_created, 0);
}

static int setup(void **state) {
  (void)state;
  exec = test_executor(3);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  cpuexec_executor_release(exec);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(without_a_runtime_the_status_says_so_and_regions_run),
      cmocka_unit_test(a_runtime_dlopened_later_is_guarded_within_64_regions),
  };
  return cmocka_run_group_tests_name("openmp_runtime_loaded_later", tests, setup, teardown);
}
