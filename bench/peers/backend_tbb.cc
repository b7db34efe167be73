// libcpuexec benchmarks: the oneTBB backend.
//
// tbb::parallel_for over blocked_range(0, n, chunk) with the static
// partitioner (one contiguous block per thread, like schedule(static)), in
// the caller's implicit arena, with tbb::global_control limiting the process
// to `participants` threads (the caller and participants - 1 workers). No
// task_arena::execute per call: that is how TBB code usually calls, and the
// cheaper path.
#include "driver.h"

#include <cstdio>
#include <memory>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

extern "C" const char bench_backend_name[] = "tbb";

static std::unique_ptr<tbb::global_control> limit;

extern "C" int bench_backend_init(unsigned participants, char *err, size_t err_size) {
  limit.reset(new tbb::global_control(tbb::global_control::max_allowed_parallelism, participants));
  size_t active = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
  if (active != participants) {
    std::snprintf(err, err_size, "max_allowed_parallelism is %zu", active);
    return 1;
  }
  return 0;
}

extern "C" void bench_backend_for(int64_t n, int64_t chunk, bench_range_fn body, void *ctx) {
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, n, static_cast<size_t>(chunk)),
      [&](const tbb::blocked_range<int64_t> &r) { body(ctx, r.begin(), r.end()); }, tbb::static_partitioner());
}

extern "C" void bench_backend_describe(char *buf, size_t size) {
  std::snprintf(buf, size, "parallel_for blocked_range static_partitioner, global_control max_allowed_parallelism=%zu",
                tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
}

// The pool-per-caller variant (bench/callers.c, bench/inference.c): one
// task_arena of `participants` per caller, the same parallel_for inside it.
extern "C" void *bench_backend_pool_open(unsigned participants) {
  return new tbb::task_arena(static_cast<int>(participants));
}

extern "C" void bench_backend_pool_for(void *pool, int64_t n, int64_t chunk, bench_range_fn body, void *ctx) {
  static_cast<tbb::task_arena *>(pool)->execute([&] { bench_backend_for(n, chunk, body, ctx); });
}

extern "C" void bench_backend_pool_close(void *pool) { delete static_cast<tbb::task_arena *>(pool); }

// Tasks (bench/callers.c): one tbb::task_group, run() per task, wait().
extern "C" void bench_backend_tasks(int64_t n, bench_task_fn task, void *ctx) {
  tbb::task_group g;
  for (int64_t i = 0; i < n; i++) g.run([=] { task(ctx, i); });
  g.wait();
}

extern "C" void bench_backend_fini(void) { limit.reset(); }
