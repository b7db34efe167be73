/* The permit model's bound on the library's runnable threads (issue 31):
 * 8 callers, one with a task group, crowd executors of 16 and 64 threads,
 * then one caller is left alone; meanwhile a sampler thread watches the
 * workers. What runs never exceeds what the model (src/executor/permit.h)
 * lets run.
 *
 * What the model lets run. A caller never needs a permit: it always runs.
 * A worker runs only inside a share of a region that admitted it or a task
 * group's tasks (permit.h's gauge `running`), or spins in a wait the model
 * lets it spin (`spinning`); otherwise it parks. Both executors have more
 * threads than the 2 processors of the stored machine they are resolved on
 * (support/executors.h), so the spin at all rule parks every waiter at
 * once: no worker may ever spin. The lone phase leaves that rule alone to
 * keep them parked: one caller has nobody to stand aside for, and its
 * regions wait for every worker (CPUEXEC_FOR_EVERY_PARTICIPANT), so each
 * worker waits once per region, more than CPUEXEC__UNSETTLED_REGIONS
 * times, and settles (the settle rule no longer parks it).
 *
 * Two measurements, each of which fails when what it measures breaks:
 *   - the model's own count, exact: the most workers ever spinning at once
 *     (the gauge's high-water mark) is 0. A spin at all rule that let them
 *     spin makes it the number of workers;
 *   - the kernel's view, where /proc shows threads' states (Linux): the
 *     workers (named cpuexec-wN, src/executor/executor.c) in state R,
 *     sampled, beyond the permit holders counted around the same sample. A
 *     worker woken by an admission and not yet joined, or between its
 *     share and its futex, is legitimately R without a permit, and on a
 *     busy machine it may wait in R for a scheduler tick: so one sample may
 *     show many, and the bound is on the median sample: at most half the
 *     workers runnable without a permit (most of them parked). A worker
 *     that does not really park when the model parks it is R in nearly
 *     every sample, which makes the median the number of workers.
 *
 * Nothing waits on time: the sampler runs until the callers are done (an
 * atomic flag); a hang is named by the case watchdog. */
#include "support/test_util.h"

#include <pthread.h>
#include <stdint.h>
#ifdef __linux__
#include <dirent.h>
#endif

#include "executor/executor_internal.h"
#include "os/os.h"

#define CALLERS 8
#define REGIONS 150
#define MOST_INDICES 300
#define TASKS_PER_REGION 8
#define LONE_REGIONS (CPUEXEC__UNSETTLED_REGIONS + 16)
#define MOST_SAMPLES 100000

static int some_work(void *ctx, int64_t begin, int64_t end) {
  _Atomic int64_t *sum = ctx;
  for (int64_t i = begin; i < end; i++) atomic_fetch_add_explicit(sum, i, memory_order_relaxed);
  return 0;
}

static int a_task(void *ctx) {
  (void)ctx;
  return 0;
}

typedef struct caller {
  cpuexec_executor *exec;
  uint32_t seed;
  bool with_tasks;
  uint32_t failures;
} caller;

/* test_permit_stress.c's caller, without its checks of the indices. */
static void *crowd_caller(void *arg) {
  caller *me = arg;
  _Atomic int64_t sum = 0;
  cpuexec_task_group *group = NULL;
  if (me->with_tasks && cpuexec_task_group_create(me->exec, NULL, &group) != 0) me->failures++;
  for (uint32_t r = 0; r < REGIONS; r++) {
    me->seed = me->seed * 1103515245u + 12345u;
    int64_t total = 1 + (int64_t)(me->seed >> 8) % MOST_INDICES;
    int64_t grain = 1 + (int64_t)(me->seed >> 20) % 7;
    if (group)
      for (uint32_t t = 0; t < TASKS_PER_REGION; t++)
        if (cpuexec_task_group_submit(group, NULL, a_task) != 0) me->failures++;
    if (cpuexec_parallel_for(me->exec, total, grain, &sum, some_work, 0) != 0) me->failures++;
    if (group && r % 16 == 15 && cpuexec_task_group_wait(group) != 0) me->failures++;
  }
  if (group) {
    if (cpuexec_task_group_wait(group) != 0) me->failures++;
    cpuexec_task_group_destroy(group);
  }
  return NULL;
}

/* ---- the sampler ------------------------------------------------------ */

typedef struct sampler {
  _Atomic bool done;
  uint32_t samples;
  int32_t beyond[MOST_SAMPLES]; /* per sample: workers in R - permit holders */
} sampler;

static uint32_t permit_holders(void) {
  return atomic_load(&cpuexec__test_permit_running.now) + atomic_load(&cpuexec__test_permit_spinning.now);
}

#ifdef __linux__
/* The library's workers in state R now, from /proc/self/task/N/stat
 * ("tid (comm) S ..."); -1 when /proc shows none (no /proc, or threads
 * unnamed). */
static int32_t workers_runnable(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int32_t r = 0, named = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[300], text[256] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue; /* a thread that ended meanwhile */
    bool got = fgets(text, sizeof text, f) != NULL;
    fclose(f);
    const char *open = strchr(text, '('), *close = strrchr(text, ')');
    if (!got || !open || !close || close[1] != ' ' || strncmp(open + 1, "cpuexec-w", 9) != 0) continue;
    named++;
    if (close[2] == 'R') r++;
  }
  closedir(d);
  return named > 0 ? r : -1;
}
#else
/* Elsewhere the states are not read (a port adds its own reading here). */
static int32_t workers_runnable(void) { return -1; }
#endif

static void *sample(void *arg) {
  sampler *s = arg;
  while (!atomic_load(&s->done) && s->samples < MOST_SAMPLES) {
    uint32_t before = permit_holders();
    int32_t r = workers_runnable();
    uint32_t after = permit_holders();
    /* A permit held at either end of the scan may have been held when its
     * thread's state was read. */
    if (r >= 0) s->beyond[s->samples++] = r - (int32_t)(before > after ? before : after);
    cpuexec__os_yield(); /* one sample per turn: the callers keep the processors */
  }
  return NULL;
}

static int compare_int32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* ---- the cases ---------------------------------------------------------- */

static void run_crowd_then_one(uint32_t threads) {
  cpuexec_executor *exec = test_executor(threads);
  /* The stored machine's processors, not this one's: the bound holds
   * wherever the test runs. */
  assert_true(cpuexec__permit_oversubscribed(threads, exec->permit.processors));
  atomic_store(&cpuexec__test_permit_running.most, atomic_load(&cpuexec__test_permit_running.now));
  atomic_store(&cpuexec__test_permit_spinning.most, atomic_load(&cpuexec__test_permit_spinning.now));
  sampler *s = calloc(1, sizeof *s);
  assert_non_null(s);
  pthread_t sampler_thread, t[CALLERS];
  assert_int_equal(pthread_create(&sampler_thread, NULL, sample, s), 0);

  caller callers[CALLERS];
  uint32_t failures = 0;
  for (uint32_t k = 0; k < CALLERS; k++) {
    callers[k] = (caller){exec, 7919u * (k + 1), k == 0, 0};
    assert_int_equal(pthread_create(&t[k], NULL, crowd_caller, &callers[k]), 0);
  }
  for (uint32_t k = 0; k < CALLERS; k++) {
    pthread_join(t[k], NULL);
    failures += callers[k].failures;
  }
  _Atomic int64_t sum = 0;
  for (uint32_t r = 0; r < LONE_REGIONS; r++)
    if (cpuexec_parallel_for_flags(exec, 2 * (int64_t)threads, 1, &sum, some_work, 0, CPUEXEC_FOR_EVERY_PARTICIPANT) != 0)
      failures++;
  atomic_store(&s->done, true);
  pthread_join(sampler_thread, NULL);
  /* Released before any assertion: a failing case leaves no worker
   * behind in the next one's gauges. */
  cpuexec_executor_release(exec);

  uint32_t spinning_most = atomic_load(&cpuexec__test_permit_spinning.most);
  print_message("%u threads: most workers at once spinning %u, running %u", threads, spinning_most,
                atomic_load(&cpuexec__test_permit_running.most));
  uint32_t samples = s->samples;
  int32_t median = 0;
  if (samples > 0) {
    qsort(s->beyond, samples, sizeof s->beyond[0], compare_int32);
    median = s->beyond[samples / 2];
    print_message("; workers R beyond the permits, of %u samples: median %d, 90th percentile %d, most %d\n",
                  samples, median, s->beyond[samples * 9 / 10], s->beyond[samples - 1]);
  } else {
    print_message("; no thread states sampled (no /proc, or threads unnamed)\n");
  }
  free(s);
  assert_int_equal(failures, 0);
  assert_int_equal(spinning_most, 0);
  assert_true(median <= (int32_t)(threads - 1) / 2);
}

static void sixteen_threads_run_no_more_than_their_permits(void **state) {
  (void)state;
  run_crowd_then_one(16);
}

static void sixty_four_threads_run_no_more_than_their_permits(void **state) {
  (void)state;
  run_crowd_then_one(64);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sixteen_threads_run_no_more_than_their_permits),
      cmocka_unit_test(sixty_four_threads_run_no_more_than_their_permits),
  };
  return cmocka_run_group_tests_name("the permit model's bound on runnable threads", tests, NULL, NULL);
}
