/* Linux cpulist parsing and formatting (see cpulist.h). */
#include "cpulist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"
#include "core/error.h"
#include "core/strbuf.h"

static int parse_id(const char *field, const char *item, size_t item_len, const char *text, size_t len,
                    int32_t *id) {
  uint64_t value;
  cpuexec__decimal_status status = cpuexec__decimal_parse(text, len, CPUEXEC__CPU_ID_MAX, &value);
  if (status == CPUEXEC__DECIMAL_OK) {
    *id = (int32_t)value;
    return 0;
  }
  if (status == CPUEXEC__DECIMAL_TOO_LARGE)
    return cpuexec__fail(CPUEXEC_EINVAL, "%s: '%.*s' names a processor above %d", field,
                         CPUEXEC__QUOTE_LEN(item_len), item, CPUEXEC__CPU_ID_MAX);
  if (status == CPUEXEC__DECIMAL_LEADING_ZERO)
    return cpuexec__fail(CPUEXEC_EINVAL, "%s: '%.*s' has a leading zero; write processor ids in decimal without one",
                         field, CPUEXEC__QUOTE_LEN(item_len), item);
  return cpuexec__fail(CPUEXEC_EINVAL,
                       "%s: '%.*s' is not a processor id or range; items are decimal N or N-M "
                       "(a Linux cpulist such as 0,2,4-7)",
                       field, CPUEXEC__QUOTE_LEN(item_len), item);
}

int cpuexec__cpulist_parse_item(const char *field, const char *text, size_t len, int32_t *first, int32_t *last) {
  /* A '-' at position 0 is a sign, not a range: parse_id rejects it. */
  const char *dash = len > 1 ? memchr(text + 1, '-', len - 1) : NULL;
  int32_t lo, hi;
  int rc;
  if (!dash) {
    if ((rc = parse_id(field, text, len, text, len, &lo)) != 0)
      return rc;
    *first = *last = lo;
    return 0;
  }
  size_t lo_len = (size_t)(dash - text);
  if ((rc = parse_id(field, text, len, text, lo_len, &lo)) != 0 ||
      (rc = parse_id(field, text, len, dash + 1, len - lo_len - 1, &hi)) != 0)
    return rc;
  if (hi < lo)
    return cpuexec__fail(CPUEXEC_EINVAL, "%s: '%.*s' is a descending range; write it low-high (%d-%d)", field,
                         CPUEXEC__QUOTE_LEN(len), text, hi, lo);
  *first = lo;
  *last = hi;
  return 0;
}

int cpuexec__cpulist_append(const char *field, int32_t first, int32_t last, int32_t *ids, uint32_t capacity,
                            uint32_t *count) {
  uint64_t adding = (uint64_t)((int64_t)last - (int64_t)first) + 1;
  if (*count > capacity || adding > capacity - *count)
    return cpuexec__fail(CPUEXEC_EINVAL, "%s: %d-%d makes the list longer than %u processors", field, first, last,
                         capacity);
  for (int64_t id = first; id <= last; id++)
    ids[(*count)++] = (int32_t)id;
  return 0;
}

int cpuexec__cpulist_parse(const char *field, const char *text, size_t len, int32_t *ids, uint32_t capacity,
                           uint32_t *count) {
  uint32_t n = *count;
  const char *end = text + len;
  for (const char *item = text; len > 0 && item <= end;) {
    const char *comma = memchr(item, ',', (size_t)(end - item));
    const char *item_end = comma ? comma : end;
    int32_t first, last;
    int rc;
    if (item_end == item)
      return cpuexec__fail(CPUEXEC_EINVAL, "%s: '%.*s' has an empty item; separate ids and ranges by single commas",
                           field, CPUEXEC__QUOTE_LEN(len), text);
    if ((rc = cpuexec__cpulist_parse_item(field, item, (size_t)(item_end - item), &first, &last)) != 0 ||
        (rc = cpuexec__cpulist_append(field, first, last, ids, capacity, &n)) != 0)
      return rc;
    if (!comma)
      break;
    item = comma + 1;
  }
  *count = n;
  return 0;
}

size_t cpuexec__cpulist_format(const int32_t *ids, uint32_t count, char *buf, size_t size) {
  cpuexec__bounded out = cpuexec__bounded_on(buf, size);
  for (uint32_t i = 0; i < count;) {
    uint32_t j = i;
    while (j + 1 < count && ids[j] >= 0 && ids[j] < CPUEXEC__CPU_ID_MAX && ids[j + 1] == ids[j] + 1)
      j++;
    char item[32];
    int n = j > i ? snprintf(item, sizeof item, "%s%d-%d", i > 0 ? "," : "", (int)ids[i], (int)ids[j])
                  : snprintf(item, sizeof item, "%s%d", i > 0 ? "," : "", (int)ids[i]);
    cpuexec__bounded_put(&out, item, (size_t)n);
    i = j + 1;
  }
  return out.len;
}

int64_t cpuexec__cpulist_find_duplicate(const int32_t *ids, uint32_t count) {
  /* Quadratic, but lists are at most CPUEXEC_CPU_SET_MAX long and this runs
   * once per parse or resolution, never on a dispatch path. */
  for (uint32_t i = 1; i < count; i++)
    for (uint32_t j = 0; j < i; j++)
      if (ids[i] == ids[j])
        return i;
  return -1;
}

void cpuexec__cpulist_put(cpuexec__strbuf *sb, const int32_t *ids, uint32_t n) {
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
