/* libFuzzer target: cpulists and the topology options that carry them.
 * The first byte picks where the rest goes:
 *   0: the internal cpulist parser, with the round trip
 *      format(parse(text)) parsing back to the same ids;
 *   1-3: allowed_cpulist, binding_cpulist or caller_cpulist of a stored
 *      (synthetic) topology, then a resolution against it;
 *   4: the cgroup quota option (a double from the bytes).
 * Nothing may crash or leak; every failure sets a message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cpuexec.h>

#include "policy/cpulist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define IDS_MAX 4096

static void cpulist_round_trip(const char *text, size_t len) {
  static int32_t ids[IDS_MAX], back[IDS_MAX];
  uint32_t count = 0, back_count = 0;
  if (cpuexec__cpulist_parse("fuzz", text, len, ids, IDS_MAX, &count) != 0) return;
  size_t n = cpuexec__cpulist_format(ids, count, NULL, 0);
  char *formatted = malloc(n + 1);
  if (!formatted) abort();
  if (cpuexec__cpulist_format(ids, count, formatted, n + 1) != n) abort();
  if (cpuexec__cpulist_parse("fuzz", formatted, n, back, IDS_MAX, &back_count) != 0) abort();
  if (back_count != count || memcmp(ids, back, count * sizeof ids[0]) != 0) abort();
  free(formatted);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  unsigned which = data[0] % 5;
  char *text = malloc(size);
  if (!text) return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  if (which == 0) {
    cpulist_round_trip(text, size - 1);
  } else {
    cpuexec_topology_options o;
    cpuexec_topology_options_init(&o);
    if (which == 1) o.allowed_cpulist = text;
    if (which == 2) o.binding_cpulist = text;
    if (which == 3) o.caller_cpulist = text;
    if (which == 4) {
      double q = 0;
      memcpy(&q, data + 1, size - 1 < sizeof q ? size - 1 : sizeof q);
      o.cpu_quota = q;
    }
    cpuexec_topology *t = NULL;
    if (cpuexec_topology_load_synthetic("package:2 core:4 pu:2", &o, &t) == 0) {
      cpuexec_resolved *r = NULL;
      cpuexec_policy p;
      cpuexec_policy_init(&p);
      if (cpuexec_policy_resolve(&p, t, &r) == 0) {
        char buf[64];
        (void)cpuexec_resolved_describe(r, CPUEXEC_FORMAT_JSON, buf, sizeof buf);
      }
      cpuexec_resolved_destroy(r);
      cpuexec_topology_destroy(t);
    } else if (cpuexec_error_message()[0] == '\0') {
      abort();
    }
  }
  free(text);
  return 0;
}
