/* Internal: every tunable of the scheduler in one place.
 *
 * Each constant says its unit, what it trades, and the row of `make bench`
 * whose figures chose it; the figures themselves, and the machine they
 * came from, are in doc/performance.md ("The permit model's
 * tunables"), never here, so a constant can be re-chosen on another machine
 * by rerunning the row it names. The planner's cost model keeps its own
 * constants (src/executor/plan_model.h), which a calibration rewrites.
 *
 * In core, the lowest module, because the resolution (src/resolve) and the
 * executor both read them. */
#ifndef CPUEXEC_SRC_CORE_TUNABLES_H
#define CPUEXEC_SRC_CORE_TUNABLES_H

/* ---- spinning: how long a waiting thread spins before it parks ---------- */

/* ns. The adaptive policy's plain spin after every wait begins. Longer:
 * back-to-back regions with gaps up to it find the worker spinning (no
 * wake); shorter: less CPU burnt after the last region of a burst.
 * Rows: epcc_n*, lat_gap50us (want it above the gap), idle_burn. */
#define CPUEXEC__ADAPTIVE_SPIN_NS 100000u

/* ns. The long spin: after the plain spin, an adaptive waiter goes on
 * spinning while what will wake it runs (a caller still in the region a
 * worker missed; workers still in the region a caller waits for), up to
 * this long. Longer: fewer parks at the end of long regions; shorter: less
 * burn when the region is longer still. Rows: axpy_1m, axpy_16m. */
#define CPUEXEC__LONG_SPIN_NS 1000000u

/* ns. The gap spin's ceiling: an adaptive worker that parked and was woken
 * by a region within this long learns to spin through such gaps
 * (permit.h, "the gap spin"); a gap longer than this is not worth a
 * spin. Larger: regions after longer serial phases find workers spinning;
 * smaller: less burn per gap. Rows: epcc_n64 .. epcc_n1024 (1 ms serial
 * blocks between bursts), lat_gap1ms, gemm_gflops, infer_ips. */
#define CPUEXEC__GAP_SPIN_MAX_NS 2000000u
/* waits. A learnt gap spin is kept while such a gap was seen within this
 * many waits; after that it falls back to the plain spin. Larger: a
 * pattern with rarer long gaps keeps its spin; smaller: a burst followed
 * by idleness forgets sooner. Rows: epcc_n1024 (about 21 waits a
 * cycle), idle_burn (1000 back-to-back calls, then an idle second). */
#define CPUEXEC__GAP_SPIN_MEMORY_WAITS 64u

/* ns. A thread preempted (involuntary switch) since a look less than this
 * long ago counts as crowded and skips the long and gap spins. Longer:
 * more preemptions count (a kernel thread once); shorter: a busy machine
 * is noticed less. Rows: the libcpuexec-pools rows, axpy_1m. */
#define CPUEXEC__CROWDED_WINDOW_NS 10000000u

/* pauses. A spinning thread reads the clock (and checks whether it shares
 * its processor with the thread it waits for) every this many pauses.
 * More: cheaper spins, coarser deadlines. Row: epcc_n2. */
#define CPUEXEC__SPIN_CLOCK_EVERY 32u

/* ---- the cadence (src/executor/cadence.h) ------------------------------- */

/* permille of a worker's time the adaptive policy may spend spinning to
 * follow a cadence. More: noisier streams are followed; less: lower burn.
 * Rows: burn_cad1ms, burn_cad10ms, lat_gap1ms. */
#define CPUEXEC__CADENCE_BURN_PERMILLE 200u
/* regions. Periods in a row within tolerance before a cadence is followed. */
#define CPUEXEC__CADENCE_STEADY 3u
/* ns. A cadence park wakes this long before its window opens (timer
 * slack on workers is CPUEXEC__CADENCE_TIMER_SLACK_NS). Rows: burn_cad1ms,
 * lat_gap1ms. */
#define CPUEXEC__CADENCE_WAKE_LEAD_NS 25000u
#define CPUEXEC__CADENCE_TIMER_SLACK_NS 5000u
/* ns. The narrowest half-window: a period that never varies still meets
 * clock and scheduling noise. Row: burn_cad1ms. */
#define CPUEXEC__CADENCE_MIN_WINDOW_NS 15000u
/* A period seen within max(period / CPUEXEC__CADENCE_TOLERANCE_DIVISOR,
 * CPUEXEC__CADENCE_MIN_TOLERANCE_NS ns) of the learnt one keeps the
 * cadence. Rows: burn_cad1ms, burn_cad10ms. */
#define CPUEXEC__CADENCE_TOLERANCE_DIVISOR 8u
#define CPUEXEC__CADENCE_MIN_TOLERANCE_NS 20000u

/* ---- crowding: more runnable threads than processors ------------------- */

/* regions. After callers met beside each other, a worker goes this many
 * regions without a new meeting before it spins again (the settle).
 * More: fewer spins that take a processor from a caller; fewer: the one
 * caller left finds spinning workers sooner. Rows: k2_s50, k4_s0. */
#define CPUEXEC__UNSETTLED_REGIONS 64u

/* ns. ... and no longer than this after the last meeting: a quiet spell
 * this long ends the settle early. Longer: sparse meetings still park the
 * workers; shorter: callers that meet every few milliseconds find workers
 * spinning between their regions. The same window holds callers of a
 * process's other pools as running after they met
 * (cpuexec__node_others_running). Rows: k2_s50, k4_s0 (meetings every
 * region; libcpuexec-pools for several pools), gemm_gflops (one caller
 * right after the session rows). */
#define CPUEXEC__UNSETTLED_NS 10000000u

/* A caller alone among more callers than threads runs its region in this
 * many pieces and yields its processor between them once
 * CPUEXEC__CROWD_SLICE_NS passed. More pieces or a shorter slice: finer
 * turns (a lower p99), more yields. Rows: k4_s0, k4_s50 (p99). */
#define CPUEXEC__CROWD_PIECES 16
#define CPUEXEC__CROWD_SLICE_NS 100000u

/* ns, yields. A crowded caller's yield that returned within
 * CPUEXEC__CROWD_ALONE_NS found no other thread runnable on its processor
 * (a yield that let another run returns a slice later at the soonest);
 * after CPUEXEC__CROWD_ALONE_YIELDS such yields in a row it rests
 * CPUEXEC__CROWD_REST_NS (plus the thread's timer slack) instead, so that
 * the kernel moves a caller queued on another processor onto its idle one.
 * Fewer in a row or a longer rest: the callers' turns even out sooner, and
 * a processor idles more often where a neighbour only blocked for a moment.
 * Row: np4_*_default_fair (bench/peers/processes_cpuexec). */
#define CPUEXEC__CROWD_ALONE_NS 5000u
#define CPUEXEC__CROWD_ALONE_YIELDS 2u
#define CPUEXEC__CROWD_REST_NS 20000u

/* turns. A crowded caller among one process's crowded callers moves to
 * the processor that holds the fewest of them when its own holds two more,
 * once it saw that this many of its turns in a row (the counts are a turn
 * old at most). Fewer: the callers even out sooner and a move may undo
 * the kernel's; more: a lone caller runs ahead longer. Rows: k4_*_fair
 * (bench/peers/callers_cpuexec). */
#define CPUEXEC__CROWD_UNEVEN_LOOKS 2u

/* regions. A woken worker that missed this many regions in a row without
 * seeing one is runnable but not running (queued behind its caller):
 * the caller steps off its processor. Row: axpy_64k. */
#define CPUEXEC__STUCK_MISSES 2u

/* ---- sharing out a region's chunks ------------------------------------ */

/* Lane 0's participants claim 1 / CPUEXEC__CLAIM_DIVISOR of what remains
 * of a block at a time; a lane's claim 1 / (CPUEXEC__GUIDED_DIVISOR *
 * participants) of what remains (guided). Larger: finer claims, better
 * balance, more atomic adds on the shared cursor. Rows: pp_* (imbalanced
 * bodies), epcc_n64. */
#define CPUEXEC__CLAIM_DIVISOR 2
#define CPUEXEC__GUIDED_DIVISOR 2

/* ---- the executor's shape ---------------------------------------------- */

/* regions. Regions one executor runs at once, lane 0 included. More:
 * more callers share one pool before the serial loop; each lane costs
 * workers a look after every region. Rows: k4_s0 .. k4_s200. */
#define CPUEXEC__LANES 8u

/* participants. Regions this wide or wider wake their workers as a tree
 * of this fan-out instead of one by one from the caller. Row:
 * region_scaling (bench/calibration). */
#define CPUEXEC__WAKE_TREE_MIN 16u
#define CPUEXEC__WAKE_TREE_FANOUT 4u

/* workers. Finished-worker counts are kept per group of this many
 * workers, one line each. Row: region_scaling. */
#define CPUEXEC__FINISH_GROUP 8u

/* ---- the node level (src/node, doc/node-budget.md) ---------------------- */

/* ns. A process whose callers opened no region for this long gives its
 * callers' implicit slot back to the node's budget (it is found idle by
 * another process that wants a slot). Longer: serial phases up to it keep
 * the slot, so no other process's worker slips in and is over the budget
 * when the caller returns; shorter: a process that stopped computing lends
 * its processor to the others sooner. Rows: np2_s200_default_*,
 * np4_s200_default_*. */
#define CPUEXEC__NODE_CALLER_LINGER_NS 2000000u

/* ns. A take that found no slot looks for the slots of dead processes at
 * most this often across the node (slots of a killed process come back
 * well within a second). Shorter: sooner back; longer: fewer /proc reads
 * by processes that compete for slots. Test: test_node_budget's kill case. */
#define CPUEXEC__NODE_RECLAIM_EVERY_NS 100000000ull

/* ns, gives. The cgroup's quota and cpuset are re-read at most this often
 * across the node, and a process looks at the clock for it every
 * CPUEXEC__NODE_REFRESH_LOOK_EVERY gives of a slot. Shorter: a resized
 * container is seen sooner; longer: fewer reads of cgroup files. Test:
 * test_node_budget's live-quota case. */
#define CPUEXEC__NODE_REFRESH_EVERY_NS 100000000ull
#define CPUEXEC__NODE_REFRESH_LOOK_EVERY 16u

#endif
