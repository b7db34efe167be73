/* The one helper header of the test suites (include it after nothing but
 * system headers; it includes <cmocka.h> itself):
 *   - a per-case watchdog: every cmocka_unit_test() case arms an alarm, and
 *     a case that hangs prints its own name and ends the program;
 *   - threads and processes: counting this process's threads, running a
 *     check in a forked child, whether ThreadSanitizer is on;
 *   - executors from stored topologies: resolutions made by cpuexec_policy_resolve()
 *     on tests/topologies/2cores.xml, so tests never restate resolve.c's rules;
 *   - adapters: an owned executor, a (worker_id, worker_count) pool like the
 *     ones kernel libraries own, coverage records (tests/adapters_support.c);
 *   - with TEST_UTIL_RESOLVE defined (programs that link the internal
 *     library with -I src): the stored machines and resolve fixtures.
 * A program made of two test files defines TEST_UTIL_SECOND_FILE in the
 * second, so definitions the sanitizer runtime looks up appear once. */
#ifndef CPUEXEC_TESTS_TEST_UTIL_H
#define CPUEXEC_TESTS_TEST_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#ifndef __cplusplus
#include <stdatomic.h>
#endif
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <cpuexec.h>

#ifndef __cplusplus
#include <cpuexec/compat/job_pool.h>
#endif

/* ---- the per-case watchdog ------------------------------------------------
 * cmocka_unit_test(f) below gives every case a setup that arms alarm() for
 * CPUEXEC_TEST_CASE_TIMEOUT seconds (default 120) and a teardown that
 * disarms it. A case still running then prints "test case hung: <name>" and
 * the program exits 124, the status of tests/run-test.sh's timeout. The
 * alarm only ends a hung case; no test waits on it. */
static const char *test_watchdog_case = "?";

static inline void test_watchdog_fire(int sig) {
  (void)sig;
  static const char head[] = "\ntest case hung: ";
  static const char tail[] = " (no result within CPUEXEC_TEST_CASE_TIMEOUT seconds)\n";
  ssize_t ignored = write(2, head, sizeof head - 1);
  ignored = write(2, test_watchdog_case, strlen(test_watchdog_case));
  ignored = write(2, tail, sizeof tail - 1);
  (void)ignored;
  _exit(124);
}

static inline int test_watchdog_setup(void **state) {
  test_watchdog_case = *state ? (const char *)*state : "?";
  *state = NULL; /* the case sees the state a plain cmocka_unit_test gives */
  const char *env = getenv("CPUEXEC_TEST_CASE_TIMEOUT");
  unsigned seconds = env && atoi(env) > 0 ? (unsigned)atoi(env) : 120u;
  signal(SIGALRM, test_watchdog_fire);
  alarm(seconds);
  return 0;
}

static inline int test_watchdog_teardown(void **state) {
  (void)state;
  alarm(0);
  return 0;
}

#undef cmocka_unit_test
#define cmocka_unit_test(f) {#f, f, test_watchdog_setup, test_watchdog_teardown, (void *)#f}

#ifndef __cplusplus /* the rest is C only */

/* ---- threads and processes ----------------------------------------------- */
/* Under ThreadSanitizer a forked child of a threaded parent may start
 * threads of its own (the fork tests need that). Exported despite
 * -fvisibility=hidden so the sanitizer runtime finds it. */
#ifndef TEST_UTIL_SECOND_FILE
__attribute__((visibility("default"))) const char *__tsan_default_options(void);
__attribute__((visibility("default"))) const char *__tsan_default_options(void) { return "die_after_fork=0"; }
#endif

#if defined(__SANITIZE_THREAD__)
#define TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_UNDER_TSAN 1
#endif
#endif
#ifndef TEST_UNDER_TSAN
#define TEST_UNDER_TSAN 0
#endif

/* ThreadSanitizer keeps the parent's threads in its registry in a forked
 * child, and a thread started there that reuses one of their stacks (glibc
 * hands those stacks out again) kills the child ("dup thread with used
 * id"). So under ThreadSanitizer the fork tests check everything in the
 * child that starts no thread; the normal build checks the rest. */
#define TEST_CHILD_MAY_START_THREADS (!TEST_UNDER_TSAN)

/* CLOCK_MONOTONIC in ns: only to bound a poll of the kernel's own state
 * (below), never to wait for another thread of the test. */
static inline uint64_t test_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Whether /proc/self/task/<tid> is a thread that still runs: a joined
 * thread stays listed until the kernel reaps it, a little after
 * pthread_join returned, but by then it has PF_EXITING (0x4) in its flags,
 * the ninth field of its stat; a thread already gone has no stat. */
static inline bool task_alive(const char *tid) {
  char path[64], text[512];
  snprintf(path, sizeof path, "/proc/self/task/%s/stat", tid);
  FILE *f = fopen(path, "r");
  if (!f) return false;
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  const char *after_name = strrchr(text, ')');
  unsigned long flags = 0;
  if (!after_name || sscanf(after_name + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1) return true;
  return (flags & 0x4u) == 0;
}

/* Threads of this process that still run, from /proc/self/task. */
static inline int task_count(void) {
  DIR *dir = opendir("/proc/self/task");
  if (!dir) return -1;
  int n = 0;
  struct dirent *d;
  while ((d = readdir(dir)) != NULL)
    if (d->d_name[0] != '.' && task_alive(d->d_name)) n++;
  closedir(dir);
  return n;
}

/* The thread count to compare against: settled, and after one thread has
 * come and gone, so a sanitizer's helper thread (started with the first
 * thread) is already counted. */
static inline void *task_count_nothing(void *arg) { return arg; }
static inline int task_baseline(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, task_count_nothing, NULL) == 0) pthread_join(t, NULL);
  return task_count(); /* the joined helper is not counted (task_alive) */
}

/* Polls count() (bounded by 5 s) until it equals expected; returns the last
 * value seen. Joined threads are never counted (task_alive), so a right
 * count is there at once: the poll covers a kernel that marks an exiting
 * thread late, and the bound only limits how long a wrong count takes to
 * be reported. wait_task_count: every running thread of the process. */
static inline int wait_count(int (*count)(void), int expected) {
  int n = count();
  uint64_t deadline = test_now_ns() + 5000000000u;
  while (n != expected && test_now_ns() < deadline) {
    sched_yield();
    n = count();
  }
  return n;
}
static inline int wait_task_count(int expected) { return wait_count(task_count, expected); }

/* A callback that takes a while without waiting on anything: `rounds`
 * rounds of arithmetic and a yield (so other participants get the
 * processor), about a microsecond each. Widens the window in which a broken
 * executor would return before its callbacks; a correct one passes however
 * long it takes. */
static inline void test_busy_work(unsigned rounds) {
  volatile uint64_t x = 1;
  for (unsigned r = 0; r < rounds; r++) {
    for (unsigned i = 0; i < 256; i++) x = x * 6364136223846793005u + 1442695040888963407u;
    sched_yield();
  }
}

/* Runs check() in a forked child with an alarm of seconds (SIGALRM's
 * default action ends it, so waiting for it cannot hang); returns the
 * child's exit status (0: passed), or 128+signal when it died. */
static inline int run_in_child(int (*check)(void), unsigned seconds) {
  pid_t pid = fork();
  if (pid < 0) return -2;
  if (pid == 0) {
    signal(SIGALRM, SIG_DFL);
    alarm(seconds);
    _exit(check());
  }
  int status = 0;
  while (waitpid(pid, &status, 0) != pid)
    if (errno != EINTR) return -3;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -3;
}


/* ---- executors from stored topologies ------------------------------------ */
#define TEST_TOPOLOGIES TOP_SRCDIR "/tests/topologies/"

/* The resolution of num_threads=threads, affinity none and the given spin
 * on the stored 2-core machine: the executor tests' standard resolution,
 * independent of this machine's topology. Aborts when it fails. */
static inline cpuexec_resolved *test_resolved_spin(uint32_t threads, cpuexec_spin_policy spin, uint64_t budget) {
  cpuexec_topology_options o;
  cpuexec_topology_options_init(&o);
  cpuexec_topology *t = NULL;
  if (cpuexec_topology_load_xml(TEST_TOPOLOGIES "2cores.xml", &o, &t) != 0) {
    fprintf(stderr, "test_resolved_spin: %s\n", cpuexec_error_message());
    abort();
  }
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = (int32_t)threads;
  p.affinity_policy = CPUEXEC_AFFINITY_NONE;
  p.spin_policy = spin;
  p.spin_budget = (spin == CPUEXEC_SPIN_FIXED_ITERATIONS || spin == CPUEXEC_SPIN_FIXED_DURATION) ? budget : 0;
  cpuexec_resolved *r = NULL;
  int rc = cpuexec_policy_resolve(&p, t, &r);
  cpuexec_topology_destroy(t);
  if (rc != 0) {
    fprintf(stderr, "test_resolved_spin: %s\n", cpuexec_error_message());
    abort();
  }
  return r;
}

static inline cpuexec_resolved *test_resolved(uint32_t threads) {
  return test_resolved_spin(threads, CPUEXEC_SPIN_ADAPTIVE, 0);
}

/* An executor for a resolution it alone keeps (the test's reference is dropped). */
static inline cpuexec_executor *test_executor_spin(uint32_t threads, cpuexec_spin_policy spin, uint64_t budget) {
  cpuexec_resolved *r = test_resolved_spin(threads, spin, budget);
  cpuexec_executor *exec = NULL;
  int rc = cpuexec_executor_create(r, &exec);
  cpuexec_resolved_destroy(r);
  if (rc != 0) abort();
  return exec;
}

static inline cpuexec_executor *test_executor(uint32_t threads) {
  return test_executor_spin(threads, CPUEXEC_SPIN_ADAPTIVE, 0);
}

/* ---- adapters (tests/adapters_support.c) ---------------------------------- */
/* An unshared, unpinned executor of `threads` participants (park immediately, so the
 * tests do not burn the shared CI cores between calls). */
typedef struct test_owned_executor {
  cpuexec_resolved *resolved;
  cpuexec_executor *exec;
} test_owned_executor;

int test_executor_create(uint32_t threads, test_owned_executor *out);
void test_executor_destroy(test_owned_executor *t);

/* A pool of `workers` persistent threads; the caller only waits. run_pool
 * waits for every worker, even after one failed, and returns the first
 * non-zero job result. Reusable for any number of runs. */
typedef struct test_pool test_pool;
test_pool *test_pool_create(uint32_t workers);
void test_pool_destroy(test_pool *pool);
int test_pool_run(void *pool, void *ctx, cpuexec_worker_job_fn job);
cpuexec_job_pool test_pool_as_job_pool(test_pool *pool);

/* Counts, per index, how often a callback covered it, and which threads ran
 * callbacks. */
#define TEST_MAX_RANGES 256
typedef struct test_coverage {
  int64_t count;
  atomic_uint *hits;
  atomic_uint callbacks;
  atomic_uint next_range;
  int64_t range_begin[TEST_MAX_RANGES];
  int64_t range_end[TEST_MAX_RANGES];
  pthread_t range_thread[TEST_MAX_RANGES];
  /* Set by a test whose every admitted participant gets a range: each one
   * then waits in its first range for the others (tests/rendezvous.h), so
   * all of them are observed. */
  int wait_for_all;
  _Atomic uint64_t arrived;
} test_coverage;

void test_coverage_init(test_coverage *c, int64_t count);
void test_coverage_free(test_coverage *c);
/* A cpuexec_range_fn recording [begin, end) into the test_coverage ctx. */
int test_coverage_record(void *ctx, int64_t begin, int64_t end);
/* 1 when every index was covered exactly once. */
int test_coverage_exact(const test_coverage *c);
/* Number of distinct threads among the recorded ranges. */
unsigned test_coverage_threads(const test_coverage *c);


/* ---- resolve fixtures ----------------------------------------------------- */
#ifdef TEST_UTIL_RESOLVE
#include "resolve/resolved.h"
#include "topology/topology_internal.h"

#define TOPOLOGIES TEST_TOPOLOGIES

#define NONE CPUEXEC_AFFINITY_NONE
#define PHYS CPUEXEC_AFFINITY_PHYSICAL_CORES
#define PERF CPUEXEC_AFFINITY_PERFORMANCE_CORES
#define SMT CPUEXEC_AFFINITY_PHYSICAL_THEN_SMT
#define EXPLICIT CPUEXEC_AFFINITY_EXPLICIT

/* The stored machines and what their default resolves to. */
static const struct machine {
  const char *dir_or_file; /* a directory is a cgroup fixture holding topology.xml */
  bool fixture;
  uint32_t default_threads;
} machines[] = {
    {"2cores.xml", false, 2},
    {"1core.xml", false, 1},
    {"8cores-smt2.xml", false, 8},
    {"2packages-8cores-smt2.xml", false, 16},
    {"hybrid-8p-smt2-16e.xml", false, 8}, /* performance cores only */
    {"smt4.xml", false, 4},
    {"restricted-siblings.xml", false, 4},
    {"quota-1.5", true, 2}, /* 4 cores capped by ceil(1.5) */
};
#define MACHINES (sizeof machines / sizeof machines[0])

static inline cpuexec_topology *load_machine(const struct machine *m, const char *caller_cpulist) {
  cpuexec_topology_options o;
  cpuexec_topology_options_init(&o);
  o.caller_cpulist = caller_cpulist;
  char xml[512], proc[512], root[512];
  if (m->fixture) {
    snprintf(xml, sizeof xml, TOPOLOGIES "%s/topology.xml", m->dir_or_file);
    snprintf(proc, sizeof proc, TOPOLOGIES "%s/proc-self-cgroup", m->dir_or_file);
    snprintf(root, sizeof root, TOPOLOGIES "%s/cgroup", m->dir_or_file);
    o.proc_self_cgroup = proc;
    o.cgroup_root = root;
  } else {
    snprintf(xml, sizeof xml, TOPOLOGIES "%s", m->dir_or_file);
  }
  cpuexec_topology *t = NULL;
  if (cpuexec_topology_load_xml(xml, &o, &t) != 0)
    fail_msg("%s: %s", m->dir_or_file, cpuexec_error_message());
  return t;
}

static inline const struct machine *machine_named(const char *name) {
  for (size_t i = 0; i < MACHINES; i++)
    if (strcmp(machines[i].dir_or_file, name) == 0)
      return &machines[i];
  fail_msg("no machine %s", name);
  return NULL;
}

static inline cpuexec_policy request(int32_t threads, cpuexec_affinity_policy affinity) {
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = threads;
  p.affinity_policy = affinity;
  return p;
}

static inline void clear_environment(void) {
  unsetenv("CPUEXEC_NUM_THREADS");
  unsetenv("OMP_NUM_THREADS");
  unsetenv("CPUEXEC_POLICY");
}

static inline int setup_environment(void **state) {
  (void)state;
  clear_environment();
  return 0;
}

static inline const cpuexec__processor *find(const cpuexec_topology *t, int32_t id) {
  for (uint32_t i = 0; i < t->processor_count; i++)
    if (t->processors[i].os_index == id)
      return &t->processors[i];
  return NULL;
}

static inline const cpuexec__processor *proc(const cpuexec_topology *t, int32_t id) {
  const cpuexec__processor *p = find(t, id);
  if (p == NULL)
    fail_msg("processor %d is not visible", (int)id);
  return p;
}

static inline bool has_diagnostic(const cpuexec_resolved *r, const char *needle) {
  for (size_t i = 0; i < cpuexec_resolved_diagnostic_count(r); i++)
    if (strstr(cpuexec_resolved_diagnostic(r, i), needle) != NULL)
      return true;
  return false;
}

static inline char *json_of(const cpuexec_resolved *r) {
  int n = cpuexec_resolved_describe(r, CPUEXEC_FORMAT_JSON, NULL, 0);
  assert_true(n > 0);
  char *text = malloc((size_t)n + 1);
  assert_int_equal(cpuexec_resolved_describe(r, CPUEXEC_FORMAT_JSON, text, (size_t)n + 1), n);
  return text;
}

#endif

#endif /* __cplusplus */

#endif
