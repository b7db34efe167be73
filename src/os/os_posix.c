/* The portable POSIX OS backend (see os.h): condition-variable waits, and
 * no affinity, current processor or cgroup, which POSIX does not define.
 * Affinity is reported as unsupported (ENOTSUP), never faked. Threads are
 * named where the system has pthread_setname_np (configure checks). The
 * loader has no change count POSIX defines (loader.h): callers look again
 * each time. */
#include "os.h"
#include "loader.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>

const char *cpuexec__os_backend(void) { return "posix"; }

bool cpuexec__os_has_processor_groups(void) { return false; }

bool cpuexec__os_has_affinity(void) { return false; }

int cpuexec__os_pin_thread(pthread_t thread, int32_t cpu) {
  (void)thread;
  (void)cpu;
  return ENOTSUP;
}

int cpuexec__os_pin_self(int32_t cpu) {
  (void)cpu;
  return ENOTSUP;
}

int32_t cpuexec__os_affinity_self(int32_t *ids, int32_t max) {
  (void)ids;
  (void)max;
  return -1;
}

bool cpuexec__os_process_cpus(cpuexec__os_cpus *set) {
  (void)set;
  return false;
}

const char *cpuexec__os_process_cpus_source(void) { return NULL; }

bool cpuexec__os_thread_cpus(pthread_t thread, cpuexec__os_cpus *set) {
  (void)thread;
  (void)set;
  return false;
}

int32_t cpuexec__os_step_off(const int32_t *avoid, uint32_t count) {
  (void)avoid;
  (void)count;
  return -1;
}

int32_t cpuexec__os_move_to(int32_t cpu) {
  (void)cpu;
  return -1;
}

int32_t cpuexec__os_current_cpu(void) { return -1; }

void cpuexec__os_yield(void) { sched_yield(); }

/* POSIX has no per-thread count of preemptions. */
uint64_t cpuexec__os_thread_preemptions(void) { return 0; }

/* Waits: a fixed table of (mutex, condition) buckets, chosen by the word's
 * address. A waiter checks the word under its bucket's lock and sleeps on
 * the condition (releasing the lock atomically); a waker, having stored the
 * new value first, takes the same lock and broadcasts. So a waiter either
 * sees the new value or is asleep before the broadcast: no wake is lost.
 * Words sharing a bucket only cost each other spurious wakes. */
#define BUCKETS 64u

static struct bucket {
  pthread_mutex_t lock;
  pthread_cond_t cond;
} buckets[BUCKETS] = {[0 ... BUCKETS - 1] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER}};

static struct bucket *bucket_of(_Atomic uint32_t *word) {
  uintptr_t a = (uintptr_t)word;
  return &buckets[(a >> 6 ^ a >> 12) % BUCKETS];
}

void cpuexec__os_wait(_Atomic uint32_t *word, uint32_t expected) {
  struct bucket *b = bucket_of(word);
  pthread_mutex_lock(&b->lock);
  if (atomic_load_explicit(word, memory_order_seq_cst) == expected) pthread_cond_wait(&b->cond, &b->lock);
  pthread_mutex_unlock(&b->lock);
}

/* The condition variables use the default clock (CLOCK_REALTIME, the only
 * one POSIX guarantees for them), so the monotonic deadline becomes a
 * realtime one; a clock step while waiting only moves one wake-up, and
 * callers re-check the word and their own deadline. */
void cpuexec__os_wait_until(_Atomic uint32_t *word, uint32_t expected, uint64_t deadline_ns) {
  uint64_t now = cpuexec__os_now_ns();
  if (now >= deadline_ns) return;
  struct timespec real;
  clock_gettime(CLOCK_REALTIME, &real);
  uint64_t at = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec + (deadline_ns - now);
  struct timespec ts = {(time_t)(at / 1000000000u), (long)(at % 1000000000u)};
  struct bucket *b = bucket_of(word);
  pthread_mutex_lock(&b->lock);
  if (atomic_load_explicit(word, memory_order_seq_cst) == expected) pthread_cond_timedwait(&b->cond, &b->lock, &ts);
  pthread_mutex_unlock(&b->lock);
}

void cpuexec__os_timer_slack(uint64_t slack_ns) { (void)slack_ns; }

void cpuexec__os_wake_all(_Atomic uint32_t *word) {
  struct bucket *b = bucket_of(word);
  pthread_mutex_lock(&b->lock);
  pthread_cond_broadcast(&b->cond);
  pthread_mutex_unlock(&b->lock);
}

/* Called by the fork module in the child: a bucket lock held by a parent
 * thread that does not exist here would never be released. */
void cpuexec__os_fork_child(void) {
  for (unsigned i = 0; i < BUCKETS; i++) {
    pthread_mutex_init(&buckets[i].lock, NULL);
    pthread_cond_init(&buckets[i].cond, NULL);
  }
}

void cpuexec__os_name_thread(pthread_t thread, const char *name) {
#if HAVE_PTHREAD_SETNAME_NP
  char limited[16]; /* the smallest limit among the systems that have it (Linux) */
  snprintf(limited, sizeof limited, "%s", name);
  pthread_setname_np(thread, limited);
#else
  (void)thread;
  (void)name;
#endif
}

const char *cpuexec__os_proc_self_cgroup(void) { return NULL; }

const char *cpuexec__os_cgroup_root(void) { return NULL; }

bool cpuexec__os_loader_changes(uint64_t *count) {
  *count = 0;
  return false;
}
