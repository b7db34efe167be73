/* The participation rule of a policy (cpuexec/policy.h): with
 * participation=every_participant every region of the session runs on every
 * admitted participant, whatever API it comes through, and the dispatch
 * observers and counters report the participants that ran. The seed's check
 * is the first case: 8 trivial blocks in a 2-thread session observe 2
 * distinct threads, every time, with no rendezvous to force the worker in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <stdatomic.h>
#include <cmocka.h>

#include <cpuexec.h>
#include <cpuexec/compat/job_pool.h>
#include <cpuexec/compat/parallel_for.h>
#include <cpuexec/compat/ranges.h>

#include "support/executors.h"
#include "support/test_util.h"

#define REPETITIONS 2000
#define BLOCKS 8

/* The executor of `text` resolved on the stored 2-core machine. */
static cpuexec_executor *executor_of(const char *text) {
  cpuexec_topology_options o;
  cpuexec_topology_options_init(&o);
  cpuexec_topology *t = NULL;
  assert_int_equal(cpuexec_topology_load_xml(TEST_TOPOLOGIES "2cores.xml", &o, &t), 0);
  cpuexec_policy p;
  assert_int_equal(cpuexec_policy_parse(text, &p), 0);
  cpuexec_resolved *r = NULL;
  assert_int_equal(cpuexec_policy_resolve(&p, t, &r), 0);
  cpuexec_topology_destroy(t);
  cpuexec_executor *exec = NULL;
  assert_int_equal(cpuexec_executor_create(r, &exec), 0);
  cpuexec_resolved_destroy(r);
  return exec;
}

/* The distinct threads that ran a part of one call: each thread's own
 * thread-local marker is its identity. */
typedef struct seen_threads {
  _Atomic(const void *) who[BLOCKS];
  _Atomic int blocks;
} seen_threads;

static _Thread_local char thread_marker;

static void seen_reset(seen_threads *s) {
  for (int i = 0; i < BLOCKS; i++) atomic_store(&s->who[i], NULL);
  atomic_store(&s->blocks, 0);
}

static void seen_note(seen_threads *s) {
  const void *me = &thread_marker;
  atomic_fetch_add(&s->blocks, 1);
  for (int i = 0; i < BLOCKS; i++) {
    const void *expected = NULL;
    if (atomic_compare_exchange_strong(&s->who[i], &expected, me) || expected == me) return;
  }
}

static int seen_count(seen_threads *s) {
  int n = 0;
  for (int i = 0; i < BLOCKS; i++) n += atomic_load(&s->who[i]) != NULL;
  return n;
}

static void legacy_block(void *ctx, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; i++) seen_note(ctx);
}

static int block(void *ctx, int64_t begin, int64_t end) {
  legacy_block(ctx, begin, end);
  return 0;
}

static int job(void *ctx, int32_t id, int32_t count) {
  seen_note(ctx);
  return 0;
}

enum via { VIA_PARALLEL_FOR, VIA_LEGACY, VIA_RANGES, VIA_RANGE_EXECUTOR, VIA_WORKER_JOBS, VIA_COUNT };

/* One call of BLOCKS trivial blocks through `via`, on the installed executor. */
static void run_blocks(cpuexec_executor *exec, enum via via, seen_threads *s) {
  seen_reset(s);
  switch (via) {
  case VIA_PARALLEL_FOR:
    assert_int_equal(cpuexec_parallel_for(exec, BLOCKS, 1, s, block, 0), 0);
    break;
  case VIA_LEGACY:
    assert_int_equal(ParallelFor(BLOCKS, 1, s, legacy_block), 0);
    break;
  case VIA_RANGES: {
    cpuexec_range_schedule schedule;
    cpuexec_range_schedule_init(&schedule);
    assert_int_equal(cpuexec_ranges_execute(BLOCKS, &schedule, s, block), 0);
    break;
  }
  case VIA_RANGE_EXECUTOR: {
    cpuexec_range_executor re = cpuexec_range_executor_installed();
    assert_int_equal(cpuexec_range_executor_run(&re, BLOCKS, s, block), 0);
    break;
  }
  default:
    assert_int_equal(cpuexec_worker_jobs_run(exec, 2, s, job), 0);
    break;
  }
}

/* The seed's check, through every API a kernel uses. */
static void every_participant_gives_every_call_both_threads(void **state) {
  (void)state;
  cpuexec_executor *exec = executor_of("num_threads=2,participation=every_participant");
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(exec, &scope), 0);
  seen_threads s;
  for (int via = 0; via < VIA_COUNT; via++)
    for (int rep = 0; rep < REPETITIONS / VIA_COUNT; rep++) {
      run_blocks(exec, (enum via)via, &s);
      if (seen_count(&s) != 2)
        fail_msg("api %d, repetition %d: %d distinct threads ran the %d blocks", via, rep, seen_count(&s),
                 atomic_load(&s.blocks));
    }
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  cpuexec_executor_release(exec);
}

/* ---- what the observers and counters report ------------------------------ */

typedef struct report {
  uint64_t executor_id;
  _Atomic int64_t announced, completed, admitted, executed, executed_above_admitted, parallel;
} report;

static void record(void *ctx, const cpuexec_dispatch_event *ev) {
  report *r = ctx;
  if (ev->executor_id != r->executor_id || ev->ran_inline) return;
  if (!ev->completed) {
    atomic_fetch_add(&r->announced, 1);
    atomic_fetch_add(&r->admitted, ev->admitted_participants);
    return;
  }
  atomic_fetch_add(&r->completed, 1);
  atomic_fetch_add(&r->executed, ev->executed_participants);
  if (ev->executed_participants > 1) atomic_fetch_add(&r->parallel, 1);
  if (ev->executed_participants < 1 || ev->executed_participants > ev->admitted_participants)
    atomic_fetch_add(&r->executed_above_admitted, 1);
}

/* Runs REPETITIONS calls on a fresh executor of `text` with an observer and
 * counters on, and checks that both agree on the participants that ran. */
static void observe_runs(const char *text, report *r, cpuexec_counters *c) {
  cpuexec_executor *exec = executor_of(text);
  memset(r, 0, sizeof *r);
  r->executor_id = cpuexec_executor_id(exec);
  assert_int_equal(cpuexec_executor_counters_enable(exec), 0);
  assert_int_equal(cpuexec_dispatch_observer_add(r, record, CPUEXEC_OBSERVE_COMPLETION), 0);
  seen_threads s;
  for (int rep = 0; rep < REPETITIONS; rep++) {
    run_blocks(exec, VIA_PARALLEL_FOR, &s);
    assert_int_equal(atomic_load(&s.blocks), BLOCKS);
  }
  assert_int_equal(cpuexec_dispatch_observer_remove(r, record), 0);
  assert_int_equal(cpuexec_executor_counters_get(exec, c), 0);
  cpuexec_executor_release(exec);
  assert_int_equal(atomic_load(&r->announced), REPETITIONS);
  assert_int_equal(atomic_load(&r->completed), REPETITIONS);
  assert_int_equal(atomic_load(&r->executed_above_admitted), 0);
  /* The observer's executed count per region sums to the counters'. */
  assert_int_equal((uint64_t)atomic_load(&r->executed), c->participants_run);
  /* "Did it go parallel?": the regions the observer saw run on more than one. */
  assert_int_equal((uint64_t)atomic_load(&r->parallel), c->parallel_regions);
  assert_true(c->parallel_regions <= c->dispatches);
}

static void observers_and_counters_report_executed_participants(void **state) {
  (void)state;
  report r;
  cpuexec_counters c;
  observe_runs("num_threads=2,participation=every_participant", &r, &c);
  assert_int_equal(atomic_load(&r.executed), 2 * REPETITIONS);
  assert_int_equal(c.takeovers, 0);
  assert_int_equal(c.parallel_regions, REPETITIONS); /* every region ran on both */
  observe_runs("num_threads=2", &r, &c);
  /* The take-over rule: each region ran on 1 or 2; a region on 1 is a
   * take-over, so the executed count is exactly what the take-overs left. */
  assert_int_equal((uint64_t)atomic_load(&r.executed), 2 * (uint64_t)REPETITIONS - c.takeovers);
  /* On two threads a region ran on one exactly when its worker's chunk was taken over. */
  assert_int_equal(c.parallel_regions, (uint64_t)REPETITIONS - c.takeovers);
}

/* ---- the rule is the executor's: sharing key, description, descriptor ---- */

static void the_rule_is_part_of_what_an_executor_is(void **state) {
  (void)state;
  cpuexec_executor *strict = executor_of("num_threads=2,participation=every_participant");
  cpuexec_executor *loose = executor_of("num_threads=2,participation=take_over");
  const cpuexec_resolved *rs = cpuexec_executor_resolved(strict), *rl = cpuexec_executor_resolved(loose);
  assert_string_not_equal(cpuexec_resolved_sharing_key(rs), cpuexec_resolved_sharing_key(rl));
  assert_non_null(strstr(cpuexec_resolved_sharing_key(rs), "participation=every"));
  assert_null(strstr(cpuexec_resolved_sharing_key(rl), "participation"));
  char text[4096];
  assert_true(cpuexec_resolved_describe(rs, CPUEXEC_FORMAT_TEXT, text, sizeof text) > 0);
  assert_non_null(strstr(text, "participation:         every_participant"));
  assert_true(cpuexec_resolved_describe(rl, CPUEXEC_FORMAT_JSON, text, sizeof text) > 0);
  assert_non_null(strstr(text, "\"participation\":\"take_over\""));
  cpuexec_descriptor ds, dl;
  assert_int_equal(cpuexec_executor_descriptor_get(strict, &ds), 0);
  assert_int_equal(cpuexec_executor_descriptor_get(loose, &dl), 0);
  assert_int_equal(ds.participation, CPUEXEC_PARTICIPATION_EVERY_PARTICIPANT);
  assert_int_equal(dl.participation, CPUEXEC_PARTICIPATION_TAKE_OVER);
  assert_int_equal(cpuexec_executor_descriptor_check(strict, &dl), CPUEXEC_EMISMATCH);
  assert_non_null(strstr(cpuexec_error_message(), "participation"));
  cpuexec_executor_release(strict);
  cpuexec_executor_release(loose);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_participant_gives_every_call_both_threads),
      cmocka_unit_test(observers_and_counters_report_executed_participants),
      cmocka_unit_test(the_rule_is_part_of_what_an_executor_is),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
