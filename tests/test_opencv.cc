// OpenCV on libcpuexec (cpuexec/opencv.hpp), against the real OpenCV 4.6:
// GaussianBlur, resize, cvtColor and filter2D on a few image sizes give
// bit-identical output on the session's participants and on OpenCV's default
// backend (TBB in Debian's build) at 2 threads; OpenCV starts no thread of
// its own; the thread counts follow the executor; OpenCV calls inside a
// callback run inline; two session threads at once get the right output.
//
// The first case must run before any reference: OpenCV's default backend
// keeps the threads it starts, so only a process where it has started none
// can show that this backend starts none (default_backend_seen).
#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>

// OpenCV's and the C++ library's headers before cmocka's, whose fail() macro
// would rename std::basic_ios::fail.
#include <opencv2/imgproc.hpp>

#include <cpuexec/opencv.hpp>

extern "C" {
#include <cmocka.h>

#include "support/executors.h"
#include "support/test_util.h"
#include "support/threads.h"
}

namespace {

int gettid_now() { return static_cast<int>(syscall(SYS_gettid)); }

// support/rendezvous.h's rule in C++: each participant's first range waits
// until every admitted participant has started one.
void rendezvous(std::atomic<uint64_t> *arrived) {
  uint32_t count = static_cast<uint32_t>(cpuexec_participant_count());
  uint32_t index = static_cast<uint32_t>(cpuexec_participant_index());
  if (count <= 1 || count > 64) return;
  uint64_t bit = 1ull << index;
  if (arrived->load() & bit) return;
  arrived->fetch_or(bit);
  while (static_cast<uint32_t>(__builtin_popcountll(arrived->load())) < count) sched_yield();
}

// ---- recording what the backend did ------------------------------------------
// The backend OpenCV sees wraps every stripe range in a shim that notes the
// thread and participant running it. Counters are atomics: stripes run on
// the executor's workers, where cmocka's asserts must not be called.
struct record {
  std::atomic<int> calls{0};          // parallel_for calls of 2 or more stripes
  std::atomic<int> spread{0};         // ... whose stripes ran on 2 or more threads
  std::atomic<int> outside{0};        // stripe ranges on a thread not in `allowed`
  std::atomic<int> not_inline{0};     // ranges off the thread of inline_tid while it is set
  std::atomic<int> wrong_executor{0}; // ranges whose current executor is not expect_exec (when set)
  std::atomic<int> bad_thread_num{0}; // getThreadNum() outside [0, getNumThreads())
  std::vector<int> allowed;           // the pool's threads (empty: any)
  bool rendezvous = false;
  void reset() {
    calls = 0;
    spread = 0;
    outside = 0;
    not_inline = 0;
    wrong_executor = 0;
    bad_thread_num = 0;
    allowed.clear();
    rendezvous = false;
  }
};
record rec;
thread_local int inline_tid;
thread_local cpuexec_executor *expect_exec;

class recording_backend : public cpuexec::opencv::parallel_for_backend {
public:
  using parallel_for_backend::parallel_for_backend;
  void parallel_for(int tasks, FN_parallel_for_body_cb_t body, void *data) override {
    shim s{this, body, data, {0}, {{0}, {0}}};
    parallel_for_backend::parallel_for(tasks, &shim::run, &s);
    if (tasks >= 2) {
      rec.calls++;
      if (s.tid[1].load() != 0) rec.spread++;
    }
  }

private:
  struct shim {
    recording_backend *self;
    FN_parallel_for_body_cb_t body;
    void *data;
    std::atomic<uint64_t> arrived;
    std::atomic<int> tid[2];
    static void run(int begin, int end, void *p) {
      shim *s = static_cast<shim *>(p);
      int tid = gettid_now();
      if (!rec.allowed.empty()) {
        bool found = false;
        for (int t : rec.allowed) found |= t == tid;
        if (!found) rec.outside++;
      }
      if (inline_tid != 0 && (tid != inline_tid || cpuexec_participant_count() != 1)) rec.not_inline++;
      if (expect_exec != nullptr && cpuexec_executor_current() != expect_exec) rec.wrong_executor++;
      int num = s->self->getThreadNum();
      if (num < 0 || num >= cpuexec_participant_count()) rec.bad_thread_num++;
      int none = 0;
      if (!s->tid[0].compare_exchange_strong(none, tid) && s->tid[0].load() != tid) {
        none = 0;
        s->tid[1].compare_exchange_strong(none, tid);
      }
      if (rec.rendezvous) rendezvous(&s->arrived);
      s->body(begin, end, s->data);
    }
  };
};

std::shared_ptr<recording_backend> backend;
bool default_backend_seen; // OpenCV's own backend has run in this process

void use_cpuexec() {
  cv::parallel::setParallelForBackend(backend, false);
  cv::setNumThreads(2); // OpenCV parallelises (and our cap is 2, the sessions' size)
}

void use_default() {
  cv::parallel::setParallelForBackend(std::shared_ptr<cv::parallel::ParallelForAPI>(), false);
  cv::setNumThreads(2);
  default_backend_seen = true;
}

int note_tid(void *ctx, int64_t begin, int64_t) {
  static_cast<int *>(ctx)[begin] = gettid_now();
  return 0;
}

void allow_threads_of(cpuexec_executor *exec) {
  int32_t n = cpuexec_executor_effective_threads(exec);
  std::vector<int> tids(static_cast<size_t>(n));
  assert_int_equal(cpuexec_parallel_for_flags(exec, n, 1, tids.data(), note_tid, 0, CPUEXEC_FOR_EVERY_PARTICIPANT), 0);
  rec.allowed = tids;
}

template <class F> void run_in(cpuexec_session *s, F &&f) {
  auto call = [](void *p) -> int {
    (*static_cast<F *>(p))();
    return 0;
  };
  assert_int_equal(cpuexec_session_run(s, &f, call), 0);
}

// ---- the operations ----------------------------------------------------------------
const cv::Size sizes[] = {{97, 61}, {640, 480}, {1283, 721}};
enum op { GAUSSIAN_BLUR, RESIZE_DOWN, RESIZE_UP, CVT_COLOR, FILTER_2D, OPS };
const char *const op_names[] = {"GaussianBlur", "resize down", "resize up", "cvtColor", "filter2D"};

cv::Mat input_of(cv::Size size) {
  cv::Mat m(size, CV_8UC3);
  for (int y = 0; y < size.height; y++)
    for (int x = 0; x < size.width * 3; x++) m.ptr<uint8_t>(y)[x] = static_cast<uint8_t>((x * 31 + y * 17) ^ (x * y));
  return m;
}

cv::Mat apply(op o, const cv::Mat &in) {
  cv::Mat out;
  switch (o) {
  case GAUSSIAN_BLUR: cv::GaussianBlur(in, out, cv::Size(7, 7), 1.7); break;
  case RESIZE_DOWN: cv::resize(in, out, cv::Size(in.cols / 2 + 1, in.rows / 3 + 1), 0, 0, cv::INTER_LINEAR); break;
  case RESIZE_UP: cv::resize(in, out, cv::Size(in.cols * 2 - 3, in.rows * 3 / 2), 0, 0, cv::INTER_CUBIC); break;
  case CVT_COLOR: cv::cvtColor(in, out, cv::COLOR_BGR2YCrCb); break;
  case FILTER_2D: {
    cv::Mat kernel(5, 5, CV_32F);
    for (int i = 0; i < 25; i++) kernel.at<float>(i / 5, i % 5) = static_cast<float>((i * 7) % 11 - 5) / 23.0f;
    cv::Mat f;
    in.convertTo(f, CV_32F);
    cv::filter2D(f, out, CV_32F, kernel);
    break;
  }
  default: break;
  }
  return out;
}

bool identical(const cv::Mat &a, const cv::Mat &b) {
  if (a.size() != b.size() || a.type() != b.type()) return false;
  for (int y = 0; y < a.rows; y++)
    if (std::memcmp(a.ptr(y), b.ptr(y), a.cols * a.elemSize()) != 0) return false;
  return true;
}

// ---- OpenCV starts no thread ----------------------------------------------------
void opencv_starts_no_thread_of_its_own(void **) {
  assert_false(default_backend_seen); // see the top of this file
  cpuexec_session *s = test_session(2);
  use_cpuexec();
  rec.reset();
  std::vector<cv::Mat> inputs;
  for (cv::Size size : sizes) inputs.push_back(input_of(size));
  int before = task_baseline();
  run_in(s, [&] {
    for (const cv::Mat &in : inputs)
      for (int o = 0; o < OPS; o++) apply(static_cast<op>(o), in);
  });
  assert_int_equal(task_count(), before);
  assert_true(rec.calls.load() >= 1);
  // The count sees OpenCV's threads: its default backend starts some.
  use_default();
  for (const cv::Mat &in : inputs)
    for (int o = 0; o < OPS; o++) apply(static_cast<op>(o), in);
  uint64_t deadline = test_now_ns() + 5000000000u;
  while (task_count() <= before && test_now_ns() < deadline) sched_yield();
  assert_true(task_count() > before);
  use_cpuexec();
  cpuexec_session_destroy(s);
}

// ---- bit-identical, on the session's participants ---------------------------------
void operations_bit_identical_on_session_participants(void **) {
  cpuexec_session *s = test_session(2);
  for (cv::Size size : sizes) {
    cv::Mat in = input_of(size);
    for (int o = 0; o < OPS; o++) {
      use_default();
      cv::Mat reference = apply(static_cast<op>(o), in);
      use_cpuexec();
      rec.reset();
      allow_threads_of(cpuexec_session_executor(s));
      rec.rendezvous = true;
      cv::Mat out;
      run_in(s, [&] { out = apply(static_cast<op>(o), in); });
      if (!identical(out, reference))
        fail_msg("%s on %d x %d: output differs from OpenCV's default backend", op_names[o], size.width, size.height);
      assert_int_equal(rec.outside.load(), 0);
      assert_int_equal(rec.bad_thread_num.load(), 0);
      // With the rendezvous, every call of two or more stripes ran on both participants.
      assert_int_equal(rec.spread.load(), rec.calls.load());
      // OpenCV 4.6 parallelises the largest image in every operation but
      // filter2D (whose filter engine runs serially): those ran on the pool.
      if (size == sizes[2] && o != FILTER_2D && rec.calls.load() == 0)
        fail_msg("%s on %d x %d: OpenCV made no parallel call", op_names[o], size.width, size.height);
    }
  }
  cpuexec_session_destroy(s);
}

// ---- thread counts -----------------------------------------------------------------
void thread_counts_follow_the_executor(void **) {
  use_cpuexec();
  cpuexec_session *two = test_session(2), *one = test_session(1);
  int prev = backend->setNumThreads(0);
  (void)prev;
  run_in(two, [&] {
    assert_int_equal(backend->getNumThreads(), 2);
    assert_int_equal(cv::getNumThreads(), 2);
    assert_int_equal(cv::getThreadNum(), 0); // outside a stripe
  });
  run_in(one, [&] { assert_int_equal(backend->getNumThreads(), 1); });
  // The cap: setNumThreads returns the previous one; <= 0 is none.
  assert_int_equal(backend->setNumThreads(1), 0);
  run_in(two, [&] { assert_int_equal(backend->getNumThreads(), 1); });
  std::atomic<int> most{0};
  auto body = [](int, int, void *p) {
    std::atomic<int> *m = static_cast<std::atomic<int> *>(p);
    int n = cpuexec_participant_count();
    int seen = m->load();
    while (n > seen && !m->compare_exchange_weak(seen, n)) {
    }
  };
  run_in(two, [&] { backend->parallel_for(64, body, &most); });
  assert_int_equal(most.load(), 1);
  assert_int_equal(backend->setNumThreads(-3), 1);
  run_in(two, [&] { assert_int_equal(backend->getNumThreads(), 2); });
  // cv::setNumThreads reaches the backend.
  cv::setNumThreads(1);
  assert_int_equal(backend->setNumThreads(0), 1);
  // An executor given to the constructor, whatever is installed.
  cpuexec_executor *three = test_executor(3);
  cpuexec::opencv::parallel_for_backend fixed(three);
  run_in(one, [&] { assert_int_equal(fixed.getNumThreads(), 3); });
  assert_string_equal(fixed.getName(), "cpuexec");
  // Participants' thread numbers are distinct and below the count.
  std::vector<std::atomic<int>> seen(3);
  struct numbers {
    cpuexec::opencv::parallel_for_backend *b;
    std::vector<std::atomic<int>> *seen;
    std::atomic<uint64_t> arrived;
  } nums{&fixed, &seen, {0}};
  fixed.parallel_for(
      3,
      [](int, int, void *p) {
        numbers *n = static_cast<numbers *>(p);
        rendezvous(&n->arrived);
        int k = n->b->getThreadNum();
        if (k >= 0 && k < 3) (*n->seen)[static_cast<size_t>(k)]++;
      },
      &nums);
  for (auto &k : seen) assert_int_equal(k.load(), 1);
  assert_int_equal(cpuexec_executor_release(three), 0);
  cv::setNumThreads(2);
  cpuexec_session_destroy(two);
  cpuexec_session_destroy(one);
}

// ---- nested calls inline ------------------------------------------------------------
struct nested_ctx {
  cv::Mat in, out[2];
};

int blur_in_callback(void *p, int64_t begin, int64_t end) {
  nested_ctx *c = static_cast<nested_ctx *>(p);
  for (int64_t k = begin; k < end; k++) {
    inline_tid = gettid_now();
    c->out[k] = apply(GAUSSIAN_BLUR, c->in);
    inline_tid = 0;
  }
  return 0;
}

void calls_inside_a_callback_run_inline(void **) {
  cpuexec_session *s = test_session(2);
  nested_ctx c;
  c.in = input_of(sizes[2]);
  use_default();
  cv::Mat reference = apply(GAUSSIAN_BLUR, c.in);
  use_cpuexec();
  rec.reset();
  assert_int_equal(cpuexec_parallel_for_flags(cpuexec_session_executor(s), 2, 1, &c, blur_in_callback, 0,
                                              CPUEXEC_FOR_EVERY_PARTICIPANT),
                   0);
  assert_int_equal(rec.not_inline.load(), 0);
  assert_true(identical(c.out[0], reference));
  assert_true(identical(c.out[1], reference));
  // Called directly inside a callback: inline too.
  rec.reset();
  std::atomic<int> wide{0};
  struct direct {
    recording_backend *b;
    std::atomic<int> *wide;
  } d{backend.get(), &wide};
  assert_int_equal(cpuexec_parallel_for_flags(
                       cpuexec_session_executor(s), 2, 1, &d,
                       [](void *p, int64_t, int64_t) -> int {
                         direct *dd = static_cast<direct *>(p);
                         inline_tid = gettid_now();
                         dd->b->parallel_for(
                             16,
                             [](int, int, void *w) {
                               if (cpuexec_participant_count() != 1) static_cast<std::atomic<int> *>(w)->fetch_add(1);
                             },
                             dd->wide);
                         inline_tid = 0;
                         return 0;
                       },
                       0, CPUEXEC_FOR_EVERY_PARTICIPANT),
                   0);
  assert_int_equal(wide.load(), 0);
  assert_int_equal(rec.not_inline.load(), 0);
  assert_int_equal(rec.calls.load(), 2);
  cpuexec_session_destroy(s);
}

// ---- two session threads at once -------------------------------------------------
void two_session_threads_at_once(void **) {
  constexpr int rounds = 10;
  cv::Mat in = input_of(sizes[1]);
  std::vector<cv::Mat> reference;
  use_default();
  for (int o = 0; o < OPS; o++) reference.push_back(apply(static_cast<op>(o), in));
  use_cpuexec();
  rec.reset();
  pthread_barrier_t start;
  pthread_barrier_init(&start, nullptr, 2);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  cpuexec_session *sessions[2] = {test_session(2), test_session(2)};
  for (int k = 0; k < 2; k++)
    threads.emplace_back([&, k] {
      pthread_barrier_wait(&start);
      auto body = [&] {
        expect_exec = cpuexec_session_executor(sessions[k]);
        for (int r = 0; r < rounds; r++)
          for (int o = 0; o < OPS; o++)
            if (!identical(apply(static_cast<op>(o), in), reference[static_cast<size_t>(o)])) wrong++;
        expect_exec = nullptr;
        return 0;
      };
      if (cpuexec_session_run(sessions[k], &body, [](void *p) { return (*static_cast<decltype(body) *>(p))(); }) != 0)
        wrong++;
    });
  for (auto &t : threads) t.join();
  assert_int_equal(wrong.load(), 0);
  assert_int_equal(rec.wrong_executor.load(), 0);
  assert_true(rec.calls.load() >= rounds); // at least one thread at a time ran on its pool
  pthread_barrier_destroy(&start);
  for (cpuexec_session *s : sessions) cpuexec_session_destroy(s);
}

// ---- cpuexec_libraries_status -------------------------------------------------------
bool opencv_on_libcpuexec() {
  cpuexec_library_status s[8];
  size_t n = 0;
  assert_int_equal(cpuexec_libraries_status(s, 8, &n), 0);
  for (size_t i = 0; i < n; i++)
    if (std::strcmp(s[i].name, "opencv") == 0) {
      assert_true(s[i].loaded);
      return s[i].on_libcpuexec;
    }
  fail_msg("no opencv entry");
  return false;
}

void the_status_follows_the_installed_backend(void **) {
  use_cpuexec();
  assert_true(opencv_on_libcpuexec());
  use_default();
  assert_false(opencv_on_libcpuexec()); // asked live: OpenCV names its own framework
  use_cpuexec();
  assert_true(opencv_on_libcpuexec());
}

// ---- the backend's own edges --------------------------------------------------------
void stripes_exactly_once_and_exceptions_reach_the_caller(void **) {
  cpuexec_executor *exec = test_executor(2);
  cpuexec::opencv::parallel_for_backend b(exec);
  for (int tasks = 0; tasks <= 40; tasks += 5) {
    std::vector<std::atomic<int>> hits(40);
    b.parallel_for(
        tasks,
        [](int begin, int end, void *p) {
          for (int i = begin; i < end; i++) (*static_cast<std::vector<std::atomic<int>> *>(p))[static_cast<size_t>(i)]++;
        },
        &hits);
    for (int i = 0; i < 40; i++) assert_int_equal(hits[static_cast<size_t>(i)].load(), i < tasks ? 1 : 0);
  }
  bool caught = false;
  try {
    b.parallel_for(
        8,
        [](int begin, int end, void *) {
          if (begin <= 5 && 5 < end) throw std::runtime_error("stripe 5");
        },
        nullptr);
  } catch (const std::runtime_error &e) {
    caught = std::strcmp(e.what(), "stripe 5") == 0;
  }
  assert_true(caught);
  assert_int_equal(cpuexec_executor_release(exec), 0);
}

int forked_child_runs_serially() {
  cpuexec::opencv::parallel_for_backend b(cpuexec_executor_current());
  std::vector<int> hits(12);
  b.parallel_for(
      12,
      [](int begin, int end, void *p) {
        for (int i = begin; i < end; i++) (*static_cast<std::vector<int> *>(p))[static_cast<size_t>(i)]++;
      },
      &hits);
  for (int h : hits)
    if (h != 1) return 1;
  return 0;
}

void an_inherited_executor_runs_the_stripes_on_the_caller(void **) {
  cpuexec_executor *exec = test_executor(2);
  cpuexec_scope scope;
  assert_int_equal(cpuexec_scope_enter(exec, &scope), 0);
  assert_int_equal(run_in_child(forked_child_runs_serially, 60), 0);
  assert_int_equal(cpuexec_scope_leave(&scope), 0);
  assert_int_equal(cpuexec_executor_release(exec), 0);
}

} // namespace

int main() {
  backend = std::make_shared<recording_backend>();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(opencv_starts_no_thread_of_its_own), // first: see the top of this file
      cmocka_unit_test(operations_bit_identical_on_session_participants),
      cmocka_unit_test(thread_counts_follow_the_executor),
      cmocka_unit_test(calls_inside_a_callback_run_inline),
      cmocka_unit_test(two_session_threads_at_once),
      cmocka_unit_test(stripes_exactly_once_and_exceptions_reach_the_caller),
      cmocka_unit_test(an_inherited_executor_runs_the_stripes_on_the_caller),
      cmocka_unit_test(the_status_follows_the_installed_backend),
  };
  int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
  cv::parallel::setParallelForBackend(std::shared_ptr<cv::parallel::ParallelForAPI>(), false);
  backend.reset();
  return failed;
}
