/* Text and JSON descriptions of a topology (cpuexec_topology_describe).
 * Deterministic: the same topology gives the same bytes. */
#include <stdio.h>
#include <stdlib.h>

#include "policy/cpulist.h"
#include "core/error.h"
#include "core/strbuf.h"
#include "os/os.h"
#include "topology_internal.h"

int cpuexec__describe_check(const void *object, cpuexec_format format, const char *buf, size_t size,
                            const char *what) {
  if (object == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "%s: NULL", what);
  if (format != CPUEXEC_FORMAT_TEXT && format != CPUEXEC_FORMAT_JSON)
    return cpuexec__fail(CPUEXEC_EINVAL, "format: %d is not CPUEXEC_FORMAT_TEXT or CPUEXEC_FORMAT_JSON", (int)format);
  if (buf == NULL && size > 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "buf: NULL with size %zu; pass size 0 to measure", size);
  return 0;
}

/* Windows: the processor groups the visible processors are in, each with
 * its processors ("2 (group 0: 0-47; group 1: 64-111)"); ids ascending. */
static void describe_groups(cpuexec__strbuf *sb, const int32_t *ids, uint32_t count) {
  uint32_t groups = 0;
  for (uint32_t i = 0; i < count; i++)
    if (i == 0 || cpuexec__os_group_of(ids[i]) != cpuexec__os_group_of(ids[i - 1])) groups++;
  cpuexec__strbuf_printf(sb, "\nprocessor groups:      %u (", groups);
  for (uint32_t i = 0, first = 0; i < count; i++) {
    if (i + 1 < count && cpuexec__os_group_of(ids[i + 1]) == cpuexec__os_group_of(ids[i])) continue;
    cpuexec__strbuf_printf(sb, "%sgroup %u: ", first ? "; " : "", (unsigned)cpuexec__os_group_of(ids[i]));
    cpuexec__cpulist_put(sb, ids + first, i + 1 - first);
    first = i + 1;
  }
  cpuexec__strbuf_printf(sb, ")");
}

static void describe_topology(cpuexec__strbuf *sb, const cpuexec_topology *t, cpuexec_format format) {
  int32_t *ids = malloc((t->processor_count + 1) * sizeof *ids);
  if (ids == NULL) {
    sb->failed = true;
    return;
  }
  for (uint32_t i = 0; i < t->processor_count; i++)
    ids[i] = t->processors[i].os_index;
  uint32_t perf = cpuexec_topology_performance_core_count(t);
  if (format == CPUEXEC_FORMAT_JSON) {
    cpuexec__strbuf_printf(sb, "{\"source\":");
    cpuexec__strbuf_json_string(sb, t->source);
    cpuexec__strbuf_printf(sb,
                           ",\"packages\":%u,\"cores\":%u,\"processors\":%u,\"machine_processors\":%u,"
                           "\"smt_width\":%u,\"kinds\":%u,\"kinds_ranked\":%s,\"performance_cores\":%u,"
                           "\"cpu_quota\":",
                           t->package_count, t->core_count, t->processor_count, t->machine_processors, t->smt_max,
                           t->kind_count, t->kinds_ranked ? "true" : "false", perf);
    if (t->cpu_quota > 0)
      cpuexec__strbuf_printf(sb, "%.6g", t->cpu_quota);
    else
      cpuexec__strbuf_printf(sb, "null");
    cpuexec__strbuf_printf(sb, ",\"cpu_quota_source\":");
    if (t->quota_source != NULL)
      cpuexec__strbuf_json_string(sb, t->quota_source);
    else
      cpuexec__strbuf_printf(sb, "null");
    cpuexec__strbuf_printf(sb, ",\"visible\":[");
    for (uint32_t i = 0; i < t->processor_count; i++) {
      const cpuexec__processor *p = &t->processors[i];
      cpuexec__strbuf_printf(sb, "%s{\"id\":%d,\"core\":%u,\"package\":%u,\"sibling\":%u,\"kind_rank\":", i ? "," : "",
                             (int)p->os_index, p->core, p->package, p->sibling);
      if (p->kind_rank >= 0)
        cpuexec__strbuf_printf(sb, "%d}", (int)p->kind_rank);
      else
        cpuexec__strbuf_printf(sb, "null}");
    }
    cpuexec__strbuf_printf(sb, "]}\n");
    free(ids);
    return;
  }
  cpuexec__strbuf_printf(sb, "topology:              %s\n", t->source);
  cpuexec__strbuf_printf(sb, "packages:              %u\nphysical cores:        %u\n", t->package_count, t->core_count);
  cpuexec__strbuf_printf(sb, "logical processors:    %u visible of %u (at most %u per core)\n", t->processor_count,
                         t->machine_processors, t->smt_max);
  cpuexec__strbuf_printf(sb, "visible processors:    ");
  cpuexec__cpulist_put(sb, ids, t->processor_count);
  if (cpuexec__os_has_processor_groups())
    describe_groups(sb, ids, t->processor_count);
  if (t->kinds_ranked)
    cpuexec__strbuf_printf(sb, "\ncpu kinds:             %u, ranked; %u visible performance cores\n", t->kind_count,
                           perf);
  else if (t->kind_count >= 2)
    cpuexec__strbuf_printf(sb, "\ncpu kinds:             %u, not ranked by hwloc (treated as one kind)\n",
                           t->kind_count);
  else
    cpuexec__strbuf_printf(sb, "\ncpu kinds:             %s\n", t->kind_count == 1 ? "1 (homogeneous)" : "unknown");
  if (t->cpu_quota > 0)
    cpuexec__strbuf_printf(sb, "cgroup cpu quota:      %.6g CPUs (%s)\n", t->cpu_quota,
                           t->quota_source != NULL ? t->quota_source : "option");
  else
    cpuexec__strbuf_printf(sb, "cgroup cpu quota:      none\n");
  /* One line per core: its visible processors and kind. */
  for (uint32_t i = 0; i < t->processor_count;) {
    uint32_t j = i;
    while (j < t->processor_count && t->processors[j].core == t->processors[i].core)
      j++;
    cpuexec__strbuf_printf(sb, "  core %u (package %u", t->processors[i].core, t->processors[i].package);
    if (t->processors[i].kind_rank >= 0)
      cpuexec__strbuf_printf(sb, ", %s", t->processors[i].kind_rank == 0 ? "performance" : "efficiency");
    cpuexec__strbuf_printf(sb, "): ");
    cpuexec__cpulist_put(sb, ids + i, j - i);
    cpuexec__strbuf_printf(sb, "\n");
    i = j;
  }
  free(ids);
}

CPUEXEC_EXPORT int cpuexec_topology_describe(const cpuexec_topology *topology, cpuexec_format format, char *buf,
                                             size_t size) {
  int rc = cpuexec__describe_check(topology, format, buf, size, "topology");
  if (rc != 0)
    return rc;
  cpuexec__strbuf sb = {0};
  describe_topology(&sb, topology, format);
  return cpuexec__strbuf_finish(&sb, buf, size, "cpuexec_topology_describe");
}
