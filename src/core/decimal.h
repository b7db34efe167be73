/* Internal: strict decimal numbers for the text forms (policy, cpulists).
 *
 * Strict means: digits 0-9 only (no sign, no "0x", no spaces), no leading
 * zeros (so "010" is never mistaken for octal), and no silent wrap-around. */
#ifndef CPUEXEC_SRC_DECIMAL_H
#define CPUEXEC_SRC_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

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

#endif
