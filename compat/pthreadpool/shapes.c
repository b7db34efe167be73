/* libcpuexec-pthreadpool: every pthreadpool_parallelize_* shape.
 *
 * Each shape is three loops over the grid (engine.h): the serial run, the
 * owner's claiming walk and the single stolen item. They differ only in
 * how the user's function is called, so one macro writes them from the
 * call expression. Inside the loops `pos[d]` is the item's coordinate along
 * dimension d and PP_TILE(d) the size of its tile there; the grid is copied
 * into locals so it stays in registers across the user's calls. */
#include "engine_private.h"

#define PP_ALWAYS_INLINE static inline __attribute__((always_inline))

/* pos = the coordinates of item flat (divisions: only once per walk, or per
 * stolen item). */
PP_ALWAYS_INLINE void pp_decompose(const cpuexec__pp_task *t, size_t flat, size_t *pos, int n) {
  for (int d = n - 1; d > 0; d--) {
    size_t q = flat / t->tiles[d];
    pos[d] = (flat - q * t->tiles[d]) * t->tile[d];
    flat = q;
  }
  pos[0] = flat * t->tile[0];
}

/* pos = the coordinates of the next item, the last dimension fastest. */
PP_ALWAYS_INLINE void pp_advance(size_t *pos, const size_t *range, const size_t *tile, int n) {
  for (int d = n - 1; d > 0; d--) {
    pos[d] += tile[d];
    if (pos[d] < range[d])
      return;
    pos[d] = 0;
  }
  pos[0] += tile[0];
}

#define PP_TILE(d) (tile[d] < range[d] - pos[d] ? tile[d] : range[d] - pos[d])

#define PP_LOCALS(N, FN_T)                                                                                    \
  FN_T const fn = (FN_T)t->fn;                                                                                 \
  void *const ctx = t->context;                                                                                \
  const uint32_t uarch = t->uarch_index;                                                                       \
  size_t range[N], tile[N], pos[N];                                                                            \
  for (int d_ = 0; d_ < (N); d_++) {                                                                           \
    range[d_] = t->range[d_];                                                                                  \
    tile[d_] = t->tile[d_];                                                                                    \
  }                                                                                                            \
  (void)range, (void)tile, (void)uarch;                                                                        \
  (void)thread

#define PP_SHAPE(name, N, FN_T, CALL)                                                                          \
  static void name##_run(const cpuexec__pp_task *t, size_t thread, size_t first, size_t count) {              \
    PP_LOCALS(N, FN_T);                                                                                        \
    pp_decompose(t, first, pos, N);                                                                            \
    for (; count > 0; count--) {                                                                               \
      CALL;                                                                                                    \
      pp_advance(pos, range, tile, N);                                                                         \
    }                                                                                                          \
  }                                                                                                            \
  static void name##_own(const cpuexec__pp_task *t, size_t thread, cpuexec__pp_slot *slot) {                  \
    if (!cpuexec__pp_claim(slot))                                                                              \
      return;                                                                                                  \
    PP_LOCALS(N, FN_T);                                                                                        \
    pp_decompose(t, slot->begin, pos, N);                                                                      \
    do {                                                                                                       \
      CALL;                                                                                                    \
      pp_advance(pos, range, tile, N);                                                                         \
    } while (cpuexec__pp_claim(slot));                                                                         \
  }                                                                                                            \
  static void name##_one(const cpuexec__pp_task *t, size_t thread, size_t flat) {                             \
    PP_LOCALS(N, FN_T);                                                                                        \
    pp_decompose(t, flat, pos, N);                                                                             \
    CALL;                                                                                                      \
  }                                                                                                            \
  static const cpuexec__pp_shape name = {name##_run, name##_own, name##_one, NULL}

/* A dynamic shape of N dimensions: the last one dynamic, and with DYN2 the
 * one before it too. A run of tiles stops where a row of the last dimension
 * ends; with DYN2 and a last dimension of one tile it runs along the one
 * before instead (each call then spans the whole last dimension), within
 * the same outer coordinates. CALL sees the counts as N_PREV and N_LAST. */
#define PP_PREV(N) ((N) >= 2 ? (N) - 2 : 0)
#define PP_DYNAMIC(name, N, DYN2, FN_T, CALL)                                                                 \
  static void name##_chunk(const cpuexec__pp_task *t, size_t thread, size_t first, size_t count) {            \
    PP_LOCALS(N, FN_T);                                                                                        \
    while (count > 0) {                                                                                        \
      size_t run, N_PREV, N_LAST;                                                                              \
      pp_decompose(t, first, pos, N);                                                                          \
      if ((DYN2) && t->tiles[(N) - 1] == 1) {                                                                  \
        size_t left = t->tiles[PP_PREV(N)] - pos[PP_PREV(N)] / tile[PP_PREV(N)];                               \
        run = count < left ? count : left;                                                                     \
        N_PREV = run * tile[PP_PREV(N)] < range[PP_PREV(N)] - pos[PP_PREV(N)] ? run * tile[PP_PREV(N)]         \
                                                                               : range[PP_PREV(N)] - pos[PP_PREV(N)]; \
        N_LAST = range[(N) - 1];                                                                               \
      } else {                                                                                                 \
        size_t left = t->tiles[(N) - 1] - pos[(N) - 1] / tile[(N) - 1];                                        \
        run = count < left ? count : left;                                                                     \
        N_LAST = run * tile[(N) - 1] < range[(N) - 1] - pos[(N) - 1] ? run * tile[(N) - 1]                     \
                                                                     : range[(N) - 1] - pos[(N) - 1];          \
        N_PREV = PP_TILE(PP_PREV(N));                                                                          \
      }                                                                                                        \
      (void)N_PREV;                                                                                            \
      CALL;                                                                                                    \
      first += run;                                                                                            \
      count -= run;                                                                                            \
    }                                                                                                          \
  }                                                                                                            \
  static const cpuexec__pp_shape name = {NULL, NULL, NULL, name##_chunk}

#define P0 pos[0]
#define P1 pos[1]
#define P2 pos[2]
#define P3 pos[3]
#define P4 pos[4]
#define P5 pos[5]

PP_SHAPE(pp_1d, 1, pthreadpool_task_1d_t, fn(ctx, P0));
PP_SHAPE(pp_1d_with_thread, 1, pthreadpool_task_1d_with_thread_t, fn(ctx, thread, P0));
PP_SHAPE(pp_1d_with_uarch, 1, pthreadpool_task_1d_with_id_t, fn(ctx, uarch, P0));
PP_SHAPE(pp_1d_tile_1d, 1, pthreadpool_task_1d_tile_1d_t, fn(ctx, P0, PP_TILE(0)));
PP_SHAPE(pp_2d, 2, pthreadpool_task_2d_t, fn(ctx, P0, P1));
PP_SHAPE(pp_2d_with_thread, 2, pthreadpool_task_2d_with_thread_t, fn(ctx, thread, P0, P1));
PP_SHAPE(pp_2d_tile_1d, 2, pthreadpool_task_2d_tile_1d_t, fn(ctx, P0, P1, PP_TILE(1)));
PP_SHAPE(pp_2d_tile_2d, 2, pthreadpool_task_2d_tile_2d_t, fn(ctx, P0, P1, PP_TILE(0), PP_TILE(1)));
PP_SHAPE(pp_2d_tile_2d_with_uarch, 2, pthreadpool_task_2d_tile_2d_with_id_t,
         fn(ctx, uarch, P0, P1, PP_TILE(0), PP_TILE(1)));
PP_SHAPE(pp_3d, 3, pthreadpool_task_3d_t, fn(ctx, P0, P1, P2));
PP_SHAPE(pp_3d_tile_1d, 3, pthreadpool_task_3d_tile_1d_t, fn(ctx, P0, P1, P2, PP_TILE(2)));
PP_SHAPE(pp_3d_tile_1d_with_thread, 3, pthreadpool_task_3d_tile_1d_with_thread_t,
         fn(ctx, thread, P0, P1, P2, PP_TILE(2)));
PP_SHAPE(pp_3d_tile_2d, 3, pthreadpool_task_3d_tile_2d_t, fn(ctx, P0, P1, P2, PP_TILE(1), PP_TILE(2)));
PP_SHAPE(pp_3d_tile_2d_with_uarch, 3, pthreadpool_task_3d_tile_2d_with_id_t,
         fn(ctx, uarch, P0, P1, P2, PP_TILE(1), PP_TILE(2)));
PP_SHAPE(pp_3d_tile_3d, 3, pthreadpool_function_3d_tiled_t,
         fn(ctx, P0, P1, P2, PP_TILE(0), PP_TILE(1), PP_TILE(2)));
PP_SHAPE(pp_4d, 4, pthreadpool_task_4d_t, fn(ctx, P0, P1, P2, P3));
PP_SHAPE(pp_4d_tile_1d, 4, pthreadpool_task_4d_tile_1d_t, fn(ctx, P0, P1, P2, P3, PP_TILE(3)));
PP_SHAPE(pp_4d_tile_2d, 4, pthreadpool_task_4d_tile_2d_t, fn(ctx, P0, P1, P2, P3, PP_TILE(2), PP_TILE(3)));
PP_SHAPE(pp_4d_tile_2d_with_uarch, 4, pthreadpool_task_4d_tile_2d_with_id_t,
         fn(ctx, uarch, P0, P1, P2, P3, PP_TILE(2), PP_TILE(3)));
PP_SHAPE(pp_4d_tile_4d, 4, pthreadpool_function_4d_tiled_t,
         fn(ctx, P0, P1, P2, P3, PP_TILE(0), PP_TILE(1), PP_TILE(2), PP_TILE(3)));
PP_SHAPE(pp_5d, 5, pthreadpool_task_5d_t, fn(ctx, P0, P1, P2, P3, P4));
PP_SHAPE(pp_5d_tile_1d, 5, pthreadpool_task_5d_tile_1d_t, fn(ctx, P0, P1, P2, P3, P4, PP_TILE(4)));
PP_SHAPE(pp_5d_tile_2d, 5, pthreadpool_task_5d_tile_2d_t,
         fn(ctx, P0, P1, P2, P3, P4, PP_TILE(3), PP_TILE(4)));
PP_SHAPE(pp_6d, 6, pthreadpool_task_6d_t, fn(ctx, P0, P1, P2, P3, P4, P5));
PP_SHAPE(pp_6d_tile_1d, 6, pthreadpool_task_6d_tile_1d_t, fn(ctx, P0, P1, P2, P3, P4, P5, PP_TILE(5)));
PP_SHAPE(pp_6d_tile_2d, 6, pthreadpool_task_6d_tile_2d_t,
         fn(ctx, P0, P1, P2, P3, P4, P5, PP_TILE(4), PP_TILE(5)));

/* The uarch shapes of the current interface (the thread index is a size_t). */
PP_SHAPE(pp_2d_tile_1d_with_uarch, 2, pthreadpool_task_2d_tile_1d_with_id_t, fn(ctx, uarch, P0, P1, PP_TILE(1)));
PP_SHAPE(pp_2d_tile_1d_with_uarch_with_thread, 2, pthreadpool_task_2d_tile_1d_with_id_with_thread_t,
         fn(ctx, uarch, thread, P0, P1, PP_TILE(1)));
PP_SHAPE(pp_3d_tile_1d_with_uarch, 3, pthreadpool_task_3d_tile_1d_with_id_t,
         fn(ctx, uarch, P0, P1, P2, PP_TILE(2)));
PP_SHAPE(pp_3d_tile_1d_with_uarch_with_thread, 3, pthreadpool_task_3d_tile_1d_with_id_with_thread_t,
         fn(ctx, uarch, thread, P0, P1, P2, PP_TILE(2)));

/* The dynamic shapes; a with_id thread index is a uint32_t (participants
 * are counted in int32_t, so it fits). */
#define T32 ((uint32_t)thread)
PP_DYNAMIC(pp_1d_dyn, 1, 0, pthreadpool_task_1d_tile_1d_dynamic_t, fn(ctx, P0, N_LAST));
PP_DYNAMIC(pp_1d_dyn_thread, 1, 0, pthreadpool_task_1d_tile_1d_dynamic_with_id_t, fn(ctx, T32, P0, N_LAST));
PP_DYNAMIC(pp_1d_dyn_uarch_thread, 1, 0, pthreadpool_task_1d_tile_1d_dynamic_with_id_with_thread_t,
           fn(ctx, uarch, thread, P0, N_LAST));
PP_DYNAMIC(pp_2d_tile_1d_dyn, 2, 0, pthreadpool_task_2d_tile_1d_dynamic_t, fn(ctx, P0, P1, N_LAST));
PP_DYNAMIC(pp_2d_tile_1d_dyn_thread, 2, 0, pthreadpool_task_2d_tile_1d_dynamic_with_id_t,
           fn(ctx, T32, P0, P1, N_LAST));
PP_DYNAMIC(pp_2d_tile_1d_dyn_uarch_thread, 2, 0, pthreadpool_task_2d_tile_1d_dynamic_with_id_with_thread_t,
           fn(ctx, uarch, thread, P0, P1, N_LAST));
PP_DYNAMIC(pp_2d_tile_2d_dyn, 2, 1, pthreadpool_task_2d_tile_2d_dynamic_t, fn(ctx, P0, P1, N_PREV, N_LAST));
PP_DYNAMIC(pp_2d_tile_2d_dyn_uarch, 2, 1, pthreadpool_task_2d_tile_2d_dynamic_with_id_t,
           fn(ctx, uarch, P0, P1, N_PREV, N_LAST));
PP_DYNAMIC(pp_2d_tile_2d_dyn_thread, 2, 1, pthreadpool_task_2d_tile_2d_dynamic_with_id_t,
           fn(ctx, T32, P0, P1, N_PREV, N_LAST));
PP_DYNAMIC(pp_3d_tile_1d_dyn, 3, 0, pthreadpool_task_3d_tile_1d_dynamic_t, fn(ctx, P0, P1, P2, N_LAST));
PP_DYNAMIC(pp_3d_tile_1d_dyn_thread, 3, 0, pthreadpool_task_3d_tile_1d_dynamic_with_id_t,
           fn(ctx, T32, P0, P1, P2, N_LAST));
PP_DYNAMIC(pp_3d_tile_1d_dyn_uarch_thread, 3, 0, pthreadpool_task_3d_tile_1d_dynamic_with_id_with_thread_t,
           fn(ctx, uarch, thread, P0, P1, P2, N_LAST));
PP_DYNAMIC(pp_3d_tile_2d_dyn, 3, 1, pthreadpool_task_3d_tile_2d_dynamic_t, fn(ctx, P0, P1, P2, N_PREV, N_LAST));
PP_DYNAMIC(pp_3d_tile_2d_dyn_uarch, 3, 1, pthreadpool_task_3d_tile_2d_dynamic_with_id_t,
           fn(ctx, uarch, P0, P1, P2, N_PREV, N_LAST));
PP_DYNAMIC(pp_3d_tile_2d_dyn_thread, 3, 1, pthreadpool_task_3d_tile_2d_dynamic_with_id_t,
           fn(ctx, T32, P0, P1, P2, N_PREV, N_LAST));
PP_DYNAMIC(pp_4d_tile_2d_dyn, 4, 1, pthreadpool_task_4d_tile_2d_dynamic_t,
           fn(ctx, P0, P1, P2, P3, N_PREV, N_LAST));
PP_DYNAMIC(pp_4d_tile_2d_dyn_uarch, 4, 1, pthreadpool_task_4d_tile_2d_dynamic_with_id_t,
           fn(ctx, uarch, P0, P1, P2, P3, N_PREV, N_LAST));

/* Builds the task on the caller's stack and runs it. */
static void pp_go(pthreadpool_t pool, const cpuexec__pp_shape *shape, void (*fn)(void), void *context,
                  uint32_t uarch_index, uint32_t dims, const size_t *range, const size_t *tile, uint32_t flags) {
  if (fn == NULL) /* no error return in this API: nothing to call, so nothing runs */
    return;
  cpuexec__pp_task task;
  task.shape = shape;
  task.fn = fn;
  task.context = context;
  task.uarch_index = uarch_index;
  cpuexec__pp_task_grid(&task, dims, range, tile);
  cpuexec__pp_run(pool, &task, flags);
}

#define PP_FN(f) ((void (*)(void))(f))

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_1d(pthreadpool_t threadpool, pthreadpool_task_1d_t function,
                                                   void *context, size_t range, uint32_t flags) {
  pp_go(threadpool, &pp_1d, PP_FN(function), context, 0, 1, (size_t[]){range}, NULL, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_1d_with_thread(pthreadpool_t threadpool,
                                                               pthreadpool_task_1d_with_thread_t function,
                                                               void *context, size_t range, uint32_t flags) {
  pp_go(threadpool, &pp_1d_with_thread, PP_FN(function), context, 0, 1, (size_t[]){range}, NULL, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_1d_with_uarch(pthreadpool_t threadpool,
                                                              pthreadpool_task_1d_with_id_t function, void *context,
                                                              uint32_t default_uarch_index,
                                                              uint32_t max_uarch_index, size_t range,
                                                              uint32_t flags) {
  (void)max_uarch_index;
  pp_go(threadpool, &pp_1d_with_uarch, PP_FN(function), context, default_uarch_index, 1, (size_t[]){range}, NULL,
        flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_1d_tile_1d(pthreadpool_t threadpool,
                                                           pthreadpool_task_1d_tile_1d_t function, void *context,
                                                           size_t range, size_t tile, uint32_t flags) {
  pp_go(threadpool, &pp_1d_tile_1d, PP_FN(function), context, 0, 1, (size_t[]){range}, (size_t[]){tile}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_2d(pthreadpool_t threadpool, pthreadpool_task_2d_t function,
                                                   void *context, size_t range_i, size_t range_j, uint32_t flags) {
  pp_go(threadpool, &pp_2d, PP_FN(function), context, 0, 2, (size_t[]){range_i, range_j}, NULL, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_2d_with_thread(pthreadpool_t threadpool,
                                                               pthreadpool_task_2d_with_thread_t function,
                                                               void *context, size_t range_i, size_t range_j,
                                                               uint32_t flags) {
  pp_go(threadpool, &pp_2d_with_thread, PP_FN(function), context, 0, 2, (size_t[]){range_i, range_j}, NULL,
        flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_2d_tile_1d(pthreadpool_t threadpool,
                                                           pthreadpool_task_2d_tile_1d_t function, void *context,
                                                           size_t range_i, size_t range_j, size_t tile_j,
                                                           uint32_t flags) {
  pp_go(threadpool, &pp_2d_tile_1d, PP_FN(function), context, 0, 2, (size_t[]){range_i, range_j},
        (size_t[]){1, tile_j}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_2d_tile_2d(pthreadpool_t threadpool,
                                                           pthreadpool_task_2d_tile_2d_t function, void *context,
                                                           size_t range_i, size_t range_j, size_t tile_i,
                                                           size_t tile_j, uint32_t flags) {
  pp_go(threadpool, &pp_2d_tile_2d, PP_FN(function), context, 0, 2, (size_t[]){range_i, range_j},
        (size_t[]){tile_i, tile_j}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_2d_tile_2d_with_uarch(
    pthreadpool_t threadpool, pthreadpool_task_2d_tile_2d_with_id_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t tile_i,
    size_t tile_j, uint32_t flags) {
  (void)max_uarch_index;
  pp_go(threadpool, &pp_2d_tile_2d_with_uarch, PP_FN(function), context, default_uarch_index, 2,
        (size_t[]){range_i, range_j}, (size_t[]){tile_i, tile_j}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_3d(pthreadpool_t threadpool, pthreadpool_task_3d_t function,
                                                   void *context, size_t range_i, size_t range_j, size_t range_k,
                                                   uint32_t flags) {
  pp_go(threadpool, &pp_3d, PP_FN(function), context, 0, 3, (size_t[]){range_i, range_j, range_k}, NULL, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_3d_tile_1d(pthreadpool_t threadpool,
                                                           pthreadpool_task_3d_tile_1d_t function, void *context,
                                                           size_t range_i, size_t range_j, size_t range_k,
                                                           size_t tile_k, uint32_t flags) {
  pp_go(threadpool, &pp_3d_tile_1d, PP_FN(function), context, 0, 3, (size_t[]){range_i, range_j, range_k},
        (size_t[]){1, 1, tile_k}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_3d_tile_1d_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_3d_tile_1d_with_thread_t function, void *context, size_t range_i,
    size_t range_j, size_t range_k, size_t tile_k, uint32_t flags) {
  pp_go(threadpool, &pp_3d_tile_1d_with_thread, PP_FN(function), context, 0, 3,
        (size_t[]){range_i, range_j, range_k}, (size_t[]){1, 1, tile_k}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_3d_tile_2d(pthreadpool_t threadpool,
                                                           pthreadpool_task_3d_tile_2d_t function, void *context,
                                                           size_t range_i, size_t range_j, size_t range_k,
                                                           size_t tile_j, size_t tile_k, uint32_t flags) {
  pp_go(threadpool, &pp_3d_tile_2d, PP_FN(function), context, 0, 3, (size_t[]){range_i, range_j, range_k},
        (size_t[]){1, tile_j, tile_k}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_3d_tile_2d_with_uarch(
    pthreadpool_t threadpool, pthreadpool_task_3d_tile_2d_with_id_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t range_k,
    size_t tile_j, size_t tile_k, uint32_t flags) {
  (void)max_uarch_index;
  pp_go(threadpool, &pp_3d_tile_2d_with_uarch, PP_FN(function), context, default_uarch_index, 3,
        (size_t[]){range_i, range_j, range_k}, (size_t[]){1, tile_j, tile_k}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_4d(pthreadpool_t threadpool, pthreadpool_task_4d_t function,
                                                   void *context, size_t range_i, size_t range_j, size_t range_k,
                                                   size_t range_l, uint32_t flags) {
  pp_go(threadpool, &pp_4d, PP_FN(function), context, 0, 4, (size_t[]){range_i, range_j, range_k, range_l}, NULL,
        flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_4d_tile_1d(pthreadpool_t threadpool,
                                                           pthreadpool_task_4d_tile_1d_t function, void *context,
                                                           size_t range_i, size_t range_j, size_t range_k,
                                                           size_t range_l, size_t tile_l, uint32_t flags) {
  pp_go(threadpool, &pp_4d_tile_1d, PP_FN(function), context, 0, 4,
        (size_t[]){range_i, range_j, range_k, range_l}, (size_t[]){1, 1, 1, tile_l}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_4d_tile_2d(pthreadpool_t threadpool,
                                                           pthreadpool_task_4d_tile_2d_t function, void *context,
                                                           size_t range_i, size_t range_j, size_t range_k,
                                                           size_t range_l, size_t tile_k, size_t tile_l,
                                                           uint32_t flags) {
  pp_go(threadpool, &pp_4d_tile_2d, PP_FN(function), context, 0, 4,
        (size_t[]){range_i, range_j, range_k, range_l}, (size_t[]){1, 1, tile_k, tile_l}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_4d_tile_2d_with_uarch(
    pthreadpool_t threadpool, pthreadpool_task_4d_tile_2d_with_id_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t range_k,
    size_t range_l, size_t tile_k, size_t tile_l, uint32_t flags) {
  (void)max_uarch_index;
  pp_go(threadpool, &pp_4d_tile_2d_with_uarch, PP_FN(function), context, default_uarch_index, 4,
        (size_t[]){range_i, range_j, range_k, range_l}, (size_t[]){1, 1, tile_k, tile_l}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_5d(pthreadpool_t threadpool, pthreadpool_task_5d_t function,
                                                   void *context, size_t range_i, size_t range_j, size_t range_k,
                                                   size_t range_l, size_t range_m, uint32_t flags) {
  pp_go(threadpool, &pp_5d, PP_FN(function), context, 0, 5,
        (size_t[]){range_i, range_j, range_k, range_l, range_m}, NULL, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_5d_tile_1d(pthreadpool_t threadpool,
                                                           pthreadpool_task_5d_tile_1d_t function, void *context,
                                                           size_t range_i, size_t range_j, size_t range_k,
                                                           size_t range_l, size_t range_m, size_t tile_m,
                                                           uint32_t flags) {
  pp_go(threadpool, &pp_5d_tile_1d, PP_FN(function), context, 0, 5,
        (size_t[]){range_i, range_j, range_k, range_l, range_m}, (size_t[]){1, 1, 1, 1, tile_m}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_5d_tile_2d(pthreadpool_t threadpool,
                                                           pthreadpool_task_5d_tile_2d_t function, void *context,
                                                           size_t range_i, size_t range_j, size_t range_k,
                                                           size_t range_l, size_t range_m, size_t tile_l,
                                                           size_t tile_m, uint32_t flags) {
  pp_go(threadpool, &pp_5d_tile_2d, PP_FN(function), context, 0, 5,
        (size_t[]){range_i, range_j, range_k, range_l, range_m}, (size_t[]){1, 1, 1, tile_l, tile_m}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_6d(pthreadpool_t threadpool, pthreadpool_task_6d_t function,
                                                   void *context, size_t range_i, size_t range_j, size_t range_k,
                                                   size_t range_l, size_t range_m, size_t range_n,
                                                   uint32_t flags) {
  pp_go(threadpool, &pp_6d, PP_FN(function), context, 0, 6,
        (size_t[]){range_i, range_j, range_k, range_l, range_m, range_n}, NULL, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_6d_tile_1d(pthreadpool_t threadpool,
                                                           pthreadpool_task_6d_tile_1d_t function, void *context,
                                                           size_t range_i, size_t range_j, size_t range_k,
                                                           size_t range_l, size_t range_m, size_t range_n,
                                                           size_t tile_n, uint32_t flags) {
  pp_go(threadpool, &pp_6d_tile_1d, PP_FN(function), context, 0, 6,
        (size_t[]){range_i, range_j, range_k, range_l, range_m, range_n}, (size_t[]){1, 1, 1, 1, 1, tile_n},
        flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_6d_tile_2d(pthreadpool_t threadpool,
                                                           pthreadpool_task_6d_tile_2d_t function, void *context,
                                                           size_t range_i, size_t range_j, size_t range_k,
                                                           size_t range_l, size_t range_m, size_t range_n,
                                                           size_t tile_m, size_t tile_n, uint32_t flags) {
  pp_go(threadpool, &pp_6d_tile_2d, PP_FN(function), context, 0, 6,
        (size_t[]){range_i, range_j, range_k, range_l, range_m, range_n}, (size_t[]){1, 1, 1, 1, tile_m, tile_n},
        flags);
}

/* The deprecated compute_* interface: the same loops without flags. */

CPUEXEC__PP_EXPORT void pthreadpool_compute_1d(pthreadpool_t threadpool, pthreadpool_function_1d_t function,
                                               void *argument, size_t range) {
  pp_go(threadpool, &pp_1d, PP_FN(function), argument, 0, 1, (size_t[]){range}, NULL, 0);
}

CPUEXEC__PP_EXPORT void pthreadpool_compute_1d_tiled(pthreadpool_t threadpool,
                                                     pthreadpool_function_1d_tiled_t function, void *argument,
                                                     size_t range, size_t tile) {
  pp_go(threadpool, &pp_1d_tile_1d, PP_FN(function), argument, 0, 1, (size_t[]){range}, (size_t[]){tile}, 0);
}

CPUEXEC__PP_EXPORT void pthreadpool_compute_2d(pthreadpool_t threadpool, pthreadpool_function_2d_t function,
                                               void *argument, size_t range_i, size_t range_j) {
  pp_go(threadpool, &pp_2d, PP_FN(function), argument, 0, 2, (size_t[]){range_i, range_j}, NULL, 0);
}

CPUEXEC__PP_EXPORT void pthreadpool_compute_2d_tiled(pthreadpool_t threadpool,
                                                     pthreadpool_function_2d_tiled_t function, void *argument,
                                                     size_t range_i, size_t range_j, size_t tile_i,
                                                     size_t tile_j) {
  pp_go(threadpool, &pp_2d_tile_2d, PP_FN(function), argument, 0, 2, (size_t[]){range_i, range_j},
        (size_t[]){tile_i, tile_j}, 0);
}

CPUEXEC__PP_EXPORT void pthreadpool_compute_3d_tiled(pthreadpool_t threadpool,
                                                     pthreadpool_function_3d_tiled_t function, void *argument,
                                                     size_t range_i, size_t range_j, size_t range_k, size_t tile_i,
                                                     size_t tile_j, size_t tile_k) {
  pp_go(threadpool, &pp_3d_tile_3d, PP_FN(function), argument, 0, 3, (size_t[]){range_i, range_j, range_k},
        (size_t[]){tile_i, tile_j, tile_k}, 0);
}

CPUEXEC__PP_EXPORT void pthreadpool_compute_4d_tiled(pthreadpool_t threadpool,
                                                     pthreadpool_function_4d_tiled_t function, void *argument,
                                                     size_t range_i, size_t range_j, size_t range_k,
                                                     size_t range_l, size_t tile_i, size_t tile_j, size_t tile_k,
                                                     size_t tile_l) {
  pp_go(threadpool, &pp_4d_tile_4d, PP_FN(function), argument, 0, 4,
        (size_t[]){range_i, range_j, range_k, range_l}, (size_t[]){tile_i, tile_j, tile_k, tile_l}, 0);
}

/* The functions of the current interface beyond Debian's: the uarch shapes
 * with a tile along the last dimension, and the dynamic tilings. */

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_2d_tile_1d_with_uarch(
    pthreadpool_t threadpool, pthreadpool_task_2d_tile_1d_with_id_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t tile_j,
    uint32_t flags) {
  (void)max_uarch_index;
  pp_go(threadpool, &pp_2d_tile_1d_with_uarch, PP_FN(function), context, default_uarch_index, 2,
        (size_t[]){range_i, range_j}, (size_t[]){1, tile_j}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_2d_tile_1d_with_uarch_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_2d_tile_1d_with_id_with_thread_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t tile_j,
    uint32_t flags) {
  (void)max_uarch_index;
  pp_go(threadpool, &pp_2d_tile_1d_with_uarch_with_thread, PP_FN(function), context, default_uarch_index, 2,
        (size_t[]){range_i, range_j}, (size_t[]){1, tile_j}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_3d_tile_1d_with_uarch(
    pthreadpool_t threadpool, pthreadpool_task_3d_tile_1d_with_id_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t range_k,
    size_t tile_k, uint32_t flags) {
  (void)max_uarch_index;
  pp_go(threadpool, &pp_3d_tile_1d_with_uarch, PP_FN(function), context, default_uarch_index, 3,
        (size_t[]){range_i, range_j, range_k}, (size_t[]){1, 1, tile_k}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_3d_tile_1d_with_uarch_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_3d_tile_1d_with_id_with_thread_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t range_k,
    size_t tile_k, uint32_t flags) {
  (void)max_uarch_index;
  pp_go(threadpool, &pp_3d_tile_1d_with_uarch_with_thread, PP_FN(function), context, default_uarch_index, 3,
        (size_t[]){range_i, range_j, range_k}, (size_t[]){1, 1, tile_k}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_1d_tile_1d_dynamic(pthreadpool_t threadpool,
                                                                   pthreadpool_task_1d_tile_1d_dynamic_t function,
                                                                   void *context, size_t range, size_t tile,
                                                                   uint32_t flags) {
  pp_go(threadpool, &pp_1d_dyn, PP_FN(function), context, 0, 1, (size_t[]){range}, (size_t[]){tile}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_1d_tile_1d_dynamic_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_1d_tile_1d_dynamic_with_id_t function, void *context, size_t range,
    size_t tile, uint32_t flags) {
  pp_go(threadpool, &pp_1d_dyn_thread, PP_FN(function), context, 0, 1, (size_t[]){range}, (size_t[]){tile},
        flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_1d_tile_1d_dynamic_with_uarch_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_1d_tile_1d_dynamic_with_id_with_thread_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range, size_t tile, uint32_t flags) {
  (void)max_uarch_index;
  pp_go(threadpool, &pp_1d_dyn_uarch_thread, PP_FN(function), context, default_uarch_index, 1,
        (size_t[]){range}, (size_t[]){tile}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_2d_tile_1d_dynamic(pthreadpool_t threadpool,
                                                                   pthreadpool_task_2d_tile_1d_dynamic_t function,
                                                                   void *context, size_t range_i, size_t range_j,
                                                                   size_t tile_j, uint32_t flags) {
  pp_go(threadpool, &pp_2d_tile_1d_dyn, PP_FN(function), context, 0, 2, (size_t[]){range_i, range_j},
        (size_t[]){1, tile_j}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_2d_tile_1d_dynamic_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_2d_tile_1d_dynamic_with_id_t function, void *context,
    size_t range_i, size_t range_j, size_t tile_j, uint32_t flags) {
  pp_go(threadpool, &pp_2d_tile_1d_dyn_thread, PP_FN(function), context, 0, 2, (size_t[]){range_i, range_j},
        (size_t[]){1, tile_j}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_2d_tile_1d_dynamic_with_uarch_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_2d_tile_1d_dynamic_with_id_with_thread_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t tile_j,
    uint32_t flags) {
  (void)max_uarch_index;
  pp_go(threadpool, &pp_2d_tile_1d_dyn_uarch_thread, PP_FN(function), context, default_uarch_index, 2,
        (size_t[]){range_i, range_j}, (size_t[]){1, tile_j}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_2d_tile_2d_dynamic(pthreadpool_t threadpool,
                                                                   pthreadpool_task_2d_tile_2d_dynamic_t function,
                                                                   void *context, size_t range_i, size_t range_j,
                                                                   size_t tile_i, size_t tile_j, uint32_t flags) {
  pp_go(threadpool, &pp_2d_tile_2d_dyn, PP_FN(function), context, 0, 2, (size_t[]){range_i, range_j},
        (size_t[]){tile_i, tile_j}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_2d_tile_2d_dynamic_with_uarch(
    pthreadpool_t threadpool, pthreadpool_task_2d_tile_2d_dynamic_with_id_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t tile_i,
    size_t tile_j, uint32_t flags) {
  (void)max_uarch_index;
  pp_go(threadpool, &pp_2d_tile_2d_dyn_uarch, PP_FN(function), context, default_uarch_index, 2,
        (size_t[]){range_i, range_j}, (size_t[]){tile_i, tile_j}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_2d_tile_2d_dynamic_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_2d_tile_2d_dynamic_with_id_t function, void *context,
    size_t range_i, size_t range_j, size_t tile_i, size_t tile_j, uint32_t flags) {
  pp_go(threadpool, &pp_2d_tile_2d_dyn_thread, PP_FN(function), context, 0, 2, (size_t[]){range_i, range_j},
        (size_t[]){tile_i, tile_j}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_3d_tile_1d_dynamic(pthreadpool_t threadpool,
                                                                   pthreadpool_task_3d_tile_1d_dynamic_t function,
                                                                   void *context, size_t range_i, size_t range_j,
                                                                   size_t range_k, size_t tile_k, uint32_t flags) {
  pp_go(threadpool, &pp_3d_tile_1d_dyn, PP_FN(function), context, 0, 3, (size_t[]){range_i, range_j, range_k},
        (size_t[]){1, 1, tile_k}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_3d_tile_1d_dynamic_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_3d_tile_1d_dynamic_with_id_t function, void *context,
    size_t range_i, size_t range_j, size_t range_k, size_t tile_k, uint32_t flags) {
  pp_go(threadpool, &pp_3d_tile_1d_dyn_thread, PP_FN(function), context, 0, 3,
        (size_t[]){range_i, range_j, range_k}, (size_t[]){1, 1, tile_k}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_3d_tile_1d_dynamic_with_uarch_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_3d_tile_1d_dynamic_with_id_with_thread_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t range_k,
    size_t tile_k, uint32_t flags) {
  (void)max_uarch_index;
  pp_go(threadpool, &pp_3d_tile_1d_dyn_uarch_thread, PP_FN(function), context, default_uarch_index, 3,
        (size_t[]){range_i, range_j, range_k}, (size_t[]){1, 1, tile_k}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_3d_tile_2d_dynamic(pthreadpool_t threadpool,
                                                                   pthreadpool_task_3d_tile_2d_dynamic_t function,
                                                                   void *context, size_t range_i, size_t range_j,
                                                                   size_t range_k, size_t tile_j, size_t tile_k,
                                                                   uint32_t flags) {
  pp_go(threadpool, &pp_3d_tile_2d_dyn, PP_FN(function), context, 0, 3, (size_t[]){range_i, range_j, range_k},
        (size_t[]){1, tile_j, tile_k}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_3d_tile_2d_dynamic_with_uarch(
    pthreadpool_t threadpool, pthreadpool_task_3d_tile_2d_dynamic_with_id_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t range_k,
    size_t tile_j, size_t tile_k, uint32_t flags) {
  (void)max_uarch_index;
  pp_go(threadpool, &pp_3d_tile_2d_dyn_uarch, PP_FN(function), context, default_uarch_index, 3,
        (size_t[]){range_i, range_j, range_k}, (size_t[]){1, tile_j, tile_k}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_3d_tile_2d_dynamic_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_3d_tile_2d_dynamic_with_id_t function, void *context,
    size_t range_i, size_t range_j, size_t range_k, size_t tile_j, size_t tile_k, uint32_t flags) {
  pp_go(threadpool, &pp_3d_tile_2d_dyn_thread, PP_FN(function), context, 0, 3,
        (size_t[]){range_i, range_j, range_k}, (size_t[]){1, tile_j, tile_k}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_4d_tile_2d_dynamic(pthreadpool_t threadpool,
                                                                   pthreadpool_task_4d_tile_2d_dynamic_t function,
                                                                   void *context, size_t range_i, size_t range_j,
                                                                   size_t range_k, size_t range_l, size_t tile_k,
                                                                   size_t tile_l, uint32_t flags) {
  pp_go(threadpool, &pp_4d_tile_2d_dyn, PP_FN(function), context, 0, 4,
        (size_t[]){range_i, range_j, range_k, range_l}, (size_t[]){1, 1, tile_k, tile_l}, flags);
}

CPUEXEC__PP_EXPORT void pthreadpool_parallelize_4d_tile_2d_dynamic_with_uarch(
    pthreadpool_t threadpool, pthreadpool_task_4d_tile_2d_dynamic_with_id_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t range_k,
    size_t range_l, size_t tile_k, size_t tile_l, uint32_t flags) {
  (void)max_uarch_index;
  pp_go(threadpool, &pp_4d_tile_2d_dyn_uarch, PP_FN(function), context, default_uarch_index, 4,
        (size_t[]){range_i, range_j, range_k, range_l}, (size_t[]){1, 1, tile_k, tile_l}, flags);
}
