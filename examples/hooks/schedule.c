/* Recipe: libcpuexec as a library's thread-pool interface, schedule(task)
 * (doc/executor-hooks.md).
 *
 * The library (a stand-in) asks the application for a pool: how many
 * threads it lends, and schedule(pool, fn, arg), which must run fn(arg)
 * once, later, on some thread. To run a loop it schedules that many
 * helper tasks, works on the loop itself, and waits for its helpers. This
 * is the shape of pthreadpool's executor and Eigen's ThreadPoolInterface,
 * which libcpuexec implements already (include/cpuexec/compat/
 * pthreadpool_executor.h, include/cpuexec/eigen.hpp; tests/
 * test_pthreadpool_executor.c, tests/test_eigen.cc); the recipe is the same
 * thing for any other signature: a task group, and a task that cannot be
 * queued runs at once on the scheduling thread, so none is lost. main
 * checks every block ran exactly once and every helper on a worker. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cpuexec.h>

/* ---- the library (stand-in): its pool interface and a loop on it ---------- */

typedef struct library_pool {
  void *pool;
  int (*num_threads)(void *pool); /* threads the pool lends besides the caller */
  void (*schedule)(void *pool, void (*fn)(void *arg), void *arg);
} library_pool;

#define BLOCKS 10000
typedef struct loop {
  atomic_long next;     /* the next block to take */
  atomic_int helpers_done;
  atomic_int runs[BLOCKS];
  atomic_int helpers_on_caller; /* helpers that ran on the thread that scheduled them */
  pthread_t caller;
} loop;

static void take_blocks(loop *l) {
  for (long b; (b = atomic_fetch_add(&l->next, 1)) < BLOCKS;) atomic_fetch_add(&l->runs[b], 1);
}

static void helper(void *arg) {
  loop *l = arg;
  if (pthread_equal(pthread_self(), l->caller)) atomic_fetch_add(&l->helpers_on_caller, 1);
  take_blocks(l);
  atomic_fetch_add(&l->helpers_done, 1);
}

static void library_loop(const library_pool *p, loop *l) {
  int helpers = p->num_threads(p->pool);
  l->caller = pthread_self();
  for (int h = 0; h < helpers; h++) p->schedule(p->pool, helper, l);
  take_blocks(l);
  while (atomic_load(&l->helpers_done) < helpers) sched_yield(); /* the library waits for its helpers */
}

/* ---- the recipe ------------------------------------------------------------ */

typedef struct cpuexec_pool {
  cpuexec_task_group *group; /* on the executor the pool lends */
  int helpers;
} cpuexec_pool;

typedef struct scheduled {
  void (*fn)(void *);
  void *arg;
} scheduled;

static int run_scheduled(void *p) {
  scheduled s = *(scheduled *)p;
  free(p);
  s.fn(s.arg);
  return 0;
}

static int cpuexec_pool_threads(void *pool) { return ((cpuexec_pool *)pool)->helpers; }

static void cpuexec_pool_schedule(void *pool, void (*fn)(void *), void *arg) {
  scheduled *s = malloc(sizeof *s);
  if (s == NULL) {
    fn(arg); /* no memory for the task: run it here rather than lose it */
    return;
  }
  *s = (scheduled){fn, arg};
  if (cpuexec_task_group_submit(((cpuexec_pool *)pool)->group, s, run_scheduled) != 0)
    run_scheduled(s); /* refused (a group inherited across fork): run it here */
}

static int cpuexec_pool_init(cpuexec_pool *pool, cpuexec_executor *exec) {
  pool->helpers = cpuexec_executor_effective_threads(exec) - 1; /* its workers: the caller works too */
  return cpuexec_task_group_create(exec, NULL, &pool->group);
}

/* ---- the check ------------------------------------------------------------- */

int main(void) {
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = 3;
  cpuexec_session *session;
  cpuexec_pool pool;
  if (cpuexec_session_create(&policy, &session) != 0 ||
      cpuexec_pool_init(&pool, cpuexec_session_executor(session)) != 0) {
    fprintf(stderr, "schedule: %s\n", cpuexec_error_message());
    return 1;
  }
  library_pool view = {&pool, cpuexec_pool_threads, cpuexec_pool_schedule};
  static loop l;
  library_loop(&view, &l);
  cpuexec_task_group_destroy(pool.group); /* waits for every task: here, all have finished */
  cpuexec_session_destroy(session);
  int wrong = 0;
  for (int b = 0; b < BLOCKS; b++) wrong += atomic_load(&l.runs[b]) != 1;
  printf("schedule: %d blocks, %d not run exactly once; %d helpers, %d of them on the scheduling thread\n", BLOCKS,
         wrong, pool.helpers, atomic_load(&l.helpers_on_caller));
  return wrong == 0 && pool.helpers == 2 && atomic_load(&l.helpers_on_caller) == 0 ? 0 : 1;
}
