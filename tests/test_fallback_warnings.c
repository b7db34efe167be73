/* The exact text of every fallback warning and of the errors next to them
 * (issue 25): a warning names the input that was wrong, and appears only
 * when the fallback it announces is taken. Each case runs this program
 * again (--child NAME) with its environment, its stderr read through a
 * pipe, and compares that text and the calls' results. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifndef _WIN32
#include <sys/wait.h>
#endif
#include <cmocka.h>

#include <cpuexec.h>
#include <pthreadpool.h>

#include <cpuexec/compat/parallel_for.h>
#include "support/test_util.h"

static void nothing(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  (void)begin;
  (void)end;
}

/* ---- the children: exit 0 when the calls returned what they should ----- */

static int pool_of(size_t n, size_t want_threads) {
  pthreadpool_t pool = pthreadpool_create(n);
  if (pool == NULL) return fprintf(stdout, "NULL: %s\n", cpuexec_error_message()), 10;
  size_t got = pthreadpool_get_threads_count(pool);
  pthreadpool_destroy(pool);
  return got == want_threads ? 0 : 11;
}

static int child_pool_unplaceable(void) { return pool_of(2, 2); }
static int child_pool_malformed(void) { return pool_of(2, 2); }

static int child_pool_bad_thread_variable(void) {
  cpuexec_error_report(CPUEXEC_EINVAL, "stale message");
  pthreadpool_t pool = pthreadpool_create(0);
  if (pool != NULL) return 20;
  printf("%s\n", cpuexec_error_message());
  return 0;
}

static int child_legacy_unplaceable(void) {
  if (ParallelFor(100, 1, NULL, nothing) != 0) return 30;
  return ParallelForThreadCount() >= 1 ? 0 : 31;
}

static int child_legacy_bad_thread_variable(void) {
  cpuexec_error_report(CPUEXEC_EINVAL, "stale message");
  if (ParallelFor(100, 1, NULL, nothing) == 0) return 40; /* runs serially, says why */
  printf("%s\n", cpuexec_error_message());
  return 0;
}

static int child_session_unplaceable(void) {
  cpuexec_session *s = NULL;
  if (cpuexec_session_create(NULL, &s) == 0) return 50;
  printf("%s\n", cpuexec_error_message());
  const cpuexec_resolved *r = NULL;
  if (cpuexec_policy_resolve_default(&r) == 0) return 51;
  printf("%s\n", cpuexec_error_message());
  return 0;
}

static const struct {
  const char *name;
  int (*run)(void);
} children[] = {
    {"pool_unplaceable", child_pool_unplaceable},
    {"pool_malformed", child_pool_malformed},
    {"pool_bad_thread_variable", child_pool_bad_thread_variable},
    {"legacy_unplaceable", child_legacy_unplaceable},
    {"legacy_bad_thread_variable", child_legacy_bad_thread_variable},
    {"session_unplaceable", child_session_unplaceable},
};

/* ---- the parent: runs a child with one variable set, reads its output --- */

typedef struct output {
  int status;
  char out[2048], err[2048];
} output;

#ifndef _WIN32
static void read_all(int fd, char *buf, size_t size) {
  size_t len = 0;
  ssize_t n;
  while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0) len += (size_t)n;
  buf[len] = '\0';
}
#endif

#ifdef _WIN32
/* No fork: stdout and stderr go to two temporary files for the spawn. */
static void read_file(FILE *f, char *buf, size_t size) {
  rewind(f);
  size_t len = fread(buf, 1, size - 1, f);
  buf[len] = '\0';
}

static output *run_child(const char *name, const char *variable, const char *value) {
  static output o;
  memset(&o, 0, sizeof o);
  static const char *const unset[] = {"CPUEXEC_POLICY", "CPUEXEC_NUM_THREADS", "OMP_NUM_THREADS", NULL};
  char self[4096];
  assert_int_equal(test_self_path(self, sizeof self), 0);
  const char *argv[] = {self, "--child", name, NULL};
  FILE *out = tmpfile(), *err = tmpfile();
  assert_non_null(out);
  assert_non_null(err);
  fflush(NULL);
  int saved_out = _dup(1), saved_err = _dup(2);
  _dup2(_fileno(out), 1);
  _dup2(_fileno(err), 2);
  o.status = test_spawn(self, argv, unset, variable, value);
  _dup2(saved_out, 1);
  _dup2(saved_err, 2);
  _close(saved_out);
  _close(saved_err);
  read_file(out, o.out, sizeof o.out);
  read_file(err, o.err, sizeof o.err);
  fclose(out);
  fclose(err);
  printf("# %s, %s=%s: exit %d\n#   stdout: %s#   stderr: %s\n", name, variable, value, o.status, o.out, o.err);
  return &o;
}
#else
static output *run_child(const char *name, const char *variable, const char *value) {
  static output o;
  memset(&o, 0, sizeof o);
  int out[2], err[2];
  assert_int_equal(pipe(out), 0);
  assert_int_equal(pipe(err), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(out[0]);
    close(err[0]);
    unsetenv("CPUEXEC_POLICY");
    unsetenv("CPUEXEC_NUM_THREADS");
    unsetenv("OMP_NUM_THREADS");
    setenv(variable, value, 1);
    execl("/proc/self/exe", "test_fallback_warnings", "--child", name, (char *)NULL);
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  /* The child writes little; read stderr after stdout reaches its end. */
  read_all(out[0], o.out, sizeof o.out);
  read_all(err[0], o.err, sizeof o.err);
  close(out[0]);
  close(err[0]);
  int status;
  while (waitpid(pid, &status, 0) != pid) {
  }
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  printf("# %s, %s=%s: exit %d\n#   stdout: %s#   stderr: %s\n", name, variable, value, o.status, o.out, o.err);
  return &o;
}
#endif

static void assert_starts_ends(const char *text, const char *start, const char *end) {
  size_t n = strlen(text), s = strlen(start), e = strlen(end);
  if (n < s + e || strncmp(text, start, s) != 0 || strcmp(text + n - e, end) != 0)
    fail_msg("\"%s\" is not \"%s...%s\"", text, start, end);
}

#define UNPLACEABLE "affinity_policy=explicit,cpu_set=1023"

static void pthreadpool_names_the_policy_it_cannot_place(void **state) {
  (void)state;
  output *o = run_child("pool_unplaceable", "CPUEXEC_POLICY", UNPLACEABLE);
  assert_int_equal(o->status, 0);
  assert_starts_ends(o->err,
                     "libcpuexec-pthreadpool: pthreadpool_create(2): CPUEXEC_POLICY: cpu_set: processor 1023 is not "
                     "visible to the process (visible: ",
                     "); using the default policy (unpinned) with this thread count, as pthreadpool would\n");
}

static void pthreadpool_names_a_malformed_policy(void **state) {
  (void)state;
  output *o = run_child("pool_malformed", "CPUEXEC_POLICY", "num_threads=two");
  assert_int_equal(o->status, 0);
  assert_starts_ends(o->err, "libcpuexec-pthreadpool: pthreadpool_create(2): CPUEXEC_POLICY: num_threads: ",
                     "; using the default policy (unpinned) with this thread count, as pthreadpool would\n");
}

static void pthreadpool_fails_on_a_bad_thread_variable_without_promising_a_fallback(void **state) {
  (void)state;
  output *o = run_child("pool_bad_thread_variable", "CPUEXEC_NUM_THREADS", "9999999999");
  assert_int_equal(o->status, 0);
  assert_string_equal(o->err, "");
  assert_starts_ends(o->out, "CPUEXEC_NUM_THREADS: \"9999999999\" is too large; ", "\n");
}

static void the_legacy_pool_names_the_policy_it_runs_unpinned(void **state) {
  (void)state;
  output *o = run_child("legacy_unplaceable", "CPUEXEC_POLICY", UNPLACEABLE);
  assert_int_equal(o->status, 0);
  assert_starts_ends(o->err,
                     "libcpuexec: the default pool: CPUEXEC_POLICY: cpu_set: processor 1023 is not visible to the "
                     "process (visible: ",
                     "); it runs unpinned\n");
}

static void the_legacy_pool_does_not_blame_placement_for_a_bad_thread_variable(void **state) {
  (void)state;
  output *o = run_child("legacy_bad_thread_variable", "CPUEXEC_NUM_THREADS", "9999999999");
  assert_int_equal(o->status, 0);
  assert_string_equal(o->err, "");
  assert_starts_ends(o->out, "CPUEXEC_NUM_THREADS: \"9999999999\" is too large; ", "\n");
}

static void sessions_and_the_default_name_the_variable(void **state) {
  (void)state;
  output *o = run_child("session_unplaceable", "CPUEXEC_POLICY", UNPLACEABLE);
  assert_int_equal(o->status, 0);
  assert_string_equal(o->err, "");
  /* Two lines, each naming the variable. */
  char *second = strchr(o->out, '\n');
  assert_non_null(second);
  *second++ = '\0';
  assert_starts_ends(o->out, "CPUEXEC_POLICY: cpu_set: processor 1023 is not visible to the process (visible: ", ")");
  assert_starts_ends(second, "CPUEXEC_POLICY: cpu_set: processor 1023 is not visible to the process (visible: ", ")\n");
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--child") == 0) {
    for (size_t i = 0; i < sizeof children / sizeof children[0]; i++)
      if (strcmp(argv[2], children[i].name) == 0) return children[i].run();
    return 99;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pthreadpool_names_the_policy_it_cannot_place),
      cmocka_unit_test(pthreadpool_names_a_malformed_policy),
      cmocka_unit_test(pthreadpool_fails_on_a_bad_thread_variable_without_promising_a_fallback),
      cmocka_unit_test(the_legacy_pool_names_the_policy_it_runs_unpinned),
      cmocka_unit_test(the_legacy_pool_does_not_blame_placement_for_a_bad_thread_variable),
      cmocka_unit_test(sessions_and_the_default_name_the_variable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
