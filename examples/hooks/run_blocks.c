/* Recipe: libcpuexec as a library's run_blocks hook (doc/executor-hooks.md).
 *
 * The library (a stand-in with the hook of onnx-light-cpu, seed 003's
 * (count, callback) contract as a C struct) takes an executor view
 * installed in a thread-local slot of its own and calls
 * run_blocks(context, num_blocks, task_context, task), which returns void
 * and must run task over every block exactly once. The recipe is the
 * twenty lines between the rules; main checks that every block ran exactly
 * once, on more than one thread. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <cpuexec.h>
#include <cpuexec/compat/range_executor.h>

/* ---- the library (stand-in): its hook and a kernel calling it ------------- */

typedef void (*execution_task)(void *task_context, int64_t begin_block, int64_t end_block);
typedef struct ExecutionExecutorView {
  void *context;
  int32_t effective_threads;
  void (*run_blocks)(void *context, int64_t num_blocks, void *task_context, execution_task task);
} ExecutionExecutorView;

static _Thread_local const ExecutionExecutorView *current_view; /* the library's slot; NULL: serial */

#define BLOCK 64
typedef struct scale_args {
  const float *x;
  float *y;
  int64_t n;
  atomic_int *runs; /* per block: how often it ran (the check) */
} scale_args;

static void scale_blocks(void *task_context, int64_t begin, int64_t end) {
  const scale_args *a = task_context;
  for (int64_t b = begin; b < end; b++) {
    atomic_fetch_add(&a->runs[b], 1);
    for (int64_t i = b * BLOCK; i < (b + 1) * BLOCK && i < a->n; i++) a->y[i] = 2 * a->x[i];
  }
}

static void library_scale(const float *x, float *y, int64_t n, atomic_int *runs) {
  scale_args a = {x, y, n, runs};
  int64_t blocks = (n + BLOCK - 1) / BLOCK;
  if (current_view != NULL)
    current_view->run_blocks(current_view->context, blocks, &a, scale_blocks);
  else
    scale_blocks(&a, 0, blocks);
}

/* ---- the recipe ------------------------------------------------------------ */

static atomic_int library_errors; /* the side channel: where the hook reports what it cannot return */

typedef struct blocks_call {
  void *task_context;
  execution_task task;
} blocks_call;

static int run_task(void *ctx, int64_t begin, int64_t end) {
  const blocks_call *call = ctx;
  call->task(call->task_context, begin, end);
  return 0; /* a void task cannot fail */
}

/* context is the cpuexec_executor the view was made of. */
static void cpuexec_run_blocks(void *context, int64_t num_blocks, void *task_context, execution_task task) {
  blocks_call call = {task_context, task};
  cpuexec_range_executor ex = cpuexec_range_executor_of(context);
  cpuexec_run_all_report report;
  cpuexec_range_executor_run_all(&ex, num_blocks, &call, run_task, &report); /* every block, exactly once */
  if (report.error != 0) atomic_fetch_add(&library_errors, 1); /* the blocks ran on the caller */
}

static ExecutionExecutorView view_of(cpuexec_executor *exec) {
  return (ExecutionExecutorView){exec, cpuexec_executor_effective_threads(exec), cpuexec_run_blocks};
}

/* ---- the check ------------------------------------------------------------- */

#define N 100000
#define BLOCKS ((N + BLOCK - 1) / BLOCK)
static float x[N], y[N];
static atomic_int runs[BLOCKS];

int main(void) {
  /* Every participant takes part in every region, so "more than one thread
   * ran" is certain on a busy machine too; the recipe does not need it. */
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = 3;
  policy.participation = CPUEXEC_PARTICIPATION_EVERY_PARTICIPANT;
  cpuexec_session *session;
  if (cpuexec_session_create(&policy, &session) != 0) {
    fprintf(stderr, "run_blocks: %s\n", cpuexec_error_message());
    return 1;
  }
  cpuexec_executor *exec = cpuexec_session_executor(session);
  cpuexec_executor_counters_enable(exec);
  for (int i = 0; i < N; i++) x[i] = (float)i;

  ExecutionExecutorView view = view_of(exec);
  current_view = &view; /* the library's own scope */
  library_scale(x, y, N, runs);
  current_view = NULL;

  cpuexec_counters c;
  cpuexec_executor_counters_get(exec, &c);
  cpuexec_session_destroy(session);
  int wrong = 0;
  for (int b = 0; b < BLOCKS; b++) wrong += atomic_load(&runs[b]) != 1;
  for (int i = 0; i < N; i++) wrong += y[i] != 2 * x[i];
  printf("run_blocks: %d blocks, %d not run exactly once or wrong; %llu parallel region(s); %d library errors\n",
         BLOCKS, wrong, (unsigned long long)c.parallel_regions, atomic_load(&library_errors));
  return wrong == 0 && c.parallel_regions == 1 && atomic_load(&library_errors) == 0 ? 0 : 1;
}
