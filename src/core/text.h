/* Internal: the text layer, one place for every text form libcpuexec reads
 * (the policy, the registry options, cpulists, every environment variable
 * through core/env.h): tokens, strict decimals, durations with units,
 * key=value lists, and the one whitespace rule.
 *
 * The whitespace rule (doc/environment.md says it for users): a text form
 * holds no blank anywhere (cpuexec__text_reject_blanks); a variable of the
 * environment is that text with the blanks before and after it ignored
 * (cpuexec__text_trim, applied by core/env.h), as the OpenMP runtimes do
 * for OMP_NUM_THREADS. Blanks are space, tab, newline, carriage return,
 * vertical tab and form feed.
 *
 * Strict decimals: digits 0-9 only (no sign, no "0x", no spaces), no
 * leading zeros (so "010" is never mistaken for octal), and no silent
 * wrap-around. */
#ifndef CPUEXEC_SRC_CORE_TEXT_H
#define CPUEXEC_SRC_CORE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum cpuexec__decimal_status {
  CPUEXEC__DECIMAL_OK = 0,
  CPUEXEC__DECIMAL_EMPTY,
  CPUEXEC__DECIMAL_NOT_DIGIT,
  CPUEXEC__DECIMAL_LEADING_ZERO,
  CPUEXEC__DECIMAL_TOO_LARGE
} cpuexec__decimal_status;

/* Reads exactly len characters at text as a decimal in [0, max]. */
static inline cpuexec__decimal_status cpuexec__decimal_parse(const char *text, size_t len, uint64_t max,
                                                             uint64_t *out) {
  if (len == 0)
    return CPUEXEC__DECIMAL_EMPTY;
  /* Every character first, so "0x10" reads as not-a-number, not as a leading zero. */
  for (size_t i = 0; i < len; i++)
    if (text[i] < '0' || text[i] > '9')
      return CPUEXEC__DECIMAL_NOT_DIGIT;
  if (len > 1 && text[0] == '0')
    return CPUEXEC__DECIMAL_LEADING_ZERO;
  uint64_t value = 0;
  for (size_t i = 0; i < len; i++) {
    uint64_t digit = (uint64_t)(text[i] - '0');
    if (digit > max || value > (max - digit) / 10)
      return CPUEXEC__DECIMAL_TOO_LARGE;
    value = value * 10 + digit;
  }
  *out = value;
  return CPUEXEC__DECIMAL_OK;
}

/* The end of a message "<field>: '<text>' ...", saying what is wrong. */
static inline const char *cpuexec__decimal_problem(cpuexec__decimal_status status) {
  switch (status) {
  case CPUEXEC__DECIMAL_EMPTY:
    return "is empty; a decimal number is required";
  case CPUEXEC__DECIMAL_NOT_DIGIT:
    return "is not a decimal number (digits 0-9 only: no sign, hex or spaces)";
  case CPUEXEC__DECIMAL_LEADING_ZERO:
    return "has a leading zero; write the decimal number without it";
  case CPUEXEC__DECIMAL_TOO_LARGE:
    return "is too large";
  case CPUEXEC__DECIMAL_OK:
    break;
  }
  return "is valid";
}

/* Messages quote at most this many characters of a value, so a long bad
 * value cannot crowd out the part of the message that says what is allowed. */
#define CPUEXEC__QUOTE_MAX 48
#define CPUEXEC__QUOTE_LEN(len) ((int)((len) > CPUEXEC__QUOTE_MAX ? CPUEXEC__QUOTE_MAX : (len)))

/* ---- blanks and tokens ---------------------------------------------------- */

static inline bool cpuexec__text_blank(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* text without its surrounding blanks: *len characters from the result. */
static inline const char *cpuexec__text_trim(const char *text, size_t *len) {
  size_t n = 0;
  while (cpuexec__text_blank(*text))
    text++;
  while (text[n])
    n++;
  while (n > 0 && cpuexec__text_blank(text[n - 1]))
    n--;
  *len = n;
  return text;
}

/* The len characters at text are exactly word. */
static inline bool cpuexec__text_is(const char *text, size_t len, const char *word) {
  return strlen(word) == len && memcmp(text, word, len) == 0;
}

/* The len characters at text are one of the NULL-terminated words. */
static inline bool cpuexec__text_is_one_of(const char *text, size_t len, const char *const *words) {
  for (; *words; words++)
    if (cpuexec__text_is(text, len, *words))
      return true;
  return false;
}

/* 0, or CPUEXEC_EINVAL when text holds a blank: "<what>: whitespace at
 * offset N (in '<the item holding it>'); the text form is key=value,key=value
 * without spaces". */
int cpuexec__text_reject_blanks(const char *what, const char *text);

/* ---- durations ------------------------------------------------------------- */

/* A duration is decimal digits and a unit: ns, us, ms or s ("50us"). */
#define CPUEXEC__DURATION_UNITS "ns, us, ms or s"

/* Splits v[0..n) into its leading digits (the count returned) and the rest;
 * *scale is the rest's unit in nanoseconds, 1 when there is no rest, and 0
 * when the rest is not a unit. */
size_t cpuexec__duration_split(const char *v, size_t n, uint64_t *scale);

/* Writes ns in the largest unit that keeps it exact (50000 is "50us", 0 is
 * "0ns") into buf, like snprintf. */
int cpuexec__duration_format(uint64_t ns, char *buf, size_t size);

/* ---- key=value lists ----------------------------------------------------- */

/* "key=value,key=value": items run from one comma to the next; "" has none,
 * and every comma is followed by an item, empty when two commas meet or the
 * text ends with one. Each grammar decides what an empty item or an item
 * without '=' means. */
typedef struct cpuexec__text_items {
  const char *text; /* the whole list */
  const char *next; /* the next item, NULL after the last */
} cpuexec__text_items;

typedef struct cpuexec__text_item {
  const char *text;  /* the item, len characters */
  size_t len;
  size_t offset;     /* of the item in the list */
  const char *key;   /* before the first '=' (the whole item when there is none) */
  size_t key_len;
  const char *value; /* after the first '=' (NULL when there is none) */
  size_t value_len;
  bool last;         /* no comma follows */
} cpuexec__text_item;

static inline cpuexec__text_items cpuexec__text_items_of(const char *text) {
  cpuexec__text_items it = {text, *text ? text : NULL};
  return it;
}

/* The next item into *item; false after the last. */
bool cpuexec__text_items_next(cpuexec__text_items *it, cpuexec__text_item *item);

#endif
