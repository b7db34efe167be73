/* A process of the node budget's tests (tests/whitebox/test_node_budget.c,
 * tests/node-jobserver.sh): it asks the node level of the permit model
 * (src/node/node_budget.h) for permits as a worker would, on threads of its
 * own, and prints what it got. Modes:
 *
 *   describe               the budget that applies, then "path=TABLE"
 *   describe-lines         the budget that applies, then again for each
 *                          line on stdin (one line each)
 *   pool TEXT [TEXT2]      makes a pool of the policy TEXT, then one of
 *                          TEXT2, and prints the budget that applies
 *   hold K                 K threads each take a permit; prints "held N",
 *                          then holds them until stdin closes
 *   take                   one permit: "took" or "refused"
 *   worker                 one permit ("held 1" or "held 0"), then for each
 *                          line on stdin asks again: "kept" or "gave back"
 *                          (given back while a caller is over the budget)
 *   caller P               opens one region of P participants as a caller
 *                          does (its process's implicit slot): "admits N",
 *                          and " crowded" when callers are over the budget,
 *                          then opens none until stdin closes
 *   stress T I FILE        T threads take and give a permit I times each,
 *                          counting holders in FILE's first word (shared
 *                          by every process of the test); prints "max=M"
 *   fork                   takes a permit, forks: the child gives back
 *                          nothing it did not take ("child held=N")
 *   jobs T                 under make: T threads take a permit each and the
 *                          process exits holding them ("held N")
 *   count-tokens           under make: the tokens free in the jobserver
 *
 * NODE_CLIENT_UID=U: run as user U (root only), for an unwritable
 * directory. NODE_CLIENT_RECLAIM_NOW=1: reclaim on every failed take;
 * NODE_CLIENT_REFRESH_NOW=1: re-read the cgroup's limits on every give;
 * NODE_CLIENT_LINGER_NOW=1: a caller whose beat two looks saw unchanged is
 * idle (no linger); without it a caller is idle after an hour, so that no
 * case depends on how long a step takes;
 * NODE_CLIENT_CGROUP_ROOT=DIR: the cgroup tree to read (tests/data/cgroups). */
#ifdef _WIN32
#include <stdio.h>
int main(void) {
  puts("SKIP: the node budget's table is POSIX shared memory");
  return 77;
}
#else
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cpuexec.h>

#include "node/node_budget.h"
#include "os/os.h"

/* A pool of the policy text, NULL on a failure (printed). */
static cpuexec_executor *pool_of(const char *text) {
  cpuexec_policy p;
  cpuexec_resolved *r = NULL;
  cpuexec_executor *e = NULL;
  int rc = cpuexec_policy_parse(text, &p);
  if (rc == 0) rc = cpuexec_policy_resolve(&p, NULL, &r);
  if (rc == 0) rc = cpuexec_executor_create(r, &e);
  cpuexec_resolved_destroy(r);
  if (rc != 0) printf("failed: %s\n", cpuexec_error_message());
  return e;
}

/* The "pool" mode; 1 on a failure. */
static int pools(const char *first, const char *second) {
  cpuexec_executor *a = pool_of(first), *b = second != NULL ? pool_of(second) : NULL;
  char described[2048];
  cpuexec__node_budget_describe(described, sizeof described);
  puts(described);
  int rc = a == NULL || (second != NULL && b == NULL);
  if (a != NULL) rc |= cpuexec_executor_release(a) != 0;
  if (b != NULL) rc |= cpuexec_executor_release(b) != 0;
  return rc;
}

static pthread_barrier_t all_took;
static _Atomic int took;

static void *hold_one(void *arg) {
  (void)arg;
  if (cpuexec__node_permit_run(NULL)) atomic_fetch_add(&took, 1);
  pthread_barrier_wait(&all_took);
  char c;
  while (read(0, &c, 1) > 0) {
  }
  cpuexec__node_permit_park();
  return NULL;
}

static _Atomic uint32_t *holders;
static _Atomic uint32_t most;
static int iterations;

static void *stress_one(void *arg) {
  (void)arg;
  for (int i = 0; i < iterations; i++) {
    if (cpuexec__node_permit_run(NULL)) {
      uint32_t now = atomic_fetch_add(holders, 1) + 1;
      for (uint32_t m = atomic_load(&most); now > m && !atomic_compare_exchange_weak(&most, &m, now);) {
      }
      atomic_fetch_sub(holders, 1);
    }
    cpuexec__node_permit_park();
  }
  return NULL;
}

static void *jobs_one(void *arg) {
  (void)arg;
  if (cpuexec__node_permit_run(NULL)) atomic_fetch_add(&took, 1);
  pthread_barrier_wait(&all_took);
  for (;;) pause(); /* held while the process exits */
  return NULL;
}

static int count_tokens(void) {
  const char *flags = getenv("MAKEFLAGS");
  const char *auth = flags ? strstr(flags, "--jobserver-auth=") : NULL;
  if (auth == NULL) return puts("no jobserver"), 1;
  auth += strlen("--jobserver-auth=");
  char path[512];
  int r, w;
  int fd;
  if (strncmp(auth, "fifo:", 5) == 0) {
    snprintf(path, sizeof path, "%.*s", (int)strcspn(auth + 5, " "), auth + 5);
    fd = open(path, O_RDWR | O_NONBLOCK);
  } else if (sscanf(auth, "%d,%d", &r, &w) == 2) {
    snprintf(path, sizeof path, "/proc/self/fd/%d", r);
    fd = open(path, O_RDONLY | O_NONBLOCK);
  } else {
    return puts("malformed"), 1;
  }
  if (fd < 0) return puts("cannot open"), 1;
  char bytes[256];
  ssize_t n = read(fd, bytes, sizeof bytes);
  if (n < 0) n = 0;
  printf("tokens=%zd\n", n);
  fflush(stdout);
  /* Back through the same pipe: the fifo's descriptor writes too; make's
   * pipe through its inherited write end. */
  int out = strncmp(auth, "fifo:", 5) == 0 ? fd : w;
  if (n > 0 && write(out, bytes, (size_t)n) != n) return 1;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  const char *uid = getenv("NODE_CLIENT_UID");
  if (uid != NULL && (setgid((gid_t)atoi(uid)) != 0 || setuid((uid_t)atoi(uid)) != 0)) return puts("setuid failed"), 3;
  if (getenv("NODE_CLIENT_RECLAIM_NOW")) atomic_store(&cpuexec__test_node_reclaim_every_ns, 1);
  if (getenv("NODE_CLIENT_REFRESH_NOW")) atomic_store(&cpuexec__test_node_refresh_always, true);
  atomic_store(&cpuexec__test_node_caller_linger_ns, getenv("NODE_CLIENT_LINGER_NOW") ? 1 : 3600000000000ull + 1);
  const char *root = getenv("NODE_CLIENT_CGROUP_ROOT");
  if (root != NULL) atomic_store(&cpuexec__test_node_cgroup_root, root);
  setvbuf(stdout, NULL, _IONBF, 0);
  const char *mode = argv[1];
  if (strcmp(mode, "describe") == 0) {
    char text[2048];
    cpuexec__node_budget_describe(text, sizeof text);
    printf("%s\npath=%s\n", text, cpuexec__node_budget_table_path());
    return 0;
  }
  if (strcmp(mode, "describe-lines") == 0) {
    char text[2048], line[64];
    do {
      cpuexec__node_budget_describe(text, sizeof text);
      puts(text);
    } while (fgets(line, sizeof line, stdin) != NULL);
    return 0;
  }
  if (strcmp(mode, "pool") == 0 && argc >= 3) return pools(argv[2], argc > 3 ? argv[3] : NULL);
  if (strcmp(mode, "take") == 0) {
    puts(cpuexec__node_permit_run(NULL) ? "took" : "refused");
    cpuexec__node_permit_park();
    return 0;
  }
  if (strcmp(mode, "worker") == 0) {
    printf("held %d\n", cpuexec__node_permit_run(NULL) ? 1 : 0);
    char line[64];
    while (fgets(line, sizeof line, stdin) != NULL) puts(cpuexec__node_permit_run(NULL) ? "kept" : "gave back");
    cpuexec__node_permit_park();
    return 0;
  }
  if (strcmp(mode, "caller") == 0 && argc == 3) {
    char text[2048];
    cpuexec__node_budget_describe(text, sizeof text); /* the node level made, as a worker's first ask makes it */
    cpuexec__node_region region;
    uint32_t admits = cpuexec__node_region_admits((uint32_t)atoi(argv[2]), cpuexec__os_now_ns, &region);
    printf("admits %u%s\n", admits, region.crowded ? " crowded" : "");
    char c;
    while (read(0, &c, 1) > 0) {
    }
    return 0;
  }
  if (strcmp(mode, "hold") == 0 || strcmp(mode, "jobs") == 0) {
    int k = argc > 2 ? atoi(argv[2]) : 1;
    bool jobs = mode[0] == 'j';
    /* The node level made first, as a caller's first region makes it: a
     * worker that asks while another thread makes it is refused (it would
     * ask again at its next region), which would make the count racy. */
    char text[2048];
    cpuexec__node_budget_describe(text, sizeof text);
    if (k < 1 || k > 64) return 4;
    pthread_barrier_init(&all_took, NULL, (unsigned)k + 1);
    pthread_t holders_t[64];
    for (int i = 0; i < k; i++)
      if (pthread_create(&holders_t[i], NULL, jobs ? jobs_one : hold_one, NULL) != 0) return 4;
    pthread_barrier_wait(&all_took);
    printf("held %d\n", atomic_load(&took));
    if (jobs) return 0; /* exit with the permits held: they go back at exit */
    char c;
    while (read(0, &c, 1) > 0) {
    }
    /* Each holder gives its slot back before the process ends: returning
     * first would leave them to a dead owner, which the node takes back
     * only at its next reclaim (up to CPUEXEC__NODE_RECLAIM_EVERY_NS later),
     * and the next holder a test starts would find the slot taken. */
    for (int i = 0; i < k; i++) pthread_join(holders_t[i], NULL);
    return 0;
  }
  if (strcmp(mode, "stress") == 0 && argc == 5) {
    int threads = atoi(argv[2]);
    iterations = atoi(argv[3]);
    int fd = open(argv[4], O_RDWR);
    if (fd < 0) return 5;
    holders = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (holders == MAP_FAILED) return 5;
    pthread_t t[64];
    for (int i = 0; i < threads && i < 64; i++) pthread_create(&t[i], NULL, stress_one, NULL);
    for (int i = 0; i < threads && i < 64; i++) pthread_join(t[i], NULL);
    printf("max=%u\n", atomic_load(&most));
    return 0;
  }
  if (strcmp(mode, "fork") == 0) {
    if (!cpuexec__node_permit_run(NULL)) return puts("refused"), 0;
    char text[2048];
    pid_t pid = fork();
    if (pid == 0) {
      /* The parent's permit is not the child's: a park gives nothing back. */
      cpuexec__node_permit_park();
      cpuexec__node_budget_describe(text, sizeof text);
      const char *mine = strstr(text, "(this process ");
      printf("child held=%d\n", mine ? atoi(mine + strlen("(this process ")) : -1);
      _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    cpuexec__node_budget_describe(text, sizeof text);
    const char *mine = strstr(text, "(this process ");
    printf("parent held=%d\n", mine ? atoi(mine + strlen("(this process ")) : -1);
    cpuexec__node_permit_park();
    return 0;
  }
  if (strcmp(mode, "count-tokens") == 0) return count_tokens();
  return 2;
}
#endif
