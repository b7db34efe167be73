/* libFuzzer target: the environment variables libcpuexec reads for a
 * resolution: CPUEXEC_NUM_THREADS, OMP_NUM_THREADS and CPUEXEC_POLICY. The
 * input is split at its first two NUL bytes into the three values (a value
 * missing is unset), then the request is read from CPUEXEC_POLICY and
 * resolved against a stored (synthetic) topology. Nothing may crash; every
 * failure sets a message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cpuexec.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cpuexec_topology *machine;

static void set_or_unset(const char *name, const char *value) {
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!machine && cpuexec_topology_load_synthetic("package:1 core:4 pu:2", NULL, &machine) != 0) abort();
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  const char *values[3] = {NULL, NULL, NULL};
  size_t at = 0;
  for (int v = 0; v < 3 && at <= size; v++) {
    values[v] = text + at;
    at += strlen(text + at) + 1;
  }
  set_or_unset("CPUEXEC_NUM_THREADS", values[0]);
  set_or_unset("OMP_NUM_THREADS", values[1]);
  set_or_unset("CPUEXEC_POLICY", values[2]);
  cpuexec_policy p;
  if (cpuexec_policy_from_environment(&p) != 0 && strncmp(cpuexec_error_message(), "CPUEXEC_POLICY: ", 16) != 0)
    abort();
  cpuexec_resolved *r = NULL;
  int rc = cpuexec_policy_resolve(NULL, machine, &r);
  if (rc == 0 && cpuexec_resolved_effective_threads(r) < 1) abort();
  if (rc != 0 && cpuexec_error_message()[0] == '\0') abort();
  cpuexec_resolved_destroy(r);
  free(text);
  return 0;
}
