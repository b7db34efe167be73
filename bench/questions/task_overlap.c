/* A task and its submitter's own work: does the task run beside it?
 * (doc/spinning.md, "Beside its caller": the kernel may wake a worker on
 * its waker's processor while the other idles.)
 * A session of 2 threads; each repetition, after GAP_MS idle (the worker
 * parks), submits one task of TASK_US of spinning to a task group, spins
 * OWN_US on the submitting thread, then waits for the group. Apart, a repetition takes max(TASK_US, OWN_US);
 * one after the other, their sum. Prints the median repetition, the
 * repetitions that overlapped (under the midpoint of the two), and the
 * workers' step-offs (cpuexec_counters.step_offs). Usage:
 * task_overlap [repetitions] (default 100). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cpuexec.h>
#include <cpuexec/tasks.h>
#include "../clock.h"
#include "../stats.h"

#define TASK_US 500.0
#define OWN_US 600.0
#define GAP_MS 20

static void spin_us(double us) {
  double end = bench_now_ns() + us * 1e3;
  while (bench_now_ns() < end) {
  }
}

static int task(void *ctx) {
  (void)ctx;
  spin_us(TASK_US);
  return 0;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 100;
  if (reps < 1) return 2;
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = 2;
  cpuexec_session *s = NULL;
  cpuexec_task_group *g = NULL;
  if (cpuexec_session_create(&policy, &s) != 0 || cpuexec_executor_counters_enable(cpuexec_session_executor(s)) != 0 ||
      cpuexec_task_group_create(cpuexec_session_executor(s), NULL, &g) != 0) {
    printf("FAIL task_overlap: %s\n", cpuexec_error_message());
    return 1;
  }
  double *us = malloc(sizeof *us * (size_t)reps);
  if (!us) return 1;
  int overlapped = 0;
  for (int r = 0; r < reps; r++) {
    struct timespec gap = {0, GAP_MS * 1000000L};
    nanosleep(&gap, NULL);
    double t0 = bench_now_ns();
    if (cpuexec_task_group_submit(g, NULL, task) != 0) return printf("FAIL task_overlap: submit\n"), 1;
    spin_us(OWN_US);
    if (cpuexec_task_group_wait(g) != 0) return printf("FAIL task_overlap: wait\n"), 1;
    us[r] = (bench_now_ns() - t0) / 1e3;
    if (us[r] < (OWN_US + (TASK_US + OWN_US)) / 2) overlapped++;
  }
  cpuexec_counters c;
  cpuexec_executor_counters_get(cpuexec_session_executor(s), &c);
  printf("# a %.0f us task beside %.0f us of the submitter's own work, after %d ms idle, %d repetitions, session of 2\n",
         TASK_US, OWN_US, GAP_MS, reps);
  printf("task_overlap_median_us %.0f (apart %.0f, one after the other %.0f)\n", bench_median(us, (size_t)reps),
         OWN_US, TASK_US + OWN_US);
  printf("task_overlap_overlapped %d of %d\n", overlapped, reps);
  printf("task_overlap_step_offs %llu\n", (unsigned long long)c.step_offs);
  free(us);
  cpuexec_task_group_destroy(g);
  cpuexec_session_destroy(s);
  return 0;
}
