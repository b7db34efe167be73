/* The process registry when its allocation fails at first use (issue 25):
 * the failing call reports CPUEXEC_ENOMEM with a message that says so, and
 * the next call makes the registry, so sessions, the legacy ParallelFor and
 * the default pool work again; "defaults never fail" holds after one failed
 * allocation. Each case runs in a fresh process (this program, exec'd with
 * --child NAME), so the first use really is the first; white-box: the
 * registry's allocation-failure hook (src/sessions/registry_internal.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <unistd.h>
#include <cmocka.h>

#include <cpuexec.h>

#include <cpuexec/compat/parallel_for.h>
#include "sessions/registry_internal.h"
#include "support/test_util.h"

#define TOTAL 1000

typedef struct coverage {
  atomic_int hits[TOTAL];
} coverage;

static void cover(void *ctx, int64_t begin, int64_t end) {
  coverage *c = ctx;
  for (int64_t i = begin; i < end && i < TOTAL; i++) atomic_fetch_add(&c->hits[i], 1);
}

static int cover_errors(coverage *c) {
  int errors = 0;
  for (int i = 0; i < TOTAL; i++) errors += atomic_load(&c->hits[i]) != 1;
  return errors;
}

static int count_participants(void *ctx) {
  *(int32_t *)ctx = cpuexec_executor_effective_threads(cpuexec_executor_current());
  return 0;
}

/* Marks the thread's message, so a failing call that leaves it is caught. */
static void stale_message(void) { cpuexec_error_report(CPUEXEC_EINVAL, "stale message"); }

static int session_child(void) {
  atomic_store(&cpuexec__test_registry_alloc_fails, 1);
  cpuexec_session *s = NULL;
  stale_message();
  int rc = cpuexec_session_create(NULL, &s);
  if (rc != CPUEXEC_ENOMEM) return fprintf(stderr, "first create: %d\n", rc), 10;
  if (!strstr(cpuexec_error_message(), "process registry")) return fprintf(stderr, "%s\n", cpuexec_error_message()), 11;
  if (s != NULL) return 12;
  /* The next call makes the registry: a session on two participants. */
  if ((rc = cpuexec_session_create(NULL, &s)) != 0) return fprintf(stderr, "%s\n", cpuexec_error_message()), 13;
  int32_t threads = 0;
  if (cpuexec_session_run(s, &threads, count_participants) != 0) return 14;
  if (threads != 2) return fprintf(stderr, "threads %d\n", (int)threads), 15;
  cpuexec_session_destroy(s);
  if (cpuexec_registry_default() == NULL) return 16;
  return 0;
}

static int parallel_for_child(void) {
  atomic_store(&cpuexec__test_registry_alloc_fails, 1);
  coverage *c = calloc(1, sizeof *c);
  if (!c) return 20;
  stale_message();
  int rc = ParallelFor(TOTAL, 16, c, cover);
  if (rc != CPUEXEC_ENOMEM) return fprintf(stderr, "first ParallelFor: %d\n", rc), 21;
  if (cover_errors(c) != 0) return 22; /* it ran serially, every index once */
  if (!strstr(cpuexec_error_message(), "process registry")) return fprintf(stderr, "%s\n", cpuexec_error_message()), 23;
  /* The retry backoff answers the next call without trying; the one after
   * makes the pool on the registry made now. */
  for (int call = 0; call < 3; call++) {
    memset(c, 0, sizeof *c);
    (void)ParallelFor(TOTAL, 16, c, cover);
    if (cover_errors(c) != 0) return 24;
  }
  if (ParallelForThreadCount() != 2) return fprintf(stderr, "ParallelForThreadCount %d\n", ParallelForThreadCount()), 25;
  memset(c, 0, sizeof *c);
  if ((rc = ParallelFor(TOTAL, 16, c, cover)) != 0 || cover_errors(c) != 0) return 26;
  free(c);
  return 0;
}

static int default_executor_twice_child(void) {
  /* Two failures in a row: the registry is tried on each attempt. */
  atomic_store(&cpuexec__test_registry_alloc_fails, 2);
  if (cpuexec_registry_default() != NULL) return 30;
  if (!strstr(cpuexec_error_message(), "process registry")) return 31;
  if (cpuexec_registry_default() != NULL) return 32;
  cpuexec_registry *r = cpuexec_registry_default();
  if (r == NULL || cpuexec_registry_default() != r) return 33;
  return 0;
}

static const struct {
  const char *name;
  int (*run)(void);
} children[] = {
    {"session", session_child},
    {"parallel_for", parallel_for_child},
    {"default_twice", default_executor_twice_child},
};

static void run_child(const char *name) {
  char self[4096];
  assert_int_equal(test_self_path(self, sizeof self), 0);
  const char *argv[] = {self, "--child", name, NULL};
  int status = test_spawn(self, argv, NULL, NULL, NULL);
  if (status != 0) fail_msg("%s: child exited with status %d", name, status);
}

static void a_session_after_a_failed_registry_allocation_works(void **state) {
  (void)state;
  run_child("session");
}

static void parallel_for_after_a_failed_registry_allocation_gets_its_pool(void **state) {
  (void)state;
  run_child("parallel_for");
}

static void the_registry_is_tried_again_after_each_failure(void **state) {
  (void)state;
  run_child("default_twice");
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--child") == 0) {
    for (size_t i = 0; i < sizeof children / sizeof children[0]; i++)
      if (strcmp(argv[2], children[i].name) == 0) return children[i].run();
    return 99;
  }
  setenv("CPUEXEC_POLICY", "num_threads=2,affinity_policy=none", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_session_after_a_failed_registry_allocation_works),
      cmocka_unit_test(parallel_for_after_a_failed_registry_allocation_gets_its_pool),
      cmocka_unit_test(the_registry_is_tried_again_after_each_failure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
