/* The process's cgroup CPU limits (src/topology/cgroup_limits.h): v1 and
 * v2 quotas, ancestors included, and the cpuset, from the stored trees of
 * tests/data/cgroups; then a real v1 or v2 cgroup of half a CPU when the
 * test runs as root (skipped with its reason otherwise), read by the
 * library and shown by the live topology. */
#include "support/watchdog.h"

#ifdef _WIN32
TEST_PROGRAM_NOT_ON_WINDOWS("cgroups are Linux's")
#else
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cpuexec.h>

#include "topology/cgroup_limits.h"

#define TREES TOP_SRCDIR "/tests/data/cgroups/"

static cpuexec__cgroup_limits read_tree(const char *name, int *rc) {
  cpuexec__cgroup_limits l;
  char root[1024];
  snprintf(root, sizeof root, "%s%s", TREES, name);
  *rc = cpuexec__cgroup_limits_read(root, &l);
  return l;
}

static void v1_quota_of_the_process_cgroup(void **state) {
  (void)state;
  int rc;
  cpuexec__cgroup_limits l = read_tree("v1-half", &rc);
  assert_int_equal(rc, 0);
  assert_true(l.quota == 0.5);
  assert_int_equal(l.quota_version, 1);
  assert_non_null(strstr(l.quota_file, "cpu,cpuacct/job/cpu.cfs_quota_us"));
  assert_non_null(strstr(l.identity, "v1:"));
  assert_non_null(strstr(l.identity, "/sys/fs/cgroup/cpu,cpuacct/job"));
  assert_int_equal(l.cpuset_count, 8);
  /* The cgroup's cpu.stat, v1's names (throttled_time in ns). */
  assert_true(l.periods == 40 && l.throttled_periods == 7 && l.throttled_ns == 12500000);
  assert_non_null(strstr(l.throttle_file, "cpu,cpuacct/job/cpu.stat"));
  /* Rounded up as the resolver rounds, never below one. */
  assert_int_equal(cpuexec__cgroup_limits_cpus(&l, 16), 1);
}

static void v1_ancestor_with_the_smaller_quota_wins(void **state) {
  (void)state;
  int rc;
  cpuexec__cgroup_limits l = read_tree("v1-ancestor", &rc);
  assert_int_equal(rc, 0);
  assert_true(l.quota == 1.5);
  assert_non_null(strstr(l.quota_file, "/cpu/outer/cpu.cfs_quota_us"));
  size_t n = strlen(l.identity);
  assert_true(n > 6 && strcmp(l.identity + n - 6, "/outer") == 0);
  assert_int_equal(cpuexec__cgroup_limits_cpus(&l, 16), 2);
  assert_int_equal(cpuexec__cgroup_limits_cpus(&l, 1), 1);
  /* No cpu.stat: throttling unknown, and no error. */
  assert_string_equal(l.throttle_file, "");
  assert_true(l.periods == 0 && l.throttled_periods == 0 && l.throttled_ns == 0);
}

static void v1_container_mount_shows_its_cgroup_as_root(void **state) {
  (void)state;
  int rc;
  cpuexec__cgroup_limits l = read_tree("v1-container", &rc);
  assert_int_equal(rc, 0);
  assert_true(l.quota == 2);
  assert_non_null(strstr(l.quota_file, "sys/fs/cgroup/cpu/cpu.cfs_quota_us"));
  /* A cpu.stat without its counts only informs: unknown, not an error. */
  assert_string_equal(l.throttle_file, "");
  assert_true(l.periods == 0 && l.throttled_periods == 0 && l.throttled_ns == 0);
}

static void v2_ancestor_quota_and_cpuset(void **state) {
  (void)state;
  int rc;
  cpuexec__cgroup_limits l = read_tree("v2-nested", &rc);
  assert_int_equal(rc, 0);
  assert_true(l.quota == 0.5);
  assert_int_equal(l.quota_version, 2);
  assert_non_null(strstr(l.quota_file, "/sys/fs/cgroup/a/cpu.max"));
  assert_int_equal(l.cpuset_count, 4);
  assert_non_null(strstr(l.cpuset_file, "a/b/cpuset.cpus.effective"));
  /* The cpu.stat of the cgroup whose quota won (a), not the process's own
   * (b); v2's throttled_usec in ns. */
  assert_true(l.periods == 25 && l.throttled_periods == 5 && l.throttled_ns == 3200000);
  assert_non_null(strstr(l.throttle_file, "/sys/fs/cgroup/a/cpu.stat"));
}

static void no_quota_the_cpuset_caps(void **state) {
  (void)state;
  int rc;
  cpuexec__cgroup_limits l = read_tree("hybrid", &rc);
  assert_int_equal(rc, 0);
  assert_true(l.quota == 0);
  assert_int_equal(l.quota_version, 0);
  assert_string_equal(l.quota_file, "");
  assert_int_equal(l.cpuset_count, 2);
  assert_int_equal(cpuexec__cgroup_limits_cpus(&l, 8), 2);
  assert_non_null(strstr(l.identity, "cpuset:"));
  /* No tree at all (no /proc): no limit, the host's processors. */
  l = read_tree("no-such-tree", &rc);
  assert_int_equal(rc, 0);
  assert_string_equal(l.identity, "host");
  assert_int_equal(cpuexec__cgroup_limits_cpus(&l, 3), 3);
}

static void two_cgroups_have_two_identities(void **state) {
  (void)state;
  int rc;
  cpuexec__cgroup_limits a = read_tree("v1-half", &rc), b = read_tree("v1-sibling", &rc);
  assert_int_equal(rc, 0);
  assert_true(a.quota == b.quota);
  assert_string_not_equal(a.identity, b.identity);
}

static void malformed_v1_quota_names_the_file(void **state) {
  (void)state;
  int rc;
  cpuexec__cgroup_limits l = read_tree("v1-malformed", &rc);
  assert_int_equal(rc, CPUEXEC_ETOPOLOGY);
  assert_non_null(strstr(cpuexec_error_message(), "v1-malformed/sys/fs/cgroup/cpu/x/cpu.cfs_quota_us"));
  assert_non_null(strstr(cpuexec_error_message(), "\"half\""));
  assert_true(l.quota == 0);
}

/* ---- a real cgroup -------------------------------------------------------- */

static bool write_text(const char *file, const char *text) {
  int fd = open(file, O_WRONLY);
  if (fd < 0) return false;
  bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
  return close(fd) == 0 && ok;
}

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* The process's path in the hierarchy whose /proc/self/cgroup controllers
 * field is exactly controllers ("" for v2). */
static bool own_cgroup(const char *controllers, char *path, size_t size) {
  FILE *f = fopen("/proc/self/cgroup", "r");
  if (f == NULL) return false;
  char line[4096];
  bool found = false;
  while (!found && fgets(line, sizeof line, f) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c2 == NULL) continue;
    *c2 = '\0';
    if (strcmp(c1 + 1, controllers) == 0) found = snprintf(path, size, "%s", c2 + 1) < (int)size;
  }
  fclose(f);
  return found;
}

/* Moves this process into mount/name with quota text written to file, reads
 * the limits, runs until the quota throttles it, and moves it back; the
 * cgroup is removed. */
static void half_cpu_in(const char *mount, const char *own, const char *file, const char *quota, int version) {
  char dir[1024], procs[1100], back[1100], qfile[1100];
  snprintf(dir, sizeof dir, "%s/cpuexec-test-%ld", mount, (long)getpid());
  snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
  snprintf(back, sizeof back, "%s%s/cgroup.procs", mount, strcmp(own, "/") == 0 ? "" : own);
  snprintf(qfile, sizeof qfile, "%s/%s", dir, file);
  if (mkdir(dir, 0755) != 0) {
    /* A container's cgroup mount is often read-only, even for root. */
    print_message("skipped: cannot make the cgroup %s: %s\n", dir, strerror(errno));
    skip();
  }
  char pid[32];
  snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
  if (!write_text(qfile, quota) || !write_text(procs, pid)) {
    int e = errno;
    rmdir(dir);
    print_message("skipped: cannot set a quota in %s or move this process there: %s\n", dir, strerror(e));
    skip();
  }
  bool moved = true;
  cpuexec__cgroup_limits l;
  int rc = moved ? cpuexec__cgroup_limits_read(NULL, &l) : -1;
  cpuexec_topology *t = NULL;
  double shown = moved && cpuexec_topology_load(NULL, &t) == 0 ? cpuexec_topology_cpu_quota(t) : -1;
  cpuexec_topology_destroy(t);
  /* Busy past half a CPU, the process is throttled within a period or
   * two: the kernel's count moves (the watchdog names this case if not). */
  cpuexec__cgroup_limits busy = l;
  while (rc == 0 && busy.throttle_file[0] != '\0' && busy.throttled_periods == l.throttled_periods &&
         cpuexec__cgroup_limits_read(NULL, &busy) == 0) {
  }
  bool returned = write_text(back, pid);
  assert_int_equal(rmdir(dir), 0);
  assert_true(moved && returned);
  assert_int_equal(rc, 0);
  assert_true(l.quota == 0.5);
  assert_int_equal(l.quota_version, version);
  assert_non_null(strstr(l.quota_file, dir));
  assert_true(shown == 0.5);
  assert_non_null(strstr(l.throttle_file, dir));
  assert_true(busy.throttled_periods > l.throttled_periods && busy.periods > l.periods && busy.throttled_ns > 0);
}

static void real_cgroup_of_half_a_cpu(void **state) {
  (void)state;
#if CPUEXEC_OS_BACKEND_POSIX
  print_message("skipped: the portable POSIX OS backend reads no cgroup\n");
  skip();
#endif
  if (geteuid() != 0) {
    print_message("skipped: a cgroup is made by root only (euid %ld)\n", (long)geteuid());
    skip();
  }
  static const char *const v1_mounts[][2] = {{"/sys/fs/cgroup/cpu", "cpu"},
                                             {"/sys/fs/cgroup/cpu,cpuacct", "cpu,cpuacct"}};
  char own[1024];
  for (size_t i = 0; i < 2; i++) {
    char quota[1100];
    snprintf(quota, sizeof quota, "%s/cpu.cfs_quota_us", v1_mounts[i][0]);
    if (exists(quota) && own_cgroup(v1_mounts[i][1], own, sizeof own)) {
      half_cpu_in(v1_mounts[i][0], own, "cpu.cfs_quota_us", "50000", 1);
      return;
    }
  }
  char control[256] = "";
  FILE *f = fopen("/sys/fs/cgroup/cgroup.subtree_control", "r");
  if (f != NULL) {
    if (fgets(control, sizeof control, f) == NULL) control[0] = '\0';
    fclose(f);
  }
  if (strstr(control, "cpu") != NULL && own_cgroup("", own, sizeof own)) {
    half_cpu_in("/sys/fs/cgroup", own, "cpu.max", "50000 100000", 2);
    return;
  }
  print_message("skipped: no cgroup v1 cpu mount and no cgroup v2 root with the cpu controller enabled\n");
  skip();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(v1_quota_of_the_process_cgroup),
      cmocka_unit_test(v1_ancestor_with_the_smaller_quota_wins),
      cmocka_unit_test(v1_container_mount_shows_its_cgroup_as_root),
      cmocka_unit_test(v2_ancestor_quota_and_cpuset),
      cmocka_unit_test(no_quota_the_cpuset_caps),
      cmocka_unit_test(two_cgroups_have_two_identities),
      cmocka_unit_test(malformed_v1_quota_names_the_file),
      cmocka_unit_test(real_cgroup_of_half_a_cpu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
