/* libFuzzer target: the policy text form (cpuexec_policy_parse). Whatever
 * the input, parsing never crashes, and for every text that parses the
 * property parse(format(p)) == p holds, and format is a fixed point. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cpuexec.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  cpuexec_policy p, back;
  if (cpuexec_policy_parse(text, &p) == 0) {
    int n = cpuexec_policy_format(&p, NULL, 0);
    if (n <= 0) abort();
    char *formatted = malloc((size_t)n + 1), *again = malloc((size_t)n + 1);
    if (!formatted || !again) abort();
    if (cpuexec_policy_format(&p, formatted, (size_t)n + 1) != n) abort();
    if (cpuexec_policy_parse(formatted, &back) != 0) {
      fprintf(stderr, "format gave a text that does not parse: %s (%s)\n", formatted, cpuexec_error_message());
      abort();
    }
    if (!cpuexec_policy_equal(&p, &back)) {
      fprintf(stderr, "parse(format(p)) != p for %s\n", formatted);
      abort();
    }
    if (cpuexec_policy_format(&back, again, (size_t)n + 1) != n || strcmp(formatted, again) != 0) abort();
    free(formatted);
    free(again);
  } else if (cpuexec_error_message()[0] == '\0') {
    abort(); /* every failure says what was wrong */
  }
  free(text);
  return 0;
}
