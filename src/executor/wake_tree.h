/* Internal: waking a wide region's parked workers as a tree.
 *
 * Below the threshold (CPUEXEC__WAKE_TREE_MIN participants) nothing here
 * runs: the caller opens every worker's epoch and makes one futex wake call
 * per parked worker itself (region.c). At and above it the caller still
 * opens every epoch (so the check-in protocol of executor_internal.h is
 * untouched: only the dispatcher moves an epoch to open, only the worker
 * joins it, only the dispatcher closes it), but the wake system calls, the
 * expensive part (about a microsecond each), are shared out as a
 * CPUEXEC__WAKE_TREE_FANOUT-ary tree rooted at the caller: participant i
 * wakes i*F+1 .. i*F+F. The caller wakes its F children; a worker that
 * joined wakes its own children before running its share. A parked worker
 * is thus woken after about log_F(p) wake latencies instead of behind p - 1
 * sequential system calls. doc/performance.md has the cost model behind the
 * threshold and the fan-out.
 *
 * Why no wake is lost: a worker parks with parked = 1 (seq_cst), then
 * sleeps only if its epoch is unchanged (wait.h). The caller opens the
 * epochs from the last participant down, so every child's epoch is opened
 * before its parent's (a child's index is always above its parent's): a
 * parent that joins (acquiring its own epoch; it may have been spinning
 * and join before the caller is done) therefore happens after its
 * children's opens, and so does its seq_cst load of a child's `parked`. If
 * that load sees 0, the child's later parked = 1 and its check of the epoch
 * come after the open in the single total order, so the child sees the
 * epoch open and does not sleep; if it sees 1, the parent wakes it. (Opened
 * in rising order, a spinning parent could check a parked child before its
 * epoch moved, wake it for nothing, and the child would sleep through the
 * region: tests/whitebox/test_wake_tree.c caught exactly that.) A
 * worker that did not join (closed by the caller, who then ran its share)
 * wakes nobody: its children's epochs are closed or will be, and the caller
 * never waits for a worker that did not join. */
#ifndef CPUEXEC_SRC_WAKE_TREE_H
#define CPUEXEC_SRC_WAKE_TREE_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/test_hooks.h"
#include "core/tunables.h"

struct cpuexec_executor;

/* The smallest participant count that uses the tree: CPUEXEC__WAKE_TREE_MIN,
 * or a test's value (cpuexec__test_wake_tree_min, when non-zero, read when
 * an executor is created). */
#if CPUEXEC_TEST_HOOKS
extern _Atomic uint32_t cpuexec__test_wake_tree_min;
#endif
uint32_t cpuexec__wake_tree_min(void);

/* What an executor of `threads` participants stores in wake_tree_min:
 * the threshold, or UINT32_MAX when no region of it can reach it. */
uint32_t cpuexec__wake_tree_min_for(uint32_t threads);

/* Wakes participant `index`'s children that parked, in a region of
 * `participants` whose epochs the dispatcher has opened; returns the number
 * of futex wake calls made. */
uint64_t cpuexec__wake_tree_children(struct cpuexec_executor *exec, uint32_t index, uint32_t participants);

#endif
