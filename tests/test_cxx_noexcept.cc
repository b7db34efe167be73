// cpuexec.hpp built with -fno-exceptions: the lambdas run, and a library
// failure prints its message and calls std::terminate (checked in a child).
#include <cpuexec.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#ifdef _WIN32
#include <cstdlib>
#define WIN32_LEAN_AND_MEAN
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#else
#include <sys/wait.h>
#include <unistd.h>
#endif

#if CPUEXEC_HPP_EXCEPTIONS
#error "this test must be compiled with -fno-exceptions"
#endif

namespace {

int failures = 0;
#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                                     \
    }                                                                                 \
  } while (0)

#ifdef _WIN32
// No fork: this program runs itself with "--fail" (stderr to a file) and the
// child's std::terminate is abort(), exit status 3 in the mingw runtime.
std::string child_failure(bool *aborted) {
  char self[4096];
  if (GetModuleFileNameA(NULL, self, sizeof self) == 0) return "";
  char err_path[4096];
  std::snprintf(err_path, sizeof err_path, "%s.stderr", self);
  std::string cmd = std::string("\"\"") + self + "\" --fail 2>\"" + err_path + "\"\"";
  int status = std::system(cmd.c_str());
  *aborted = status == 3;
  std::string out;
  if (FILE *f = std::fopen(err_path, "r")) {
    char buf[512];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    std::fclose(f);
  }
  std::remove(err_path);
  return out;
}
#else
// Runs a failing call in a child; returns its stderr and whether it died of SIGABRT.
std::string child_failure(bool *aborted) {
  int fds[2];
  if (pipe(fds) != 0) return "";
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    // grain 0 is rejected before anything runs.
    cpuexec::parallel_for(cpuexec::executor_ref(), 10, 0, [](int64_t, int64_t) {});
    _exit(0); // not reached when the failure terminates
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  *aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
  return out;
}
#endif

} // namespace

int main(int argc, char **argv) {
  if (argc == 2 && std::strcmp(argv[1], "--fail") == 0) {
    // grain 0 is rejected before anything runs.
    cpuexec::parallel_for(cpuexec::executor_ref(), 10, 0, [](int64_t, int64_t) {});
    return 0; // not reached when the failure terminates
  }
  // Before any pool exists, so the child is forked from a plain process.
  bool aborted = false;
  std::string message = child_failure(&aborted);
  CHECK(aborted);
  CHECK(message.find("CPUEXEC_EINVAL") != std::string::npos);
  CHECK(message.find("grain") != std::string::npos);

  cpuexec::session s(cpuexec::policy().num_threads(2).affinity_policy(cpuexec::affinity::none));
  int64_t sum = s.run([&] {
    std::atomic<int64_t> total{0};
    cpuexec::parallel_for(cpuexec::current(), 10000, 64, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) total += i;
    });
    return total.load();
  });
  CHECK(sum == 9999LL * 10000 / 2);
  std::atomic<int> jobs{0};
  cpuexec::run_worker_jobs(s.executor(), 4, [&](int32_t, int32_t) { jobs++; });
  CHECK(jobs.load() == 4);
  if (failures != 0) return 1;
  std::printf("test_cxx_noexcept: all checks passed (the failure terminated with: %s)\n", message.c_str());
  return 0;
}
