/* The example kernel library (examples/pthreadpool_kernel), written against
 * pthreadpool's API only and linked with libcpuexec-pthreadpool, follows the
 * thread count of the libcpuexec session it runs in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "support/test_util.h"

#include <cpuexec.h>

#include "ppkernel.h"

#define ROWS 203
#define COLS 517

typedef struct dispatches {
  uint64_t executor_id;
  unsigned count;
  unsigned foreign;      /* dispatches on another executor */
  uint32_t max_admitted;
} dispatches;

static void record_dispatch(void *user, const cpuexec_dispatch_event *event) {
  dispatches *d = user;
  d->count++;
  if (event->executor_id != d->executor_id)
    d->foreign++;
  if ((uint32_t)event->admitted_participants > d->max_admitted)
    d->max_admitted = event->admitted_participants;
}

typedef struct kernel_case {
  int32_t session_threads;
  cpuexec_session *session;
} kernel_case;

static int run_kernel(void *p) {
  const kernel_case *c = p;
  ppk_context *kernel = ppk_create(0);
  assert_non_null(kernel);
  assert_int_equal(ppk_threads(kernel), (size_t)c->session_threads);

  float *a = malloc(sizeof(float) * ROWS * COLS), *b = malloc(sizeof(float) * ROWS * COLS);
  float *out = malloc(sizeof(float) * ROWS * COLS);
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(out);
  for (size_t i = 0; i < (size_t)ROWS * COLS; i++) {
    a[i] = (float)(i % 97);
    b[i] = (float)(i % 13);
    out[i] = -1.0f;
  }

  dispatches d = {.executor_id = cpuexec_executor_id(cpuexec_session_executor(c->session))};
  cpuexec_dispatch_observer_set(&d, record_dispatch);
  size_t threads_used = ppk_axpby(kernel, ROWS, COLS, 2.0f, a, b, out);
  cpuexec_dispatch_observer_set(NULL, NULL);

  for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
    assert_true(out[i] == 2.0f * (float)(i % 97) + (float)(i % 13));
  assert_true(threads_used >= 1 && threads_used <= (size_t)c->session_threads);
  assert_int_equal(d.foreign, 0);
  if (c->session_threads > 1) {
    /* One parallel region on the session's executor, with all its threads. */
    assert_int_equal(d.count, 1);
    assert_int_equal(d.max_admitted, (uint32_t)c->session_threads);
  } else {
    assert_int_equal(threads_used, 1);
    assert_true(d.max_admitted <= 1);
  }
  free(a);
  free(b);
  free(out);
  ppk_destroy(kernel);
  return 0;
}

static void the_kernel_library_follows_the_session_thread_count(void **state) {
  (void)state;
  static const int32_t session_threads[] = {1, 2, 1, 2};
  for (size_t i = 0; i < sizeof session_threads / sizeof session_threads[0]; i++) {
    cpuexec_policy policy;
    cpuexec_policy_init(&policy);
    policy.num_threads = session_threads[i];
    policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
    kernel_case c = {.session_threads = session_threads[i]};
    assert_int_equal(cpuexec_session_create(&policy, &c.session), 0);
    assert_int_equal(cpuexec_session_run(c.session, &c, run_kernel), 0);
    cpuexec_session_destroy(c.session);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_kernel_library_follows_the_session_thread_count),
  };
  return cmocka_run_group_tests_name("pthreadpool example kernel", tests, NULL, NULL);
}
