/* The node level of the permit model in the executor
 * (src/executor/permit.h, cpuexec__permit_node_admits and
 * cpuexec__permit_node_lets_join): with the node's one slot held by
 * another process's worker, a pool's caller claims its implicit slot over
 * the budget and runs every region alone, waking no worker; once the slot
 * is free its claim moves below the budget, which (N = 1) is then its own:
 * still alone. A strict region (CPUEXEC_FOR_EVERY_PARTICIPANT) runs on
 * every participant regardless. The budget is the stored cgroup of half a
 * CPU (N = 1) in a directory of tables of this test's own, the other
 * process tests/programs/node_client. The counters count what the budget
 * did: regions it cut, slots workers took. No case waits on time: the
 * strict region's workers are waited for by the region itself. */
#include "support/watchdog.h"

#ifdef _WIN32
TEST_PROGRAM_NOT_ON_WINDOWS("the node budget's table is POSIX shared memory")
#else
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cpuexec.h>

#include "executor/executor_internal.h"
#include "node/node_budget.h"

#define CLIENT TOP_BUILDDIR "/tests/programs/node_client"
#define HALF TOP_SRCDIR "/tests/data/cgroups/v1-half"
#define TWO_CPUS TOP_SRCDIR "/tests/data/cgroups/v1-container"

static char dir[256];
static pthread_t caller;

typedef struct region_seen {
  _Atomic int on_workers;       /* ranges run on a thread other than the caller */
  _Atomic int participants_ran; /* bit i: participant i ran a range */
} region_seen;

static int record(void *ctx, int64_t begin, int64_t end) {
  (void)begin, (void)end;
  region_seen *s = ctx;
  atomic_fetch_or(&s->participants_ran, 1 << cpuexec_participant_index());
  if (!pthread_equal(pthread_self(), caller)) atomic_fetch_add(&s->on_workers, 1);
  return 0;
}

static cpuexec_counters counters_of(cpuexec_executor *exec) {
  cpuexec_counters c;
  assert_int_equal(cpuexec_executor_counters_get(exec, &c), 0);
  return c;
}

/* A process holding the node's one slot: its stdin closes to end it. */
typedef struct holder {
  pid_t pid;
  int in;
} holder;

static holder hold_the_slot(void) {
  int in[2], out[2];
  assert_int_equal(pipe(in), 0);
  assert_int_equal(pipe(out), 0);
  holder h;
  h.pid = fork();
  assert_true(h.pid >= 0);
  if (h.pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[1]);
    close(out[0]);
    setenv("NODE_CLIENT_CGROUP_ROOT", HALF, 1);
    execl(CLIENT, CLIENT, "hold", "1", (char *)NULL);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  char line[64] = "";
  FILE *f = fdopen(out[0], "r");
  if (fgets(line, sizeof line, f) == NULL) line[0] = '\0';
  fclose(f);
  assert_string_equal(line, "held 1\n");
  h.in = in[1];
  return h;
}

static void let_go(holder *h) {
  close(h->in);
  int status;
  assert_int_equal(waitpid(h->pid, &status, 0), h->pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static uint64_t callers_slot_waits(cpuexec_executor *e) {
  return atomic_load(&cpuexec__counters_of(e)->callers.node_slot_waits);
}

/* A pool of the policy text, its counters on. */
static cpuexec_executor *pool_of(const char *text) {
  cpuexec_policy p;
  assert_int_equal(cpuexec_policy_parse(text, &p), 0);
  cpuexec_resolved *r = NULL;
  cpuexec_executor *e = NULL;
  assert_int_equal(cpuexec_policy_resolve(&p, NULL, &r), 0);
  assert_int_equal(cpuexec_executor_create(r, &e), 0);
  cpuexec_resolved_destroy(r);
  assert_int_equal(cpuexec_executor_counters_enable(e), 0);
  return e;
}

static void a_full_budget_leaves_regions_to_their_caller(void **state) {
  (void)state;
  holder h = hold_the_slot();
  cpuexec_executor *e = pool_of("num_threads=3");
  region_seen s = {0};
  for (int i = 0; i < 20; i++) assert_int_equal(cpuexec_parallel_for(e, 64, 1, &s, record, 0), 0);
  cpuexec_counters c = counters_of(e);
  /* Every region on its caller, none opened to a worker that would be refused. */
  assert_int_equal(atomic_load(&s.on_workers), 0);
  assert_int_equal(c.occupied_inline, 20);
  assert_int_equal(c.dispatches, 0);
  assert_int_equal(c.wakeups, 0);
  /* Each region cut to its caller (the callers' counts: each worker is
   * also refused once as it starts, counted when counting was on by then). */
  assert_int_equal(callers_slot_waits(e), 20);
  assert_int_equal(c.node_slots_taken, 0);
  char text[2048];
  assert_true(cpuexec_node_budget_describe(text, sizeof text) > 0);
  assert_non_null(strstr(text, "1 CPUs shared"));
  assert_non_null(strstr(text, "2 slots held (this process 1)")); /* the worker's, and our caller's over it */

  /* The other process gone: the caller's claim moves into the budget's one
   * slot, which is all of it, so its regions still run alone. */
  let_go(&h);
  assert_int_equal(cpuexec_parallel_for(e, 64, 1, &s, record, 0), 0);
  assert_int_equal(atomic_load(&s.on_workers), 0);
  assert_int_equal(counters_of(e).occupied_inline, 21);
  assert_int_equal(callers_slot_waits(e), 21);
  assert_true(cpuexec_node_budget_describe(text, sizeof text) > 0);
  assert_non_null(strstr(text, "1 slots held (this process 1)"));
  assert_int_equal(cpuexec_executor_release(e), 0);
}

/* A pool whose policy keeps it out of the budget (node_budget=off) runs
 * beside a full budget as if there were none: every region is opened to
 * its workers, its caller claims no slot and its workers take none. */
static void a_pool_out_of_the_budget_opens_its_regions(void **state) {
  (void)state;
  holder h = hold_the_slot();
  cpuexec_executor *e = pool_of("num_threads=3,node_budget=off");
  region_seen s = {0};
  for (int i = 0; i < 20; i++) assert_int_equal(cpuexec_parallel_for(e, 64, 1, &s, record, 0), 0);
  cpuexec_counters c = counters_of(e);
  assert_int_equal(c.dispatches, 20);
  assert_int_equal(c.occupied_inline, 0);
  assert_int_equal(callers_slot_waits(e), 0);
  assert_int_equal(c.node_slot_waits, 0);
  assert_int_equal(c.node_slots_taken, 0);
  char text[2048];
  assert_true(cpuexec_node_budget_describe(text, sizeof text) > 0);
  assert_non_null(strstr(text, "1 slots held (this process 0)")); /* the other process's alone */
  assert_int_equal(cpuexec_executor_release(e), 0);
  let_go(&h);
}

static int set_flag(void *ctx) {
  atomic_store((_Atomic int *)ctx, 1);
  return 0;
}

/* A task group's caller may block outside cpuexec_task_group_wait (Eigen's
 * Barrier, pthreadpool's executor): its queued tasks then have no thread
 * but a worker, which runs them though the node's budget has no slot for
 * it. The caller here waits for the task's effect alone. */
static void queued_tasks_run_with_the_budget_full(void **state) {
  (void)state;
  holder h = hold_the_slot();
  cpuexec_executor *e = pool_of("num_threads=3");
  cpuexec_task_group *g = NULL;
  assert_int_equal(cpuexec_task_group_create(e, NULL, &g), 0);
  for (int round = 0; round < 50; round++) {
    _Atomic int done = 0;
    assert_int_equal(cpuexec_task_group_submit(g, &done, set_flag), 0);
    while (atomic_load(&done) == 0) sched_yield();
  }
  assert_int_equal(cpuexec_task_group_wait(g), 0);
  assert_int_equal(cpuexec_task_group_destroy(g), 0);
  assert_int_equal(cpuexec_executor_release(e), 0);
  let_go(&h);
}

static void strict_region_runs_on_every_participant_over_the_budget(void **state) {
  (void)state;
  holder h = hold_the_slot();
  cpuexec_executor *e = pool_of("num_threads=3");
  region_seen s = {0};
  assert_int_equal(cpuexec_parallel_for_flags(e, 3, 1, &s, record, 0, CPUEXEC_FOR_EVERY_PARTICIPANT), 0);
  assert_int_equal(atomic_load(&s.participants_ran), 7);
  assert_int_equal(atomic_load(&s.on_workers), 2);
  cpuexec_counters c = counters_of(e);
  assert_true(c.node_slot_waits >= 2); /* each worker found no slot as it joined */
  assert_int_equal(c.node_slots_taken, 0);
  assert_int_equal(cpuexec_executor_release(e), 0);
  let_go(&h);
}

/* In a budget of 2 CPUs (this program run again, as "count-slots": the
 * node's state is made once per process, a fork child keeps its parent's
 * cgroup), the caller's implicit slot
 * leaves one for the pool's worker: it takes it each time it is woken from
 * a park (it gives it back as it parks), and no region is cut: a late
 * worker that takes its slot while the next region opens joins it.
 * The child runs regions until the worker counted a slot; it exits 0 when
 * the counts are right, else the line it prints says what was wrong. */
static int count_slots_in_a_budget_of_two(void) {
  char text[2048];
  unsigned n = 0;
  if (cpuexec_node_budget_describe(text, sizeof text) <= 0 || sscanf(text, "%u CPUs shared", &n) != 1 || n != 2) {
    printf("the budget is not 2 CPUs: %s\n", text);
    return 1;
  }
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = 2;
  cpuexec_resolved *r = NULL;
  cpuexec_executor *e = NULL;
  if (cpuexec_policy_resolve(&p, NULL, &r) != 0 || cpuexec_executor_create(r, &e) != 0 ||
      cpuexec_executor_counters_enable(e) != 0) {
    printf("no executor: %s\n", cpuexec_error_message());
    return 1;
  }
  cpuexec_resolved_destroy(r);
  /* The worker may have spun, holding a slot, before the counters were on:
   * it is counted from its next slot, taken after it parked. */
  while (!atomic_load(&e->slots[1].parked)) sched_yield();
  region_seen s = {0};
  cpuexec_counters c = {0};
  for (int i = 0; i < 1000000 && c.node_slots_taken == 0; i++) {
    if (cpuexec_parallel_for(e, 64, 1, &s, record, 0) != 0 || cpuexec_executor_counters_get(e, &c) != 0) return 1;
  }
  cpuexec_executor_release(e);
  if (c.node_slots_taken == 0 || c.node_slot_waits != 0) {
    printf("slots taken %llu, waits %llu (want a slot taken, no region cut)\n", (unsigned long long)c.node_slots_taken,
           (unsigned long long)c.node_slot_waits);
    return 1;
  }
  return 0;
}

/* Four pools in one process, a caller each, in a budget of 2 CPUs (this
 * program run again, as "four-pools"): the callers enter their regions one
 * after the other, each once the one before is inside its range, and stay
 * there until all four are inside. The first caller's region admits its
 * worker; each later one finds the process's other callers inside, which
 * take the free slot first, so its region runs on its caller alone (and
 * from the third on, callers outnumber the slots: crowded). */
#define POOLS 4
static _Atomic int pools_inside, pools_meeting = POOLS;

typedef struct pool_caller {
  cpuexec_executor *exec;
  int index;
  pthread_t thread, self;
  _Atomic bool arrived; /* its caller ran its first range */
} pool_caller;

static int wait_for_every_pool(void *ctx, int64_t begin, int64_t end) {
  (void)begin, (void)end;
  pool_caller *c = ctx;
  if (!pthread_equal(pthread_self(), c->self) || atomic_exchange(&c->arrived, true)) return 0;
  atomic_fetch_add(&pools_inside, 1);
  while (atomic_load(&pools_inside) < atomic_load(&pools_meeting)) sched_yield();
  return 0;
}

static void *call_once_inside(void *arg) {
  pool_caller *c = arg;
  c->self = pthread_self();
  while (atomic_load(&pools_inside) < c->index) sched_yield();
  return (void *)(intptr_t)cpuexec_parallel_for(c->exec, 64, 1, c, wait_for_every_pool, 0);
}

static int four_pools_in_a_budget_of_two(void) {
  pool_caller callers[POOLS];
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = 2;
  cpuexec_resolved *r = NULL;
  if (cpuexec_policy_resolve(&p, NULL, &r) != 0) return printf("resolve: %s\n", cpuexec_error_message()), 1;
  for (int i = 0; i < POOLS; i++) {
    callers[i] = (pool_caller){.index = i};
    if (cpuexec_executor_create(r, &callers[i].exec) != 0 || cpuexec_executor_counters_enable(callers[i].exec) != 0)
      return printf("executor %d: %s\n", i, cpuexec_error_message()), 1;
  }
  cpuexec_resolved_destroy(r);
  /* Every worker parked (it gave back the slot its first wait took). */
  for (int i = 0; i < POOLS; i++)
    while (!atomic_load(&callers[i].exec->slots[1].parked)) sched_yield();
  for (int i = 0; i < POOLS; i++) pthread_create(&callers[i].thread, NULL, call_once_inside, &callers[i]);
  int failed = 0;
  for (int i = 0; i < POOLS; i++) {
    void *rc = NULL;
    pthread_join(callers[i].thread, &rc);
    cpuexec_counters c;
    cpuexec_executor_counters_get(callers[i].exec, &c);
    uint64_t alone = i == 0 ? 0 : 1;
    if (rc != NULL || c.occupied_inline != alone || c.dispatches != 1 - alone ||
        atomic_load(&cpuexec__counters_of(callers[i].exec)->callers.node_slot_waits) != alone) {
      printf("pool %d: rc %d, occupied_inline %llu, dispatches %llu, node_slot_waits %llu (want %llu, %llu, %llu)\n",
             i, (int)(intptr_t)rc, (unsigned long long)c.occupied_inline, (unsigned long long)c.dispatches,
             (unsigned long long)c.node_slot_waits, (unsigned long long)alone, (unsigned long long)(1 - alone),
             (unsigned long long)alone);
      failed = 1;
    }
  }
  for (int i = 0; i < POOLS; i++) cpuexec_executor_release(callers[i].exec);
  return failed;
}

/* The permit model's clock, as the "met" case sets it, and how often the
 * calling thread (`caller`) read it. */
static _Atomic uint64_t fake_clock;
static _Atomic unsigned caller_clock_reads;
static uint64_t read_fake_clock(void) {
  if (pthread_equal(pthread_self(), caller)) atomic_fetch_add(&caller_clock_reads, 1);
  return atomic_load(&fake_clock);
}

/* Two pools in one process, a caller each, in a budget of 2 CPUs (this
 * program run again, as "met"): the callers meet inside their regions
 * (the first admits its worker, the second runs alone), then the first
 * pool's region opened while the other caller is between its regions runs
 * alone too, its serial work taken as running (cpuexec__node_others_running),
 * until the callers have not met for CPUEXEC__UNSETTLED_NS on the model's
 * clock; then it admits its worker again, and goes on admitting it once
 * the meeting is forgotten. */
static int two_pools_that_met(void) {
  atomic_store(&cpuexec__test_permit_clock, read_fake_clock);
  uint64_t t0 = 1000000000000u;
  atomic_store(&fake_clock, t0);
  atomic_store(&pools_meeting, 2);
  pool_caller callers[2];
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = 2;
  cpuexec_resolved *r = NULL;
  if (cpuexec_policy_resolve(&p, NULL, &r) != 0) return printf("resolve: %s\n", cpuexec_error_message()), 1;
  for (int i = 0; i < 2; i++) {
    callers[i] = (pool_caller){.index = i};
    if (cpuexec_executor_create(r, &callers[i].exec) != 0 || cpuexec_executor_counters_enable(callers[i].exec) != 0)
      return printf("executor %d: %s\n", i, cpuexec_error_message()), 1;
  }
  cpuexec_resolved_destroy(r);
  for (int i = 0; i < 2; i++)
    while (!atomic_load(&callers[i].exec->slots[1].parked)) sched_yield();
  for (int i = 0; i < 2; i++) pthread_create(&callers[i].thread, NULL, call_once_inside, &callers[i]);
  for (int i = 0; i < 2; i++) pthread_join(callers[i].thread, NULL);
  int failed = 0;
  cpuexec_counters a = counters_of(callers[0].exec), b = counters_of(callers[1].exec);
  if (a.dispatches != 1 || b.occupied_inline != 1) {
    printf("meeting: first pool's dispatches %llu, second's regions alone %llu (want 1, 1)\n",
           (unsigned long long)a.dispatches, (unsigned long long)b.occupied_inline);
    failed = 1;
  }
  /* 1 ms later, the second caller between its regions: the first runs alone. */
  atomic_store(&fake_clock, t0 + 1000000u);
  region_seen seen = {0};
  caller = pthread_self();
  if (cpuexec_parallel_for(callers[0].exec, 64, 1, &seen, record, 0) != 0) failed = 1;
  a = counters_of(callers[0].exec);
  if (a.dispatches != 1 || a.occupied_inline != 1 || atomic_load(&seen.on_workers) != 0) {
    printf("after meeting: dispatches %llu, regions alone %llu, ranges on workers %d (want 1, 1, 0)\n",
           (unsigned long long)a.dispatches, (unsigned long long)a.occupied_inline, atomic_load(&seen.on_workers));
    failed = 1;
  }
  /* The callers have not met for the window: the first admits its worker. */
  atomic_store(&fake_clock, t0 + CPUEXEC__UNSETTLED_NS + 1000000u);
  atomic_store(&caller_clock_reads, 0);
  if (cpuexec_parallel_for(callers[0].exec, 64, 1, &seen, record, 0) != 0) failed = 1;
  unsigned reads_remembering = atomic_load(&caller_clock_reads);
  a = counters_of(callers[0].exec);
  if (a.dispatches != 2 || a.occupied_inline != 1 || reads_remembering == 0) {
    printf("the window passed: dispatches %llu, regions alone %llu, clock reads %u (want 2, 1, some)\n",
           (unsigned long long)a.dispatches, (unsigned long long)a.occupied_inline, reads_remembering);
    failed = 1;
  }
  /* That region forgot the meeting: the next, alone, reads no clock for
   * it, and admits its worker too. */
  atomic_store(&caller_clock_reads, 0);
  if (cpuexec_parallel_for(callers[0].exec, 64, 1, &seen, record, 0) != 0) failed = 1;
  unsigned reads_forgotten = atomic_load(&caller_clock_reads);
  a = counters_of(callers[0].exec);
  if (a.dispatches != 3 || a.occupied_inline != 1 || reads_forgotten != 0) {
    printf("the meeting forgotten: dispatches %llu, regions alone %llu, clock reads %u (want 3, 1, 0)\n",
           (unsigned long long)a.dispatches, (unsigned long long)a.occupied_inline, reads_forgotten);
    failed = 1;
  }
  for (int i = 0; i < 2; i++) cpuexec_executor_release(callers[i].exec);
  atomic_store(&cpuexec__test_permit_clock, NULL);
  return failed;
}

static const char *self_path;

static void run_self(const char *mode) {
  fflush(stdout);
  const char *argv[] = {self_path, mode, NULL};
  int status = test_spawn(self_path, argv, NULL, NULL, NULL);
  if (status != 0) fail_msg("%s: child exited with status %d", mode, status);
}

static void pools_of_one_process_share_the_budget(void **state) {
  (void)state;
  run_self("four-pools");
}

static void callers_of_two_pools_that_met_count_as_running(void **state) {
  (void)state;
  run_self("met");
}

static void a_worker_counts_the_slots_it_takes(void **state) {
  (void)state;
  run_self("count-slots");
}

int main(int argc, char **argv) {
  caller = pthread_self();
  if (argc == 2 && (strcmp(argv[1], "count-slots") == 0 || strcmp(argv[1], "four-pools") == 0 ||
                    strcmp(argv[1], "met") == 0)) {
    atomic_store(&cpuexec__test_node_cgroup_root, TWO_CPUS);
    int rc = argv[1][0] == 'c'   ? count_slots_in_a_budget_of_two()
             : argv[1][0] == 'f' ? four_pools_in_a_budget_of_two()
                                 : two_pools_that_met();
    fflush(stdout);
    return rc;
  }
  static char self[4096];
  if (test_self_path(self, sizeof self) != 0) return 1;
  self_path = self;
  snprintf(dir, sizeof dir, "%s/cpuexec-node-wiring.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (mkdtemp(dir) == NULL) return 1;
  setenv("CPUEXEC_NODE_DIR", dir, 1);
  setenv("CPUEXEC_NODE_BUDGET", "cgroup", 1);
  unsetenv("MAKEFLAGS");
  atomic_store(&cpuexec__test_node_cgroup_root, HALF);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_full_budget_leaves_regions_to_their_caller),
      cmocka_unit_test(a_pool_out_of_the_budget_opens_its_regions),
      cmocka_unit_test(strict_region_runs_on_every_participant_over_the_budget),
      cmocka_unit_test(queued_tasks_run_with_the_budget_full),
      cmocka_unit_test(a_worker_counts_the_slots_it_takes),
      cmocka_unit_test(pools_of_one_process_share_the_budget),
      cmocka_unit_test(callers_of_two_pools_that_met_count_as_running),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) rc = 1;
  return rc;
}
#endif
