// Recipe: libcpuexec as a library's parallel_for(n, fn) hook, in C++
// (doc/executor-hooks.md).
//
// The library (a stand-in) takes a std::function as its loop scheduler and
// calls it for n independent indices; its bodies may throw. The recipe is
// the lambda in main: cpuexec::range_executor::installed().run_all, which
// runs every index exactly once on the executor installed at each call and
// carries a body's exception to the library's caller. main checks both.
#include <cpuexec.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <vector>

namespace library { // ---- the library (stand-in): its hook and a kernel calling it

using parallel_for_hook = std::function<void(int64_t n, const std::function<void(int64_t i)> &body)>;
parallel_for_hook hook; // empty: the library's own serial loop

void set_parallel_for(parallel_for_hook f) { hook = std::move(f); }

void for_each_row(int64_t rows, const std::function<void(int64_t)> &body) {
  if (hook)
    hook(rows, body);
  else
    for (int64_t r = 0; r < rows; r++) body(r);
}

} // namespace library

int main() {
  // ---- the recipe -----------------------------------------------------------
  std::atomic<int> library_errors{0}; // the side channel
  library::set_parallel_for([&](int64_t n, const std::function<void(int64_t)> &body) {
    cpuexec::run_all_report r = cpuexec::range_executor::installed().run_all(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) body(i);
    });
    if (r.error != 0) library_errors++; // every index ran anyway, on the caller
  });

  // ---- the check ------------------------------------------------------------
  cpuexec::session session(cpuexec::policy().num_threads(2).participation_rule(
      cpuexec::participation::every_participant)); // "went parallel" is certain on a busy machine too
  cpuexec::enable_counters(session.executor());
  const int64_t rows = 5000;
  std::vector<std::atomic<int>> runs(static_cast<size_t>(rows));
  auto count_row = [&](int64_t r) { runs[static_cast<size_t>(r)]++; };
  auto wrong = [&] {
    int w = 0;
    for (auto &r : runs) w += r.exchange(0) != 1;
    return w;
  };

  session.run([&] { library::for_each_row(rows, count_row); });
  int wrong_inside = wrong();
  uint64_t parallel = cpuexec::counters_of(session.executor()).parallel_regions;
  library::for_each_row(rows, count_row); // outside any session: serial on the caller
  int wrong_outside = wrong();

  bool threw = false;
  int twice = 0;
  try {
    session.run([&] {
      library::for_each_row(rows, [&](int64_t r) {
        count_row(r);
        if (r == rows / 2) throw std::runtime_error("row");
      });
    });
  } catch (const std::runtime_error &) {
    threw = true;
  }
  for (auto &r : runs) twice += r.load() > 1;

  std::printf("parallel_for (C++): %lld rows; wrong %d inside a session (%llu parallel region(s)), %d outside; "
              "exception %s, %d row(s) run twice; %d library errors\n",
              static_cast<long long>(rows), wrong_inside, static_cast<unsigned long long>(parallel), wrong_outside,
              threw ? "carried" : "lost", twice, library_errors.load());
  return wrong_inside == 0 && wrong_outside == 0 && parallel == 1 && threw && twice == 0 && library_errors == 0 ? 0
                                                                                                               : 1;
}
