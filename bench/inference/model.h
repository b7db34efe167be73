/* libcpuexec benchmarks: a small inference-shaped model (bench/inference/model.c).
 *
 * A fixed sequence of operators over float tensors, as an inference engine
 * runs it: a layer norm, three GEMM layers of 64 tokens x 512 x 512 each
 * with bias+GELU or softmax rows, residual adds and layer norms between
 * them, then a 1 x 512 x 2048 output head, a bias add and a softmax; 20
 * operators per inference. Every operator is one parallel loop over its own
 * work items (output tiles for GEMM, rows for softmax and layer norm,
 * blocks of elements for the elementwise ones) handed to the backend's
 * bench_backend_for, so every backend runs the same machine code on the
 * same ranges.
 *
 * An element's value never depends on how the work items are split, so a
 * parallel inference equals the serial one bit for bit: that is how the
 * programs check themselves. */
#ifndef CPUEXEC_BENCH_MODEL_H
#define CPUEXEC_BENCH_MODEL_H

#include <stdint.h>

#include "../peers/driver.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MODEL_TOKENS 64
#define MODEL_HIDDEN 512
#define MODEL_VOCAB 2048
#define MODEL_OPERATORS 20

/* A parallel loop runner: runs body over [0, n) in ranges of `chunk` items
 * (the backend's bench_backend_for, or a session's own pool). */
typedef void (*model_for_fn)(void *runner, int64_t n, int64_t chunk, bench_range_fn body, void *ctx);

typedef struct model model;

/* The weights and activations, filled with fixed pseudo-random values.
 * NULL when out of memory. */
model *model_create(void);
void model_destroy(model *m);

/* One inference: MODEL_OPERATORS parallel loops through `run`, each split
 * into ceil(items / participants) items per range; the result is in
 * model_output(). */
void model_infer(model *m, model_for_fn run, void *runner, unsigned participants);
/* The output of the last inference (MODEL_VOCAB floats). */
const float *model_output(const model *m);

/* GEMM alone: C (64 x 512) = A (64 x 512) * B (512 x 512), one parallel
 * loop over its output tiles. Returns the floating-point operations. */
double model_gemm(model *m, model_for_fn run, void *runner, unsigned participants);
/* The GEMM's output (64 x 512 floats). */
const float *model_gemm_output(const model *m);

#ifdef __cplusplus
}
#endif

#endif
