/* The OMPT tool among other tools, one process per case.
 *
 * Each case runs tests/programs/openmp_scenario (or its APP_TOOL build) with an
 * environment and checks what it printed: detection status, counts, and
 * what a probe tool loaded through OMP_TOOL_LIBRARIES saw. In every case
 * the regions in callbacks stay inline (max_team=1); what changes is who
 * sees them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/test_util.h"

#include <cpuexec.h>

#define SCENARIO TOP_BUILDDIR "/tests/programs/openmp_scenario"
#define SCENARIO_APP_TOOL TOP_BUILDDIR "/tests/programs/openmp_scenario_apptool"
#define SCENARIO_LINKED_TOOL TOP_BUILDDIR "/tests/programs/openmp_scenario_linkedtool"
#define PROBE TOP_BUILDDIR "/tests/programs/.libs/ompt_probe_tool.so"
#define SCENARIO_LATE TOP_BUILDDIR "/tests/programs/openmp_scenario_late"
#define LIBCPUEXEC TOP_BUILDDIR "/.libs/libcpuexec.so"

typedef struct run_output {
  char text[4096];
} run_output;

/* Runs program with the NULL-terminated "NAME=VALUE" list added to a clean
 * OpenMP environment; returns its stdout. */
static void run_with(const char *program, const char *argument, const char *const *env, run_output *out) {
  int pipefd[2];
  assert_int_equal(pipe(pipefd), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(pipefd[1], 1);
    close(pipefd[0]);
    unsetenv("OMP_TOOL");
    unsetenv("OMP_TOOL_LIBRARIES");
    unsetenv("CPUEXEC_OMPT");
    unsetenv("APP_TOOL_CHAIN");
    unsetenv("PROBE_PATH");
    for (const char *const *e = env; *e != NULL; e++)
      putenv((char *)*e);
    execl(program, program, argument, (char *)NULL);
    _exit(127);
  }
  close(pipefd[1]);
  size_t used = 0;
  ssize_t n;
  while ((n = read(pipefd[0], out->text + used, sizeof out->text - 1 - used)) > 0)
    used += (size_t)n;
  out->text[used] = '\0';
  close(pipefd[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

static void run(const char *program, const char *const *env, run_output *out) {
  run_with(program, NULL, env, out);
}

static long value(const run_output *out, const char *key) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "%s=", key);
  const char *at = strstr(out->text, pattern);
  if (at == NULL)
    fail_msg("no %s in output:\n%s", key, out->text);
  return strtol(at + strlen(pattern), NULL, 10);
}

typedef struct tool_case {
  const char *name;
  const char *program;
  const char *env[4];
  cpuexec_openmp_detection detection;
  long in_callbacks; /* what our tool counted */
  long chained;
  long probe_begins; /* -1: no probe */
  long app_tool_called; /* -1: no app tool */
} tool_case;

static const tool_case cases[] = {
    {"linked, nothing else: live, every region counted", SCENARIO, {NULL}, CPUEXEC_OPENMP_LIVE, 8, 0, -1, -1},
    {"OMP_TOOL=disabled: no tool, still inline", SCENARIO, {"OMP_TOOL=disabled", NULL},
     CPUEXEC_OPENMP_TOOL_DISABLED, 0, 0, -1, -1},
    {"CPUEXEC_OMPT=off: declined, still inline", SCENARIO, {"CPUEXEC_OMPT=off", NULL}, CPUEXEC_OPENMP_DECLINED, 0,
     0, -1, -1},
    {"OMP_TOOL_LIBRARIES probe: both tools see every region", SCENARIO,
     {"OMP_TOOL_LIBRARIES=" PROBE, NULL}, CPUEXEC_OPENMP_LIVE, 8, 1, 8, -1},
    {"CPUEXEC_OMPT=off with a probe: the probe takes our place", SCENARIO,
     {"OMP_TOOL_LIBRARIES=" PROBE, "CPUEXEC_OMPT=off", NULL}, CPUEXEC_OPENMP_DECLINED, 0, 0, 8, -1},
    {"a tool linked after libcpuexec: found with RTLD_NEXT, both see every region", SCENARIO_LINKED_TOOL,
     {"PROBE_PATH=" PROBE, NULL}, CPUEXEC_OPENMP_LIVE, 8, 1, 8, -1},
    {"the program's own ompt_start_tool, not chaining: another tool took precedence", SCENARIO_APP_TOOL, {NULL},
     CPUEXEC_OPENMP_OTHER_TOOL, 0, 0, -1, 1},
    {"the program's own ompt_start_tool chaining with RTLD_NEXT: live", SCENARIO_APP_TOOL,
     {"APP_TOOL_CHAIN=1", NULL}, CPUEXEC_OPENMP_LIVE, 8, 0, -1, 1},
};

static void each_tool_arrangement_keeps_regions_inline_and_says_who_sees_them(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const tool_case *c = &cases[i];
    static run_output out;
    run(c->program, c->env, &out);
    print_message("case: %s\n%s", c->name, out.text);
    assert_int_equal(value(&out, "rc"), 0);
    assert_int_equal(value(&out, "max_team"), 1);
    assert_int_equal(value(&out, "detection"), c->detection);
    assert_int_equal(value(&out, "live"), c->detection == CPUEXEC_OPENMP_LIVE);
    assert_int_equal(value(&out, "in_callbacks"), c->in_callbacks);
    assert_int_equal(value(&out, "inline"), c->in_callbacks);
    assert_int_equal(value(&out, "chained"), c->chained);
    if (c->probe_begins >= 0) {
      assert_int_equal(value(&out, "probe_initialized"), 1);
      assert_int_equal(value(&out, "probe_parallel_begins"), c->probe_begins);
      assert_int_equal(value(&out, "probe_parallel_ends"), c->probe_begins); /* its data slot survived */
    }
    if (c->app_tool_called >= 0)
      assert_int_equal(value(&out, "app_tool_called"), c->app_tool_called);
  }
}

static void openmp_started_before_libcpuexec_was_loaded_is_said(void **state) {
  (void)state;
  static run_output out;
  const char *const no_env[] = {NULL};
  run_with(SCENARIO_LATE, LIBCPUEXEC, no_env, &out);
  print_message("%s", out.text);
  assert_int_equal(value(&out, "detection"), CPUEXEC_OPENMP_STARTED_BEFORE);
  assert_int_equal(value(&out, "live"), 0);
  assert_non_null(strstr(out.text, "before libcpuexec was loaded"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(each_tool_arrangement_keeps_regions_inline_and_says_who_sees_them),
      cmocka_unit_test(openmp_started_before_libcpuexec_was_loaded_is_said),
  };
  return cmocka_run_group_tests_name("openmp_tools", tests, NULL, NULL);
}
