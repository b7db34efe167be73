// The C++ interface through the CMake package: a session, a lambda loop, an
// exception carried back to the caller.
#include <cpuexec.hpp>

#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <vector>

int main() {
  const int64_t n = 1 << 16;
  std::vector<float> x(n, 1.0f), y(n, 2.0f);
  cpuexec::session session(cpuexec::policy().num_threads(2).affinity_policy(cpuexec::affinity::none));
  session.run([&] {
    cpuexec::parallel_for(cpuexec::current(), n, 1024, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) y[i] += 3.0f * x[i];
    });
  });
  for (float v : y)
    if (v != 5.0f) return 1;
  try {
    cpuexec::parallel_for(session.executor(), n, 1024, [&](int64_t b, int64_t) {
      if (b == 0) throw std::runtime_error("stop");
    });
    return 1;
  } catch (const std::runtime_error &e) {
    std::printf("app: y = 5 everywhere; caught \"%s\"; %d participants\n", e.what(),
                session.executor().effective_threads());
  }
  return 0;
}
