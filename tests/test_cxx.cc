// cpuexec.hpp: lambdas over every adapter, exceptions carried to the caller
// once with their type, library errors as cpuexec::error, RAII handles.
//
// Plain checks: each case prints its name before it runs, so a hang (cut by
// tests/run-test.sh's timeout) names the case in the log. Threads meet with
// condition variables and flags the library sets, never with time.
#include <cpuexec.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

int failures = 0;

#define CHECK(cond)                                                                                    \
  do {                                                                                                 \
    if (!(cond)) {                                                                                     \
      std::fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, current_case, #cond); \
      failures++;                                                                                      \
    }                                                                                                  \
  } while (0)

const char *current_case = "";
void start_case(const char *name) {
  current_case = name;
  std::printf("case: %s\n", name);
  std::fflush(stdout);
}

// Counts how often each index of [0, n) was passed to a body.
struct coverage {
  explicit coverage(int64_t n) : hits(static_cast<size_t>(n)) {}
  void add(int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i++) hits[static_cast<size_t>(i)].fetch_add(1, std::memory_order_relaxed);
  }
  bool each_once() const {
    return std::all_of(hits.begin(), hits.end(), [](const std::atomic<int> &h) { return h.load() == 1; });
  }
  std::vector<std::atomic<int>> hits;
};

// A barrier for n threads (C++17 has none).
class barrier {
public:
  explicit barrier(int32_t n) : left_(n) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(m_);
    if (--left_ == 0) {
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [this] { return left_ == 0; });
  }

private:
  std::mutex m_;
  std::condition_variable cv_;
  int32_t left_;
};

// Distinct exception types, so the rethrown type is checked, not just "an exception".
struct caller_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct worker_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct nested_error : std::logic_error {
  using std::logic_error::logic_error;
};
struct impl_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
template <int I> struct numbered_error : std::runtime_error {
  numbered_error() : std::runtime_error("participant " + std::to_string(I)) {}
};
// Not derived from std::exception: the type travels, whatever it is.
struct plain_value {
  int value;
};

// Waits (yielding, no clock) until another participant's exception was caught.
void wait_until_cancelled() {
  while (!cpuexec::cancelled()) std::this_thread::yield();
}

// The pool runs a full loop right after a failed one.
void check_usable(cpuexec::executor_ref exec) {
  coverage cov(10000);
  cpuexec::parallel_for(exec, 10000, 7, [&](int64_t b, int64_t e) { cov.add(b, e); });
  CHECK(cov.each_once());
}

coverage *function_coverage = nullptr;
void count_range(int64_t b, int64_t e) { function_coverage->add(b, e); }

void adapters(cpuexec::executor_ref exec) {
  start_case("parallel_for: a lambda capturing by reference covers each index once");
  {
    coverage cov(100003);
    std::atomic<int64_t> sum{0};
    cpuexec::parallel_for(exec, 100003, 1000, [&](int64_t b, int64_t e) {
      cov.add(b, e);
      int64_t s = 0;
      for (int64_t i = b; i < e; i++) s += i;
      sum += s;
    });
    CHECK(cov.each_once());
    CHECK(sum.load() == 100002LL * 100003 / 2);
  }
  start_case("parallel_for: max_participants 1 runs every range on the caller");
  {
    coverage cov(5000);
    std::atomic<int> off_caller{0};
    const std::thread::id caller = std::this_thread::get_id();
    cpuexec::parallel_for(exec, 5000, 10, 1, [&](int64_t b, int64_t e) {
      cov.add(b, e);
      if (std::this_thread::get_id() != caller) off_caller++;
    });
    CHECK(cov.each_once());
    CHECK(off_caller.load() == 0);
  }
  start_case("parallel_for: a function object and a serial executor");
  {
    struct body {
      coverage *cov;
      void operator()(int64_t b, int64_t e) const { cov->add(b, e); }
    };
    coverage cov(777);
    cpuexec::parallel_for(cpuexec::executor_ref(), 777, 5, body{&cov});
    CHECK(cov.each_once());
  }
  start_case("parallel_for: a plain function as the body");
  {
    coverage cov(4321);
    function_coverage = &cov;
    cpuexec::parallel_for(exec, 4321, 3, count_range);
    cpuexec::parallel_for(exec, 0, 3, &count_range); // total 0 calls nothing
    CHECK(cov.each_once());
  }
  start_case("parallel_for_costed: three overloads and plan_parallel_for");
  {
    cpuexec::cost c;
    c.bytes_read = 8;
    c.bytes_written = 4;
    c.compute_cycles = 2;
    coverage a(200000), b(200000), d(200000);
    cpuexec::parallel_for_costed(exec, 200000, c, [&](int64_t lo, int64_t hi) { a.add(lo, hi); });
    cpuexec::parallel_for_costed(exec, 200000, c, 2, [&](int64_t lo, int64_t hi) { b.add(lo, hi); });
    cpuexec::plan_constraints limits;
    limits.max_participants = 1;
    std::atomic<int> off_caller{0};
    const std::thread::id caller = std::this_thread::get_id();
    cpuexec::parallel_for_costed(exec, 200000, c, limits, [&](int64_t lo, int64_t hi) {
      d.add(lo, hi);
      if (std::this_thread::get_id() != caller) off_caller++;
    });
    CHECK(a.each_once() && b.each_once() && d.each_once());
    CHECK(off_caller.load() == 0);
    cpuexec::plan p = cpuexec::plan_parallel_for(exec, 200000, c, limits);
    CHECK(p.participants == 1 && p.grain >= 1);
  }
  start_case("execute_ranges: a schedule runs blocks of whole multiples on the installed executor");
  {
    cpuexec::scope installed(exec);
    coverage cov(10000);
    std::atomic<int> misaligned{0}, calls{0};
    cpuexec::execute_ranges(10000, cpuexec::range_schedule().max_participants(0).block_multiple(16),
                            [&](int64_t b, int64_t e) {
                              cov.add(b, e);
                              calls++;
                              if (b % 16 != 0 || (e % 16 != 0 && e != 10000)) misaligned++;
                            });
    CHECK(cov.each_once());
    CHECK(misaligned.load() == 0);
    CHECK(calls.load() >= 1 && calls.load() <= exec.effective_threads());
  }
  start_case("execute_costed_ranges: the planner's blocks cover each index once");
  {
    cpuexec::scope installed(exec);
    cpuexec::cost c;
    c.compute_cycles = 100;
    coverage cov(50000);
    cpuexec::execute_costed_ranges(50000, c, cpuexec::plan_constraints{}, 8, [&](int64_t b, int64_t e) { cov.add(b, e); });
    CHECK(cov.each_once());
  }
  start_case("run_worker_jobs: each worker id once");
  {
    std::vector<std::atomic<int>> ids(5);
    std::atomic<int> wrong_count{0};
    cpuexec::run_worker_jobs(exec, 5, [&](int32_t id, int32_t n) {
      ids[static_cast<size_t>(id)]++;
      if (n != 5) wrong_count++;
    });
    CHECK(std::all_of(ids.begin(), ids.end(), [](const std::atomic<int> &h) { return h.load() == 1; }));
    CHECK(wrong_count.load() == 0);
  }
  start_case("range_executor: serial, installed and of(exec) run lambdas");
  {
    cpuexec::scope installed(exec);
    for (const cpuexec::range_executor &rx :
         {cpuexec::range_executor::serial(), cpuexec::range_executor::installed(), cpuexec::range_executor::of(exec)}) {
      coverage cov(3001);
      rx.run(3001, [&](int64_t b, int64_t e) { cov.add(b, e); });
      CHECK(cov.each_once());
    }
  }
  start_case("make_range_executor: seed 003's serial executor of 64-index ranges, as a lambda");
  {
    std::atomic<int> calls{0};
    auto by64 = cpuexec::make_range_executor([](int64_t count, cpuexec::range_callback cb) {
      for (int64_t s = 0; s < count; s += 64)
        if (!cb(s, std::min(count, s + 64))) return;
    });
    coverage cov(1000);
    by64.executor().run(1000, [&](int64_t b, int64_t e) {
      cov.add(b, e);
      calls++;
    });
    CHECK(cov.each_once());
    CHECK(calls.load() == 16);
  }
  start_case("make_range_executor: an implementation on its own threads");
  {
    auto threads = cpuexec::make_range_executor([](int64_t count, cpuexec::range_callback cb) {
      std::vector<std::thread> pool;
      for (int64_t id = 0; id < 3; id++)
        pool.emplace_back([=] { cb(count * id / 3, count * (id + 1) / 3); });
      for (std::thread &t : pool) t.join();
    });
    coverage cov(999);
    cpuexec::range_executor rx = threads;
    rx.run(999, [&](int64_t b, int64_t e) { cov.add(b, e); });
    CHECK(cov.each_once());
  }
  start_case("session: run installs the executor and returns the lambda's value");
  {
    cpuexec::session s(cpuexec::policy().num_threads(2).affinity_policy(cpuexec::affinity::none));
    cpuexec::executor_ref seen;
    int64_t total = s.run([&] {
      seen = cpuexec::current();
      std::atomic<int64_t> sum{0};
      cpuexec::parallel_for(cpuexec::current(), 1000, 10, [&](int64_t b, int64_t e) { sum += e - b; });
      return sum.load();
    });
    CHECK(total == 1000);
    CHECK(seen == s.executor() && seen);
    CHECK(!cpuexec::current() || cpuexec::current() != s.executor());
    int calls = 0;
    s.run([&] { calls++; });
    CHECK(calls == 1);
    // A reference result comes back by value (the scope it came from is gone).
    int copy = s.run([&]() -> int & { return calls; });
    calls++;
    CHECK(copy == 1 && calls == 2);
  }
}

void exceptions(cpuexec::executor_ref exec) {
  start_case("exception on the caller: rethrown once with its type and message");
  {
    int caught = 0;
    try {
      cpuexec::parallel_for(exec, 1000, 1, [&](int64_t, int64_t) {
        if (cpuexec::participant_index() == 0) throw caller_error("from the caller");
      });
    } catch (const caller_error &e) {
      caught++;
      CHECK(std::strcmp(e.what(), "from the caller") == 0);
    } catch (...) {
      CHECK(!"another exception type");
    }
    CHECK(caught == 1);
    check_usable(exec);
  }
  start_case("exception on a worker: no range starts after it is caught (counted)");
  {
    // Two bodies, each waiting for the other: the caller's body starts, the
    // worker's body throws once it has, the caller's body lets go once the
    // library has caught the exception. Nothing may start after that.
    std::atomic<int> started{0}, started_after{0};
    std::atomic<bool> caller_in{false}, observed{false};
    int caught = 0;
    try {
      cpuexec::parallel_for(exec, 2000, 1, 2, [&](int64_t, int64_t) {
        started++;
        if (observed.load()) started_after++;
        if (cpuexec::participant_index() == 1) {
          while (!caller_in.load()) std::this_thread::yield();
          throw worker_error("from worker 1");
        }
        caller_in = true;
        wait_until_cancelled();
        observed = true;
      });
    } catch (const worker_error &e) {
      caught++;
      CHECK(std::string(e.what()) == "from worker 1");
    } catch (...) {
      CHECK(!"another exception type");
    }
    CHECK(caught == 1);
    CHECK(observed.load());
    CHECK(started.load() == 2);
    CHECK(started_after.load() == 0);
    check_usable(exec);
  }
  start_case("exceptions on several participants at once: one is rethrown, once");
  {
    const int32_t n = exec.effective_threads();
    barrier all(n);
    std::atomic<int> started{0}, thrown{0};
    int caught = 0;
    std::string message;
    try {
      cpuexec::parallel_for(exec, 100 * n, 1, [&](int64_t, int64_t) {
        started++;
        all.arrive_and_wait();
        thrown++;
        switch (cpuexec::participant_index()) {
        case 0: throw numbered_error<0>();
        case 1: throw numbered_error<1>();
        default: throw numbered_error<2>();
        }
      });
    } catch (const numbered_error<0> &e) {
      caught++;
      message = e.what();
      CHECK(message == "participant 0");
    } catch (const numbered_error<1> &e) {
      caught++;
      message = e.what();
      CHECK(message == "participant 1");
    } catch (const numbered_error<2> &e) {
      caught++;
      message = e.what();
      CHECK(message.rfind("participant ", 0) == 0);
    }
    CHECK(caught == 1);
    CHECK(started.load() == n);
    CHECK(thrown.load() == n);
    check_usable(exec);
  }
  start_case("exception from a nested inline call on a worker: rethrown through both calls");
  {
    std::atomic<int> inner_calls{0}, inner_elsewhere{0};
    int caught = 0;
    try {
      cpuexec::parallel_for(exec, 2, 1, 2, [&](int64_t, int64_t) {
        if (cpuexec::participant_index() == 1) {
          const std::thread::id me = std::this_thread::get_id();
          cpuexec::parallel_for(cpuexec::current(), 10, 1, [&](int64_t b, int64_t e) {
            inner_calls++;
            if (std::this_thread::get_id() != me) inner_elsewhere++;
            if (b <= 5 && 5 < e) throw nested_error("inner index 5");
          });
          CHECK(!"the nested call returned");
        }
        wait_until_cancelled();
      });
    } catch (const nested_error &e) {
      caught++;
      CHECK(std::string(e.what()) == "inner index 5");
    } catch (...) {
      CHECK(!"another exception type");
    }
    CHECK(caught == 1);
    CHECK(inner_calls.load() >= 1);
    CHECK(inner_elsewhere.load() == 0);
    check_usable(exec);
  }
  start_case("exception that is not a std::exception: its type and value travel");
  {
    int value = 0;
    try {
      cpuexec::parallel_for(exec, 100, 1, [&](int64_t b, int64_t e) {
        if (b <= 42 && 42 < e) throw plain_value{42};
      });
    } catch (const plain_value &v) {
      value = v.value;
    }
    CHECK(value == 42);
    check_usable(exec);
  }
  start_case("exceptions through every other adapter keep their type");
  {
    cpuexec::scope installed(exec);
    cpuexec::cost c;
    c.compute_cycles = 1000;
    int caught = 0;
    try {
      cpuexec::parallel_for_costed(exec, 10000, c, [&](int64_t b, int64_t e) {
        if (b <= 5000 && 5000 < e) throw worker_error("costed");
      });
    } catch (const worker_error &) {
      caught++;
    }
    try {
      cpuexec::execute_ranges(10000, cpuexec::range_schedule().max_participants(0), [&](int64_t b, int64_t e) {
        if (b <= 9999 && 9999 < e) throw worker_error("ranges");
      });
    } catch (const worker_error &) {
      caught++;
    }
    try {
      cpuexec::execute_costed_ranges(10000, c, cpuexec::plan_constraints{}, 1, [&](int64_t b, int64_t) {
        if (b == 0) throw worker_error("costed ranges");
      });
    } catch (const worker_error &) {
      caught++;
    }
    try {
      cpuexec::run_worker_jobs(exec, 0, [&](int32_t id, int32_t) {
        if (id == 0) throw worker_error("job");
      });
    } catch (const worker_error &) {
      caught++;
    }
    try {
      cpuexec::session s;
      s.run([] { throw caller_error("session"); });
    } catch (const caller_error &) {
      caught++;
    }
    CHECK(caught == 5);
    CHECK(cpuexec::current() == exec); // the session's scope was left on the way out
    check_usable(exec);
  }
  start_case("exception from a range executor: the kernel's, on the executor's own threads");
  {
    auto threads = cpuexec::make_range_executor([](int64_t count, cpuexec::range_callback cb) {
      std::vector<std::thread> pool;
      for (int64_t id = 0; id < 3; id++)
        pool.emplace_back([=] { cb(count * id / 3, count * (id + 1) / 3); });
      for (std::thread &t : pool) t.join();
    });
    int caught = 0;
    try {
      threads.executor().run(300, [&](int64_t b, int64_t) {
        if (b == 100) throw worker_error("foreign thread");
      });
    } catch (const worker_error &e) {
      caught++;
      CHECK(std::string(e.what()) == "foreign thread");
    }
    CHECK(caught == 1);
  }
  start_case("exception from a range executor: of(exec), and the implementation's own");
  {
    int caught = 0;
    try {
      cpuexec::range_executor::of(exec).run(1000, [&](int64_t b, int64_t) {
        if (b == 0) throw nested_error("of(exec)");
      });
    } catch (const nested_error &) {
      caught++;
    }
    std::atomic<int> ranges{0};
    auto throwing = cpuexec::make_range_executor([](int64_t count, cpuexec::range_callback cb) {
      cb(0, count / 2);
      throw impl_error("the executor's own failure");
    });
    try {
      throwing.executor().run(100, [&](int64_t, int64_t) { ranges++; });
    } catch (const impl_error &e) {
      caught++;
      CHECK(std::string(e.what()) == "the executor's own failure");
    }
    CHECK(caught == 2);
    CHECK(ranges.load() == 1);
    // Called from C code, the implementation's exception becomes a code.
    cpuexec_range_executor c_view = throwing.executor().c_executor();
    int rc = cpuexec_range_executor_run(&c_view, 100, nullptr, [](void *, int64_t, int64_t) { return 0; });
    CHECK(rc == CPUEXEC_ECALLBACK);
    check_usable(exec);
  }
  start_case("cancelled(): false outside bodies and in bodies of a call that did not fail");
  {
    CHECK(!cpuexec::cancelled());
    std::atomic<int> seen{0};
    cpuexec::parallel_for(exec, 1000, 1, [&](int64_t, int64_t) {
      if (cpuexec::cancelled()) seen++;
    });
    CHECK(seen.load() == 0);
    CHECK(!cpuexec::cancelled());
  }
}

void errors_and_values() {
  start_case("library errors: cpuexec::error with the code, the message and std::error_code");
  {
    bool thrown = false;
    try {
      cpuexec::parallel_for(cpuexec::executor_ref(), 10, 0, [](int64_t, int64_t) {});
    } catch (const cpuexec::error &e) {
      thrown = true;
      CHECK(e.value() == CPUEXEC_EINVAL);
      CHECK(e.code() == cpuexec::errc::einval);
      CHECK(e.code() == std::errc::invalid_argument);
      CHECK(std::string(e.code().category().name()) == "cpuexec");
      CHECK(e.code().message() == "invalid argument");
      CHECK(std::string(e.message()).find("grain") != std::string::npos);
      CHECK(std::string(e.what()).find("grain") != std::string::npos);
    }
    CHECK(thrown);
    thrown = false;
    try {
      (void)cpuexec::policy::parse("num_threads=-3");
    } catch (const cpuexec::error &e) {
      thrown = true;
      CHECK(e.code() == cpuexec::errc::einval);
      CHECK(std::string(e.message()).find("num_threads") != std::string::npos);
    }
    CHECK(thrown);
    thrown = false;
    try {
      cpuexec::parallel_for(cpuexec::executor_ref(), 10, 1, -1, [](int64_t, int64_t) {});
    } catch (const cpuexec::error &e) {
      thrown = true;
      CHECK(std::string(e.message()).find("max_participants: -1") != std::string::npos);
    }
    CHECK(thrown);
    thrown = false;
    try {
      cpuexec::scope s{cpuexec::executor_ref()};
    } catch (const cpuexec::error &e) {
      thrown = true;
      CHECK(e.code() == cpuexec::errc::einval);
    }
    CHECK(thrown);
    std::error_code ec = cpuexec::errc::ecapacity;
    CHECK(ec.value() == CPUEXEC_ECAPACITY && ec.category() == cpuexec::error_category());
  }
  start_case("policy: builder, to_string, parse round trip, equality");
  {
    using namespace std::chrono_literals;
    cpuexec::policy p = cpuexec::policy().num_threads(4).spin_duration(50us).cpu_set({0, 2, 3}).allow_nested_parallelism(true);
    CHECK(p.num_threads() == 4);
    CHECK(p.spin_policy() == cpuexec::spin::fixed_duration && p.spin_budget() == 50000);
    CHECK(p.affinity_policy() == cpuexec::affinity::explicit_cpu_set);
    CHECK((p.cpu_set() == std::vector<int32_t>{0, 2, 3}));
    std::string text = p.to_string();
    CHECK(text == "num_threads=4,spin_policy=fixed_duration,spin_budget=50us,affinity_policy=explicit,"
                  "allow_nested_parallelism=true,inherit_fp_environment=false,participation=take_over,cpu_set=0,2-3");
    CHECK(cpuexec::policy().inherit_fp_environment(true).inherit_fp_environment());
    CHECK(cpuexec::policy().inherit_fp_environment(true) != cpuexec::policy());
    cpuexec::policy strict = cpuexec::policy().participation_rule(cpuexec::participation::every_participant);
    CHECK(strict.participation_rule() == cpuexec::participation::every_participant);
    CHECK(strict != cpuexec::policy());
    CHECK(strict.to_string().find(",participation=every_participant,") != std::string::npos);
    CHECK(cpuexec::policy::parse(strict.to_string()) == strict);
    cpuexec::policy alone = cpuexec::policy().node_budget_scope(cpuexec::node_budget::off);
    CHECK(alone.node_budget_scope() == cpuexec::node_budget::off);
    CHECK(alone != cpuexec::policy());
    CHECK(alone.to_string().find(",node_budget=off,cpu_set=") != std::string::npos);
    CHECK(cpuexec::policy::parse(alone.to_string()) == alone);
    CHECK(cpuexec::policy().node_budget_scope() == cpuexec::node_budget::environment);
    CHECK(cpuexec::policy::parse(text) == p);
    CHECK(cpuexec::policy::parse("") == cpuexec::policy());
    CHECK(cpuexec::policy().spin_iterations(10) != cpuexec::policy());
  }
  start_case("executor: participation_rule(every_participant): 8 trivial blocks run on both threads, every call");
  {
    // The seed's check without a rendezvous: what the policy asks for is what
    // each region's callbacks observe.
    cpuexec::executor strict(cpuexec::policy().num_threads(2).affinity_policy(cpuexec::affinity::none).spin_iterations(78)
                                 .participation_rule(cpuexec::participation::every_participant));
    int short_calls = 0;
    for (int r = 0; r < 500; r++) {
      std::atomic<bool> seen[2] = {{false}, {false}};
      cpuexec::parallel_for(strict, 8, 1, [&](int64_t, int64_t) { seen[cpuexec_participant_index()] = true; });
      if (!seen[0] || !seen[1]) short_calls++;
    }
    CHECK(short_calls == 0);
  }
  start_case("executor: move-only lease, released exactly once");
  {
    cpuexec_registry *reg = cpuexec_registry_default();
    // A policy no other case uses, so its pool is this case's alone.
    cpuexec::policy p = cpuexec::policy().num_threads(2).affinity_policy(cpuexec::affinity::none).spin_iterations(77);
    int32_t before = cpuexec_registry_live_pools(reg);
    cpuexec::executor a(p);
    CHECK(a.get() != nullptr && a.effective_threads() == 2 && a.id() != 0);
    CHECK(cpuexec_registry_live_pools(reg) == before + 1);
    uint64_t id = a.id();
    cpuexec::executor b(std::move(a));
    CHECK(a.get() == nullptr && b.id() == id); // NOLINT(bugprone-use-after-move): checking the moved-from state
    a = std::move(b);
    CHECK(a.id() == id && b.get() == nullptr);
    {
      cpuexec::executor c(std::move(a));
      check_usable(c);
    }
    CHECK(cpuexec_registry_live_pools(reg) == before);
    a.reset();
    b.reset();
    CHECK(cpuexec_registry_live_pools(reg) == before);
    cpuexec::resolved r(p);
    CHECK(r.effective_threads() == 2 && !r.sharing_key().empty() && !r.describe().empty());
  }
}

// A pool of the application's own: index 0 on the calling thread, every
// other index on a thread started for it; started ranges all finish before
// it returns. `calls` counts its runs.
struct thread_per_index_pool {
  std::atomic<int> *calls;
  void operator()(int64_t count, cpuexec::range_callback cb) const {
    calls->fetch_add(1);
    std::vector<std::thread> threads;
    for (int64_t i = 1; i < count; i++) threads.emplace_back([cb, i] { cb(i, i + 1); });
    cb(0, 1);
    for (std::thread &t : threads) t.join();
  }
};

void foreign_pool() {
  std::atomic<int> calls{0};
  cpuexec::foreign_executor<thread_per_index_pool> pool(3, thread_per_index_pool{&calls});
  start_case("foreign_executor: a C++ pool is an executor of its thread count");
  CHECK(pool.effective_threads() == 3);
  CHECK(pool.get() != nullptr && pool.ref().get() == pool.get());
  {
    coverage cov(1000);
    std::atomic<int> wrong_count{0};
    cpuexec::parallel_for(pool, 1000, 10, [&](int64_t b, int64_t e) {
      if (cpuexec::participant_count() != 3) wrong_count.fetch_add(1);
      cov.add(b, e);
    });
    CHECK(cov.each_once());
    CHECK(wrong_count.load() == 0);
    CHECK(calls.load() == 1);
  }
  // The same suites as the built-in pool: every adapter, every exception rule.
  adapters(pool);
  exceptions(pool);
  CHECK(calls.load() > 1);

  start_case("foreign_executor: an exception from the pool itself reaches the caller with its type");
  {
    auto throwing = cpuexec::make_foreign_executor(2, [](int64_t, cpuexec::range_callback) {
      throw impl_error("the pool failed");
    });
    bool caught = false;
    try {
      cpuexec::parallel_for(throwing, 100, 1, [](int64_t, int64_t) {});
    } catch (const impl_error &e) {
      caught = std::string(e.what()) == "the pool failed";
    }
    CHECK(caught);
  }

  start_case("foreign_executor: a scope installs it; nested loops run inline");
  {
    std::atomic<int> nested_wrong{0};
    cpuexec::scope s(pool);
    CHECK(cpuexec::current() == pool.ref());
    cpuexec::parallel_for(cpuexec::current(), 6, 1, [&](int64_t, int64_t) {
      cpuexec::parallel_for(cpuexec::current(), 4, 1, [&](int64_t, int64_t) {
        if (cpuexec::participant_count() != 1) nested_wrong.fetch_add(1);
      });
    });
    CHECK(nested_wrong.load() == 0);
  }

  start_case("foreign_executor: effective_threads below 1 is cpuexec::error naming it");
  {
    bool thrown = false;
    try {
      auto bad = cpuexec::make_foreign_executor(0, thread_per_index_pool{&calls});
      (void)bad;
    } catch (const cpuexec::error &e) {
      thrown = e.code() == cpuexec::errc::einval && std::string(e.message()).find("effective_threads") != std::string::npos;
    }
    CHECK(thrown);
  }
}

// Task groups: every task once, the first exception rethrown by wait()
// once, a group reusable after it, tasks run from tasks, wait() from inside
// its own task is CPUEXEC_EBUSY.
void tasks(cpuexec::executor_ref exec) {
  start_case("task_group: every task once");
  {
    coverage c(3000);
    cpuexec::task_group g(exec);
    for (int64_t i = 0; i < 3000; i++) g.run([&c, i] { c.add(i, i + 1); });
    g.wait();
    CHECK(c.each_once());
  }
  start_case("task_group: the first exception reaches wait(), once; the group is reusable");
  {
    cpuexec::task_group g(exec, cpuexec::task_group_options{1, 16});
    std::atomic<int> ran{0};
    for (int i = 0; i < 200; i++)
      g.run([&ran, i] {
        ran++;
        if (i == 50) throw std::runtime_error("task 50");
      });
    bool thrown = false;
    try {
      g.wait();
    } catch (const std::runtime_error &e) {
      thrown = std::strcmp(e.what(), "task 50") == 0;
    }
    CHECK(thrown);
    CHECK(ran.load() >= 1 && ran.load() <= 200); /* tasks after the failure may be dropped, in any order */
    coverage c(100);
    for (int64_t i = 0; i < 100; i++) g.run([&c, i] { c.add(i, i + 1); });
    g.wait();
    CHECK(c.each_once());
  }
  start_case("task_group: tasks run tasks; wait() inside its own task throws");
  {
    cpuexec::task_group g(exec);
    std::atomic<int> ran{0}, busy{0};
    g.run([&] {
      for (int i = 0; i < 100; i++) g.run([&ran] { ran++; });
      try {
        g.wait();
      } catch (const cpuexec::error &e) {
        if (e.code().value() == CPUEXEC_EBUSY) busy++;
      }
    });
    g.wait();
    CHECK(ran.load() == 100);
    CHECK(busy.load() == 1);
  }
}

} // namespace

void kernel_executors() {
  start_case("a kernel that requires an executor throws without one, and gets the installed one");
  bool threw = false;
  try {
    (void)cpuexec::kernel_executor("gemm");
  } catch (const cpuexec::error &e) {
    threw = e.code().value() == CPUEXEC_ESTATE && std::strstr(e.what(), "kernel \"gemm\"") != nullptr;
  }
  CHECK(threw);
  CHECK(cpuexec::kernel_executor("gemm", cpuexec::executor_need::supported));
  cpuexec::executor exec(cpuexec::policy().num_threads(2).affinity_policy(cpuexec::affinity::none));
  cpuexec::scope installed(exec);
  CHECK(cpuexec::kernel_executor("gemm") == cpuexec::executor_ref(exec));
}

// range_executor::run_all: every index once whatever the executor does;
// the executor's error in the report, an exception of the body rethrown.
void run_all_never_loses_an_index(cpuexec::executor_ref exec) {
  start_case("run_all: a libcpuexec executor runs every index once and reports nothing");
  {
    coverage cov(5000);
    cpuexec::run_all_report r =
        cpuexec::range_executor::of(exec).run_all(5000, [&](int64_t b, int64_t e) { cov.add(b, e); });
    CHECK(cov.each_once());
    CHECK(r.error == 0 && r.caller_indices == 0);
  }
  start_case("run_all: an executor that fails part-way leaves the rest to the caller");
  {
    auto half = cpuexec::make_range_executor([](int64_t count, cpuexec::range_callback cb) -> int {
      for (int64_t s = 0; s < count / 2; s += 10)
        if (!cb(s, std::min(count / 2, s + 10))) return 0;
      return CPUEXEC_ENOMEM; /* as if its job record could not be allocated */
    });
    coverage cov(1000);
    cpuexec::run_all_report r = half.executor().run_all(1000, [&](int64_t b, int64_t e) { cov.add(b, e); });
    CHECK(cov.each_once());
    CHECK(r.error == CPUEXEC_ENOMEM);
    CHECK(r.caller_indices == 500);
  }
  start_case("run_all: a body's exception stops the call and is rethrown with its type");
  {
    coverage cov(1000);
    bool threw = false;
    try {
      cpuexec::range_executor::serial().run_all(1000, [&](int64_t b, int64_t e) {
        cov.add(b, e);
        throw std::out_of_range("body");
      });
    } catch (const std::out_of_range &) {
      threw = true;
    }
    CHECK(threw);
    CHECK(cov.each_once()); /* the serial executor's one range ran, nothing ran again */
  }
}

// cpuexec::counters: the C struct's fields; parallel_regions says what went parallel.
void counters_say_what_went_parallel() {
  start_case("counters: every region of a strict 2-thread executor went parallel, and says so");
  cpuexec::executor exec(cpuexec::policy().num_threads(2).affinity_policy(cpuexec::affinity::none).participation_rule(
      cpuexec::participation::every_participant));
  cpuexec::counters before = cpuexec::counters_of(exec);
  CHECK(before.dispatches == 0 && before.parallel_regions == 0); /* off: all zero */
  cpuexec::enable_counters(exec);
  for (int i = 0; i < 50; i++) cpuexec::parallel_for(exec, 8, 1, [](int64_t, int64_t) {});
  cpuexec::parallel_for(exec, 1, 1, [](int64_t, int64_t) {}); /* one participant: not a region of workers */
  cpuexec::counters c = cpuexec::counters_of(exec);
  CHECK(c.dispatches == 50);
  CHECK(c.parallel_regions == 50);
  CHECK(c.participants_run == 100);
  CHECK(c.limited_inline == 1);
  bool threw = false;
  try {
    (void)cpuexec::counters_of(cpuexec::executor_ref());
  } catch (const cpuexec::error &e) {
    threw = e.code().value() == CPUEXEC_EINVAL;
  }
  CHECK(threw);
}

int main() {
  errors_and_values();
  kernel_executors();
  cpuexec::executor exec(cpuexec::policy().num_threads(3).affinity_policy(cpuexec::affinity::none));
  start_case("the test executor has 3 participants");
  CHECK(exec.effective_threads() == 3);
  if (exec.effective_threads() != 3) return 1;
  adapters(exec);
  run_all_never_loses_an_index(exec);
  counters_say_what_went_parallel();
  exceptions(exec);
  foreign_pool();
  tasks(exec);
  tasks(cpuexec::executor_ref());
  if (failures != 0) {
    std::fprintf(stderr, "test_cxx: %d checks failed\n", failures);
    return 1;
  }
  std::printf("test_cxx: all checks passed\n");
  return 0;
}
