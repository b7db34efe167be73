/* A small kernel library written against the compat adapters, run outside
 * any session (serial) and inside sessions of 2 and 3 threads (it follows
 * each session's thread count without knowing about sessions).
 *
 * Build against an installed libcpuexec:
 *   cc range_kernels.c $(pkg-config --cflags --libs cpuexec)
 * (installed, the headers are <cpuexec/compat/ranges.h> and
 * <cpuexec/compat/range_executor.h>).
 * Exits 0 when everything it shows holds, so `make check` runs it. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <cpuexec.h>

#include <cpuexec/compat/range_executor.h>
#include <cpuexec/compat/ranges.h>

enum { N = 1 << 16, ROWS = 64, COLS = 256 };

/* ---- the kernel library ---- */

typedef struct relu_args {
  const float *x;
  float *y;
  atomic_uint participants; /* bit per participant that ran a block */
} relu_args;

static int relu_range(void *ctx, int64_t begin, int64_t end) {
  relu_args *a = ctx;
  for (int64_t i = begin; i < end; i++)
    a->y[i] = a->x[i] > 0 ? a->x[i] : 0;
  atomic_fetch_or(&a->participants, 1u << cpuexec_participant_index());
  return 0;
}

/* Elementwise: opts in to parallelism, blocks of at least 4096, SIMD-sized
 * boundaries. A failure could leave y partly written. */
static int relu(const float *x, float *y, int64_t n, unsigned *participants) {
  cpuexec_range_schedule s;
  cpuexec_range_schedule_init(&s);
  s.max_participants = 0;
  s.min_parallel_size = 8192;
  s.min_block_size = 4096;
  s.block_multiple = 16;
  relu_args a = {x, y, 0};
  int rc = cpuexec_ranges_execute(n, &s, &a, relu_range);
  *participants = atomic_load(&a.participants);
  return rc;
}

typedef struct sums_args {
  const float *m;
  float *stage;
  atomic_uint participants;
} sums_args;

static int row_sums_range(void *ctx, int64_t begin, int64_t end) {
  sums_args *a = ctx;
  for (int64_t r = begin; r < end; r++) {
    float sum = 0;
    for (int64_t k = 0; k < COLS; k++)
      sum += a->m[r * COLS + k];
    a->stage[r] = sum;
  }
  atomic_fetch_or(&a->participants, 1u << cpuexec_participant_index());
  return 0;
}

/* A reduction on the range executor it is handed: staged, so a failure
 * leaves dest unchanged. */
static int row_sums(const cpuexec_range_executor *ex, const float *m, float *dest, unsigned *participants) {
  static float stage[ROWS];
  sums_args a = {m, stage, 0};
  int rc = cpuexec_range_executor_run(ex, ROWS, &a, row_sums_range);
  if (rc == 0)
    memcpy(dest, stage, sizeof stage);
  *participants = atomic_load(&a.participants);
  return rc;
}

/* ---- the application ---- */

static float x[N], y[N], m[ROWS * COLS], sums[ROWS];

typedef struct run_result {
  unsigned relu_participants;
  unsigned sums_participants;
  int rc;
} run_result;

static int run_kernels(void *arg) {
  run_result *r = arg;
  cpuexec_range_executor ex = cpuexec_range_executor_installed();
  r->rc = relu(x, y, N, &r->relu_participants);
  if (r->rc == 0)
    r->rc = row_sums(&ex, m, sums, &r->sums_participants);
  return r->rc;
}

static int check_outputs(void) {
  for (int i = 0; i < N; i++)
    if (y[i] != (x[i] > 0 ? x[i] : 0))
      return 0;
  for (int r = 0; r < ROWS; r++)
    if (sums[r] != (float)COLS * (float)(r % 3))
      return 0;
  return 1;
}

static int fail(const char *what) {
  fprintf(stderr, "range_kernels: %s (%s)\n", what, cpuexec_error_message());
  return 1;
}

int main(void) {
  for (int i = 0; i < N; i++)
    x[i] = (float)(i % 7) - 3;
  for (int i = 0; i < ROWS * COLS; i++)
    m[i] = (float)((i / COLS) % 3);

  run_result outside;
  if (run_kernels(&outside) != 0 || !check_outputs())
    return fail("outside a session");
  printf("outside a session: relu participants 0x%x, row sums participants 0x%x\n", outside.relu_participants,
         outside.sums_participants);
  if (outside.relu_participants != 1 || outside.sums_participants != 1)
    return fail("outside a session the kernels must run serially on the caller");

  const char *policies[] = {"num_threads=2,affinity_policy=none", "num_threads=3,affinity_policy=none"};
  const unsigned expected[] = {0x3, 0x7};
  for (int p = 0; p < 2; p++) {
    cpuexec_policy policy;
    cpuexec_policy_init(&policy);
    if (cpuexec_policy_parse(policies[p], &policy) != 0)
      return fail("parse");
    cpuexec_session *session = NULL;
    if (cpuexec_session_create(&policy, &session) != 0)
      return fail("session");
    memset(y, 0, sizeof y);
    memset(sums, 0, sizeof sums);
    run_result inside;
    int rc = cpuexec_session_run(session, &inside, run_kernels);
    cpuexec_session_destroy(session);
    if (rc != 0 || !check_outputs())
      return fail("inside a session");
    printf("session %s: relu participants 0x%x, row sums participants 0x%x\n", policies[p],
           inside.relu_participants, inside.sums_participants);
    /* At most the session's participants, the caller always among them.
     * A worker that has not woken when the others run out of work is not
     * waited for: its range runs on them (executor.h), so short kernels
     * may show fewer bits. */
    if ((inside.relu_participants & ~expected[p]) != 0 || (inside.sums_participants & ~expected[p]) != 0 ||
        !(inside.relu_participants & 1u) || !(inside.sums_participants & 1u))
      return fail("the kernels must run on the session's participants only");
  }
  return 0;
}
