// Recipe: libcpuexec as a library's run_blocks hook, in C++ (doc/executor-hooks.md).
//
// The same hook as examples/hooks/run_blocks.c (onnx-light-cpu's executor
// view, seed 003's (count, callback) contract), in a C++ library whose
// tasks may throw. cpuexec::range_executor::run_all runs every block
// exactly once and carries a task's exception to the library's caller
// after every started block finished. main checks both.
#include <cpuexec.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <vector>

namespace library { // ---- the library (stand-in): its hook and a kernel calling it

using execution_task = void (*)(void *task_context, int64_t begin_block, int64_t end_block);
struct ExecutionExecutorView {
  void *context;
  int32_t effective_threads;
  void (*run_blocks)(void *context, int64_t num_blocks, void *task_context, execution_task task);
};
thread_local const ExecutionExecutorView *current_view = nullptr; // NULL: serial

constexpr int64_t block = 64;
struct scale_args {
  const std::vector<float> *x;
  std::vector<float> *y;
  std::vector<std::atomic<int>> *runs;
};

void scale_blocks(void *task_context, int64_t begin, int64_t end) {
  auto *a = static_cast<scale_args *>(task_context);
  for (int64_t b = begin; b < end; b++) {
    (*a->runs)[static_cast<size_t>(b)]++;
    for (int64_t i = b * block; i < (b + 1) * block && i < static_cast<int64_t>(a->x->size()); i++) {
      float v = (*a->x)[static_cast<size_t>(i)];
      if (v < 0) throw std::domain_error("scale: negative input");
      (*a->y)[static_cast<size_t>(i)] = 2 * v;
    }
  }
}

void scale(const std::vector<float> &x, std::vector<float> &y, std::vector<std::atomic<int>> &runs) {
  scale_args a{&x, &y, &runs};
  int64_t blocks = (static_cast<int64_t>(x.size()) + block - 1) / block;
  if (current_view != nullptr)
    current_view->run_blocks(current_view->context, blocks, &a, scale_blocks);
  else
    scale_blocks(&a, 0, blocks);
}

} // namespace library

// ---- the recipe -------------------------------------------------------------

std::atomic<int> library_errors{0}; // the side channel

void cpuexec_run_blocks(void *context, int64_t num_blocks, void *task_context, library::execution_task task) {
  auto ex = cpuexec::range_executor::of(static_cast<cpuexec_executor *>(context));
  cpuexec::run_all_report r = ex.run_all(num_blocks, [&](int64_t b, int64_t e) { task(task_context, b, e); });
  if (r.error != 0) library_errors++; // every block ran anyway, on the caller
}

library::ExecutionExecutorView view_of(cpuexec::executor_ref exec) {
  return {exec.get(), exec.effective_threads(), cpuexec_run_blocks};
}

// ---- the check --------------------------------------------------------------

int main() {
  // Every participant takes part in every region, so "more than one thread
  // ran" is certain on a busy machine too; the recipe does not need it.
  cpuexec::session session(cpuexec::policy().num_threads(3).participation_rule(
      cpuexec::participation::every_participant));
  cpuexec::enable_counters(session.executor());
  const int64_t n = 100000, blocks = (n + library::block - 1) / library::block;
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) x[static_cast<size_t>(i)] = static_cast<float>(i);
  std::vector<std::atomic<int>> runs(static_cast<size_t>(blocks));

  library::ExecutionExecutorView view = view_of(session.executor());
  library::current_view = &view;
  library::scale(x, y, runs);
  int wrong = 0;
  for (auto &r : runs) wrong += r.exchange(0) != 1;
  for (int64_t i = 0; i < n; i++) wrong += y[static_cast<size_t>(i)] != 2 * x[static_cast<size_t>(i)];
  cpuexec::counters c = cpuexec::counters_of(session.executor());

  // A task that throws: the exception reaches the library's caller, with its
  // type, after every started block finished; no block ran twice.
  x[static_cast<size_t>(n / 2)] = -1;
  bool threw = false;
  try {
    library::scale(x, y, runs);
  } catch (const std::domain_error &) {
    threw = true;
  }
  int twice = 0;
  for (auto &r : runs) twice += r.load() > 1;
  library::current_view = nullptr;

  std::printf("run_blocks (C++): %lld blocks, %d not run exactly once or wrong; %llu parallel region(s); exception "
              "%s, %d block(s) run twice; %d library errors\n",
              static_cast<long long>(blocks), wrong, static_cast<unsigned long long>(c.parallel_regions),
              threw ? "carried" : "lost", twice, library_errors.load());
  return wrong == 0 && threw && twice == 0 && c.parallel_regions == 1 && library_errors == 0 ? 0 : 1;
}
