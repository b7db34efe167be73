/* Private to libcpuexec-pthreadpool (not installed): how it runs one parallelize call.
 *
 * Every pthreadpool shape is a grid of up to six dimensions; a tiled
 * dimension steps by its tile, an untiled one by 1. A call is one task:
 * the grid, the user's function and a shape (the three loops that call
 * the function with that shape's arguments). The items of the grid are
 * numbered row-major, the last dimension fastest: item t is the t-th
 * function call of the serial loop the shape replaces.
 *
 * Parallel calls split the items into one contiguous slot per participant
 * (like pthreadpool; the caller's slot longer by what the previous call of
 * the same function and grid showed its head start to be worth, see
 * pp_split in pool.c). A participant claims the items of its own slot one at
 * a time from the front, then takes unclaimed items from the back of the
 * other slots. Claiming one item at a time keeps pthreadpool's guarantee
 * that an item not yet started can run on any participant (an item may
 * wait for the others); the owner still walks its slot with a division-free
 * odometer, and only stolen items are decomposed with divisions. Thieves
 * are patient: they leave a slot to an owner that keeps claiming short
 * items (see pp_take in pool.c).
 *
 * The *_dynamic shapes number their tiles the same way but claim runs of
 * them: an owner takes half of what is left of its slot from the front, a
 * thief half of what is left from the back, and the shape's `chunk` calls
 * the user's function once per run (cut where a row ends). A serial call is
 * one run of every tile. */
#ifndef CPUEXEC_COMPAT_PTHREADPOOL_ENGINE_PRIVATE_H
#define CPUEXEC_COMPAT_PTHREADPOOL_ENGINE_PRIVATE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cpuexec.h>
#include <cpuexec-pthreadpool/pthreadpool.h>

#define CPUEXEC__PP_MAX_DIMS 6
#define CPUEXEC__PP_CACHE_LINE 128

/* Exported names of the library (it is built with hidden visibility; on
 * Windows the DLL exports these and nothing else). */
#if defined(_WIN32)
#define CPUEXEC__PP_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define CPUEXEC__PP_EXPORT __attribute__((visibility("default")))
#else
#define CPUEXEC__PP_EXPORT
#endif

/* One participant's share of a parallel call. Set up by the dispatching
 * thread before cpuexec_parallel_for() publishes it; afterwards:
 *   remaining: unclaimed items; the owner and thieves decrement it (relaxed:
 *              it only divides the items, the executor's completion orders
 *              everything the tasks wrote), a claim succeeds while it was > 0;
 *   end:       one past the last unclaimed item; only thieves decrement it;
 *   begin:     the first item; never changes.
 * Two cache lines each (adjacent-line prefetch pairs 64-byte lines), so
 * owners do not share lines. */
typedef struct cpuexec__pp_slot {
  _Alignas(CPUEXEC__PP_CACHE_LINE) atomic_llong remaining;
  atomic_size_t end;
  size_t begin;
  /* The unclaimed items of the next slot (in stealing order) when this
   * slot's owner finished its own: written once by the owner, read by the
   * dispatching thread after cpuexec_parallel_for() returns (pool.c uses it
   * to balance the next call's split). */
  size_t ahead;
} cpuexec__pp_slot;

typedef struct cpuexec__pp_task cpuexec__pp_task;

/* The three loops of one shape. thread is the participant index passed to
 * *_with_thread functions (0 on the serial path).
 *   run: items [first, first + count) in order, without claiming;
 *   own: the items of slot, claiming each from the front, in order;
 *   one: the single item numbered flat.
 * A dynamic shape has none of them and `chunk` instead:
 *   chunk: tiles [first, first + count), already claimed, in as few calls
 *          of the user's function as its tiling allows. */
typedef struct cpuexec__pp_shape {
  void (*run)(const cpuexec__pp_task *task, size_t thread, size_t first, size_t count);
  void (*own)(const cpuexec__pp_task *task, size_t thread, cpuexec__pp_slot *slot);
  void (*one)(const cpuexec__pp_task *task, size_t thread, size_t flat);
  void (*chunk)(const cpuexec__pp_task *task, size_t thread, size_t first, size_t count);
} cpuexec__pp_shape;

/* Immutable for the length of the call. */
struct cpuexec__pp_task {
  const cpuexec__pp_shape *shape;
  void (*fn)(void); /* the user's function, cast back by the shape */
  void *context;
  uint32_t uarch_index;
  uint32_t dims;
  size_t range[CPUEXEC__PP_MAX_DIMS];
  size_t tile[CPUEXEC__PP_MAX_DIMS];  /* 1 for untiled dimensions */
  size_t tiles[CPUEXEC__PP_MAX_DIMS]; /* ceil(range / tile) */
  size_t items;                       /* product of tiles */
};

/* Fills the grid of task from ranges and tiles (NULL: no dimension tiled;
 * a tile of 0 is taken as 1). */
void cpuexec__pp_task_grid(cpuexec__pp_task *task, uint32_t dims, const size_t *range, const size_t *tile);

/* Runs task on threadpool: serially on the caller for a NULL or one-thread
 * pool, a grid of at most one item, or a call made inside a task; on the
 * current session's executor or the pool's own otherwise. */
void cpuexec__pp_run(pthreadpool_t threadpool, const cpuexec__pp_task *task, uint32_t flags);

/* The extra threads of pools made by pthreadpool_create_v2() (executor.c):
 * an application's struct pthreadpool_executor wrapped as a libcpuexec
 * foreign executor, whose run_ranges borrows one scheduled task per
 * participant beyond the caller. Creates it on pool with `threads`
 * participants; NULL (with cpuexec_error_message() set) on failure. */
cpuexec_executor *cpuexec__pp_app_executor(pthreadpool_t pool, size_t threads);
/* The application's executor and context of pool, for run_ranges; read
 * while the caller holds the pool's executor lock for reading. */
void cpuexec__pp_app_get(pthreadpool_t pool, struct pthreadpool_executor *ops, void **context);

/* A claim from the front of the owner's own slot. */
static inline int cpuexec__pp_claim(cpuexec__pp_slot *slot) {
  return atomic_fetch_sub_explicit(&slot->remaining, 1, memory_order_relaxed) > 0;
}

#endif
