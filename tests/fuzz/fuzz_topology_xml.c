/* libFuzzer target: the well-formedness check that stands before hwloc's
 * XML loader (src/topology/topology_xml_check.c). The input is a file's bytes; the
 * check must never crash, read out of bounds or accept a file that ends
 * inside markup. hwloc itself is not fuzzed here (its loader trusts its
 * input; see cpuexec/topology.h). */
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
  } else if (cpuexec_error_message()[0] == '\0') {
    abort();
  }
  return 0;
}
