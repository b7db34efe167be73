/* FFTW's threads on libcpuexec (cpuexec/compat/fftw.h), against the real
 * FFTW 3.3.10 threads library: every plan is made once with
 * fftw_plan_with_nthreads(2), executed with FFTW's own threads (the
 * reference) and with cpuexec_fftw_parallel_loop(), and the outputs compared
 * bit for bit; the jobs run on the session's participants (a rendezvous in
 * each job proves two of them ran at once), FFTW starts no thread of its own,
 * plans executed inside a callback run inline, and two session threads
 * executing at once both get the right output.
 *
 * The first case must run before any reference: FFTW keeps the threads it
 * starts, so only a process where it has started none can show that the
 * callback starts none (fftw_threads_seen says when that no longer holds). */
#include <complex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include <fftw3.h>
#include <sys/syscall.h>

#include "support/rendezvous.h"
#include "support/test_util.h"

#include <cpuexec.h>
#include <cpuexec/compat/fftw.h>
#include <cpuexec/compat/libraries.h>

/* ---- recording what the adapter did ----------------------------------------
 * record_loop is the callback FFTW sees: it wraps each of FFTW's jobs in a
 * shim that notes the thread and participant running it, then hands the
 * shims to cpuexec_fftw_parallel_loop. Counters are atomics: jobs run on the
 * executor's workers, where cmocka's asserts must not be called. */
#define MAX_TIDS 1024

typedef struct record {
  atomic_int loops;         /* parallel_loop calls with 2 or more jobs */
  atomic_int jobs;          /* jobs run */
  atomic_int outside;       /* jobs on a thread not in `allowed` */
  atomic_int not_inline;    /* jobs off the thread of `inline_tid` while it is set */
  atomic_int wrong_executor;/* jobs whose current executor is not `expect` (when set) */
  atomic_int spread;        /* loops whose jobs ran on 2 or more threads */
  int allowed[MAX_TIDS];    /* the pool's threads (0: any thread) */
  int allowed_count;
  bool rendezvous;          /* each loop's first job per participant waits for the others */
} record;

static record rec;
static _Thread_local int inline_tid;                /* set by a callback that executes a plan */
static _Thread_local cpuexec_executor *expect_exec; /* set by a session thread */

typedef struct shim {
  void *(*work)(char *);
  char *job;
  struct shim_loop *loop;
} shim;

typedef struct shim_loop {
  _Atomic uint64_t arrived; /* rendezvous.h: participants that started a job */
  atomic_int tid[2];        /* the first two distinct threads seen */
} shim_loop;

static int gettid_now(void) { return (int)syscall(SYS_gettid); }

static void *record_job(char *p) {
  shim *s = (shim *)p;
  int tid = gettid_now();
  atomic_fetch_add(&rec.jobs, 1);
  if (rec.allowed_count > 0) {
    bool found = false;
    for (int i = 0; i < rec.allowed_count; i++) found |= rec.allowed[i] == tid;
    if (!found) atomic_fetch_add(&rec.outside, 1);
  }
  if (inline_tid != 0 && (tid != inline_tid || cpuexec_participant_count() != 1))
    atomic_fetch_add(&rec.not_inline, 1);
  if (expect_exec != NULL && cpuexec_executor_current() != expect_exec) atomic_fetch_add(&rec.wrong_executor, 1);
  int none = 0;
  if (!atomic_compare_exchange_strong(&s->loop->tid[0], &none, tid) && atomic_load(&s->loop->tid[0]) != tid) {
    none = 0;
    atomic_compare_exchange_strong(&s->loop->tid[1], &none, tid);
  }
  if (rec.rendezvous) test_rendezvous(&s->loop->arrived);
  return s->work(s->job);
}

static void record_loop(void *(*work)(char *), char *jobdata, size_t elsize, int njobs, void *data) {
  shim_loop loop = {0};
  shim *shims = calloc((size_t)njobs, sizeof *shims);
  if (!shims) abort();
  for (int i = 0; i < njobs; i++) shims[i] = (shim){work, jobdata + elsize * (size_t)i, &loop};
  cpuexec_fftw_parallel_loop(record_job, (char *)shims, sizeof *shims, njobs, data);
  if (njobs >= 2) {
    atomic_fetch_add(&rec.loops, 1);
    if (atomic_load(&loop.tid[1]) != 0) atomic_fetch_add(&rec.spread, 1);
  }
  free(shims);
}

static void record_reset(void) {
  atomic_store(&rec.loops, 0);
  atomic_store(&rec.jobs, 0);
  atomic_store(&rec.outside, 0);
  atomic_store(&rec.not_inline, 0);
  atomic_store(&rec.wrong_executor, 0);
  atomic_store(&rec.spread, 0);
  rec.allowed_count = 0;
  rec.rendezvous = false;
}

/* The pool's threads: every participant of a region that waits for them all. */
static int note_tid(void *ctx, int64_t begin, int64_t end) {
  (void)end;
  ((int *)ctx)[begin] = gettid_now();
  return 0;
}

static void allow_threads_of(cpuexec_executor *exec) {
  int32_t n = cpuexec_executor_effective_threads(exec);
  assert_true(n >= 1 && n <= MAX_TIDS);
  assert_int_equal(cpuexec_parallel_for_flags(exec, n, 1, rec.allowed, note_tid, 0, CPUEXEC_FOR_EVERY_PARTICIPANT),
                   0);
  rec.allowed_count = n;
}

/* ---- the transforms --------------------------------------------------------- */
typedef enum kind { C2C, R2C, C2R } kind;

typedef struct transform {
  kind kind;
  int rank;
  int n[2];
} transform;

/* 1-D and 2-D; powers of two, mixed radices and a prime factor. */
static const transform transforms[] = {
    {C2C, 1, {4096, 0}}, {C2C, 1, {65536, 0}}, {C2C, 1, {3 * 5 * 7 * 64, 0}}, {C2C, 1, {1009 * 16, 0}},
    {C2C, 2, {64, 64}},  {C2C, 2, {256, 96}},  {C2C, 2, {100, 120}},
    {R2C, 1, {8192, 0}}, {R2C, 1, {3 * 5 * 7 * 32, 0}}, {R2C, 2, {128, 128}}, {R2C, 2, {90, 200}},
    {C2R, 1, {8192, 0}}, {C2R, 2, {128, 128}}, {C2R, 2, {90, 200}},
};
#define TRANSFORMS (sizeof transforms / sizeof transforms[0])

typedef struct planned {
  const transform *t;
  fftw_plan plan;
  size_t in_bytes, out_bytes;
  void *in, *out;
  void *input;     /* the input, restored before each execution (c2r overwrites it) */
  void *reference; /* FFTW's own threads' output */
} planned;

static size_t points(const transform *t) { return (size_t)t->n[0] * (size_t)(t->rank == 2 ? t->n[1] : 1); }

/* Complex points of the half spectrum of a real transform. */
static size_t half_points(const transform *t) {
  return t->rank == 1 ? (size_t)t->n[0] / 2 + 1 : (size_t)t->n[0] * ((size_t)t->n[1] / 2 + 1);
}

static planned plan_transform(const transform *t) {
  planned p = {.t = t};
  size_t real = points(t) * sizeof(double), cplx = points(t) * sizeof(fftw_complex);
  size_t half = half_points(t) * sizeof(fftw_complex);
  p.in_bytes = t->kind == C2C ? cplx : t->kind == R2C ? real : half;
  p.out_bytes = t->kind == C2C ? cplx : t->kind == R2C ? half : real;
  p.in = fftw_malloc(p.in_bytes);
  p.out = fftw_malloc(p.out_bytes);
  p.input = malloc(p.in_bytes);
  p.reference = malloc(p.out_bytes);
  assert_non_null(p.in);
  assert_non_null(p.out);
  assert_non_null(p.input);
  assert_non_null(p.reference);
  double *d = p.input;
  for (size_t i = 0; i < p.in_bytes / sizeof(double); i++) d[i] = (double)((i * 7919u) % 1000u) / 997.0 - 0.5;
  fftw_plan_with_nthreads(2);
  if (t->kind == C2C)
    p.plan = fftw_plan_dft(t->rank, t->n, p.in, p.out, FFTW_FORWARD, FFTW_ESTIMATE);
  else if (t->kind == R2C)
    p.plan = fftw_plan_dft_r2c(t->rank, t->n, p.in, p.out, FFTW_ESTIMATE);
  else
    p.plan = fftw_plan_dft_c2r(t->rank, t->n, p.in, p.out, FFTW_ESTIMATE);
  assert_non_null(p.plan);
  return p;
}

static void unplan(planned *p) {
  fftw_destroy_plan(p->plan);
  fftw_free(p->in);
  fftw_free(p->out);
  free(p->input);
  free(p->reference);
}

/* Executes p on arrays of the caller's (fftw_malloc'ed like the plan's, so
 * the new-array execute functions accept them). */
static void execute_on(const planned *p, void *in, void *out) {
  memcpy(in, p->input, p->in_bytes);
  if (p->t->kind == C2C)
    fftw_execute_dft(p->plan, in, out);
  else if (p->t->kind == R2C)
    fftw_execute_dft_r2c(p->plan, in, out);
  else
    fftw_execute_dft_c2r(p->plan, in, out);
}

static bool fftw_threads_seen; /* FFTW's own threads have run in this process */

static void compute_reference(planned *p) {
  fftw_threads_set_callback(NULL, NULL); /* FFTW's own threads */
  fftw_threads_seen = true;
  execute_on(p, p->in, p->out);
  memcpy(p->reference, p->out, p->out_bytes);
  fftw_threads_set_callback(record_loop, NULL);
}

/* ---- FFTW starts no thread ----------------------------------------------- */
typedef struct run_ctx {
  planned *plans;
  size_t count;
} run_ctx;

static int execute_all(void *ctx) {
  run_ctx *c = ctx;
  for (size_t i = 0; i < c->count; i++) execute_on(&c->plans[i], c->plans[i].in, c->plans[i].out);
  return 0;
}

static void fftw_starts_no_thread_of_its_own(void **state) {
  (void)state;
  assert_false(fftw_threads_seen); /* see the top of this file */
  cpuexec_session *s = test_session(2);
  fftw_threads_set_callback(record_loop, NULL);
  record_reset();
  planned plans[TRANSFORMS];
  for (size_t i = 0; i < TRANSFORMS; i++) plans[i] = plan_transform(&transforms[i]);
  int before = task_baseline();
  run_ctx c = {plans, TRANSFORMS};
  assert_int_equal(cpuexec_session_run(s, &c, execute_all), 0);
  assert_int_equal(task_count(), before);
  assert_true(atomic_load(&rec.loops) >= (int)TRANSFORMS); /* every plan is threaded */
  /* The count sees FFTW's threads: its own threading starts one. */
  fftw_threads_set_callback(NULL, NULL);
  fftw_threads_seen = true;
  execute_all(&c);
  assert_true(task_count() > before);
  fftw_threads_set_callback(record_loop, NULL);
  for (size_t i = 0; i < TRANSFORMS; i++) unplan(&plans[i]);
  cpuexec_session_destroy(s);
}

/* ---- bit-identical, on the session's participants ------------------------- */
typedef struct compare_ctx {
  planned *p;
} compare_ctx;

static int execute_one(void *ctx) {
  planned *p = ((compare_ctx *)ctx)->p;
  execute_on(p, p->in, p->out);
  return 0;
}

static void transforms_bit_identical_on_session_participants(void **state) {
  (void)state;
  cpuexec_session *s = test_session(2);
  for (size_t i = 0; i < TRANSFORMS; i++) {
    planned p = plan_transform(&transforms[i]);
    compute_reference(&p);
    record_reset();
    allow_threads_of(cpuexec_session_executor(s));
    rec.rendezvous = true;
    memset(p.out, 0xff, p.out_bytes);
    compare_ctx c = {&p};
    assert_int_equal(cpuexec_session_run(s, &c, execute_one), 0);
    if (memcmp(p.out, p.reference, p.out_bytes) != 0)
      fail_msg("transform %zu (kind %d, rank %d, %d x %d): output differs from FFTW's threads", i,
               (int)transforms[i].kind, transforms[i].rank, transforms[i].n[0], transforms[i].n[1]);
    assert_true(atomic_load(&rec.loops) >= 1);
    assert_int_equal(atomic_load(&rec.outside), 0);
    /* With the rendezvous, every loop of two jobs ran on both participants. */
    assert_int_equal(atomic_load(&rec.spread), atomic_load(&rec.loops));
    unplan(&p);
  }
  cpuexec_session_destroy(s);
}

/* ---- an executor given as data; the default pool outside sessions ---------- */
static void executor_given_as_data(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  planned p = plan_transform(&transforms[1]);
  compute_reference(&p);
  fftw_threads_set_callback(record_loop, exec);
  record_reset();
  allow_threads_of(exec);
  rec.rendezvous = true;
  execute_on(&p, p.in, p.out);
  fftw_threads_set_callback(record_loop, NULL);
  assert_memory_equal(p.out, p.reference, p.out_bytes);
  assert_true(atomic_load(&rec.loops) >= 1);
  assert_int_equal(atomic_load(&rec.outside), 0);
  assert_int_equal(atomic_load(&rec.spread), atomic_load(&rec.loops));
  unplan(&p);
  assert_int_equal(cpuexec_executor_release(exec), 0);
}

static void outside_sessions_on_the_default_pool(void **state) {
  (void)state;
  cpuexec_executor *pool = NULL;
  assert_int_equal(cpuexec_registry_default_executor(&pool), 0);
  planned p = plan_transform(&transforms[4]);
  compute_reference(&p);
  record_reset();
  allow_threads_of(pool);
  execute_on(&p, p.in, p.out);
  assert_memory_equal(p.out, p.reference, p.out_bytes);
  assert_true(atomic_load(&rec.loops) >= 1);
  assert_int_equal(atomic_load(&rec.outside), 0);
  unplan(&p);
}

/* ---- inline inside a callback --------------------------------------------- */
typedef struct inline_ctx {
  planned *p;
  void *in[2], *out[2];
} inline_ctx;

static int execute_in_callback(void *ctx, int64_t begin, int64_t end) {
  inline_ctx *c = ctx;
  for (int64_t k = begin; k < end; k++) {
    inline_tid = gettid_now();
    execute_on(c->p, c->in[k], c->out[k]);
    inline_tid = 0;
  }
  return 0;
}

static void plans_inside_a_callback_run_inline(void **state) {
  (void)state;
  cpuexec_session *s = test_session(2);
  planned p = plan_transform(&transforms[5]);
  compute_reference(&p);
  inline_ctx c = {&p, {0}, {0}};
  for (int k = 0; k < 2; k++) {
    c.in[k] = fftw_malloc(p.in_bytes);
    c.out[k] = fftw_malloc(p.out_bytes);
    assert_non_null(c.in[k]);
    assert_non_null(c.out[k]);
  }
  record_reset();
  assert_int_equal(cpuexec_parallel_for_flags(cpuexec_session_executor(s), 2, 1, &c, execute_in_callback, 0,
                                              CPUEXEC_FOR_EVERY_PARTICIPANT),
                   0);
  assert_true(atomic_load(&rec.loops) >= 2); /* one threaded loop per callback, at least */
  assert_int_equal(atomic_load(&rec.not_inline), 0);
  for (int k = 0; k < 2; k++) {
    assert_memory_equal(c.out[k], p.reference, p.out_bytes);
    fftw_free(c.in[k]);
    fftw_free(c.out[k]);
  }
  unplan(&p);
  cpuexec_session_destroy(s);
}

/* ---- two session threads at once ----------------------------------------- */
#define ROUNDS 20

typedef struct session_thread {
  cpuexec_session *session;
  planned *plans;
  size_t count;
  void **in, **out; /* this thread's arrays, one per plan */
  pthread_barrier_t *start;
  int wrong; /* outputs that differ from the reference */
} session_thread;

static int session_rounds(void *ctx) {
  session_thread *t = ctx;
  expect_exec = cpuexec_session_executor(t->session);
  for (int r = 0; r < ROUNDS; r++)
    for (size_t i = 0; i < t->count; i++) {
      execute_on(&t->plans[i], t->in[i], t->out[i]);
      if (memcmp(t->out[i], t->plans[i].reference, t->plans[i].out_bytes) != 0) t->wrong++;
    }
  expect_exec = NULL;
  return 0;
}

static void *session_thread_main(void *arg) {
  session_thread *t = arg;
  pthread_barrier_wait(t->start);
  if (cpuexec_session_run(t->session, t, session_rounds) != 0) t->wrong = -1;
  return NULL;
}

static void two_session_threads_at_once(void **state) {
  (void)state;
  enum { PLANS = 4 };
  planned plans[PLANS] = {plan_transform(&transforms[0]), plan_transform(&transforms[5]),
                          plan_transform(&transforms[8]), plan_transform(&transforms[13])};
  for (int i = 0; i < PLANS; i++) compute_reference(&plans[i]);
  record_reset();
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, 2);
  session_thread threads[2];
  void *arrays[2][2][PLANS];
  for (int k = 0; k < 2; k++) {
    threads[k] = (session_thread){test_session(2), plans, PLANS, arrays[k][0], arrays[k][1], &start, 0};
    for (int i = 0; i < PLANS; i++) {
      arrays[k][0][i] = fftw_malloc(plans[i].in_bytes);
      arrays[k][1][i] = fftw_malloc(plans[i].out_bytes);
      assert_non_null(arrays[k][0][i]);
      assert_non_null(arrays[k][1][i]);
    }
  }
  pthread_t tid[2];
  for (int k = 0; k < 2; k++) assert_int_equal(pthread_create(&tid[k], NULL, session_thread_main, &threads[k]), 0);
  for (int k = 0; k < 2; k++) pthread_join(tid[k], NULL);
  for (int k = 0; k < 2; k++) {
    assert_int_equal(threads[k].wrong, 0);
    for (int i = 0; i < PLANS; i++) {
      fftw_free(arrays[k][0][i]);
      fftw_free(arrays[k][1][i]);
    }
    cpuexec_session_destroy(threads[k].session);
  }
  assert_true(atomic_load(&rec.loops) >= 2 * ROUNDS * PLANS);
  assert_int_equal(atomic_load(&rec.wrong_executor), 0);
  pthread_barrier_destroy(&start);
  for (int i = 0; i < PLANS; i++) unplan(&plans[i]);
}

/* ---- single precision: the same callback ----------------------------------- */
static void single_precision_uses_the_same_callback(void **state) {
  (void)state;
  enum { N = 16384 };
  fftwf_complex *in = fftwf_malloc(sizeof *in * N), *out = fftwf_malloc(sizeof *out * N);
  fftwf_complex *ref = fftwf_malloc(sizeof *ref * N);
  assert_non_null(in);
  assert_non_null(out);
  assert_non_null(ref);
  fftwf_plan_with_nthreads(2);
  fftwf_plan plan = fftwf_plan_dft_1d(N, in, out, FFTW_BACKWARD, FFTW_ESTIMATE);
  assert_non_null(plan);
  for (int i = 0; i < N; i++) in[i] = (float)(i % 17) - 8.0f + I * (float)(i % 5);
  fftwf_threads_set_callback(NULL, NULL);
  fftw_threads_seen = true;
  fftwf_execute(plan);
  memcpy(ref, out, sizeof *out * N);
  memset(out, 0, sizeof *out * N);
  cpuexec_session *s = test_session(2);
  fftwf_threads_set_callback(record_loop, NULL);
  record_reset();
  allow_threads_of(cpuexec_session_executor(s));
  rec.rendezvous = true;
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(cpuexec_session_executor(s), &scope), 0);
  fftwf_execute(plan);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  assert_memory_equal(out, ref, sizeof *out * N);
  assert_true(atomic_load(&rec.loops) >= 1);
  assert_int_equal(atomic_load(&rec.outside), 0);
  assert_int_equal(atomic_load(&rec.spread), atomic_load(&rec.loops));
  fftwf_destroy_plan(plan);
  fftwf_free(in);
  fftwf_free(out);
  fftwf_free(ref);
  cpuexec_session_destroy(s);
}

/* ---- the callback's own edges --------------------------------------------- */
static void *count_job_for_status(char *p) {
  (void)p;
  return NULL;
}

static void *count_job(char *p) {
  atomic_fetch_add((atomic_int *)p, 1);
  return NULL;
}

static const cpuexec_library_status *library(const cpuexec_library_status *s, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(s[i].name, name) == 0) return &s[i];
  fail_msg("no status for %s", name);
  return NULL;
}

static void the_status_says_fftw_runs_on_libcpuexec(void **state) {
  (void)state;
  cpuexec_library_status s[8];
  size_t n = 0;
  assert_int_equal(cpuexec_libraries_status(NULL, 0, &n), 0);
  assert_int_equal(n, 4); /* fftw, opencv, eigen, pthreadpool */
  assert_int_equal(cpuexec_libraries_status(s, 8, &n), 0);
  const cpuexec_library_status *f = library(s, n, "fftw");
  uint64_t before = f->uses;
  assert_true(f->loaded);
  assert_true(f->on_libcpuexec); /* the earlier cases ran its loops here */
  cpuexec_fftw_parallel_loop(count_job_for_status, (char *)&before, 0, 1, NULL);
  assert_int_equal(cpuexec_libraries_status(s, 8, &n), 0);
  assert_int_equal(library(s, n, "fftw")->uses, before + 1);
  assert_false(library(s, n, "opencv")->loaded);
  assert_false(library(s, n, "eigen")->loaded); /* no cpuexec/eigen.hpp pool in this program */
  char text[2048];
  assert_true(cpuexec_libraries_describe(text, sizeof text) > 0);
  assert_non_null(strstr(text, "on libcpuexec"));
  assert_int_equal(cpuexec_libraries_status(NULL, 1, &n), CPUEXEC_EINVAL);
}

static void every_job_exactly_once(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  for (int njobs = 0; njobs <= 9; njobs++) {
    atomic_int counts[9];
    for (int i = 0; i < 9; i++) atomic_init(&counts[i], 0);
    cpuexec_fftw_parallel_loop(count_job, (char *)counts, sizeof counts[0], njobs, exec);
    for (int i = 0; i < 9; i++) assert_int_equal(atomic_load(&counts[i]), i < njobs ? 1 : 0);
  }
  cpuexec_fftw_parallel_loop(NULL, NULL, 0, 4, exec); /* work NULL runs nothing */
  assert_int_equal(cpuexec_executor_release(exec), 0);
}

static int forked_child_runs_serially(void) {
  /* An executor inherited across fork() cannot run: the jobs run here. */
  cpuexec_executor *inherited = cpuexec_executor_current();
  atomic_int counts[4];
  for (int i = 0; i < 4; i++) atomic_init(&counts[i], 0);
  cpuexec_fftw_parallel_loop(count_job, (char *)counts, sizeof counts[0], 4, inherited);
  for (int i = 0; i < 4; i++)
    if (atomic_load(&counts[i]) != 1) return 1;
  return 0;
}

static void an_inherited_executor_runs_the_jobs_on_the_caller(void **state) {
  (void)state;
  cpuexec_executor *exec = test_executor(2);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(exec, &scope), 0);
  assert_int_equal(run_in_child(forked_child_runs_serially, 60), 0);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  assert_int_equal(cpuexec_executor_release(exec), 0);
}

int main(void) {
  if (!fftw_init_threads() || !fftwf_init_threads()) {
    fprintf(stderr, "fftw_init_threads failed\n");
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fftw_starts_no_thread_of_its_own), /* first: see the top of this file */
      cmocka_unit_test(transforms_bit_identical_on_session_participants),
      cmocka_unit_test(executor_given_as_data),
      cmocka_unit_test(outside_sessions_on_the_default_pool),
      cmocka_unit_test(plans_inside_a_callback_run_inline),
      cmocka_unit_test(two_session_threads_at_once),
      cmocka_unit_test(single_precision_uses_the_same_callback),
      cmocka_unit_test(every_job_exactly_once),
      cmocka_unit_test(an_inherited_executor_runs_the_jobs_on_the_caller),
      cmocka_unit_test(the_status_says_fftw_runs_on_libcpuexec),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  fftw_cleanup_threads();
  fftwf_cleanup_threads();
  return failed;
}
