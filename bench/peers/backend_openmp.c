/* libcpuexec benchmarks: the OpenMP backend, one source for both runtimes.
 *
 * Built twice: with gcc -fopenmp (libgomp) and with clang -fopenmp=libomp
 * (LLVM libomp); BENCH_BACKEND_NAME names the result. The loop is
 * `parallel for schedule(static)` over the chunks, so each thread runs one
 * contiguous block, as the other backends do. Runtime settings (wait
 * policy, spin counts, block time) are the runtime's defaults. */
#include "driver.h"

#include <omp.h>
#include <stdio.h>

#ifndef BENCH_BACKEND_NAME
#error "define BENCH_BACKEND_NAME (libgomp or libomp)"
#endif

const char bench_backend_name[] = BENCH_BACKEND_NAME;

static int team;

int bench_backend_init(unsigned participants, char *err, size_t err_size) {
  team = (int)participants;
  omp_set_dynamic(0);
  omp_set_num_threads(team);
  int got = 0;
#pragma omp parallel num_threads(team)
  {
#pragma omp single
    got = omp_get_num_threads();
  }
  if (got != team) {
    snprintf(err, err_size, "the team has %d threads", got);
    return 1;
  }
  return 0;
}

void bench_backend_for(int64_t n, int64_t chunk, bench_range_fn body, void *ctx) {
  int64_t chunks = (n + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) num_threads(team)
  for (int64_t c = 0; c < chunks; c++) {
    int64_t begin = c * chunk, end = begin + chunk < n ? begin + chunk : n;
    body(ctx, begin, end);
  }
}

void bench_backend_describe(char *buf, size_t size) {
  snprintf(buf, size, "%s: parallel for schedule(static) num_threads(%d), runtime defaults (OMP_*/KMP_*/GOMP_* unset)",
           BENCH_BACKEND_NAME, team);
}

/* Tasks (bench/callers.c): the single thread of one parallel region
 * creates them; the region's end waits for them. */
void bench_backend_tasks(int64_t n, bench_task_fn task, void *ctx) {
#pragma omp parallel num_threads(team)
  {
#pragma omp single
    {
      for (int64_t i = 0; i < n; i++) {
#pragma omp task firstprivate(i)
        task(ctx, i);
      }
    }
  }
}

void bench_backend_fini(void) {}
