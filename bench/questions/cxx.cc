// Cost of cpuexec.hpp over the C call it wraps: cpuexec::parallel_for with a
// lambda next to cpuexec_parallel_for with a C callback, same executor, same
// work, interleaved repetitions, median ns per call and the ratio. The
// wrapper adds, per range, a stop check and two thread-local writes, and
// per call one state on the stack. Usage: bench_cxx [--mode=smoke]
// (`make bench` runs it once after the table; smoke: tiny counts, results only).
#include <cpuexec.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

struct counter {
  std::atomic<int64_t> indices{0};
};

int c_body(void *ctx, int64_t b, int64_t e) {
  static_cast<counter *>(ctx)->indices.fetch_add(e - b, std::memory_order_relaxed);
  return 0;
}

double now_ns() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

struct shape {
  const char *name;
  bool serial; // the serial executor: no threads, so the figure is the wrapper's own cost
  int64_t total, grain;
};

} // namespace

int main(int argc, char **argv) {
  bool smoke = argc > 1 && std::strcmp(argv[1], "--mode=smoke") == 0;
  const long calls = smoke ? 100 : 5000;
  const int repeats = smoke ? 1 : 7;
  cpuexec::executor exec(cpuexec::policy().num_threads(2).affinity_policy(cpuexec::affinity::none));
  const shape shapes[] = {{"serial, 64 ranges", true, 64, 1},
                          {"pool, 2 ranges", false, 2, 1},
                          {"pool, 1024 indices/16", false, 1024, 16}};
  double load[3] = {0, 0, 0};
  if (std::FILE *f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
    std::fclose(f);
  }
  std::printf("bench_cxx: %d participants, %ld calls x %d repetitions, load average %.2f %.2f %.2f\n",
              exec.effective_threads(), calls, repeats, load[0], load[1], load[2]);
  for (const shape &s : shapes) {
    std::vector<double> c_ns, cxx_ns;
    counter c_count, cxx_count;
    cpuexec::executor_ref on = s.serial ? cpuexec::executor_ref() : cpuexec::executor_ref(exec);
    for (int r = 0; r < repeats; r++) {
      double t0 = now_ns();
      for (long i = 0; i < calls; i++)
        if (cpuexec_parallel_for(on.get(), s.total, s.grain, &c_count, c_body, 0) != 0) return 1;
      double t1 = now_ns();
      for (long i = 0; i < calls; i++)
        cpuexec::parallel_for(on, s.total, s.grain, [&](int64_t b, int64_t e) {
          cxx_count.indices.fetch_add(e - b, std::memory_order_relaxed);
        });
      double t2 = now_ns();
      c_ns.push_back((t1 - t0) / static_cast<double>(calls));
      cxx_ns.push_back((t2 - t1) / static_cast<double>(calls));
    }
    const int64_t expected = s.total * calls * repeats;
    if (c_count.indices.load() != expected || cxx_count.indices.load() != expected) {
      std::fprintf(stderr, "bench_cxx: %s: indices %lld (C) and %lld (C++), expected %lld\n", s.name,
                   static_cast<long long>(c_count.indices.load()), static_cast<long long>(cxx_count.indices.load()),
                   static_cast<long long>(expected));
      return 1;
    }
    std::sort(c_ns.begin(), c_ns.end());
    std::sort(cxx_ns.begin(), cxx_ns.end());
    double c = c_ns[c_ns.size() / 2], cxx = cxx_ns[cxx_ns.size() / 2];
    std::printf("  %-24s C %9.1f ns/call   C++ %9.1f ns/call   C++/C %.2f\n", s.name, c, cxx, cxx / c);
  }
  return 0;
}
