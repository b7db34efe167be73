/* Text and JSON descriptions of a resolution and of a topology. Both are
 * deterministic: the same object gives the same bytes. */
#include <stdio.h>
#include <stdlib.h>

#include "cpulist.h"
#include "error.h"
#include "resolved.h"
#include "strbuf.h"
#include "topology_internal.h"

/* "0-3,8,10-11" (cpulist.h), or "none". */
static void put_cpulist(cpuexec__strbuf *sb, const int32_t *ids, uint32_t n) {
  if (n == 0) {
    cpuexec__strbuf_printf(sb, "none");
    return;
  }
  size_t len = cpuexec__cpulist_format(ids, n, NULL, 0);
  char *text = malloc(len + 1);
  if (text == NULL) {
    sb->failed = true;
    return;
  }
  cpuexec__cpulist_format(ids, n, text, len + 1);
  cpuexec__strbuf_printf(sb, "%s", text);
  free(text);
}

static void put_json_ids(cpuexec__strbuf *sb, const int32_t *ids, uint32_t n) {
  cpuexec__strbuf_printf(sb, "[");
  for (uint32_t i = 0; i < n; i++)
    cpuexec__strbuf_printf(sb, "%s%d", i ? "," : "", (int)ids[i]);
  cpuexec__strbuf_printf(sb, "]");
}

static const char *name_or(const char *name, const char *fallback) { return name != NULL ? name : fallback; }

static void describe_spin_text(cpuexec__strbuf *sb, const cpuexec_resolved *r) {
  const cpuexec_resolved_spin *s = &r->spin;
  switch (s->policy) {
  case CPUEXEC_SPIN_ADAPTIVE:
    cpuexec__strbuf_printf(sb,
                           "adaptive: spin %llu ns, then park; park at once while more threads are runnable "
                           "than the %u visible processors; follow a steady call cadence, spinning at most "
                           "%u permille of each worker's time",
                           (unsigned long long)s->spin_ns, r->visible_processors, s->cadence_burn_permille);
    break;
  case CPUEXEC_SPIN_FIXED_DURATION:
    cpuexec__strbuf_printf(sb, "fixed_duration: spin %llu ns, then park", (unsigned long long)s->spin_ns);
    break;
  case CPUEXEC_SPIN_FIXED_ITERATIONS:
    cpuexec__strbuf_printf(sb, "fixed_iterations: spin %llu pause iterations, then park",
                           (unsigned long long)s->spin_iterations);
    break;
  case CPUEXEC_SPIN_PARK_IMMEDIATELY:
    cpuexec__strbuf_printf(sb, "park_immediately: no spinning, park at once");
    break;
  }
}

static void describe_request_json(cpuexec__strbuf *sb, const cpuexec_policy *p) {
  cpuexec__strbuf_printf(sb, "{\"num_threads\":%d,\"spin_policy\":", (int)p->num_threads);
  cpuexec__strbuf_json_string(sb, name_or(cpuexec_spin_policy_name(p->spin_policy), "invalid"));
  cpuexec__strbuf_printf(sb, ",\"spin_budget\":%llu,\"affinity_policy\":", (unsigned long long)p->spin_budget);
  cpuexec__strbuf_json_string(sb, name_or(cpuexec_affinity_policy_name(p->affinity_policy), "invalid"));
  cpuexec__strbuf_printf(sb, ",\"cpu_set\":");
  put_json_ids(sb, p->cpu_set, p->cpu_set_count >= 0 && p->cpu_set_count <= CPUEXEC_CPU_SET_MAX ? (uint32_t)p->cpu_set_count : 0);
  cpuexec__strbuf_printf(sb, ",\"allow_nested_parallelism\":%s}", p->allow_nested_parallelism ? "true" : "false");
}

static void describe_request_text(cpuexec__strbuf *sb, const cpuexec_policy *p) {
  cpuexec__strbuf_printf(sb, "num_threads=%d,spin_policy=%s,spin_budget=%llu,affinity_policy=%s",
                         (int)p->num_threads, name_or(cpuexec_spin_policy_name(p->spin_policy), "invalid"),
                         (unsigned long long)p->spin_budget,
                         name_or(cpuexec_affinity_policy_name(p->affinity_policy), "invalid"));
  if (p->cpu_set_count > 0 && p->cpu_set_count <= CPUEXEC_CPU_SET_MAX) {
    cpuexec__strbuf_printf(sb, ",cpu_set=");
    put_cpulist(sb, p->cpu_set, (uint32_t)p->cpu_set_count);
  }
  cpuexec__strbuf_printf(sb, ",allow_nested_parallelism=%s", p->allow_nested_parallelism ? "true" : "false");
}

static void describe_resolved(cpuexec__strbuf *sb, const cpuexec_resolved *r, cpuexec_format format) {
  if (format == CPUEXEC_FORMAT_JSON) {
    cpuexec__strbuf_printf(sb, "{\"request\":");
    describe_request_json(sb, &r->request);
    cpuexec__strbuf_printf(sb, ",\"effective_threads\":%u,\"caller_processor\":", r->effective_threads);
    if (r->caller_processor >= 0)
      cpuexec__strbuf_printf(sb, "%d", (int)r->caller_processor);
    else
      cpuexec__strbuf_printf(sb, "null");
    cpuexec__strbuf_printf(sb, ",\"pin_caller\":%s,\"worker_processors\":", r->pin_caller ? "true" : "false");
    put_json_ids(sb, r->worker_processors, r->worker_processor_count);
    cpuexec__strbuf_printf(sb, ",\"uses_smt\":%s,\"uses_efficiency_cores\":%s,\"allow_nested_parallelism\":%s",
                           r->uses_smt ? "true" : "false", r->uses_efficiency_cores ? "true" : "false",
                           r->allow_nested ? "true" : "false");
    cpuexec__strbuf_printf(sb, ",\"spin\":{\"policy\":");
    cpuexec__strbuf_json_string(sb, name_or(cpuexec_spin_policy_name(r->spin.policy), "invalid"));
    cpuexec__strbuf_printf(sb,
                           ",\"spin_ns\":%llu,\"spin_iterations\":%llu,\"park_when_oversubscribed\":%s,"
                           "\"cadence_burn_permille\":%u}",
                           (unsigned long long)r->spin.spin_ns, (unsigned long long)r->spin.spin_iterations,
                           r->spin.park_when_oversubscribed ? "true" : "false", r->spin.cadence_burn_permille);
    cpuexec__strbuf_printf(sb, ",\"visible_processors\":%u,\"sharing_key\":", r->visible_processors);
    cpuexec__strbuf_json_string(sb, r->sharing_key);
    cpuexec__strbuf_printf(sb, ",\"diagnostics\":[");
    for (size_t i = 0; i < r->diagnostic_count; i++) {
      if (i)
        cpuexec__strbuf_printf(sb, ",");
      cpuexec__strbuf_json_string(sb, r->diagnostics[i]);
    }
    cpuexec__strbuf_printf(sb, "]}\n");
    return;
  }
  cpuexec__strbuf_printf(sb, "request:               ");
  describe_request_text(sb, &r->request);
  if (r->effective_threads == 1)
    cpuexec__strbuf_printf(sb, "\neffective threads:     1 (serial: the caller alone)\n");
  else
    cpuexec__strbuf_printf(sb, "\neffective threads:     %u (the caller and %u worker%s)\n", r->effective_threads,
                           r->effective_threads - 1, r->effective_threads == 2 ? "" : "s");
  if (r->pin_caller)
    cpuexec__strbuf_printf(sb, "caller processor:      %d (pinned at each dispatch)\n", (int)r->caller_processor);
  else if (r->caller_processor >= 0)
    cpuexec__strbuf_printf(sb, "caller processor:      %d (bound by someone else; kept)\n",
                           (int)r->caller_processor);
  else
    cpuexec__strbuf_printf(sb, "caller processor:      not placed\n");
  cpuexec__strbuf_printf(sb, "worker processors:     ");
  if (r->worker_processor_count == 0)
    cpuexec__strbuf_printf(sb, r->effective_threads > 1 ? "not placed (the OS schedules them)" : "none (serial)");
  for (uint32_t i = 0; i < r->worker_processor_count; i++)
    cpuexec__strbuf_printf(sb, "%s%d", i ? "," : "", (int)r->worker_processors[i]);
  cpuexec__strbuf_printf(sb, "\nuses SMT siblings:     %s\nuses efficiency cores: %s\nspin:                  ",
                         r->uses_smt ? "yes" : "no", r->uses_efficiency_cores ? "yes" : "no");
  describe_spin_text(sb, r);
  cpuexec__strbuf_printf(sb, "\nnesting:               %s\nsharing key:           %s\ndiagnostics:\n",
                         r->allow_nested ? "allowed (nested calls still run inline)" : "nested calls run inline",
                         r->sharing_key);
  for (size_t i = 0; i < r->diagnostic_count; i++)
    cpuexec__strbuf_printf(sb, "  - %s\n", r->diagnostics[i]);
}

static int finish(cpuexec__strbuf *sb, char *buf, size_t size, const char *what) {
  if (sb->failed) {
    cpuexec__strbuf_free(sb);
    return cpuexec__fail(CPUEXEC_ENOMEM, "%s: out of memory", what);
  }
  int n = cpuexec__strbuf_copy_out(sb, buf, size);
  cpuexec__strbuf_free(sb);
  return n;
}

static int check_args(const void *object, cpuexec_format format, char *buf, size_t size, const char *what) {
  if (object == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "%s: NULL", what);
  if (format != CPUEXEC_FORMAT_TEXT && format != CPUEXEC_FORMAT_JSON)
    return cpuexec__fail(CPUEXEC_EINVAL, "format: %d is not CPUEXEC_FORMAT_TEXT or CPUEXEC_FORMAT_JSON", (int)format);
  if (buf == NULL && size > 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "buf: NULL with size %zu; pass size 0 to measure", size);
  return 0;
}

CPUEXEC_EXPORT int cpuexec_resolved_describe(const cpuexec_resolved *resolved, cpuexec_format format, char *buf,
                                             size_t size) {
  int rc = check_args(resolved, format, buf, size, "resolved");
  if (rc != 0)
    return rc;
  cpuexec__strbuf sb = {0};
  describe_resolved(&sb, resolved, format);
  return finish(&sb, buf, size, "cpuexec_resolved_describe");
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
  put_cpulist(sb, ids, t->processor_count);
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
    put_cpulist(sb, ids + i, j - i);
    cpuexec__strbuf_printf(sb, "\n");
    i = j;
  }
  free(ids);
}

CPUEXEC_EXPORT int cpuexec_topology_describe(const cpuexec_topology *topology, cpuexec_format format, char *buf,
                                             size_t size) {
  int rc = check_args(topology, format, buf, size, "topology");
  if (rc != 0)
    return rc;
  cpuexec__strbuf sb = {0};
  describe_topology(&sb, topology, format);
  return finish(&sb, buf, size, "cpuexec_topology_describe");
}
