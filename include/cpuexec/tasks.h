/** @file
 * libcpuexec: task groups, independent tasks on an executor's workers.
 *
 * A task group collects tasks submitted to one executor and waits for them:
 *
 *     cpuexec_task_group *g;
 *     cpuexec_task_group_create(exec, NULL, &g);
 *     for (...) cpuexec_task_group_submit(g, ctx_i, fn);
 *     int rc = cpuexec_task_group_wait(g);    // every task has run
 *     cpuexec_task_group_destroy(g);
 *
 * Scheduling. Tasks run on the same workers, through the same scheduler, as
 * the executor's parallel regions (cpuexec/executor.h): a group with queued
 * tasks holds one of the executor's 8 region lanes, and workers take its
 * tasks when they are free, choosing among open regions and groups the one
 * with the most room. A thread in
 * cpuexec_task_group_wait() runs queued tasks itself, then waits only for
 * the tasks already running. When every lane is taken, tasks wait in the
 * queue for cpuexec_task_group_wait() (or a later submit that finds a free
 * lane), and still all run.
 *
 * Bounds. The queue holds queue_capacity tasks (default 1024): a submit that
 * finds it full runs the task at once on the submitting thread (inline,
 * never an error: its result goes to the wait like any other's).
 * max_concurrency (default: every worker) caps how many pool workers run
 * the group's tasks at once, the seed's "resource class": a group of
 * preparation tasks with a cap of 1 leaves the other workers to compute
 * regions. The waiting thread helps besides the cap.
 *
 * Tasks. fn(ctx) returns 0 or a value that stops the group: tasks not
 * started yet are skipped (dropped, not run), every started task finishes,
 * and the wait returns CPUEXEC_ECALLBACK with the first value as
 * cpuexec_error_callback_value() (cpuexec/errors.h). A task runs as
 * participant 0 of 1 (a parallel call inside it runs inline, hooks run
 * around it). A task may submit to any group, its own included: the task
 * is queued (or, queue full, run inline), so submitting never waits.
 * Waiting on the group a task belongs to, from inside it, is CPUEXEC_EBUSY.
 *
 * exec NULL or serial (one effective thread): tasks run inline at submit.
 * A foreign executor has no workers of libcpuexec: CPUEXEC_ENOTSUP at create.
 * After fork(), a group of the parent returns CPUEXEC_EFORKED from submit
 * and wait in the child.
 *
 * Thread safety: submit and help may be called from any thread at once; wait and
 * destroy by one thread at a time (while no other thread submits, for
 * destroy). The group holds a reference on its executor. */
#ifndef CPUEXEC_TASKS_H
#define CPUEXEC_TASKS_H

#include <cpuexec/common.h>
#include <cpuexec/executor.h>

/** A task: 0 on success; any other value stops the group (see above). */
typedef int (*cpuexec_task_fn)(void *ctx);

/** A task group (opaque). */
typedef struct cpuexec_task_group cpuexec_task_group;

/** {0} and cpuexec_task_group_options_init() are the same: the defaults. */
typedef struct cpuexec_task_group_options {
  int32_t max_concurrency; /**< most pool workers running its tasks at once; 0: every worker */
  int32_t queue_capacity;  /**< queued tasks at most; 0: 1024 */
  uint64_t reserved_[4];   /**< zero: room for fields of later versions */
} cpuexec_task_group_options;

CPUEXEC_BEGIN_DECLS

/** Zero every field (the defaults); NULL is ignored. */
CPUEXEC_EXPORT void cpuexec_task_group_options_init(cpuexec_task_group_options *options);

/** Creates a group on exec (NULL: tasks run inline) with options (NULL: the
 * defaults). out NULL or a negative option is CPUEXEC_EINVAL; a foreign
 * executor CPUEXEC_ENOTSUP; *out is NULL on failure. */
CPUEXEC_EXPORT int cpuexec_task_group_create(cpuexec_executor *exec, const cpuexec_task_group_options *options,
                                             cpuexec_task_group **out);

/** Queues fn(ctx), or runs it at once when the queue is full (see above).
 * group or fn NULL is CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_task_group_submit(cpuexec_task_group *group, void *ctx, cpuexec_task_fn fn);

/** Runs queued tasks on the calling thread and returns when every task
 * submitted before (and by tasks during) the wait has finished or been
 * skipped: 0, or CPUEXEC_ECALLBACK (the first failing task's value). The
 * group is then empty and reusable. */
CPUEXEC_EXPORT int cpuexec_task_group_wait(cpuexec_task_group *group);

/** Lends the calling thread to the group without waiting for it: runs
 * fn(ctx) at once on the calling thread as one of the group's tasks (fn
 * NULL: none), then the group's queued tasks until none is queued, and
 * returns while tasks that workers started may still run. For a thread
 * that would otherwise block until the group's work is done (a library's
 * caller that waits on its own barrier): its tasks run as a worker's do
 * (participant 0 of 1, hooks around each), a task's failure stops the group
 * and goes to the next wait, and tasks submitted meanwhile (by these tasks
 * too) are queued for the workers and for this thread alike. Returns 0;
 * group NULL is CPUEXEC_EINVAL; after fork(), a group of the parent is
 * CPUEXEC_EFORKED and runs nothing, fn included. It may be called from any
 * thread, from inside the group's own tasks too (it never waits). */
CPUEXEC_EXPORT int cpuexec_task_group_help(cpuexec_task_group *group, void *ctx, cpuexec_task_fn fn);

/** Waits (as cpuexec_task_group_wait(), returning its result), then frees
 * the group. NULL is ignored and returns 0. */
CPUEXEC_EXPORT int cpuexec_task_group_destroy(cpuexec_task_group *group);

CPUEXEC_END_DECLS

#endif
