/* pthreadpool's API from libcpuexec through the CMake package. */
#include <pthreadpool.h>
#include <stdio.h>

static void add(void *ctx, size_t i) { __atomic_fetch_add((long *)ctx, (long)i, __ATOMIC_RELAXED); }

int main(void) {
  long sum = 0;
  pthreadpool_t pool = pthreadpool_create(2);
  pthreadpool_parallelize_1d(pool, add, &sum, 1000, 0);
  pthreadpool_destroy(pool);
  printf("pp_app: sum %ld\n", sum);
  return sum == 999L * 1000 / 2 ? 0 : 1;
}
