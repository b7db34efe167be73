/* Internal: what the lanes (region_lanes.c) call of a task group
 * (tasks.c). */
#ifndef CPUEXEC_SRC_TASKS_INTERNAL_H
#define CPUEXEC_SRC_TASKS_INTERNAL_H

struct cpuexec_task_group;

/* A worker inside the group's lane: runs queued tasks until the queue is
 * empty (or the group failed), as participant 0 of 1 each. */
void cpuexec__tasks_serve(struct cpuexec_task_group *group);

#endif
