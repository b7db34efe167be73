/* A libcpuexec executor as pthreadpool's struct pthreadpool_executor
 * (cpuexec/compat/pthreadpool_executor.h): each scheduled task is one task
 * of a task group on the executor, so it runs on the executor's workers
 * through the same scheduler as its regions. The group's queue is sized so
 * that a submit never finds it full in practice (a full queue would run the
 * task on the scheduling thread, which pthreadpool's contract forbids): a
 * parallelize call schedules at most num_threads tasks. */
#include <stdlib.h>

#include <cpuexec/compat/pthreadpool_executor.h>
#include <cpuexec/session.h>
#include <cpuexec/tasks.h>

#include "adapter_private.h"

#define QUEUE_CAPACITY 65536

struct cpuexec_pthreadpool_context {
  cpuexec_task_group *group; /* holds a reference on the executor */
  int workers;
};

typedef struct scheduled {
  void (*task)(void *);
  void *context;
} scheduled;

static int run_scheduled(void *p) {
  scheduled s = *(scheduled *)p;
  free(p);
  s.task(s.context);
  return 0;
}

CPUEXEC_EXPORT int cpuexec_pthreadpool_context_create(cpuexec_executor *exec, cpuexec_pthreadpool_context **out) {
  if (out == NULL) return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass where to store the context");
  *out = NULL;
  if (exec == NULL) {
    int rc = cpuexec_kernel_executor("pthreadpool", CPUEXEC_EXECUTOR_SUPPORTED, &exec);
    if (rc != 0) return rc;
  }
  cpuexec_pthreadpool_context *ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL) return cpuexec__fail(CPUEXEC_ENOMEM, "pthreadpool executor context: out of memory");
  cpuexec_task_group_options o;
  cpuexec_task_group_options_init(&o);
  o.queue_capacity = QUEUE_CAPACITY;
  int rc = cpuexec_task_group_create(exec, &o, &ctx->group);
  if (rc != 0) {
    free(ctx);
    return rc; /* the message names the executor (foreign: no workers) */
  }
  int32_t threads = cpuexec_executor_effective_threads(exec);
  ctx->workers = threads > 1 ? (int)threads - 1 : 0;
  *out = ctx;
  return 0;
}

CPUEXEC_EXPORT void cpuexec_pthreadpool_context_destroy(cpuexec_pthreadpool_context *ctx) {
  if (ctx == NULL) return;
  (void)cpuexec_task_group_destroy(ctx->group);
  free(ctx);
}

CPUEXEC_EXPORT int cpuexec_pthreadpool_num_threads(void *executor_context) {
  const cpuexec_pthreadpool_context *ctx = executor_context;
  return ctx != NULL ? ctx->workers : 0;
}

CPUEXEC_EXPORT void cpuexec_pthreadpool_schedule(void *executor_context, void *context, void (*task)(void *context)) {
  cpuexec_pthreadpool_context *ctx = executor_context;
  if (ctx == NULL || task == NULL) return;
  scheduled *s = malloc(sizeof *s);
  if (s == NULL) {
    task(context);
    return;
  }
  s->task = task;
  s->context = context;
  if (cpuexec_task_group_submit(ctx->group, s, run_scheduled) != 0) run_scheduled(s);
}
