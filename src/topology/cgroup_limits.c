/* The process's cgroup CPU limits, v1 and v2 (cgroup_limits.h). */
#include "cgroup_limits.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "policy/cpulist.h"

/* One hierarchy of the process: where it is mounted and its cgroup there. */
typedef struct hierarchy {
  bool found;                             /* in /proc/self/cgroup and mounted */
  char cgroup[CPUEXEC__CGROUP_PATH_MAX];  /* the path /proc/self/cgroup names */
  char mount[CPUEXEC__CGROUP_PATH_MAX];   /* the mount point */
  char mount_root[CPUEXEC__CGROUP_PATH_MAX]; /* the cgroup the mount shows as its root */
} hierarchy;

typedef struct hierarchies {
  hierarchy v1_cpu, v1_cpuset, v2;
} hierarchies;

/* True when the comma-separated list holds item. */
static bool list_has(const char *list, const char *item) {
  size_t n = strlen(item);
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    if (len == n && strncmp(p, item, n) == 0) return true;
    p += len;
    if (*p == ',') p++;
  }
  return false;
}

static int copy_path(char *dst, const char *src, const char *what) {
  if (strlen(src) >= CPUEXEC__CGROUP_PATH_MAX)
    return cpuexec__fail(CPUEXEC_ETOPOLOGY, "%s: path \"%.64s...\" is too long", what, src);
  memcpy(dst, src, strlen(src) + 1);
  return 0;
}

/* The process's cgroup paths: "ID:CONTROLLERS:PATH" lines (v2: "0::PATH"). */
static int read_proc_cgroup(const char *file, hierarchies *h) {
  FILE *f = fopen(file, "r");
  if (f == NULL) return 0; /* no /proc, or not Linux: no cgroup limits */
  char line[4096];
  int rc = 0;
  while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    char *c1 = strchr(line, ':');
    char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c2 == NULL || c2[1] != '/') {
      rc = cpuexec__fail(CPUEXEC_ETOPOLOGY, "%s: line \"%s\" is not ID:CONTROLLERS:/PATH", file, line);
      break;
    }
    *c2 = '\0';
    const char *controllers = c1 + 1, *path = c2 + 1;
    if (strstr(path, "/..") != NULL) {
      rc = cpuexec__fail(CPUEXEC_ETOPOLOGY, "%s: \"%s\" leaves the cgroup tree", file, path);
      break;
    }
    if (strncmp(line, "0:", 2) == 0 && *controllers == '\0')
      rc = copy_path(h->v2.cgroup, path, file);
    else if (list_has(controllers, "cpu"))
      rc = copy_path(h->v1_cpu.cgroup, path, file);
    if (rc == 0 && *controllers != '\0' && list_has(controllers, "cpuset"))
      rc = copy_path(h->v1_cpuset.cgroup, path, file);
  }
  fclose(f);
  return rc;
}

/* Where each hierarchy is mounted: mountinfo's "ID PARENT DEV ROOT POINT
 * OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS". The first mount of
 * a hierarchy wins (a bind mount later in the list shows the same). */
static void read_mountinfo(const char *file, hierarchies *h) {
  FILE *f = fopen(file, "r");
  if (f == NULL) return;
  char line[4096];
  while (fgets(line, sizeof line, f) != NULL) {
    char root[CPUEXEC__CGROUP_PATH_MAX], point[CPUEXEC__CGROUP_PATH_MAX];
    if (sscanf(line, "%*s %*s %*s %1023s %1023s", root, point) != 2) continue;
    char *dash = strstr(line, " - ");
    if (dash == NULL) continue;
    char fstype[64], source[256], super[1024];
    if (sscanf(dash + 3, "%63s %255s %1023s", fstype, source, super) != 3) continue;
    hierarchy *target[2] = {NULL, NULL};
    if (strcmp(fstype, "cgroup2") == 0) {
      target[0] = &h->v2;
    } else if (strcmp(fstype, "cgroup") == 0) {
      if (list_has(super, "cpu")) target[0] = &h->v1_cpu;
      if (list_has(super, "cpuset")) target[1] = &h->v1_cpuset;
    }
    for (int i = 0; i < 2; i++) {
      hierarchy *x = target[i];
      if (x == NULL || x->found || x->cgroup[0] == '\0') continue;
      snprintf(x->mount, sizeof x->mount, "%s", point);
      snprintf(x->mount_root, sizeof x->mount_root, "%s", root);
      x->found = true;
    }
  }
  fclose(f);
}

/* The directory of the process's cgroup of x under root into dir, and the
 * length of its top (the mount point) so a walk up stops there. The cgroup
 * is shown relative to the mount's root; a cgroup outside it (a namespace
 * whose root is elsewhere) is the mount point itself. */
static int cgroup_dir(const char *root, const hierarchy *x, char *dir, size_t size, size_t *top) {
  const char *rel = x->cgroup;
  size_t rl = strlen(x->mount_root);
  if (strcmp(x->mount_root, "/") != 0) {
    if (strncmp(rel, x->mount_root, rl) == 0 && (rel[rl] == '/' || rel[rl] == '\0'))
      rel += rl;
    else
      rel = "";
  }
  int n = snprintf(dir, size, "%s%s", root, strcmp(x->mount, "/") == 0 ? "" : x->mount);
  if (n < 0 || (size_t)n >= size) return cpuexec__fail(CPUEXEC_ETOPOLOGY, "cgroup: mount path too long");
  *top = (size_t)n;
  n = snprintf(dir + *top, size - *top, "%s", strcmp(rel, "/") == 0 ? "" : rel);
  if (n < 0 || (size_t)n >= size - *top) return cpuexec__fail(CPUEXEC_ETOPOLOGY, "cgroup: path too long");
  size_t len = strlen(dir);
  while (len > *top && dir[len - 1] == '/') dir[--len] = '\0';
  return 0;
}

/* The first line of a file, without its newline; false when it cannot be
 * opened (a controller not enabled there: no limit). */
static bool read_line(const char *file, char *text, size_t size) {
  FILE *f = fopen(file, "r");
  if (f == NULL) return false;
  if (fgets(text, (int)size, f) == NULL) text[0] = '\0';
  fclose(f);
  text[strcspn(text, "\n")] = '\0';
  return true;
}

/* A strict unsigned decimal; false on anything else. */
static bool parse_u64(const char *text, unsigned long long *value) {
  if (text[0] < '0' || text[0] > '9') return false;
  char *end;
  errno = 0;
  *value = strtoull(text, &end, 10);
  return errno == 0 && *end == '\0';
}

/* The quota of one v1 cgroup directory in CPUs (0: unlimited). */
static int v1_quota(const char *dir, double *quota, char *file, size_t size) {
  *quota = 0;
  char q[128], p[128];
  snprintf(file, size, "%s/cpu.cfs_quota_us", dir);
  if (!read_line(file, q, sizeof q)) return 0;
  if (strcmp(q, "-1") == 0) return 0;
  unsigned long long quota_us, period_us;
  if (!parse_u64(q, &quota_us) || quota_us == 0)
    return cpuexec__fail(CPUEXEC_ETOPOLOGY, "cpu.cfs_quota_us: \"%s\" holds \"%s\"; expected -1 or a positive count",
                         file, q);
  char period_file[CPUEXEC__CGROUP_PATH_MAX + 32];
  snprintf(period_file, sizeof period_file, "%s/cpu.cfs_period_us", dir);
  if (!read_line(period_file, p, sizeof p) || !parse_u64(p, &period_us) || period_us == 0)
    return cpuexec__fail(CPUEXEC_ETOPOLOGY, "cpu.cfs_period_us: \"%s\" is missing or not a positive count",
                         period_file);
  *quota = (double)quota_us / (double)period_us;
  return 0;
}

/* The quota of one v2 cgroup directory in CPUs (0: unlimited). */
static int v2_quota(const char *dir, double *quota, char *file, size_t size) {
  *quota = 0;
  char text[128];
  snprintf(file, size, "%s/cpu.max", dir);
  if (!read_line(file, text, sizeof text)) return 0;
  char q[64], p[64], extra;
  unsigned long long value, period;
  if (sscanf(text, "%63s %63s %c", q, p, &extra) == 2 && parse_u64(p, &period) && period > 0) {
    if (strcmp(q, "max") == 0) return 0;
    if (parse_u64(q, &value) && value > 0) {
      *quota = (double)value / (double)period;
      return 0;
    }
  }
  return cpuexec__fail(CPUEXEC_ETOPOLOGY, "cpu.max: \"%s\" holds \"%s\"; expected \"max PERIOD\" or \"QUOTA PERIOD\"",
                       file, text);
}

/* Walks the process's cgroup of x and its ancestors up to the mount,
 * keeping the smallest quota in *out. */
static int walk_quota(const char *root, const hierarchy *x, int version, cpuexec__cgroup_limits *out) {
  char dir[CPUEXEC__CGROUP_PATH_MAX];
  size_t top;
  int rc = cgroup_dir(root, x, dir, sizeof dir, &top);
  if (rc != 0) return rc;
  for (;;) {
    char file[CPUEXEC__CGROUP_PATH_MAX + 32];
    double q;
    rc = version == 1 ? v1_quota(dir, &q, file, sizeof file) : v2_quota(dir, &q, file, sizeof file);
    if (rc != 0) return rc;
    if (q > 0 && (out->quota == 0 || q < out->quota)) {
      out->quota = q;
      out->quota_version = version;
      snprintf(out->quota_file, sizeof out->quota_file, "%s", file);
      snprintf(out->identity, sizeof out->identity, "v%d:%s", version, dir);
    }
    size_t len = strlen(dir);
    if (len <= top) break;
    while (len > top && dir[len - 1] != '/') len--;
    if (len > top) len--; /* the slash */
    dir[len] = '\0';
  }
  return 0;
}

/* The throttling counts of the cgroup whose quota won, from cpu.stat in
 * the quota file's directory: "KEY VALUE" lines, of which nr_periods,
 * nr_throttled and throttled_time (v1, ns) or throttled_usec (v2). */
static void read_throttling(cpuexec__cgroup_limits *out) {
  char file[sizeof out->throttle_file];
  size_t dir = strlen(out->quota_file);
  while (dir > 0 && out->quota_file[dir - 1] != '/') dir--;
  if (dir == 0 || (size_t)snprintf(file, sizeof file, "%.*scpu.stat", (int)dir, out->quota_file) >= sizeof file) return;
  FILE *f = fopen(file, "r");
  if (f == NULL) return;
  char line[256];
  bool periods = false, throttled = false;
  while (fgets(line, sizeof line, f) != NULL) {
    char key[64], value[64];
    unsigned long long v;
    if (sscanf(line, "%63s %63s", key, value) != 2 || !parse_u64(value, &v)) continue;
    if (strcmp(key, "nr_periods") == 0) {
      out->periods = v;
      periods = true;
    } else if (strcmp(key, "nr_throttled") == 0) {
      out->throttled_periods = v;
      throttled = true;
    } else if (strcmp(key, "throttled_time") == 0) {
      out->throttled_ns = v;
    } else if (strcmp(key, "throttled_usec") == 0) {
      out->throttled_ns = v * 1000;
    }
  }
  fclose(f);
  if (periods && throttled) {
    snprintf(out->throttle_file, sizeof out->throttle_file, "%s", file);
  } else {
    out->periods = out->throttled_periods = out->throttled_ns = 0;
  }
}

/* The cpuset's effective processors of x (file name in its directory). */
static int read_cpuset(const char *root, const hierarchy *x, const char *name, cpuexec__cgroup_limits *out) {
  char dir[CPUEXEC__CGROUP_PATH_MAX], file[CPUEXEC__CGROUP_PATH_MAX + 32], text[4096];
  size_t top;
  int rc = cgroup_dir(root, x, dir, sizeof dir, &top);
  if (rc != 0) return rc;
  snprintf(file, sizeof file, "%s/%s", dir, name);
  if (!read_line(file, text, sizeof text)) return 0;
  /* Counted, not kept: the ids themselves are the topology's (hwloc reads
   * the same allowed set). */
  enum { CAP = 1u << 16 };
  int32_t *ids = malloc(CAP * sizeof *ids);
  if (ids == NULL) return cpuexec__fail(CPUEXEC_ENOMEM, "cpuset: out of memory");
  uint32_t count = 0;
  rc = cpuexec__cpulist_parse(file, text, strlen(text), ids, CAP, &count);
  free(ids);
  if (rc != 0) return rc;
  if (count > 0) {
    out->cpuset_count = count;
    snprintf(out->cpuset_file, sizeof out->cpuset_file, "%s", file);
  }
  return 0;
}

int cpuexec__cgroup_limits_read(const char *root, cpuexec__cgroup_limits *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->identity, sizeof out->identity, "host");
  if (root == NULL) root = "";
  hierarchies *h = calloc(1, sizeof *h);
  if (h == NULL) return cpuexec__fail(CPUEXEC_ENOMEM, "cgroup: out of memory");
  char file[CPUEXEC__CGROUP_PATH_MAX + 32];
  snprintf(file, sizeof file, "%s/proc/self/cgroup", root);
  int rc = read_proc_cgroup(file, h);
  if (rc == 0) {
    snprintf(file, sizeof file, "%s/proc/self/mountinfo", root);
    read_mountinfo(file, h);
    if (h->v1_cpu.found) rc = walk_quota(root, &h->v1_cpu, 1, out);
    if (rc == 0 && h->v2.found) rc = walk_quota(root, &h->v2, 2, out);
    if (rc == 0 && h->v1_cpuset.found) rc = read_cpuset(root, &h->v1_cpuset, "cpuset.effective_cpus", out);
    if (rc == 0 && out->cpuset_count == 0 && h->v2.found) rc = read_cpuset(root, &h->v2, "cpuset.cpus.effective", out);
  }
  free(h);
  if (rc != 0) {
    memset(out, 0, sizeof *out);
    snprintf(out->identity, sizeof out->identity, "host");
  } else if (out->quota > 0) {
    read_throttling(out);
  } else if (out->cpuset_count > 0) {
    /* No quota: processes of one cpuset share its processors. */
    snprintf(out->identity, sizeof out->identity, "cpuset:%s", out->cpuset_file);
  }
  return rc;
}

uint32_t cpuexec__cgroup_limits_cpus(const cpuexec__cgroup_limits *limits, uint32_t visible) {
  uint32_t n = visible > 0 ? visible : 1;
  if (limits->cpuset_count > 0 && limits->cpuset_count < n) n = limits->cpuset_count;
  if (limits->quota > 0 && ceil(limits->quota) < (double)n) n = (uint32_t)ceil(limits->quota);
  return n > 0 ? n : 1;
}
