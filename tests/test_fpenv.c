/* The caller's floating-point control state reaches the workers when asked
 * (issue 13; seed 003 "worker floating-point environment"): per call with
 * CPUEXEC_FOR_INHERIT_FP_ENV, or for every region of a policy with
 * inherit_fp_environment=true; never otherwise, and each worker gets its
 * own state back after the region. A worker is known to have run a range
 * when a range runs on a thread other than the caller; regions repeat
 * until that happened (no waiting on time). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <cmocka.h>

#include "support/portable.h"

#include <cpuexec.h>
#include <cpuexec/foreign.h>

#if defined(__x86_64__)
#include <xmmintrin.h>
/* FTZ (15), round toward zero (13-14), DAZ (6): none is the default. */
#define CHANGED_BITS 0xE040u
#define CONTROL_MASK 0xFFC0u
static uint64_t control(void) { return _mm_getcsr() & CONTROL_MASK; }
static void set_control(uint64_t v) { _mm_setcsr((_mm_getcsr() & ~CONTROL_MASK) | (unsigned)v); }
#elif defined(__aarch64__)
/* FZ (24) and round toward zero (22-23). */
#define CHANGED_BITS ((1u << 24) | (3u << 22))
static uint64_t control(void) {
  uint64_t v;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
  return v;
}
static void set_control(uint64_t v) { __asm__ __volatile__("msr fpcr, %0" : : "r"(v)); }
#endif

#ifdef CHANGED_BITS
typedef struct probe {
  pthread_t caller;
  uint64_t want;              /* what every range on a worker must see */
  atomic_int worker_ranges;   /* ranges run on a worker */
  atomic_int wrong;           /* worker ranges that saw another state */
  atomic_int flushed_wrong;   /* a denormal product that did not follow the state */
} probe;

static int look(void *ctx, int64_t begin, int64_t end) {
  probe *p = ctx;
  (void)begin;
  (void)end;
  if (pthread_equal(pthread_self(), p->caller)) return 0; /* the caller runs with its own state */
  atomic_fetch_add(&p->worker_ranges, 1);
  if (control() != p->want) atomic_fetch_add(&p->wrong, 1);
#if defined(__x86_64__)
  /* The numerics, not just the bits: 1e-38f * 1e-3f is a denormal, flushed to 0 under FTZ. */
  volatile float tiny = 1e-38f, scale = 1e-3f;
  float product = tiny * scale;
  if ((product == 0.0f) != ((p->want & 0x8000u) != 0)) atomic_fetch_add(&p->flushed_wrong, 1);
#endif
  return 0;
}

/* Regions of 64 ranges until a worker ran one (at most 10000 regions). */
static void run_until_a_worker_ran(cpuexec_executor *exec, probe *p, uint32_t flags) {
  p->caller = pthread_self();
  for (int i = 0; i < 10000 && atomic_load(&p->worker_ranges) == 0; i++)
    /* Every participant runs its reserved range: a worker is not late. */
    assert_int_equal(cpuexec_parallel_for_flags(exec, 64, 1, p, look, 0, flags | CPUEXEC_FOR_EVERY_PARTICIPANT), 0);
  assert_true(atomic_load(&p->worker_ranges) > 0);
}

static cpuexec_executor *make(const char *text, cpuexec_registry *reg, cpuexec_resolved **r) {
  cpuexec_policy pol;
  assert_int_equal(cpuexec_policy_parse(text, &pol), 0);
  assert_int_equal(cpuexec_policy_resolve(&pol, NULL, r), 0);
  cpuexec_executor *exec;
  assert_int_equal(cpuexec_registry_acquire(reg, *r, &exec), 0);
  return exec;
}

static void per_call_flag_carries_the_callers_state_and_workers_restore(void **state) {
  (void)state;
  cpuexec_registry *reg;
  assert_int_equal(cpuexec_registry_create(NULL, &reg), 0);
  cpuexec_resolved *r;
  cpuexec_executor *exec = make("num_threads=2,affinity_policy=none", reg, &r);
  uint64_t original = control();
  assert_int_equal(original & CHANGED_BITS, 0);

  for (int round = 0; round < 3; round++) {
    set_control(original | CHANGED_BITS);
    probe with = {.want = original | CHANGED_BITS};
    run_until_a_worker_ran(exec, &with, CPUEXEC_FOR_INHERIT_FP_ENV);
    assert_int_equal(atomic_load(&with.wrong), 0);
    assert_int_equal(atomic_load(&with.flushed_wrong), 0);
    assert_int_equal(control(), original | CHANGED_BITS); /* the caller's own, untouched */

    /* Without the flag the workers keep their own (default) state while
     * the caller runs with its changed bits. */
    probe without = {.want = original};
    run_until_a_worker_ran(exec, &without, 0);
    assert_int_equal(atomic_load(&without.wrong), 0);
    assert_int_equal(atomic_load(&without.flushed_wrong), 0);
    set_control(original);
  }
  assert_int_equal(cpuexec_parallel_for_flags(exec, 64, 1, NULL, look, 0, 0x80), CPUEXEC_EINVAL);
  cpuexec_executor_release(exec);
  cpuexec_resolved_destroy(r);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
}

/* A worker never keeps the caller's state: after a flagged region, an
 * unflagged one run from a thread with the default state sees the default
 * on every range. */
static void workers_are_back_to_their_own_state(void **state) {
  (void)state;
  cpuexec_registry *reg;
  assert_int_equal(cpuexec_registry_create(NULL, &reg), 0);
  cpuexec_resolved *r;
  cpuexec_executor *exec = make("num_threads=2,affinity_policy=none", reg, &r);
  uint64_t original = control();
  set_control(original | CHANGED_BITS);
  probe with = {.want = original | CHANGED_BITS};
  run_until_a_worker_ran(exec, &with, CPUEXEC_FOR_INHERIT_FP_ENV);
  set_control(original);
  probe after = {.want = original};
  run_until_a_worker_ran(exec, &after, 0);
  assert_int_equal(atomic_load(&after.wrong), 0);
  cpuexec_executor_release(exec);
  cpuexec_resolved_destroy(r);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
}

static void policy_option_carries_it_on_every_region(void **state) {
  (void)state;
  cpuexec_registry *reg;
  assert_int_equal(cpuexec_registry_create(NULL, &reg), 0);
  cpuexec_resolved *plain_r, *inherit_r;
  cpuexec_executor *plain = make("num_threads=2,affinity_policy=none", reg, &plain_r);
  cpuexec_executor *inherit = make("num_threads=2,affinity_policy=none,inherit_fp_environment=true", reg, &inherit_r);
  /* Behaviour: two pools, told apart by the sharing key. */
  assert_ptr_not_equal(plain, inherit);
  assert_non_null(strstr(cpuexec_resolved_sharing_key(inherit_r), "fpenv=caller"));
  assert_null(strstr(cpuexec_resolved_sharing_key(plain_r), "fpenv"));
  uint64_t original = control();
  set_control(original | CHANGED_BITS);
  probe with = {.want = original | CHANGED_BITS};
  run_until_a_worker_ran(inherit, &with, 0);
  assert_int_equal(atomic_load(&with.wrong), 0);
  set_control(original);
  cpuexec_executor_release(plain);
  cpuexec_executor_release(inherit);
  cpuexec_resolved_destroy(plain_r);
  cpuexec_resolved_destroy(inherit_r);
  assert_int_equal(cpuexec_registry_destroy(reg), 0);
}

/* A foreign pool of one persistent thread (started while the caller has
 * the default state, so it has its own): run_ranges runs index 0 on the
 * caller and the rest on that thread. */
typedef struct one_thread_pool {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  cpuexec_range_fn fn;
  void *arg;
  int64_t count;
  bool job, done, quit;
  pthread_t thread;
} one_thread_pool;

static void *pool_thread(void *p_) {
  one_thread_pool *p = p_;
  pthread_mutex_lock(&p->lock);
  for (;;) {
    while (!p->job && !p->quit) pthread_cond_wait(&p->changed, &p->lock);
    if (p->quit) break;
    pthread_mutex_unlock(&p->lock);
    for (int64_t i = 1; i < p->count; i++) p->fn(p->arg, i, i + 1);
    pthread_mutex_lock(&p->lock);
    p->job = false;
    p->done = true;
    pthread_cond_broadcast(&p->changed);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

static int pool_run_ranges(void *p_, int64_t count, void *arg, cpuexec_range_fn fn) {
  one_thread_pool *p = p_;
  pthread_mutex_lock(&p->lock);
  p->fn = fn;
  p->arg = arg;
  p->count = count;
  p->done = false;
  p->job = true;
  pthread_cond_broadcast(&p->changed);
  pthread_mutex_unlock(&p->lock);
  fn(arg, 0, 1);
  pthread_mutex_lock(&p->lock);
  while (!p->done) pthread_cond_wait(&p->changed, &p->lock);
  pthread_mutex_unlock(&p->lock);
  return 0;
}

static void foreign_executors_carry_it_per_range(void **state) {
  (void)state;
  one_thread_pool pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};
  uint64_t original = control();
  assert_int_equal(pthread_create(&pool.thread, NULL, pool_thread, &pool), 0);
  cpuexec_foreign_executor_ops ops;
  cpuexec_foreign_executor_ops_init(&ops);
  ops.effective_threads = 2;
  ops.run_ranges = pool_run_ranges;
  cpuexec_executor *exec;
  assert_int_equal(cpuexec_executor_create_foreign(&ops, &pool, &exec), 0);
  set_control(original | CHANGED_BITS);
  probe with = {.want = original | CHANGED_BITS};
  run_until_a_worker_ran(exec, &with, CPUEXEC_FOR_INHERIT_FP_ENV);
  assert_int_equal(atomic_load(&with.wrong), 0);
  probe without = {.want = original};
  run_until_a_worker_ran(exec, &without, 0);
  assert_int_equal(atomic_load(&without.wrong), 0); /* and the pool thread got its own back */
  set_control(original);
  cpuexec_executor_release(exec);
  pthread_mutex_lock(&pool.lock);
  pool.quit = true;
  pthread_cond_broadcast(&pool.changed);
  pthread_mutex_unlock(&pool.lock);
  pthread_join(pool.thread, NULL);
}

int main(void) {
  unsetenv("CPUEXEC_POLICY");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(foreign_executors_carry_it_per_range),
      cmocka_unit_test(per_call_flag_carries_the_callers_state_and_workers_restore),
      cmocka_unit_test(workers_are_back_to_their_own_state),
      cmocka_unit_test(policy_option_carries_it_on_every_region),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void) {
  printf("SKIP: no floating-point control state is carried on this architecture\n");
  return 77;
}
#endif
