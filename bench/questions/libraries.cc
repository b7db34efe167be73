// Other libraries' parallel work on libcpuexec against the same work on the
// libraries' own threads, as rows of `make bench`'s table (bench/run.sh
// protocol). One source built twice: with libcpuexec's adapters (rows
// "libcpuexec": FFTW's threads callback cpuexec_fftw_parallel_loop, OpenCV's
// cpuexec/opencv.hpp backend, Eigen's ThreadPoolDevice on cpuexec/eigen.hpp,
// in a session of BENCH_PARTICIPANTS threads) and with the libraries' own
// threading (-DBENCH_OWN_THREADS: rows "fftw-threads", FFTW's pthreads;
// "opencv-tbb", OpenCV's default backend; "eigen-nonblocking", Eigen's
// NonBlockingThreadPool of that many threads, one per caller), each in its
// own process. Every metric is us per operation (lower is better):
//   fftw_c2c_64k, fftw_r2c_512x512         one transform at 2 threads
//   cv_blur_720p, cv_resize_720p, cv_cvtcolor_720p   one call at 2 threads
//   eigen_contract_384, eigen_sum_1m       a 384^3 float contraction, a sum
//                                          of 1024 x 1024 floats along one dimension
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

#include <memory>

#include <fftw3.h>
#include <opencv2/imgproc.hpp>
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include <cpuexec.h>
#include <cpuexec/compat/fftw.h>
#include <cpuexec/eigen.hpp>
#include <cpuexec/opencv.hpp>

#include "../clock.h"

#ifdef BENCH_OWN_THREADS
static const char *const fftw_backend = "fftw-threads";
static const char *const cv_backend = "opencv-tbb";
static const char *const eigen_backend = "eigen-nonblocking";
#else
static const char *const fftw_backend = "libcpuexec";
static const char *const cv_backend = "libcpuexec";
static const char *const eigen_backend = "libcpuexec";
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

// ---- Eigen -------------------------------------------------------------------------
// One pool per caller, kept across its calls (as a program keeps its
// ThreadPoolDevice): Eigen's NonBlockingThreadPool(threads) each (own), or a
// cpuexec::eigen::thread_pool on the one executor the callers' sessions
// share (ours; `keep` holds it for the whole section).
void eigen_rows() {
  using matrix = Eigen::Tensor<float, 2>;
  const int n = 384, rows = 1024;
  matrix a(n, n), b(n, n), c[2], sum_in(rows, rows);
  Eigen::Tensor<float, 1> sums[2];
  for (int i = 0; i < n * n; i++) {
    a.data()[i] = static_cast<float>((i * 37) % 101 - 50) / 17.0f;
    b.data()[i] = static_cast<float>((i * 11) % 89 - 44) / 13.0f;
  }
  for (int i = 0; i < rows * rows; i++) sum_in.data()[i] = static_cast<float>((i * 7) % 97) / 31.0f;
  for (int k = 0; k < 2; k++) {
    c[k] = matrix(n, n);
    sums[k] = Eigen::Tensor<float, 1>(rows);
  }
#ifdef BENCH_OWN_THREADS
  std::unique_ptr<Eigen::ThreadPool> pools[2];
  for (auto &p : pools) p = std::make_unique<Eigen::ThreadPool>(threads);
#else
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = threads;
  cpuexec_session *keep = nullptr;
  if (cpuexec_session_create(&p, &keep) != 0) {
    std::printf("FAIL libcpuexec: no session of %d threads: %s\n", threads, cpuexec_error_message());
    std::exit(1);
  }
  std::unique_ptr<cpuexec::eigen::thread_pool> pools[2];
  for (auto &q : pools) q = std::make_unique<cpuexec::eigen::thread_pool>(cpuexec_session_executor(keep));
#endif
  std::unique_ptr<Eigen::ThreadPoolDevice> devices[2];
  for (int k = 0; k < 2; k++) devices[k] = std::make_unique<Eigen::ThreadPoolDevice>(pools[k].get(), threads);
  Eigen::array<Eigen::IndexPair<int>, 1> dims = {Eigen::IndexPair<int>(1, 0)};
  Eigen::array<int, 1> along = {1};
  struct op_case {
    const char *metric;
    std::function<void(int)> op;
  } ops[] = {
      {"eigen_contract_384", [&](int k) { c[k].device(*devices[k]) = a.contract(b, dims); }},
      {"eigen_sum_1m", [&](int k) { sums[k].device(*devices[k]) = sum_in.sum(along); }},
  };
  for (const op_case &o : ops) {
    in_session([&] { sample(eigen_backend, o.metric, [&] { o.op(0); }); });
    std::string pair = std::string(o.metric) + "_2callers";
    sample_pair(eigen_backend, pair.c_str(), o.op);
  }
  // Results: each caller's against one serial evaluation (Eigen splits a
  // contraction's inner dimension by thread count, so compare with rounding).
  matrix want = a.contract(b, dims);
  Eigen::Tensor<float, 1> want_sums = sum_in.sum(along);
  for (int k = 0; k < 2; k++) {
    for (int i = 0; i < n * n; i++)
      if (std::fabs(c[k].data()[i] - want.data()[i]) > 1e-3f * (1 + std::fabs(want.data()[i]))) {
        std::printf("FAIL %s: eigen_contract_384 output %d differs from the serial one\n", eigen_backend, i);
        failed = 1;
        break;
      }
    for (int i = 0; i < rows; i++)
      if (std::fabs(sums[k].data()[i] - want_sums.data()[i]) > 1e-3f * (1 + std::fabs(want_sums.data()[i]))) {
        std::printf("FAIL %s: eigen_sum_1m output %d differs from the serial one\n", eigen_backend, i);
        failed = 1;
        break;
      }
  }
  for (auto &d : devices) d.reset();
  for (auto &q : pools) q.reset();
#ifndef BENCH_OWN_THREADS
  cpuexec_session_destroy(keep);
#endif
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
  eigen_rows();
  if (smoke && !failed) std::printf("# libraries (%s): smoke ok\n", fftw_backend);
  return failed;
}
