/* The process default resolution (cpuexec_resolve_default) and the
 * CPUEXEC_DISPLAY report of it. */
#include "resolved.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "topology_internal.h"

/* The process default: resolved once, shared, never freed. Written inside
 * pthread_once only; read-only afterwards. */
static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static cpuexec_resolved *default_resolved;
static int default_rc;
static char default_error[512];

static void resolve_default_once(void) {
  default_rc = cpuexec_resolve(NULL, NULL, &default_resolved);
  if (default_rc != 0) {
    snprintf(default_error, sizeof default_error, "%s", cpuexec_last_error());
    return;
  }
  const char *display = getenv("CPUEXEC_DISPLAY");
  if (display != NULL && (strcmp(display, "1") == 0 || strcmp(display, "verbose") == 0 ||
                          strcmp(display, "true") == 0)) {
    int n = cpuexec_resolved_describe(default_resolved, CPUEXEC_FORMAT_TEXT, NULL, 0);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text != NULL) {
      cpuexec_resolved_describe(default_resolved, CPUEXEC_FORMAT_TEXT, text, (size_t)n + 1);
      fprintf(stderr, "CPUEXEC_DISPLAY: the process default resolution\n%s", text);
      free(text);
    }
    if (strcmp(display, "verbose") == 0) {
      const cpuexec_topology *t;
      if (cpuexec__topology_process(&t) == 0) {
        n = cpuexec_topology_describe(t, CPUEXEC_FORMAT_TEXT, NULL, 0);
        text = n >= 0 ? malloc((size_t)n + 1) : NULL;
        if (text != NULL) {
          cpuexec_topology_describe(t, CPUEXEC_FORMAT_TEXT, text, (size_t)n + 1);
          fprintf(stderr, "%s", text);
          free(text);
        }
      }
    }
  }
}

CPUEXEC_EXPORT int cpuexec_resolve_default(const cpuexec_resolved **out) {
  if (out == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass where to store the resolution");
  pthread_once(&default_once, resolve_default_once);
  *out = default_resolved;
  if (default_rc != 0)
    return cpuexec__fail(default_rc, "%s", default_error);
  return 0;
}
