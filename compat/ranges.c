/* Range schedules and costed ranges for existing kernel code (include/cpuexec/compat/ranges.h).
 *
 * The schedule decides how many blocks a call is worth; the executor decides
 * which participant runs which. Blocks are numbered 0..blocks-1 and handed to
 * cpuexec_parallel_for() as a loop over block indices with grain 1, so the
 * executor's "each index exactly once" becomes "each block exactly once",
 * and a range of adjacent blocks maps back to one contiguous index range. */
#include <cpuexec/compat/ranges.h>

#include <inttypes.h>
#include <string.h>

#include <cpuexec/session.h>

#include "adapter_private.h"
#include "split_private.h"

CPUEXEC_EXPORT void cpuexec_range_schedule_init(cpuexec_range_schedule *schedule) {
  if (schedule != NULL)
    memset(schedule, 0, sizeof *schedule);
}

/* One call's split: `blocks` balanced pieces of `units` units of `multiple`
 * indices, the last unit cut at `total`. Read-only while the executor runs
 * it, so participants share it without synchronisation. */
typedef struct ranges_split {
  uint64_t total;
  uint64_t multiple;
  uint64_t units;
  uint64_t blocks;
  void *ctx;
  cpuexec_range_fn fn;
} ranges_split;

/* The first index of block b: multiple * floor(units * b / blocks)
 * (compat/split_private.h; blocks < 2^32). */
static int64_t split_boundary(const ranges_split *split, uint64_t b) {
  uint64_t unit = cpuexec__split_point(split->units, split->blocks, b);
  uint64_t index = unit * split->multiple; /* <= total + multiple - 1 < 2^64 */
  return (int64_t)(index < split->total ? index : split->total);
}

static int split_run_blocks(void *arg, int64_t first_block, int64_t end_block) {
  const ranges_split *split = arg;
  return cpuexec__compat_call_in_region(split->ctx, split->fn, split_boundary(split, (uint64_t)first_block),
                                        split_boundary(split, (uint64_t)end_block));
}

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* Checks *s and writes it to *out with every 0 replaced by its meaning. */
static int check_schedule(const cpuexec_range_schedule *s, cpuexec_range_schedule *out) {
  if (s->min_parallel_size < 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "min_parallel_size: %" PRId64 " is negative; use 0 or more",
                         s->min_parallel_size);
  if (s->min_block_size < 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "min_block_size: %" PRId64 " is negative; use 0 (1 index) or more",
                         s->min_block_size);
  if (s->block_multiple < 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "block_multiple: %" PRId64 " is negative; use 0 (1 index) or more",
                         s->block_multiple);
  if (s->max_participants < 0 || s->preferred_participants < 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "%s: %d is negative; use 0 for the executor's limit",
                         s->max_participants < 0 ? "max_participants" : "preferred_participants",
                         (int)(s->max_participants < 0 ? s->max_participants : s->preferred_participants));
  *out = *s;
  if (out->min_block_size == 0)
    out->min_block_size = 1;
  if (out->block_multiple == 0)
    out->block_multiple = 1;
  return 0;
}

CPUEXEC_EXPORT int cpuexec_ranges_execute(int64_t total, const cpuexec_range_schedule *schedule, void *ctx,
                                          cpuexec_range_fn fn) {
  cpuexec_range_schedule defaults;
  if (schedule == NULL) {
    cpuexec_range_schedule_init(&defaults);
    schedule = &defaults;
  }
  if (fn == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "fn: NULL; pass the range callback");
  cpuexec_range_schedule checked = {0};
  int rc = check_schedule(schedule, &checked);
  if (rc != 0)
    return rc;
  schedule = &checked;
  if (total <= 0)
    return 0;

  cpuexec_executor *exec = cpuexec_executor_current();
  if (exec == NULL || cpuexec__compat_nested() || total < schedule->min_parallel_size)
    return cpuexec__callback_rc(cpuexec__compat_run_serial(ctx, fn, 0, total));

  uint64_t multiple = (uint64_t)schedule->block_multiple;
  uint64_t units = (uint64_t)total / multiple + ((uint64_t)total % multiple != 0);
  uint64_t min_units = (uint64_t)schedule->min_block_size / multiple +
                       ((uint64_t)schedule->min_block_size % multiple != 0);
  uint64_t by_work = units / min_units;

  uint32_t limit = (uint32_t)cpuexec_executor_effective_threads(exec);
  if (schedule->max_participants != 0)
    limit = min_u32(limit, (uint32_t)schedule->max_participants);
  if (schedule->preferred_participants != 0)
    limit = min_u32(limit, (uint32_t)schedule->preferred_participants);
  uint64_t blocks = by_work < limit ? by_work : limit;
  if (blocks <= 1)
    return cpuexec__callback_rc(cpuexec__compat_run_serial(ctx, fn, 0, total));

  ranges_split split = {(uint64_t)total, multiple, units, blocks, ctx, fn};
  return cpuexec_parallel_for(exec, (int64_t)blocks, 1, &split, split_run_blocks, (int32_t)blocks);
}

/* Costed calls: the plan's grain, rounded to the multiple, is the block. */
typedef struct costed_call {
  void *ctx;
  cpuexec_range_fn fn;
} costed_call;

static int costed_run_range(void *arg, int64_t begin, int64_t end) {
  const costed_call *call = arg;
  return cpuexec__compat_call_in_region(call->ctx, call->fn, begin, end);
}

CPUEXEC_EXPORT int cpuexec_ranges_execute_costed(int64_t total, const cpuexec_cost *cost,
                                                 const cpuexec_plan_constraints *constraints,
                                                 int64_t block_multiple, void *ctx, cpuexec_range_fn fn) {
  if (fn == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "fn: NULL; pass the range callback");
  if (cost == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "cost: NULL; pass the per-index cost of the loop body");
  if (block_multiple < 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "block_multiple: %" PRId64 " is negative; use 0 (1 index) or more",
                         block_multiple);
  if (block_multiple == 0)
    block_multiple = 1;
  if (total <= 0)
    return 0;

  cpuexec_executor *exec = cpuexec_executor_current();
  if (exec == NULL || cpuexec__compat_nested())
    return cpuexec__callback_rc(cpuexec__compat_run_serial(ctx, fn, 0, total));

  cpuexec_plan_constraints none = {0};
  cpuexec_plan plan;
  int rc = cpuexec_parallel_for_plan(exec, total, cost, constraints != NULL ? constraints : &none, &plan);
  if (rc != 0)
    return rc;
  if (plan.participants <= 1 || plan.grain >= total)
    return cpuexec__callback_rc(cpuexec__compat_run_serial(ctx, fn, 0, total));

  int64_t grain = plan.grain < 1 ? 1 : plan.grain;
  if (grain % block_multiple != 0) {
    int64_t up = block_multiple - grain % block_multiple;
    grain = grain > INT64_MAX - up ? total : grain + up;
  }
  if (grain >= total)
    return cpuexec__callback_rc(cpuexec__compat_run_serial(ctx, fn, 0, total));
  costed_call call = {ctx, fn};
  return cpuexec_parallel_for(exec, total, grain, &call, costed_run_range, plan.participants);
}
