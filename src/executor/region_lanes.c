/* Many regions on one pool: lanes 1 .. CPUEXEC__LANES - 1, the caller's
 * half (cpuexec__lane_run) and the worker's (cpuexec__lanes_serve); the
 * share each participant runs is region_share.c's. The model, the admit
 * word and why no wake is lost: region_lanes.h. */
#include "region_lanes.h"

#include <stdlib.h>
#include <string.h>

#include "core/debug.h"
#include "executor_internal.h"
#include "os/os.h"
#include "region_share.h"
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
  size_t bytes = CPUEXEC__LANES * sizeof(cpuexec__lane);
  cpuexec__lane *lanes = cpuexec__os_aligned_alloc(CPUEXEC__LINE, bytes);
  if (!lanes) return NULL;
  memset(lanes, 0, bytes);
  /* Lane 0's finish counts: one line per group of workers. */
  uint32_t groups = cpuexec__finish_groups_for(threads);
  lanes[0].finish = cpuexec__os_aligned_alloc(CPUEXEC__LINE, groups * sizeof(cpuexec__finish_group));
  lanes[0].tally = calloc(groups, sizeof(cpuexec__finish_tally));
  if (!lanes[0].finish || !lanes[0].tally) {
    cpuexec__lanes_destroy(lanes);
    return NULL;
  }
  memset(lanes[0].finish, 0, groups * sizeof(cpuexec__finish_group));
  for (uint32_t l = 0; l < CPUEXEC__LANES; l++) {
    atomic_init(&lanes[l].admit, ADMIT_CLOSED);
    if (l == 0) continue;
    lanes[l].finish = &lanes[l].done;
    lanes[l].tally = &lanes[l].done_tally;
  }
  return lanes;
}

void cpuexec__lanes_destroy(cpuexec__lane *lanes) {
  if (!lanes) return;
  cpuexec__os_aligned_free(lanes[0].finish);
  free(lanes[0].tally);
  cpuexec__os_aligned_free(lanes);
}

uint32_t cpuexec__lane_close(cpuexec__lane *l) {
  return admit_joined(atomic_fetch_or_explicit(&l->admit, ADMIT_CLOSED, memory_order_relaxed));
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
  if (!exec->lanes || participants > CPUEXEC__LANE_MAX_PARTICIPANTS) return false;
  uint32_t index = lane_acquire(exec);
  if (index == 0) return false;
  cpuexec__lane *l = &exec->lanes[index];
  CPUEXEC__COUNT(cpuexec__counters_of(exec), dispatches, 1);
  l->region = *r;
  l->chunks = cpuexec__region_chunks(r);
  atomic_store_explicit(&l->next, (int64_t)participants, memory_order_relaxed);
  l->generation++;
  /* release: the region above is written before any worker can join. */
  atomic_store_explicit(&l->admit, admit_open(l->generation, participants), memory_order_release);
  uint64_t wakes = nudge_workers(exec, participants - 1, true);

  /* A take-over region's share ends by closing the lane (region_share.h). */
  cpuexec__share_of share = {.exec = exec, .lane = l, .region = &l->region, .index = 0, .joined = participants};
  cpuexec__share_run(&share);
  l->tally[0].expect = l->tally[0].target + (share.joined - 1);
  cpuexec__region_wait(exec, l, 1, NULL);
  if (r->strict) cpuexec__lane_close(l);
  CPUEXEC__COUNT(cpuexec__counters_of(exec), concurrent_regions, 1);
  *rc = cpuexec__region_close(exec, l, 1, wakes, ran);
  /* release: the next owner sees the tally and generation. */
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
  cpuexec__lane *l = &exec->lanes[index];
  l->group = group;
  atomic_store_explicit(&l->next, 0, memory_order_relaxed);
  l->generation++;
  atomic_store_explicit(&l->admit, ADMIT_TASKS | (admit_open(l->generation, cap) - 1u), memory_order_release);
  return index;
}

void cpuexec__lane_set_queued(struct cpuexec_executor *exec, uint32_t index, int64_t queued) {
  atomic_store_explicit(&exec->lanes[index].next, queued, memory_order_relaxed);
}

uint64_t cpuexec__lane_nudge(struct cpuexec_executor *exec, uint32_t index, uint32_t queued) {
  uint64_t a = atomic_load_explicit(&exec->lanes[index].admit, memory_order_relaxed);
  uint32_t room = admit_limit(a) > admit_joined(a) ? admit_limit(a) - admit_joined(a) : 0;
  if (room == 0 || queued == 0) return 0;
  return nudge_workers(exec, queued < room ? queued : room, false);
}

void cpuexec__lane_drain(struct cpuexec_executor *exec, uint32_t index) {
  cpuexec__lane *l = &exec->lanes[index];
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
  cpuexec__lane *l = &exec->lanes[index];
  uint64_t a = atomic_load_explicit(&l->admit, memory_order_relaxed);
  l->generation++;
  atomic_store_explicit(&l->admit, ADMIT_TASKS | (admit_open(l->generation, admit_limit(a)) - 1u),
                        memory_order_release);
}

void cpuexec__lane_unpost(struct cpuexec_executor *exec, uint32_t index) {
  cpuexec__lane *l = &exec->lanes[index];
  atomic_fetch_or_explicit(&l->admit, ADMIT_CLOSED, memory_order_relaxed);
  l->group = NULL;
  /* Every worker left (drained): the count a region owner of this lane
   * starts from includes the task workers' leaves. */
  l->tally[0].target = atomic_load_explicit(&l->done.finished, memory_order_relaxed);
  atomic_fetch_and_explicit(&exec->lanes_busy, ~(1u << index), memory_order_release);
}

/* A worker that joined a task lane: runs the group's tasks until its queue
 * is empty, then leaves (the last touch of the lane). */
static void serve_group(void *group) { cpuexec__tasks_serve(group); }

static void serve_tasks(struct cpuexec_executor *exec, cpuexec__lane *l) {
  cpuexec__worker_active(exec, serve_group, l->group);
  atomic_fetch_sub_explicit(&l->admit, 1u, memory_order_seq_cst);
  atomic_fetch_add_explicit(&l->done.finished, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&l->done.caller_parked, memory_order_seq_cst)) cpuexec__os_wake_all(&l->done.finished);
}

/* ---- the worker's half -------------------------------------------------- */

/* The open lane with the most indices left to hand out, looking first at
 * the one after the lane this worker served last, task lanes only when
 * the worker stands aside (region_lanes.h); 0 when none. */
static uint32_t lane_choose(struct cpuexec_executor *exec, const cpuexec__worker *w, bool regions, uint64_t *admit) {
  uint32_t busy = atomic_load_explicit(&exec->lanes_busy, memory_order_relaxed);
  uint32_t best = 0, best_left = 0;
  for (uint32_t i = 0; busy && i + 1 < CPUEXEC__LANES; i++) {
    uint32_t index = 1 + (w->lane_next + i) % (CPUEXEC__LANES - 1);
    if (!(busy & (1u << index))) continue;
    /* acquire: a strict region's mark is seen before its lane is (region.c). */
    uint64_t a = atomic_load_explicit(&exec->lanes[index].admit, memory_order_acquire);
    if (admit_closed(a) || admit_joined(a) >= admit_limit(a)) continue;
    if (admit_tasks(a) && atomic_load_explicit(&exec->lanes[index].next, memory_order_relaxed) == 0) continue;
    if (!admit_tasks(a) && (!regions || cpuexec__permit_stands_aside(&exec->permit, w->index))) continue;
    if (admit_limit(a) - admit_joined(a) > best_left) {
      best = index;
      best_left = admit_limit(a) - admit_joined(a);
      *admit = a;
    }
  }
  return best;
}

bool cpuexec__lanes_serve(struct cpuexec_executor *exec, uint32_t worker_index, bool regions) {
  if (!exec->lanes) return false;
  cpuexec__worker *w = &exec->workers[worker_index - 1];
  uint64_t a;
  uint32_t index;
  while ((index = lane_choose(exec, w, regions, &a)) != 0) {
    cpuexec__lane *l = &exec->lanes[index];
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
    CPUEXEC__TEST_GAUGE_ENTER(cpuexec__test_permit_running);
    if (admit_tasks(a)) {
      /* The beside-caller rule (permit.h), for the group's submitter: a
       * thread that submits tasks often goes on working until it waits. */
      (void)cpuexec__worker_beside(exec, w, cpuexec__task_group_submitter_cpu(l->group));
      serve_tasks(exec, l);
      CPUEXEC__TEST_GAUGE_LEAVE(cpuexec__test_permit_running);
      cpuexec__permit_worker_settled(&w->permit);
      return true;
    }
    uint32_t p = admit_joined(a), participants = l->region.participants;
    CPUEXEC__CHECK(p < participants && participants <= exec->threads,
                   "executor %llu: worker %u joined lane %u as participant %u of %u", (unsigned long long)exec->id,
                   worker_index, index, p, participants);
    cpuexec__share_of share = {.exec = exec, .lane = l, .region = &l->region, .index = p};
    cpuexec__share_work(&share, l->finish);
    CPUEXEC__TEST_GAUGE_LEAVE(cpuexec__test_permit_running);
    return true;
  }
  return false;
}
