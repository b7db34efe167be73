/* The runtime guards with the real BLAS builds, each linked by its path in
 * Debian's per-build directory (mk/guards.am), never through the system's
 * BLAS alternative. Built once per build:
 *   GUARD_OPENBLAS_PTHREAD  OpenBLAS's pthreads build   (process-wide count)
 *   GUARD_BLIS_PTHREAD      BLIS 0.9's pthreads build  (process-wide runtime)
 *   GUARD_BLIS_OPENMP       BLIS 0.9's OpenMP build    (through the OpenMP guard)
 *   GUARD_OPENBLAS_OPENMP   OpenBLAS's OpenMP build    (through the OpenMP guard, on libgomp)
 * each asked for 2 threads (OPENBLAS_NUM_THREADS=2, BLIS_NUM_THREADS=2; the
 * program sets them and runs itself again before the library starts).
 *
 * What must hold, in a 2-thread session whose two ranges each call
 * cblas_dgemm (256x256, 12 times):
 *   - no CPU time on any thread but the caller and the pool's workers while
 *     the region runs: every other listed thread's run time is unchanged,
 *     and the process's CPU time (getrusage, which counts the threads that
 *     BLIS starts and joins inside a call) exceeds the allowed threads' by
 *     no more than the reading itself costs;
 *   - the results equal a reference exactly (small integers: every partial
 *     sum is exact in double, whatever the order of the sums);
 *   - the same calls at top level still use the library's threads (the
 *     measure sees them: it can fail);
 *   - for the process-wide builds, a top-level call on another thread runs
 *     on one thread exactly while a region is inside, and on the library's
 *     threads as soon as cpuexec_parallel_for returned; a count set
 *     meanwhile is the one kept.
 * Idle library threads would muddle CPU time with spinning: the program
 * asks them to sleep at once (OPENBLAS_THREAD_TIMEOUT=4, OMP_WAIT_POLICY=
 * passive), so only work shows. Latches, never sleeps. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include <cpuexec.h>

#include "support/test_util.h"
#include "support/guard_cpu.h"
#include "support/stage_latch.h"

/* CBLAS, as every CBLAS declares it (no header needed: the builds ship
 * theirs in different places). */
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111 };
void cblas_dgemm(int order, int transa, int transb, int m, int n, int k, double alpha, const double *a, int lda,
                 const double *b, int ldb, double beta, double *c, int ldc);

#if defined(GUARD_OPENBLAS_PTHREAD)
#define BUILD_NAME "OpenBLAS"
#define BUILD_FAMILY CPUEXEC_RUNTIME_OPENBLAS
#define BUILD_GUARD CPUEXEC_GUARD_PROCESS_WIDE
#define BUILD_PROCESS_WIDE 1
#define BUILD_THREADING "pthreads"
#define BUILD_DIR "/openblas-pthread/"
int openblas_get_num_threads(void);
void openblas_set_num_threads(int);
static int library_threads(void) { return openblas_get_num_threads(); }
#elif defined(GUARD_OPENBLAS_OPENMP)
#define BUILD_NAME "OpenBLAS"
#define BUILD_FAMILY CPUEXEC_RUNTIME_OPENBLAS
#define BUILD_GUARD CPUEXEC_GUARD_THROUGH_OPENMP
#define BUILD_PROCESS_WIDE 0
#define BUILD_THREADING "openmp"
#define BUILD_DIR "/openblas-openmp/"
int openblas_get_num_threads(void);
static int library_threads(void) { return openblas_get_num_threads(); }
#elif defined(GUARD_BLIS_PTHREAD) || defined(GUARD_BLIS_OPENMP)
#define BUILD_NAME "BLIS"
#define BUILD_FAMILY CPUEXEC_RUNTIME_BLIS
int64_t bli_thread_get_num_threads(void);
int64_t bli_thread_get_jc_nt(void), bli_thread_get_pc_nt(void), bli_thread_get_ic_nt(void), bli_thread_get_jr_nt(void),
    bli_thread_get_ir_nt(void);
/* The threads a BLIS call would use: set ways take precedence over the count. */
static int library_threads(void) {
  int64_t ways[5] = {bli_thread_get_jc_nt(), bli_thread_get_pc_nt(), bli_thread_get_ic_nt(), bli_thread_get_jr_nt(),
                     bli_thread_get_ir_nt()};
  int64_t product = 1;
  bool any = false;
  for (int i = 0; i < 5; i++)
    if (ways[i] > 0)
      product *= ways[i], any = true;
  return (int)(any ? product : bli_thread_get_num_threads());
}
#if defined(GUARD_BLIS_PTHREAD)
#define BUILD_GUARD CPUEXEC_GUARD_PROCESS_WIDE
#define BUILD_PROCESS_WIDE 1
#define BUILD_THREADING "pthreads"
#define BUILD_DIR "/blis-pthread/"
#else
#define BUILD_GUARD CPUEXEC_GUARD_THROUGH_OPENMP
#define BUILD_PROCESS_WIDE 0
#define BUILD_THREADING "openmp"
#define BUILD_DIR "/blis-openmp/"
#endif
#else
#error "define the build under test"
#endif

#define N 256
#define REPS 12
#define RANGES 2
/* The reading's own cost on the calling thread, with room for a loaded
 * machine; the failures this catches are tens to hundreds of ms. */
#define TOLERANCE_NS 2000000u
/* What threads outside the caller and the pool may run while the calls
 * run in callbacks: the tolerance, and a tenth of the work, for threads
 * that end inside the window (under ThreadSanitizer, in CI's run of
 * 3f09546, threads no longer listed after BLIS's dgemm in callbacks had
 * run 1.99 ms of 87.7; 0.12-0.19 ms locally in the same build). The same
 * calls at top level put a third to a half of the work on the library's
 * threads (13 ms of 38 with OpenBLAS's OpenMP build, 113 of 235 with
 * BLIS's under ThreadSanitizer). */
static uint64_t others_allowed(const guard_cpu_report *r) { return TOLERANCE_NS + r->allowed_ns / 10; }

typedef struct gemm_job {
  double a[RANGES][N * N], b[RANGES][N * N], c[RANGES][N * N], want[RANGES][N * N];
  _Atomic int tid[RANGES];
  _Atomic int threads_seen[RANGES];
} gemm_job;

static gemm_job job;

static void fill(void) {
  for (int r = 0; r < RANGES; r++)
    for (int i = 0; i < N * N; i++) {
      job.a[r][i] = (double)((i * 7 + r) % 5) - 2.0;
      job.b[r][i] = (double)((i * 3 + 2 * r) % 5) - 2.0;
    }
  for (int r = 0; r < RANGES; r++)
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) {
        double s = 0;
        for (int k = 0; k < N; k++)
          s += job.a[r][i * N + k] * job.b[r][k * N + j];
        job.want[r][i * N + j] = s;
      }
}

static void gemm(int r) {
  for (int rep = 0; rep < REPS; rep++)
    cblas_dgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, N, N, N, 1.0, job.a[r], N, job.b[r], N, 0.0,
                job.c[r], N);
}

static int gemm_range(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  for (int64_t r = begin; r < end; r++) {
    atomic_store(&job.tid[r], guard_cpu_gettid());
    atomic_store(&job.threads_seen[r], library_threads());
    gemm((int)r);
  }
  return 0;
}

static bool results_exact(void) {
  for (int r = 0; r < RANGES; r++)
    if (memcmp(job.c[r], job.want[r], sizeof job.c[r]) != 0)
      return false;
  return true;
}

/* The caller, the tids that ran callbacks, and the pool's named workers. */
static int allowed_threads(const guard_cpu_snapshot *s, int *allowed, int max) {
  int n = 0;
  allowed[n++] = guard_cpu_gettid();
  for (int r = 0; r < RANGES && n < max; r++)
    if (atomic_load(&job.tid[r]) != 0)
      allowed[n++] = atomic_load(&job.tid[r]);
  for (int i = 0; i < s->count && n < max; i++) {
    char name[32];
    guard_cpu_thread_name(s->tid[i], name, sizeof name);
    if (strncmp(name, "cpuexec-w", 9) == 0)
      allowed[n++] = s->tid[i];
  }
  return n;
}

static cpuexec_session *two_thread_session(void) {
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = 2;
  policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
  policy.spin_policy = CPUEXEC_SPIN_PARK_IMMEDIATELY; /* parked while the CPU times are read */
  cpuexec_session *session = NULL;
  assert_int_equal(cpuexec_session_create(&policy, &session), 0);
  return session;
}

static void the_build_is_found_and_governed(void **state) {
  (void)state;
  cpuexec_runtime_info list[24];
  size_t n = 0;
  assert_int_equal(cpuexec_runtimes_get(list, 24, &n), 0);
  char text[4096];
  cpuexec_runtimes_describe(text, sizeof text);
  printf("%s", text);
  const cpuexec_runtime_info *mine = NULL;
  for (size_t i = 0; i < n && i < 24; i++)
    if (list[i].family == BUILD_FAMILY)
      mine = &list[i];
  assert_non_null(mine);
  assert_string_equal(mine->name, BUILD_NAME);
  assert_string_equal(mine->threading, BUILD_THREADING);
  assert_int_equal(mine->guard, BUILD_GUARD);
  assert_true(mine->governed);
  assert_non_null(strstr(mine->path, BUILD_DIR));
  assert_true(mine->version[0] != '\0');
  assert_int_equal(library_threads(), 2);
}

static void dgemm_in_callbacks_runs_on_the_caller_and_the_pool_only(void **state) {
  (void)state;
  cpuexec_session *session = two_thread_session();
  cpuexec_executor *exec = cpuexec_session_executor(session);
  memset(job.c, 0, sizeof job.c);
  guard_cpu_snapshot before, after;
  guard_cpu_before(&before);
  assert_int_equal(cpuexec_parallel_for_flags(exec, RANGES, 1, NULL, gemm_range, 0, CPUEXEC_FOR_EVERY_PARTICIPANT), 0);
  guard_cpu_after(&after);
  int allowed[16];
  int n = allowed_threads(&after, allowed, 16);
  guard_cpu_report r = guard_cpu_compare(&before, &after, allowed, n);
  guard_cpu_print(BUILD_NAME " " BUILD_THREADING ", dgemm in callbacks", &r);
  assert_true(results_exact());
  assert_int_not_equal(atomic_load(&job.tid[0]), atomic_load(&job.tid[1])); /* both participants ran one */
#if BUILD_PROCESS_WIDE
  for (int i = 0; i < RANGES; i++)
    assert_int_equal(atomic_load(&job.threads_seen[i]), 1);
#else
  /* Through OpenMP: the process-wide setting is left alone. */
  for (int i = 0; i < RANGES; i++)
    assert_int_equal(atomic_load(&job.threads_seen[i]), 2);
#endif
  assert_true(r.allowed_ns > 0);
  assert_true(r.others_ns < others_allowed(&r));
  assert_int_equal(library_threads(), 2); /* restored when the region returned */
  cpuexec_session_destroy(session);
}

static void the_same_calls_at_top_level_use_the_library_threads(void **state) {
  (void)state;
  memset(job.c, 0, sizeof job.c);
  guard_cpu_snapshot before, after;
  guard_cpu_before(&before);
  for (int r = 0; r < RANGES; r++)
    gemm(r);
  guard_cpu_after(&after);
  int self = guard_cpu_gettid();
  guard_cpu_report rep = guard_cpu_compare(&before, &after, &self, 1);
  guard_cpu_print(BUILD_NAME " " BUILD_THREADING ", dgemm at top level", &rep);
  assert_true(results_exact());
  assert_true(rep.others_ns > TOLERANCE_NS); /* the library's threads did part of the work */
}

/* ---- a top-level call on another thread while a region runs -------------- */

/* 1: the callback is inside; 2: the other thread looked; 3: the region returned */
static stage_latch gate = STAGE_LATCH_INITIALIZER;
static struct {
  int threads_inside, threads_after, main_tid;
  guard_cpu_report after_report;
} observed;

static int hold_inside(void *ctx, int64_t begin, int64_t end) {
  (void)ctx, (void)begin, (void)end;
  stage_latch_set(&gate, 1);
  stage_latch_wait(&gate, 2);
  return 0;
}

static void *top_level_caller(void *arg) {
  (void)arg;
  stage_latch_wait(&gate, 1);
  observed.threads_inside = library_threads();
#if defined(GUARD_OPENBLAS_PTHREAD)
  openblas_set_num_threads(3); /* set while held: the value kept when the region ends */
#endif
  stage_latch_set(&gate, 2);
  stage_latch_wait(&gate, 3); /* the region returned */
  observed.threads_after = library_threads();
  guard_cpu_snapshot before, after;
  guard_cpu_before(&before);
  for (int r = 0; r < RANGES; r++)
    gemm(r);
  guard_cpu_after(&after);
  /* Not the library's: this thread, the main thread, the pool's workers. */
  int allowed[16] = {guard_cpu_gettid(), observed.main_tid};
  int n = 2;
  for (int i = 0; i < after.count && n < 16; i++) {
    char name[32];
    guard_cpu_thread_name(after.tid[i], name, sizeof name);
    if (strncmp(name, "cpuexec-w", 9) == 0)
      allowed[n++] = after.tid[i];
  }
  observed.after_report = guard_cpu_compare(&before, &after, allowed, n);
  return NULL;
}

static void another_thread_is_serialized_only_while_a_region_runs(void **state) {
  (void)state;
  cpuexec_session *session = two_thread_session();
  observed.main_tid = guard_cpu_gettid();
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, top_level_caller, NULL), 0);
  assert_int_equal(cpuexec_parallel_for(cpuexec_session_executor(session), 1, 1, NULL, hold_inside, 1), 0);
  int now = library_threads();
  stage_latch_set(&gate, 3);
  pthread_join(t, NULL);
  guard_cpu_print(BUILD_NAME " " BUILD_THREADING ", another thread's dgemm after the region", &observed.after_report);
#if BUILD_PROCESS_WIDE
  assert_int_equal(observed.threads_inside, 1); /* the price of a process-wide setting, while the region runs */
#if defined(GUARD_OPENBLAS_PTHREAD)
  assert_int_equal(now, 3); /* the count set meanwhile is kept */
  assert_int_equal(observed.threads_after, 3);
  openblas_set_num_threads(2);
#else
  assert_int_equal(now, 2);
  assert_int_equal(observed.threads_after, 2);
#endif
#else
  assert_int_equal(observed.threads_inside, 2); /* through OpenMP: never serialized */
  assert_int_equal(now, 2);
  assert_int_equal(observed.threads_after, 2);
#endif
  assert_true(results_exact());
  assert_true(observed.after_report.others_ns > TOLERANCE_NS); /* on the library's threads again */
  cpuexec_session_destroy(session);
}

int main(int argc, char **argv) {
  (void)argc;
  /* The libraries read these when they start: set them, then run again. */
  if (getenv("CPUEXEC_GUARD_TEST_ENV") == NULL) {
    setenv("CPUEXEC_GUARD_TEST_ENV", "1", 1);
    setenv("OPENBLAS_NUM_THREADS", "2", 1);
    setenv("BLIS_NUM_THREADS", "2", 1);
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
    setenv("OMP_WAIT_POLICY", "passive", 1);
    unsetenv("OMP_NUM_THREADS");
    unsetenv("CPUEXEC_POLICY");
    execv("/proc/self/exe", argv);
    perror("test_guard_blas: execv /proc/self/exe");
    return 1;
  }
  fill();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_build_is_found_and_governed),
      cmocka_unit_test(dgemm_in_callbacks_runs_on_the_caller_and_the_pool_only),
      cmocka_unit_test(the_same_calls_at_top_level_use_the_library_threads),
      cmocka_unit_test(another_thread_is_serialized_only_while_a_region_runs),
  };
  return cmocka_run_group_tests_name("guard_" BUILD_NAME "_" BUILD_THREADING, tests, NULL, NULL);
}
