// The C++ overloads of pthreadpool.h: any callable (a lambda) as the task,
// for every shape that has one, with the coordinates of the C task.
#include <atomic>
#include <thread>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>

#include "support/test_util.h"
}

#include <pthreadpool.h>

namespace {

// Counts calls and the items they cover; each item must be covered once.
struct Cover {
  explicit Cover(size_t items) : hits(items) {}
  void mark(size_t first, size_t count) {
    for (size_t i = first; i < first + count; i++) hits[i].fetch_add(1);
  }
  bool exactly_once() const {
    for (const auto &h : hits)
      if (h.load() != 1) return false;
    return true;
  }
  std::vector<std::atomic<int>> hits;
};

void every_functor_overload_covers_each_item_once(pthreadpool_t pool) {
  {
    Cover c(100);
    pthreadpool_parallelize_1d(pool, [&](size_t i) { c.mark(i, 1); }, 100);
    assert_true(c.exactly_once());
  }
  {
    Cover c(100);
    pthreadpool_parallelize_1d_tile_1d(pool, [&](size_t i, size_t t) { c.mark(i, t); }, 100, 7);
    assert_true(c.exactly_once());
  }
  {
    Cover c(6 * 9);
    pthreadpool_parallelize_2d(pool, [&](size_t i, size_t j) { c.mark(i * 9 + j, 1); }, 6, 9);
    assert_true(c.exactly_once());
  }
  {
    Cover c(6 * 9);
    pthreadpool_parallelize_2d_tile_1d(pool, [&](size_t i, size_t j, size_t tj) { c.mark(i * 9 + j, tj); }, 6, 9, 4);
    assert_true(c.exactly_once());
  }
  {
    Cover c(6 * 9);
    pthreadpool_parallelize_2d_tile_2d(
        pool,
        [&](size_t i, size_t j, size_t ti, size_t tj) {
          for (size_t a = i; a < i + ti; a++) c.mark(a * 9 + j, tj);
        },
        6, 9, 4, 4);
    assert_true(c.exactly_once());
  }
  {
    Cover c(3 * 4 * 5);
    pthreadpool_parallelize_3d(pool, [&](size_t i, size_t j, size_t k) { c.mark((i * 4 + j) * 5 + k, 1); }, 3, 4, 5);
    assert_true(c.exactly_once());
  }
  {
    Cover c(3 * 4 * 5);
    pthreadpool_parallelize_3d_tile_1d(
        pool, [&](size_t i, size_t j, size_t k, size_t tk) { c.mark((i * 4 + j) * 5 + k, tk); }, 3, 4, 5, 2);
    assert_true(c.exactly_once());
  }
  {
    Cover c(3 * 4 * 5);
    pthreadpool_parallelize_3d_tile_2d(
        pool,
        [&](size_t i, size_t j, size_t k, size_t tj, size_t tk) {
          for (size_t b = j; b < j + tj; b++) c.mark((i * 4 + b) * 5 + k, tk);
        },
        3, 4, 5, 3, 2);
    assert_true(c.exactly_once());
  }
  {
    Cover c(2 * 3 * 4 * 5);
    pthreadpool_parallelize_4d(
        pool, [&](size_t i, size_t j, size_t k, size_t l) { c.mark(((i * 3 + j) * 4 + k) * 5 + l, 1); }, 2, 3, 4, 5);
    assert_true(c.exactly_once());
  }
  {
    Cover c(2 * 3 * 4 * 5);
    pthreadpool_parallelize_4d_tile_1d(
        pool, [&](size_t i, size_t j, size_t k, size_t l, size_t tl) { c.mark(((i * 3 + j) * 4 + k) * 5 + l, tl); },
        2, 3, 4, 5, 2);
    assert_true(c.exactly_once());
  }
  {
    Cover c(2 * 3 * 4 * 5);
    pthreadpool_parallelize_4d_tile_2d(
        pool,
        [&](size_t i, size_t j, size_t k, size_t l, size_t tk, size_t tl) {
          for (size_t x = k; x < k + tk; x++) c.mark(((i * 3 + j) * 4 + x) * 5 + l, tl);
        },
        2, 3, 4, 5, 3, 2);
    assert_true(c.exactly_once());
  }
  {
    Cover c(2 * 2 * 3 * 2 * 5);
    pthreadpool_parallelize_5d(
        pool,
        [&](size_t i, size_t j, size_t k, size_t l, size_t m) { c.mark((((i * 2 + j) * 3 + k) * 2 + l) * 5 + m, 1); },
        2, 2, 3, 2, 5);
    assert_true(c.exactly_once());
  }
  {
    Cover c(2 * 2 * 3 * 2 * 5);
    pthreadpool_parallelize_5d_tile_1d(
        pool,
        [&](size_t i, size_t j, size_t k, size_t l, size_t m, size_t tm) {
          c.mark((((i * 2 + j) * 3 + k) * 2 + l) * 5 + m, tm);
        },
        2, 2, 3, 2, 5, 2);
    assert_true(c.exactly_once());
  }
  {
    Cover c(2 * 2 * 3 * 2 * 5);
    pthreadpool_parallelize_5d_tile_2d(
        pool,
        [&](size_t i, size_t j, size_t k, size_t l, size_t m, size_t tl, size_t tm) {
          for (size_t x = l; x < l + tl; x++) c.mark((((i * 2 + j) * 3 + k) * 2 + x) * 5 + m, tm);
        },
        2, 2, 3, 2, 5, 1, 3);
    assert_true(c.exactly_once());
  }
  {
    Cover c(2 * 2 * 2 * 3 * 2 * 5);
    pthreadpool_parallelize_6d(
        pool,
        [&](size_t i, size_t j, size_t k, size_t l, size_t m, size_t n) {
          c.mark(((((i * 2 + j) * 2 + k) * 3 + l) * 2 + m) * 5 + n, 1);
        },
        2, 2, 2, 3, 2, 5);
    assert_true(c.exactly_once());
  }
  {
    Cover c(2 * 2 * 2 * 3 * 2 * 5);
    pthreadpool_parallelize_6d_tile_1d(
        pool,
        [&](size_t i, size_t j, size_t k, size_t l, size_t m, size_t n, size_t tn) {
          c.mark(((((i * 2 + j) * 2 + k) * 3 + l) * 2 + m) * 5 + n, tn);
        },
        2, 2, 2, 3, 2, 5, 3);
    assert_true(c.exactly_once());
  }
  {
    Cover c(2 * 2 * 2 * 3 * 2 * 5);
    pthreadpool_parallelize_6d_tile_2d(
        pool,
        [&](size_t i, size_t j, size_t k, size_t l, size_t m, size_t n, size_t tm, size_t tn) {
          for (size_t x = m; x < m + tm; x++) c.mark(((((i * 2 + j) * 2 + k) * 3 + l) * 2 + x) * 5 + n, tn);
        },
        2, 2, 2, 3, 2, 5, 2, 2);
    assert_true(c.exactly_once());
  }
}

// The dynamic overloads of the current interface: runs of whole tiles.
void every_dynamic_overload_covers_each_item_once(pthreadpool_t pool) {
  {
    Cover c(100);
    pthreadpool_parallelize_1d_tile_1d_dynamic(pool, [&](size_t i, size_t n) { c.mark(i, n); }, 100, 7);
    assert_true(c.exactly_once());
  }
  {
    Cover c(6 * 19);
    pthreadpool_parallelize_2d_tile_1d_dynamic(pool, [&](size_t i, size_t j, size_t nj) { c.mark(i * 19 + j, nj); },
                                               6, 19, 4);
    assert_true(c.exactly_once());
  }
  {
    Cover c(13 * 19);
    pthreadpool_parallelize_2d_tile_2d_dynamic(
        pool,
        [&](size_t i, size_t j, size_t ni, size_t nj) {
          for (size_t a = i; a < i + ni; a++) c.mark(a * 19 + j, nj);
        },
        13, 19, 3, 4);
    assert_true(c.exactly_once());
  }
  {
    Cover c(3 * 11 * 17);
    pthreadpool_parallelize_3d_tile_2d_dynamic(
        pool,
        [&](size_t i, size_t j, size_t k, size_t nj, size_t nk) {
          for (size_t b = j; b < j + nj; b++) c.mark((i * 11 + b) * 17 + k, nk);
        },
        3, 11, 17, 2, 5);
    assert_true(c.exactly_once());
  }
  {
    Cover c(2 * 3 * 11 * 17);
    pthreadpool_parallelize_4d_tile_2d_dynamic(
        pool,
        [&](size_t i, size_t j, size_t k, size_t l, size_t nk, size_t nl) {
          for (size_t x = k; x < k + nk; x++) c.mark(((i * 3 + j) * 11 + x) * 17 + l, nl);
        },
        2, 3, 11, 17, 2, 5);
    assert_true(c.exactly_once());
  }
}

// PthreadpoolExecutor: an application's executor as a class, here one that
// runs each task on a thread of its own (joined when the executor goes).
class thread_per_task : public PthreadpoolExecutor {
public:
  ~thread_per_task() override {
    for (auto &t : threads) t.join();
  }
  int NumThreads() override { return 1; }
  void Schedule(void *context, TaskFunction task) override {
    scheduled++;
    threads.emplace_back([context, task] { task(context); });
  }
  std::vector<std::thread> threads;
  std::atomic<int> scheduled{0};
};

void dynamic_overloads_cover_each_item_once(void **) {
  every_dynamic_overload_covers_each_item_once(nullptr);
  pthreadpool_t pool = pthreadpool_create(2);
  assert_non_null(pool);
  every_dynamic_overload_covers_each_item_once(pool);
  pthreadpool_destroy(pool);
}

void an_executor_class_lends_its_threads(void **) {
  thread_per_task executor;
  pthreadpool_t pool = pthreadpool_create_v2(&executor, executor.GetContext(), 4);
  assert_non_null(pool);
  assert_int_equal(pthreadpool_get_threads_count(pool), 2); // NumThreads() + 1
  every_dynamic_overload_covers_each_item_once(pool);
  assert_int_equal(executor.scheduled.load(), 5); // one borrowed thread per call
  pthreadpool_destroy(pool);
}

void functor_overloads_cover_each_item_once_with_a_null_pool(void **) {
  every_functor_overload_covers_each_item_once(nullptr);
}

void functor_overloads_cover_each_item_once_on_two_threads(void **) {
  pthreadpool_t pool = pthreadpool_create(2);
  assert_non_null(pool);
  every_functor_overload_covers_each_item_once(pool);
  pthreadpool_destroy(pool);
}

} // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(functor_overloads_cover_each_item_once_with_a_null_pool),
      cmocka_unit_test(functor_overloads_cover_each_item_once_on_two_threads),
      cmocka_unit_test(dynamic_overloads_cover_each_item_once),
      cmocka_unit_test(an_executor_class_lends_its_threads),
  };
  return cmocka_run_group_tests_name("pthreadpool C++ overloads", tests, nullptr, nullptr);
}
