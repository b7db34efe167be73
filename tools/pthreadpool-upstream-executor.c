/* Upstream's pthreadpool on a libcpuexec executor, for
 * tools/pthreadpool-upstream-tests.sh: built against google/pthreadpool's
 * own header and sources (a checkout the script is given), linked with
 * libcpuexec only. Inside a session of 2, a pool made by upstream's
 * pthreadpool_create_v2() on cpuexec/compat/pthreadpool_executor.h runs
 * each item of a few parallelize calls exactly once, on the session's
 * caller and worker (both: each thread's first item waits for the other),
 * and starts no thread of its own. Exit status 0 when all of that holds. */
#include <dirent.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cpuexec.h>
#include <cpuexec/compat/pthreadpool_executor.h>
#include <pthreadpool.h>

#define N 4099

static int tids[2];
static atomic_int hits[N], outside;
static atomic_uint arrived;

static int gettid_now(void) { return (int)syscall(SYS_gettid); }

static int threads_now(void) {
  DIR *d = opendir("/proc/self/task");
  int n = 0;
  for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
  if (d != NULL) closedir(d);
  return n;
}

static void item(void *ctx, size_t i) {
  (void)ctx;
  int tid = gettid_now(), k = tid == tids[0] ? 0 : tid == tids[1] ? 1 : -1;
  if (k < 0) atomic_fetch_add(&outside, 1);
  else if (!(atomic_fetch_or(&arrived, 1u << k) & (1u << k)))
    while (atomic_load(&arrived) != 3u) sched_yield();
  atomic_fetch_add(&hits[i], 1);
}

static void tile(void *ctx, size_t i, size_t n) {
  for (size_t x = i; x < i + n; x++) item(ctx, x);
}

static int note_tid(void *ctx, int64_t begin, int64_t end) {
  (void)end;
  ((int *)ctx)[begin] = gettid_now();
  return 0;
}

static int in_session(void *arg) {
  (void)arg;
  int seen[2] = {0, 0};
  if (cpuexec_parallel_for_flags(cpuexec_executor_current(), 2, 1, seen, note_tid, 0, CPUEXEC_FOR_EVERY_PARTICIPANT))
    return 1;
  tids[0] = gettid_now();
  tids[1] = seen[0] == tids[0] ? seen[1] : seen[0];
  cpuexec_pthreadpool_context *ctx = NULL;
  if (cpuexec_pthreadpool_context_create(NULL, &ctx) != 0) return 1;
  struct pthreadpool_executor ops = {cpuexec_pthreadpool_num_threads, cpuexec_pthreadpool_schedule};
  pthreadpool_t pool = pthreadpool_create_v2(&ops, ctx, 0);
  if (pool == NULL || pthreadpool_get_threads_count(pool) != 2) return 1;
  int before = threads_now(), bad = 0;
  for (int call = 0; call < 3; call++) {
    for (size_t i = 0; i < N; i++) atomic_store(&hits[i], 0);
    atomic_store(&arrived, 0);
    if (call == 0) pthreadpool_parallelize_1d(pool, item, NULL, N, 0);
    if (call == 1) pthreadpool_parallelize_1d_tile_1d(pool, tile, NULL, N, 7, 0);
    if (call == 2) pthreadpool_parallelize_1d_tile_1d_dynamic(pool, tile, NULL, N, 5, 0);
    for (size_t i = 0; i < N; i++) bad += atomic_load(&hits[i]) != 1;
    if (atomic_load(&arrived) != 3u) {
      fprintf(stderr, "call %d: items ran on threads %#x of {caller, worker} only\n", call, atomic_load(&arrived));
      bad++;
    }
  }
  int after = threads_now();
  pthreadpool_destroy(pool);
  cpuexec_pthreadpool_context_destroy(ctx);
  if (bad || atomic_load(&outside) || after != before) {
    fprintf(stderr, "upstream's pool on libcpuexec: %d wrong counts, %d items off the session, threads %d -> %d\n",
            bad, atomic_load(&outside), before, after);
    return 1;
  }
  return 0;
}

int main(void) {
  cpuexec_policy p;
  cpuexec_session *s = NULL;
  if (cpuexec_policy_parse("num_threads=2", &p) != 0 || cpuexec_session_create(&p, &s) != 0) {
    fprintf(stderr, "no session: %s\n", cpuexec_error_message());
    return 1;
  }
  int rc = cpuexec_session_run(s, NULL, in_session);
  cpuexec_session_destroy(s);
  if (rc == 0) printf("upstream's pthreadpool on a libcpuexec executor: every item once, on the session's 2 threads\n");
  return rc == 0 ? 0 : 1;
}
