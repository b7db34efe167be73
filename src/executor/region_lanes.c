/* Many regions on one pool: lanes 1 .. CPUEXEC__LANES - 1, the caller's
 * half (cpuexec__lane_run) and the worker's (cpuexec__lanes_serve). The
 * model, the admit word and why no wake is lost: region_lanes.h. */
#include "region_lanes.h"

#include <stdlib.h>
#include <string.h>

#include "core/debug.h"
#include "executor_internal.h"
#include "os/os.h"
#include "participant.h"
#include "tasks_internal.h"

#define ADMIT_JOINED 0xffffull
#define ADMIT_LIMIT_SHIFT 16
#define ADMIT_GENERATION_SHIFT 32
#define ADMIT_GENERATION_MASK 0x3fffffffull
#define ADMIT_TASKS (1ull << 62)
#define ADMIT_CLOSED (1ull << 63)
#define LANE_BITS (((1u << CPUEXEC__LANES) - 1u) & ~1u)

_Static_assert(CPUEXEC__LANES >= 2 && CPUEXEC__LANES <= 32, "lanes fit lanes_busy");

static inline uint32_t admit_joined(uint64_t a) { return (uint32_t)(a & ADMIT_JOINED); }
static inline uint32_t admit_limit(uint64_t a) { return (uint32_t)((a >> ADMIT_LIMIT_SHIFT) & ADMIT_JOINED); }
static inline bool admit_closed(uint64_t a) { return (a & ADMIT_CLOSED) != 0; }
static inline bool admit_tasks(uint64_t a) { return (a & ADMIT_TASKS) != 0; }
/* A lane opened for generation g, limit participants, the caller joined. */
static inline uint64_t admit_open(uint32_t generation, uint32_t limit) {
  return ((generation & ADMIT_GENERATION_MASK) << ADMIT_GENERATION_SHIFT) | ((uint64_t)limit << ADMIT_LIMIT_SHIFT) | 1u;
}

cpuexec__lane *cpuexec__lanes_create(uint32_t threads) {
  (void)threads;
  size_t bytes = (CPUEXEC__LANES - 1) * sizeof(cpuexec__lane);
  cpuexec__lane *lanes = cpuexec__os_aligned_alloc(CPUEXEC__LINE, bytes);
  if (!lanes) return NULL;
  memset(lanes, 0, bytes);
  for (uint32_t l = 0; l + 1 < CPUEXEC__LANES; l++) atomic_init(&lanes[l].admit, ADMIT_CLOSED);
  return lanes;
}

/* ---- a lane's region, on any participant ------------------------------- */

/* Claims a share of the unreserved chunks: [*lo, *hi). */
static inline bool lane_claim(cpuexec__lane *l, int64_t *lo, int64_t *hi) {
  int64_t next = atomic_load_explicit(&l->next, memory_order_relaxed);
  if (next >= l->chunks) return false;
  int64_t take = (l->chunks - next) / (CPUEXEC__GUIDED_DIVISOR * (int64_t)l->region.participants);
  if (take < 1) take = 1;
  int64_t got = atomic_fetch_add_explicit(&l->next, take, memory_order_relaxed);
  if (got >= l->chunks) return false;
  *lo = got;
  *hi = got + take < l->chunks ? got + take : l->chunks;
  return true;
}

/* Runs chunks [lo, hi) unless the region failed; false to stop. */
static inline bool lane_chunks(cpuexec__lane *l, int64_t lo, int64_t hi) {
  if (atomic_load_explicit(&l->error, memory_order_relaxed) != 0) return false;
  cpuexec__participant_before_callback();
  int64_t end = hi >= l->chunks ? l->region.total : hi * l->region.grain;
  int rc = l->region.fn(l->region.ctx, lo * l->region.grain, end);
  if (rc != 0) {
    int expected = 0;
    atomic_compare_exchange_strong_explicit(&l->error, &expected, rc, memory_order_relaxed, memory_order_relaxed);
    return false;
  }
  return true;
}

/* Participant p's share: its reserved chunk, then claims. */
static void lane_share(cpuexec__lane *l, uint32_t p) {
  if (!lane_chunks(l, p, (int64_t)p + 1)) return;
  int64_t lo, hi;
  while (lane_claim(l, &lo, &hi))
    if (!lane_chunks(l, lo, hi)) return;
}

/* lane_share as one call, through cpuexec__participant_share. */
typedef struct lane_share_of {
  cpuexec__lane *lane;
  uint32_t p;
} lane_share_of;

static void run_lane_share(void *arg) {
  const lane_share_of *s = arg;
  lane_share(s->lane, s->p);
}

static void participant_lane_share(cpuexec__lane *l, uint32_t p) {
  lane_share_of share = {l, p};
  cpuexec__participant_share(run_lane_share, &share);
}

/* ---- the caller's half -------------------------------------------------- */

/* A free lane, now the caller's (acquire: the previous owner's writes to
 * it are visible); 0 when every lane is taken. */
static uint32_t lane_acquire(struct cpuexec_executor *exec) {
  uint32_t busy = atomic_load_explicit(&exec->lanes_busy, memory_order_relaxed);
  for (;;) {
    uint32_t free = ~busy & LANE_BITS;
    if (!free) return 0;
    uint32_t bit = free & -free;
    if (atomic_compare_exchange_weak_explicit(&exec->lanes_busy, &busy, busy | bit, memory_order_acquire,
                                              memory_order_relaxed))
      return (uint32_t)__builtin_ctz(bit);
  }
}

/* Nudges every worker not admitted to lane 0 (region_lanes.h) and wakes up
 * to `helpers` of them that sleep; returns the wake calls made. */
static uint64_t nudge_workers(struct cpuexec_executor *exec, uint32_t helpers, bool region) {
  uint64_t wakes = 0;
  for (uint32_t k = 1; k <= exec->worker_count; k++) {
    cpuexec__slot *s = &exec->slots[k];
    if (!cpuexec__epoch_nudge(&s->epoch)) continue; /* admitted to lane 0: it comes here after that share */
    /* Nudged now or before: a worker asleep with a nudge set has not looked
     * yet. One that stands aside from regions would go back to sleep. */
    if (wakes < helpers && atomic_load_explicit(&s->parked, memory_order_seq_cst) &&
        !(region && cpuexec__permit_stands_aside(&exec->permit, k))) {
      cpuexec__os_wake_all(&s->epoch);
      wakes++;
    }
  }
  return wakes;
}

bool cpuexec__lane_run(struct cpuexec_executor *exec, const cpuexec__region *r, int *rc, uint32_t *ran) {
  uint32_t participants = r->participants;
  bool strict = r->strict;
  if (!exec->lanes || participants > CPUEXEC__LANE_MAX_PARTICIPANTS) return false;
  uint32_t index = lane_acquire(exec);
  if (index == 0) return false;
  cpuexec__lane *l = &exec->lanes[index - 1];
  cpuexec__counters_block *counters = cpuexec__counters_of(exec);
  CPUEXEC__COUNT(counters, dispatches, 1);
  l->region = *r;
  l->chunks = cpuexec__region_chunks(r);
  atomic_store_explicit(&l->next, (int64_t)participants, memory_order_relaxed);
  atomic_store_explicit(&l->error, 0, memory_order_relaxed);
  l->generation++;
  /* release: the region above is written before any worker can join. */
  atomic_store_explicit(&l->admit, admit_open(l->generation, participants), memory_order_release);
  uint64_t wakes = nudge_workers(exec, participants - 1, true);

  cpuexec__participant p;
  cpuexec__participant_enter(&p, exec, 0, participants);
  participant_lane_share(l, 0);
  uint32_t joined = participants;
  if (!strict) {
    /* Nobody waits for a worker that has not started: close the lane and
     * run the reserved chunks of the indices nobody took. */
    joined = admit_joined(atomic_fetch_or_explicit(&l->admit, ADMIT_CLOSED, memory_order_relaxed));
    for (uint32_t q = joined; q < participants; q++)
      if (!lane_chunks(l, q, (int64_t)q + 1)) break;
    if (joined < participants) CPUEXEC__COUNT(counters, takeovers, participants - joined);
  }
  cpuexec__participant_leave(&p);

  uint32_t target = l->done_target + (joined - 1);
  if (atomic_load_explicit(&l->done.finished, memory_order_acquire) != target) {
    uint64_t start = counters ? cpuexec__os_now_ns() : 0;
    cpuexec__wait_plan plan = {.spin = &exec->spin};
    cpuexec__wait_report report;
    atomic_store_explicit(&l->done.goal, target, memory_order_relaxed);
    cpuexec__wait_until_equal(&l->done.finished, target, &l->done.caller_parked, &plan, &report);
    counters = cpuexec__counters_of(exec);
    cpuexec__count_caller_wait(counters, report.slept, report.long_spin, start ? cpuexec__os_now_ns() - start : 0);
  }
  l->done_target = target;
  if (strict) atomic_fetch_or_explicit(&l->admit, ADMIT_CLOSED, memory_order_relaxed);
  *rc = atomic_load_explicit(&l->error, memory_order_relaxed);
  CPUEXEC__COUNT(counters, concurrent_regions, 1);
  CPUEXEC__COUNT(counters, participants_run, joined);
  if (joined > 1) CPUEXEC__COUNT(counters, parallel_regions, 1);
  *ran = joined;
  if (wakes) CPUEXEC__COUNT(counters, wakeups, wakes);
  /* release: the next owner sees done_target and generation. */
  atomic_fetch_and_explicit(&exec->lanes_busy, ~(1u << index), memory_order_release);
  return true;
}

/* ---- task groups' lanes ----------------------------------------------- */

/* A task lane: the group holds it from its first queued task to the end of
 * its wait. `admit` carries ADMIT_TASKS, limit = the group's cap on
 * workers, joined = workers inside now (they leave, unlike a region's);
 * `next` is the number of queued tasks, so workers skip an empty group. */

uint32_t cpuexec__lane_post(struct cpuexec_executor *exec, struct cpuexec_task_group *group, uint32_t cap) {
  if (!exec->lanes || cap == 0 || cap > CPUEXEC__LANE_MAX_PARTICIPANTS) return 0;
  uint32_t index = lane_acquire(exec);
  if (index == 0) return 0;
  cpuexec__lane *l = &exec->lanes[index - 1];
  l->group = group;
  atomic_store_explicit(&l->next, 0, memory_order_relaxed);
  l->generation++;
  atomic_store_explicit(&l->admit, ADMIT_TASKS | (admit_open(l->generation, cap) - 1u), memory_order_release);
  return index;
}

void cpuexec__lane_set_queued(struct cpuexec_executor *exec, uint32_t index, int64_t queued) {
  atomic_store_explicit(&exec->lanes[index - 1].next, queued, memory_order_relaxed);
}

uint64_t cpuexec__lane_nudge(struct cpuexec_executor *exec, uint32_t index, uint32_t queued) {
  uint64_t a = atomic_load_explicit(&exec->lanes[index - 1].admit, memory_order_relaxed);
  uint32_t room = admit_limit(a) > admit_joined(a) ? admit_limit(a) - admit_joined(a) : 0;
  if (room == 0 || queued == 0) return 0;
  return nudge_workers(exec, queued < room ? queued : room, false);
}

void cpuexec__lane_drain(struct cpuexec_executor *exec, uint32_t index) {
  cpuexec__lane *l = &exec->lanes[index - 1];
  atomic_fetch_or_explicit(&l->admit, ADMIT_CLOSED, memory_order_seq_cst);
  for (;;) {
    uint32_t f = atomic_load_explicit(&l->done.finished, memory_order_seq_cst);
    if (admit_joined(atomic_load_explicit(&l->admit, memory_order_seq_cst)) == 0) break;
    /* The workers inside run one task each at most before they see the
     * queue empty: spin per the plan, then sleep (wait.h's pair: a leaving
     * worker wakes us when `caller_parked` is set). */
    if (cpuexec__spin(&l->done.finished, f, true, &exec->spin, NULL)) continue;
    atomic_store_explicit(&l->done.caller_parked, 1, memory_order_seq_cst);
    if (admit_joined(atomic_load_explicit(&l->admit, memory_order_seq_cst)) != 0) cpuexec__os_wait(&l->done.finished, f);
    atomic_store_explicit(&l->done.caller_parked, 0, memory_order_relaxed);
  }
}

void cpuexec__lane_reopen(struct cpuexec_executor *exec, uint32_t index) {
  cpuexec__lane *l = &exec->lanes[index - 1];
  uint64_t a = atomic_load_explicit(&l->admit, memory_order_relaxed);
  l->generation++;
  atomic_store_explicit(&l->admit, ADMIT_TASKS | (admit_open(l->generation, admit_limit(a)) - 1u),
                        memory_order_release);
}

void cpuexec__lane_unpost(struct cpuexec_executor *exec, uint32_t index) {
  cpuexec__lane *l = &exec->lanes[index - 1];
  atomic_fetch_or_explicit(&l->admit, ADMIT_CLOSED, memory_order_relaxed);
  l->group = NULL;
  /* Every worker left (drained): the count a region owner of this lane
   * starts from includes the task workers' leaves. */
  l->done_target = atomic_load_explicit(&l->done.finished, memory_order_relaxed);
  atomic_fetch_and_explicit(&exec->lanes_busy, ~(1u << index), memory_order_release);
}

/* A worker that joined a task lane: runs the group's tasks until its queue
 * is empty, then leaves (the last touch of the lane). */
static void serve_tasks(struct cpuexec_executor *exec, cpuexec__lane *l) {
  cpuexec__counters_block *counters = cpuexec__counters_of(exec);
  uint64_t start = counters ? cpuexec__os_now_ns() : 0;
  cpuexec__tasks_serve(l->group);
  if (counters)
    atomic_fetch_add_explicit(&counters->workers.worker_active_ns, cpuexec__os_now_ns() - start, memory_order_relaxed);
  atomic_fetch_sub_explicit(&l->admit, 1u, memory_order_seq_cst);
  atomic_fetch_add_explicit(&l->done.finished, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&l->done.caller_parked, memory_order_seq_cst)) cpuexec__os_wake_all(&l->done.finished);
}

/* ---- the worker's half -------------------------------------------------- */

/* The open lane with the most indices left to hand out, looking first at
 * the one after the lane this worker served last, task lanes only when
 * the worker stands aside (region_lanes.h); 0 when none. */
static uint32_t lane_choose(struct cpuexec_executor *exec, const cpuexec__worker *w, uint64_t *admit) {
  uint32_t busy = atomic_load_explicit(&exec->lanes_busy, memory_order_relaxed);
  uint32_t best = 0, best_left = 0;
  for (uint32_t i = 0; busy && i + 1 < CPUEXEC__LANES; i++) {
    uint32_t index = 1 + (w->lane_next + i) % (CPUEXEC__LANES - 1);
    if (!(busy & (1u << index))) continue;
    /* acquire: a strict region's mark is seen before its lane is (region.c). */
    uint64_t a = atomic_load_explicit(&exec->lanes[index - 1].admit, memory_order_acquire);
    if (admit_closed(a) || admit_joined(a) >= admit_limit(a)) continue;
    if (admit_tasks(a) && atomic_load_explicit(&exec->lanes[index - 1].next, memory_order_relaxed) == 0) continue;
    if (!admit_tasks(a) && cpuexec__permit_stands_aside(&exec->permit, w->index)) continue;
    if (admit_limit(a) - admit_joined(a) > best_left) {
      best = index;
      best_left = admit_limit(a) - admit_joined(a);
      *admit = a;
    }
  }
  return best;
}

bool cpuexec__lanes_serve(struct cpuexec_executor *exec, uint32_t worker_index) {
  if (!exec->lanes) return false;
  cpuexec__worker *w = &exec->workers[worker_index - 1];
  uint64_t a;
  uint32_t index;
  while ((index = lane_choose(exec, w, &a)) != 0) {
    cpuexec__lane *l = &exec->lanes[index - 1];
    cpuexec__worker_gate_fn gate = CPUEXEC__TEST_HOOK(cpuexec__test_worker_gate, NULL);
    if (gate) {
      gate(exec, worker_index);
      /* The lane may have moved on while the worker was held. */
      a = atomic_load_explicit(&l->admit, memory_order_relaxed);
      if (admit_closed(a) || admit_joined(a) >= admit_limit(a)) continue;
    }
    /* acquire: the owner's region writes happen before its open. */
    if (!atomic_compare_exchange_strong_explicit(&l->admit, &a, a + 1, memory_order_acquire, memory_order_relaxed))
      continue;
    w->lane_next = index; /* next time, start after this lane */
    if (admit_tasks(a)) {
      serve_tasks(exec, l);
      cpuexec__permit_worker_settled(&w->permit);
      return true;
    }
    uint32_t p = admit_joined(a), participants = l->region.participants;
    CPUEXEC__CHECK(p < participants && participants <= exec->threads,
                   "executor %llu: worker %u joined lane %u as participant %u of %u", (unsigned long long)exec->id,
                   worker_index, index, p, participants);
    cpuexec__counters_block *counters = cpuexec__counters_of(exec);
    uint64_t start = counters ? cpuexec__os_now_ns() : 0;
    cpuexec__participant part;
    cpuexec__participant_enter(&part, exec, p, participants);
    if (__builtin_expect(l->region.env != NULL, 0)) {
      cpuexec__fpenv own;
      cpuexec__fpenv_apply(l->region.env, &own);
      participant_lane_share(l, p);
      cpuexec__fpenv_restore(&own);
    } else {
      participant_lane_share(l, p);
    }
    cpuexec__participant_leave(&part);
    if (counters)
      atomic_fetch_add_explicit(&counters->workers.worker_active_ns, cpuexec__os_now_ns() - start,
                                memory_order_relaxed);
    /* The last touch of the region: after this add its owner may return.
     * The loads after it may read the lane's next region (a spurious wake
     * at most). */
    uint32_t done = atomic_fetch_add_explicit(&l->done.finished, 1, memory_order_seq_cst) + 1;
    if (atomic_load_explicit(&l->done.caller_parked, memory_order_seq_cst) &&
        done == atomic_load_explicit(&l->done.goal, memory_order_relaxed))
      cpuexec__os_wake_all(&l->done.finished);
    return true;
  }
  return false;
}
