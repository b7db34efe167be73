/* The "session kept by a library" pattern (doc/executor-hooks.md): a
 * library creates a session at init, installs its executor with a scope
 * around each of its calls (never cpuexec_session_run), runs its blocks
 * through a void run_blocks hook on the installed executor
 * (cpuexec_range_executor_run_all), and destroys the session at teardown.
 * Checked: every block exactly once, from two threads at once, in parallel;
 * teardown gives the pool back (the process registry's live pools), also
 * while a call is still running on another thread (its scope holds the
 * executor until it leaves); and a fork child that uses the library, with
 * the fork rule (the session replaced in the child: the call goes parallel
 * again) and without it (the inherited executor refuses: every block runs
 * on the caller and the hook reports CPUEXEC_EFORKED). */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "support/test_util.h"
#include <cpuexec/compat/range_executor.h>

/* ---- the library ----------------------------------------------------------- */

typedef void (*block_task)(void *task_context, int64_t begin, int64_t end);

typedef struct library {
  cpuexec_session *session;
  atomic_int stale;           /* set in a fork child (the fork rule): replace the session first */
  atomic_int hook_errors;     /* what the void hook could not return (the side channel) */
  atomic_int last_hook_error;
} library;

static library *lib_with_fork_rule; /* the library the atfork child handler marks */

static void mark_stale_in_child(void) {
  if (lib_with_fork_rule != NULL) atomic_store(&lib_with_fork_rule->stale, 1);
}

static int library_session(library *lib) {
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = 2;
  policy.participation = CPUEXEC_PARTICIPATION_EVERY_PARTICIPANT; /* "went parallel" is certain */
  return cpuexec_session_create(&policy, &lib->session);
}

static int library_init(library *lib, bool fork_rule) {
  memset(lib, 0, sizeof *lib);
  if (fork_rule) lib_with_fork_rule = lib; /* its atfork child handler: main registers it once */
  return library_session(lib);
}

static void library_teardown(library *lib) {
  cpuexec_session_destroy(lib->session); /* in a fork child: frees memory only */
  lib->session = NULL;
  if (lib_with_fork_rule == lib) lib_with_fork_rule = NULL;
}

/* The hook: the run_blocks recipe on the executor installed for the call. */
typedef struct blocks_call {
  void *task_context;
  block_task task;
} blocks_call;

static int run_task(void *ctx, int64_t begin, int64_t end) {
  const blocks_call *call = ctx;
  call->task(call->task_context, begin, end);
  return 0;
}

static void run_blocks(library *lib, int64_t blocks, void *task_context, block_task task) {
  blocks_call call = {task_context, task};
  cpuexec_range_executor installed = cpuexec_range_executor_installed();
  cpuexec_run_all_report report;
  cpuexec_range_executor_run_all(&installed, blocks, &call, run_task, &report);
  if (report.error != 0) {
    atomic_fetch_add(&lib->hook_errors, 1);
    atomic_store(&lib->last_hook_error, report.error);
  }
}

/* One library call: replaces a session made stale by fork, installs its
 * executor for the call, runs the blocks, leaves. */
static int library_call(library *lib, int64_t blocks, void *task_context, block_task task) {
  if (atomic_exchange(&lib->stale, 0)) {
    cpuexec_session_destroy(lib->session); /* the parent's: frees memory only */
    int rc = library_session(lib);
    if (rc != 0) return rc;
  }
  cpuexec_scope scope;
  int rc = cpuexec_scope_enter(cpuexec_session_executor(lib->session), &scope);
  if (rc != 0) return rc;
  run_blocks(lib, blocks, task_context, task);
  return cpuexec_scope_leave(&scope);
}

/* ---- what ran ---------------------------------------------------------------- */

#define BLOCKS 4000
typedef struct tally {
  atomic_int runs[BLOCKS];
  atomic_int on_workers; /* blocks run by a participant other than 0 */
  atomic_int entered;    /* for the call held open: its first block started */
  atomic_int release;
} tally;

static void count_blocks(void *ctx, int64_t begin, int64_t end) {
  tally *t = ctx;
  for (int64_t b = begin; b < end; b++) atomic_fetch_add(&t->runs[b], 1);
  if (cpuexec_participant_index() != 0) atomic_fetch_add(&t->on_workers, (int)(end - begin));
}

static int blocks_once(tally *t) {
  for (int b = 0; b < BLOCKS; b++)
    if (atomic_load(&t->runs[b]) != 1) return 0;
  return 1;
}

static int32_t live_pools(void) { return cpuexec_registry_live_pools(cpuexec_registry_default()); }

/* ---- cases ------------------------------------------------------------------ */

typedef struct caller {
  library *lib;
  tally t;
  int rc;
} caller;

static void *call_library(void *arg) {
  caller *c = arg;
  c->rc = library_call(c->lib, BLOCKS, &c->t, count_blocks);
  return NULL;
}

static void calls_from_two_threads_run_every_block_once_in_parallel(void **state) {
  (void)state;
  int32_t before = live_pools();
  library lib;
  assert_int_equal(library_init(&lib, false), 0);
  assert_int_equal(live_pools(), before + 1);
  static caller callers[2];
  memset(callers, 0, sizeof callers);
  pthread_t threads[2];
  for (int i = 0; i < 2; i++) {
    callers[i].lib = &lib;
    assert_int_equal(pthread_create(&threads[i], NULL, call_library, &callers[i]), 0);
  }
  for (int i = 0; i < 2; i++) {
    pthread_join(threads[i], NULL);
    assert_int_equal(callers[i].rc, 0);
    assert_true(blocks_once(&callers[i].t));
  }
  /* Each call is one region of both participants, in lane 0 or beside it. */
  assert_true(atomic_load(&callers[0].t.on_workers) > 0);
  assert_true(atomic_load(&callers[1].t.on_workers) > 0);
  assert_int_equal(atomic_load(&lib.hook_errors), 0);
  assert_null(cpuexec_executor_current()); /* the calls left nothing installed here */
  library_teardown(&lib);
  assert_int_equal(live_pools(), before); /* teardown gave the pool back */
}

static void hold_first_block(void *ctx, int64_t begin, int64_t end) {
  tally *t = ctx;
  if (begin == 0) {
    atomic_store(&t->entered, 1);
    while (!atomic_load(&t->release)) sched_yield();
  }
  count_blocks(ctx, begin, end);
}

static void *call_library_held(void *arg) {
  caller *c = arg;
  c->rc = library_call(c->lib, BLOCKS, &c->t, hold_first_block);
  return NULL;
}

static void teardown_during_a_call_keeps_the_executor_until_the_call_leaves(void **state) {
  (void)state;
  int32_t before = live_pools();
  library lib;
  assert_int_equal(library_init(&lib, false), 0);
  static caller held;
  memset(&held, 0, sizeof held);
  held.lib = &lib;
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, call_library_held, &held), 0);
  while (!atomic_load(&held.t.entered)) sched_yield();
  library_teardown(&lib); /* the call's scope still holds the executor */
  assert_int_equal(live_pools(), before + 1);
  atomic_store(&held.t.release, 1);
  pthread_join(thread, NULL);
  assert_int_equal(held.rc, 0);
  assert_true(blocks_once(&held.t));
  assert_int_equal(live_pools(), before); /* the scope's leave gave it back */
}

#if !TEST_ON_WINDOWS
static library forked_lib;
static tally child_tally;

static int child_with_the_fork_rule(void) {
  if (live_pools() != 0) return 6; /* the registry forgot the parent's pools */
  if (library_call(&forked_lib, BLOCKS, &child_tally, count_blocks) != 0) return 1;
  if (!blocks_once(&child_tally)) return 2;
  if (atomic_load(&child_tally.on_workers) == 0) return 3; /* the new session's pool ran it */
  if (atomic_load(&forked_lib.hook_errors) != 0) return 4;
  if (live_pools() != 1) return 5; /* the child's own pool */
  library_teardown(&forked_lib);
  return live_pools() == 0 ? 0 : 7;
}

static int child_without_the_fork_rule(void) {
  if (library_call(&forked_lib, BLOCKS, &child_tally, count_blocks) != 0) return 1;
  if (!blocks_once(&child_tally)) return 2;              /* no block lost, none twice */
  if (atomic_load(&child_tally.on_workers) != 0) return 3; /* all on the caller */
  if (atomic_load(&forked_lib.hook_errors) != 1) return 4;
  if (atomic_load(&forked_lib.last_hook_error) != CPUEXEC_EFORKED) return 5;
  library_teardown(&forked_lib); /* frees memory only */
  return 0;
}

static void a_fork_child_uses_the_library_with_and_without_the_fork_rule(void **state) {
  (void)state;
  /* The fork rule's child starts the threads of its new pool, which a
   * child cannot do under ThreadSanitizer (tests/support/threads.h). */
  for (int rule = TEST_CHILD_MAY_START_THREADS ? 1 : 0; rule >= 0; rule--) {
    assert_int_equal(library_init(&forked_lib, rule), 0);
    memset(&child_tally, 0, sizeof child_tally);
    assert_int_equal(library_call(&forked_lib, BLOCKS, &child_tally, count_blocks), 0); /* the parent uses it */
    assert_true(blocks_once(&child_tally));
    memset(&child_tally, 0, sizeof child_tally);
    assert_int_equal(run_in_child(rule ? child_with_the_fork_rule : child_without_the_fork_rule, 60), 0);
    /* The parent's session is untouched by the child. */
    assert_int_equal(library_call(&forked_lib, BLOCKS, &child_tally, count_blocks), 0);
    assert_true(blocks_once(&child_tally));
    assert_true(atomic_load(&child_tally.on_workers) > 0);
    assert_int_equal(atomic_load(&forked_lib.hook_errors), 0);
    library_teardown(&forked_lib);
  }
}
#endif

int main(void) {
#if !TEST_ON_WINDOWS
  pthread_atfork(NULL, NULL, mark_stale_in_child); /* the library's fork rule, registered once */
#endif
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(calls_from_two_threads_run_every_block_once_in_parallel),
      cmocka_unit_test(teardown_during_a_call_keeps_the_executor_until_the_call_leaves),
      TEST_UNIX_ONLY(a_fork_child_uses_the_library_with_and_without_the_fork_rule, "fork(): Windows has none"),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
