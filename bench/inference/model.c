/* libcpuexec benchmarks: the inference-shaped model (see model.h).
 *
 * The GEMM is a plain blocked kernel: the output is cut into tiles of
 * 16 rows x 64 columns (1 x 64 when there is one row), each tile computed by
 * a 4 x 8 register block that streams one row of B per step of k. It is
 * nowhere near a tuned BLAS, but it is the same code for every backend, and
 * 64 x 512 x 512 gives 32 tiles: enough for 2 to 32 participants. The
 * vector type is GCC/Clang's, so the code vectorizes the same way whatever
 * the optimisation flags. */
#include "model.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef float v8f __attribute__((vector_size(32)));

#define TILE_M 16
#define TILE_N 64

struct model {
  float *x0;               /* input, tokens x hidden */
  float *w[3], *b[3];      /* hidden x hidden weights and their biases */
  float *gamma, *beta;     /* layer norm scale and shift */
  float *wh, *bh;          /* output head: hidden x vocab, vocab */
  float *h, *a, *r;        /* activations, tokens x hidden */
  float *logits, *out;     /* vocab */
};

/* ---- operators: each a range body over its own work items ------------- */

typedef struct gemm_op {
  const float *A, *B;
  float *C;
  int64_t M, N, K;
} gemm_op;

static int64_t gemm_tiles(const gemm_op *g) {
  int64_t tm = g->M == 1 ? 1 : (g->M + TILE_M - 1) / TILE_M;
  return tm * (g->N / TILE_N);
}

/* C[rows, 8 columns] = A[rows, :] * B[:, 8 columns], rows <= 4. */
static inline void micro(const gemm_op *g, int64_t i, int64_t rows, int64_t j) {
  const int64_t K = g->K, N = g->N;
  v8f c[4] = {{0}, {0}, {0}, {0}};
  const float *a = g->A + i * K;
  for (int64_t k = 0; k < K; k++) {
    v8f bv;
    memcpy(&bv, g->B + k * N + j, sizeof bv);
    for (int64_t r = 0; r < 4; r++)
      if (r < rows) c[r] += a[r * K + k] * bv;
  }
  for (int64_t r = 0; r < rows; r++) memcpy(g->C + (i + r) * N + j, &c[r], sizeof c[r]);
}

static int gemm_body(void *ctx, int64_t begin, int64_t end) {
  const gemm_op *g = ctx;
  int64_t tiles_n = g->N / TILE_N, tile_m = g->M == 1 ? 1 : TILE_M;
  for (int64_t t = begin; t < end; t++) {
    int64_t i0 = (t / tiles_n) * tile_m, j0 = (t % tiles_n) * TILE_N;
    int64_t i1 = i0 + tile_m < g->M ? i0 + tile_m : g->M;
    for (int64_t i = i0; i < i1; i += 4)
      for (int64_t j = j0; j < j0 + TILE_N; j += 8) micro(g, i, i1 - i < 4 ? i1 - i : 4, j);
  }
  return 0;
}

typedef struct rows_op {
  const float *in;
  float *out;
  const float *gamma, *beta; /* layer norm only */
  int64_t cols;
} rows_op;

static int layer_norm_body(void *ctx, int64_t begin, int64_t end) {
  const rows_op *o = ctx;
  for (int64_t row = begin; row < end; row++) {
    const float *x = o->in + row * o->cols;
    float *y = o->out + row * o->cols;
    float mean = 0.0f, var = 0.0f;
    for (int64_t c = 0; c < o->cols; c++) mean += x[c];
    mean /= (float)o->cols;
    for (int64_t c = 0; c < o->cols; c++) var += (x[c] - mean) * (x[c] - mean);
    float scale = 1.0f / sqrtf(var / (float)o->cols + 1e-5f);
    for (int64_t c = 0; c < o->cols; c++) y[c] = (x[c] - mean) * scale * o->gamma[c] + o->beta[c];
  }
  return 0;
}

static int softmax_body(void *ctx, int64_t begin, int64_t end) {
  const rows_op *o = ctx;
  for (int64_t row = begin; row < end; row++) {
    const float *x = o->in + row * o->cols;
    float *y = o->out + row * o->cols;
    float max = x[0], sum = 0.0f;
    for (int64_t c = 1; c < o->cols; c++) max = x[c] > max ? x[c] : max;
    for (int64_t c = 0; c < o->cols; c++) sum += y[c] = expf(x[c] - max);
    float inv = 1.0f / sum;
    for (int64_t c = 0; c < o->cols; c++) y[c] *= inv;
  }
  return 0;
}

typedef struct elem_op {
  float *y;
  const float *x;    /* add: y = x + z (x may be y) */
  const float *z;
  const float *bias; /* bias+GELU: y = gelu(y + bias[i % cols]); bias add: y += bias[i % cols] */
  int64_t cols;
} elem_op;

static int bias_gelu_body(void *ctx, int64_t begin, int64_t end) {
  const elem_op *o = ctx;
  for (int64_t i = begin; i < end; i++) {
    float v = o->y[i] + o->bias[i % o->cols];
    o->y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
  return 0;
}

static int bias_add_body(void *ctx, int64_t begin, int64_t end) {
  const elem_op *o = ctx;
  for (int64_t i = begin; i < end; i++) o->y[i] += o->bias[i % o->cols];
  return 0;
}

static int add_body(void *ctx, int64_t begin, int64_t end) {
  const elem_op *o = ctx;
  for (int64_t i = begin; i < end; i++) o->y[i] = o->x[i] + o->z[i];
  return 0;
}

/* ---- the model ------------------------------------------------------- */

static float *filled(int64_t n, uint32_t seed, float scale, float offset) {
  float *p = aligned_alloc(64, (size_t)n * sizeof *p);
  if (!p) return NULL;
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    p[i] = offset + scale * ((float)(s >> 8) / 16777216.0f - 0.5f);
  }
  return p;
}

model *model_create(void) {
  model *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  const int64_t th = MODEL_TOKENS * MODEL_HIDDEN, hh = MODEL_HIDDEN * MODEL_HIDDEN;
  bool ok = (m->x0 = filled(th, 1, 2.0f, 0.0f)) != NULL;
  for (int l = 0; l < 3; l++) {
    ok = ok && (m->w[l] = filled(hh, 10 + (uint32_t)l, 0.1f, 0.0f)) != NULL;
    ok = ok && (m->b[l] = filled(MODEL_HIDDEN, 20 + (uint32_t)l, 0.2f, 0.0f)) != NULL;
  }
  ok = ok && (m->gamma = filled(MODEL_HIDDEN, 30, 0.2f, 1.0f)) != NULL;
  ok = ok && (m->beta = filled(MODEL_HIDDEN, 31, 0.2f, 0.0f)) != NULL;
  ok = ok && (m->wh = filled((int64_t)MODEL_HIDDEN * MODEL_VOCAB, 40, 0.1f, 0.0f)) != NULL;
  ok = ok && (m->bh = filled(MODEL_VOCAB, 41, 0.2f, 0.0f)) != NULL;
  ok = ok && (m->h = filled(th, 50, 0.0f, 0.0f)) != NULL;
  ok = ok && (m->a = filled(th, 51, 0.0f, 0.0f)) != NULL;
  ok = ok && (m->r = filled(th, 52, 0.0f, 0.0f)) != NULL;
  ok = ok && (m->logits = filled(MODEL_VOCAB, 53, 0.0f, 0.0f)) != NULL;
  ok = ok && (m->out = filled(MODEL_VOCAB, 54, 0.0f, 0.0f)) != NULL;
  if (!ok) {
    model_destroy(m);
    return NULL;
  }
  return m;
}

void model_destroy(model *m) {
  if (!m) return;
  float *all[] = {m->x0, m->w[0], m->w[1], m->w[2], m->b[0], m->b[1], m->b[2], m->gamma, m->beta,
                  m->wh, m->bh,  m->h,   m->a,   m->r,   m->logits, m->out};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
  free(m);
}

const float *model_output(const model *m) { return m->out; }
const float *model_gemm_output(const model *m) { return m->a; }

static void op(model_for_fn run, void *runner, unsigned participants, int64_t items, bench_range_fn body,
               void *ctx) {
  run(runner, items, (items + participants - 1) / participants, body, ctx);
}

static void gemm(model_for_fn run, void *runner, unsigned p, const float *A, const float *B, float *C, int64_t M,
                 int64_t N) {
  gemm_op g = {A, B, C, M, N, MODEL_HIDDEN};
  op(run, runner, p, gemm_tiles(&g), gemm_body, &g);
}

static void layer_norm(model *m, model_for_fn run, void *runner, unsigned p, const float *in) {
  rows_op o = {in, m->h, m->gamma, m->beta, MODEL_HIDDEN};
  op(run, runner, p, MODEL_TOKENS, layer_norm_body, &o);
}

static void bias_gelu(model *m, model_for_fn run, void *runner, unsigned p, int l) {
  elem_op o = {m->a, NULL, NULL, m->b[l], MODEL_HIDDEN};
  op(run, runner, p, MODEL_TOKENS * MODEL_HIDDEN, bias_gelu_body, &o);
}

/* r = x + a */
static void residual(model *m, model_for_fn run, void *runner, unsigned p, const float *x) {
  elem_op o = {m->r, x, m->a, NULL, MODEL_HIDDEN};
  op(run, runner, p, MODEL_TOKENS * MODEL_HIDDEN, add_body, &o);
}

void model_infer(model *m, model_for_fn run, void *runner, unsigned p) {
  layer_norm(m, run, runner, p, m->x0);                                        /*  1 */
  gemm(run, runner, p, m->h, m->w[0], m->a, MODEL_TOKENS, MODEL_HIDDEN);        /*  2 */
  bias_gelu(m, run, runner, p, 0);                                             /*  3 */
  residual(m, run, runner, p, m->x0);                                          /*  4 */
  layer_norm(m, run, runner, p, m->r);                                         /*  5 */
  gemm(run, runner, p, m->h, m->w[1], m->a, MODEL_TOKENS, MODEL_HIDDEN);        /*  6 */
  rows_op attn = {m->a, m->a, NULL, NULL, MODEL_HIDDEN};
  op(run, runner, p, MODEL_TOKENS, softmax_body, &attn);                       /*  7 */
  residual(m, run, runner, p, m->r);                                           /*  8 */
  layer_norm(m, run, runner, p, m->r);                                         /*  9 */
  gemm(run, runner, p, m->h, m->w[2], m->a, MODEL_TOKENS, MODEL_HIDDEN);        /* 10 */
  bias_gelu(m, run, runner, p, 2);                                             /* 11 */
  residual(m, run, runner, p, m->r);                                           /* 12 */
  layer_norm(m, run, runner, p, m->r);                                         /* 13 */
  elem_op shift = {m->h, m->h, m->r, NULL, MODEL_HIDDEN};
  op(run, runner, p, MODEL_TOKENS * MODEL_HIDDEN, add_body, &shift);           /* 14 */
  layer_norm(m, run, runner, p, m->h);                                         /* 15 */
  /* The head reads the last token's row only. */
  gemm(run, runner, p, m->h + (MODEL_TOKENS - 1) * MODEL_HIDDEN, m->wh, m->logits, 1, MODEL_VOCAB); /* 16 */
  elem_op head = {m->logits, NULL, NULL, m->bh, MODEL_VOCAB};
  op(run, runner, p, MODEL_VOCAB, bias_add_body, &head);                       /* 17 */
  rows_op last = {m->logits, m->out, NULL, NULL, MODEL_VOCAB / 8};
  op(run, runner, p, 8, softmax_body, &last);                                  /* 18: 8 heads of 256 */
  elem_op scale = {m->out, m->out, m->out, NULL, MODEL_VOCAB};
  op(run, runner, p, MODEL_VOCAB, add_body, &scale);                           /* 19 */
  rows_op final = {m->out, m->out, NULL, NULL, MODEL_VOCAB};
  op(run, runner, p, 1, softmax_body, &final);                                 /* 20 */
}

double model_gemm(model *m, model_for_fn run, void *runner, unsigned p) {
  gemm(run, runner, p, m->x0, m->w[0], m->a, MODEL_TOKENS, MODEL_HIDDEN);
  return 2.0 * MODEL_TOKENS * MODEL_HIDDEN * MODEL_HIDDEN;
}
