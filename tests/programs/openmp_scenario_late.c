/* OpenMP starts before libcpuexec is loaded: this program links libomp
 * only, runs a region, then dlopen()s libcpuexec and asks for its status,
 * printed as key=value lines (tests/test_openmp_tools.c checks them). */
#include <dlfcn.h>
#include <stdio.h>

#include <cpuexec/interop.h>

#include "support/openmp_kernels.h"
#include "support/openmp_tsan.h"

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int team = 0;
  kernel_parallel(&team);
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (lib == NULL) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  int (*status)(cpuexec_openmp_state *) = (int (*)(cpuexec_openmp_state *))dlsym(lib, "cpuexec_openmp_status_get");
  cpuexec_openmp_state s;
  if (status == NULL || status(&s) != 0)
    return 1;
  printf("detection=%d\nlive=%d\nreason=%s\n", (int)s.detection, s.live, s.reason);
  return 0;
}
