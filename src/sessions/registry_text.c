/* The registry options' text form: "capacity=8,idle_retention=50ms", read
 * from CPUEXEC_REGISTRY for the process registry (grammar in
 * cpuexec/registry.h).
 *
 * The same strict rules as the policy text, from the same text layer
 * (core/text.h): no whitespace, lower-case keys, each key once, decimal
 * digits without sign or leading zeros, durations with a unit (ns, us, ms,
 * s) or 0, nothing left over; *options changes only when the whole text is
 * valid. The options'
 * defaults live here too, so the text needs nothing of registry.c. */
#include <string.h>

#include <cpuexec/registry.h>

#include "core/env.h"
#include "core/error.h"
#include "core/text.h"

CPUEXEC_EXPORT void cpuexec_registry_options_init(cpuexec_registry_options *options) {
  if (!options) return;
  memset(options, 0, sizeof *options);
}


static int parse_capacity(const char *v, size_t n, cpuexec_registry_options *o) {
  uint64_t value;
  cpuexec__decimal_status status = cpuexec__decimal_parse(v, n, INT32_MAX, &value);
  if (status != CPUEXEC__DECIMAL_OK)
    return cpuexec__fail(CPUEXEC_EINVAL, "capacity: '%.*s' %s", CPUEXEC__QUOTE_LEN(n), v,
                         status == CPUEXEC__DECIMAL_TOO_LARGE ? "is above 2147483647"
                                                              : cpuexec__decimal_problem(status));
  if (value == 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "capacity: '0'; a registry needs room for at least 1 pool (the "
                                         "default, 8, when the key is absent)");
  o->capacity = (int32_t)value;
  return 0;
}

static int parse_retention(const char *v, size_t n, cpuexec_registry_options *o) {
  uint64_t scale;
  size_t digits = cpuexec__duration_split(v, n, &scale);
  if (digits == n) scale = 0;                    /* a unit is required ... */
  if (cpuexec__text_is(v, n, "0")) scale = 1;   /* ... except for 0 */
  if (scale == 0 || digits == 0)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "idle_retention: '%.*s' is not a duration; use digits and a unit " CPUEXEC__DURATION_UNITS " (50ms), "
                         "or 0 to stop idle pools at once",
                         CPUEXEC__QUOTE_LEN(n), v);
  uint64_t value;
  cpuexec__decimal_status status = cpuexec__decimal_parse(v, digits, UINT64_MAX / scale, &value);
  if (status != CPUEXEC__DECIMAL_OK)
    return cpuexec__fail(CPUEXEC_EINVAL, "idle_retention: '%.*s' %s", CPUEXEC__QUOTE_LEN(n), v,
                         cpuexec__decimal_problem(status));
  o->idle_retention_ns = value * scale;
  return 0;
}

CPUEXEC_EXPORT int cpuexec_registry_options_parse(const char *text, cpuexec_registry_options *options) {
  if (!text || !options)
    return cpuexec__fail(CPUEXEC_EINVAL, "registry options: %s is NULL; pass a text (\"\" for the defaults) and "
                                         "the options to fill", !text ? "text" : "options");
  cpuexec_registry_options o;
  cpuexec_registry_options_init(&o);
  /* No blank check up front: a blank is refused by the key or value that
   * holds it, whose message names that field (text.h's rule still holds). */
  int rc;
  bool seen_capacity = false, seen_retention = false;
  cpuexec__text_items items = cpuexec__text_items_of(text);
  for (cpuexec__text_item it; cpuexec__text_items_next(&items, &it);) {
    const char *item = it.text;
    size_t len = it.len;
    if (len == 0 && it.last && it.offset > 0)
      return cpuexec__fail(CPUEXEC_EINVAL, "registry options: the text ends with ','; remove the trailing comma");
    if (!it.value)
      return cpuexec__fail(CPUEXEC_EINVAL, "registry options: '%.*s' is not key=value; keys are capacity and "
                                           "idle_retention, separated by ',' without spaces",
                           CPUEXEC__QUOTE_LEN(len), item);
    size_t key_len = it.key_len;
    const char *v = it.value;
    size_t n = it.value_len;
    if (cpuexec__text_is(item, key_len, "capacity")) {
      if (seen_capacity) return cpuexec__fail(CPUEXEC_EINVAL, "capacity: given twice; give each key once");
      seen_capacity = true;
      rc = parse_capacity(v, n, &o);
    } else if (cpuexec__text_is(item, key_len, "idle_retention")) {
      if (seen_retention) return cpuexec__fail(CPUEXEC_EINVAL, "idle_retention: given twice; give each key once");
      seen_retention = true;
      rc = parse_retention(v, n, &o);
    } else {
      return cpuexec__fail(CPUEXEC_EINVAL, "registry options: unknown key '%.*s'; use capacity or idle_retention",
                           CPUEXEC__QUOTE_LEN(key_len), item);
    }
    if (rc != 0) return rc;
  }
  *options = o;
  return 0;
}

static int parse_into(const char *text, void *options) { return cpuexec_registry_options_parse(text, options); }

CPUEXEC_EXPORT int cpuexec_registry_options_from_environment(cpuexec_registry_options *options) {
  if (!options) return cpuexec__fail(CPUEXEC_EINVAL, "options: NULL; pass the registry options to fill");
  /* The environment's whitespace rule (core/env.h), as for CPUEXEC_POLICY. */
  bool found;
  int rc = cpuexec__env_parse("CPUEXEC_REGISTRY", parse_into, options, &found);
  if (rc == 0 && !found) cpuexec_registry_options_init(options);
  return rc;
}
