/* Sessions and scopes: what is installed on the calling thread and on every
 * participant, nested sessions, participant counts, serial sessions, scope
 * misuse. The process default policy is set by main() through
 * CPUEXEC_POLICY before the first call. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "support/rendezvous.h"
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <cmocka.h>

#include <cpuexec.h>
#include <cpuexec/compat/parallel_for.h>

#include "support/test_util.h"

#define DEFAULT_THREADS 2

static cpuexec_session *session_with(int32_t threads) {
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = threads;
  p.affinity_policy = CPUEXEC_AFFINITY_NONE;
  cpuexec_session *s = NULL;
  int rc = cpuexec_session_create(&p, &s);
  if (rc != 0) fail_msg("session with %d threads: %s", threads, cpuexec_error_message());
  return s;
}

/* ---- installation -------------------------------------------------------- */

typedef struct run_probe {
  cpuexec_executor *seen;
  int result;
} run_probe;

static int record_current(void *arg) {
  run_probe *probe = arg;
  probe->seen = cpuexec_executor_current();
  return probe->result;
}

static void run_installs_the_executor_then_restores_the_previous_one(void **state) {
  (void)state;
  cpuexec_session *s = session_with(3);
  assert_null(cpuexec_executor_current());
  run_probe probe = {NULL, 42};
  assert_int_equal(cpuexec_session_run(s, &probe, record_current), CPUEXEC_ECALLBACK); /* fn failed ... */
  assert_int_equal(cpuexec_error_callback_value(), 42);                                  /* ... with 42 */
  assert_ptr_equal(probe.seen, cpuexec_session_executor(s));
  assert_null(cpuexec_executor_current());
  cpuexec_session_destroy(s);
}

typedef struct participants_probe {
  cpuexec_executor *expected;
  atomic_int wrong_executor;
  atomic_uint seen_mask;
  atomic_int wrong_count;
  _Atomic uint64_t arrived; /* rendezvous.h */
  uint32_t expected_count;
} participants_probe;

static int record_participant(void *ctx, int64_t begin, int64_t end) {
  participants_probe *p = ctx;
  test_rendezvous(&p->arrived);
  if (cpuexec_executor_current() != p->expected) atomic_fetch_add(&p->wrong_executor, 1);
  if ((uint32_t)cpuexec_participant_count() != p->expected_count) atomic_fetch_add(&p->wrong_count, 1);
  atomic_fetch_or(&p->seen_mask, 1u << cpuexec_participant_index());
  return 0;
}

static int parallel_in_session(void *arg) {
  participants_probe *p = arg;
  p->expected = cpuexec_executor_current();
  /* One grain per index and several per participant: every admitted
   * participant runs at least one range (executor.h). */
  return cpuexec_parallel_for(p->expected, 64, 1, p, record_participant, 0);
}

/* Matrix over participant counts: every participant sees the session's
 * executor as current, and the participants are exactly the requested ones. */
static void observed_participants_equal_the_requested_thread_count(void **state) {
  (void)state;
  for (int32_t threads = 1; threads <= 4; threads++) {
    cpuexec_session *s = session_with(threads);
    assert_int_equal(cpuexec_executor_effective_threads(cpuexec_session_executor(s)), threads);
    participants_probe p;
    memset(&p, 0, sizeof p);
    p.expected_count = (uint32_t)threads;
    assert_int_equal(cpuexec_session_run(s, &p, parallel_in_session), 0);
    assert_ptr_equal(p.expected, cpuexec_session_executor(s));
    assert_int_equal(atomic_load(&p.wrong_executor), 0);
    assert_int_equal(atomic_load(&p.wrong_count), 0);
    if (atomic_load(&p.seen_mask) != (1u << threads) - 1)
      fail_msg("%d threads: participants seen 0x%x", threads, atomic_load(&p.seen_mask));
    cpuexec_session_destroy(s);
  }
}

typedef struct serial_probe {
  pthread_t caller;
  int on_other_thread;
  int hits[100];
} serial_probe;

static int record_serial(void *ctx, int64_t begin, int64_t end) {
  serial_probe *p = ctx;
  if (!pthread_equal(pthread_self(), p->caller)) p->on_other_thread++;
  for (int64_t i = begin; i < end; i++) p->hits[i]++;
  return 0;
}

static int serial_body(void *arg) {
  serial_probe *p = arg;
  return cpuexec_parallel_for(cpuexec_executor_current(), 100, 3, p, record_serial, 0);
}

static void a_serial_session_runs_every_range_inline(void **state) {
  (void)state;
  int baseline = task_baseline();
  cpuexec_session *s = session_with(1);
  assert_int_equal(wait_task_count(baseline), baseline);
  serial_probe p;
  memset(&p, 0, sizeof p);
  p.caller = pthread_self();
  assert_int_equal(cpuexec_session_run(s, &p, serial_body), 0);
  assert_int_equal(p.on_other_thread, 0);
  for (int i = 0; i < 100; i++) assert_int_equal(p.hits[i], 1);
  cpuexec_session_destroy(s);
}

/* ---- nesting ------------------------------------------------------------- */

typedef struct nested_probe {
  cpuexec_session *inner;
  cpuexec_executor *inner_current;
  int rc;
} nested_probe;

static int inner_body(void *arg) {
  nested_probe *p = arg;
  p->inner_current = cpuexec_executor_current();
  return 0;
}

static int create_nested(void *arg) {
  nested_probe *p = arg;
  p->rc = cpuexec_session_create(NULL, &p->inner);
  if (p->rc != 0) return p->rc;
  return cpuexec_session_run(p->inner, p, inner_body);
}

/* A nested session without a policy keeps the enclosing executor and holds
 * its own lease: the pool outlives the outer session. */
static void a_nested_session_keeps_the_enclosing_executor(void **state) {
  (void)state;
  int baseline = task_baseline();
  cpuexec_session *outer = session_with(3);
  cpuexec_executor *exec = cpuexec_session_executor(outer);
  nested_probe p = {NULL, NULL, -1};
  assert_int_equal(cpuexec_session_run(outer, &p, create_nested), 0);
  assert_int_equal(p.rc, 0);
  assert_ptr_equal(cpuexec_session_executor(p.inner), exec);
  assert_ptr_equal(p.inner_current, exec);
  assert_null(cpuexec_executor_current());
  cpuexec_session_destroy(outer);
  assert_int_equal(wait_task_count(baseline + 2), baseline + 2);
  participants_probe pp;
  memset(&pp, 0, sizeof pp);
  pp.expected_count = 3;
  assert_int_equal(cpuexec_session_run(p.inner, &pp, parallel_in_session), 0);
  assert_int_equal(atomic_load(&pp.seen_mask), 7u);
  cpuexec_session_destroy(p.inner);
  assert_int_equal(wait_task_count(baseline), baseline);
}

typedef struct worker_nested {
  cpuexec_executor *expected;
  atomic_int mismatches;
  atomic_int failures;
} worker_nested;

static int nested_from_participant(void *ctx, int64_t begin, int64_t end) {
  worker_nested *w = ctx;
  cpuexec_session *inner = NULL;
  if (cpuexec_session_create(NULL, &inner) != 0) {
    atomic_fetch_add(&w->failures, 1);
    return 0;
  }
  if (cpuexec_session_executor(inner) != w->expected) atomic_fetch_add(&w->mismatches, 1);
  cpuexec_session_destroy(inner);
  return 0;
}

static int region_with_nested_sessions(void *arg) {
  worker_nested *w = arg;
  w->expected = cpuexec_executor_current();
  return cpuexec_parallel_for(w->expected, 16, 1, w, nested_from_participant, 0);
}

/* On every participant (workers included) a nested session finds the
 * region's executor. */
static void a_session_created_on_a_participant_keeps_the_region_executor(void **state) {
  (void)state;
  cpuexec_session *s = session_with(3);
  worker_nested w;
  memset(&w, 0, sizeof w);
  assert_int_equal(cpuexec_session_run(s, &w, region_with_nested_sessions), 0);
  assert_int_equal(atomic_load(&w.failures), 0);
  assert_int_equal(atomic_load(&w.mismatches), 0);
  cpuexec_session_destroy(s);
}

static void without_a_policy_or_enclosing_executor_the_process_default_is_used(void **state) {
  (void)state;
  cpuexec_session *s = NULL;
  assert_int_equal(cpuexec_session_create(NULL, &s), 0);
  const cpuexec_resolved *def = NULL;
  assert_int_equal(cpuexec_policy_resolve_default(&def), 0);
  cpuexec_executor *e = cpuexec_session_executor(s);
  assert_int_equal(cpuexec_executor_effective_threads(e), DEFAULT_THREADS);
  assert_string_equal(cpuexec_resolved_sharing_key(cpuexec_executor_resolved(e)), cpuexec_resolved_sharing_key(def));
  /* Equal policies share: a second session is on the same pool. */
  cpuexec_session *same = session_with(DEFAULT_THREADS);
  assert_int_equal(cpuexec_executor_id(cpuexec_session_executor(same)), cpuexec_executor_id(e));
  cpuexec_session_destroy(same);
  cpuexec_session_destroy(s);
}

/* ---- scopes -------------------------------------------------------------- */

static void scopes_nest_and_restore_in_reverse_order(void **state) {
  (void)state;
  cpuexec_session *a = session_with(2), *b = session_with(3);
  cpuexec_executor *ea = cpuexec_session_executor(a), *eb = cpuexec_session_executor(b);
  cpuexec_scope outer, inner;
  assert_int_equal(cpuexec_scope_enter(ea, &outer), 0);
  assert_ptr_equal(cpuexec_executor_current(), ea);
  assert_int_equal(cpuexec_scope_enter(eb, &inner), 0);
  assert_ptr_equal(cpuexec_executor_current(), eb);
  assert_int_equal(cpuexec_scope_leave(&inner), 0);
  assert_ptr_equal(cpuexec_executor_current(), ea);
  assert_int_equal(cpuexec_scope_leave(&outer), 0);
  assert_null(cpuexec_executor_current());
  cpuexec_session_destroy(a);
  cpuexec_session_destroy(b);
}

static void leaving_scopes_out_of_order_or_twice_is_a_state_error(void **state) {
  (void)state;
  cpuexec_session *a = session_with(2);
  cpuexec_executor *ea = cpuexec_session_executor(a);
  cpuexec_scope outer, inner, never;
  memset(&never, 0, sizeof never);
  assert_int_equal(cpuexec_scope_leave(&never), CPUEXEC_ESTATE);
  assert_int_equal(cpuexec_scope_enter(ea, &outer), 0);
  assert_int_equal(cpuexec_scope_enter(ea, &inner), 0);
  assert_int_equal(cpuexec_scope_leave(&outer), CPUEXEC_ESTATE);
  assert_non_null(strstr(cpuexec_error_message(), "reverse order"));
  assert_ptr_equal(cpuexec_executor_current(), ea); /* the failed leave changed nothing */
  assert_int_equal(cpuexec_scope_leave(&inner), 0);
  assert_int_equal(cpuexec_scope_leave(&inner), CPUEXEC_ESTATE);
  assert_int_equal(cpuexec_scope_leave(&outer), 0);
  assert_null(cpuexec_executor_current());
  assert_int_equal(cpuexec_scope_enter(NULL, &outer), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_scope_enter(ea, NULL), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_scope_leave(NULL), CPUEXEC_EINVAL);
  assert_null(cpuexec_executor_current());
  cpuexec_session_destroy(a);
}

typedef struct other_thread_leave {
  cpuexec_scope *scope;
  int rc;
} other_thread_leave;

static void *leave_elsewhere(void *arg) {
  other_thread_leave *o = arg;
  o->rc = cpuexec_scope_leave(o->scope);
  return NULL;
}

static void a_scope_cannot_be_left_from_another_thread(void **state) {
  (void)state;
  cpuexec_session *a = session_with(2);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(cpuexec_session_executor(a), &scope), 0);
  other_thread_leave o = {&scope, 0};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, leave_elsewhere, &o), 0);
  pthread_join(t, NULL);
  assert_int_equal(o.rc, CPUEXEC_ESTATE);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  cpuexec_session_destroy(a);
}

/* ---- errors -------------------------------------------------------------- */

static void bad_arguments_are_reported_and_start_nothing(void **state) {
  (void)state;
  int baseline = task_baseline();
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = -3;
  cpuexec_session *s = (cpuexec_session *)&p;
  assert_int_equal(cpuexec_session_create(&p, &s), CPUEXEC_EINVAL);
  assert_null(s);
  assert_non_null(strstr(cpuexec_error_message(), "num_threads"));
  assert_int_equal(wait_task_count(baseline), baseline);
  assert_int_equal(cpuexec_session_create(NULL, NULL), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_session_run(NULL, NULL, record_current), CPUEXEC_EINVAL);
  s = session_with(2);
  assert_int_equal(cpuexec_session_run(s, NULL, NULL), CPUEXEC_EINVAL);
  assert_null(cpuexec_session_executor(NULL));
  cpuexec_session_destroy(s);
  cpuexec_session_destroy(NULL);
}

/* ---- concurrency --------------------------------------------------------- */

typedef struct concurrent_run {
  cpuexec_session *s;
  atomic_int failures;
} concurrent_run;

static int add_range(void *ctx, int64_t begin, int64_t end) {
  atomic_fetch_add((atomic_llong *)ctx, end - begin);
  return 0;
}

static int checked_sum_body(void *arg) {
  concurrent_run *c = arg;
  for (int i = 0; i < 50; i++) {
    atomic_llong sum = 0;
    if (cpuexec_parallel_for(cpuexec_executor_current(), 1000, 7, &sum, add_range, 0) != 0 || sum != 1000)
      atomic_fetch_add(&c->failures, 1);
  }
  if (cpuexec_executor_current() != cpuexec_session_executor(c->s)) atomic_fetch_add(&c->failures, 1);
  return 0;
}

static void *run_session_thread(void *arg) {
  concurrent_run *c = arg;
  if (cpuexec_session_run(c->s, c, checked_sum_body) != 0) atomic_fetch_add(&c->failures, 1);
  if (cpuexec_executor_current() != NULL) atomic_fetch_add(&c->failures, 1);
  return NULL;
}

/* Several threads run one session at once; each sees it installed only on
 * itself and gets complete loops. */
static void one_session_runs_on_several_threads_at_once(void **state) {
  (void)state;
  concurrent_run c;
  memset(&c, 0, sizeof c);
  c.s = session_with(3);
  pthread_t t[4];
  for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&t[i], NULL, run_session_thread, &c), 0);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  assert_int_equal(atomic_load(&c.failures), 0);
  assert_null(cpuexec_executor_current());
  cpuexec_session_destroy(c.s);
}

/* Seed 000: a kernel that requires an executor and gets none fails at
 * preparation instead of running on a global pool; one that only supports
 * an executor gets the process default pool; ParallelFor has the same
 * opt-in. */
static void legacy_count(void *ctx, int64_t begin, int64_t end) { atomic_fetch_add((atomic_int *)ctx, (int)(end - begin)); }

static int kernel_inside(void *arg) {
  cpuexec_executor *exec = NULL;
  if (cpuexec_kernel_executor("gemm", CPUEXEC_EXECUTOR_REQUIRED, &exec) != 0 || exec != cpuexec_executor_current())
    return 1;
  if (cpuexec_kernel_executor("gemm", CPUEXEC_EXECUTOR_SUPPORTED, &exec) != 0 || exec != cpuexec_executor_current())
    return 2;
  atomic_int *seen = arg;
  if (ParallelForRequiringExecutor("gemm", 100, 7, seen, legacy_count) != 0) return 3;
  return atomic_load(seen) == 100 ? 0 : 4;
}

static void a_kernel_that_requires_an_executor_fails_without_one(void **state) {
  (void)state;
  cpuexec_executor *exec = (cpuexec_executor *)&exec; /* overwritten with NULL on failure */
  assert_int_equal(cpuexec_kernel_executor("gemm", CPUEXEC_EXECUTOR_REQUIRED, &exec), CPUEXEC_ESTATE);
  assert_null(exec);
  assert_non_null(strstr(cpuexec_error_message(), "kernel \"gemm\": requires an executor"));
  atomic_int seen = 0;
  assert_int_equal(ParallelForRequiringExecutor("gemm", 100, 7, &seen, legacy_count), CPUEXEC_ESTATE);
  assert_int_equal(atomic_load(&seen), 0); /* nothing ran */
  assert_non_null(strstr(cpuexec_error_message(), "\"gemm\""));
  assert_int_equal(cpuexec_kernel_executor(NULL, CPUEXEC_EXECUTOR_REQUIRED, &exec), CPUEXEC_ESTATE);
  assert_non_null(strstr(cpuexec_error_message(), "kernel \"kernel\""));
  assert_int_equal(cpuexec_kernel_executor("gemm", (cpuexec_executor_need)7, &exec), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_kernel_executor("gemm", CPUEXEC_EXECUTOR_REQUIRED, NULL), CPUEXEC_EINVAL);
  /* Supported: the process default pool, the one ParallelFor uses. */
  assert_int_equal(cpuexec_kernel_executor("gemm", CPUEXEC_EXECUTOR_SUPPORTED, &exec), 0);
  cpuexec_executor *pool = NULL;
  assert_int_equal(cpuexec_registry_default_executor(&pool), 0);
  assert_ptr_equal(exec, pool);
  /* Inside a session: its executor, for both. */
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = 2;
  cpuexec_session *s = NULL;
  assert_int_equal(cpuexec_session_create(&p, &s), 0);
  assert_int_equal(cpuexec_session_run(s, &seen, kernel_inside), 0);
  cpuexec_session_destroy(s);
}

int main(void) {
  setenv("CPUEXEC_POLICY", "num_threads=2,affinity_policy=none", 1);
  const struct CMUnitTest install[] = {
      cmocka_unit_test(run_installs_the_executor_then_restores_the_previous_one),
      cmocka_unit_test(observed_participants_equal_the_requested_thread_count),
      cmocka_unit_test(a_serial_session_runs_every_range_inline),
      cmocka_unit_test(one_session_runs_on_several_threads_at_once),
  };
  const struct CMUnitTest nesting[] = {
      cmocka_unit_test(a_nested_session_keeps_the_enclosing_executor),
      cmocka_unit_test(a_session_created_on_a_participant_keeps_the_region_executor),
      cmocka_unit_test(without_a_policy_or_enclosing_executor_the_process_default_is_used),
  };
  const struct CMUnitTest scopes[] = {
      cmocka_unit_test(scopes_nest_and_restore_in_reverse_order),
      cmocka_unit_test(leaving_scopes_out_of_order_or_twice_is_a_state_error),
      cmocka_unit_test(a_scope_cannot_be_left_from_another_thread),
      cmocka_unit_test(bad_arguments_are_reported_and_start_nothing),
      cmocka_unit_test(a_kernel_that_requires_an_executor_fails_without_one),
  };
  int failed = 0;
  failed += cmocka_run_group_tests_name("session installation", install, NULL, NULL);
  failed += cmocka_run_group_tests_name("session nesting", nesting, NULL, NULL);
  failed += cmocka_run_group_tests_name("scopes", scopes, NULL, NULL);
  return failed != 0;
}
