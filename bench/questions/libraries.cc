// Other libraries' parallel work on libcpuexec against the same work on the
// libraries' own threads, as rows of `make bench`'s table (bench/run.sh
// protocol). One source built twice: with libcpuexec's adapters (rows
// "libcpuexec": FFTW's threads callback cpuexec_fftw_parallel_loop, OpenCV's
// cpuexec/opencv.hpp backend, in a session of BENCH_PARTICIPANTS threads) and
// with the libraries' own threading (-DBENCH_OWN_THREADS: rows "fftw-threads",
// FFTW's pthreads; "opencv-tbb", OpenCV's default backend), each in its own
// process. Every metric is us per operation (lower is better):
//   fftw_c2c_64k, fftw_r2c_512x512         one transform at 2 threads
//   cv_blur_720p, cv_resize_720p, cv_cvtcolor_720p   one call at 2 threads
//   *_2callers   the same work from two threads at once, ns per operation
//                of the pair (wall time / operations): with the libraries'
//                own pools the two callers' threads oversubscribe the cores;
//                on libcpuexec both sessions share one pool.
// usage: libraries [--mode=round|smoke] [--quick] [--delay-len=N (ignored)].
// Exits 1 when a result differs from the serial one (FFTW: beyond rounding;
// OpenCV: any byte).
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include <fftw3.h>
#include <opencv2/imgproc.hpp>

#include <cpuexec.h>
#include <cpuexec/compat/fftw.h>
#include <cpuexec/opencv.hpp>

#include "../clock.h"

#ifdef BENCH_OWN_THREADS
static const char *const fftw_backend = "fftw-threads";
static const char *const cv_backend = "opencv-tbb";
#else
static const char *const fftw_backend = "libcpuexec";
static const char *const cv_backend = "libcpuexec";
#endif

namespace {

int threads = 2;
bool smoke = false, quick = false;
int failed = 0;

// Runs f inside a session of `threads` threads (ours) or as it is (own).
void in_session(const std::function<void()> &f) {
#ifdef BENCH_OWN_THREADS
  f();
#else
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = threads;
  cpuexec_session *s = nullptr;
  if (cpuexec_session_create(&p, &s) != 0) {
    std::printf("FAIL libcpuexec: no session of %d threads: %s\n", threads, cpuexec_error_message());
    std::exit(1);
  }
  auto call = [](void *ctx) -> int {
    (*static_cast<const std::function<void()> *>(ctx))();
    return 0;
  };
  cpuexec_session_run(s, const_cast<std::function<void()> *>(&f), call);
  cpuexec_session_destroy(s);
#endif
}

// Samples of op (one row): a warm-up sizes blocks of calls to ~budget/blocks.
void sample(const char *backend, const char *metric, const std::function<void()> &op, double per_op = 1) {
  const double budget_ns = smoke ? 0 : (quick ? 20e6 : 80e6);
  const int blocks = smoke ? 1 : (quick ? 3 : 5);
  double start = bench_now_ns();
  long calls = 0;
  while (bench_now_ns() - start < budget_ns / blocks || calls < 2) {
    op();
    calls++;
  }
  for (int b = 0; b < blocks; b++) {
    double t0 = bench_now_ns();
    for (long c = 0; c < calls; c++) op();
    double ns = (bench_now_ns() - t0) / ((double)calls * per_op);
    if (!smoke) std::printf("M %s %s us %.1f\n", backend, metric, ns / 1000);
  }
}

// The same op from two threads at once, each running `calls` of its own.
void sample_pair(const char *backend, const char *metric, const std::function<void(int)> &op) {
  const int blocks = smoke ? 1 : (quick ? 3 : 5);
  long calls = 1;
  double start = bench_now_ns();
  op(0);
  double one = bench_now_ns() - start;
  if (!smoke) calls = (long)((quick ? 20e6 : 80e6) / blocks / (one > 1 ? one : 1)) + 2;
  for (int b = 0; b < blocks; b++) {
    std::atomic<int> ready{0};
    double t0 = 0;
    auto body = [&](int k) {
      in_session([&] {
        ready++;
        while (ready.load() < 2) std::this_thread::yield();
        if (k == 0) t0 = bench_now_ns();
        for (long c = 0; c < calls; c++) op(k);
      });
    };
    std::thread other(body, 1);
    body(0);
    other.join();
    double ns = (bench_now_ns() - t0) / (2.0 * (double)calls);
    if (!smoke) std::printf("M %s %s us %.1f\n", backend, metric, ns / 1000);
  }
}

// ---- FFTW -----------------------------------------------------------------------
struct fft_case {
  const char *metric;
  int rank, n0, n1;
  bool real;
};

void fftw_rows() {
  fftw_init_threads();
#ifndef BENCH_OWN_THREADS
  fftw_threads_set_callback(cpuexec_fftw_parallel_loop, nullptr);
#endif
  const fft_case cases[] = {{"fftw_c2c_64k", 1, 65536, 1, false}, {"fftw_r2c_512x512", 2, 512, 512, true}};
  for (const fft_case &c : cases) {
    int n[2] = {c.n0, c.n1};
    size_t points = (size_t)c.n0 * (size_t)c.n1;
    size_t in_bytes = c.real ? points * sizeof(double) : points * sizeof(fftw_complex);
    size_t out_bytes = c.real ? (size_t)c.n0 * (size_t)(c.n1 / 2 + 1) * sizeof(fftw_complex) : in_bytes;
    if (c.rank == 1) out_bytes = c.real ? (size_t)(c.n0 / 2 + 1) * sizeof(fftw_complex) : in_bytes;
    std::vector<void *> in(3), out(3);
    for (int k = 0; k < 3; k++) {
      in[k] = fftw_malloc(in_bytes);
      out[k] = fftw_malloc(out_bytes);
      double *d = static_cast<double *>(in[k]);
      for (size_t i = 0; i < in_bytes / sizeof(double); i++) d[i] = std::sin(0.001 * (double)i) + 0.25;
    }
    fftw_plan_with_nthreads(1);
    fftw_plan serial = c.real ? fftw_plan_dft_r2c(c.rank, n, (double *)in[2], (fftw_complex *)out[2], FFTW_ESTIMATE)
                              : fftw_plan_dft(c.rank, n, (fftw_complex *)in[2], (fftw_complex *)out[2],
                                              FFTW_FORWARD, FFTW_ESTIMATE);
    fftw_plan_with_nthreads(threads);
    fftw_plan plan = c.real ? fftw_plan_dft_r2c(c.rank, n, (double *)in[0], (fftw_complex *)out[0], FFTW_ESTIMATE)
                            : fftw_plan_dft(c.rank, n, (fftw_complex *)in[0], (fftw_complex *)out[0],
                                            FFTW_FORWARD, FFTW_ESTIMATE);
    auto exec = [&](int k) {
      if (c.real)
        fftw_execute_dft_r2c(plan, (double *)in[k], (fftw_complex *)out[k]);
      else
        fftw_execute_dft(plan, (fftw_complex *)in[k], (fftw_complex *)out[k]);
    };
    in_session([&] { sample(fftw_backend, c.metric, [&] { exec(0); }); });
    std::string pair = std::string(c.metric) + "_2callers";
    sample_pair(fftw_backend, pair.c_str(), exec);
    // Results: both callers' outputs against the serial plan's.
    fftw_execute(serial);
    const double *want = static_cast<const double *>(out[2]);
    for (int k = 0; k < 2; k++) {
      const double *got = static_cast<const double *>(out[k]);
      for (size_t i = 0; i < out_bytes / sizeof(double); i++)
        if (std::fabs(got[i] - want[i]) > 1e-9 * (1 + std::fabs(want[i]))) {
          std::printf("FAIL %s: %s output %zu differs from the serial plan's\n", fftw_backend, c.metric, i);
          failed = 1;
          break;
        }
    }
    fftw_destroy_plan(plan);
    fftw_destroy_plan(serial);
    for (int k = 0; k < 3; k++) {
      fftw_free(in[k]);
      fftw_free(out[k]);
    }
  }
}

// ---- OpenCV ------------------------------------------------------------------------
void cv_rows() {
#ifndef BENCH_OWN_THREADS
  cpuexec::opencv::install();
#endif
  cv::setNumThreads(threads);
  cv::Mat src(720, 1280, CV_8UC3);
  for (int y = 0; y < src.rows; y++)
    for (int x = 0; x < src.cols * 3; x++) src.ptr<uint8_t>(y)[x] = static_cast<uint8_t>((x * 7 + y * 13) ^ (x >> 3));
  struct op_case {
    const char *metric;
    std::function<void(const cv::Mat &, cv::Mat &)> op;
  } ops[] = {
      {"cv_blur_720p", [](const cv::Mat &a, cv::Mat &b) { cv::GaussianBlur(a, b, cv::Size(7, 7), 1.5); }},
      {"cv_resize_720p", [](const cv::Mat &a, cv::Mat &b) { cv::resize(a, b, cv::Size(640, 360), 0, 0, cv::INTER_LINEAR); }},
      {"cv_cvtcolor_720p", [](const cv::Mat &a, cv::Mat &b) { cv::cvtColor(a, b, cv::COLOR_BGR2YCrCb); }},
  };
  for (const op_case &o : ops) {
    cv::Mat out[2], serial;
    in_session([&] { sample(cv_backend, o.metric, [&] { o.op(src, out[0]); }); });
    std::string pair = std::string(o.metric) + "_2callers";
    sample_pair(cv_backend, pair.c_str(), [&](int k) { o.op(src, out[k]); });
    int saved = cv::getNumThreads();
    cv::setNumThreads(0); // OpenCV runs it serially
    o.op(src, serial);
    cv::setNumThreads(saved > 1 ? saved : threads);
    for (int k = 0; k < 2; k++)
      if (out[k].size() != serial.size() || cv::norm(out[k], serial, cv::NORM_INF) != 0) {
        std::printf("FAIL %s: %s differs from OpenCV's serial result\n", cv_backend, o.metric);
        failed = 1;
      }
  }
}

} // namespace

int main(int argc, char **argv) {
  const char *mode = "round";
  for (int a = 1; a < argc; a++) {
    if (std::strncmp(argv[a], "--mode=", 7) == 0)
      mode = argv[a] + 7;
    else if (std::strcmp(argv[a], "--quick") == 0)
      quick = true;
    else if (std::strncmp(argv[a], "--delay-len=", 12) != 0) {
      std::fprintf(stderr, "usage: %s [--mode=round|smoke] [--quick] [--delay-len=N]\n", argv[0]);
      return 2;
    }
  }
  smoke = std::strcmp(mode, "smoke") == 0;
  if (!smoke && std::strcmp(mode, "round") != 0) {
    std::fprintf(stderr, "%s: --mode=%s is not supported (round, smoke)\n", argv[0], mode);
    return 2;
  }
  const char *env = std::getenv("BENCH_PARTICIPANTS");
  threads = env && *env ? std::atoi(env) : 2;
  if (threads < 1) threads = 2;
  std::printf("# libraries (%s, %s): %d threads\n", fftw_backend, cv_backend, threads);
  fftw_rows();
  cv_rows();
  if (smoke && !failed) std::printf("# libraries (%s): smoke ok\n", fftw_backend);
  return failed;
}
