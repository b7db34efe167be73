/* libFuzzer target for topology files, in two parts.
 *
 * 1. The well-formedness check that stands before hwloc's XML loader
 *    (src/topology/topology_xml_check.c), on the input's bytes as a file: it must
 *    never crash or read out of bounds, an accepted file ends outside any
 *    tag, and a refusal names a reason.
 * 2. The whole load, hwloc's reading and the library's extraction of its
 *    result into processors, cores and packages (src/topology/topology.c), on a
 *    file of the shape hwloc itself writes, built from the same bytes:
 *    packages, cores and PUs whose OS indices the bytes choose (repeats
 *    included), a core written twice where a byte says so, cpusets that
 *    are the union of their PUs. A file hwloc accepts with repeated
 *    objects once made the extraction write past an array (the corpus
 *    keeps it). The load must return 0 with every processor listed once,
 *    or an error with a message.
 * Mutated raw XML is not fed to hwloc's loader: it is not written for
 * hostile input (cpuexec/topology.h) and crashes on some, which would be
 * hwloc's findings, not ours. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cpuexec.h>

#include "topology/topology_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *fd_path(int *fd, const char *name, char *path, size_t len) {
  if (*fd < 0) {
    *fd = memfd_create(name, 0);
    if (*fd < 0) abort();
    snprintf(path, len, "/proc/self/fd/%d", *fd);
  }
  return path;
}

static void check_raw(const uint8_t *data, size_t size) {
  static int fd = -1;
  static char path[64];
  fd_path(&fd, "fuzz-topology-raw", path, sizeof path);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
  int rc = cpuexec__xml_check(path);
  if (rc == 0) {
    size_t end = size;
    while (end > 0 && (data[end - 1] == ' ' || data[end - 1] == '\n' || data[end - 1] == '\t' || data[end - 1] == '\r'))
      end--;
    if (end == 0 || data[end - 1] != '>') abort();
  } else if (cpuexec_error_message()[0] == '\0') {
    abort();
  }
}

/* The bytes, read one at a time, 0 past the end. */
typedef struct reader {
  const uint8_t *data;
  size_t size, at;
} reader;

static unsigned next_byte(reader *r) { return r->at < r->size ? r->data[r->at++] : 0; }

#define MAX_PUS 32
typedef struct core_shape {
  unsigned pus, os_index[3];
  bool twice;
} core_shape;

static void append(char **buf, size_t *len, size_t *cap, const char *format, ...) __attribute__((format(printf, 4, 5)));
#include <stdarg.h>
static void append(char **buf, size_t *len, size_t *cap, const char *format, ...) {
  for (;;) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(*buf + *len, *cap - *len, format, args);
    va_end(args);
    if (n < 0) abort();
    if ((size_t)n < *cap - *len) {
      *len += (size_t)n;
      return;
    }
    *cap = *cap * 2 + (size_t)n;
    *buf = realloc(*buf, *cap);
    if (*buf == NULL) abort();
  }
}

static void check_shaped(const uint8_t *data, size_t size) {
  reader r = {data, size, 0};
  unsigned packages = 1 + next_byte(&r) % 2, cores_per = 1 + next_byte(&r) % 4;
  core_shape cores[2][4];
  uint32_t machine = 0, gp = 1;
  for (unsigned p = 0; p < packages; p++)
    for (unsigned c = 0; c < cores_per; c++) {
      unsigned b = next_byte(&r);
      core_shape *s = &cores[p][c];
      s->pus = 1 + b % 3;
      s->twice = (b & 0xc0) == 0xc0;
      for (unsigned k = 0; k < s->pus; k++) {
        s->os_index[k] = next_byte(&r) % MAX_PUS;
        machine |= 1u << s->os_index[k];
      }
    }
  size_t len = 0, cap = 4096;
  char *xml = malloc(cap);
  if (!xml) abort();
  append(&xml, &len, &cap,
         "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
         "<topology version=\"2.0\">\n"
         "<object type=\"Machine\" os_index=\"0\" cpuset=\"0x%08x\" complete_cpuset=\"0x%08x\" "
         "allowed_cpuset=\"0x%08x\" nodeset=\"0x1\" complete_nodeset=\"0x1\" allowed_nodeset=\"0x1\" gp_index=\"%u\">\n"
         "<object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x%08x\" complete_cpuset=\"0x%08x\" nodeset=\"0x1\" "
         "complete_nodeset=\"0x1\" gp_index=\"%u\" local_memory=\"1073741824\"/>\n",
         machine, machine, machine, gp, machine, machine, gp + 1);
  gp += 2;
  for (unsigned p = 0; p < packages; p++) {
    uint32_t pkg = 0;
    for (unsigned c = 0; c < cores_per; c++)
      for (unsigned k = 0; k < cores[p][c].pus; k++) pkg |= 1u << cores[p][c].os_index[k];
    append(&xml, &len, &cap,
           "<object type=\"Package\" os_index=\"%u\" cpuset=\"0x%08x\" complete_cpuset=\"0x%08x\" nodeset=\"0x1\" "
           "complete_nodeset=\"0x1\" gp_index=\"%u\">\n",
           p, pkg, pkg, gp++);
    for (unsigned c = 0; c < cores_per; c++) {
      const core_shape *s = &cores[p][c];
      uint32_t set = 0;
      for (unsigned k = 0; k < s->pus; k++) set |= 1u << s->os_index[k];
      for (unsigned copy = 0; copy < (s->twice ? 2u : 1u); copy++) {
        append(&xml, &len, &cap,
               "<object type=\"Core\" os_index=\"%u\" cpuset=\"0x%08x\" complete_cpuset=\"0x%08x\" nodeset=\"0x1\" "
               "complete_nodeset=\"0x1\" gp_index=\"%u\">\n",
               c, set, set, gp++);
        for (unsigned k = 0; k < s->pus; k++)
          append(&xml, &len, &cap,
                 "<object type=\"PU\" os_index=\"%u\" cpuset=\"0x%08x\" complete_cpuset=\"0x%08x\" nodeset=\"0x1\" "
                 "complete_nodeset=\"0x1\" gp_index=\"%u\"/>\n",
                 s->os_index[k], 1u << s->os_index[k], 1u << s->os_index[k], gp++);
        append(&xml, &len, &cap, "</object>\n");
      }
    }
    append(&xml, &len, &cap, "</object>\n");
  }
  append(&xml, &len, &cap, "</object>\n</topology>\n");

  static int fd = -1;
  static char path[64];
  fd_path(&fd, "fuzz-topology-shaped", path, sizeof path);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, xml, len, 0) != (ssize_t)len) abort();
  free(xml);
  cpuexec_topology *t = NULL;
  int rc = cpuexec_topology_load_xml(path, NULL, &t);
  if (rc == 0) {
    int32_t n = cpuexec_topology_processor_count(t);
    if (n < 1 || n > MAX_PUS) abort();
    for (int32_t i = 0; i < n; i++)
      for (int32_t j = 0; j < i; j++)
        if (cpuexec_topology_processor_id(t, i) == cpuexec_topology_processor_id(t, j)) abort();
    if (cpuexec_topology_core_count(t) < 1 || cpuexec_topology_core_count(t) > n) abort();
    cpuexec_resolved *resolved = NULL;
    cpuexec_policy policy;
    cpuexec_policy_init(&policy);
    policy.affinity_policy = CPUEXEC_AFFINITY_PHYSICAL_THEN_SMT;
    if (cpuexec_policy_resolve(&policy, t, &resolved) == 0) cpuexec_resolved_destroy(resolved);
    cpuexec_topology_destroy(t);
  } else if (t != NULL || cpuexec_error_message()[0] == '\0') {
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_raw(data, size);
  check_shaped(data, size);
  return 0;
}
