/* The node budget (src/node/node_budget.h) across real processes: each
 * case forks and execs tests/programs/node_client in a directory of
 * tables of its own (CPUEXEC_NODE_DIR) and with a stored cgroup tree
 * (tests/data/cgroups) as its cgroup, so N is known: v1-half gives 1 CPU,
 * v1-ancestor min(2, visible processors). White-box only for the client's
 * test hooks; this file reads what the clients print. */
#include "support/watchdog.h"

#ifdef _WIN32
TEST_PROGRAM_NOT_ON_WINDOWS("the node budget's table is POSIX shared memory")
#else
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CLIENT TOP_BUILDDIR "/tests/programs/node_client"
#define TREES TOP_SRCDIR "/tests/data/cgroups/"

static char dir[256];

static int make_dir(void **state) {
  test_watchdog_setup(state);
  snprintf(dir, sizeof dir, "%s/cpuexec-node-test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  assert_non_null(mkdtemp(dir));
  assert_int_equal(chmod(dir, 0755), 0);
  return 0;
}

static int remove_dir(void **state) {
  test_watchdog_teardown(state);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

typedef struct client {
  pid_t pid;
  int in;  /* its stdin (closing it ends "hold") */
  FILE *out;
} client;

/* Starts the client with args and "NAME=VALUE" env entries (NULL-ended). */
static client start(const char *const *args, const char *const *env) {
  int in[2], out[2];
  assert_int_equal(pipe(in), 0);
  assert_int_equal(pipe(out), 0);
  client c;
  c.pid = fork();
  assert_true(c.pid >= 0);
  if (c.pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(out[1], 2);
    close(in[1]);
    close(out[0]);
    setenv("CPUEXEC_NODE_DIR", dir, 1);
    unsetenv("MAKEFLAGS");
    unsetenv("CPUEXEC_NODE_BUDGET");
    for (const char *const *e = env; e && *e; e++) putenv((char *)*e);
    const char *argv[8] = {CLIENT};
    for (int i = 0; args[i] && i < 6; i++) argv[i + 1] = args[i];
    execv(CLIENT, (char *const *)argv);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  c.in = in[1];
  c.out = fdopen(out[0], "r");
  return c;
}

/* The next line the client prints ("" at its end). */
static void line_of(client *c, char *buf, size_t size) {
  if (fgets(buf, (int)size, c->out) == NULL) buf[0] = '\0';
  buf[strcspn(buf, "\n")] = '\0';
}

static int finish(client *c) {
  if (c->in >= 0) close(c->in);
  c->in = -1;
  int status;
  waitpid(c->pid, &status, 0);
  fclose(c->out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs a client to its end; its whole output into buf. */
static void run(const char *const *args, const char *const *env, char *buf, size_t size) {
  client c = start(args, env);
  size_t used = 0;
  buf[0] = '\0';
  while (used + 1 < size && fgets(buf + used, (int)(size - used), c.out) != NULL) used += strlen(buf + used);
  assert_int_equal(finish(&c), 0);
}

static const char *const HALF[] = {"NODE_CLIENT_CGROUP_ROOT=" TREES "v1-half", NULL};
static const char *const HALF_RECLAIM[] = {"NODE_CLIENT_CGROUP_ROOT=" TREES "v1-half", "NODE_CLIENT_RECLAIM_NOW=1",
                                           NULL};
static const char *const TWO[] = {"NODE_CLIENT_CGROUP_ROOT=" TREES "v1-ancestor", NULL};

static void table_path(const char *const *env, char *path, size_t size) {
  char out[4096];
  run((const char *[]){"describe", NULL}, env, out, sizeof out);
  const char *p = strstr(out, "path=");
  assert_non_null(p);
  snprintf(path, size, "%.*s", (int)strcspn(p + 5, "\n"), p + 5);
  assert_true(strncmp(path, dir, strlen(dir)) == 0);
}

static void expect_take(const char *const *env, const char *what) {
  char out[256];
  run((const char *[]){"take", NULL}, env, out, sizeof out);
  /* The last line: a refused table's diagnostic (stderr) comes first. */
  size_t n = strlen(out);
  while (n > 1 && out[n - 2] != '\n') n--;
  assert_string_equal(out + (n > 0 ? n - 1 : 0), what);
}

static void two_and_four_processes_share_one_table(void **state) {
  (void)state;
  char out[4096];
  run((const char *[]){"describe", NULL}, HALF, out, sizeof out);
  assert_non_null(strstr(out, "1 CPUs shared"));
  assert_non_null(strstr(out, "cgroup v1 quota 0.5 CPUs"));
  client a = start((const char *[]){"hold", "1", NULL}, HALF);
  char line[256];
  line_of(&a, line, sizeof line);
  assert_string_equal(line, "held 1");
  /* A second process finds the one slot taken; so do three more. */
  for (int i = 0; i < 3; i++) expect_take(HALF, "refused\n");
  assert_int_equal(finish(&a), 0);
  expect_take(HALF, "took\n");
}

static const char *const HALF_LINGER_NOW[] = {"NODE_CLIENT_CGROUP_ROOT=" TREES "v1-half", "NODE_CLIENT_LINGER_NOW=1",
                                              NULL};

/* Sends a line to a "worker" client and returns its answer. */
static void ask(client *c, char *answer, size_t size) {
  assert_int_equal(write(c->in, "?\n", 2), 2);
  line_of(c, answer, size);
}

static void callers_hold_an_implicit_slot(void **state) {
  (void)state;
  /* One CPU: the caller's region takes the slot itself and wakes no worker. */
  client a = start((const char *[]){"caller", "2", NULL}, HALF);
  char line[256];
  line_of(&a, line, sizeof line);
  assert_string_equal(line, "admits 1");
  expect_take(HALF, "refused\n");
  char out[4096], want[128];
  run((const char *[]){"describe", NULL}, HALF, out, sizeof out);
  snprintf(want, sizeof want, "held by: pid %ld: 1 slot (its callers', workers)", (long)a.pid);
  assert_non_null(strstr(out, want));
  /* It opens no more regions: idle once a look finds its beat as the last
   * look saw it (its own, when its region found no room, noted it). */
  expect_take(HALF_LINGER_NOW, "took\n");
  assert_int_equal(finish(&a), 0);
}

static void a_caller_over_the_budget_sends_workers_back(void **state) {
  (void)state;
  client w = start((const char *[]){"worker", NULL}, HALF);
  char line[256];
  line_of(&w, line, sizeof line);
  assert_string_equal(line, "held 1");
  ask(&w, line, sizeof line);
  assert_string_equal(line, "kept");
  /* Another process's caller claims its slot without waiting: over the budget. */
  client c = start((const char *[]){"caller", "2", NULL}, HALF);
  line_of(&c, line, sizeof line);
  assert_string_equal(line, "admits 1 crowded");
  char out[4096], want[160];
  run((const char *[]){"describe", NULL}, HALF, out, sizeof out);
  snprintf(want, sizeof want, "held by: pid %ld: 1 slot (workers); pid %ld: 1 slot (its callers' over the budget, workers)",
           (long)w.pid, (long)c.pid);
  assert_non_null(strstr(out, want));
  ask(&w, line, sizeof line);
  assert_string_equal(line, "gave back");
  expect_take(HALF, "refused\n"); /* no worker joins while a caller is over it */
  assert_int_equal(finish(&c), 0);
  ask(&w, line, sizeof line);
  assert_string_equal(line, "kept"); /* the caller gone: the slot it gave back is free again */
  assert_int_equal(finish(&w), 0);
}

static void a_caller_leaves_room_for_workers(void **state) {
  (void)state;
  char out[4096];
  run((const char *[]){"describe", NULL}, TWO, out, sizeof out);
  unsigned n = 0;
  assert_int_equal(sscanf(out, "%u CPUs shared", &n), 1);
  client a = start((const char *[]){"caller", "4", NULL}, TWO);
  char line[256], want[64];
  line_of(&a, line, sizeof line);
  snprintf(want, sizeof want, "admits %u", n); /* itself and n - 1 workers */
  assert_string_equal(line, want);
  if (n == 2) expect_take(TWO, "took\n");
  assert_int_equal(finish(&a), 0);
}

static void slots_never_over_granted_under_stress(void **state) {
  (void)state;
  char out[4096];
  run((const char *[]){"describe", NULL}, TWO, out, sizeof out);
  unsigned n = 0;
  assert_int_equal(sscanf(out, "%u CPUs shared", &n), 1);
  assert_true(n >= 1 && n <= 2);
  char counter[300];
  snprintf(counter, sizeof counter, "%s/holders", dir);
  int fd = open(counter, O_RDWR | O_CREAT, 0600);
  assert_true(fd >= 0);
  assert_int_equal(ftruncate(fd, 4096), 0);
  close(fd);
  client c[4];
  for (int i = 0; i < 4; i++) c[i] = start((const char *[]){"stress", "4", "3000", counter, NULL}, TWO);
  unsigned most = 0;
  for (int i = 0; i < 4; i++) {
    char line[256];
    line_of(&c[i], line, sizeof line);
    unsigned m = 99;
    assert_int_equal(sscanf(line, "max=%u", &m), 1);
    assert_true(m <= n);
    if (m > most) most = m;
    assert_int_equal(finish(&c[i]), 0);
  }
  assert_true(most >= 1); /* permits were granted at all */
  /* Every slot is back: a fresh process gets one. */
  expect_take(TWO, "took\n");
}

static void killed_holder_slots_come_back(void **state) {
  (void)state;
  for (int reap = 0; reap < 2; reap++) {
    client a = start((const char *[]){"hold", "1", NULL}, HALF);
    char line[256];
    line_of(&a, line, sizeof line);
    assert_string_equal(line, "held 1");
    expect_take(HALF_RECLAIM, "refused\n");
    assert_int_equal(kill(a.pid, SIGKILL), 0);
    int status = 0;
    /* Reaped first, or left a zombie: either way it is dead. */
    if (reap) assert_int_equal(waitpid(a.pid, &status, 0), a.pid);
    else
      while (1) {
        char stat[64], text[512] = "";
        snprintf(stat, sizeof stat, "/proc/%ld/stat", (long)a.pid);
        FILE *f = fopen(stat, "r");
        if (f == NULL) break;
        if (fgets(text, sizeof text, f) == NULL) text[0] = '\0';
        fclose(f);
        const char *p = strrchr(text, ')');
        if (p && p[2] == 'Z') break;
        sched_yield();
      }
    expect_take(HALF_RECLAIM, "took\n");
    if (!reap) waitpid(a.pid, &status, 0);
    close(a.in);
    fclose(a.out);
  }
}

/* Writes value at offset of the table file. */
static void poke(const char *path, off_t offset, const void *value, size_t size) {
  int fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  assert_int_equal(pwrite(fd, value, size, offset), (ssize_t)size);
  close(fd);
}

static void expect_refused(const char *const *env, const char *why) {
  char out[4096];
  run((const char *[]){"describe", NULL}, env, out, sizeof out);
  assert_non_null(strstr(out, why));
  assert_non_null(strstr(out, "the process keeps its own count"));
  assert_non_null(strstr(out, "path=\n"));
  /* The fallback: its own count, so a worker is never refused. */
  expect_take(env, "took\n");
}

static void corrupted_table_is_refused(void **state) {
  (void)state;
  char path[512];
  table_path(HALF, path, sizeof path);
  uint64_t garbage = 0x1234;
  poke(path, 0, &garbage, sizeof garbage);
  expect_refused(HALF, "corrupted: no libcpuexec magic");
  /* A truncated one too. */
  assert_int_equal(truncate(path, 100), 0);
  expect_refused(HALF, "corrupted: its size");
}

static void table_of_another_version_is_refused(void **state) {
  (void)state;
  char path[512];
  table_path(HALF, path, sizeof path);
  uint32_t version = 99;
  poke(path, 8, &version, sizeof version);
  expect_refused(HALF, "another version of the table format: 99");
}

static void table_of_another_user_is_refused(void **state) {
  (void)state;
  char path[512];
  table_path(HALF, path, sizeof path);
  assert_int_equal(chmod(path, 0644), 0);
  expect_refused(HALF, "mode is 644, not 0600");
  assert_int_equal(chmod(path, 0600), 0);
  if (geteuid() != 0) {
    print_message("skipped the other user's file: only root can give a file away (euid %ld)\n", (long)geteuid());
    skip();
  }
  assert_int_equal(chown(path, 65534, 65534), 0);
  expect_refused(HALF, "owned by another user: uid 65534");
}

static void unwritable_directory_falls_back(void **state) {
  (void)state;
  assert_int_equal(chmod(dir, 0555), 0);
  /* Root writes anywhere: its client runs as nobody. */
  const char *const env[] = {"NODE_CLIENT_CGROUP_ROOT=" TREES "v1-half", geteuid() == 0 ? "NODE_CLIENT_UID=65534" : NULL,
                             NULL};
  expect_refused(env, "cannot create table");
  assert_int_equal(chmod(dir, 0755), 0);
}

static void two_cgroups_never_share_a_table(void **state) {
  (void)state;
  char a[512], b[512];
  table_path(HALF, a, sizeof a);
  table_path((const char *const[]){"NODE_CLIENT_CGROUP_ROOT=" TREES "v1-sibling", NULL}, b, sizeof b);
  assert_string_not_equal(a, b);
  /* And each has its own slot: one held in the first leaves the second's. */
  client h = start((const char *[]){"hold", "1", NULL}, HALF);
  char line[256];
  line_of(&h, line, sizeof line);
  assert_string_equal(line, "held 1");
  expect_take((const char *const[]){"NODE_CLIENT_CGROUP_ROOT=" TREES "v1-sibling", NULL}, "took\n");
  assert_int_equal(finish(&h), 0);
}

static void fork_child_holds_nothing(void **state) {
  (void)state;
  char out[4096];
  run((const char *[]){"fork", NULL}, HALF, out, sizeof out);
  assert_non_null(strstr(out, "child held=0"));
  assert_non_null(strstr(out, "parent held=1"));
}

static void resized_quota_is_seen_without_a_restart(void **state) {
  (void)state;
#if CPUEXEC_OS_BACKEND_POSIX
  print_message("skipped: the portable POSIX OS backend reads no cgroup, so no quota is followed while running\n");
  skip();
#endif
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
    print_message("skipped: one processor: a quota of 1.5 CPUs gives the same budget as 0.5\n");
    skip();
  }
  /* A copy of the half-CPU tree this case may change, as docker update
   * --cpus changes a live one. */
  char cmd[1200], root[400], quota[600], env_root[440];
  snprintf(root, sizeof root, "%s/tree", dir);
  snprintf(cmd, sizeof cmd, "cp -r '%sv1-half' '%s'", TREES, root);
  assert_int_equal(system(cmd), 0);
  snprintf(env_root, sizeof env_root, "NODE_CLIENT_CGROUP_ROOT=%s", root);
  const char *const env[] = {env_root, "NODE_CLIENT_REFRESH_NOW=1", NULL};
  char out[4096];
  run((const char *[]){"describe", NULL}, env, out, sizeof out);
  assert_non_null(strstr(out, "1 CPUs shared"));
  snprintf(quota, sizeof quota, "%s/sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", root);
  FILE *f = fopen(quota, "w");
  assert_non_null(f);
  fputs("150000\n", f);
  assert_int_equal(fclose(f), 0);
  /* A worker's give (here the client's one take and give) re-reads it. */
  expect_take(env, "took\n");
  run((const char *[]){"describe", NULL}, env, out, sizeof out);
  assert_non_null(strstr(out, "2 CPUs shared"));
}

/* Writes text to the file at root/rel. */
static void write_tree_file(const char *root, const char *rel, const char *text) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static void throttling_since_joining_is_counted(void **state) {
  (void)state;
  /* A copy of the half-CPU tree, its cpu.stat at 7 of 40 periods. */
  char cmd[1200], root[400], env_root[440];
  snprintf(root, sizeof root, "%s/throttled", dir);
  snprintf(cmd, sizeof cmd, "cp -r '%sv1-half' '%s'", TREES, root);
  assert_int_equal(system(cmd), 0);
  snprintf(env_root, sizeof env_root, "NODE_CLIENT_CGROUP_ROOT=%s", root);
  const char *const env[] = {env_root, NULL};
  client c = start((const char *[]){"describe-lines", NULL}, env);
  char line[4096];
  line_of(&c, line, sizeof line);
  assert_non_null(strstr(line, "; the quota throttled the cgroup in 0 of 0 periods since this process joined (0.0 ms; "));
  assert_non_null(strstr(line, "/job/cpu.stat)"));
  /* The kernel counts 10 more periods, 3 of them throttled, 4.5 ms. */
  write_tree_file(root, "sys/fs/cgroup/cpu,cpuacct/job/cpu.stat",
                  "nr_periods 50\nnr_throttled 10\nthrottled_time 17000000\n");
  assert_int_equal(write(c.in, "\n", 1), 1);
  line_of(&c, line, sizeof line);
  assert_non_null(strstr(line, "in 3 of 10 periods since this process joined (4.5 ms; "));
  /* Counts below the ones at joining: another cgroup's quota now, shown whole. */
  write_tree_file(root, "sys/fs/cgroup/cpu,cpuacct/job/cpu.stat", "nr_periods 5\nnr_throttled 1\nthrottled_time 0\n");
  assert_int_equal(write(c.in, "\n", 1), 1);
  line_of(&c, line, sizeof line);
  assert_non_null(strstr(line, "in 1 of 5 periods since the cgroup was made (0.0 ms; "));
  assert_int_equal(finish(&c), 0);
  /* The host's scope has no quota to count. */
  char out[4096];
  run((const char *[]){"describe", NULL}, (const char *const[]){env_root, "CPUEXEC_NODE_BUDGET=host", NULL}, out,
      sizeof out);
  assert_null(strstr(out, "throttled"));
}

/* The policy's node_budget key (cpuexec/policy.h): the first pool that
 * names a scope sets the process's, before CPUEXEC_NODE_BUDGET; a later
 * pool that names the other one shares it, and the description says so. */
static void policy_key_sets_the_scope(void **state) {
  (void)state;
  char out[4096];
  run((const char *[]){"pool", "node_budget=host", NULL}, HALF, out, sizeof out);
  assert_non_null(strstr(out, "CPUs shared by this user's processes in the whole host"));
  const char *const half_off[] = {"NODE_CLIENT_CGROUP_ROOT=" TREES "v1-half", "CPUEXEC_NODE_BUDGET=off", NULL};
  run((const char *[]){"pool", "node_budget=cgroup", NULL}, half_off, out, sizeof out);
  assert_non_null(strstr(out, "1 CPUs shared by this user's processes in v1:"));
  run((const char *[]){"pool", "node_budget=host", "node_budget=cgroup", NULL}, HALF, out, sizeof out);
  assert_non_null(strstr(out, "CPUs shared by this user's processes in the whole host"));
  assert_non_null(strstr(out, "; a pool asked for node_budget=cgroup, and this process shares the whole host's budget"));
  /* The variable's choice, then a pool that names the same: nothing to say. */
  const char *const half_host[] = {"NODE_CLIENT_CGROUP_ROOT=" TREES "v1-half", "CPUEXEC_NODE_BUDGET=host", NULL};
  run((const char *[]){"pool", "num_threads=2", "node_budget=host", NULL}, half_host, out, sizeof out);
  assert_non_null(strstr(out, "the whole host"));
  assert_null(strstr(out, "a pool asked"));
  /* A pool out of the budget asks for no scope. */
  run((const char *[]){"pool", "node_budget=off", "node_budget=host", NULL}, HALF, out, sizeof out);
  assert_non_null(strstr(out, "the whole host"));
}

static void off_and_host_scope(void **state) {
  (void)state;
  char out[4096];
  run((const char *[]){"describe", NULL}, (const char *const[]){"CPUEXEC_NODE_BUDGET=off", NULL}, out, sizeof out);
  assert_non_null(strstr(out, "off (CPUEXEC_NODE_BUDGET=off)"));
  run((const char *[]){"describe", NULL}, (const char *const[]){"CPUEXEC_NODE_BUDGET= host ", NULL}, out, sizeof out);
  assert_non_null(strstr(out, "the whole host"));
  run((const char *[]){"describe", NULL}, (const char *const[]){"CPUEXEC_NODE_BUDGET=sometimes", NULL}, out,
      sizeof out);
  assert_non_null(strstr(out, "CPUEXEC_NODE_BUDGET: \"sometimes\" is not off, on, cgroup or host"));
}

static void broken_jobservers_fall_back(void **state) {
  (void)state;
  static const char *const cases[][2] = {
      {"MAKEFLAGS= -j2 --jobserver-auth=97,98", "its descriptors are closed"},
      {"MAKEFLAGS=-j2 --jobserver-auth=fifo:/nonexistent/fifo", "the fifo cannot be opened"},
      {"MAKEFLAGS=-j2 --jobserver-auth=three,four", "malformed"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char out[4096];
    run((const char *[]){"describe", NULL}, (const char *const[]){cases[i][0], "CPUEXEC_NODE_BUDGET=off", NULL}, out,
        sizeof out);
    assert_non_null(strstr(out, cases[i][1]));
    assert_non_null(strstr(out, "the process keeps its own count"));
    assert_null(strstr(out, "make's jobserver ("));
  }
}

/* A case in a fresh directory of tables, under the watchdog. */
#define NODE_CASE(f) {#f, f, make_dir, remove_dir, (void *)#f}

int main(void) {
  const struct CMUnitTest tests[] = {
      NODE_CASE(two_and_four_processes_share_one_table),
      NODE_CASE(callers_hold_an_implicit_slot),
      NODE_CASE(a_caller_over_the_budget_sends_workers_back),
      NODE_CASE(a_caller_leaves_room_for_workers),
      NODE_CASE(slots_never_over_granted_under_stress),
      NODE_CASE(killed_holder_slots_come_back),
      NODE_CASE(corrupted_table_is_refused),
      NODE_CASE(table_of_another_version_is_refused),
      NODE_CASE(table_of_another_user_is_refused),
      NODE_CASE(unwritable_directory_falls_back),
      NODE_CASE(two_cgroups_never_share_a_table),
      NODE_CASE(fork_child_holds_nothing),
      NODE_CASE(resized_quota_is_seen_without_a_restart),
      NODE_CASE(throttling_since_joining_is_counted),
      NODE_CASE(policy_key_sets_the_scope),
      NODE_CASE(off_and_host_scope),
      NODE_CASE(broken_jobservers_fall_back),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
