/** @file
 * libcpuexec compat: range schedules for existing kernel code.
 *
 * A kernel turns its independent work into a one-dimensional total (elements,
 * output tiles, rows) and hands it to cpuexec_ranges_execute(). That call is
 * the serial loop
 *
 *     fn(ctx, 0, total);
 *
 * split, when it is worth it, into contiguous blocks that the executor
 * installed on the calling thread (cpuexec_executor_current()) runs in parallel:
 *   - total <= 0 calls nothing and returns 0;
 *   - every index in [0, total) is passed exactly once, in half-open ranges
 *     [begin, end); every boundary between two ranges is a multiple of
 *     block_multiple; ordering between ranges is unspecified;
 *   - one range [0, total) on the calling thread ("one block") when there is
 *     no executor installed, when the call is made from inside a callback of
 *     any libcpuexec call or adapter (nested work stays serial), when total is
 *     below min_parallel_size, or when the limits below allow one block only;
 *   - otherwise blocks = min(executor threads, max_participants (0: no limit
 *     beyond the executor's), preferred_participants (0: none), the number of
 *     blocks of at least min_block_size indices the total can hold).
 *     The total is cut into that many balanced blocks (their sizes, in units
 *     of block_multiple, differ by at most one unit), so every block holds at
 *     least min_block_size indices except when the total itself is rounded
 *     up to the multiple. A callback receives one block or several adjacent
 *     blocks merged into one range, never a part of one;
 *   - every callback runs inside a region scope: the thread's callback depth
 *     (the same depth the executor keeps for nested calls) is raised for
 *     the call, so anything it calls through libcpuexec runs as one block on
 *     that thread, and cpuexec_executor_current() still names the region's executor;
 *   - a callback returning non-zero stops blocks that have not started; the
 *     call returns CPUEXEC_ECALLBACK after every started callback has
 *     finished (the value: cpuexec_error_callback_value(), cpuexec/errors.h),
 *     and the thread's scope and depth are as they were before the call; an
 *     executor failure (CPUEXEC_EFORKED in a forked child) is returned with
 *     its message.
 * Destinations: the callbacks write wherever the kernel writes, so a failing
 * kernel may leave its output partly written. A kernel that must leave its
 * output unchanged on failure stages its results and copies them after a
 * successful call (see doc/adapters.md).
 *
 * Direct low-level calls outside any session run serially; to give them an
 * executor, install one with cpuexec_scope_enter() around the call. */
#ifndef CPUEXEC_COMPAT_RANGES_H
#define CPUEXEC_COMPAT_RANGES_H

#include <cpuexec/common.h>
#include <cpuexec/executor.h>

/** Every field's default is 0, so {0} and cpuexec_range_schedule_init() are
 * the same schedule: as many blocks as the installed executor has threads,
 * of at least one index. Negative values are rejected (CPUEXEC_EINVAL). */
typedef struct cpuexec_range_schedule {
  /** A total below this runs as one block. 0: no threshold beyond
   * min_block_size. */
  int64_t min_parallel_size;
  /** The fewest indices a block should hold; bounds the block count to
   * total / min_block_size. 0 means 1. */
  int64_t min_block_size;
  /** Block boundaries are multiples of this (for example SIMD lanes). 0
   * means 1. */
  int64_t block_multiple;
  /** At most this many blocks (and so participants); 0: the executor's
   * limit; 1 keeps the kernel serial. */
  int32_t max_participants;
  /** The block count the kernel would like when the other limits allow it;
   * 0: as many as the limits allow. */
  int32_t preferred_participants;
  uint64_t reserved_[4]; /**< zero: room for fields of later versions */
} cpuexec_range_schedule;

CPUEXEC_BEGIN_DECLS

/** Sets the defaults above (every field 0). NULL is ignored. */
CPUEXEC_EXPORT void cpuexec_range_schedule_init(cpuexec_range_schedule *schedule);

/** Runs fn over [0, total) as described at the top of this header.
 * schedule NULL: the defaults. fn NULL or a schedule field out of range is
 * CPUEXEC_EINVAL with a message naming the field. Thread safety: callable
 * from any thread; the schedule is read during the call only. */
CPUEXEC_EXPORT int cpuexec_ranges_execute(int64_t total, const cpuexec_range_schedule *schedule, void *ctx,
                                          cpuexec_range_fn fn);

/** The same with the block size chosen by the installed executor's planner:
 * cpuexec_parallel_for_plan(cpuexec_executor_current(), total, cost, constraints)
 * gives a grain and a participant count; the grain is rounded up to
 * block_multiple (at least 1), and the loop runs on at most the planned
 * participants, each range holding whole grains (the executor's rule, see
 * cpuexec/executor.h). A plan of one participant, no executor and nested
 * calls run one block on the caller, as above. constraints NULL: no limits;
 * block_multiple 0 means 1, negative is CPUEXEC_EINVAL; cost NULL is
 * CPUEXEC_EINVAL. */
CPUEXEC_EXPORT int cpuexec_ranges_execute_costed(int64_t total, const cpuexec_cost *cost,
                                                 const cpuexec_plan_constraints *constraints,
                                                 int64_t block_multiple, void *ctx, cpuexec_range_fn fn);

CPUEXEC_END_DECLS

#endif
