/* Task groups' handles: a group holds a reference on its executor from
 * create to destroy (the handle rules of cpuexec/executor.h), taken and
 * released here, where references live; the scheduler is the executor
 * module's (executor/tasks.c). */
#include <cpuexec/executor.h>
#include <cpuexec/tasks.h>

#include "executor/tasks_internal.h"

CPUEXEC_EXPORT int cpuexec_task_group_create(cpuexec_executor *exec, const cpuexec_task_group_options *options,
                                             cpuexec_task_group **out) {
  if (exec) {
    if (out) *out = NULL;
    int rc = cpuexec_executor_retain(exec);
    if (rc != 0) return rc;
  }
  int rc = cpuexec__task_group_make(exec, options, out);
  if (rc != 0 && exec) cpuexec_executor_release(exec);
  return rc;
}

CPUEXEC_EXPORT int cpuexec_task_group_destroy(cpuexec_task_group *group) {
  cpuexec_executor *exec;
  int rc = cpuexec__task_group_free(group, &exec);
  if (exec) cpuexec_executor_release(exec);
  return rc;
}
