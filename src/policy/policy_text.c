/* The policy's text form: "key=value,key=value" (grammar in cpuexec/policy.h),
 * and the same text read from CPUEXEC_POLICY.
 *
 * Decisions the header leaves open, made strict on purpose so a typo never
 * silently becomes a different policy:
 * - No whitespace anywhere; keys and enum names are lower case.
 * - Every item is key=value; the one exception is cpu_set, whose value is a
 *   Linux cpulist: items without '=' after it continue its list.
 * - Numbers are decimal digits without sign or leading zeros. num_threads
 *   reads a leading '-' only to say "negative" rather than "not a number".
 * - spin_budget is a plain count for fixed_iterations and a duration with a
 *   unit (ns, us, ms, s) for fixed_duration; the other policies take none
 *   (0 is accepted). The unit is checked against spin_policy after the whole
 *   text is read, so the keys may come in any order.
 * - cpu_set= (the empty cpulist, as Linux writes an empty set) is the only
 *   empty value accepted; format writes it for a policy without a set.
 * - The request-only rules of policy_check.h are applied, so a text that
 *   parses is a request that only the topology can still reject. */
#include <stdio.h>
#include <string.h>

#include <cpuexec/policy.h>

#include "cpulist.h"
#include "core/env.h"
#include "core/text.h"
#include "core/error.h"
#include "policy_check.h"
#include "core/strbuf.h"

enum policy_key {
  KEY_NUM_THREADS,
  KEY_SPIN_POLICY,
  KEY_SPIN_BUDGET,
  KEY_AFFINITY_POLICY,
  KEY_CPU_SET,
  KEY_ALLOW_NESTED,
  KEY_INHERIT_FP,
  KEY_PARTICIPATION,
  KEY_NODE_BUDGET,
  KEY_COUNT
};

static const char *const key_names[KEY_COUNT] = {
    [KEY_NUM_THREADS] = "num_threads",     [KEY_SPIN_POLICY] = "spin_policy",
    [KEY_SPIN_BUDGET] = "spin_budget",     [KEY_AFFINITY_POLICY] = "affinity_policy",
    [KEY_CPU_SET] = "cpu_set",             [KEY_ALLOW_NESTED] = "allow_nested_parallelism",
    [KEY_INHERIT_FP] = "inherit_fp_environment", [KEY_PARTICIPATION] = "participation",
    [KEY_NODE_BUDGET] = "node_budget",
};

#define KEY_LIST                                                                                              \
  "num_threads, spin_policy, spin_budget, affinity_policy, cpu_set, allow_nested_parallelism, "                \
  "inherit_fp_environment, participation, node_budget"
#define SPIN_LIST "adaptive, fixed_iterations, fixed_duration or park_immediately"
#define AFFINITY_LIST "none, physical_cores, performance_cores, physical_then_smt or explicit"
#define PARTICIPATION_LIST "take_over or every_participant"
#define NODE_BUDGET_LIST "default, cgroup, host or off"

static int parse_num_threads(const char *v, size_t n, cpuexec_policy *p) {
  uint64_t value;
  bool negative = n > 1 && v[0] == '-';
  cpuexec__decimal_status status =
      cpuexec__decimal_parse(v + negative, n - negative, (uint64_t)INT32_MAX + negative, &value);
  if (negative && (status == CPUEXEC__DECIMAL_TOO_LARGE || (status == CPUEXEC__DECIMAL_OK && value > 0)))
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "num_threads: '%.*s' is negative; use 0 for the topology default, 1 for serial or a "
                         "participant count",
                         CPUEXEC__QUOTE_LEN(n), v);
  if (negative && status == CPUEXEC__DECIMAL_OK)
    status = CPUEXEC__DECIMAL_NOT_DIGIT; /* "-0" */
  if (status == CPUEXEC__DECIMAL_TOO_LARGE)
    return cpuexec__fail(CPUEXEC_EINVAL, "num_threads: '%.*s' is above %d", CPUEXEC__QUOTE_LEN(n), v, INT32_MAX);
  if (status != CPUEXEC__DECIMAL_OK)
    return cpuexec__fail(CPUEXEC_EINVAL, "num_threads: '%.*s' %s", CPUEXEC__QUOTE_LEN(n), v,
                         cpuexec__decimal_problem(status));
  p->num_threads = (int32_t)value;
  return 0;
}

static int parse_spin_policy(const char *v, size_t n, cpuexec_policy *p) {
  for (int s = CPUEXEC_SPIN_ADAPTIVE; s <= CPUEXEC_SPIN_PARK_IMMEDIATELY; s++)
    if (cpuexec__text_is(v, n, cpuexec_spin_policy_name((cpuexec_spin_policy)s))) {
      p->spin_policy = (cpuexec_spin_policy)s;
      return 0;
    }
  return cpuexec__fail(CPUEXEC_EINVAL, "spin_policy: '%.*s' is not a spin policy; use " SPIN_LIST,
                       CPUEXEC__QUOTE_LEN(n), v);
}

static int parse_affinity_policy(const char *v, size_t n, cpuexec_policy *p) {
  for (int a = CPUEXEC_AFFINITY_NONE; a <= CPUEXEC_AFFINITY_EXPLICIT; a++)
    if (cpuexec__text_is(v, n, cpuexec_affinity_policy_name((cpuexec_affinity_policy)a))) {
      p->affinity_policy = (cpuexec_affinity_policy)a;
      return 0;
    }
  return cpuexec__fail(CPUEXEC_EINVAL, "affinity_policy: '%.*s' is not an affinity policy; use " AFFINITY_LIST,
                       CPUEXEC__QUOTE_LEN(n), v);
}

static int parse_participation(const char *v, size_t n, cpuexec_policy *p) {
  for (int r = CPUEXEC_PARTICIPATION_TAKE_OVER; r <= CPUEXEC_PARTICIPATION_EVERY_PARTICIPANT; r++)
    if (cpuexec__text_is(v, n, cpuexec_participation_name((cpuexec_participation)r))) {
      p->participation = (cpuexec_participation)r;
      return 0;
    }
  return cpuexec__fail(CPUEXEC_EINVAL, "participation: '%.*s' is not a participation rule; use " PARTICIPATION_LIST,
                       CPUEXEC__QUOTE_LEN(n), v);
}

static int parse_node_budget(const char *v, size_t n, cpuexec_policy *p) {
  for (int b = CPUEXEC_NODE_BUDGET_DEFAULT; b <= CPUEXEC_NODE_BUDGET_OFF; b++)
    if (cpuexec__text_is(v, n, cpuexec_node_budget_name((cpuexec_node_budget)b))) {
      p->node_budget = (cpuexec_node_budget)b;
      return 0;
    }
  return cpuexec__fail(CPUEXEC_EINVAL, "node_budget: '%.*s' is not a node budget choice; use " NODE_BUDGET_LIST,
                       CPUEXEC__QUOTE_LEN(n), v);
}

static int parse_bool(const char *key, const char *v, size_t n, bool *out) {
  if (cpuexec__text_is(v, n, "true") || cpuexec__text_is(v, n, "false")) {
    *out = v[0] == 't';
    return 0;
  }
  return cpuexec__fail(CPUEXEC_EINVAL, "%s: '%.*s' is not a boolean; use true or false", key, CPUEXEC__QUOTE_LEN(n),
                       v);
}

/* Reads spin_budget once spin_policy is final: a count, or a duration in ns. */
static int parse_spin_budget(const char *v, size_t n, cpuexec_policy *p) {
  uint64_t scale;
  size_t digits = cpuexec__duration_split(v, n, &scale);
  bool has_unit = digits < n;
  if (has_unit && (scale == 0 || digits == 0))
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "spin_budget: '%.*s' is neither a decimal count (1000) nor a duration with a unit "
                         CPUEXEC__DURATION_UNITS " (50us)",
                         CPUEXEC__QUOTE_LEN(n), v);
  const char *spin = cpuexec_spin_policy_name(p->spin_policy);
  if (has_unit && p->spin_policy != CPUEXEC_SPIN_FIXED_DURATION)
    return cpuexec__fail(CPUEXEC_EINVAL, "spin_budget: '%.*s' is a duration, but spin_policy=%s takes %s",
                         CPUEXEC__QUOTE_LEN(n), v, spin,
                         p->spin_policy == CPUEXEC_SPIN_FIXED_ITERATIONS
                             ? "a plain iteration count such as 1000"
                             : "no budget; give one only with fixed_iterations or fixed_duration");
  if (!has_unit && p->spin_policy == CPUEXEC_SPIN_FIXED_DURATION)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "spin_budget: '%.*s' has no unit; spin_policy=fixed_duration takes a duration such as 50us "
                         "(units ns, us, ms, s)",
                         CPUEXEC__QUOTE_LEN(n), v);
  uint64_t value;
  cpuexec__decimal_status status = cpuexec__decimal_parse(v, digits, UINT64_MAX / scale, &value);
  if (status == CPUEXEC__DECIMAL_TOO_LARGE)
    return cpuexec__fail(CPUEXEC_EINVAL, "spin_budget: '%.*s' is above %llu%s", CPUEXEC__QUOTE_LEN(n), v,
                         (unsigned long long)(UINT64_MAX / scale), has_unit ? "ns (2^64-1 ns in all)" : "");
  if (status != CPUEXEC__DECIMAL_OK)
    return cpuexec__fail(CPUEXEC_EINVAL, "spin_budget: '%.*s' %s", CPUEXEC__QUOTE_LEN(n), v,
                         cpuexec__decimal_problem(status));
  p->spin_budget = value * scale;
  return 0;
}

CPUEXEC_EXPORT int cpuexec_policy_parse(const char *text, cpuexec_policy *policy) {
  if (!text || !policy)
    return cpuexec__fail(CPUEXEC_EINVAL, "policy: %s is NULL; pass a text (\"\" for the defaults) and a policy",
                         !text ? "text" : "policy");
  int rc = cpuexec__text_reject_blanks("policy", text);
  if (rc != 0)
    return rc;

  /* Parsed into a local copy: *policy changes only when everything is valid. */
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  bool seen[KEY_COUNT] = {false};
  const char *budget = NULL;
  size_t budget_len = 0;
  bool in_cpu_set = false;
  uint32_t set_count = 0; /* p.cpu_set_count as the cpulist reader counts it */

  /* Items run from one comma to the next; "" has none (text.h). */
  cpuexec__text_items items = cpuexec__text_items_of(text);
  for (cpuexec__text_item it; cpuexec__text_items_next(&items, &it);) {
    const char *item = it.text;
    size_t len = it.len;
    const char *eq = it.value ? it.value - 1 : NULL;
    if (len == 0)
      return cpuexec__fail(CPUEXEC_EINVAL,
                           "policy: empty item at offset %zu of '%.*s'; items are key=value separated by single "
                           "commas",
                           (size_t)(item - text), CPUEXEC__QUOTE_LEN(strlen(text)), text);
    if (!eq && in_cpu_set) {
      int32_t first, last;
      if ((rc = cpuexec__cpulist_parse_item("cpu_set", item, len, &first, &last)) != 0 ||
          (rc = cpuexec__cpulist_append("cpu_set", first, last, p.cpu_set, CPUEXEC_CPU_SET_MAX, &set_count)) != 0)
        return rc;
      p.cpu_set_count = (int32_t)set_count;
    } else if (!eq) {
      return cpuexec__fail(CPUEXEC_EINVAL,
                           "policy: '%.*s' is not key=value; keys are " KEY_LIST
                           " (only cpu_set continues its list after a comma)",
                           CPUEXEC__QUOTE_LEN(len), item);
    } else {
      size_t key_len = (size_t)(eq - item);
      const char *v = eq + 1;
      size_t n = len - key_len - 1;
      if (key_len == 0)
        return cpuexec__fail(CPUEXEC_EINVAL, "policy: '%.*s' has no key; keys are " KEY_LIST,
                             CPUEXEC__QUOTE_LEN(len), item);
      int key = 0;
      while (key < KEY_COUNT && !cpuexec__text_is(item, key_len, key_names[key]))
        key++;
      if (key == KEY_COUNT)
        return cpuexec__fail(CPUEXEC_EINVAL, "policy: unknown key '%.*s'; keys are " KEY_LIST,
                             CPUEXEC__QUOTE_LEN(key_len), item);
      if (seen[key])
        return cpuexec__fail(CPUEXEC_EINVAL, "%s: given twice (again as '%.*s'); each key may appear once",
                             key_names[key], CPUEXEC__QUOTE_LEN(len), item);
      seen[key] = true;
      in_cpu_set = false;
      if (n == 0 && key != KEY_CPU_SET)
        return cpuexec__fail(CPUEXEC_EINVAL, "%s: empty value; write %s=VALUE", key_names[key], key_names[key]);
      switch (key) {
      case KEY_NUM_THREADS:
        rc = parse_num_threads(v, n, &p);
        break;
      case KEY_SPIN_POLICY:
        rc = parse_spin_policy(v, n, &p);
        break;
      case KEY_SPIN_BUDGET:
        budget = v; /* read after the loop, when spin_policy is known */
        budget_len = n;
        rc = 0;
        break;
      case KEY_AFFINITY_POLICY:
        rc = parse_affinity_policy(v, n, &p);
        break;
      case KEY_CPU_SET:
        rc = cpuexec__cpulist_parse("cpu_set", v, n, p.cpu_set, CPUEXEC_CPU_SET_MAX, &set_count);
        p.cpu_set_count = (int32_t)set_count;
        /* An empty cpu_set= has no list for later items to continue. */
        in_cpu_set = n > 0;
        break;
      case KEY_ALLOW_NESTED:
        rc = parse_bool(key_names[key], v, n, &p.allow_nested_parallelism);
        break;
      case KEY_PARTICIPATION:
        rc = parse_participation(v, n, &p);
        break;
      case KEY_NODE_BUDGET:
        rc = parse_node_budget(v, n, &p);
        break;
      default:
        rc = parse_bool(key_names[key], v, n, &p.inherit_fp_environment);
        break;
      }
      if (rc != 0)
        return rc;
    }
  }

  if (budget && (rc = parse_spin_budget(budget, budget_len, &p)) != 0)
    return rc;
  if ((rc = cpuexec__policy_check(&p)) != 0)
    return rc;
  *policy = p;
  return 0;
}

CPUEXEC_EXPORT int cpuexec_policy_format(const cpuexec_policy *policy, char *buf, size_t size) {
  if (!policy || (!buf && size > 0))
    return cpuexec__fail(CPUEXEC_EINVAL, "policy_format: %s is NULL", !policy ? "policy" : "buf (with size > 0)");
  const char *spin = cpuexec_spin_policy_name(policy->spin_policy);
  const char *affinity = cpuexec_affinity_policy_name(policy->affinity_policy);
  if (!spin)
    return cpuexec__fail(CPUEXEC_EINVAL, "spin_policy: %d is not a spin policy; use " SPIN_LIST,
                         (int)policy->spin_policy);
  if (!affinity)
    return cpuexec__fail(CPUEXEC_EINVAL, "affinity_policy: %d is not an affinity policy; use " AFFINITY_LIST,
                         (int)policy->affinity_policy);
  const char *participation = cpuexec_participation_name(policy->participation);
  if (!participation)
    return cpuexec__fail(CPUEXEC_EINVAL, "participation: %d is not a participation rule; use " PARTICIPATION_LIST,
                         (int)policy->participation);
  const char *node_budget = cpuexec_node_budget_name(policy->node_budget);
  if (!node_budget)
    return cpuexec__fail(CPUEXEC_EINVAL, "node_budget: %d is not a node budget choice; use " NODE_BUDGET_LIST,
                         (int)policy->node_budget);
  if (policy->cpu_set_count < 0 || policy->cpu_set_count > CPUEXEC_CPU_SET_MAX)
    return cpuexec__fail(CPUEXEC_EINVAL, "cpu_set_count: %d; use 0 to %d entries", (int)policy->cpu_set_count,
                         CPUEXEC_CPU_SET_MAX);

  /* A duration in the largest unit that keeps it exact: 50000 ns is 50us. */
  char budget[32];
  if (policy->spin_policy == CPUEXEC_SPIN_FIXED_DURATION) {
    cpuexec__duration_format(policy->spin_budget, budget, sizeof budget);
  } else {
    snprintf(budget, sizeof budget, "%llu", (unsigned long long)policy->spin_budget);
  }

  /* cpu_set last: its value holds commas, and last it reads unambiguously.
   * node_budget only when not the default, so that every text written
   * before the key existed reads the same. */
  char head[360];
  snprintf(head, sizeof head,
           "num_threads=%d,spin_policy=%s,spin_budget=%s,affinity_policy=%s,allow_nested_parallelism=%s,"
           "inherit_fp_environment=%s,participation=%s,%s%s%scpu_set=",
           (int)policy->num_threads, spin, budget, affinity, policy->allow_nested_parallelism ? "true" : "false",
           policy->inherit_fp_environment ? "true" : "false", participation,
           policy->node_budget != CPUEXEC_NODE_BUDGET_DEFAULT ? "node_budget=" : "",
           policy->node_budget != CPUEXEC_NODE_BUDGET_DEFAULT ? node_budget : "",
           policy->node_budget != CPUEXEC_NODE_BUDGET_DEFAULT ? "," : "");
  cpuexec__bounded out = cpuexec__bounded_on(buf, size);
  cpuexec__bounded_put(&out, head, strlen(head));
  size_t len = out.len;
  len += cpuexec__cpulist_format(policy->cpu_set, (uint32_t)policy->cpu_set_count, len < size ? buf + len : NULL,
                                 len < size ? size - len : 0);
  return (int)len;
}

static int parse_into(const char *text, void *policy) { return cpuexec_policy_parse(text, policy); }

CPUEXEC_EXPORT int cpuexec_policy_from_environment(cpuexec_policy *policy) {
  if (!policy)
    return cpuexec__fail(CPUEXEC_EINVAL, "policy: NULL; pass a cpuexec_policy to fill");
  /* The environment's whitespace rule (core/env.h): surrounding blanks go,
   * the grammar itself stays strict; errors start "CPUEXEC_POLICY: ". */
  bool found;
  int rc = cpuexec__env_parse("CPUEXEC_POLICY", parse_into, policy, &found);
  if (rc == 0 && !found)
    cpuexec_policy_init(policy);
  return rc;
}
