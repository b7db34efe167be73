/* Internal: the one whitespace rule for libcpuexec's environment variables
 * (CPUEXEC_NUM_THREADS, CPUEXEC_POLICY, CPUEXEC_OMPT): blanks (space, tab,
 * newline, carriage return, vertical tab, form feed) before and after the
 * value are ignored, as the OpenMP runtimes do for OMP_NUM_THREADS; blanks
 * inside the value are not, so "num_threads=4, spin_policy=adaptive" is
 * still rejected by the policy grammar. */
#ifndef CPUEXEC_SRC_ENV_TEXT_H
#define CPUEXEC_SRC_ENV_TEXT_H

#include <stdbool.h>
#include <stddef.h>

static inline bool cpuexec__env_blank(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* The value without its surrounding blanks: *len characters from the result. */
static inline const char *cpuexec__env_trim(const char *text, size_t *len) {
  size_t n = 0;
  while (cpuexec__env_blank(*text))
    text++;
  while (text[n])
    n++;
  while (n > 0 && cpuexec__env_blank(text[n - 1]))
    n--;
  *len = n;
  return text;
}

#endif
