/* One OpenMP process for the tool tests (tests/test_openmp_tools.c runs it
 * under different environments): OpenMP kernels in callbacks, then the
 * status, the counters and, when a probe tool is loaded, what the probe saw,
 * as key=value lines on stdout.
 *
 * Built three times: plain; linked with the probe tool after libcpuexec
 * (found by our dlsym(RTLD_NEXT)); and with APP_TOOL, where the program defines its own
 * ompt_start_tool (which wins over libcpuexec's); with APP_TOOL_CHAIN=1 in
 * the environment it chains to the next one with dlsym(RTLD_NEXT). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <cpuexec.h>

#include "support/test_util.h"
#include "support/openmp_tsan.h"
#include "support/openmp_kernels.h"

#ifdef APP_TOOL
int app_tool_called;
__attribute__((visibility("default"))) void *ompt_start_tool(unsigned version, const char *runtime);
void *ompt_start_tool(unsigned version, const char *runtime) {
  app_tool_called = 1;
  if (getenv("APP_TOOL_CHAIN") == NULL)
    return NULL; /* a tool that answers nothing and hides the rest */
  void *(*next)(unsigned, const char *) = (void *(*)(unsigned, const char *))dlsym(RTLD_NEXT, "ompt_start_tool");
  return next != NULL ? next(version, runtime) : NULL;
}
#endif

static int kernels(void *arg, int64_t begin, int64_t end) {
  int *teams = arg;
  for (int64_t i = begin; i < end; i++) {
    int team = 0;
    kernel_parallel(&team);
    teams[i] = team;
  }
  return 0;
}

int main(void) {
  enum { ITEMS = 8 };
  int teams[ITEMS] = {0};
  cpuexec_executor *exec = test_executor(2);
  int rc = cpuexec_parallel_for(exec, ITEMS, 1, teams, kernels, 0);
  int max_team = 0;
  for (int i = 0; i < ITEMS; i++)
    max_team = teams[i] > max_team ? teams[i] : max_team;
  cpuexec_openmp_state s;
  cpuexec_openmp_status_get(&s);
  cpuexec_openmp_counters n;
  cpuexec_openmp_counters_get(&n);
  printf("rc=%d\nmax_team=%d\ndetection=%d\nlive=%d\nchained=%d\nin_callbacks=%llu\ninline=%llu\n", rc, max_team,
         (int)s.detection, s.live, s.chained_tool, (unsigned long long)n.regions_in_callbacks,
         (unsigned long long)n.regions_inline);
  printf("reason=%s\n", s.reason);
  const char *probe = getenv("PROBE_PATH") != NULL ? getenv("PROBE_PATH") : getenv("OMP_TOOL_LIBRARIES");
  void *handle = probe != NULL ? dlopen(probe, RTLD_LAZY | RTLD_NOLOAD) : NULL;
  if (handle != NULL) {
    printf("probe_initialized=%d\n", *(volatile int *)dlsym(handle, "probe_initialized"));
    printf("probe_parallel_begins=%ld\n", *(volatile long *)dlsym(handle, "probe_parallel_begins"));
    printf("probe_parallel_ends=%ld\n", *(volatile long *)dlsym(handle, "probe_parallel_ends"));
  }
#ifdef APP_TOOL
  printf("app_tool_called=%d\n", app_tool_called);
#endif
  cpuexec_executor_release(exec);
  return 0;
}
