/* The OS layer (src/os/os.h) on the backend this build chose: waits return
 * when the word moved and wake on a wake, pinning and the current processor
 * agree on Linux and are refused as unsupported on POSIX, the cgroup paths
 * and the clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "os/loader.h"
#include "os/os.h"
#include "support/test_util.h"

static void a_wait_on_a_moved_word_returns_at_once(void **state) {
  (void)state;
  _Atomic uint32_t word = 5;
  cpuexec__os_wait(&word, 4); /* would block forever if it did not compare */
  assert_int_equal(atomic_load(&word), 5);
}

static void a_timed_wait_ends_at_its_deadline_without_a_wake(void **state) {
  (void)state;
  _Atomic uint32_t word = 0;
  uint64_t start = cpuexec__os_now_ns();
  cpuexec__os_wait_until(&word, 0, start - 1); /* already passed: returns at once */
  uint64_t deadline = cpuexec__os_now_ns() + 1000000u;
  /* Nobody wakes it: only the deadline can end these waits (a spurious
   * return is allowed, so loop as every caller does). */
  while (cpuexec__os_now_ns() < deadline) cpuexec__os_wait_until(&word, 0, deadline);
  assert_true(cpuexec__os_now_ns() >= deadline);
}

typedef struct waiter {
  _Atomic uint32_t word;
  _Atomic int waiting; /* the waiter is about to sleep */
  _Atomic int woke;
} waiter;

static void *wait_for_change(void *arg) {
  waiter *w = arg;
  atomic_store(&w->waiting, 1);
  while (atomic_load(&w->word) == 0) cpuexec__os_wait(&w->word, 0);
  atomic_store(&w->woke, 1);
  return NULL;
}

static void a_store_and_wake_all_ends_every_wait(void **state) {
  (void)state;
  for (int round = 0; round < 50; round++) {
    waiter w = {0};
    pthread_t t[3];
    for (int i = 0; i < 3; i++) assert_int_equal(pthread_create(&t[i], NULL, wait_for_change, &w), 0);
    while (atomic_load(&w.waiting) == 0) sched_yield(); /* a latch: at least one is waiting or about to */
    atomic_store(&w.word, 1);
    cpuexec__os_wake_all(&w.word);
    for (int i = 0; i < 3; i++) assert_int_equal(pthread_join(t[i], NULL), 0); /* a lost wake hangs here */
    assert_int_equal(atomic_load(&w.woke), 1);
  }
}

typedef struct pin_result {
  int32_t cpu;
  int rc;
  int32_t now;
  int32_t count;
  int32_t only;
} pin_result;

static void *pin_and_look(void *arg) {
  pin_result *p = arg;
  p->rc = cpuexec__os_pin_self(p->cpu);
  p->now = cpuexec__os_current_cpu();
  p->count = cpuexec__os_affinity_self(&p->only, 1);
  return NULL;
}

static void pinning_matches_the_backend(void **state) {
  (void)state;
  int32_t ids[CPUEXEC_CPU_SET_MAX];
  int32_t n = cpuexec__os_affinity_self(ids, CPUEXEC_CPU_SET_MAX);
  pin_result p = {.cpu = n > 0 ? ids[n - 1] : 0};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, pin_and_look, &p), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  if (cpuexec__os_has_affinity()) {
    assert_true(n >= 1);
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.now, p.cpu); /* pinned to one processor: it runs there */
    assert_int_equal(p.count, 1);
    assert_int_equal(p.only, p.cpu);
    if (TEST_ON_WINDOWS) {
      /* SetThreadGroupAffinity in the thread's group; no cgroup. */
      assert_string_equal(cpuexec__os_backend(), "windows");
      assert_null(cpuexec__os_proc_self_cgroup());
      assert_true(cpuexec__os_has_processor_groups());
    } else {
      assert_string_equal(cpuexec__os_backend(), "linux");
      assert_string_equal(cpuexec__os_proc_self_cgroup(), "/proc/self/cgroup");
      assert_false(cpuexec__os_has_processor_groups());
    }
    /* The process set holds the processor the thread was pinned to. */
    cpuexec__os_cpus set;
    assert_true(cpuexec__os_process_cpus(&set));
    assert_true(cpuexec__os_cpus_has(&set, p.cpu));
  } else {
    assert_string_equal(cpuexec__os_backend(), "posix");
    assert_int_equal(n, -1);
    assert_int_equal(p.rc, ENOTSUP);
    assert_int_equal(p.now, -1);
    assert_int_equal(p.count, -1);
    assert_null(cpuexec__os_proc_self_cgroup());
    assert_null(cpuexec__os_cgroup_root());
  }
}

typedef struct move_result {
  int32_t to, now, here, count;
  int32_t set[CPUEXEC_CPU_SET_MAX];
} move_result;

static void *move_and_look(void *arg) {
  move_result *m = arg;
  m->now = cpuexec__os_move_to(m->to);
  m->here = cpuexec__os_current_cpu();
  m->count = cpuexec__os_affinity_self(m->set, CPUEXEC_CPU_SET_MAX);
  return NULL;
}

static move_result moved(int32_t to) {
  move_result m = {.to = to};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, move_and_look, &m), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  return m;
}

/* A move (the crowd move, src/executor/crowd_places.h) puts the thread on
 * each processor of its set asked for and always leaves its set as it
 * was; a processor outside the set (or none) moves nothing. POSIX has no
 * affinity and moves nothing. Each move is made MOVES times, and nearly
 * every one must land: the thread may be moved again by the scheduler
 * between widening its set and reading where it runs. */
enum { MOVES = 20 };

static void a_move_changes_where_a_thread_runs_not_its_set(void **state) {
  (void)state;
  int32_t ids[CPUEXEC_CPU_SET_MAX];
  int32_t n = cpuexec__os_affinity_self(ids, CPUEXEC_CPU_SET_MAX);
  if (!cpuexec__os_has_affinity()) {
    assert_int_equal(moved(0).now, -1);
    return;
  }
  assert_true(n >= 1 && n <= CPUEXEC_CPU_SET_MAX);
  int landed = 0;
  for (int32_t k = 0; k < n; k++)
    for (int i = 0; i < MOVES; i++) {
      move_result m = moved(ids[k]);
      landed += m.now == ids[k];
      assert_int_equal(m.count, n);
      assert_memory_equal(m.set, ids, (size_t)n * sizeof ids[0]);
    }
  assert_true(landed >= n * MOVES * 9 / 10);
  int32_t outside = -1;
  for (int32_t c = 0; c < CPUEXEC_CPU_SET_MAX && outside < 0; c++) {
    bool in_set = false;
    for (int32_t k = 0; k < n; k++) in_set = in_set || ids[k] == c;
    if (!in_set) outside = c;
  }
  int32_t refused[] = {outside, -1};
  for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
    move_result m = moved(refused[k]);
    assert_true(m.now >= 0 && m.now != refused[k]);
    assert_int_equal(m.count, n);
    assert_memory_equal(m.set, ids, (size_t)n * sizeof ids[0]);
  }
}

/* The loader (os/loader.h): the module of an address, a loaded module by
 * its path, a symbol in it, the global scope, a module that is not loaded,
 * and whether the backend counts loads. */
static void the_loader_finds_modules_and_symbols(void **state) {
  (void)state;
  /* A function of the C runtime no sanitizer intercepts, so the definition
   * found is the runtime's own. */
  const char *name = TEST_ON_WINDOWS ? "_getpid" : "getpid";
  void *f = cpuexec__os_global_symbol(name);
  assert_non_null(f);
  cpuexec__os_address a;
  assert_true(cpuexec__os_address_info(f, &a));
  assert_non_null(a.module_base);
  assert_non_null(strstr(a.module_path, TEST_ON_WINDOWS ? "msvcrt" : "libc"));
  void *m = cpuexec__os_module_loaded(a.module_path);
  assert_non_null(m);
  assert_ptr_equal(cpuexec__os_module_symbol(m, name), f);
  cpuexec__os_module_close(m);
  assert_true(cpuexec__os_address_info((const void *)cpuexec__os_backend, &a));
  assert_true(strlen(a.module_path) > 0);
  assert_null(cpuexec__os_module_loaded(TEST_ON_WINDOWS ? "cpuexec-no-such-module.dll" : "libcpuexec-no-such.so.9"));
  uint64_t before = 0, after = 0;
  bool counted = cpuexec__os_loader_changes(&before);
  assert_int_equal(counted, strcmp(cpuexec__os_backend(), "posix") != 0);
  assert_int_equal(cpuexec__os_loader_changes(&after), counted);
  assert_true(after == before); /* nothing was loaded in between */
}

static void the_clock_is_monotonic(void **state) {
  (void)state;
  uint64_t last = cpuexec__os_now_ns();
  for (int i = 0; i < 1000; i++) {
    uint64_t now = cpuexec__os_now_ns();
    assert_true(now >= last);
    last = now;
  }
  assert_true(last > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_wait_on_a_moved_word_returns_at_once),
      cmocka_unit_test(the_loader_finds_modules_and_symbols),
      cmocka_unit_test(a_store_and_wake_all_ends_every_wait),
      cmocka_unit_test(a_timed_wait_ends_at_its_deadline_without_a_wake),
      cmocka_unit_test(pinning_matches_the_backend),
      cmocka_unit_test(a_move_changes_where_a_thread_runs_not_its_set),
      cmocka_unit_test(the_clock_is_monotonic),
  };
  return cmocka_run_group_tests_name("os layer", tests, NULL, NULL);
}
