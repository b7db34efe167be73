/* The process default resolution (cpuexec_policy_resolve_default) and the
 * CPUEXEC_DISPLAY report of it. */
#include "resolved.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"
#include "core/error.h"
#include "core/text.h"
#include "os/fork.h"
#include "topology/topology_internal.h"

/* The process default: resolved on first use and again when the process
 * topology was replaced (a CPU set change, cpuexec_topology_refresh()).
 * Every version is kept until exit (callers hold plain pointers); the
 * newest is published under default_lock. Displayed once per process.
 * default_lock is held across fork() (fork.c gives the order). */
typedef struct default_version {
  cpuexec_resolved *resolved;
  struct default_version *older;
} default_version;
static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static default_version *default_versions;
static unsigned default_generation; /* the topology generation it was made under */
static bool default_made, default_displayed;
static int default_rc;
static char default_error[512];

static void fork_prepare(void) { pthread_mutex_lock(&default_lock); }
static void fork_parent(void) { pthread_mutex_unlock(&default_lock); }
static void fork_child(void) { pthread_mutex_init(&default_lock, NULL); }

static const cpuexec__fork_handlers fork_handlers = {fork_prepare, fork_parent, fork_child};
__attribute__((constructor)) static void fork_register(void) {
  cpuexec__fork_handlers_set(CPUEXEC__FORK_RESOLVE_DEFAULT, &fork_handlers);
}

static void display_default(const cpuexec_resolved *resolved) {
  static const char *const on[] = {"1", "verbose", "true", NULL};
  size_t len;
  const char *display = cpuexec__env_value("CPUEXEC_DISPLAY", &len);
  if (display != NULL && cpuexec__text_is_one_of(display, len, on)) {
    int n = cpuexec_resolved_describe(resolved, CPUEXEC_FORMAT_TEXT, NULL, 0);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text != NULL) {
      cpuexec_resolved_describe(resolved, CPUEXEC_FORMAT_TEXT, text, (size_t)n + 1);
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

CPUEXEC_EXPORT int cpuexec_policy_resolve_default(const cpuexec_resolved **out) {
  if (out == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass where to store the resolution");
  int frc = cpuexec__fork_init();
  if (frc != 0) return frc;
  /* Looks at the process CPU set and reloads the topology when it moved. */
  const cpuexec_topology *t;
  int trc = cpuexec__topology_process(&t);
  pthread_mutex_lock(&default_lock);
  unsigned gen = cpuexec__topology_process_generation();
  if (!default_made || (trc == 0 && gen != default_generation)) {
    cpuexec_resolved *r = NULL;
    default_rc = trc != 0 ? trc : cpuexec_policy_resolve(NULL, t, &r);
    default_version *v = r != NULL ? malloc(sizeof *v) : NULL;
    if (r != NULL && v == NULL) {
      cpuexec_resolved_destroy(r);
      default_rc = cpuexec__fail(CPUEXEC_ENOMEM, "resolve: out of memory");
    }
    if (default_rc != 0) {
      snprintf(default_error, sizeof default_error, "%s", cpuexec_error_message());
    } else {
      v->resolved = r;
      v->older = default_versions;
      default_versions = v;
    }
    default_generation = gen;
    /* An allocation failure is not an answer about this process: the next
     * call tries again, so one failed malloc does not disable the default. */
    default_made = default_rc != CPUEXEC_ENOMEM;
    if (default_rc == 0 && !default_displayed) {
      default_displayed = true;
      display_default(r);
    }
  }
  int rc = default_rc;
  *out = rc == 0 ? default_versions->resolved : NULL;
  pthread_mutex_unlock(&default_lock);
  if (rc != 0)
    return cpuexec__fail(rc, "%s", default_error);
  return 0;
}
