/* Internal: waking a region's workers as a tree, and counting their
 * completion in groups, for regions of many participants.
 *
 * Below the threshold (CPUEXEC__WAKE_TREE_MIN participants) nothing here
 * runs: the caller bumps every worker's epoch itself (one line write, and
 * one futex call per parked worker) and every worker adds one to
 * `finished` (region.c). At and above it:
 *   - wake-up: the participants form a CPUEXEC__WAKE_TREE_FANOUT-ary tree
 *     rooted at the caller (participant i's children are i*F+1 .. i*F+F);
 *     the caller wakes its F children, and every woken worker first wakes
 *     its own children, then runs its share. The last worker starts after
 *     about log_F(p) wake latencies instead of p - 1 sequential wakes;
 *   - completion: workers 1..p-1 fall into groups of CPUEXEC__WAKE_TREE_GROUP
 *     consecutive indices, each with a counter on its own line; the last
 *     worker of a group to finish resets the group's counter and adds the
 *     group's size to `finished` in one step, so the finish line takes
 *     ceil((p - 1) / G) additions instead of p - 1, and no counter line is
 *     written by more than G participants.
 * `finished` still reaches the same finish_target, so the caller's wait
 * (region.c, wait.h) is unchanged. doc/performance.md has the cost model
 * behind the threshold and the fan-out.
 *
 * Concurrency: a parent writes its children's epochs (seq_cst, as the
 * caller does; cpuexec__store_and_wake) after its own acquire of its epoch,
 * so the slots the caller published before waking the root's children are
 * visible to every descendant; the parent does so before its own finishing
 * step, so a child's epoch is never written after the region completes and
 * the next dispatch reads each epoch as its last writer left it. A group
 * counter is reset by the group's last finisher before its add to
 * `finished` (seq_cst), and no member of the group adds to the counter again
 * until the caller has seen `finished` complete and dispatched again. */
#ifndef CPUEXEC_SRC_WAKE_TREE_H
#define CPUEXEC_SRC_WAKE_TREE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define CPUEXEC__WAKE_TREE_MIN 16u
#define CPUEXEC__WAKE_TREE_FANOUT 4u
#define CPUEXEC__WAKE_TREE_GROUP 8u

struct cpuexec_executor;

/* One completion counter per group of workers, each on its own line. */
typedef struct cpuexec__wake_group {
  _Alignas(128) _Atomic uint32_t count;
} cpuexec__wake_group;

/* The smallest participant count that uses the tree: CPUEXEC__WAKE_TREE_MIN,
 * or a test's value (cpuexec__test_wake_tree_min, when non-zero, read when
 * an executor is created). */
extern _Atomic uint32_t cpuexec__test_wake_tree_min;
uint32_t cpuexec__wake_tree_min(void);

/* The groups an executor of `threads` participants needs (NULL when its
 * threads stay below `min`, and on allocation failure: returns false). */
bool cpuexec__wake_tree_alloc(uint32_t threads, uint32_t min, cpuexec__wake_group **out);

/* Wakes participant `index`'s children in a region of `participants`;
 * returns the number of futex wake calls made. */
uint64_t cpuexec__wake_tree_children(struct cpuexec_executor *exec, uint32_t index, uint32_t participants);

/* Worker `index`'s finishing step in a tree region (replaces the single add
 * of cpuexec__region_leave). */
void cpuexec__wake_tree_leave(struct cpuexec_executor *exec, uint32_t index, uint32_t participants);

#endif
