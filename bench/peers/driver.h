/* libcpuexec benchmarks: the driver every backend shares.
 *
 * One program per backend (libcpuexec, libomp, libgomp, pthreadpool, oneTBB).
 * Each program is this driver (bench/peers/driver.c: main, timing, delay
 * calibration, the loop bodies, statistics) plus one small backend file that
 * implements the three functions below. So every backend runs the same
 * bodies, compiled once by the same compiler, through the same methodology;
 * only the way a loop is handed to the workers differs.
 *
 * The loop a backend runs is the serial loop
 *
 *     for (int64_t b = 0; b < n; b += chunk)
 *       body(ctx, b, min(b + chunk, n));
 *
 * made parallel over the benchmark's participants (the calling thread plus
 * participants - 1 workers). chunk is ceil(n / participants) by default, the
 * block a `schedule(static)` loop gives each thread; BENCH_GRAIN=1 passes 1
 * instead, for backends that choose their own split.
 *
 * Output protocol (read by bench/run.sh): one line per sample,
 *     M <backend> <metric> <unit> <value>
 * and lines starting with '#' for humans. A program exits non-zero when a
 * checksum is wrong or its backend cannot start. */
#ifndef CPUEXEC_BENCH_PEERS_DRIVER_H
#define CPUEXEC_BENCH_PEERS_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A loop body over the half-open range [begin, end); returns 0. The same
 * signature as cpuexec_range_fn, so the libcpuexec backend passes it as is. */
typedef int (*bench_range_fn)(void *ctx, int64_t begin, int64_t end);

/* Implemented by each backend file. */
extern const char bench_backend_name[];
/* Starts the backend with exactly `participants` participants, the caller
 * included. Returns 0, or non-zero after writing why into err. */
int bench_backend_init(unsigned participants, char *err, size_t err_size);
/* Runs the loop described above and returns when every range has finished. */
void bench_backend_for(int64_t n, int64_t chunk, bench_range_fn body, void *ctx);
void bench_backend_fini(void);

/* Used by the inference benchmark (bench/inference/inference.c) only. */
/* One line saying how the backend was set up and what it resolved to
 * (policy, runtime settings), printed next to every row it runs. */
void bench_backend_describe(char *buf, size_t size);
/* Optional (weak): a second, private pool of `participants` for the
 * concurrent-sessions row's "two pools" variant; backends without one run
 * both sessions on the one they have. NULL when it cannot start. */
void *bench_backend_pool_open(unsigned participants) __attribute__((weak));
void bench_backend_pool_for(void *pool, int64_t n, int64_t chunk, bench_range_fn body, void *ctx)
    __attribute__((weak));
void bench_backend_pool_close(void *pool) __attribute__((weak));

/* Used by the concurrent-callers benchmark (bench/callers.c). Optional
 * (weak): submits n independent tasks task(ctx, i), i = 0 .. n-1, one by
 * one from the calling thread, to the backend's pool, and returns when all
 * of them ran (libcpuexec: a task group; oneTBB: tbb::task_group; OpenMP:
 * tasks of one parallel region's single thread). */
typedef void (*bench_task_fn)(void *ctx, int64_t i);
void bench_backend_tasks(int64_t n, bench_task_fn task, void *ctx) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#endif
