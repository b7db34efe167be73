/* cpuexec_openmp_status_get(): what the library knows of the OpenMP runtimes in
 * the process and whether their regions are counted, with the reason. */
#include <cpuexec/errors.h>
#include <cpuexec/interop.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"
#include "core/error.h"
#include "openmp_counts.h"
#include "openmp_internal.h"
#include "os/loader.h"

/* libomp is loaded but never asked for a tool: either it has not run yet,
 * or something kept it from asking us. Its first use decides, so start it
 * (serial initialization on this thread; no thread is created) and see. */
static void settle_libomp_start(void) {
  const cpuexec__omp_runtime *omp = &cpuexec__omp_runtimes[CPUEXEC__OMP_LIBOMP];
  (void)omp->get_max_threads();
}

/* The module (a name in info) whose ompt_start_tool is found first when it
 * is not ours nor libomp's own, or NULL. */
static const char *other_tool_owner(cpuexec__os_address *info_out) {
  void *definer = cpuexec__os_global_symbol("ompt_start_tool");
  cpuexec__os_address *info = info_out, mine;
  if (definer == NULL || !cpuexec__os_address_info(definer, info))
    return NULL;
  if (cpuexec__os_address_info((void *)cpuexec_openmp_status_get, &mine) && info->module_base == mine.module_base)
    return NULL; /* ours comes first */
  if (strcmp(info->module_path, cpuexec__omp_runtimes[CPUEXEC__OMP_LIBOMP].path) == 0)
    return NULL; /* libomp's weak one: it chains to the next definition */
  return info->module_path;
}

static void explain(cpuexec_openmp_state *out, uint32_t mask) {
  bool libomp = mask & (1U << CPUEXEC__OMP_LIBOMP), libgomp = mask & (1U << CPUEXEC__OMP_LIBGOMP);
  int state = atomic_load_explicit(&cpuexec__ompt_tool_state, memory_order_acquire);
  if (mask == 0) {
    out->detection = CPUEXEC_OPENMP_NO_RUNTIME;
    out->reason = "no OpenMP runtime is loaded in this process";
    return;
  }
  /* libgomp first: without libomp there is nothing to see, tool or not. */
  if (!libomp) {
    out->detection = CPUEXEC_OPENMP_NO_OMPT;
    out->reason = "the OpenMP runtime is libgomp, which has no OMPT: regions in callbacks are kept inline but "
                  "cannot be counted (link OpenMP code with -lomp to see it"
#ifdef _WIN32
                  "; the mingw-w64 toolchain ships libgomp only"
#endif
                  ")";
    return;
  }
  if (!cpuexec__ompt_built) {
    out->detection = CPUEXEC_OPENMP_DECLINED;
    out->reason = "libcpuexec was built with --disable-ompt: OpenMP regions are kept inline but not counted";
    return;
  }
  if (state == CPUEXEC__OMPT_NOT_ASKED) {
    const char *tool_env = cpuexec__env_raw("OMP_TOOL"); /* libomp's variable, read as it does */
    if (tool_env == NULL || strcmp(tool_env, "disabled") != 0)
      settle_libomp_start();
    state = atomic_load_explicit(&cpuexec__ompt_tool_state, memory_order_acquire);
  }
  switch (state) {
  case CPUEXEC__OMPT_LIVE:
    out->detection = CPUEXEC_OPENMP_LIVE;
    out->reason = libgomp ? "live: libomp's regions are counted (libgomp is also loaded; regions it runs are kept "
                            "inline but not seen)"
                          : "live: libomp's regions are counted";
    return;
  case CPUEXEC__OMPT_STARTED:
    out->detection = CPUEXEC_OPENMP_NOT_STARTED;
    out->reason = "libomp accepted the tool and is initializing it";
    return;
  case CPUEXEC__OMPT_DECLINED:
    out->detection = CPUEXEC_OPENMP_DECLINED;
    out->reason = "CPUEXEC_OMPT=off: the tool declined; regions are kept inline but not counted";
    return;
  case CPUEXEC__OMPT_INIT_FAILED:
    out->detection = CPUEXEC_OPENMP_INIT_FAILED;
    out->reason = "libomp did not accept the tool's callbacks (thread, parallel, implicit task)";
    return;
  case CPUEXEC__OMPT_FINALIZED:
    out->detection = CPUEXEC_OPENMP_FINALIZED;
    out->reason = "libomp finalized the tool (its runtime shut down, normally at exit): the counts cover every "
                  "region before that";
    return;
  default:
    break;
  }
  const char *tool_env = cpuexec__env_raw("OMP_TOOL"); /* libomp's variable, read as it does */
  if (tool_env != NULL && strcmp(tool_env, "disabled") == 0) {
    out->detection = CPUEXEC_OPENMP_TOOL_DISABLED;
    out->reason = "OMP_TOOL=disabled: libomp starts no tool; regions are kept inline but not counted";
    return;
  }
  /* Filled once, under the lock, then only read: the reason stays valid. */
  static pthread_mutex_t other_lock = PTHREAD_MUTEX_INITIALIZER;
  static char other_reason[400];
  cpuexec__os_address owner_info;
  const char *owner = other_tool_owner(&owner_info);
  if (owner != NULL) {
    out->detection = CPUEXEC_OPENMP_OTHER_TOOL;
    pthread_mutex_lock(&other_lock);
    if (other_reason[0] == '\0')
      snprintf(other_reason, sizeof other_reason,
               "another OMPT tool took precedence: ompt_start_tool in %s does not chain to libcpuexec's "
               "(dlsym(RTLD_NEXT, \"ompt_start_tool\")); regions are kept inline but not counted",
               owner[0] != '\0' ? owner : "the program");
    pthread_mutex_unlock(&other_lock);
    out->reason = other_reason;
    return;
  }
  out->detection = CPUEXEC_OPENMP_STARTED_BEFORE;
  out->reason = "OpenMP started before libcpuexec was loaded (libomp asks for a tool once, at its first use; or "
                "libcpuexec is not in the global symbol scope, e.g. dlopen()ed with RTLD_LOCAL)";
}

CPUEXEC_EXPORT int cpuexec_openmp_status_get(cpuexec_openmp_state *out) {
  if (out == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass a cpuexec_openmp_state to fill");
  memset(out, 0, sizeof *out);
  uint32_t mask = cpuexec__openmp_detect(false);
  out->libomp_loaded = mask & (1U << CPUEXEC__OMP_LIBOMP);
  out->libgomp_loaded = mask & (1U << CPUEXEC__OMP_LIBGOMP);
  out->guard_active = mask != 0;
  if (out->libomp_loaded)
    snprintf(out->libomp_path, sizeof out->libomp_path, "%s", cpuexec__omp_runtimes[CPUEXEC__OMP_LIBOMP].path);
  if (out->libgomp_loaded)
    snprintf(out->libgomp_path, sizeof out->libgomp_path, "%s", cpuexec__omp_runtimes[CPUEXEC__OMP_LIBGOMP].path);
  explain(out, mask);
  out->live = out->detection == CPUEXEC_OPENMP_LIVE;
  out->chained_tool = atomic_load_explicit(&cpuexec__ompt_chained, memory_order_acquire) != 0;
  if (out->chained_tool)
    snprintf(out->chained_tool_name, sizeof out->chained_tool_name, "%s", cpuexec__ompt_chained_name);
  return 0;
}
