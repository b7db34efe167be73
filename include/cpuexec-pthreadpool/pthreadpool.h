/* pthreadpool.h for libcpuexec-pthreadpool.
 *
 * The same interface as google/pthreadpool's current pthreadpool.h (every
 * type, flag, function and C++ overload of it), which contains the whole
 * interface of the pthreadpool packaged by Debian 12 (libpthreadpool-dev
 * 0.0~git20210507), so kernel code written for either compiles unchanged and
 * links with `pkg-config --cflags --libs cpuexec-pthreadpool` instead of
 * -lpthreadpool.
 * The work runs on libcpuexec executors instead of a private thread pool:
 *
 *   - a NULL pool runs every call serially on the calling thread;
 *   - pthreadpool_create() inside a libcpuexec session follows the session's
 *     executor; elsewhere it leases a shared executor from libcpuexec's
 *     default registry (0 threads: the process default policy, which
 *     CPUEXEC_POLICY and CPUEXEC_NUM_THREADS can set);
 *   - a call made inside a libcpuexec session runs on that session's
 *     executor, with at most pthreadpool_get_threads_count() participants;
 *   - a call made from inside a task (of any pool or libcpuexec region)
 *     runs inline, serially, on the thread that made it;
 *   - a pool made by pthreadpool_create_v2() (or given one by
 *     pthreadpool_update_executor()) takes its extra threads from the
 *     application's struct pthreadpool_executor instead, inside sessions too.
 *
 * Every parallelize call below is described as the serial loop it replaces.
 * The parallel version calls `function` exactly once per item (or tile) of
 * that loop, in unspecified order and on up to pthreadpool_get_threads_count()
 * threads, and returns when every call has returned. An item that has not
 * started may be taken by any participant, so an item may wait for other
 * items of the same call to finish. Item indices are computed in size_t; the
 * product of the tile counts must fit in size_t. A NULL function makes the
 * call return at once having run nothing (the API has no error return); a
 * tile of 0 counts as 1.
 *
 * The *_dynamic calls choose their own tile counts: each call covers a
 * run of whole tiles (described at pthreadpool_parallelize_1d_tile_1d_dynamic).
 * A thread_index (*_with_thread) is the index of the participant running
 * the task, below pthreadpool_get_threads_count(), unique among the
 * participants of one call; a uarch_index (*_with_uarch) is always
 * default_uarch_index, as in a pthreadpool built without cpuinfo.
 * See doc/pthreadpool-compat.md. */
#ifndef PTHREADPOOL_H_
#define PTHREADPOOL_H_

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

/* Tells code that it was built against libcpuexec's pthreadpool.h. */
#define CPUEXEC_PTHREADPOOL_COMPAT 1

typedef struct pthreadpool *pthreadpool_t;

/* Task signatures: the context pointer first, then the item's coordinates,
 * then (for tiled shapes) the size of the tile along each tiled dimension. */
typedef void (*pthreadpool_task_1d_t)(void *, size_t);
typedef void (*pthreadpool_task_1d_tile_1d_t)(void *, size_t, size_t);
typedef void (*pthreadpool_task_2d_t)(void *, size_t, size_t);
typedef void (*pthreadpool_task_2d_tile_1d_t)(void *, size_t, size_t, size_t);
typedef void (*pthreadpool_task_2d_tile_2d_t)(void *, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_3d_t)(void *, size_t, size_t, size_t);
typedef void (*pthreadpool_task_3d_tile_1d_t)(void *, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_3d_tile_2d_t)(void *, size_t, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_4d_t)(void *, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_4d_tile_1d_t)(void *, size_t, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_4d_tile_2d_t)(void *, size_t, size_t, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_5d_t)(void *, size_t, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_5d_tile_1d_t)(void *, size_t, size_t, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_5d_tile_2d_t)(void *, size_t, size_t, size_t, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_6d_t)(void *, size_t, size_t, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_6d_tile_1d_t)(void *, size_t, size_t, size_t, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_6d_tile_2d_t)(void *, size_t, size_t, size_t, size_t, size_t, size_t, size_t,
                                              size_t);

/* Microarchitecture-aware tasks: the second argument is the uarch index. */
typedef void (*pthreadpool_task_1d_with_id_t)(void *, uint32_t, size_t);
typedef void (*pthreadpool_task_2d_tile_2d_with_id_t)(void *, uint32_t, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_3d_tile_2d_with_id_t)(void *, uint32_t, size_t, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_4d_tile_2d_with_id_t)(void *, uint32_t, size_t, size_t, size_t, size_t, size_t,
                                                      size_t);

typedef void (*pthreadpool_task_2d_tile_1d_with_id_t)(void *, uint32_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_3d_tile_1d_with_id_t)(void *, uint32_t, size_t, size_t, size_t, size_t);

/* The second argument is the index of the participant running the task. */
typedef void (*pthreadpool_task_1d_with_thread_t)(void *, size_t, size_t);
typedef void (*pthreadpool_task_2d_with_thread_t)(void *, size_t, size_t, size_t);
typedef void (*pthreadpool_task_3d_tile_1d_with_thread_t)(void *, size_t, size_t, size_t, size_t, size_t);

/* Dynamic tilings: the coordinates of the first item, then the item count
 * along each dynamic dimension. */
typedef void (*pthreadpool_task_1d_tile_1d_dynamic_t)(void *, size_t, size_t);
typedef void (*pthreadpool_task_2d_tile_1d_dynamic_t)(void *, size_t, size_t, size_t);
typedef void (*pthreadpool_task_2d_tile_2d_dynamic_t)(void *, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_3d_tile_1d_dynamic_t)(void *, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_3d_tile_2d_dynamic_t)(void *, size_t, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_4d_tile_2d_dynamic_t)(void *, size_t, size_t, size_t, size_t, size_t, size_t);
/* ... with a uint32_t second argument: the thread index for the
 * *_dynamic_with_thread calls, the uarch index for *_dynamic_with_uarch. */
typedef void (*pthreadpool_task_1d_tile_1d_dynamic_with_id_t)(void *, uint32_t, size_t, size_t);
typedef void (*pthreadpool_task_2d_tile_1d_dynamic_with_id_t)(void *, uint32_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_2d_tile_2d_dynamic_with_id_t)(void *, uint32_t, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_3d_tile_1d_dynamic_with_id_t)(void *, uint32_t, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_3d_tile_2d_dynamic_with_id_t)(void *, uint32_t, size_t, size_t, size_t, size_t,
                                                              size_t);
typedef void (*pthreadpool_task_4d_tile_2d_dynamic_with_id_t)(void *, uint32_t, size_t, size_t, size_t, size_t,
                                                              size_t, size_t);

/* uarch index, then thread index, then the coordinates (and counts). */
typedef void (*pthreadpool_task_1d_tile_1d_dynamic_with_id_with_thread_t)(void *, uint32_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_2d_tile_1d_with_id_with_thread_t)(void *, uint32_t, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_task_2d_tile_1d_dynamic_with_id_with_thread_t)(void *, uint32_t, size_t, size_t, size_t,
                                                                          size_t);
typedef void (*pthreadpool_task_3d_tile_1d_with_id_with_thread_t)(void *, uint32_t, size_t, size_t, size_t, size_t,
                                                                  size_t);
typedef void (*pthreadpool_task_3d_tile_1d_dynamic_with_id_with_thread_t)(void *, uint32_t, size_t, size_t, size_t,
                                                                          size_t, size_t);

/* Flush denormal results to zero and treat denormal inputs as zero on every
 * participant for the length of the call, then restore each participant's
 * previous setting. x86-64: MXCSR FTZ and DAZ. Other architectures: no effect. */
#define PTHREADPOOL_FLAG_DISABLE_DENORMALS 0x00000001
/* Asks that workers sleep in the kernel after the call instead of spinning.
 * Accepted and ignored: the executor's spin policy (CPUEXEC_POLICY
 * spin_policy) decides how idle workers wait. */
#define PTHREADPOOL_FLAG_YIELD_WORKERS 0x00000002
/* Asks that threads borrowed from a struct pthreadpool_executor go back to
 * it at once after the call. Accepted; it is what always happens here: a
 * borrowed thread returns to its executor when its share of a call ends. */
#define PTHREADPOOL_FLAG_DONT_SPIN_WORKERS 0x00000004

#ifdef __cplusplus
extern "C" {
#endif

/* A pool of threads_count participants including the caller (0: the
 * libcpuexec default policy). Inside a session it follows the session's
 * executor, with at most threads_count participants. NULL when no executor
 * could be obtained; cpuexec_error_message() says why. */
pthreadpool_t pthreadpool_create(size_t threads_count);

/* An application's executor, lending threads to a pool made by
 * pthreadpool_create_v2():
 *   num_threads(executor_context): how many tasks it can run at once;
 *   schedule(executor_context, context, task): runs task(context) once, on
 *     one of its threads, soon (it must not run it on the calling thread
 *     before returning, nor wait for it). */
struct pthreadpool_executor {
  int (*num_threads)(void *executor_context);
  void (*schedule)(void *executor_context, void *context, void (*task)(void *context));
};

/* A pool whose extra threads come from executor: a call borrows up to
 * pthreadpool_get_threads_count() - 1 of them by scheduling that many tasks,
 * and the caller is participant 0. Its thread count is
 * min(max_num_threads (0: the processors this process may use),
 * executor->num_threads(executor_context) + 1), read once here. Calls run on
 * the executor inside libcpuexec sessions too, never on a session's
 * workers; nobody waits for a task that has not started (the caller and the
 * borrowed threads that did start take its items), and a task that starts
 * after its call returned finds nothing to do and returns, so the executor
 * may run tasks late, or after pthreadpool_destroy(). With executor NULL it
 * is pthreadpool_create(max_num_threads); an executor without both
 * functions, or with num_threads() < 0, gives NULL. Both the executor and
 * its context must stay valid until the pool is destroyed. */
pthreadpool_t pthreadpool_create_v2(struct pthreadpool_executor *executor, void *executor_context,
                                    size_t max_num_threads);

/* The most participants a call on threadpool uses (1 for NULL): the count
 * the pool was made with, or what pthreadpool_set_threads_count() set. */
size_t pthreadpool_get_threads_count(pthreadpool_t threadpool);

/* Sets the most participants of later calls: num_threads clamped to
 * [1, the count the pool was made with]; 0 restores that count. Returns the
 * count now in force (1 for NULL). A call already running keeps its own. */
size_t pthreadpool_set_threads_count(pthreadpool_t threadpool, size_t num_threads);

/* Gives back the threads a pool borrowed from its struct pthreadpool_executor.
 * A borrowed thread here already goes back when its share of a call ends,
 * so there is nothing to give back: it returns at once. NULL and pools
 * without an executor are ignored. */
void pthreadpool_release_executor_threads(struct pthreadpool *threadpool);

/* Makes executor (with executor_context) the one later calls on threadpool
 * borrow threads from, after the calls in progress on the previous one
 * returned; the pool's thread count does not change. Returns true when
 * executor or context differ from the current ones (then they are swapped),
 * false when they are the same, or threadpool or executor is NULL or lacks a
 * function (then nothing changes). A pool made by pthreadpool_create() then
 * runs on the application's executor too. */
bool pthreadpool_update_executor(pthreadpool_t threadpool, struct pthreadpool_executor *executor,
                                 void *executor_context);

/* for (i = 0; i < range; i++) function(context, i); */
void pthreadpool_parallelize_1d(pthreadpool_t threadpool, pthreadpool_task_1d_t function, void *context,
                                size_t range, uint32_t flags);

/* for (i = 0; i < range; i++) function(context, thread_index, i); */
void pthreadpool_parallelize_1d_with_thread(pthreadpool_t threadpool, pthreadpool_task_1d_with_thread_t function,
                                            void *context, size_t range, uint32_t flags);

/* for (i = 0; i < range; i++) function(context, uarch_index, i);
 * uarch_index is always default_uarch_index: like a pthreadpool built
 * without cpuinfo (Debian's), no per-core microarchitecture is detected. */
void pthreadpool_parallelize_1d_with_uarch(pthreadpool_t threadpool, pthreadpool_task_1d_with_id_t function,
                                           void *context, uint32_t default_uarch_index, uint32_t max_uarch_index,
                                           size_t range, uint32_t flags);

/* for (i = 0; i < range; i += tile) function(context, i, min(range - i, tile)); */
void pthreadpool_parallelize_1d_tile_1d(pthreadpool_t threadpool, pthreadpool_task_1d_tile_1d_t function,
                                        void *context, size_t range, size_t tile, uint32_t flags);

/* The 1D tile 1D loop with runs of tiles: function(context, i, count) for
 * runs [i, i + count) that cover [0, range) exactly once, where i is a
 * multiple of tile and count a multiple of tile unless i + count == range.
 * A participant takes about half of what is left of its share at a time, so
 * the calls are few (one on a NULL or one-thread pool) and the shares stay
 * balanced. A dynamic dimension that is not the last one merges only where
 * the last has a single tile: each call then spans the last dimension. */
void pthreadpool_parallelize_1d_tile_1d_dynamic(pthreadpool_t threadpool,
                                                pthreadpool_task_1d_tile_1d_dynamic_t function, void *context,
                                                size_t range, size_t tile, uint32_t flags);
/* The same, calling function(context, thread_index, i, count). */
void pthreadpool_parallelize_1d_tile_1d_dynamic_with_thread(pthreadpool_t threadpool,
                                                            pthreadpool_task_1d_tile_1d_dynamic_with_id_t function,
                                                            void *context, size_t range, size_t tile,
                                                            uint32_t flags);
/* The same, calling function(context, uarch_index, thread_index, i, count). */
void pthreadpool_parallelize_1d_tile_1d_dynamic_with_uarch_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_1d_tile_1d_dynamic_with_id_with_thread_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range, size_t tile, uint32_t flags);

/* for (i = 0; i < range_i; i++)
 *   for (j = 0; j < range_j; j++) function(context, i, j); */
void pthreadpool_parallelize_2d(pthreadpool_t threadpool, pthreadpool_task_2d_t function, void *context,
                                size_t range_i, size_t range_j, uint32_t flags);

/* The 2D loop, calling function(context, thread_index, i, j). */
void pthreadpool_parallelize_2d_with_thread(pthreadpool_t threadpool, pthreadpool_task_2d_with_thread_t function,
                                            void *context, size_t range_i, size_t range_j, uint32_t flags);

/* for (i = 0; i < range_i; i++)
 *   for (j = 0; j < range_j; j += tile_j)
 *     function(context, i, j, min(range_j - j, tile_j)); */
void pthreadpool_parallelize_2d_tile_1d(pthreadpool_t threadpool, pthreadpool_task_2d_tile_1d_t function,
                                        void *context, size_t range_i, size_t range_j, size_t tile_j,
                                        uint32_t flags);

/* The 2D tile 1D loop, calling function(context, uarch_index, i, j, min(range_j - j, tile_j)). */
void pthreadpool_parallelize_2d_tile_1d_with_uarch(pthreadpool_t threadpool,
                                                   pthreadpool_task_2d_tile_1d_with_id_t function, void *context,
                                                   uint32_t default_uarch_index, uint32_t max_uarch_index,
                                                   size_t range_i, size_t range_j, size_t tile_j, uint32_t flags);
/* The same, calling function(context, uarch_index, thread_index, i, j, min(range_j - j, tile_j)). */
void pthreadpool_parallelize_2d_tile_1d_with_uarch_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_2d_tile_1d_with_id_with_thread_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t tile_j,
    uint32_t flags);

/* For every i in [0, range_i), runs of tiles along j (see
 * pthreadpool_parallelize_1d_tile_1d_dynamic): function(context, i, j, count_j). */
void pthreadpool_parallelize_2d_tile_1d_dynamic(pthreadpool_t threadpool,
                                                pthreadpool_task_2d_tile_1d_dynamic_t function, void *context,
                                                size_t range_i, size_t range_j, size_t tile_j, uint32_t flags);
/* The same, calling function(context, thread_index, i, j, count_j). */
void pthreadpool_parallelize_2d_tile_1d_dynamic_with_thread(pthreadpool_t threadpool,
                                                            pthreadpool_task_2d_tile_1d_dynamic_with_id_t function,
                                                            void *context, size_t range_i, size_t range_j,
                                                            size_t tile_j, uint32_t flags);
/* The same, calling function(context, uarch_index, thread_index, i, j, count_j). */
void pthreadpool_parallelize_2d_tile_1d_dynamic_with_uarch_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_2d_tile_1d_dynamic_with_id_with_thread_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t tile_j,
    uint32_t flags);

/* for (i = 0; i < range_i; i += tile_i)
 *   for (j = 0; j < range_j; j += tile_j)
 *     function(context, i, j, min(range_i - i, tile_i), min(range_j - j, tile_j)); */
void pthreadpool_parallelize_2d_tile_2d(pthreadpool_t threadpool, pthreadpool_task_2d_tile_2d_t function,
                                        void *context, size_t range_i, size_t range_j, size_t tile_i,
                                        size_t tile_j, uint32_t flags);

/* The 2D tile 2D loop, calling function(context, default_uarch_index, i, j, ...). */
void pthreadpool_parallelize_2d_tile_2d_with_uarch(pthreadpool_t threadpool,
                                                   pthreadpool_task_2d_tile_2d_with_id_t function, void *context,
                                                   uint32_t default_uarch_index, uint32_t max_uarch_index,
                                                   size_t range_i, size_t range_j, size_t tile_i, size_t tile_j,
                                                   uint32_t flags);

/* Runs of tiles over the 2D tile 2D grid: function(context, i, j, count_i,
 * count_j), rectangles covering the grid exactly once; a run spans several
 * tiles along j, or (when range_j is one tile) several along i. */
void pthreadpool_parallelize_2d_tile_2d_dynamic(pthreadpool_t threadpool,
                                                pthreadpool_task_2d_tile_2d_dynamic_t function, void *context,
                                                size_t range_i, size_t range_j, size_t tile_i, size_t tile_j,
                                                uint32_t flags);
/* The same, calling function(context, uarch_index, i, j, count_i, count_j). */
void pthreadpool_parallelize_2d_tile_2d_dynamic_with_uarch(pthreadpool_t threadpool,
                                                           pthreadpool_task_2d_tile_2d_dynamic_with_id_t function,
                                                           void *context, uint32_t default_uarch_index,
                                                           uint32_t max_uarch_index, size_t range_i, size_t range_j,
                                                           size_t tile_i, size_t tile_j, uint32_t flags);
/* The same, calling function(context, thread_index, i, j, count_i, count_j). */
void pthreadpool_parallelize_2d_tile_2d_dynamic_with_thread(pthreadpool_t threadpool,
                                                            pthreadpool_task_2d_tile_2d_dynamic_with_id_t function,
                                                            void *context, size_t range_i, size_t range_j,
                                                            size_t tile_i, size_t tile_j, uint32_t flags);

/* for (i = 0; i < range_i; i++)
 *   for (j = 0; j < range_j; j++)
 *     for (k = 0; k < range_k; k++) function(context, i, j, k); */
void pthreadpool_parallelize_3d(pthreadpool_t threadpool, pthreadpool_task_3d_t function, void *context,
                                size_t range_i, size_t range_j, size_t range_k, uint32_t flags);

/* The 3D loop with k stepping by tile_k:
 *     function(context, i, j, k, min(range_k - k, tile_k)); */
void pthreadpool_parallelize_3d_tile_1d(pthreadpool_t threadpool, pthreadpool_task_3d_tile_1d_t function,
                                        void *context, size_t range_i, size_t range_j, size_t range_k,
                                        size_t tile_k, uint32_t flags);

/* The 3D tile 1D loop, calling
 *     function(context, thread_index, i, j, k, min(range_k - k, tile_k)); */
void pthreadpool_parallelize_3d_tile_1d_with_thread(pthreadpool_t threadpool,
                                                    pthreadpool_task_3d_tile_1d_with_thread_t function,
                                                    void *context, size_t range_i, size_t range_j, size_t range_k,
                                                    size_t tile_k, uint32_t flags);

/* The 3D tile 1D loop, calling function(context, uarch_index, i, j, k, min(range_k - k, tile_k)). */
void pthreadpool_parallelize_3d_tile_1d_with_uarch(pthreadpool_t threadpool,
                                                   pthreadpool_task_3d_tile_1d_with_id_t function, void *context,
                                                   uint32_t default_uarch_index, uint32_t max_uarch_index,
                                                   size_t range_i, size_t range_j, size_t range_k, size_t tile_k,
                                                   uint32_t flags);
/* The same, calling function(context, uarch_index, thread_index, i, j, k, min(range_k - k, tile_k)). */
void pthreadpool_parallelize_3d_tile_1d_with_uarch_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_3d_tile_1d_with_id_with_thread_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t range_k,
    size_t tile_k, uint32_t flags);

/* For every (i, j), runs of tiles along k: function(context, i, j, k, count_k). */
void pthreadpool_parallelize_3d_tile_1d_dynamic(pthreadpool_t threadpool,
                                                pthreadpool_task_3d_tile_1d_dynamic_t function, void *context,
                                                size_t range_i, size_t range_j, size_t range_k, size_t tile_k,
                                                uint32_t flags);
/* The same, calling function(context, thread_index, i, j, k, count_k). */
void pthreadpool_parallelize_3d_tile_1d_dynamic_with_thread(pthreadpool_t threadpool,
                                                            pthreadpool_task_3d_tile_1d_dynamic_with_id_t function,
                                                            void *context, size_t range_i, size_t range_j,
                                                            size_t range_k, size_t tile_k, uint32_t flags);
/* The same, calling function(context, uarch_index, thread_index, i, j, k, count_k). */
void pthreadpool_parallelize_3d_tile_1d_dynamic_with_uarch_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_3d_tile_1d_dynamic_with_id_with_thread_t function, void *context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t range_k,
    size_t tile_k, uint32_t flags);

/* The 3D loop with j stepping by tile_j and k by tile_k:
 *     function(context, i, j, k, min(range_j - j, tile_j), min(range_k - k, tile_k)); */
void pthreadpool_parallelize_3d_tile_2d(pthreadpool_t threadpool, pthreadpool_task_3d_tile_2d_t function,
                                        void *context, size_t range_i, size_t range_j, size_t range_k,
                                        size_t tile_j, size_t tile_k, uint32_t flags);

/* The 3D tile 2D loop, calling function(context, default_uarch_index, i, j, k, ...). */
void pthreadpool_parallelize_3d_tile_2d_with_uarch(pthreadpool_t threadpool,
                                                   pthreadpool_task_3d_tile_2d_with_id_t function, void *context,
                                                   uint32_t default_uarch_index, uint32_t max_uarch_index,
                                                   size_t range_i, size_t range_j, size_t range_k, size_t tile_j,
                                                   size_t tile_k, uint32_t flags);

/* For every i, runs of tiles over the (j, k) tile 2D grid, as in
 * pthreadpool_parallelize_2d_tile_2d_dynamic: function(context, i, j, k, count_j, count_k). */
void pthreadpool_parallelize_3d_tile_2d_dynamic(pthreadpool_t threadpool,
                                                pthreadpool_task_3d_tile_2d_dynamic_t function, void *context,
                                                size_t range_i, size_t range_j, size_t range_k, size_t tile_j,
                                                size_t tile_k, uint32_t flags);
/* The same, calling function(context, uarch_index, i, j, k, count_j, count_k). */
void pthreadpool_parallelize_3d_tile_2d_dynamic_with_uarch(pthreadpool_t threadpool,
                                                           pthreadpool_task_3d_tile_2d_dynamic_with_id_t function,
                                                           void *context, uint32_t default_uarch_index,
                                                           uint32_t max_uarch_index, size_t range_i, size_t range_j,
                                                           size_t range_k, size_t tile_j, size_t tile_k,
                                                           uint32_t flags);
/* The same, calling function(context, thread_index, i, j, k, count_j, count_k). */
void pthreadpool_parallelize_3d_tile_2d_dynamic_with_thread(pthreadpool_t threadpool,
                                                            pthreadpool_task_3d_tile_2d_dynamic_with_id_t function,
                                                            void *context, size_t range_i, size_t range_j,
                                                            size_t range_k, size_t tile_j, size_t tile_k,
                                                            uint32_t flags);

/* for (i ...) for (j ...) for (k ...) for (l = 0; l < range_l; l++)
 *   function(context, i, j, k, l); */
void pthreadpool_parallelize_4d(pthreadpool_t threadpool, pthreadpool_task_4d_t function, void *context,
                                size_t range_i, size_t range_j, size_t range_k, size_t range_l, uint32_t flags);

/* The 4D loop with l stepping by tile_l:
 *     function(context, i, j, k, l, min(range_l - l, tile_l)); */
void pthreadpool_parallelize_4d_tile_1d(pthreadpool_t threadpool, pthreadpool_task_4d_tile_1d_t function,
                                        void *context, size_t range_i, size_t range_j, size_t range_k,
                                        size_t range_l, size_t tile_l, uint32_t flags);

/* The 4D loop with k stepping by tile_k and l by tile_l:
 *     function(context, i, j, k, l, min(range_k - k, tile_k), min(range_l - l, tile_l)); */
void pthreadpool_parallelize_4d_tile_2d(pthreadpool_t threadpool, pthreadpool_task_4d_tile_2d_t function,
                                        void *context, size_t range_i, size_t range_j, size_t range_k,
                                        size_t range_l, size_t tile_k, size_t tile_l, uint32_t flags);

/* The 4D tile 2D loop, calling function(context, default_uarch_index, i, j, k, l, ...). */
void pthreadpool_parallelize_4d_tile_2d_with_uarch(pthreadpool_t threadpool,
                                                   pthreadpool_task_4d_tile_2d_with_id_t function, void *context,
                                                   uint32_t default_uarch_index, uint32_t max_uarch_index,
                                                   size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                                   size_t tile_k, size_t tile_l, uint32_t flags);

/* For every (i, j), runs of tiles over the (k, l) tile 2D grid:
 * function(context, i, j, k, l, count_k, count_l). */
void pthreadpool_parallelize_4d_tile_2d_dynamic(pthreadpool_t threadpool,
                                                pthreadpool_task_4d_tile_2d_dynamic_t function, void *context,
                                                size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                                size_t tile_k, size_t tile_l, uint32_t flags);
/* The same, calling function(context, uarch_index, i, j, k, l, count_k, count_l). */
void pthreadpool_parallelize_4d_tile_2d_dynamic_with_uarch(pthreadpool_t threadpool,
                                                           pthreadpool_task_4d_tile_2d_dynamic_with_id_t function,
                                                           void *context, uint32_t default_uarch_index,
                                                           uint32_t max_uarch_index, size_t range_i, size_t range_j,
                                                           size_t range_k, size_t range_l, size_t tile_k,
                                                           size_t tile_l, uint32_t flags);

/* Five nested loops over i, j, k, l, m: function(context, i, j, k, l, m). */
void pthreadpool_parallelize_5d(pthreadpool_t threadpool, pthreadpool_task_5d_t function, void *context,
                                size_t range_i, size_t range_j, size_t range_k, size_t range_l, size_t range_m,
                                uint32_t flags);

/* The 5D loop with m stepping by tile_m:
 *     function(context, i, j, k, l, m, min(range_m - m, tile_m)); */
void pthreadpool_parallelize_5d_tile_1d(pthreadpool_t threadpool, pthreadpool_task_5d_tile_1d_t function,
                                        void *context, size_t range_i, size_t range_j, size_t range_k,
                                        size_t range_l, size_t range_m, size_t tile_m, uint32_t flags);

/* The 5D loop with l stepping by tile_l and m by tile_m:
 *     function(context, i, j, k, l, m, min(range_l - l, tile_l), min(range_m - m, tile_m)); */
void pthreadpool_parallelize_5d_tile_2d(pthreadpool_t threadpool, pthreadpool_task_5d_tile_2d_t function,
                                        void *context, size_t range_i, size_t range_j, size_t range_k,
                                        size_t range_l, size_t range_m, size_t tile_l, size_t tile_m,
                                        uint32_t flags);

/* Six nested loops over i, j, k, l, m, n: function(context, i, j, k, l, m, n). */
void pthreadpool_parallelize_6d(pthreadpool_t threadpool, pthreadpool_task_6d_t function, void *context,
                                size_t range_i, size_t range_j, size_t range_k, size_t range_l, size_t range_m,
                                size_t range_n, uint32_t flags);

/* The 6D loop with n stepping by tile_n:
 *     function(context, i, j, k, l, m, n, min(range_n - n, tile_n)); */
void pthreadpool_parallelize_6d_tile_1d(pthreadpool_t threadpool, pthreadpool_task_6d_tile_1d_t function,
                                        void *context, size_t range_i, size_t range_j, size_t range_k,
                                        size_t range_l, size_t range_m, size_t range_n, size_t tile_n,
                                        uint32_t flags);

/* The 6D loop with m stepping by tile_m and n by tile_n:
 *     function(context, i, j, k, l, m, n, min(range_m - m, tile_m), min(range_n - n, tile_n)); */
void pthreadpool_parallelize_6d_tile_2d(pthreadpool_t threadpool, pthreadpool_task_6d_tile_2d_t function,
                                        void *context, size_t range_i, size_t range_j, size_t range_k,
                                        size_t range_l, size_t range_m, size_t range_n, size_t tile_m,
                                        size_t tile_n, uint32_t flags);

/* Releases the pool's executor lease. Calls must have returned; NULL is ignored. */
void pthreadpool_destroy(pthreadpool_t threadpool);

#ifndef PTHREADPOOL_NO_DEPRECATED_API
#if defined(__GNUC__)
#define PTHREADPOOL_DEPRECATED __attribute__((__deprecated__))
#else
#define PTHREADPOOL_DEPRECATED
#endif

/* The first pthreadpool interface, kept for old callers; prefer the
 * parallelize calls. They take no flags. */
typedef void (*pthreadpool_function_1d_t)(void *, size_t);
typedef void (*pthreadpool_function_1d_tiled_t)(void *, size_t, size_t);
typedef void (*pthreadpool_function_2d_t)(void *, size_t, size_t);
typedef void (*pthreadpool_function_2d_tiled_t)(void *, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_function_3d_tiled_t)(void *, size_t, size_t, size_t, size_t, size_t, size_t);
typedef void (*pthreadpool_function_4d_tiled_t)(void *, size_t, size_t, size_t, size_t, size_t, size_t, size_t,
                                                size_t);

/* pthreadpool_parallelize_1d without flags. */
void pthreadpool_compute_1d(pthreadpool_t threadpool, pthreadpool_function_1d_t function, void *argument,
                            size_t range) PTHREADPOOL_DEPRECATED;
/* pthreadpool_parallelize_1d_tile_1d without flags. */
void pthreadpool_compute_1d_tiled(pthreadpool_t threadpool, pthreadpool_function_1d_tiled_t function,
                                  void *argument, size_t range, size_t tile) PTHREADPOOL_DEPRECATED;
/* pthreadpool_parallelize_2d without flags. */
void pthreadpool_compute_2d(pthreadpool_t threadpool, pthreadpool_function_2d_t function, void *argument,
                            size_t range_i, size_t range_j) PTHREADPOOL_DEPRECATED;
/* pthreadpool_parallelize_2d_tile_2d without flags. */
void pthreadpool_compute_2d_tiled(pthreadpool_t threadpool, pthreadpool_function_2d_tiled_t function,
                                  void *argument, size_t range_i, size_t range_j, size_t tile_i,
                                  size_t tile_j) PTHREADPOOL_DEPRECATED;
/* for (i = 0; i < range_i; i += tile_i)
 *   for (j = 0; j < range_j; j += tile_j)
 *     for (k = 0; k < range_k; k += tile_k)
 *       function(argument, i, j, k, min(range_i - i, tile_i), min(range_j - j, tile_j),
 *                min(range_k - k, tile_k)); */
void pthreadpool_compute_3d_tiled(pthreadpool_t threadpool, pthreadpool_function_3d_tiled_t function,
                                  void *argument, size_t range_i, size_t range_j, size_t range_k, size_t tile_i,
                                  size_t tile_j, size_t tile_k) PTHREADPOOL_DEPRECATED;
/* The same with a fourth dimension l tiled by tile_l:
 *       function(argument, i, j, k, l, ti, tj, tk, tl); */
void pthreadpool_compute_4d_tiled(pthreadpool_t threadpool, pthreadpool_function_4d_tiled_t function,
                                  void *argument, size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                  size_t tile_i, size_t tile_j, size_t tile_k,
                                  size_t tile_l) PTHREADPOOL_DEPRECATED;
#endif /* PTHREADPOOL_NO_DEPRECATED_API */

#ifdef __cplusplus
} /* extern "C" */

/* C++: any callable object (a lambda) as the task, called as functor(i, ...)
 * with the same coordinates as the C task minus the context pointer. */
namespace libpthreadpool {
namespace detail {
namespace {
template <class T> struct call {
  static const T &f(void *p) { return *static_cast<const T *>(p); }
  static void d1(void *p, size_t a) { f(p)(a); }
  static void d2(void *p, size_t a, size_t b) { f(p)(a, b); }
  static void d3(void *p, size_t a, size_t b, size_t c) { f(p)(a, b, c); }
  static void d4(void *p, size_t a, size_t b, size_t c, size_t d) { f(p)(a, b, c, d); }
  static void d5(void *p, size_t a, size_t b, size_t c, size_t d, size_t e) { f(p)(a, b, c, d, e); }
  static void d6(void *p, size_t a, size_t b, size_t c, size_t d, size_t e, size_t g) { f(p)(a, b, c, d, e, g); }
  static void d7(void *p, size_t a, size_t b, size_t c, size_t d, size_t e, size_t g, size_t h) {
    f(p)(a, b, c, d, e, g, h);
  }
  static void d8(void *p, size_t a, size_t b, size_t c, size_t d, size_t e, size_t g, size_t h, size_t k) {
    f(p)(a, b, c, d, e, g, h, k);
  }
};
inline void *ctx(const void *functor) { return const_cast<void *>(functor); }
} // namespace
} // namespace detail
} // namespace libpthreadpool

/* An application's executor as a C++ class: derive from it, define
 * NumThreads() and Schedule() (the two functions of struct
 * pthreadpool_executor), and pass the object with GetContext() to
 * pthreadpool_create_v2(&executor, executor.GetContext(), max). */
class PthreadpoolExecutor : public pthreadpool_executor {
public:
  using TaskFunction = void (*)(void *);
  PthreadpoolExecutor() {
    num_threads = &PthreadpoolExecutor::num_threads_of;
    schedule = &PthreadpoolExecutor::schedule_on;
  }
  virtual ~PthreadpoolExecutor() = default;
  /* The executor_context that goes with this executor: the object itself. */
  void *GetContext() { return this; }
  virtual int NumThreads() = 0;
  virtual void Schedule(void *context, TaskFunction task) = 0;

private:
  static int num_threads_of(void *self) { return static_cast<PthreadpoolExecutor *>(self)->NumThreads(); }
  static void schedule_on(void *self, void *context, TaskFunction task) {
    static_cast<PthreadpoolExecutor *>(self)->Schedule(context, task);
  }
};

template <class T>
inline void pthreadpool_parallelize_1d(pthreadpool_t pool, const T &functor, size_t range, uint32_t flags = 0) {
  pthreadpool_parallelize_1d(pool, &libpthreadpool::detail::call<T>::d1, libpthreadpool::detail::ctx(&functor),
                             range, flags);
}
template <class T>
inline void pthreadpool_parallelize_1d_tile_1d(pthreadpool_t pool, const T &functor, size_t range, size_t tile,
                                               uint32_t flags = 0) {
  pthreadpool_parallelize_1d_tile_1d(pool, &libpthreadpool::detail::call<T>::d2,
                                     libpthreadpool::detail::ctx(&functor), range, tile, flags);
}
template <class T>
inline void pthreadpool_parallelize_1d_tile_1d_dynamic(pthreadpool_t pool, const T &functor, size_t range,
                                                       size_t tile, uint32_t flags = 0) {
  pthreadpool_parallelize_1d_tile_1d_dynamic(pool, &libpthreadpool::detail::call<T>::d2,
                                             libpthreadpool::detail::ctx(&functor), range, tile, flags);
}
template <class T>
inline void pthreadpool_parallelize_2d(pthreadpool_t pool, const T &functor, size_t range_i, size_t range_j,
                                       uint32_t flags = 0) {
  pthreadpool_parallelize_2d(pool, &libpthreadpool::detail::call<T>::d2, libpthreadpool::detail::ctx(&functor),
                             range_i, range_j, flags);
}
template <class T>
inline void pthreadpool_parallelize_2d_tile_1d(pthreadpool_t pool, const T &functor, size_t range_i,
                                               size_t range_j, size_t tile_j, uint32_t flags = 0) {
  pthreadpool_parallelize_2d_tile_1d(pool, &libpthreadpool::detail::call<T>::d3,
                                     libpthreadpool::detail::ctx(&functor), range_i, range_j, tile_j, flags);
}
template <class T>
inline void pthreadpool_parallelize_2d_tile_1d_dynamic(pthreadpool_t pool, const T &functor, size_t range_i,
                                                       size_t range_j, size_t tile_j, uint32_t flags = 0) {
  pthreadpool_parallelize_2d_tile_1d_dynamic(pool, &libpthreadpool::detail::call<T>::d3,
                                             libpthreadpool::detail::ctx(&functor), range_i, range_j, tile_j,
                                             flags);
}
template <class T>
inline void pthreadpool_parallelize_2d_tile_2d_dynamic(pthreadpool_t pool, const T &functor, size_t range_i,
                                                       size_t range_j, size_t tile_i, size_t tile_j,
                                                       uint32_t flags = 0) {
  pthreadpool_parallelize_2d_tile_2d_dynamic(pool, &libpthreadpool::detail::call<T>::d4,
                                             libpthreadpool::detail::ctx(&functor), range_i, range_j, tile_i,
                                             tile_j, flags);
}
template <class T>
inline void pthreadpool_parallelize_2d_tile_2d(pthreadpool_t pool, const T &functor, size_t range_i,
                                               size_t range_j, size_t tile_i, size_t tile_j, uint32_t flags = 0) {
  pthreadpool_parallelize_2d_tile_2d(pool, &libpthreadpool::detail::call<T>::d4,
                                     libpthreadpool::detail::ctx(&functor), range_i, range_j, tile_i, tile_j,
                                     flags);
}
template <class T>
inline void pthreadpool_parallelize_3d(pthreadpool_t pool, const T &functor, size_t range_i, size_t range_j,
                                       size_t range_k, uint32_t flags = 0) {
  pthreadpool_parallelize_3d(pool, &libpthreadpool::detail::call<T>::d3, libpthreadpool::detail::ctx(&functor),
                             range_i, range_j, range_k, flags);
}
template <class T>
inline void pthreadpool_parallelize_3d_tile_1d(pthreadpool_t pool, const T &functor, size_t range_i,
                                               size_t range_j, size_t range_k, size_t tile_k, uint32_t flags = 0) {
  pthreadpool_parallelize_3d_tile_1d(pool, &libpthreadpool::detail::call<T>::d4,
                                     libpthreadpool::detail::ctx(&functor), range_i, range_j, range_k, tile_k,
                                     flags);
}
template <class T>
inline void pthreadpool_parallelize_3d_tile_2d(pthreadpool_t pool, const T &functor, size_t range_i,
                                               size_t range_j, size_t range_k, size_t tile_j, size_t tile_k,
                                               uint32_t flags = 0) {
  pthreadpool_parallelize_3d_tile_2d(pool, &libpthreadpool::detail::call<T>::d5,
                                     libpthreadpool::detail::ctx(&functor), range_i, range_j, range_k, tile_j,
                                     tile_k, flags);
}
template <class T>
inline void pthreadpool_parallelize_3d_tile_2d_dynamic(pthreadpool_t pool, const T &functor, size_t range_i,
                                                       size_t range_j, size_t range_k, size_t tile_j, size_t tile_k,
                                                       uint32_t flags = 0) {
  pthreadpool_parallelize_3d_tile_2d_dynamic(pool, &libpthreadpool::detail::call<T>::d5,
                                             libpthreadpool::detail::ctx(&functor), range_i, range_j, range_k,
                                             tile_j, tile_k, flags);
}
template <class T>
inline void pthreadpool_parallelize_4d(pthreadpool_t pool, const T &functor, size_t range_i, size_t range_j,
                                       size_t range_k, size_t range_l, uint32_t flags = 0) {
  pthreadpool_parallelize_4d(pool, &libpthreadpool::detail::call<T>::d4, libpthreadpool::detail::ctx(&functor),
                             range_i, range_j, range_k, range_l, flags);
}
template <class T>
inline void pthreadpool_parallelize_4d_tile_1d(pthreadpool_t pool, const T &functor, size_t range_i,
                                               size_t range_j, size_t range_k, size_t range_l, size_t tile_l,
                                               uint32_t flags = 0) {
  pthreadpool_parallelize_4d_tile_1d(pool, &libpthreadpool::detail::call<T>::d5,
                                     libpthreadpool::detail::ctx(&functor), range_i, range_j, range_k, range_l,
                                     tile_l, flags);
}
template <class T>
inline void pthreadpool_parallelize_4d_tile_2d(pthreadpool_t pool, const T &functor, size_t range_i,
                                               size_t range_j, size_t range_k, size_t range_l, size_t tile_k,
                                               size_t tile_l, uint32_t flags = 0) {
  pthreadpool_parallelize_4d_tile_2d(pool, &libpthreadpool::detail::call<T>::d6,
                                     libpthreadpool::detail::ctx(&functor), range_i, range_j, range_k, range_l,
                                     tile_k, tile_l, flags);
}
template <class T>
inline void pthreadpool_parallelize_4d_tile_2d_dynamic(pthreadpool_t pool, const T &functor, size_t range_i,
                                                       size_t range_j, size_t range_k, size_t range_l, size_t tile_k,
                                                       size_t tile_l, uint32_t flags = 0) {
  pthreadpool_parallelize_4d_tile_2d_dynamic(pool, &libpthreadpool::detail::call<T>::d6,
                                             libpthreadpool::detail::ctx(&functor), range_i, range_j, range_k,
                                             range_l, tile_k, tile_l, flags);
}
template <class T>
inline void pthreadpool_parallelize_5d(pthreadpool_t pool, const T &functor, size_t range_i, size_t range_j,
                                       size_t range_k, size_t range_l, size_t range_m, uint32_t flags = 0) {
  pthreadpool_parallelize_5d(pool, &libpthreadpool::detail::call<T>::d5, libpthreadpool::detail::ctx(&functor),
                             range_i, range_j, range_k, range_l, range_m, flags);
}
template <class T>
inline void pthreadpool_parallelize_5d_tile_1d(pthreadpool_t pool, const T &functor, size_t range_i,
                                               size_t range_j, size_t range_k, size_t range_l, size_t range_m,
                                               size_t tile_m, uint32_t flags = 0) {
  pthreadpool_parallelize_5d_tile_1d(pool, &libpthreadpool::detail::call<T>::d6,
                                     libpthreadpool::detail::ctx(&functor), range_i, range_j, range_k, range_l,
                                     range_m, tile_m, flags);
}
template <class T>
inline void pthreadpool_parallelize_5d_tile_2d(pthreadpool_t pool, const T &functor, size_t range_i,
                                               size_t range_j, size_t range_k, size_t range_l, size_t range_m,
                                               size_t tile_l, size_t tile_m, uint32_t flags = 0) {
  pthreadpool_parallelize_5d_tile_2d(pool, &libpthreadpool::detail::call<T>::d7,
                                     libpthreadpool::detail::ctx(&functor), range_i, range_j, range_k, range_l,
                                     range_m, tile_l, tile_m, flags);
}
template <class T>
inline void pthreadpool_parallelize_6d(pthreadpool_t pool, const T &functor, size_t range_i, size_t range_j,
                                       size_t range_k, size_t range_l, size_t range_m, size_t range_n,
                                       uint32_t flags = 0) {
  pthreadpool_parallelize_6d(pool, &libpthreadpool::detail::call<T>::d6, libpthreadpool::detail::ctx(&functor),
                             range_i, range_j, range_k, range_l, range_m, range_n, flags);
}
template <class T>
inline void pthreadpool_parallelize_6d_tile_1d(pthreadpool_t pool, const T &functor, size_t range_i,
                                               size_t range_j, size_t range_k, size_t range_l, size_t range_m,
                                               size_t range_n, size_t tile_n, uint32_t flags = 0) {
  pthreadpool_parallelize_6d_tile_1d(pool, &libpthreadpool::detail::call<T>::d7,
                                     libpthreadpool::detail::ctx(&functor), range_i, range_j, range_k, range_l,
                                     range_m, range_n, tile_n, flags);
}
template <class T>
inline void pthreadpool_parallelize_6d_tile_2d(pthreadpool_t pool, const T &functor, size_t range_i,
                                               size_t range_j, size_t range_k, size_t range_l, size_t range_m,
                                               size_t range_n, size_t tile_m, size_t tile_n, uint32_t flags = 0) {
  pthreadpool_parallelize_6d_tile_2d(pool, &libpthreadpool::detail::call<T>::d8,
                                     libpthreadpool::detail::ctx(&functor), range_i, range_j, range_k, range_l,
                                     range_m, range_n, tile_m, tile_n, flags);
}
#endif /* __cplusplus */

#endif /* PTHREADPOOL_H_ */
