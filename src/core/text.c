/* The text layer's functions (text.h): the whitespace check, durations and
 * key=value lists. */
#include "text.h"

#include <stdio.h>

#include "error.h"

int cpuexec__text_reject_blanks(const char *what, const char *text) {
  for (const char *c = text; *c; c++)
    if (cpuexec__text_blank(*c)) {
      /* Quote from the start of the item holding it, so a long text still shows where. */
      const char *from = c;
      while (from > text && from[-1] != ',')
        from--;
      return cpuexec__fail(CPUEXEC_EINVAL,
                           "%s: whitespace at offset %zu (in '%.*s'); the text form is key=value,key=value "
                           "without spaces",
                           what, (size_t)(c - text), CPUEXEC__QUOTE_LEN(strlen(from)), from);
    }
  return 0;
}

/* Largest first: formatting picks the first that divides exactly. */
static const struct {
  const char *name;
  uint64_t ns;
} units[] = {{"s", 1000000000u}, {"ms", 1000000u}, {"us", 1000u}, {"ns", 1u}};
#define UNIT_COUNT (sizeof units / sizeof units[0])

size_t cpuexec__duration_split(const char *v, size_t n, uint64_t *scale) {
  size_t digits = 0;
  while (digits < n && v[digits] >= '0' && v[digits] <= '9')
    digits++;
  *scale = digits == n ? 1 : 0;
  for (size_t u = 0; u < UNIT_COUNT && *scale == 0; u++)
    if (cpuexec__text_is(v + digits, n - digits, units[u].name))
      *scale = units[u].ns;
  return digits;
}

int cpuexec__duration_format(uint64_t ns, char *buf, size_t size) {
  size_t u = 0;
  while (ns == 0 ? u + 1 < UNIT_COUNT : ns % units[u].ns != 0)
    u++;
  return snprintf(buf, size, "%llu%s", (unsigned long long)(ns / units[u].ns), units[u].name);
}

bool cpuexec__text_items_next(cpuexec__text_items *it, cpuexec__text_item *item) {
  const char *at = it->next;
  if (!at)
    return false;
  const char *comma = strchr(at, ',');
  item->text = at;
  item->len = comma ? (size_t)(comma - at) : strlen(at);
  item->offset = (size_t)(at - it->text);
  item->last = comma == NULL;
  const char *eq = memchr(at, '=', item->len);
  item->key = at;
  item->key_len = eq ? (size_t)(eq - at) : item->len;
  item->value = eq ? eq + 1 : NULL;
  item->value_len = eq ? item->len - item->key_len - 1 : 0;
  it->next = comma ? comma + 1 : NULL;
  return true;
}
