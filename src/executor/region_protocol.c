/* Lane 0's region protocol, both halves: the caller's (write the region
 * into lanes[0] and the slots, admit the workers, run participant 0's
 * share, settle the workers that did not check in, wait for those that
 * did) and the worker's (the loop each worker thread runs: wait for its
 * epoch, check in, run its share, leave, and serve the lanes of
 * region_lanes.h in between). The epoch states and their named transitions
 * are in epoch.h; the share every participant runs, and its work
 * distribution (lane 0's blocks and stealing), is region_share.c's; the
 * dispatcher that chooses lane 0, a lane or the serial loop is in region.c.
 *
 * Nobody waits for a worker that has not started (doc/spinning.md). A
 * participant that meets, in its ring, a worker that has not checked in
 * (its epoch still open, epoch.h) closes that worker's region
 * with one compare-exchange and runs the reserved chunk itself, then the
 * rest of that block. The caller then waits only for the workers that
 * joined: a parked or descheduled worker costs the region its share's time
 * on a running thread, never the worker's wake-up. With
 * CPUEXEC_FOR_EVERY_PARTICIPANT nobody takes over and the caller waits for
 * every admitted worker, as the executor always did before. */
#include "core/debug.h"
#include "executor_internal.h"
#include "os/os.h"
#include "region_lanes.h"
#include "region_share.h"
#include "wake_tree.h"

#if CPUEXEC_TEST_HOOKS
_Atomic(cpuexec__worker_gate_fn) cpuexec__test_worker_gate; /* NULL: static storage starts zeroed */
#endif

/* After the caller's share: closes every worker region still open (a
 * failed region may have stopped before the ring reached it), counts in
 * each group's tally the workers that joined, and sets *waited_cpu to where
 * one of them runs. A worker the permit model finds stuck (woken, but
 * missing regions unseen) may make the caller move off its processor. */
static void settle_workers(struct cpuexec_executor *exec, uint32_t participants,
                           const _Atomic int32_t **waited_cpu) {
  cpuexec__finish_tally *tally = exec->lanes[0].tally;
  for (uint32_t g = 0; g <= cpuexec__finish_group_of(participants - 1); g++) tally[g].expect = tally[g].target;
  bool first = true, stuck = false;
  for (uint32_t k = 1; k < participants; k++) {
    cpuexec__slot *s = &exec->slots[k];
    if (cpuexec__epoch_settle(&s->epoch) == CPUEXEC__EPOCH_JOINED) {
      tally[cpuexec__finish_group_of(k)].expect++;
      if (first) *waited_cpu = &s->cpu;
      first = false;
    } else {
      stuck |= cpuexec__permit_worker_stuck(
          &s->misses, atomic_load_explicit(&exec->workers[k - 1].regions_seen, memory_order_relaxed));
    }
  }
  if (stuck && cpuexec__permit_caller_steps_off_for_stuck(&exec->permit)) {
    int32_t here = cpuexec__os_current_cpu();
    if (here >= 0) {
      cpuexec__os_step_off(&here, 1);
      CPUEXEC__COUNT(cpuexec__counters_of(exec), step_offs, 1);
    }
  }
}

/* Writes every participant's slot: the region and its block, all of them
 * before any epoch moves, so a worker that acquires its epoch sees every
 * block it may steal from. */
static void publish_slots(struct cpuexec_executor *exec, const cpuexec__region *r) {
  cpuexec__partition pt = cpuexec__partition_of(r);
  for (uint32_t p = 0; p < r->participants; p++) {
    cpuexec__slot *s = &exec->slots[p];
    int64_t first = cpuexec__block_first(&pt, p);
    s->region = *r;
    atomic_store_explicit(&s->next, first + 1, memory_order_relaxed);
    s->end = first + cpuexec__block_size(&pt, p);
    s->part = pt;
  }
}

/* Opens lane 0's region to workers 1 .. participants - 1: the slots, then
 * the epochs (children first in wide regions: a parent that joins early
 * must find its children's epochs already open, wake_tree.h). Returns the
 * wake calls made. */
static uint64_t admit_workers(struct cpuexec_executor *exec, uint32_t participants) {
  if (participants >= exec->wake_tree_min) { /* wide regions: wake_tree.h */
    for (uint32_t k = participants - 1; k >= 1; k--) cpuexec__epoch_admit(&exec->slots[k].epoch);
    return cpuexec__wake_tree_children(exec, 0, participants);
  }
  uint64_t wakes = 0;
  for (uint32_t k = 1; k < participants; k++) {
    cpuexec__slot *s = &exec->slots[k];
    if (!cpuexec__epoch_admit_and_wake(&s->epoch, &s->parked)) continue;
    wakes++;
    s->misses.seen_at_wake = atomic_load_explicit(&exec->workers[k - 1].regions_seen, memory_order_relaxed);
  }
  return wakes;
}

/* After the caller's share: unless every worker joined and finished (the
 * common case of a hot pool reads one counter per group of workers),
 * settles the late workers (unless every one must run) and waits for those
 * that joined. */
static void finish_region(struct cpuexec_executor *exec, cpuexec__lane *l, uint32_t groups) {
  uint32_t participants = l->region.participants;
  if (cpuexec__finish_count_all_done(l->finish, l->tally, participants)) return;
  const _Atomic int32_t *waited_cpu = &exec->first_worker_cpu;
  if (!l->region.strict) settle_workers(exec, participants, &waited_cpu);
  cpuexec__region_wait(exec, l, groups, waited_cpu);
}

int cpuexec__lane0_run(struct cpuexec_executor *exec, const cpuexec__region *r, uint32_t *ran) {
  cpuexec__lane *l = &exec->lanes[0];
  CPUEXEC__COUNT(cpuexec__counters_of(exec), dispatches, 1);
  atomic_store_explicit(&exec->lane0_running, 1, memory_order_relaxed);
  l->region = *r;
  publish_slots(exec, r);
  uint64_t wakes = admit_workers(exec, r->participants);
  cpuexec__share_of share = {.exec = exec, .lane = l, .region = &exec->slots[0].region, .index = 0};
  cpuexec__share_run(&share);
  uint32_t groups = cpuexec__finish_group_of(r->participants - 1) + 1;
  finish_region(exec, l, groups);
  int rc = cpuexec__region_close(exec, l, groups, wakes, ran);
  atomic_store_explicit(&exec->lane0_running, 0, memory_order_relaxed);
  pthread_mutex_unlock(&exec->dispatch_lock);
  return rc;
}

/* ---- the worker's half ------------------------------------------------ */

static const cpuexec__spin_plan park_at_once = {CPUEXEC__SPIN_NONE, 0, 0, false};

/* Where worker permits of the node's budget are counted: exec's counters
 * when they are on (counters_internal.h), nowhere when off. Asked where
 * the permit is, so counting turned on while a worker waits counts what
 * it does when it wakes. */
static const cpuexec__node_counts *node_counts_of(struct cpuexec_executor *exec, cpuexec__node_counts *counts) {
  cpuexec__counters_block *c = cpuexec__counters_of(exec);
  if (!c) return NULL;
  *counts = (cpuexec__node_counts){&c->workers.node_slots_taken, &c->workers.node_slot_waits};
  return counts;
}

/* Worker w's next wait, as the permit model has it: parked at once while it
 * stands aside or settles (its spin could take a processor from a caller),
 * or while the node level gives it no permit (node/node_budget.h);
 * otherwise the plan's spin, the long spin after a missed region, the gap
 * spin it learnt, and the cadence.
 *
 * The long spin: a worker that missed a region (its share was taken over:
 * it woke too late) spins on while lane 0's caller still runs that region:
 * the next region comes when this one ends, and a worker parked meanwhile
 * would miss it too (back-to-back streaming regions ran on the caller
 * alone; doc/performance.md, section 7). */
static cpuexec__wait_plan worker_wait_plan(struct cpuexec_executor *exec, cpuexec__worker *w, bool aside,
                                           const cpuexec__cadence_hint *hint, const cpuexec__node_counts *counts) {
  cpuexec__wait_plan plan = {.spin = &park_at_once, .share_cpu = &exec->caller_cpu};
  if (!cpuexec__permit_worker_spins(&exec->permit, &w->permit, aside) || !cpuexec__permit_node_runs(&exec->permit, counts))
    return plan;
  plan.spin = &exec->spin;
  plan.busy = w->missed ? &exec->lane0_running : NULL;
  plan.gap_spin_ns = cpuexec__permit_gap_spin_ns(&w->permit);
  plan.hint = hint;
  return plan;
}

int32_t cpuexec__worker_beside(struct cpuexec_executor *exec, cpuexec__worker *w, int32_t beside_cpu) {
  int32_t cpu = cpuexec__os_current_cpu();
  if (!cpuexec__permit_worker_steps_off(&exec->permit, &w->permit, cpu, beside_cpu)) return cpu;
  int32_t now = cpuexec__os_step_off(&cpu, 1);
  CPUEXEC__COUNT_AS(cpuexec__counters_of(exec), w->index, step_offs, 1);
  return now >= 0 ? now : cpu;
}

/* Worker k's loop: wait for an open region, check in, run, leave. A worker
 * that finds its region taken (see executor_internal.h) has read only its
 * epoch and goes straight back to waiting. */
void *cpuexec__worker_main(void *arg) {
  cpuexec__worker *w = arg;
  struct cpuexec_executor *exec = w->exec;
  cpuexec__slot *slot = &exec->slots[w->index];
  /* Cadence windows (cadence.h) are timed parks of a millisecond or so: the
   * default 50 us slack would make them wake late. */
  cpuexec__os_timer_slack(CPUEXEC__CADENCE_TIMER_SLACK_NS);
  cpuexec__cadence_hint hint = {0, 0};
  uint32_t e = 0; /* the latest epoch value seen, without a nudge */
  cpuexec__node_counts counts;
  for (;;) {
    /* Open lanes (region_lanes.h) while lane 0 has nothing new for this
     * worker. On the one-caller path lanes_busy is 0: one load of a line
     * nobody writes. */
    if (atomic_load_explicit(&exec->lanes_busy, memory_order_relaxed) != 0 &&
        cpuexec__epoch_clear_nudge(&slot->epoch, atomic_load_explicit(&slot->epoch, memory_order_relaxed)) == e &&
        cpuexec__lanes_serve(exec, w->index,
                             cpuexec__permit_node_lets_join(&exec->permit, node_counts_of(exec, &counts))))
      continue;
    bool joined = false, aside = cpuexec__permit_stands_aside(&exec->permit, w->index);
    cpuexec__wait_report seen;
    cpuexec__wait_plan plan = worker_wait_plan(exec, w, aside, &hint, node_counts_of(exec, &counts));
    /* The permit gauges (permit.h; the test build's only). */
    CPUEXEC__TEST_GAUGE_ENTER_IF(plan.spin->mode != CPUEXEC__SPIN_NONE, cpuexec__test_permit_spinning);
    uint32_t now = cpuexec__wait_while_equal(&slot->epoch, e, &slot->parked, &plan, &seen);
    CPUEXEC__TEST_GAUGE_LEAVE_IF(plan.spin->mode != CPUEXEC__SPIN_NONE, cpuexec__test_permit_spinning);
    /* Running: the caller tells a queued worker by this (settle_workers). */
    atomic_store_explicit(&w->regions_seen, atomic_load_explicit(&w->regions_seen, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    if (now & CPUEXEC__EPOCH_NUDGE) {
      now = cpuexec__epoch_clear_nudge(&slot->epoch, now);
      if (now == e) continue; /* a nudge only: the lanes, at the top */
    }
    e = now;
    aside = false;
    int32_t cpu = -1;
    while (cpuexec__epoch_open(e)) {
      cpuexec__worker_gate_fn gate = CPUEXEC__TEST_HOOK(cpuexec__test_worker_gate, NULL);
      if (gate) {
        gate(exec, w->index);
        e = atomic_load_explicit(&slot->epoch, memory_order_relaxed);
        if (!cpuexec__epoch_open(e)) break;
      }
      /* The region is left to its caller, who takes the share over: so it
       * is when the node level of the permit model has no CPU for this
       * worker (permit.h, cpuexec__permit_node_lets_join). */
      if ((aside = cpuexec__permit_stands_aside(&exec->permit, w->index) ||
                   !cpuexec__permit_node_lets_join(&exec->permit, node_counts_of(exec, &counts))))
        break;
      /* The beside-caller rule (permit.h), before checking in: while the
       * worker moves, its caller may take the share over instead of
       * waiting for it. */
      cpu = cpuexec__worker_beside(exec, w, atomic_load_explicit(&exec->caller_cpu, memory_order_relaxed));
      if (cpuexec__epoch_try_join(&slot->epoch, &e)) {
        joined = true;
        break;
      }
    }
    w->missed = !joined && !aside;
    if (aside) {
      CPUEXEC__COUNT_AS(cpuexec__counters_of(exec), w->index, stood_aside, 1);
      continue;
    }
    /* Taken, and nudged since: the nudge is looked at, at the top. */
    if (e & CPUEXEC__EPOCH_NUDGE) e = cpuexec__epoch_clear_nudge(&slot->epoch, e);
    if (joined) {
      if (slot->region.participants == 0) {
        cpuexec__node_permit_park(); /* the pool ends: nothing to wait for */
        break;
      }
      uint32_t participants = slot->region.participants;
      CPUEXEC__CHECK(w->index < participants && participants <= exec->threads,
                     "executor %llu: worker %u admitted to a region of %u participants (executor of %u)",
                     (unsigned long long)exec->id, w->index, participants, exec->threads);
      if (participants >= exec->wake_tree_min) { /* wide regions: wake_tree.h */
        uint64_t wakes = cpuexec__wake_tree_children(exec, w->index, participants);
        cpuexec__counters_block *c = cpuexec__counters_of(exec);
        if (c && wakes) atomic_fetch_add_explicit(&c->workers.wakeups, wakes, memory_order_relaxed);
      }
      if (atomic_load_explicit(&slot->cpu, memory_order_relaxed) != cpu)
        atomic_store_explicit(&slot->cpu, cpu, memory_order_relaxed);
      cpuexec__counters_block *counters = cpuexec__counters_of(exec);
      if (counters) {
        /* Counted before leaving: once the caller returns, its counts are complete. */
        atomic_fetch_add_explicit(seen.slept ? &counters->workers.parks : &counters->workers.spins_found_work, 1,
                                  memory_order_relaxed);
        if (seen.long_spin) atomic_fetch_add_explicit(&counters->workers.long_spins, 1, memory_order_relaxed);
      }
      cpuexec__lane *lane0 = &exec->lanes[0];
      cpuexec__share_of share = {.exec = exec, .lane = lane0, .region = &slot->region, .index = w->index};
      CPUEXEC__TEST_GAUGE_ENTER(cpuexec__test_permit_running);
      cpuexec__share_work(&share, &lane0->finish[cpuexec__finish_group_of(w->index)]);
      CPUEXEC__TEST_GAUGE_LEAVE(cpuexec__test_permit_running);
    }
    /* From here on the region is done or someone else's: the bookkeeping
     * costs nobody a wait. The cadence is learnt from every region seen,
     * joined or not, so a worker the caller keeps finding late still
     * learns it and is spinning for the next one. */
    if (seen.seen_ns) {
      hint = cpuexec__cadence_note(&w->cadence, seen.seen_ns);
      if (seen.outcome == CPUEXEC__CADENCE_NONE)
        cpuexec__permit_note_wait(&w->permit, exec->spin.ns, seen.seen_ns - seen.start_ns, seen.slept);
    }
    cpuexec__counters_block *counters = cpuexec__counters_of(exec);
    if (counters) {
      if (!joined) atomic_fetch_add_explicit(&counters->workers.late_arrivals, 1, memory_order_relaxed);
      if (!joined && seen.long_spin) atomic_fetch_add_explicit(&counters->workers.long_spins, 1, memory_order_relaxed);
      if (seen.outcome == CPUEXEC__CADENCE_HIT)
        atomic_fetch_add_explicit(&counters->workers.cadence_hits, 1, memory_order_relaxed);
      else if (seen.outcome == CPUEXEC__CADENCE_MISS)
        atomic_fetch_add_explicit(&counters->workers.cadence_misses, 1, memory_order_relaxed);
    }
  }
  return NULL;
}
