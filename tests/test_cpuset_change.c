/* The process CPU set shrinks while a pinned pool runs (issue 13, seed 000
 * S000-111): new resolutions see the new set, the pool whose worker lost
 * its processor is refused to new leases with CPUEXEC_EAFFINITY, the leases
 * held keep running every index, and when the set grows back the pool is
 * pinned again. The change is made as `taskset -a -p` makes it, on every
 * thread of the process with sched_setaffinity; the teardown restores it. */
#ifdef _WIN32
#include <stdio.h>
/* The set is changed as taskset and cgroup cpusets change it, through
 * /proc/self/task and sched_setaffinity: Linux's, not Windows'. */
int main(void) {
  printf("SKIP: not run on Windows: the process CPU set is changed through /proc/self/task and "
         "sched_setaffinity (taskset, cgroup cpusets), which Windows has not\n");
  return 77;
}
#else
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <stdatomic.h>
#include <unistd.h>
#include <cmocka.h>

#include <cpuexec.h>

static cpu_set_t original;

/* Every thread of the process to set, as `taskset -a -p` does. */
static int set_all_threads(const cpu_set_t *set) {
  DIR *dir = opendir("/proc/self/task");
  if (!dir) return -1;
  int failures = 0;
  struct dirent *d;
  while ((d = readdir(dir)) != NULL)
    /* ESRCH: a thread joined a moment ago, still listed until reaped. */
    if (d->d_name[0] != '.' && sched_setaffinity((pid_t)atoi(d->d_name), sizeof *set, set) != 0 && errno != ESRCH)
      failures++;
  closedir(dir);
  return failures;
}

static int restore(void **state) {
  (void)state;
  return set_all_threads(&original) == 0 ? 0 : -1;
}

#define TOTAL 512
static atomic_int hits[TOTAL];
static int cover(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&hits[i], 1);
  return 0;
}
static void run_and_check(cpuexec_executor *exec) {
  for (int i = 0; i < TOTAL; i++) atomic_store(&hits[i], 0);
  assert_int_equal(cpuexec_parallel_for(exec, TOTAL, 8, NULL, cover, 0), 0);
  for (int i = 0; i < TOTAL; i++) assert_int_equal(atomic_load(&hits[i]), 1);
}

/* The resolution says the OS backend cannot pin (src/resolve/resolve.c). */
static bool unpinned_by_backend(const cpuexec_resolved *r) {
  for (size_t i = 0; i < cpuexec_resolved_diagnostic_count(r); i++)
    if (strstr(cpuexec_resolved_diagnostic(r, i), "OS backend cannot pin threads")) return true;
  return false;
}

static cpuexec_resolved *resolve_text(const char *text, int want_rc) {
  cpuexec_policy p;
  assert_int_equal(cpuexec_policy_parse(text, &p), 0);
  cpuexec_resolved *r = NULL;
  int rc = cpuexec_policy_resolve(&p, NULL, &r);
  if (rc != want_rc) fail_msg("%s: rc %d (%s)", text, rc, cpuexec_error_message());
  return r;
}

static void shrinking_the_process_set_under_a_pinned_pool(void **state) {
  (void)state;
  static const char policy[] = "num_threads=2,affinity_policy=physical_then_smt";
  cpuexec_resolved *before = resolve_text(policy, 0);
  int32_t n;
  const int32_t *workers = cpuexec_resolved_worker_processors(before, &n);
  if (unpinned_by_backend(before)) {
    /* An OS backend without affinity (configure --with-os-backend=posix):
     * nothing is pinned, so nothing can lose its processor; the pool runs. */
    assert_int_equal(n, 0);
    assert_int_equal(cpuexec_resolved_caller_processor(before), -1);
    cpuexec_executor *exec;
    assert_int_equal(cpuexec_executor_create(before, &exec), 0);
    run_and_check(exec);
    assert_int_equal(cpuexec_executor_release(exec), 0);
    cpuexec_resolved_destroy(before);
    return;
  }
  assert_int_equal(n, 1);
  int32_t gone = workers[0];
  cpuexec_registry *reg;
  assert_int_equal(cpuexec_registry_create(NULL, &reg), 0);
  cpuexec_executor *held;
  assert_int_equal(cpuexec_registry_acquire(reg, before, &held), 0);
  run_and_check(held);

  cpu_set_t smaller = original;
  CPU_CLR(gone, &smaller);
  assert_int_equal(set_all_threads(&smaller), 0);

  /* A new resolution sees the set without `gone`. */
  if (CPU_COUNT(&smaller) >= 2) {
    cpuexec_resolved *after = resolve_text(policy, 0);
    const int32_t *now = cpuexec_resolved_worker_processors(after, &n);
    for (int32_t i = 0; i < n; i++) assert_int_not_equal(now[i], gone);
    assert_int_not_equal(cpuexec_resolved_caller_processor(after), gone);
    cpuexec_resolved_destroy(after);
  } else {
    resolve_text(policy, CPUEXEC_EINVAL);
    assert_non_null(strstr(cpuexec_error_message(), "exceed the 1 logical processors visible"));
  }

  /* The pool resolved before: no new lease, and the processor is named. */
  cpuexec_executor *again = NULL;
  assert_int_equal(cpuexec_registry_acquire(reg, before, &again), CPUEXEC_EAFFINITY);
  assert_null(again);
  char name[64];
  snprintf(name, sizeof name, "processor %d (worker 1) left the process CPU set", (int)gone);
  assert_non_null(strstr(cpuexec_error_message(), name));
  /* The lease held still runs every index (its worker moved, unpinned). */
  run_and_check(held);

  /* The set grows back: the worker is pinned again and leases resume. */
  assert_int_equal(set_all_threads(&original), 0);
  assert_int_equal(cpuexec_registry_acquire(reg, before, &again), 0);
  assert_ptr_equal(again, held);
  run_and_check(again);
  cpuexec_executor_release(again);
  cpuexec_executor_release(held);
  cpuexec_resolved_destroy(before);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
}

int main(void) {
  unsetenv("CPUEXEC_POLICY");
  if (sched_getaffinity(getpid(), sizeof original, &original) != 0) return 99;
  if (CPU_COUNT(&original) < 2) {
    printf("SKIP: one processor visible; a pinned worker needs two\n");
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(shrinking_the_process_set_under_a_pinned_pool, restore),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
