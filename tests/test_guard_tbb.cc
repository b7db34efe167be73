// The oneTBB guard with the real libtbb, in both of its ways:
//   - with the cpuexec-tbb module (the default): each participant's
//     callbacks, and each task of a task group, run in a one-thread
//     task_arena of its thread; a tbb::parallel_for inside starts
//     and wakes no TBB worker, during the region or after it, and oneTBB's
//     process-wide limit is never touched; foreign executors' callbacks too;
//   - without it (CPUEXEC_TBB_MODULE=off: the program runs itself again so):
//     a global_control of max_allowed_parallelism 1 while callbacks run; no
//     worker joins a loop (what oneTBB does each time the limit is lifted, a
//     worker sent, or started, to withdraw the loops' demand, is printed:
//     doc/runtime-guards.md); foreign executors' participants do not hold it.
// Either way every body runs on the region's participants, the results are
// right, the same loop at top level still gets oneTBB's workers, and the
// guard's global_control is oneTBB's (layout and entry points checked
// against the installed headers). No sleeps: counts are read from /proc.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include <dlfcn.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <cpuexec.h>

extern "C" {
#include "support/foreign_pool.h"
}
#include "support/guard_cpu.h"

namespace {

int failures = 0;

void check(bool ok, const char *what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what);
  if (!ok) failures++;
}

// Running threads of the process (a joined thread may linger with PF_EXITING).
int running_threads() {
  guard_cpu_snapshot s;
  guard_cpu_threads(&s);
  int n = 0;
  for (int i = 0; i < s.count; i++) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", s.tid[i]);
    FILE *f = std::fopen(path, "r");
    if (f == nullptr) continue;
    char buf[1024];
    size_t len = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[len] = '\0';
    const char *close = std::strrchr(buf, ')');
    unsigned long flags = 0;
    if (close != nullptr) {
      // After ") state ppid pgrp session tty_nr tpgid flags".
      std::sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags);
    }
    n += (flags & 0x4) == 0;
  }
  return n;
}

size_t allowed_parallelism() {
  return tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
}

struct loop_job {
  std::mutex lock;
  std::set<int> participants;  // threads that ran callbacks
  std::set<int> bodies;        // threads that ran parallel_for bodies
  std::atomic<long> sum{0};
  std::atomic<int> limit_inside{0};
  std::atomic<int> arena_inside{0};  // this_task_arena::max_concurrency() in callbacks
  std::atomic<int> threads_inside{0};  // the most running threads seen inside callbacks, after their loops
};

void tbb_loop(loop_job *job) {
  tbb::parallel_for(
      tbb::blocked_range<int>(0, 20000, 16),
      [job](const tbb::blocked_range<int> &r) {
        long s = 0;
        for (int i = r.begin(); i < r.end(); i++) s += i % 7;
        job->sum += s;
        std::lock_guard<std::mutex> g(job->lock);
        job->bodies.insert(guard_cpu_gettid());
      },
      tbb::simple_partitioner());
}

long expected_sum() {
  long s = 0;
  for (int i = 0; i < 20000; i++) s += i % 7;
  return s;
}

int loop_range(void *ctx, int64_t begin, int64_t end) {
  auto *job = static_cast<loop_job *>(ctx);
  for (int64_t k = begin; k < end; k++) {
    job->limit_inside.store(static_cast<int>(allowed_parallelism()));
    job->arena_inside.store(tbb::this_task_arena::max_concurrency());
    {
      std::lock_guard<std::mutex> g(job->lock);
      job->participants.insert(guard_cpu_gettid());
    }
    tbb_loop(job);
    int now = running_threads();
    int seen = job->threads_inside.load();
    while (now > seen && !job->threads_inside.compare_exchange_weak(seen, now)) {
    }
  }
  return 0;
}

// A task of a task group: what one callback does, once.
int loop_task(void *ctx) { return loop_range(ctx, 0, 1); }

bool bodies_on_participants(loop_job &job) {
  for (int t : job.bodies)
    if (job.participants.count(t) == 0) return false;
  return true;
}

cpuexec_session *two_thread_session() {
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = 2;
  policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
  policy.spin_policy = CPUEXEC_SPIN_PARK_IMMEDIATELY;
  cpuexec_session *session = nullptr;
  if (cpuexec_session_create(&policy, &session) != 0) {
    std::fprintf(stderr, "test_guard_tbb: %s\n", cpuexec_error_message());
    std::exit(1);
  }
  return session;
}

// Several loops per region, every participant: two ranges per participant.
int run_region(cpuexec_session *session, loop_job *job) {
  return cpuexec_parallel_for_flags(cpuexec_session_executor(session), 4, 1, job, loop_range, 0,
                                    CPUEXEC_FOR_EVERY_PARTICIPANT);
}

}  // namespace

// Runs this program again with the module turned off; its exit status.
int run_without_module(char **argv) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("CPUEXEC_TBB_MODULE", "off", 1);
    execv("/proc/self/exe", argv);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int main(int argc, char **argv) {
  (void)argc;
  const char *module_env = std::getenv("CPUEXEC_TBB_MODULE");
  const bool per_thread = module_env == nullptr || std::strcmp(module_env, "off") != 0;
  std::printf("== oneTBB guard %s\n", per_thread ? "with the cpuexec-tbb module (per thread)"
                                                 : "without the module (CPUEXEC_TBB_MODULE=off: process-wide)");
  // The guard's global_control is oneTBB's: same size, same entry points.
  check(sizeof(tbb::global_control) == sizeof(size_t) + sizeof(intptr_t) + sizeof(size_t),
        "tbb::global_control is {size_t, intptr_t, enum} (the layout the guard passes to libtbb)");
  void (*create)(tbb::detail::d1::global_control &) = &tbb::detail::r1::create;
  void (*destroy)(tbb::detail::d1::global_control &) = &tbb::detail::r1::destroy;
  check(dlsym(RTLD_DEFAULT, "_ZN3tbb6detail2r16createERNS0_2d114global_controlE") == (void *)create &&
            dlsym(RTLD_DEFAULT, "_ZN3tbb6detail2r17destroyERNS0_2d114global_controlE") == (void *)destroy,
        "the guard's symbol names are tbb::detail::r1::create/destroy(global_control&)");

  cpuexec_runtime_info list[24];
  size_t n = 0;
  cpuexec_runtimes_get(list, 24, &n);
  bool listed = false;
  const cpuexec_runtime_guard want = per_thread ? CPUEXEC_GUARD_PER_THREAD : CPUEXEC_GUARD_PROCESS_WIDE;
  for (size_t i = 0; i < n && i < 24; i++)
    if (list[i].family == CPUEXEC_RUNTIME_TBB) {
      std::printf("oneTBB %s: %s\n", list[i].version, list[i].reason);
      listed = list[i].governed && list[i].guard == want && std::strcmp(list[i].name, "oneTBB") == 0;
    }
  check(listed, per_thread ? "oneTBB is listed, governed per thread" : "oneTBB is listed, governed process-wide");
  size_t default_limit = allowed_parallelism();

  cpuexec_session *session = two_thread_session();
  int threads_before = running_threads();
  {
    loop_job job;
    check(run_region(session, &job) == 0, "parallel_for inside callbacks ran");
    check(job.sum.load() == 4 * expected_sum(), "its results are right");
    if (per_thread) {
      check(job.arena_inside.load() == 1, "callbacks run in an arena of one thread");
      check(job.limit_inside.load() == static_cast<int>(default_limit), "oneTBB's process-wide limit is untouched");
    } else {
      check(job.limit_inside.load() == 1, "max_allowed_parallelism is 1 inside callbacks");
    }
    check(bodies_on_participants(job), "every body ran on a participant of the region");
    int threads_after = running_threads();
    std::printf("threads before %d, inside callbacks at most %d, after the region %d\n", threads_before,
                job.threads_inside.load(), threads_after);
    if (per_thread) {
      check(job.threads_inside.load() == threads_before,
            "no TBB worker was started while the callbacks ran their parallel_for");
      check(threads_after == threads_before, "nor after the region (no demand was left for a worker to withdraw)");
    }
    // Without the module, a participant that leaves before the other enters
    // lifts the limit in between, and oneTBB may start a worker then (it
    // joins no loop: the bodies' threads above say so).
  }
  check(allowed_parallelism() == default_limit, "the limit is back when the region returned");

  // At top level oneTBB still uses its workers (where it has processors for them).
  {
    loop_job job;
    tbb_loop(&job);
    tbb_loop(&job);
    int threads_top = running_threads();
    std::printf("default parallelism %zu; threads after top-level loops %d\n", default_limit, threads_top);
    if (default_limit > 1)
      check(threads_top > threads_before, "a top-level parallel_for started TBB workers");
  }

  // With TBB workers alive, loops inside callbacks still wake none of them.
  {
    loop_job job;
    int threads_before_region = running_threads();
    check(run_region(session, &job) == 0 && job.sum.load() == 4 * expected_sum(), "the loops ran again, right");
    check(bodies_on_participants(job), "with TBB workers alive, every body ran on a participant");
    if (per_thread)
      check(job.threads_inside.load() == threads_before_region, "and no thread was started");
  }

  // Task groups' tasks are kept inline as callbacks are (each runs as a
  // participant of its own, inside the guard's wrapper).
  {
    loop_job job;
    int threads_before_tasks = running_threads();
    cpuexec_task_group *group = nullptr;
    bool ran = cpuexec_task_group_create(cpuexec_session_executor(session), nullptr, &group) == 0;
    for (int i = 0; ran && i < 4; i++) ran = cpuexec_task_group_submit(group, &job, loop_task) == 0;
    ran = ran && cpuexec_task_group_wait(group) == 0;
    if (group != nullptr) cpuexec_task_group_destroy(group);
    check(ran && job.sum.load() == 4 * expected_sum(), "parallel_for inside 4 tasks of a task group ran, right");
    check(bodies_on_participants(job), "every body ran on a thread that ran the tasks");
    if (per_thread) {
      check(job.arena_inside.load() == 1, "tasks run in an arena of one thread");
      check(job.threads_inside.load() == threads_before_tasks, "and no thread was started");
    }
  }

  // A foreign executor's participants do not hold oneTBB (it may be oneTBB's own pool).
  {
    foreign_pool *pool = foreign_pool_create(2);
    cpuexec_executor *exec = foreign_pool_executor(pool);
    loop_job job;
    check(exec != nullptr &&
              cpuexec_parallel_for_flags(exec, 2, 1, &job, loop_range, 0, CPUEXEC_FOR_EVERY_PARTICIPANT) == 0,
          "a foreign executor's region ran");
    check(job.limit_inside.load() == static_cast<int>(default_limit),
          "a foreign executor's participants leave oneTBB's limit alone");
    if (per_thread)
      check(job.arena_inside.load() == 1 && bodies_on_participants(job),
            "a foreign executor's callbacks run in an arena of one thread too");
    cpuexec_executor_release(exec);
    foreign_pool_destroy(pool);
  }
  cpuexec_session_destroy(session);
  std::printf("test_guard_tbb: %d failure(s)\n", failures);
  if (per_thread && run_without_module(argv) != 0) {
    std::printf("test_guard_tbb: the run without the module failed\n");
    failures++;
  }
  return failures == 0 ? 0 : 1;
}
