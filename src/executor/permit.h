/* Internal: the permit model, the one place that decides who may run
 * (doc/spinning.md, "The permit model").
 *
 * Every question of the form "may this thread run now?" is asked here, and
 * nowhere else: how many participants a region may admit, whether worker k
 * joins a region or stands aside, whether a waiting thread spins, how long
 * (the plan's spin, the long spin, the gap spin, the cadence) and when it
 * parks, whether a caller or a worker steps off its processor, and
 * whether a caller runs its region in pieces and yields between them. They
 * are all one question asked at different moments: are there more runnable
 * threads than processors? (cpuexec__permit_oversubscribed, the one
 * predicate.)
 *
 * The model reads one record of facts per executor (cpuexec__permit): its
 * threads, the processors visible, the pinning, and, live, the callers
 * running regions beside lane 0's; per worker (cpuexec__permit_worker) what
 * it saw of those callers and the gaps it waited through; per thread
 * (cpuexec__permit_thread) its preemptions. The clock and the preemption
 * count come through cpuexec__permit_now_ns and
 * cpuexec__permit_preemptions, which a white-box test replaces
 * (cpuexec__test_permit_clock, cpuexec__test_permit_preemptions). Every
 * rule is a function of these facts alone, so each one is tested by
 * feeding it facts (tests/whitebox/test_permit.c).
 *
 * The rules, each a function below (the table in doc/spinning.md):
 *   oversubscribed     runnable > processors, the one predicate;
 *   spin at all        an adaptive executor with more threads than visible
 *                      processors parks at once;
 *   occupancy cap      a region opened while `side` other callers run
 *                      admits at most threads - side participants;
 *   stand aside        worker k leaves take-over regions to their callers
 *                      while k + 1 + side > threads;
 *   settle             a worker that saw callers meet parks at once for
 *                      CPUEXEC__UNSETTLED_REGIONS regions, or until they
 *                      have not met for CPUEXEC__UNSETTLED_NS;
 *   crowd pieces       a caller alone among more callers than threads runs
 *                      its region in pieces, yielding between them;
 *   crowd rest         such a caller, where callers of several processes
 *                      are over the node's budget, whose yields find its
 *                      processor empty CPUEXEC__CROWD_ALONE_YIELDS times in
 *                      a row rests, and takes no turn after its region's
 *                      last piece;
 *   crowd move         such a caller among one process's callers, on a
 *                      processor that holds two more of them than another,
 *                      moves there;
 *   pinned processor   a free caller on a pinned worker's processor steps
 *                      off it;
 *   stuck worker       a woken worker that misses regions unseen makes an
 *                      unplaced, calm caller of unpinned workers step off;
 *   beside caller      a floating worker that joins on its caller's
 *                      processor steps off it;
 *   crowded lately     a thread preempted within CPUEXEC__CROWDED_WINDOW_NS
 *                      skips the long and gap spins;
 *   long spin          an adaptive waiter spins on, up to
 *                      CPUEXEC__LONG_SPIN_NS, while what will wake it runs;
 *   share processor    a spinning thread on the processor of the thread it
 *                      waits for yields at each clock check;
 *   node budget        a worker joins and spins only with a permit of the
 *                      node's budget (the processes of its cgroup, make's
 *                      jobserver), given back before it parks; callers of
 *                      the process's other pools that met lately count as
 *                      running until they have not met for
 *                      CPUEXEC__UNSETTLED_NS (the settle, across pools:
 *                      cpuexec__node_others_running);
 *   gap spin           an adaptive worker that was woken by a region within
 *                      CPUEXEC__GAP_SPIN_MAX_NS of its park spins through
 *                      such gaps while they recur.
 *
 * On a bigger machine every rule compares counts against the executor's
 * own threads and the visible processors, never a constant number of
 * processors (doc/performance.md, "Bigger machines"). */
#ifndef CPUEXEC_SRC_PERMIT_H
#define CPUEXEC_SRC_PERMIT_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/cache_line.h"
#include "core/test_hooks.h"
#include "core/tunables.h"
#include "node/node_budget.h"
#include "os/os.h"

/* `side`: callers running take-over regions beside lane 0's (bits 0-15)
 * and how many ever came (bits 16-31, wrapping). */
#define CPUEXEC__SIDE_CALLERS 0xffffu
#define CPUEXEC__SIDE_ARRIVAL (1u << 16)

/* The facts of one executor. The first group is fixed when the executor is
 * made; `side` and `strict_running` are written only by callers beside
 * another (region.c), so on the one-caller path their line stays shared;
 * lane0_arrivals_seen is lane 0's caller's own (under dispatch_lock). */
typedef struct cpuexec__permit {
  uint32_t threads;         /* the executor's threads: the processors it may use */
  uint32_t processors;      /* processors visible to the process (0: unknown) */
  bool adaptive;            /* the adaptive policy, spinning (not parked at once): the model may lengthen or cut spins */
  bool strict_policy;       /* every region is strict: nobody stands aside */
  bool placed_caller;       /* the policy pins the caller */
  bool node_off;            /* the policy keeps the executor out of the node's budget (node_budget=off) */
  int32_t first_worker_cpu; /* worker 1's pinned processor, -1 when workers float */
  alignas(CPUEXEC__LINE) _Atomic uint32_t side;
  _Atomic uint64_t last_arrival_ns; /* the clock at the latest arrival beside another (the settle) */
  _Atomic uint32_t strict_running; /* a CPUEXEC_FOR_EVERY_PARTICIPANT region of a take-over executor runs */
  uint32_t lane0_arrivals_seen;
} cpuexec__permit;

/* What one worker's questions remember. Its own, no atomics. */
typedef struct cpuexec__permit_worker {
  uint32_t arrivals_seen;     /* the arrivals of callers beside another last seen */
  uint32_t unsettled_regions; /* regions to go without a new arrival before it spins again */
  uint64_t gap_spin_ns;       /* the learnt gap spin, 0: none */
  uint32_t waits_since_gap;   /* waits since a gap that taught it */
} cpuexec__permit_worker;

/* What one thread's questions remember: its preemptions at its last look. */
typedef struct cpuexec__permit_thread {
  uint64_t preemptions_seen;
  uint64_t seen_ns;
} cpuexec__permit_thread;

/* What lane 0's caller keeps per worker to tell a stuck worker (the
 * stuck-worker rule), in the worker's slot. */
typedef struct cpuexec__permit_misses {
  uint32_t seen_at_wake;  /* the worker's regions_seen when the caller last woke it */
  uint32_t seen_at_miss;  /* ... when it last missed a region */
  uint32_t unseen_misses; /* misses in a row without seeing a region */
} cpuexec__permit_misses;

/* ---- the facts that are not fields ------------------------------------ */

/* The clock (CLOCK_MONOTONIC ns) and the calling thread's involuntary
 * context switches, as the model reads them: the OS layer's in the shipped
 * library, a test's in the white-box build. */
typedef uint64_t (*cpuexec__permit_fact_fn)(void);
#if CPUEXEC_TEST_HOOKS
extern _Atomic(cpuexec__permit_fact_fn) cpuexec__test_permit_clock;
extern _Atomic(cpuexec__permit_fact_fn) cpuexec__test_permit_preemptions;
/* A test of another waiting rule sets it so that no wait teaches a gap
 * spin: a lesson depends on how soon the OS woke a parked thread, which a
 * test cannot fix (the gap spin's own tests feed the lessons). */
extern _Atomic bool cpuexec__test_permit_no_gap_lessons;
/* The executors' workers that hold the model's permit to run, as gauges
 * (core/test_hooks.h): `running`, inside a region's share or a task
 * group's tasks, from the join to the leave; `spinning`, inside a wait
 * whose plan spins before it parks (the spin at all, settle and node rules
 * let it), from the wait's start to its end. A worker outside both is
 * parked, or on its way between them (tests/whitebox/test_permit_runnable.c
 * holds them to the model's bound). */
extern cpuexec__test_gauge cpuexec__test_permit_running;
extern cpuexec__test_gauge cpuexec__test_permit_spinning;
#endif
uint64_t cpuexec__permit_now_ns(void);
uint64_t cpuexec__permit_preemptions(void);

/* ---- the rules ---------------------------------------------------------- */

/* The one predicate: more runnable threads than processors to run them. */
static inline bool cpuexec__permit_oversubscribed(uint32_t runnable, uint32_t processors) {
  return processors != 0 && runnable > processors;
}

/* The facts of a new executor of `threads` on `processors`: no caller
 * beside another yet, a fixed spin policy, nobody placed. The creator sets
 * the other fixed facts before the executor is handed out. */
void cpuexec__permit_init(cpuexec__permit *p, uint32_t threads, uint32_t processors);

/* Spin at all: an adaptive executor of `threads` with more threads than
 * the process has processors parks its waiters at once, when its
 * resolution says so (park_when_oversubscribed): a spin would take the
 * processor from the thread waited for. Decided once, when the executor is
 * made (its spin plan); `adaptive` in the facts is the outcome. */
static inline bool cpuexec__permit_adaptive_spins(uint32_t threads, uint32_t processors,
                                                  bool park_when_oversubscribed) {
  return !(park_when_oversubscribed && cpuexec__permit_oversubscribed(threads, processors));
}

static inline uint32_t cpuexec__permit_side_callers(const cpuexec__permit *p) {
  return atomic_load_explicit(&((cpuexec__permit *)p)->side, memory_order_relaxed) & CPUEXEC__SIDE_CALLERS;
}

/* A caller beside another arrives (returns nothing) and leaves. */
static inline void cpuexec__permit_caller_arrives(cpuexec__permit *p) {
  atomic_fetch_add_explicit(&p->side, CPUEXEC__SIDE_ARRIVAL + 1, memory_order_relaxed);
  atomic_store_explicit(&p->last_arrival_ns, cpuexec__permit_now_ns(), memory_order_relaxed);
}
static inline void cpuexec__permit_caller_leaves(cpuexec__permit *p) {
  atomic_fetch_sub_explicit(&p->side, 1, memory_order_relaxed);
}

/* The occupancy cap: the participants a take-over region opened now may
 * admit, of the `participants` it asks for, so that with the callers
 * running now they do not outnumber the threads (1: it runs alone).
 * Regions opened earlier keep what they admitted (region_lanes.h). */
static inline uint32_t cpuexec__permit_region_admits(const cpuexec__permit *p, uint32_t participants) {
  uint32_t side = cpuexec__permit_side_callers(p);
  if (side == 0) return participants;
  uint32_t room = cpuexec__permit_oversubscribed(side + 1, p->threads) ? 1 : p->threads - side;
  return participants < room ? participants : room;
}

/* Stand aside: whether worker `worker` (1-based) leaves take-over regions
 * to their callers now. Read after an acquire of the region's epoch or
 * admit word, so a strict region's mark is seen. */
static inline bool cpuexec__permit_stands_aside(const cpuexec__permit *p, uint32_t worker) {
  uint32_t side = cpuexec__permit_side_callers(p);
  return side != 0 && cpuexec__permit_oversubscribed(worker + 1 + side, p->threads) && !p->strict_policy &&
         atomic_load_explicit(&((cpuexec__permit *)p)->strict_running, memory_order_relaxed) == 0;
}

/* The settle's quiet spell: no caller arrived beside another for
 * CPUEXEC__UNSETTLED_NS (the callers stopped meeting). Reads the clock. */
static inline bool cpuexec__permit_callers_quiet(const cpuexec__permit *p) {
  uint64_t last = atomic_load_explicit(&((cpuexec__permit *)p)->last_arrival_ns, memory_order_relaxed);
  return cpuexec__permit_now_ns() - last >= CPUEXEC__UNSETTLED_NS;
}

/* The settle: whether worker w spins while it waits for a region: not
 * while standing aside, nor within CPUEXEC__UNSETTLED_REGIONS regions of a
 * caller's arrival beside another, unless CPUEXEC__UNSETTLED_NS passed
 * since the latest arrival (the callers stopped meeting: the one left
 * would pay a wake per region for nothing). The clock is read only while
 * unsettled. Called once per region the worker sees. */
static inline bool cpuexec__permit_worker_spins(const cpuexec__permit *p, cpuexec__permit_worker *w, bool aside) {
  uint32_t arrivals = atomic_load_explicit(&((cpuexec__permit *)p)->side, memory_order_relaxed) / CPUEXEC__SIDE_ARRIVAL;
  if (arrivals != w->arrivals_seen) {
    w->arrivals_seen = arrivals;
    w->unsettled_regions = CPUEXEC__UNSETTLED_REGIONS;
  } else if (w->unsettled_regions > 0) {
    w->unsettled_regions = cpuexec__permit_callers_quiet(p) ? 0 : w->unsettled_regions - 1;
  }
  return !aside && w->unsettled_regions == 0;
}

/* The node level (node/node_budget.h, doc/node-budget.md): whether a
 * worker holds a permit of the node's budget to run or spin with, taking
 * one if it holds none; an executor whose policy keeps it out of the
 * budget (node_off) needs none. `counts`: where the worker's permits are
 * counted (NULL: nowhere). */
static inline bool cpuexec__permit_node_runs(const cpuexec__permit *p, const cpuexec__node_counts *counts) {
  return p->node_off || cpuexec__node_permit_run(counts);
}

/* Whether a worker may join a region now (a task group's queued tasks it
 * runs regardless: region_lanes.h): with a permit (node_runs), which it
 * keeps while it runs or spins and gives back before it parks; without
 * one it leaves its share to the caller, as a worker standing aside does.
 * A strict region waits for its whole team, so its workers join
 * regardless (over the budget, as callers run). */
static inline bool cpuexec__permit_node_lets_join(const cpuexec__permit *p, const cpuexec__node_counts *counts) {
  return cpuexec__permit_node_runs(p, counts) || p->strict_policy ||
         atomic_load_explicit(&((cpuexec__permit *)p)->strict_running, memory_order_relaxed) != 0;
}

/* The node level's occupancy cap (node/node_budget.h; none where the
 * policy keeps the executor out of the budget): the caller of a
 * region of `participants` tells the node its process runs (its callers'
 * implicit slot) and learns how many participants the node's budget lets
 * it admit now: 1 when no worker of any process could take a slot, so
 * that none is woken to be refused, and region->crowded when the node's
 * callers alone are more than its budget (the crowd rule then applies to a
 * region its caller runs alone, as among one executor's callers); the
 * caller tells the node when the region ends (cpuexec__node_region_ends).
 * A strict region waits for its whole team, so it admits them regardless. */
static inline uint32_t cpuexec__permit_node_admits(const cpuexec__permit *p, bool strict, uint32_t participants,
                                                   cpuexec__node_region *region) {
  if (p->node_off) {
    *region = (cpuexec__node_region){0};
    return participants;
  }
  uint32_t room = cpuexec__node_region_admits(participants, cpuexec__permit_now_ns, region);
  return strict || p->strict_policy ? participants : room;
}
/* Serving a task group settles a worker: the group's waiter helps, it does
 * not compete for a processor. */
static inline void cpuexec__permit_worker_settled(cpuexec__permit_worker *w) { w->unsettled_regions = 0; }

/* Crowd pieces: whether a caller running alone among `callers` callers
 * runs its region in pieces and yields between them (more callers than
 * threads: the kernel time-slices them). */
static inline bool cpuexec__permit_caller_crowded(const cpuexec__permit *p, uint32_t callers) {
  return cpuexec__permit_oversubscribed(callers, p->threads);
}

/* The length in indices of one crowd piece: ceil(chunks /
 * CPUEXEC__CROWD_PIECES) chunks, computed without a sum that can
 * overflow. */
static inline int64_t cpuexec__permit_crowd_step(int64_t total, int64_t grain) {
  int64_t chunks = total / grain + (total % grain != 0);
  return (chunks / CPUEXEC__CROWD_PIECES + (chunks % CPUEXEC__CROWD_PIECES != 0)) * grain;
}

/* Whether a crowded caller yields its processor after a piece, at now_ns,
 * its slice having begun at slice_start (a new slice begins after the
 * yield). */
static inline bool cpuexec__permit_crowd_yields(uint64_t now_ns, uint64_t slice_start) {
  return now_ns - slice_start >= CPUEXEC__CROWD_SLICE_NS;
}

/* Whether a crowded caller takes its turn (crowd_yields) after a piece,
 * the region's last when last_piece. Among several processes' callers
 * (among_processes) not after the last: a turn there delays the region's
 * return and doubles the switches (one in the region, one at its end),
 * and a switch between processes costs about twice one between threads;
 * the caller's next region, or its serial work, goes on with the slice.
 * Callers of one process keep the turn at the end (doc/performance.md
 * section 6: without it their p99 rose to a scheduler tick). */
static inline bool cpuexec__permit_crowd_turns(uint64_t now_ns, uint64_t slice_start, bool last_piece,
                                               bool among_processes) {
  return !(last_piece && among_processes) && cpuexec__permit_crowd_yields(now_ns, slice_start);
}

/* Crowd rest: whether a crowded caller whose yield took yield_ns rests
 * (sleeps CPUEXEC__CROWD_REST_NS) before its next piece. The kernel places
 * a thread when it wakes and when a processor falls idle, never among
 * threads that only yield: four busy callers on two processors can stay
 * three on one and one on the other, the lone one running three times as
 * many regions. A yield that returns at once found nobody else runnable on
 * the caller's processor; found CPUEXEC__CROWD_ALONE_YIELDS times in a row
 * (one neighbour that blocked for a moment is not a queue elsewhere), the
 * caller rests, its processor falls idle and the kernel moves a queued
 * caller there. *alone_in_a_row counts those yields; a yield that let
 * another thread run, or a rest, starts it again. */
static inline bool cpuexec__permit_crowd_rests(uint32_t *alone_in_a_row, uint64_t yield_ns) {
  if (yield_ns >= CPUEXEC__CROWD_ALONE_NS) {
    *alone_in_a_row = 0;
    return false;
  }
  if (++*alone_in_a_row < CPUEXEC__CROWD_ALONE_YIELDS) return false;
  *alone_in_a_row = 0;
  return true;
}

/* Crowd move: whether a crowded caller moves to the emptiest processor,
 * its own holding `here` of its process's crowded callers (itself
 * included) and that one `fewest` (src/executor/crowd_places.h counts
 * them). Moving one brings the two nearer even only when they differ by
 * two or more: three and one become two and two; two and one stay as even
 * as they can be. Only once seen CPUEXEC__CROWD_UNEVEN_LOOKS turns in a
 * row (*uneven_looks counts them): a caller counts itself where it runs
 * at its own turns, so a count may be a turn old, and moving on it would
 * undo a move the kernel made meanwhile. here == 0: the caller's
 * processor is not known. */
static inline bool cpuexec__permit_crowd_moves(uint32_t *uneven_looks, uint32_t here, uint32_t fewest) {
  if (here == 0 || here < fewest + 2) {
    *uneven_looks = 0;
    return false;
  }
  if (++*uneven_looks < CPUEXEC__CROWD_UNEVEN_LOOKS) return false;
  *uneven_looks = 0;
  return true;
}

/* Pinned processor: whether a caller running on `cpu` steps off it before
 * its region: the policy does not place it, the workers are pinned, and
 * it runs on worker 1's processor, where nothing could run in parallel. */
static inline bool cpuexec__permit_caller_on_worker_cpu(const cpuexec__permit *p, int32_t cpu) {
  return p->adaptive && !p->placed_caller && cpu >= 0 && cpu == p->first_worker_cpu;
}

/* Stuck worker, the count: lane 0's caller found the worker of `m` missing
 * a region (seen: its regions_seen now); true when the worker, woken by the
 * caller and having seen at most one region since, has missed
 * CPUEXEC__STUCK_MISSES in a row without seeing one (it is runnable but
 * does not run: queued behind the caller). A worker that spins is never
 * woken, so one descheduled by a busy machine is not this case. */
static inline bool cpuexec__permit_worker_stuck(cpuexec__permit_misses *m, uint32_t seen) {
  m->unseen_misses = seen == m->seen_at_miss ? m->unseen_misses + 1 : 0;
  m->seen_at_miss = seen;
  if (m->unseen_misses < CPUEXEC__STUCK_MISSES || seen - m->seen_at_wake > 1u) return false;
  m->unseen_misses = 0;
  return true;
}

/* Stuck worker, the gate: whether lane 0's caller, having found a stuck
 * worker, steps off its processor: not when the policy places it, nor
 * when the workers are pinned (the pinned-processor rule handles those),
 * nor when other callers arrived beside it since it last looked (then the
 * occupancy cap is what decides). Lane 0's caller only. */
static inline bool cpuexec__permit_caller_steps_off_for_stuck(cpuexec__permit *p) {
  uint32_t arrivals = atomic_load_explicit(&p->side, memory_order_relaxed) / CPUEXEC__SIDE_ARRIVAL;
  bool calm = arrivals == p->lane0_arrivals_seen;
  p->lane0_arrivals_seen = arrivals;
  return calm && !p->placed_caller && p->first_worker_cpu < 0;
}

/* The beside-caller rule's conditions (below): floating workers, no more
 * threads than processors, no caller running beside lane 0's. */
static inline bool cpuexec__permit_beside_applies(const cpuexec__permit *p) {
  return p->first_worker_cpu < 0 && cpuexec__permit_side_callers(p) == 0 &&
         !cpuexec__permit_oversubscribed(p->threads, p->processors);
}

/* Beside its caller: whether a floating worker about to join lane 0's
 * region on `cpu` steps off that processor first because the region's
 * caller opened it there (caller_cpu); and a worker about to serve a task
 * group's tasks, because the group's submitter submitted them there (it
 * often goes on working until it waits). The kernel may put a woken thread on its
 * waker's processor while another idles, and a spinning worker there only
 * yields to the caller until the region opens; then one of the pair runs
 * its whole share before the other runs its own, and the region takes
 * both shares' time (doc/performance.md, section 8, "Beside its caller").
 * Once together, the pair stays: the worker waits there for the next
 * region. The stuck-worker rule sees the other order only after missed
 * regions; this one sees the pair as the worker checks in. Only while the
 * executor's threads account for every runnable thread of the process:
 * not when the workers are pinned (they cannot move: the pinned-processor
 * rule moves the caller), nor when the executor has more threads than
 * processors, nor while callers run beside lane 0's or the worker is still
 * unsettled by a meeting (the settle, its quiet spell read now: the count
 * was last moved before the worker's wait): then the other processor is
 * another caller's, and a worker moved there would take it from that
 * caller. */
static inline bool cpuexec__permit_worker_steps_off(const cpuexec__permit *p, const cpuexec__permit_worker *w,
                                                    int32_t cpu, int32_t caller_cpu) {
  return cpu >= 0 && cpu == caller_cpu && cpuexec__permit_beside_applies(p) &&
         (w->unsettled_regions == 0 || cpuexec__permit_callers_quiet(p));
}

/* Beside its submitter: whether a thread that has just woken a parked
 * worker for its task group's tasks yields its processor once. The kernel
 * may put the woken worker on the waker's processor, behind a submitter
 * that goes on working until it waits; unless the worker preempts it, it
 * waits there that long while another processor idles. Yielding lets it
 * run at once and move off (the beside-caller rule, above); where the
 * worker went elsewhere, the yield returns at once. Under the rule's own
 * conditions: floating workers, no more threads than processors, no other
 * caller running. */
static inline bool cpuexec__permit_submitter_yields(const cpuexec__permit *p) {
  return cpuexec__permit_beside_applies(p);
}

/* Sharing a processor: whether a spinning thread runs on the processor of
 * the thread it waits for (share_cpu: where that one runs, -1 unknown;
 * NULL: not known at all), so that its spin would hold off the very thread
 * it waits for: it yields instead, at each of its clock checks, and the
 * load balancer is free to move them apart. No system call on Linux. */
static inline bool cpuexec__permit_shares_processor(const _Atomic int32_t *share_cpu) {
  return share_cpu && atomic_load_explicit(share_cpu, memory_order_relaxed) == cpuexec__os_current_cpu();
}

/* Crowded lately: whether the thread, now at `preemptions` involuntary
 * switches, was preempted since a look less than CPUEXEC__CROWDED_WINDOW_NS
 * before now_ns (a preemption long ago says nothing about the machine
 * now). Records this look. */
static inline bool cpuexec__permit_crowded_lately(cpuexec__permit_thread *t, uint64_t preemptions, uint64_t now_ns) {
  bool crowded = preemptions != t->preemptions_seen && now_ns - t->seen_ns < CPUEXEC__CROWDED_WINDOW_NS;
  t->preemptions_seen = preemptions;
  t->seen_ns = now_ns;
  return crowded;
}

/* Long spins (the long spin and the gap spin): whether the calling thread
 * may spin past its plan's spin now. Only adaptive plans ask; a thread
 * crowded lately may not. One system call (the preemption count), made
 * only when a plan's spin ran out. */
bool cpuexec__permit_may_spin_long(uint64_t now_ns);

/* The gap spin: how long, from the start of its wait, worker w spins when
 * no cadence is followed (0, or no more than the plan's spin: the plan's
 * spin alone). */
static inline uint64_t cpuexec__permit_gap_spin_ns(const cpuexec__permit_worker *w) { return w->gap_spin_ns; }

/* The gap spin, learning: worker w's wait of `waited_ns` (from its start
 * to the region it ended on) ended in a park (`slept`) or not. A park
 * woken within CPUEXEC__GAP_SPIN_MAX_NS teaches a spin of one and a half
 * times that gap (at most the maximum); a lesson is kept while such gaps
 * recur within CPUEXEC__GAP_SPIN_MEMORY_WAITS waits, and a wait longer than
 * the maximum, or one that parked anyway, forgets it. spin_ns is the
 * plan's spin: gaps it covers teach nothing. */
void cpuexec__permit_note_wait(cpuexec__permit_worker *w, uint64_t spin_ns, uint64_t waited_ns, bool slept);

#endif
