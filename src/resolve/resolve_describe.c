/* Text and JSON descriptions of a resolution (topology_describe.c does the
 * topology's). Deterministic: the same object gives the same bytes. */
#include <stdio.h>
#include <stdlib.h>

#include "policy/cpulist.h"
#include "core/error.h"
#include "resolved.h"
#include "core/strbuf.h"
#include "topology/topology_internal.h"

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
  cpuexec__strbuf_printf(sb, ",\"allow_nested_parallelism\":%s", p->allow_nested_parallelism ? "true" : "false");
  if (p->inherit_fp_environment)
    cpuexec__strbuf_printf(sb, ",\"inherit_fp_environment\":true");
  if (p->participation != CPUEXEC_PARTICIPATION_TAKE_OVER)
    cpuexec__strbuf_printf(sb, ",\"participation\":\"%s\"", name_or(cpuexec_participation_name(p->participation), "invalid"));
  cpuexec__strbuf_printf(sb, "}");
}

static void describe_request_text(cpuexec__strbuf *sb, const cpuexec_policy *p) {
  cpuexec__strbuf_printf(sb, "num_threads=%d,spin_policy=%s,spin_budget=%llu,affinity_policy=%s",
                         (int)p->num_threads, name_or(cpuexec_spin_policy_name(p->spin_policy), "invalid"),
                         (unsigned long long)p->spin_budget,
                         name_or(cpuexec_affinity_policy_name(p->affinity_policy), "invalid"));
  if (p->cpu_set_count > 0 && p->cpu_set_count <= CPUEXEC_CPU_SET_MAX) {
    cpuexec__strbuf_printf(sb, ",cpu_set=");
    cpuexec__cpulist_put(sb, p->cpu_set, (uint32_t)p->cpu_set_count);
  }
  cpuexec__strbuf_printf(sb, ",allow_nested_parallelism=%s", p->allow_nested_parallelism ? "true" : "false");
  if (p->inherit_fp_environment)
    cpuexec__strbuf_printf(sb, ",inherit_fp_environment=true");
  if (p->participation != CPUEXEC_PARTICIPATION_TAKE_OVER)
    cpuexec__strbuf_printf(sb, ",participation=%s", name_or(cpuexec_participation_name(p->participation), "invalid"));
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
    cpuexec__strbuf_printf(sb, ",\"participation\":\"%s\"",
                           r->every_participant ? "every_participant" : "take_over");
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
  cpuexec__strbuf_printf(sb, "\nnesting:               %s\nparticipation:         %s\nsharing key:           %s\n"
                         "diagnostics:\n",
                         r->allow_nested ? "allowed (nested calls still run inline)" : "nested calls run inline",
                         r->every_participant ? "every_participant (every admitted participant runs a range)"
                                              : "take_over (late workers' shares are taken over)",
                         r->sharing_key);
  for (size_t i = 0; i < r->diagnostic_count; i++)
    cpuexec__strbuf_printf(sb, "  - %s\n", r->diagnostics[i]);
}

CPUEXEC_EXPORT int cpuexec_resolved_describe(const cpuexec_resolved *resolved, cpuexec_format format, char *buf,
                                             size_t size) {
  int rc = cpuexec__describe_check(resolved, format, buf, size, "resolved");
  if (rc != 0)
    return rc;
  cpuexec__strbuf sb = {0};
  describe_resolved(&sb, resolved, format);
  return cpuexec__strbuf_finish(&sb, buf, size, "cpuexec_resolved_describe");
}
