/* The environment (env.h): the library's one getenv, the whitespace rule
 * applied to it, and the variable's name put in front of a parse error. */
#include "env.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "text.h"

const char *cpuexec__env_raw(const char *name) { return getenv(name); }

const char *cpuexec__env_value(const char *name, size_t *len) {
  const char *text = getenv(name);
  if (!text)
    return NULL;
  return cpuexec__text_trim(text, len);
}

char *cpuexec__env_copy(const char *name, bool *unset) {
  size_t len;
  const char *value = cpuexec__env_value(name, &len);
  if (unset)
    *unset = value == NULL;
  if (!value)
    return NULL;
  char *copy = malloc(len + 1);
  if (!copy)
    return NULL;
  memcpy(copy, value, len);
  copy[len] = '\0';
  return copy;
}

int cpuexec__env_parse(const char *name, int (*parse)(const char *text, void *out), void *out, bool *found) {
  bool unset;
  char *copy = cpuexec__env_copy(name, &unset);
  *found = !unset;
  if (unset)
    return 0;
  if (!copy)
    return cpuexec__fail(CPUEXEC_ENOMEM, "%s: out of memory reading the value", name);
  int rc = parse(copy, out);
  free(copy);
  if (rc != 0) {
    char detail[400];
    strncpy(detail, cpuexec_error_message(), sizeof detail - 1);
    detail[sizeof detail - 1] = '\0';
    return cpuexec__fail(rc, "%s: %s", name, detail);
  }
  return 0;
}
