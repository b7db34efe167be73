/* The registry options' text form: "capacity=8,idle_retention=50ms", read
 * from CPUEXEC_REGISTRY for the process registry (grammar in
 * cpuexec/registry.h).
 *
 * The same strict rules as the policy text (src/policy/policy_text.c): no
 * whitespace, lower-case keys, each key once, decimal digits without sign or
 * leading zeros, durations with a unit (ns, us, ms, s) or 0, nothing left
 * over; *options changes only when the whole text is valid. The options'
 * defaults live here too, so the text needs nothing of registry.c. */
#include <stdlib.h>
#include <string.h>

#include <cpuexec/registry.h>

#include "core/decimal.h"
#include "core/error.h"

CPUEXEC_EXPORT void cpuexec_registry_options_init(cpuexec_registry_options *options) {
  if (!options) return;
  memset(options, 0, sizeof *options);
}

static bool token_is(const char *text, size_t len, const char *word) {
  return strlen(word) == len && memcmp(text, word, len) == 0;
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
  static const struct {
    const char *name;
    uint64_t ns;
  } units[] = {{"s", 1000000000u}, {"ms", 1000000u}, {"us", 1000u}, {"ns", 1u}};
  size_t digits = 0;
  while (digits < n && v[digits] >= '0' && v[digits] <= '9') digits++;
  uint64_t scale = 0;
  for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
    if (token_is(v + digits, n - digits, units[u].name)) scale = units[u].ns;
  if (token_is(v, n, "0")) scale = 1;
  if (scale == 0 || digits == 0)
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "idle_retention: '%.*s' is not a duration; use digits and a unit ns, us, ms or s (50ms), "
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
  bool seen_capacity = false, seen_retention = false;
  const char *item = text;
  while (*item != '\0') {
    const char *end = strchr(item, ',');
    size_t len = end ? (size_t)(end - item) : strlen(item);
    const char *eq = memchr(item, '=', len);
    if (!eq)
      return cpuexec__fail(CPUEXEC_EINVAL, "registry options: '%.*s' is not key=value; keys are capacity and "
                                           "idle_retention, separated by ',' without spaces",
                           CPUEXEC__QUOTE_LEN(len), item);
    size_t key_len = (size_t)(eq - item);
    const char *v = eq + 1;
    size_t n = len - key_len - 1;
    int rc;
    if (token_is(item, key_len, "capacity")) {
      if (seen_capacity) return cpuexec__fail(CPUEXEC_EINVAL, "capacity: given twice; give each key once");
      seen_capacity = true;
      rc = parse_capacity(v, n, &o);
    } else if (token_is(item, key_len, "idle_retention")) {
      if (seen_retention) return cpuexec__fail(CPUEXEC_EINVAL, "idle_retention: given twice; give each key once");
      seen_retention = true;
      rc = parse_retention(v, n, &o);
    } else {
      return cpuexec__fail(CPUEXEC_EINVAL, "registry options: unknown key '%.*s'; use capacity or idle_retention",
                           CPUEXEC__QUOTE_LEN(key_len), item);
    }
    if (rc != 0) return rc;
    if (!end) break;
    item = end + 1;
    if (*item == '\0')
      return cpuexec__fail(CPUEXEC_EINVAL, "registry options: the text ends with ','; remove the trailing comma");
  }
  *options = o;
  return 0;
}

CPUEXEC_EXPORT int cpuexec_registry_options_from_environment(cpuexec_registry_options *options) {
  if (!options) return cpuexec__fail(CPUEXEC_EINVAL, "options: NULL; pass the registry options to fill");
  const char *text = getenv("CPUEXEC_REGISTRY");
  if (!text) {
    cpuexec_registry_options_init(options);
    return 0;
  }
  int rc = cpuexec_registry_options_parse(text, options);
  if (rc != 0) {
    char detail[400];
    strncpy(detail, cpuexec_error_message(), sizeof detail - 1);
    detail[sizeof detail - 1] = '\0';
    return cpuexec__fail(rc, "CPUEXEC_REGISTRY: %s", detail);
  }
  return 0;
}
