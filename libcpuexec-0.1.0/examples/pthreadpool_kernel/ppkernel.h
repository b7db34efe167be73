/* ppkernel: a small kernel library written against pthreadpool's API only,
 * the way XNNPACK-style libraries are. It knows nothing of libcpuexec: built
 * with `pkg-config --cflags --libs cpuexec-pthreadpool` instead of
 * -lpthreadpool, its pool follows the libcpuexec session it runs in. */
#ifndef PPKERNEL_H
#define PPKERNEL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ppk_context ppk_context;

/* threads: as for pthreadpool_create (0: the default). NULL on failure. */
ppk_context *ppk_create(size_t threads);
void ppk_destroy(ppk_context *context);
/* The threads the kernels may use (pthreadpool_get_threads_count). */
size_t ppk_threads(const ppk_context *context);

/* out = alpha * a + b over a rows x cols row-major matrix, in 2D tiles.
 * Returns the number of distinct OS threads that ran tiles (for demos and
 * tests; a real kernel would not track it). */
size_t ppk_axpby(ppk_context *context, size_t rows, size_t cols, float alpha, const float *a, const float *b,
                 float *out);

#ifdef __cplusplus
}
#endif

#endif
