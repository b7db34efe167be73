/* Internal: what the lanes (region_lanes.c) call of a task group
 * (tasks.c). */
#ifndef CPUEXEC_SRC_TASKS_INTERNAL_H
#define CPUEXEC_SRC_TASKS_INTERNAL_H

#include <stdint.h>

struct cpuexec_task_group;

/* A worker inside the group's lane: runs queued tasks until the queue is
 * empty (or the group failed), as participant 0 of 1 each. */
void cpuexec__tasks_serve(struct cpuexec_task_group *group);

/* The processor the group's tasks were last submitted from, by a thread
 * not running one of them (-1: none yet, or not known): the beside-caller
 * rule's (permit.h) for a worker about to serve the group. */
int32_t cpuexec__task_group_submitter_cpu(const struct cpuexec_task_group *group);

/* The group without the handle's reference, which the public create and
 * destroy (sessions/task_group.c) take and release: references belong to
 * the sessions module, above this one. free waits for the group as
 * cpuexec_task_group_destroy does and hands back its executor (NULL for an
 * inline group) to release; it frees nothing on CPUEXEC_EBUSY. */
#include <cpuexec/tasks.h>
int cpuexec__task_group_make(cpuexec_executor *exec, const cpuexec_task_group_options *options,
                             cpuexec_task_group **out);
int cpuexec__task_group_free(cpuexec_task_group *group, cpuexec_executor **exec);

#endif
