/* The cgroup v2 CPU quota of the process: cpu.max of its cgroup and of
 * every ancestor up to the mount root; the smallest quota / period wins. */
#include "topology_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "os/os.h"

/* The cgroup v2 path ("0::/a/b") of the process into buf. Returns 1 when
 * found, 0 when the file has no v2 entry, negative on error. */
static int read_cgroup_path(const char *file, bool explicit_file, char *buf, size_t size) {
  FILE *f = fopen(file, "r");
  if (f == NULL) {
    if (!explicit_file)
      return 0; /* not Linux, or /proc not mounted: no quota to honour */
    return cpuexec__fail(CPUEXEC_ETOPOLOGY, "proc_self_cgroup: cannot open \"%s\": %s", file, strerror(errno));
  }
  char line[4096];
  int found = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "0::", 3) != 0)
      continue;
    line[strcspn(line, "\n")] = '\0';
    if (line[3] != '/' || strlen(line + 3) >= size) {
      fclose(f);
      return cpuexec__fail(CPUEXEC_ETOPOLOGY, "proc_self_cgroup: \"%s\" names no absolute cgroup path in \"%s\"",
                           file, line);
    }
    snprintf(buf, size, "%s", line + 3);
    found = 1;
    break;
  }
  fclose(f);
  return found;
}

/* One cpu.max file: "max PERIOD" or "QUOTA PERIOD". *quota 0 when
 * unlimited; a missing file is unlimited too (controller not enabled). */
static int read_cpu_max(const char *file, double *quota) {
  *quota = 0;
  FILE *f = fopen(file, "r");
  if (f == NULL)
    return 0;
  char text[128] = "";
  bool got = fgets(text, sizeof text, f) != NULL;
  fclose(f);
  text[strcspn(text, "\n")] = '\0';
  char q[64];
  unsigned long long period;
  char extra;
  if (got && sscanf(text, "%63s %llu %c", q, &period, &extra) == 2 && period > 0) {
    if (strcmp(q, "max") == 0)
      return 0;
    char *end;
    errno = 0;
    unsigned long long value = strtoull(q, &end, 10);
    if (errno == 0 && *end == '\0' && q[0] >= '0' && q[0] <= '9' && value > 0) {
      *quota = (double)value / (double)period;
      return 0;
    }
  }
  return cpuexec__fail(CPUEXEC_ETOPOLOGY, "cpu.max: \"%s\" holds \"%s\"; expected \"max PERIOD\" or \"QUOTA PERIOD\"",
                       file, text);
}

int cpuexec__cgroup_cpu_quota(const cpuexec_topology_options *options, double *quota, char **source) {
  const char *proc = options->proc_self_cgroup != NULL ? options->proc_self_cgroup : cpuexec__os_proc_self_cgroup();
  const char *root = options->cgroup_root != NULL ? options->cgroup_root : cpuexec__os_cgroup_root();
  char cgroup[2048];
  *quota = 0;
  *source = NULL;
  if (proc == NULL || root == NULL)
    return 0; /* the OS backend knows no cgroup: no quota to honour */
  int found = read_cgroup_path(proc, options->proc_self_cgroup != NULL, cgroup, sizeof cgroup);
  if (found <= 0)
    return found;
  if (strstr(cgroup, "/..") != NULL)
    return cpuexec__fail(CPUEXEC_ETOPOLOGY, "proc_self_cgroup: \"%s\" names \"%s\", which leaves the cgroup tree",
                         proc, cgroup);
  /* Walk from the process cgroup up to the root, inclusive. */
  size_t len = strlen(cgroup);
  while (len > 1 && cgroup[len - 1] == '/')
    cgroup[--len] = '\0';
  for (;;) {
    char file[4096];
    int n = snprintf(file, sizeof file, "%s%s/cpu.max", root, strcmp(cgroup, "/") == 0 ? "" : cgroup);
    if (n < 0 || (size_t)n >= sizeof file)
      return cpuexec__fail(CPUEXEC_ETOPOLOGY, "cgroup_root: path \"%s%s\" is too long", root, cgroup);
    double q;
    int rc = read_cpu_max(file, &q);
    if (rc != 0) {
      free(*source);
      *source = NULL;
      *quota = 0;
      return rc;
    }
    if (q > 0 && (*quota == 0 || q < *quota)) {
      char *copy = strdup(file);
      if (copy == NULL) {
        free(*source);
        *source = NULL;
        return cpuexec__fail(CPUEXEC_ENOMEM, "cpu.max: out of memory");
      }
      free(*source);
      *source = copy;
      *quota = q;
    }
    if (strcmp(cgroup, "/") == 0)
      break;
    char *slash = strrchr(cgroup, '/');
    if (slash == cgroup)
      slash[1] = '\0';
    else
      *slash = '\0';
  }
  return 0;
}
