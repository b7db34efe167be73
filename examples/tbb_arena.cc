// A oneTBB arena as a libcpuexec executor (include/cpuexec/foreign.h,
// doc/foreign-executors.md).
//
// The application owns a tbb::task_arena; wrapped as a foreign executor,
// the same kernels that run on libcpuexec's own pool run on the arena's
// threads: cpuexec_parallel_for, the range schedules of a session-style
// scope, and the range-executor contract. Each participant of a region is
// one index of a tbb::parallel_for over [0, participants); oneTBB never
// makes the caller wait for a worker that has not arrived, and neither does
// libcpuexec, so a late worker's participant simply runs on a thread that
// is already there. The program checks every kernel's result against a
// serial run, and that each region ran every participant, on whichever
// threads oneTBB chose (it prints how many).
//
// Callbacks are C functions: no exception can escape them.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <cpuexec.h>

#include <cpuexec/compat/range_executor.h>
#include <cpuexec/compat/ranges.h>

namespace {

// run_ranges for a task_arena: the contract of include/cpuexec/compat/range_executor.h.
int arena_run_ranges(void *pool, int64_t count, void *arg, cpuexec_range_fn fn) {
  auto *arena = static_cast<tbb::task_arena *>(pool);
  std::atomic<int> first_error{0};
  arena->execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, count, 1),
        [&](const tbb::blocked_range<int64_t> &r) {
          if (first_error.load(std::memory_order_relaxed) != 0) return;
          int rc = fn(arg, r.begin(), r.end());
          int expected = 0;
          if (rc != 0) first_error.compare_exchange_strong(expected, rc);
        },
        tbb::simple_partitioner());
  });
  return first_error.load();
}

constexpr int64_t kItems = 100000;

struct saxpy {
  const float *x;
  float *y;
  float a;
  std::atomic<uint32_t> participants{0};
  std::atomic<uint32_t> wrong_count{0};
  uint32_t expected_count = 0;
  std::mutex lock;
  std::set<std::thread::id> threads;
};

int saxpy_range(void *ctx, int64_t begin, int64_t end) {
  auto *k = static_cast<saxpy *>(ctx);
  k->participants.fetch_or(1u << cpuexec_participant_index());
  if (cpuexec_participant_count() != k->expected_count) k->wrong_count.fetch_add(1);
  {
    std::lock_guard<std::mutex> guard(k->lock);
    k->threads.insert(std::this_thread::get_id());
  }
  for (int64_t i = begin; i < end; i++) k->y[i] += k->a * k->x[i];
  return 0;
}

bool check(const char *what, saxpy &k, const std::vector<float> &expected, uint32_t participants) {
  bool ok = k.participants.load() == (1u << participants) - 1 && k.wrong_count.load() == 0;
  for (int64_t i = 0; i < kItems && ok; i++) ok = k.y[i] == expected[i];
  std::printf("tbb_arena: %-28s participants 0x%x on %zu thread(s): %s\n", what, k.participants.load(),
              k.threads.size(), ok ? "ok" : "WRONG");
  return ok;
}

}  // namespace

int main() {
  const uint32_t threads = 4;
  // oneTBB caps its workers at the machine's processors less one; the arena
  // asks for 4 threads even on a small machine.
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, threads);
  tbb::task_arena arena(static_cast<int>(threads));
  cpuexec_foreign_executor_ops ops;
  cpuexec_foreign_executor_ops_init(&ops);
  ops.effective_threads = static_cast<int32_t>(arena.max_concurrency());
  ops.run_ranges = arena_run_ranges;
  cpuexec_executor *exec = nullptr;
  if (cpuexec_executor_create_foreign(&ops, &arena, &exec) != 0) {
    std::fprintf(stderr, "tbb_arena: %s\n", cpuexec_error_message());
    return 1;
  }
  uint32_t n = cpuexec_executor_effective_threads(exec);

  std::vector<float> x(kItems), y0(kItems), expected(kItems);
  for (int64_t i = 0; i < kItems; i++) {
    x[i] = static_cast<float>(i % 97);
    y0[i] = static_cast<float>(i % 13);
    expected[i] = y0[i] + 2.0f * x[i];
  }
  bool ok = true;

  {  // cpuexec_parallel_for on the arena
    std::vector<float> y = y0;
    saxpy k;
    k.x = x.data(), k.y = y.data(), k.a = 2.0f, k.expected_count = n;
    ok = cpuexec_parallel_for(exec, kItems, 1000, &k, saxpy_range, 0) == 0 && ok;
    ok = check("cpuexec_parallel_for", k, expected, n) && ok;
  }
  cpuexec_scope scope;
  if (cpuexec_scope_enter(exec, &scope) != 0) return 1;
  {  // a kernel written against the range schedules finds the arena installed
    std::vector<float> y = y0;
    saxpy k;
    k.x = x.data(), k.y = y.data(), k.a = 2.0f, k.expected_count = n;
    cpuexec_range_schedule s;
    cpuexec_range_schedule_init(&s);
    s.max_participants = 0;
    s.block_multiple = 16;
    ok = cpuexec_ranges_execute(kItems, &s, &k, saxpy_range) == 0 && ok;
    ok = check("cpuexec_ranges_execute", k, expected, n) && ok;
  }
  {  // and one written against the range-executor contract
    std::vector<float> y = y0;
    saxpy k;
    k.x = x.data(), k.y = y.data(), k.a = 2.0f, k.expected_count = n;
    cpuexec_range_executor re = cpuexec_range_executor_installed();
    ok = cpuexec_range_executor_run(&re, kItems, &k, saxpy_range) == 0 && ok;
    ok = check("cpuexec_range_executor_run", k, expected, n) && ok;
  }
  ok = cpuexec_scope_leave(&scope) == 0 && ok;
  cpuexec_executor_release(exec);
  return ok ? 0 : 1;
}
