// Eigen on libcpuexec (cpuexec/eigen.hpp), against the real Eigen 3.4: a
// tensor contraction and reductions on Eigen::ThreadPoolDevice give
// bit-identical output on the session's participants and on Eigen's own
// NonBlockingThreadPool at the same thread count; the pool starts no thread;
// the thread Eigen blocks runs closures beside the workers, so a session of
// 2 runs Eigen's closures on 2 threads at once, as Eigen's own pool of 2
// does, and on no thread outside it; a calling thread whose closure
// scheduled nothing stays until the closures before it are done, running
// any pool's queued closures; CurrentThreadId names the workers;
// Eigen inside a callback runs inline; two session threads at once get the
// right output; Cancel drops what has not started; in a fork child the pool
// runs closures inline and is destroyed without waiting for the parent's.
// Eigen's NonBlockingThreadPool (the reference below) uses
// std::atomic_thread_fence, which GCC warns about under ThreadSanitizer
// (-Wtsan); its reports are suppressed instead (tests/support/eigen_tsan.c).
#if defined(__SANITIZE_THREAD__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wtsan"
#endif
// Under AddressSanitizer GCC 12 also reports an out-of-bounds subscript
// inside Eigen's contraction templates (a std::array<long, 1> indexed in a
// branch that never runs for one contracted dimension): Eigen's code, not
// this test's.
#if defined(__SANITIZE_ADDRESS__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

// Eigen's and the C++ library's headers before cmocka's, whose fail() macro
// would rename std::basic_ios::fail.
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include <cpuexec/eigen.hpp>

extern "C" {
#include <cmocka.h>

#include "support/executors.h"
#include "support/test_util.h"
#include "support/threads.h"
}

namespace {

int gettid_now() { return test_thread_id(); }

// ---- recording what the pool ran -------------------------------------------------
// Every closure Eigen schedules is wrapped to note its thread. Counters are
// atomics: closures run on the executor's workers, where cmocka's asserts
// must not be called.
struct record {
  std::atomic<int> closures{0};   // closures run
  std::atomic<int> on_caller{0};  // ... on `caller`, the session's calling thread
  std::atomic<int> outside{0};    // ... on a thread not in `allowed`
  std::atomic<int> not_inline{0}; // ... off the scheduling thread while inline_expected
  std::atomic<int> bad_id{0};     // CurrentThreadId() outside [1, NumThreads()) on a worker,
                                  // or not -1 on `caller`
  std::vector<int> allowed;       // the session's participants (empty: any)
  int caller = 0;                 // the session's calling thread (0: none)
  bool inline_expected = false;
  void reset() {
    closures = 0;
    on_caller = 0;
    outside = 0;
    not_inline = 0;
    bad_id = 0;
    allowed.clear();
    caller = 0;
    inline_expected = false;
  }
};
record rec;

class recording_pool : public cpuexec::eigen::thread_pool {
public:
  using thread_pool::thread_pool;
  void Schedule(std::function<void()> fn) override {
    int from = gettid_now();
    thread_pool::Schedule([this, from, fn = std::move(fn)] {
      int tid = gettid_now();
      rec.closures++;
      if (tid == rec.caller) rec.on_caller++;
      if (!rec.allowed.empty()) {
        bool found = false;
        for (int t : rec.allowed) found |= t == tid;
        if (!found) rec.outside++;
      }
      if (rec.inline_expected && tid != from) rec.not_inline++;
      int id = CurrentThreadId();
      if (rec.caller != 0 && tid != rec.caller && (id < 1 || id >= NumThreads())) rec.bad_id++;
      if (rec.caller != 0 && tid == rec.caller && id != -1) rec.bad_id++;
      fn();
    });
  }
};

int note_tid(void *ctx, int64_t begin, int64_t) {
  static_cast<int *>(ctx)[begin] = gettid_now();
  return 0;
}

std::vector<int> threads_of(cpuexec_executor *exec) {
  int32_t n = cpuexec_executor_effective_threads(exec);
  std::vector<int> tids(static_cast<size_t>(n));
  assert_int_equal(cpuexec_parallel_for_flags(exec, n, 1, tids.data(), note_tid, 0, CPUEXEC_FOR_EVERY_PARTICIPANT), 0);
  return tids;
}

template <class F> void run_in(cpuexec_session *s, F &&f) {
  auto call = [](void *p) -> int {
    (*static_cast<F *>(p))();
    return 0;
  };
  assert_int_equal(cpuexec_session_run(s, &f, call), 0);
}

// ---- the operations ----------------------------------------------------------------
using matrix = Eigen::Tensor<float, 2>;
using cube = Eigen::Tensor<float, 3>;

// Sizes: one Eigen shards by the output's blocks, one it shards by the inner
// (contracted) dimension, one too small to split.
struct shape {
  int m, k, n;
};
const shape shapes[] = {{256, 192, 320}, {24, 4096, 32}, {7, 5, 9}};

float value_at(int i, int salt) { return static_cast<float>(((i * 37 + salt * 11) % 101) - 50) / 17.0f; }

template <class T> void fill(T &t, int salt) {
  for (Eigen::Index i = 0; i < t.size(); i++) t.data()[i] = value_at(static_cast<int>(i), salt);
}

// The results of every operation on one device, concatenated.
struct results {
  std::vector<float> values;
  template <class T> void add(const T &t) { values.insert(values.end(), t.data(), t.data() + t.size()); }
};

results compute(const Eigen::ThreadPoolDevice &device, const shape &sh) {
  results r;
  matrix a(sh.m, sh.k), b(sh.k, sh.n);
  fill(a, 1);
  fill(b, 2);
  Eigen::array<Eigen::IndexPair<int>, 1> dims = {Eigen::IndexPair<int>(1, 0)};
  matrix c(sh.m, sh.n);
  c.device(device) = a.contract(b, dims); // the contraction
  r.add(c);
  cube t(sh.m, sh.k, 3);
  fill(t, 3);
  Eigen::Tensor<float, 0> total;
  total.device(device) = t.sum(); // a full reduction
  r.add(total);
  Eigen::array<int, 1> inner = {1};
  Eigen::Tensor<float, 2> partial(sh.m, 3);
  partial.device(device) = t.sum(inner); // a reduction along one dimension
  r.add(partial);
  Eigen::Tensor<float, 1> most(3);
  Eigen::array<int, 2> first_two = {0, 1};
  most.device(device) = t.maximum(first_two);
  r.add(most);
  return r;
}

results reference(const shape &sh, int threads) {
  Eigen::ThreadPool own(threads);
  Eigen::ThreadPoolDevice device(&own, threads);
  return compute(device, sh);
}

bool identical(const results &a, const results &b) {
  return a.values.size() == b.values.size() &&
         std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)) == 0;
}

// ---- the pool starts no thread ----------------------------------------------------
void the_pool_starts_no_thread(void **) {
  cpuexec_session *s = test_session(2);
  (void)threads_of(cpuexec_session_executor(s)); // the session's workers have started
  int before = task_baseline();
  run_in(s, [&] {
    recording_pool pool;
    Eigen::ThreadPoolDevice device(&pool, pool.NumThreads());
    for (const shape &sh : shapes) (void)compute(device, sh);
  });
  assert_int_equal(task_count(), before);
  // The count sees Eigen's own threads: its pool starts them when made.
  {
    Eigen::ThreadPool own(2);
    assert_int_equal(wait_task_count(before + 2), before + 2);
  }
  cpuexec_session_destroy(s);
}

// ---- bit-identical, on the session's participants ---------------------------------
void operations_bit_identical_on_session_participants(void **) {
  cpuexec_session *s = test_session(2);
  for (const shape &sh : shapes) {
    results want = reference(sh, 2);
    rec.reset();
    rec.allowed = threads_of(cpuexec_session_executor(s));
    rec.caller = gettid_now(); // a session runs on its calling thread
    results got;
    int caller = 0;
    run_in(s, [&] {
      caller = gettid_now();
      recording_pool pool;
      assert_int_equal(pool.NumThreads(), 2);
      Eigen::ThreadPoolDevice device(&pool, pool.NumThreads());
      got = compute(device, sh);
    });
    if (!identical(got, want))
      fail_msg("%d x %d x %d: output differs from Eigen's NonBlockingThreadPool(2)", sh.m, sh.k, sh.n);
    assert_int_equal(rec.outside.load(), 0);
    assert_int_equal(rec.bad_id.load(), 0);
    assert_int_equal(caller, rec.caller);
    // The large shapes were split, and the calling thread, which Eigen
    // blocks until its closures are done, ran the first of them itself.
    if (sh.m > 7) assert_true(rec.closures.load() > 0);
    if (sh.m > 7) assert_true(rec.on_caller.load() > 0);
  }
  cpuexec_session_destroy(s);
}

// ---- thread counts and ids ---------------------------------------------------------
struct latch {
  std::mutex lock;
  std::condition_variable changed;
  int count = 0;
  void add() {
    std::lock_guard<std::mutex> hold(lock);
    count++;
    changed.notify_all();
  }
  void wait_for(int n) {
    std::unique_lock<std::mutex> hold(lock);
    changed.wait(hold, [&] { return count >= n; });
  }
};

void thread_counts_and_ids(void **) {
  cpuexec_session *two = test_session(2), *one = test_session(1);
  run_in(two, [&] {
    cpuexec::eigen::thread_pool pool;
    assert_int_equal(pool.NumThreads(), 2);
    assert_int_equal(pool.CurrentThreadId(), -1); // the session's thread, outside any closure
  });
  run_in(one, [&] {
    cpuexec::eigen::thread_pool pool;
    assert_int_equal(pool.NumThreads(), 1);
    int ran_on = 0;
    pool.Schedule([&] { ran_on = gettid_now(); }); // serial: at once, here
    assert_int_equal(ran_on, gettid_now());
  });
  // An executor given to the constructor: ids are the workers', distinct, 1 .. 2.
  cpuexec_executor *three = test_executor(3);
  std::vector<int> workers = threads_of(three);
  {
    cpuexec::eigen::thread_pool pool(three);
    assert_int_equal(pool.NumThreads(), 3);
    const int closures = 200;
    std::vector<int> tid(closures), id(closures);
    latch done;
    int outer_id = 0;
    // The first closure runs here (none of the pool's is queued) and
    // schedules the others, which go to the workers; it holds this thread
    // until they are done, so they all run on the workers.
    pool.Schedule([&] {
      outer_id = pool.CurrentThreadId();
      for (int i = 0; i < closures; i++)
        pool.Schedule([&, i] {
          tid[static_cast<size_t>(i)] = gettid_now();
          id[static_cast<size_t>(i)] = pool.CurrentThreadId();
          done.add();
        });
      done.wait_for(closures);
    });
    assert_int_equal(outer_id, -1); // a closure on this thread: it is not one of the workers
    for (int i = 0; i < closures; i++) {
      int t = tid[static_cast<size_t>(i)], d = id[static_cast<size_t>(i)];
      assert_true(t == workers[1] || t == workers[2]); // the pool's workers, never the caller
      assert_in_range(d, 1, 2);
      for (int j = 0; j < i; j++) // one id per thread, one thread per id
        assert_true((tid[static_cast<size_t>(j)] == t) == (id[static_cast<size_t>(j)] == d));
    }
    assert_int_equal(pool.CurrentThreadId(), -1);
  }
  assert_int_equal(cpuexec_executor_release(three), 0);
  cpuexec_session_destroy(one);
  cpuexec_session_destroy(two);
}

// ---- as many threads as Eigen's own pool ----------------------------------------------
// Eigen's parallelFor, for more blocks than threads, schedules only the root
// of its tree of closures and blocks its caller until every block is done.
// Each block here waits until two distinct threads have entered a block: on
// a session of 2 that returns only if the calling thread and the worker run
// blocks at once (on the worker alone it would never return: the watchdog
// names the case). Every block runs once, on the session's two threads.
struct distinct_threads {
  std::mutex lock;
  std::condition_variable changed;
  std::vector<int> seen;
  void enter_and_wait_for(size_t n) {
    std::unique_lock<std::mutex> hold(lock);
    int me = gettid_now();
    bool known = false;
    for (int t : seen) known |= t == me;
    if (!known) seen.push_back(me);
    changed.notify_all();
    changed.wait(hold, [&] { return seen.size() >= n; });
  }
};

void two_threads_run_eigens_closures_at_once(void **) {
  cpuexec_session *s = test_session(2);
  std::vector<int> session = threads_of(cpuexec_session_executor(s));
  for (int round = 0; round < 3; round++) {
    distinct_threads met;
    const Eigen::Index n = 64;
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    run_in(s, [&] {
      cpuexec::eigen::thread_pool pool;
      Eigen::ThreadPoolDevice device(&pool, pool.NumThreads());
      assert_int_equal(device.numThreads(), 2);
      // A costly coefficient: 64 of them make 8 blocks of 8, more than 2.
      device.parallelFor(n, Eigen::TensorOpCost(0, 0, 1e6), [&](Eigen::Index first, Eigen::Index last) {
        met.enter_and_wait_for(2);
        for (Eigen::Index i = first; i < last; i++) hits[static_cast<size_t>(i)]++;
      });
    });
    for (const std::atomic<int> &h : hits) assert_int_equal(h.load(), 1);
    assert_int_equal(met.seen.size(), 2);
    for (int t : met.seen) assert_true(t == session[0] || t == session[1]);
  }
  cpuexec_session_destroy(s);
}

// A full reduction schedules its blocks one by one from the calling thread
// and then waits: the first runs here, and schedules nothing, so the others
// go to the workers rather than one after another here; the operation after
// it starts here again.
void a_full_reductions_blocks_go_to_the_workers(void **) {
  cpuexec_session *s = test_session(3);
  rec.reset();
  rec.allowed = threads_of(cpuexec_session_executor(s));
  rec.caller = gettid_now();
  cube t(256, 256, 16);
  fill(t, 5);
  run_in(s, [&] {
    recording_pool pool;
    Eigen::ThreadPoolDevice device(&pool, pool.NumThreads());
    Eigen::Tensor<float, 0> total;
    for (int round = 0; round < 3; round++) {
      rec.closures = 0;
      rec.on_caller = 0;
      total.device(device) = t.sum(); // Eigen's full reducer: one block per thread
      assert_int_equal(rec.closures.load(), 3);
      assert_int_equal(rec.on_caller.load(), 1);
      rec.closures = 0;
      rec.on_caller = 0;
      Eigen::array<int, 1> inner = {1};
      Eigen::Tensor<float, 2> partial(256, 16);
      partial.device(device) = t.sum(inner); // a tree of closures, its root run here
      assert_true(rec.closures.load() > 3);
      assert_true(rec.on_caller.load() > 0);
    }
  });
  assert_int_equal(rec.outside.load(), 0);
  assert_int_equal(rec.bad_id.load(), 0);
  cpuexec_session_destroy(s);
}

// ---- the calling thread stays while its closures run ------------------------------------
// A contraction's calling thread runs its last kernel itself, a closure that
// schedules nothing, while kernels that earlier closures scheduled still run
// on the workers and start the next ones. Here: Y, scheduled by the caller's
// first closure, holds the one worker; the caller's second closure
// schedules nothing, so the caller stays until Y is done, and runs what is
// queued meanwhile, another pool's closure (Q2) included: Y waits for Q2,
// which only the caller can run (the worker is in Y, and Q2's own caller
// waits inside Q1 for it, as Eigen's blocked caller would). On the caller,
// Q2 is not on a worker of its pool (CurrentThreadId -1).
void the_calling_thread_stays_while_its_closures_run(void **) {
  cpuexec_executor *exec = test_executor(2); // one worker
  int me = gettid_now();
  std::atomic<int> q2_on{0}, q2_id{0};
  std::atomic<bool> y_done{false};
  latch y_started, go, q2_queued, q2_done;
  {
    cpuexec::eigen::thread_pool one(exec), two(exec);
    one.Schedule([&] { // runs here: nothing is queued
      one.Schedule([&] { // Y, queued: the worker runs it
        y_started.add();
        go.wait_for(1);
        q2_done.wait_for(1);
        y_done = true;
      });
      y_started.wait_for(1);
    });
    std::thread other([&] {
      two.Schedule([&] { // Q1, on `other`: nothing of `two` is queued
        two.Schedule([&] { // Q2, queued
          q2_on = gettid_now();
          q2_id = two.CurrentThreadId();
          q2_done.add();
        });
        q2_queued.add();
        q2_done.wait_for(1);
      });
    });
    one.Schedule([&] { // runs here and schedules nothing
      q2_queued.wait_for(1);
      go.add();
    });
    assert_true(y_done.load()); // it returned once Y was done
    other.join();
  }
  assert_int_equal(q2_on.load(), me);
  assert_int_equal(q2_id.load(), -1);
  assert_int_equal(cpuexec_executor_release(exec), 0);
}

// ---- after fork --------------------------------------------------------------------
// A fork child of a process whose pool had a closure running on a worker:
// the child's copy of the pool runs a closure at once on the calling thread
// (the group refuses it there), and its destructor returns, since no worker
// is left in the child to finish the parent's closure (run_in_child's alarm
// ends a child that hangs).
#ifndef _WIN32
cpuexec::eigen::thread_pool *forked_pool = nullptr;

int a_fork_child_uses_and_destroys_the_pool(void) {
  int ran_on = 0;
  forked_pool->Schedule([&] { ran_on = gettid_now(); });
  if (ran_on != gettid_now()) return 1;
  delete forked_pool;
  return 0;
}
#endif

void a_fork_childs_pool_runs_inline_and_is_destroyed(void **) {
#ifndef _WIN32
  cpuexec_executor *exec = test_executor(2); // one worker
  latch started, release;
  forked_pool = new cpuexec::eigen::thread_pool(exec);
  forked_pool->Schedule([&] { // runs here, and leaves Y on the worker
    forked_pool->Schedule([&] { // Y
      started.add();
      release.wait_for(1);
    });
    started.wait_for(1);
  });
  assert_int_equal(run_in_child(a_fork_child_uses_and_destroys_the_pool, 30), 0);
  release.add();
  delete forked_pool;
  forked_pool = nullptr;
  assert_int_equal(cpuexec_executor_release(exec), 0);
#else
  skip();
#endif
}

// ---- inside a callback, inline -----------------------------------------------------
void eigen_inside_a_callback_runs_inline(void **) {
  cpuexec_session *s = test_session(2);
  const shape &sh = shapes[0];
  results want = reference(sh, 2);
  rec.reset();
  rec.inline_expected = true;
  std::vector<results> got(2);
  run_in(s, [&] {
    recording_pool pool;
    struct ctx {
      recording_pool *pool;
      const shape *sh;
      std::vector<results> *got;
    } c{&pool, &sh, &got};
    // Each participant runs the operations inside its range.
    auto body = [](void *p, int64_t begin, int64_t) -> int {
      ctx *x = static_cast<ctx *>(p);
      Eigen::ThreadPoolDevice device(x->pool, x->pool->NumThreads());
      (*x->got)[static_cast<size_t>(begin)] = compute(device, *x->sh);
      return 0;
    };
    assert_int_equal(cpuexec_parallel_for_flags(cpuexec_executor_current(), 2, 1, &c, body, 0,
                                                CPUEXEC_FOR_EVERY_PARTICIPANT),
                     0);
  });
  assert_true(rec.closures.load() > 0);
  assert_int_equal(rec.not_inline.load(), 0);
  for (const results &r : got) assert_true(identical(r, want)); // NumThreads() is 2 inline too
  cpuexec_session_destroy(s);
}

// ---- two session threads at once --------------------------------------------------
void two_session_threads_at_once(void **) {
  std::vector<results> want;
  for (const shape &sh : shapes) want.push_back(reference(sh, 2));
  rec.reset();
  cpuexec::eigen::thread_pool *shared = nullptr;
  cpuexec_session *first = test_session(2);
  run_in(first, [&] { shared = new cpuexec::eigen::thread_pool(); });
  std::atomic<int> wrong{0};
  auto caller = [&](bool own_pool) {
    cpuexec_session *s = test_session(2);
    run_in(s, [&] {
      cpuexec::eigen::thread_pool mine;
      cpuexec::eigen::thread_pool *pool = own_pool ? &mine : shared;
      Eigen::ThreadPoolDevice device(pool, pool->NumThreads());
      for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
          if (!identical(compute(device, shapes[i]), want[i])) wrong++;
    });
    cpuexec_session_destroy(s);
  };
  for (bool own_pool : {true, false}) { // a pool each, then one pool for both
    std::thread a(caller, own_pool), b(caller, own_pool);
    a.join();
    b.join();
  }
  assert_int_equal(wrong.load(), 0);
  delete shared;
  cpuexec_session_destroy(first);
}

// ---- Cancel -------------------------------------------------------------------------
void cancel_drops_closures_not_started(void **) {
  cpuexec_executor *exec = test_executor(2); // one worker
  std::atomic<int> ran{0}, finished{0};
  latch started, release;
  {
    cpuexec::eigen::thread_pool pool(exec);
    // The first closure runs here (nothing is queued) and schedules the
    // others, which are queued for the one worker: the first of them holds
    // it, so the next ten wait in the queue while this thread is busy here.
    pool.Schedule([&] {
      pool.Schedule([&] {
        started.add();
        release.wait_for(1);
        finished++;
      });
      started.wait_for(1);
      for (int i = 0; i < 10; i++) pool.Schedule([&] { ran++; });
      pool.Cancel();
      pool.Schedule([&] { ran++; }); // after Cancel: dropped too
      release.add();
    }); // then this thread runs the queued ones: dropped
  } // the destructor waits for the running one
  assert_int_equal(finished.load(), 1);
  assert_int_equal(ran.load(), 0);
  assert_int_equal(cpuexec_executor_release(exec), 0);
}

// ---- the status -----------------------------------------------------------------------
void the_status_lists_eigen(void **) {
  cpuexec_library_status st[8];
  size_t n = 0;
  assert_int_equal(cpuexec_libraries_status(st, 8, &n), 0);
  bool found = false;
  for (size_t i = 0; i < n; i++)
    if (std::strcmp(st[i].name, "eigen") == 0) {
      found = true;
      assert_true(st[i].loaded);
      assert_true(st[i].on_libcpuexec);
      assert_true(st[i].uses > 0); // the earlier cases made pools
    }
  assert_true(found);
  assert_false(cpuexec_library_call_inline());
}

} // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_pool_starts_no_thread),
      cmocka_unit_test(operations_bit_identical_on_session_participants),
      cmocka_unit_test(thread_counts_and_ids),
      cmocka_unit_test(two_threads_run_eigens_closures_at_once),
      cmocka_unit_test(a_full_reductions_blocks_go_to_the_workers),
      cmocka_unit_test(the_calling_thread_stays_while_its_closures_run),
      cmocka_unit_test(a_fork_childs_pool_runs_inline_and_is_destroyed),
      cmocka_unit_test(eigen_inside_a_callback_runs_inline),
      cmocka_unit_test(two_session_threads_at_once),
      cmocka_unit_test(cancel_drops_closures_not_started),
      cmocka_unit_test(the_status_lists_eigen),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
