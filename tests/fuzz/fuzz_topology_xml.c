/* libFuzzer target: the well-formedness check that stands before hwloc's
 * XML loader (src/topology/topology_xml_check.c), then, for a file the check
 * accepts, the whole load: hwloc's reading and the library's extraction of
 * its result into processors, cores and packages (src/topology/topology.c), where a
 * file hwloc accepts with repeated objects once wrote past an array. The
 * input is a file's bytes; nothing may crash or read out of bounds, an
 * accepted file ends outside any tag, and a refused load names a reason. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cpuexec.h>

#include "topology/topology_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int fd = -1;
  static char path[64];
  if (fd < 0) {
    fd = memfd_create("fuzz-topology-xml", 0);
    if (fd < 0) abort();
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  }
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
  int rc = cpuexec__xml_check(path);
  if (rc == 0) {
    /* Accepted: it must at least end outside any tag. */
    size_t end = size;
    while (end > 0 && (data[end - 1] == ' ' || data[end - 1] == '\n' || data[end - 1] == '\t' || data[end - 1] == '\r'))
      end--;
    if (end == 0 || data[end - 1] != '>') abort();
    cpuexec_topology *t = NULL;
    rc = cpuexec_topology_load_xml(path, NULL, &t);
    if (rc == 0) {
      /* Loaded: every visible processor is listed once. */
      int32_t n = cpuexec_topology_processor_count(t);
      for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < i; j++)
          if (cpuexec_topology_processor_id(t, i) == cpuexec_topology_processor_id(t, j)) abort();
      cpuexec_topology_destroy(t);
    } else if (t != NULL || cpuexec_error_message()[0] == '\0') {
      abort();
    }
  } else if (cpuexec_error_message()[0] == '\0') {
    abort();
  }
  return 0;
}
