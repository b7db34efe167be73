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

/* What a waiting thread does, per the executor's spin plan
 * (executor/executor.c, cpuexec__spin_plan_of), its waits (executor/wait.c)
 * and the permit model's rules on them (executor/permit.h): a spin, then,
 * adaptive only, the long spin, the gap spin and the cadence, then the
 * park. An adaptive executor whose threads outnumber the visible
 * processors parks at once (the permit model's "spin at all", the same
 * test; tests/whitebox/test_executor_lifecycle.c holds the two together);
 * so does park_immediately. */
typedef struct spin_truth {
  bool parks_at_once;
  bool yields;             /* duration spins yield to the awaited thread on this processor */
  uint64_t long_spin_ns;   /* 0: none */
  uint64_t gap_spin_max_ns; /* 0: none */
  bool follows_cadence;
} spin_truth;

static spin_truth spin_truth_of(const cpuexec_resolved *r) {
  const cpuexec_resolved_spin *s = &r->spin;
  uint32_t threads = r->effective_threads ? r->effective_threads : 1;
  spin_truth t = {0};
  switch (s->policy) {
  case CPUEXEC_SPIN_ADAPTIVE:
    t.parks_at_once = s->park_when_oversubscribed && r->visible_processors != 0 && threads > r->visible_processors;
    if (t.parks_at_once) break;
    t.yields = true;
    t.long_spin_ns = CPUEXEC__LONG_SPIN_NS;
    t.gap_spin_max_ns = CPUEXEC__GAP_SPIN_MAX_NS;
    t.follows_cadence = s->cadence_burn_permille != 0;
    break;
  case CPUEXEC_SPIN_FIXED_DURATION:
    t.yields = true;
    break;
  case CPUEXEC_SPIN_FIXED_ITERATIONS:
    break;
  case CPUEXEC_SPIN_PARK_IMMEDIATELY:
    t.parks_at_once = true;
    break;
  }
  return t;
}

#define SPIN_INDENT "\n                       "

static void describe_spin_text(cpuexec__strbuf *sb, const cpuexec_resolved *r) {
  const cpuexec_resolved_spin *s = &r->spin;
  spin_truth t = spin_truth_of(r);
  uint32_t threads = r->effective_threads ? r->effective_threads : 1;
  cpuexec__strbuf_printf(sb, "%s", name_or(cpuexec_spin_policy_name(s->policy), "invalid"));
  if (threads == 1) {
    cpuexec__strbuf_printf(sb, " (serial: no thread waits)");
    return;
  }
  if (s->policy == CPUEXEC_SPIN_ADAPTIVE && r->visible_processors != 0)
    cpuexec__strbuf_printf(sb, ", %u threads on %u visible processors", threads, r->visible_processors);
  if (t.parks_at_once) {
    cpuexec__strbuf_printf(sb, s->policy == CPUEXEC_SPIN_ADAPTIVE
                                   ? ": oversubscribed, so a waiting thread parks at once (no spin, no long or gap "
                                     "spin, no cadence)"
                                   : ": a waiting thread parks at once");
    return;
  }
  cpuexec__strbuf_printf(sb, ": a waiting thread" SPIN_INDENT "1. spins ");
  if (s->policy == CPUEXEC_SPIN_FIXED_ITERATIONS)
    cpuexec__strbuf_printf(sb, "%llu pause iterations", (unsigned long long)s->spin_iterations);
  else
    cpuexec__strbuf_printf(sb, "%llu ns", (unsigned long long)s->spin_ns);
  if (t.yields)
    cpuexec__strbuf_printf(sb, ", yielding while the thread it waits for runs on its processor (lane 0's caller "
                               "and its workers)");
  int step = 2;
  if (t.long_spin_ns)
    cpuexec__strbuf_printf(sb,
                           SPIN_INDENT "%d. spins up to %llu ns more while what will wake it runs (a caller "
                                       "waiting for its workers; a worker whose share was taken, while its caller "
                                       "runs that region), unless it was preempted within the last %u ms",
                           step++, (unsigned long long)t.long_spin_ns, CPUEXEC__CROWDED_WINDOW_NS / 1000000u);
  if (t.gap_spin_max_ns) { /* only beside the long spin, whose skip it shares */
    cpuexec__strbuf_printf(sb,
                           SPIN_INDENT "%d. a worker that follows no cadence spins through the gaps it keeps "
                                       "seeing: woken by a region within %llu ns of a wait's start, it spins 1.5 "
                                       "times that gap (at most %llu ns) from the start of its next waits while "
                                       "such gaps recur within %u waits; skipped as in %d",
                           step, (unsigned long long)t.gap_spin_max_ns, (unsigned long long)t.gap_spin_max_ns,
                           CPUEXEC__GAP_SPIN_MEMORY_WAITS, step - 1);
    step++;
  }
  if (t.follows_cadence)
    cpuexec__strbuf_printf(sb,
                           SPIN_INDENT "%d. a worker follows a steady call cadence: sleeps until shortly before "
                                       "the next region and spins across a window around it, at most %u permille "
                                       "of its time",
                           step++, s->cadence_burn_permille);
  cpuexec__strbuf_printf(sb, SPIN_INDENT "%d. parks", step);
  if (s->policy == CPUEXEC_SPIN_ADAPTIVE && s->park_when_oversubscribed)
    cpuexec__strbuf_printf(sb, SPIN_INDENT "more threads than visible processors would park at once");
  else
    cpuexec__strbuf_printf(sb, SPIN_INDENT "exactly as asked: no long or gap spin, no cadence");
  cpuexec__strbuf_printf(sb,
                         SPIN_INDENT "a worker parks at once while it stands aside for callers running regions "
                                     "beside each other, and for %u regions after callers met (the permit model, "
                                     "doc/spinning.md)",
                         CPUEXEC__UNSETTLED_REGIONS);
}

/* The same in JSON: what bounds each stage, then the stages a wait may go
 * through, in order (a worker makes the gap spin only when it follows no
 * cadence; long_spin_skipped_when is both long spins' rule). */
static void describe_spin_json(cpuexec__strbuf *sb, const cpuexec_resolved *r) {
  spin_truth t = spin_truth_of(r);
  cpuexec__strbuf_printf(sb,
                         ",\"parks_at_once\":%s,\"yields_when_sharing_processor\":%s,\"long_spin_ns\":%llu,"
                         "\"gap_spin_max_ns\":%llu,\"long_spin_skipped_when\":",
                         t.parks_at_once ? "true" : "false", t.yields ? "true" : "false",
                         (unsigned long long)t.long_spin_ns, (unsigned long long)t.gap_spin_max_ns);
  if (t.long_spin_ns)
    cpuexec__strbuf_printf(sb, "\"preempted within %u ms\"", CPUEXEC__CROWDED_WINDOW_NS / 1000000u);
  else
    cpuexec__strbuf_printf(sb, "null");
  cpuexec__strbuf_printf(sb, ",\"follows_cadence\":%s,\"stages\":[%s%s%s%s\"park\"]",
                         t.follows_cadence ? "true" : "false", t.parks_at_once ? "" : "\"spin\",",
                         t.long_spin_ns ? "\"long_spin\"," : "", t.gap_spin_max_ns ? "\"gap_spin\"," : "",
                         t.follows_cadence ? "\"cadence\"," : "");
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
  if (p->node_budget != CPUEXEC_NODE_BUDGET_DEFAULT)
    cpuexec__strbuf_printf(sb, ",\"node_budget\":\"%s\"", name_or(cpuexec_node_budget_name(p->node_budget), "invalid"));
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
  if (p->node_budget != CPUEXEC_NODE_BUDGET_DEFAULT)
    cpuexec__strbuf_printf(sb, ",node_budget=%s", name_or(cpuexec_node_budget_name(p->node_budget), "invalid"));
}

/* Who the executor's threads share the node's CPUs with (cpuexec/node.h). */
static const char *node_budget_meaning(cpuexec_node_budget b) {
  switch (b) {
  case CPUEXEC_NODE_BUDGET_HOST:
    return "one budget of the visible processors for all of this user's libcpuexec processes";
  case CPUEXEC_NODE_BUDGET_OFF:
    return "none: the pool counts alone";
  default:
    return "one budget of the cgroup's quota or cpuset for this user's libcpuexec processes in it";
  }
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
    cpuexec__strbuf_printf(sb, ",\"node_budget\":");
    cpuexec__strbuf_json_string(sb, name_or(cpuexec_node_budget_name(r->node_budget), "invalid"));
    cpuexec__strbuf_printf(sb, ",\"node_budget_from\":");
    cpuexec__strbuf_json_string(sb, r->node_budget_from);
    cpuexec__strbuf_printf(sb, ",\"spin\":{\"policy\":");
    cpuexec__strbuf_json_string(sb, name_or(cpuexec_spin_policy_name(r->spin.policy), "invalid"));
    cpuexec__strbuf_printf(sb,
                           ",\"spin_ns\":%llu,\"spin_iterations\":%llu,\"park_when_oversubscribed\":%s,"
                           "\"cadence_burn_permille\":%u",
                           (unsigned long long)r->spin.spin_ns, (unsigned long long)r->spin.spin_iterations,
                           r->spin.park_when_oversubscribed ? "true" : "false", r->spin.cadence_burn_permille);
    describe_spin_json(sb, r);
    cpuexec__strbuf_printf(sb, "}");
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
  cpuexec__strbuf_printf(sb, "\nnesting:               %s\nparticipation:         %s\nnode budget:           %s (%s; from %s)\n"
                         "sharing key:           %s\ndiagnostics:\n",
                         r->allow_nested ? "allowed (nested calls still run inline)" : "nested calls run inline",
                         r->every_participant ? "every_participant (every admitted participant runs a range)"
                                              : "take_over (late workers' shares are taken over)",
                         name_or(cpuexec_node_budget_name(r->node_budget), "invalid"),
                         node_budget_meaning(r->node_budget), r->node_budget_from, r->sharing_key);
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
