/* The cost of one region as a function of participants, with the flat
 * wake-up (the caller wakes every worker, every worker adds to one line)
 * and with the tree (src/executor/wake_tree.h), and the constants of the cost model
 * in doc/performance.md:
 *   line_ns      one cache line moving between two cores (half a ping-pong
 *                round trip between the caller and a second thread)
 *   wake_ns      what the caller pays for one futex wake of a parked thread
 *                (the system call alone)
 *   wake_lat_ns  from that wake to the woken thread running (one parked
 *                ping-pong round trip, halved)
 * then, for participants 2, 4, 8, ... up to --max (default: the processors
 * online, at least 8): the median ns of an empty region (grain 1, one index
 * per participant, back to back, in blocks of up to 2000 calls or 20 ms) with workers spinning (fixed_duration
 * 200 us) and parking at once (park_immediately), flat and tree. The tree
 * is forced with the library's test hook, so both run at every count.
 *
 * On a machine with fewer processors than participants the figures measure
 * oversubscription, not the model (they are printed anyway, marked).
 * Usage: region-scaling [--max=N]. `make bench-scaling` runs it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cpuexec.h>
#include "../clock.h"
#include "../stats.h"

/* The library's test hook for the wake-tree threshold (src/executor/wake_tree.h),
 * read when an executor is created; this program links the internal
 * library for it. Declared here because bench/ includes only public
 * headers (HACKING.md, "Modules"). */
extern _Atomic uint32_t cpuexec__test_wake_tree_min;

#define BLOCKS 9

/* ---- constants ---------------------------------------------------------- */

static _Atomic uint32_t ball;
static _Atomic int parked_mode;
enum { ROUNDS = 20000, PARKED_ROUNDS = 2000 };

static void futex_wait(_Atomic uint32_t *w, uint32_t v) { syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0); }
static void futex_wake(_Atomic uint32_t *w) { syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }

/* The partner returns every odd ball as the next even one. */
static void *partner(void *arg) {
  long rounds = (long)arg;
  for (uint32_t want = 1; want < 2 * rounds; want += 2) {
    while (atomic_load(&ball) != want)
      if (atomic_load(&parked_mode)) futex_wait(&ball, want - 1);
    atomic_store(&ball, want + 1);
    if (atomic_load(&parked_mode)) futex_wake(&ball);
  }
  return NULL;
}

static double ping_pong(bool parked, long rounds) {
  atomic_store(&ball, 0);
  atomic_store(&parked_mode, parked);
  pthread_t t;
  pthread_create(&t, NULL, partner, (void *)rounds);
  double t0 = bench_now_ns();
  for (uint32_t send = 1; send < 2 * rounds; send += 2) {
    atomic_store(&ball, send);
    if (parked) futex_wake(&ball);
    while (atomic_load(&ball) != send + 1)
      if (parked) futex_wait(&ball, send);
  }
  double per = (bench_now_ns() - t0) / rounds;
  pthread_join(t, NULL);
  return per / 2;
}

static double wake_syscall_ns(void) {
  _Atomic uint32_t word = 0;
  double t[BLOCKS];
  for (int b = 0; b < BLOCKS; b++) {
    double t0 = bench_now_ns();
    for (int i = 0; i < 10000; i++) futex_wake(&word);
    t[b] = (bench_now_ns() - t0) / 10000;
  }
  return bench_median(t, BLOCKS);
}

/* ---- regions ------------------------------------------------------------ */

static int empty(void *ctx, int64_t b, int64_t e) {
  (void)ctx, (void)b, (void)e;
  return 0;
}

static double region_ns(uint32_t participants, cpuexec_spin_policy spin, bool tree) {
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = (int32_t)participants;
  policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
  policy.spin_policy = spin;
  if (spin == CPUEXEC_SPIN_FIXED_DURATION) policy.spin_budget = 200000;
  cpuexec_resolved *r = NULL;
  cpuexec_executor *e = NULL;
  atomic_store(&cpuexec__test_wake_tree_min, tree ? 2 : UINT32_MAX);
  int rc = cpuexec_policy_resolve(&policy, NULL, &r);
  if (rc == 0) rc = cpuexec_executor_create(r, &e);
  atomic_store(&cpuexec__test_wake_tree_min, 0);
  cpuexec_resolved_destroy(r);
  if (rc != 0) {
    fprintf(stderr, "region-scaling: %u participants: %s\n", participants, cpuexec_error_message());
    exit(1);
  }
  /* Blocks of up to 2000 calls or 20 ms, whichever comes first, so an
   * oversubscribed count (milliseconds per region) still ends soon. */
  double t[BLOCKS];
  for (int i = 0; i < 20; i++) cpuexec_parallel_for(e, participants, 1, NULL, empty, 0);
  for (int b = 0; b < BLOCKS; b++) {
    double t0 = bench_now_ns(), t1 = t0;
    int calls = 0;
    while (calls < 2000 && t1 - t0 < 2e7) {
      cpuexec_parallel_for(e, participants, 1, NULL, empty, 0);
      calls++;
      if (calls % 8 == 0 || participants > 2) t1 = bench_now_ns();
    }
    t[b] = (bench_now_ns() - t0) / calls;
  }
  cpuexec_executor_release(e);
  return bench_median(t, BLOCKS);
}

int main(int argc, char **argv) {
  long online = sysconf(_SC_NPROCESSORS_ONLN), max = online < 8 ? 8 : online;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--max=", 6) == 0)
      max = strtol(argv[i] + 6, NULL, 10);
    else {
      fprintf(stderr, "usage: %s [--max=N]\n", argv[0]);
      return 2;
    }
  }
  if (max < 2) max = 2;
  FILE *f = fopen("/proc/loadavg", "r");
  char load[64] = "?";
  if (f && fgets(load, sizeof load, f)) load[strcspn(load, "\n")] = 0;
  if (f) fclose(f);
  printf("region-scaling: %ld processors online, load average %s\n", online, load);
  printf("line_ns      %8.1f   (spinning ping-pong, half a round trip)\n", ping_pong(false, ROUNDS));
  printf("wake_ns      %8.1f   (futex wake system call, nobody waiting)\n", wake_syscall_ns());
  printf("wake_lat_ns  %8.1f   (parked ping-pong, half a round trip)\n", ping_pong(true, PARKED_ROUNDS));
  printf("tree: as src/executor/wake_tree.h defines it (fan-out, default threshold), forced from 2 participants\n");
  printf("%12s %14s %14s %14s %14s\n", "participants", "spin flat ns", "spin tree ns", "park flat ns", "park tree ns");
  for (long p = 2; p <= max; p *= 2) {
    double sf = region_ns((uint32_t)p, CPUEXEC_SPIN_FIXED_DURATION, false);
    double st = region_ns((uint32_t)p, CPUEXEC_SPIN_FIXED_DURATION, true);
    double pf = region_ns((uint32_t)p, CPUEXEC_SPIN_PARK_IMMEDIATELY, false);
    double pt = region_ns((uint32_t)p, CPUEXEC_SPIN_PARK_IMMEDIATELY, true);
    printf("%12ld %14.0f %14.0f %14.0f %14.0f%s\n", p, sf, st, pf, pt, p > online ? "   (oversubscribed)" : "");
    fflush(stdout);
  }
  return 0;
}
