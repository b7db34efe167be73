/* Task groups (include/cpuexec/tasks.h) on the executor's lanes
 * (region_lanes.h): a bounded queue under the group's lock, posted to a
 * lane while it has work, served by workers and by the waiting thread.
 *
 * The group's lock guards the ring, its count and `lane`; it is never held
 * while a task runs, nor while the waiter drains the lane (the workers
 * inside take it to pop). `error` is the first failing task's value
 * (compare-exchange), taken back by the wait. */
#include <cpuexec/tasks.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "executor_internal.h"
#include "os/os.h"
#include "participant.h"
#include "region_lanes.h"
#include "tasks_internal.h"

#define CPUEXEC__TASK_QUEUE_DEFAULT 1024

typedef struct task {
  cpuexec_task_fn fn;
  void *ctx;
} task;

struct cpuexec_task_group {
  cpuexec_executor *exec; /* a reference; NULL: tasks run inline */
  bool inline_only;       /* serial executor: tasks run at submit */
  uint32_t cap;           /* workers at once */
  uint32_t capacity;      /* ring entries */
  pthread_mutex_t lock;
  task *ring;
  uint32_t head, count;
  uint32_t lane; /* the lane it holds, 0: none */
  _Atomic int error;
  _Atomic int32_t submitter_cpu; /* cpuexec__task_group_submitter_cpu() */
};

/* The groups whose tasks run on this thread, innermost first (a task
 * waiting on its own group would wait for itself). */
typedef struct running_task {
  const struct cpuexec_task_group *group;
  struct running_task *outer;
} running_task;
static __thread running_task *running_tasks;

/* Whether the calling thread is inside one of g's tasks. */
static bool runs_a_task_of(const struct cpuexec_task_group *g) {
  for (const running_task *r = running_tasks; r; r = r->outer)
    if (r->group == g) return true;
  return false;
}

typedef struct task_run {
  task t;
  int rc;
} task_run;

static void run_one_task(void *arg) {
  task_run *run = arg;
  run->rc = run->t.fn(run->t.ctx);
}

static void run_task(struct cpuexec_task_group *g, task t) {
  if (atomic_load_explicit(&g->error, memory_order_relaxed) != 0) return; /* the group failed: skipped */
  running_task frame = {g, running_tasks};
  running_tasks = &frame;
  cpuexec__participant p;
  cpuexec__participant_enter(&p, g->exec, 0, 1);
  cpuexec__participant_before_callback();
  task_run run = {t, 0};
  cpuexec__participant_share(run_one_task, &run); /* inside the guard's wrapper, as a callback */
  int rc = run.rc;
  cpuexec__participant_leave(&p);
  running_tasks = frame.outer;
  if (rc != 0) {
    int expected = 0;
    atomic_compare_exchange_strong_explicit(&g->error, &expected, rc, memory_order_relaxed, memory_order_relaxed);
  }
}

static bool pop(struct cpuexec_task_group *g, task *t) {
  pthread_mutex_lock(&g->lock);
  if (g->count == 0) {
    pthread_mutex_unlock(&g->lock);
    return false;
  }
  *t = g->ring[g->head];
  g->head = g->head + 1 == g->capacity ? 0 : g->head + 1;
  g->count--;
  if (g->lane) cpuexec__lane_set_queued(g->exec, g->lane, g->count);
  pthread_mutex_unlock(&g->lock);
  return true;
}

void cpuexec__tasks_serve(struct cpuexec_task_group *g) {
  task t;
  while (pop(g, &t)) run_task(g, t);
}

CPUEXEC_EXPORT void cpuexec_task_group_options_init(cpuexec_task_group_options *options) {
  if (options) memset(options, 0, sizeof *options);
}

int cpuexec__task_group_make(cpuexec_executor *exec, const cpuexec_task_group_options *options,
                             cpuexec_task_group **out) {
  if (!out) return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass where to store the task group");
  *out = NULL;
  cpuexec_task_group_options defaults;
  cpuexec_task_group_options_init(&defaults);
  if (!options) options = &defaults;
  if (options->max_concurrency < 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "max_concurrency: %d is negative; use 0 for every worker",
                         (int)options->max_concurrency);
  if (options->queue_capacity < 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "queue_capacity: %d is negative; use 0 for the default (%d)",
                         (int)options->queue_capacity, CPUEXEC__TASK_QUEUE_DEFAULT);
  if (exec && exec->foreign)
    return cpuexec__fail(CPUEXEC_ENOTSUP, "executor %llu: a foreign executor has no libcpuexec workers to run "
                                          "tasks; submit them to the application's pool",
                         (unsigned long long)exec->id);
  if (exec && cpuexec__executor_inherited(exec))
    return cpuexec__fail(CPUEXEC_EFORKED, "executor %llu: created by the parent process before fork()",
                         (unsigned long long)exec->id);
  struct cpuexec_task_group *g = calloc(1, sizeof *g);
  uint32_t capacity = options->queue_capacity ? (uint32_t)options->queue_capacity : CPUEXEC__TASK_QUEUE_DEFAULT;
  if (g) g->ring = malloc(sizeof(task) * capacity);
  if (!g || !g->ring) {
    if (g) free(g->ring);
    free(g);
    return cpuexec__fail(CPUEXEC_ENOMEM, "task group: no memory for a queue of %u tasks", capacity);
  }
  g->exec = exec; /* the caller's reference (sessions/task_group.c) keeps it */
  g->inline_only = !exec || exec->worker_count == 0 || !exec->lanes;
  uint32_t workers = exec ? exec->worker_count : 0;
  g->cap = options->max_concurrency == 0 || (uint32_t)options->max_concurrency > workers
               ? workers
               : (uint32_t)options->max_concurrency;
  g->capacity = capacity;
  pthread_mutex_init(&g->lock, NULL);
  atomic_init(&g->error, 0);
  atomic_init(&g->submitter_cpu, -1);
  *out = g;
  return 0;
}

int32_t cpuexec__task_group_submitter_cpu(const struct cpuexec_task_group *g) {
  return atomic_load_explicit(&g->submitter_cpu, memory_order_relaxed);
}

/* Where a thread submits from, unless it runs one of the group's tasks
 * (a worker's own processor says nothing of where the submitter works);
 * written only when it changes, so the line stays shared. */
static void note_submitter_cpu(struct cpuexec_task_group *g) {
  if (runs_a_task_of(g)) return;
  int32_t cpu = cpuexec__os_current_cpu();
  if (atomic_load_explicit(&g->submitter_cpu, memory_order_relaxed) != cpu)
    atomic_store_explicit(&g->submitter_cpu, cpu, memory_order_relaxed);
}

static int check_group(const struct cpuexec_task_group *g) {
  if (!g) return cpuexec__fail(CPUEXEC_EINVAL, "group: NULL; create one with cpuexec_task_group_create()");
  if (g->exec && cpuexec__executor_inherited(g->exec))
    return cpuexec__fail(CPUEXEC_EFORKED, "task group: its executor %llu was created by the parent process before "
                                          "fork(); create a new one in the child",
                         (unsigned long long)g->exec->id);
  return 0;
}

CPUEXEC_EXPORT int cpuexec_task_group_submit(cpuexec_task_group *g, void *ctx, cpuexec_task_fn fn) {
  int rc = check_group(g);
  if (rc != 0) return rc;
  if (!fn) return cpuexec__fail(CPUEXEC_EINVAL, "fn: NULL; a task function is required");
  task t = {fn, ctx};
  if (g->inline_only) {
    run_task(g, t);
    return 0;
  }
  note_submitter_cpu(g);
  pthread_mutex_lock(&g->lock);
  if (g->count == g->capacity) { /* full: the submitter runs it, so submitting never waits */
    pthread_mutex_unlock(&g->lock);
    run_task(g, t);
    return 0;
  }
  uint32_t at = g->head + g->count;
  g->ring[at >= g->capacity ? at - g->capacity : at] = t;
  g->count++;
  if (!g->lane) g->lane = cpuexec__lane_post(g->exec, g, g->cap);
  uint32_t lane = g->lane, queued = g->count;
  if (lane) cpuexec__lane_set_queued(g->exec, lane, queued);
  pthread_mutex_unlock(&g->lock);
  /* After the unlock the lane may have been given back and taken by a
   * region: the nudge then wakes workers for nothing, at most. */
  if (lane && cpuexec__lane_nudge(g->exec, lane, queued) > 0 && cpuexec__permit_submitter_yields(&g->exec->permit))
    cpuexec__os_yield();
  return 0;
}

CPUEXEC_EXPORT int cpuexec_task_group_help(cpuexec_task_group *g, void *ctx, cpuexec_task_fn fn) {
  int rc = check_group(g);
  if (rc != 0) return rc;
  if (fn) run_task(g, (task){fn, ctx});
  cpuexec__tasks_serve(g); /* the queued ones, as a worker inside the lane would; never waits */
  return 0;
}

CPUEXEC_EXPORT int cpuexec_task_group_wait(cpuexec_task_group *g) {
  int rc = check_group(g);
  if (rc != 0) return rc;
  if (runs_a_task_of(g))
    return cpuexec__fail(CPUEXEC_EBUSY, "task group: waited on from inside one of its own tasks, which would "
                                        "wait for itself; wait from outside the group");
  for (;;) {
    task t;
    while (pop(g, &t)) run_task(g, t);
    pthread_mutex_lock(&g->lock);
    uint32_t drained = g->lane;
    pthread_mutex_unlock(&g->lock);
    if (drained) cpuexec__lane_drain(g->exec, drained);
    pthread_mutex_lock(&g->lock);
    if (g->count == 0 && g->lane == drained) {
      if (drained) cpuexec__lane_unpost(g->exec, drained);
      g->lane = 0;
      pthread_mutex_unlock(&g->lock);
      break;
    }
    /* Tasks came meanwhile (from tasks, or other threads): again. */
    uint32_t lane = g->lane, queued = g->count;
    if (lane == drained && lane) cpuexec__lane_reopen(g->exec, lane);
    pthread_mutex_unlock(&g->lock);
    if (lane == drained && lane) cpuexec__lane_nudge(g->exec, lane, queued);
  }
  rc = atomic_exchange_explicit(&g->error, 0, memory_order_relaxed);
  return rc != 0 ? cpuexec__callback_rc(rc) : 0;
}

int cpuexec__task_group_free(cpuexec_task_group *g, cpuexec_executor **exec) {
  *exec = NULL;
  if (!g) return 0;
  int rc = cpuexec_task_group_wait(g);
  if (rc == CPUEXEC_EBUSY) return rc;
  if (!g->exec || !cpuexec__executor_inherited(g->exec)) pthread_mutex_destroy(&g->lock);
  *exec = g->exec;
  free(g->ring);
  free(g);
  return rc;
}
