/* libcpuexec benchmarks: what a worker's permit from the node budget costs
 * uncontended (issue 32's micro-row; doc/node-budget.md): one slot taken
 * and given back, the way a worker takes it before it joins a region and
 * gives it back before it parks (cpuexec__node_permit_run and
 * cpuexec__node_permit_park, src/node/node_budget.h).
 *
 * One thread, a table of its own (CPUEXEC_NODE_DIR, a fresh directory; no
 * other process holds a slot in it), the default budget (CPUEXEC_NODE_BUDGET
 * and make's jobserver variables cleared: a jobserver token is a system
 * call, not this row). Each block is one sample, ns per take and give. Row
 * (backend "libcpuexec"):
 *   node_slot   ns per slot taken and given back; target <= 100
 *               (bench/targets.txt)
 * The program is linked against the white-box build of the library (the
 * node level's calls are internal), whose test hooks add a relaxed load
 * to a give: the release build costs at most what this prints. Every take
 * is checked (a refusal fails the run), and so is the table: a take must
 * show in it as this process's slot, so a run that fell back to the
 * process's own count fails instead of timing a return of true.
 *
 * Speaks bench/run.sh's table protocol (table_args.h). */
#ifdef _WIN32
int main(void) { return 0; } /* no node table on Windows (doc/node-budget.md) */
#else
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../clock.h"
#include "table_args.h"

/* The node level's calls (src/node/node_budget.h), which bench/ may not
 * include (tests/check-includes.sh): exported by the white-box build. */
struct cpuexec__node_counts;
bool cpuexec__node_permit_run(const struct cpuexec__node_counts *counts);
void cpuexec__node_permit_park(void);
size_t cpuexec__node_budget_describe(char *buf, size_t size);
const char *cpuexec__node_budget_table_path(void);

/* ns per take and give over one block of `pairs`. */
static double block(long pairs) {
  double t0 = bench_now_ns();
  for (long i = 0; i < pairs; i++) {
    if (!cpuexec__node_permit_run(NULL)) {
      printf("FAIL node_slot: a take was refused with nobody else in the table\n");
      exit(1);
    }
    cpuexec__node_permit_park();
  }
  return (bench_now_ns() - t0) / (double)pairs;
}

/* Removes the table file and its directory. */
static void remove_table(const char *dir) {
  const char *path = cpuexec__node_budget_table_path();
  if (path[0] != '\0') unlink(path);
  rmdir(dir);
}

int main(int argc, char **argv) {
  table_args args = table_args_parse(argc, argv);
  if (!args.measure) return 0;
  int blocks = args.smoke ? 2 : args.quick ? 10 : 30;
  long pairs = args.smoke ? 1000 : 200000;

  char dir[256];
  snprintf(dir, sizeof dir, "%s/cpuexec-bench-node.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (mkdtemp(dir) == NULL) {
    printf("FAIL node_slot: mkdtemp %s: %s\n", dir, strerror(errno));
    return 1;
  }
  setenv("CPUEXEC_NODE_DIR", dir, 1);
  unsetenv("CPUEXEC_NODE_BUDGET");
  unsetenv("MAKEFLAGS");
  unsetenv("MFLAGS");

  /* The first take makes the node's state and the table; then one take
   * must show in the table as this process's slot. */
  block(1000);
  char what[1024] = "";
  bool table = cpuexec__node_budget_table_path()[0] != '\0';
  if (table && cpuexec__node_permit_run(NULL)) {
    cpuexec__node_budget_describe(what, sizeof what);
    cpuexec__node_permit_park();
  }
  if (!table || strstr(what, "(this process 1)") == NULL) {
    if (what[0] == '\0') cpuexec__node_budget_describe(what, sizeof what);
    printf("FAIL node_slot: a take did not hold a slot of a node table: %s\n", what);
    remove_table(dir);
    return 1;
  }
  double *v = calloc((size_t)blocks, sizeof *v);
  if (v == NULL) {
    printf("FAIL node_slot: out of memory\n");
    remove_table(dir);
    return 1;
  }
  for (int b = 0; b < blocks; b++) v[b] = block(pairs);
  for (int b = 0; b < blocks; b++) printf("M libcpuexec node_slot ns %.6g\n", v[b]);
  remove_table(dir);
  free(v);
  return 0;
}
#endif
