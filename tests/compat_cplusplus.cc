// The compat header from C++: it compiles, the names have C linkage (this
// links against the C library), and a kernel written in C++ runs through it.
#include <atomic>
#include <cstdio>

#include <cpuexec.h>

#include <cpuexec/compat/parallel_for.h>

namespace {

struct Sum {
  std::atomic<long long> total{0};
};

void add_range(void *ctx, int64_t begin, int64_t end) {
  auto *sum = static_cast<Sum *>(ctx);
  for (int64_t i = begin; i < end; i++) sum->total += i;
}

}  // namespace

int main() {
  Sum sum;
  int rc = ParallelFor(1000, 7, &sum, add_range);
  if (rc != 0 || sum.total != 999LL * 1000 / 2) {
    std::fprintf(stderr, "compat_cplusplus: rc %d, sum %lld\n", rc, sum.total.load());
    return 1;
  }
  if (ParallelForThreadCount() < 1) return 1;
  std::printf("ParallelFor from C++: sum %lld over %u threads\n", sum.total.load(), ParallelForThreadCount());
  return 0;
}
