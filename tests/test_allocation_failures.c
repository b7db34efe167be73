/* Every allocation of a first use failing, one at a time (issue 25): this
 * program replaces malloc, calloc and realloc, and the N-th allocation
 * after arming fails (N = 1, 2, ... until a run meets no failure). Each N
 * runs in a fresh forked child whose parent never used the library, so
 * each first use really is the first. Under each failure:
 *   - pthreadpool_create(2) returns NULL with a message of its own (never
 *     an earlier call's text), or a pool that works;
 *   - cpuexec_session_create(NULL) returns an error with a fresh message,
 *     or a session that works;
 *   - ParallelFor runs every index exactly once, whatever it returns;
 * no fallback warning is printed for an allocation failure (it is not
 * about the policy), and once allocations work again, each of them gets
 * its parallel pool:
 * "defaults never fail" after one failed allocation, the process registry
 * and the default resolution included. The replacement calls glibc's own
 * allocator (tests/support/failing_alloc.h), so sanitizer builds (which
 * replace malloc themselves) skip it (exit 77, counted as skipped, not
 * passed). */
#ifdef _WIN32
#include <stdio.h>
int main(void) {
  printf("SKIP: not run on Windows: the test replaces malloc, calloc and realloc for the whole process and "
         "runs each case in a forked child; a DLL's allocations cannot be replaced that way and Windows has no "
         "fork\n");
  return 77;
}
#else
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cpuexec.h>
#include <cpuexec/compat/parallel_for.h>
#include <pthreadpool.h>

#include "support/failing_alloc.h"

#if FAILING_ALLOC_WORKS
#define TOTAL 1000
static atomic_int hits[TOTAL];

static void cover(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  for (int64_t i = begin; i < end && i < TOTAL; i++) atomic_fetch_add(&hits[i], 1);
}

static bool covered_once(void) {
  bool ok = true;
  for (int i = 0; i < TOTAL; i++) ok &= atomic_exchange(&hits[i], 0) == 1;
  return ok;
}

static void pp_task(void *ctx, size_t i) {
  (void)ctx;
  atomic_fetch_add(&hits[i], 1);
}

static int threads_seen(void *ctx) {
  *(int32_t *)ctx = cpuexec_executor_effective_threads(cpuexec_executor_current());
  return 0;
}

static bool fresh_message(const char *what, long n) {
  const char *m = cpuexec_error_message();
  if (m[0] != '\0' && strcmp(m, "stale message") != 0) return true;
  fprintf(stderr, "allocation %ld: %s failed with %s message \"%s\"\n", n, what, m[0] ? "a stale" : "no", m);
  return false;
}

enum which { PTHREADPOOL, SESSION, PARALLEL_FOR };
static const char *const names[] = {"pthreadpool_create(2)", "cpuexec_session_create(NULL)", "ParallelFor"};

/* One first use with the n-th allocation failing, then the same calls with
 * allocations working. Exit 0: fine and a failure was injected; 1: fine
 * and no allocation reached n (the sweep is over); >= 10: a defect. */
static int first_use(enum which which, long n) {
  cpuexec_error_report(CPUEXEC_EINVAL, "stale message");
  failing_alloc_reset_count();
  failing_alloc_nth(n);
  if (which == PTHREADPOOL) {
    pthreadpool_t pool = pthreadpool_create(2);
    failing_alloc_nth(0);
    if (pool == NULL && !fresh_message(names[which], n)) return 10;
    if (pool != NULL) {
      pthreadpool_parallelize_1d(pool, pp_task, NULL, TOTAL, 0);
      if (!covered_once()) return 11;
    }
    pthreadpool_destroy(pool);
  } else if (which == SESSION) {
    cpuexec_session *s = NULL;
    int rc = cpuexec_session_create(NULL, &s);
    failing_alloc_nth(0);
    if (rc != 0 && !fresh_message(names[which], n)) return 20;
    if ((rc != 0) != (s == NULL)) return 21;
    cpuexec_session_destroy(s);
  } else {
    (void)ParallelFor(TOTAL, 16, NULL, cover);
    failing_alloc_nth(0);
    if (!covered_once()) return 30;
  }
  bool injected = failing_alloc_refused() > 0;
  /* Allocations work again: each default gets its pool of two. */
  pthreadpool_t pool = pthreadpool_create(2);
  if (pool == NULL) return fprintf(stderr, "allocation %ld: then pthreadpool_create: %s\n", n, cpuexec_error_message()), 40;
  if (pthreadpool_get_threads_count(pool) != 2) return 41;
  pthreadpool_parallelize_1d(pool, pp_task, NULL, TOTAL, 0);
  if (!covered_once()) return 42;
  pthreadpool_destroy(pool);
  cpuexec_session *s = NULL;
  if (cpuexec_session_create(NULL, &s) != 0)
    return fprintf(stderr, "allocation %ld: then session: %s\n", n, cpuexec_error_message()), 43;
  int32_t threads = 0;
  if (cpuexec_session_run(s, &threads, threads_seen) != 0 || threads != 2) return 44;
  cpuexec_session_destroy(s);
  /* The legacy pool retries with a backoff counted in calls. */
  for (int call = 0; call < 4; call++) {
    (void)ParallelFor(TOTAL, 16, NULL, cover);
    if (!covered_once()) return 45;
  }
  if (ParallelForThreadCount() != 2)
    return fprintf(stderr, "allocation %ld: then ParallelForThreadCount %d\n", n, ParallelForThreadCount()), 46;
  return injected ? 0 : 1;
}

static int sweep(enum which which) {
  for (long n = 1; n < 100000; n++) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return perror("fork"), 1;
    if (pid == 0) {
      alarm(60);
      /* stderr into memory: no fallback may be announced for an
       * allocation failure (it is not about the policy). */
      int err = memfd_create("stderr", 0);
      int saved = dup(2);
      if (err < 0 || saved < 0 || dup2(err, 2) < 0) _exit(2);
      int rc = first_use(which, n);
      char text[4096] = "";
      ssize_t len = pread(err, text, sizeof text - 1, 0);
      text[len > 0 ? len : 0] = '\0';
      dup2(saved, 2);
      if (strstr(text, "using the default policy") || strstr(text, "runs unpinned") || strstr(text, "could not be applied")) {
        fprintf(stderr, "allocation %ld: %s announced a fallback: %s", n, names[which], text);
        _exit(50);
      }
      _exit(rc);
    }
    int status;
    while (waitpid(pid, &status, 0) != pid) {
    }
    if (WIFSIGNALED(status)) {
      fprintf(stderr, "FAIL: %s, allocation %ld failing: killed by signal %d\n", names[which], n, WTERMSIG(status));
      return 1;
    }
    if (WEXITSTATUS(status) == 1) {
      printf("ok: %s: each of its %ld allocations failed once, each handled\n", names[which], n - 1);
      return n > 1 ? 0 : 1;
    }
    if (WEXITSTATUS(status) != 0) {
      fprintf(stderr, "FAIL: %s, allocation %ld failing: check %d\n", names[which], n, WEXITSTATUS(status));
      return 1;
    }
  }
  return 1;
}

int main(void) {
  setenv("CPUEXEC_POLICY", "num_threads=2,affinity_policy=none", 1);
  /* The process topology is read in the parent: hwloc's loader is not ours
   * and not written to survive an allocation failure. Everything after it
   * (the default resolution, the registry, pools, sessions) is first used
   * in each child. */
  cpuexec_policy serial;
  cpuexec_policy_init(&serial);
  serial.num_threads = 1;
  cpuexec_resolved *r = NULL;
  if (cpuexec_policy_resolve(&serial, NULL, &r) != 0) return fprintf(stderr, "%s\n", cpuexec_error_message()), 1;
  cpuexec_resolved_destroy(r);
  int failed = 0;
  failed += sweep(PTHREADPOOL);
  failed += sweep(SESSION);
  failed += sweep(PARALLEL_FOR);
  return failed ? 1 : 0;
}
#else
int main(void) {
  puts("SKIP: the sanitizer replaces malloc; this program's own replacement runs in the other builds");
  return 77;
}
#endif
#endif
