/* Recipe: libcpuexec as a library's parallel_for(n, fn) hook
 * (doc/executor-hooks.md).
 *
 * The library (a stand-in) lets the application replace its loop
 * scheduler with a void hook called for n independent indices, the shape
 * of FFTW's threads callback and OpenCV's parallel-for backend (both run
 * on libcpuexec in tests/test_fftw.c and tests/test_opencv.cc). The recipe
 * hands the loop to the executor installed on the calling thread at each
 * call, so the library follows whatever session or scope its caller is in
 * and runs serially outside one. main checks every index ran exactly once,
 * inside a session run and outside any. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <cpuexec.h>
#include <cpuexec/compat/range_executor.h>

/* ---- the library (stand-in): its hook and a kernel calling it ------------- */

typedef void (*library_body)(void *arg, int64_t i);
typedef void (*library_parallel_for)(void *user, int64_t n, library_body body, void *arg);

static library_parallel_for hook; /* NULL: the library's own serial loop */
static void *hook_user;

static void library_set_parallel_for(library_parallel_for f, void *user) {
  hook = f;
  hook_user = user;
}

#define ROWS 5000
static atomic_int row_runs[ROWS];
static double row_sums[ROWS];

static void sum_row(void *arg, int64_t row) {
  const double *matrix = arg;
  double s = 0;
  for (int j = 0; j < 64; j++) s += matrix[row * 64 + j];
  row_sums[row] = s;
  atomic_fetch_add(&row_runs[row], 1);
}

static void library_row_sums(const double *matrix) {
  if (hook != NULL)
    hook(hook_user, ROWS, sum_row, (void *)matrix);
  else
    for (int64_t r = 0; r < ROWS; r++) sum_row((void *)matrix, r);
}

/* ---- the recipe ------------------------------------------------------------ */

typedef struct body_call {
  library_body body;
  void *arg;
} body_call;

static int run_body(void *ctx, int64_t begin, int64_t end) {
  const body_call *call = ctx;
  for (int64_t i = begin; i < end; i++) call->body(call->arg, i);
  return 0;
}

/* user: where the hook counts the errors it cannot return (the side channel). */
static void cpuexec_parallel_for_hook(void *user, int64_t n, library_body body, void *arg) {
  body_call call = {body, arg};
  cpuexec_range_executor installed = cpuexec_range_executor_installed(); /* looked up at each call */
  cpuexec_run_all_report report;
  cpuexec_range_executor_run_all(&installed, n, &call, run_body, &report); /* every index, exactly once */
  if (report.error != 0) atomic_fetch_add((atomic_int *)user, 1);
}

/* ---- the check ------------------------------------------------------------- */

static double matrix[ROWS * 64];

static int rows_once(void) {
  int wrong = 0;
  for (int r = 0; r < ROWS; r++) wrong += atomic_exchange(&row_runs[r], 0) != 1 || row_sums[r] != 64.0 * r;
  return wrong;
}

static int in_session(void *ctx) {
  (void)ctx;
  library_row_sums(matrix);
  return 0;
}

int main(void) {
  for (int r = 0; r < ROWS; r++)
    for (int j = 0; j < 64; j++) matrix[r * 64 + j] = r;
  static atomic_int errors;
  library_set_parallel_for(cpuexec_parallel_for_hook, &errors);

  cpuexec_policy policy; /* every participant in every region: "went parallel" is certain */
  cpuexec_policy_init(&policy);
  policy.num_threads = 2;
  policy.participation = CPUEXEC_PARTICIPATION_EVERY_PARTICIPANT;
  cpuexec_session *session;
  if (cpuexec_session_create(&policy, &session) != 0) {
    fprintf(stderr, "parallel_for: %s\n", cpuexec_error_message());
    return 1;
  }
  cpuexec_executor_counters_enable(cpuexec_session_executor(session));
  int rc = cpuexec_session_run(session, NULL, in_session);
  int wrong_inside = rows_once();
  library_row_sums(matrix); /* outside any session: the caller runs every row */
  int wrong_outside = rows_once();
  cpuexec_counters c;
  cpuexec_executor_counters_get(cpuexec_session_executor(session), &c);
  cpuexec_session_destroy(session);
  printf("parallel_for: %d rows; wrong %d inside a session (%llu parallel region(s)), %d outside; %d library "
         "errors\n",
         ROWS, wrong_inside, (unsigned long long)c.parallel_regions, wrong_outside, atomic_load(&errors));
  return rc == 0 && wrong_inside == 0 && wrong_outside == 0 && c.parallel_regions == 1 && atomic_load(&errors) == 0
             ? 0
             : 1;
}
