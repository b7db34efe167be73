/* Six callers on one unshared, oversubscribed executor of three
 * participants (adaptive spin, unpinned, on a machine of fewer processors),
 * each inside a scope, each call on a context calloc'ed and written just
 * before it, cpuexec_parallel_for and ParallelFor mixed, while other
 * sessions come and go (issue 25, item 6). Every index is seen
 * exactly once with the values its caller wrote, and no callback runs
 * after its call returned (the caller poisons the context after the call,
 * a late reader would see the poison). The suite runs it under
 * ThreadSanitizer, which checks that every worker's reads of a context
 * happen after its caller's writes: the dispatch protocol's edges
 * (executor_internal.h) under take-over, settling, parking and the dispatch
 * lock handed between callers.
 *
 * The edge it checks: a caller writes the context, takes the dispatch
 * lock, writes every slot, then opens each worker's epoch with a seq_cst
 * (so release) store; a worker runs a range only after its acquire
 * compare-exchange moved that epoch from the open value to joined, and the
 * open value is written by dispatch stores only (take-overs and settling
 * write the taken value, workers the joined one, with relaxed RMWs that
 * never need to carry a release: nobody acquires the values they write).
 * So every read of the context in a callback follows the caller's writes,
 * on any memory model; a worker that arrives late reads nothing but its
 * epoch. The ThreadSanitizer race reports that an independent 60 s run
 * (many sessions created and destroyed) once gave were not about these
 * edges: its sanitizer-built programs had loaded the release libcpuexec,
 * uninstrumented, through an LD_LIBRARY_PATH searched before their run
 * path, so ThreadSanitizer saw the callers' writes and the callbacks' reads
 * but none of the library's atomics between them. With the instrumented
 * library that run reports none, and neither does this test, which has
 * its shape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <cmocka.h>

#include <cpuexec.h>

#include <cpuexec/compat/parallel_for.h>
#include "support/test_util.h"

#define CALLERS 6
#define ITEMS 96
#define POISON 0x5a5a5a5au

#ifndef CALLS
#define CALLS (TEST_UNDER_TSAN ? 1500 : 4000)
#endif

typedef struct context {
  uint32_t caller, call;
  uint32_t value[ITEMS]; /* written by the caller just before the call */
  _Atomic uint32_t seen[ITEMS];
  atomic_int bad;
} context;

static cpuexec_executor *shared_exec;
static atomic_int failures;

static void check_range(context *c, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; i++) {
    if (c->value[i] != (c->caller << 24 | c->call << 8 | (uint32_t)i % 251)) atomic_fetch_add(&c->bad, 1);
    atomic_fetch_add_explicit(&c->seen[i], 1, memory_order_relaxed);
  }
}

static int range_fn(void *ctx, int64_t begin, int64_t end) {
  check_range(ctx, begin, end);
  return 0;
}

static void legacy_fn(void *ctx, int64_t begin, int64_t end) { check_range(ctx, begin, end); }

static void *caller_main(void *arg) {
  uint32_t caller = (uint32_t)(uintptr_t)arg;
  cpuexec_scope scope;
  if (cpuexec_scope_enter(shared_exec, &scope) != 0) {
    atomic_fetch_add(&failures, 1);
    return NULL;
  }
  for (uint32_t call = 0; call < CALLS; call++) {
    context *c = calloc(1, sizeof *c);
    if (!c) abort();
    c->caller = caller;
    c->call = call & 0xffff;
    for (uint32_t i = 0; i < ITEMS; i++) c->value[i] = caller << 24 | c->call << 8 | i % 251;
    int64_t grain = 1 + (int64_t)((caller + call) % 7);
    int rc = (call & 1) ? ParallelFor(ITEMS, grain, c, legacy_fn)
                        : cpuexec_parallel_for(cpuexec_executor_current(), ITEMS, grain, c, range_fn, 0);
    if (rc != 0) atomic_fetch_add(&failures, 1);
    for (uint32_t i = 0; i < ITEMS; i++)
      if (atomic_load_explicit(&c->seen[i], memory_order_relaxed) != 1) atomic_fetch_add(&failures, 1);
    if (atomic_load(&c->bad) != 0) atomic_fetch_add(&failures, 1);
    /* A callback of this call running after the return would read this. */
    for (uint32_t i = 0; i < ITEMS; i++) c->value[i] = POISON;
    free(c);
  }
  cpuexec_scope_leave(&scope);
  return NULL;
}

static atomic_bool others_stop;

static int other_fn(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  (void)begin;
  (void)end;
  return 0;
}

static int other_session_body(void *arg) {
  (void)arg;
  for (int i = 0; i < 50 && !atomic_load(&others_stop); i++)
    if (cpuexec_parallel_for(cpuexec_executor_current(), 64, 4, NULL, other_fn, 0) != 0) return -1;
  return 0;
}

/* Other sessions come and go meanwhile (new pools, new threads), on
 * policies the shared executor does not have. */
static void *other_sessions(void *arg) {
  (void)arg;
  for (uint32_t round = 0; !atomic_load(&others_stop); round++) {
    cpuexec_policy p;
    cpuexec_policy_init(&p);
    p.num_threads = 2 + (int32_t)(round % 3);
    p.spin_policy = round & 1 ? CPUEXEC_SPIN_PARK_IMMEDIATELY : CPUEXEC_SPIN_ADAPTIVE;
    cpuexec_session *s = NULL;
    if (cpuexec_session_create(&p, &s) != 0 || cpuexec_session_run(s, NULL, other_session_body) != 0)
      atomic_fetch_add(&failures, 1);
    cpuexec_session_destroy(s);
  }
  return NULL;
}

static void six_callers_on_an_oversubscribed_pool_read_what_they_wrote(void **state) {
  (void)state;
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = 3;
  p.spin_policy = CPUEXEC_SPIN_ADAPTIVE;
  cpuexec_resolved *r = NULL;
  assert_int_equal(cpuexec_policy_resolve(&p, NULL, &r), 0);
  assert_int_equal(cpuexec_executor_create(r, &shared_exec), 0);
  cpuexec_resolved_destroy(r);
  pthread_t other, t[CALLERS];
  assert_int_equal(pthread_create(&other, NULL, other_sessions, NULL), 0);
  for (uintptr_t i = 0; i < CALLERS; i++) assert_int_equal(pthread_create(&t[i], NULL, caller_main, (void *)i), 0);
  for (int i = 0; i < CALLERS; i++) pthread_join(t[i], NULL);
  atomic_store(&others_stop, true);
  pthread_join(other, NULL);
  assert_int_equal(atomic_load(&failures), 0);
  assert_int_equal(cpuexec_executor_release(shared_exec), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(six_callers_on_an_oversubscribed_pool_read_what_they_wrote),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
