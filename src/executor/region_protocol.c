/* Lane 0's region protocol, both halves: the caller's (publish the slots,
 * admit the workers, run participant 0's share, settle the workers that did
 * not check in, wait for those that did) and the worker's (the loop each
 * worker thread runs: wait for its epoch, check in, run its share, leave,
 * and serve the lanes of region_lanes.h in between). The epoch states and
 * their named transitions are in executor_internal.h; the dispatcher that
 * chooses lane 0, a lane or the serial loop is in region.c.
 *
 * Work distribution. The index space is cut into chunks of `grain` indices
 * (the last one shorter). Participant p owns a contiguous block of chunks
 * (its static share, for locality): the first chunk of its block is
 * reserved for it, then it claims the rest of its block half of what
 * remains at a time, then steals from the other blocks the same way, in
 * ring order. A claim is one relaxed fetch_add on the block's cursor; a
 * participant reads a cursor before adding to it, so an exhausted block
 * costs a load, not a write.
 *
 * Nobody waits for a worker that has not started (doc/spinning.md). A
 * participant that meets, in its ring, a worker that has not checked in
 * (its epoch still open, executor_internal.h) closes that worker's region
 * with one compare-exchange and runs the reserved chunk itself, then the
 * rest of that block. The caller then waits only for the workers that
 * joined: a parked or descheduled worker costs the region its share's time
 * on a running thread, never the worker's wake-up. With
 * CPUEXEC_FOR_EVERY_PARTICIPANT nobody takes over and the caller waits for
 * every admitted worker, as the executor always did before. */
#include "core/debug.h"
#include "executor_internal.h"
#include "os/os.h"
#include "participant.h"
#include "region_lanes.h"
#include "wake_tree.h"

#if CPUEXEC_TEST_HOOKS
_Atomic(cpuexec__worker_gate_fn) cpuexec__test_worker_gate; /* NULL: static storage starts zeroed */
#endif

/* The partition of a region's chunks into participant blocks: block p is
 * [first(p), first(p) + size(p)), the first rem blocks one chunk longer. */
typedef struct partition {
  int64_t chunks, q, rem;
} partition;

static inline partition partition_of(int64_t total, int64_t grain, uint32_t participants) {
  partition pt;
  pt.chunks = total / grain + (total % grain != 0);
  pt.q = pt.chunks / participants;
  pt.rem = pt.chunks % participants;
  return pt;
}

static inline int64_t block_first(const partition *pt, uint32_t p) {
  return (int64_t)p * pt->q + ((int64_t)p < pt->rem ? (int64_t)p : pt->rem);
}

static inline int64_t block_size(const partition *pt, uint32_t p) { return pt->q + ((int64_t)p < pt->rem); }

/* Claims about half of what remains in s: chunks [*lo, *hi). */
static inline bool claim(cpuexec__slot *s, int64_t *lo, int64_t *hi) {
  int64_t next = atomic_load_explicit(&s->next, memory_order_relaxed);
  if (next >= s->end) return false;
  int64_t take = (s->end - next + CPUEXEC__CLAIM_DIVISOR - 1) / CPUEXEC__CLAIM_DIVISOR;
  int64_t got = atomic_fetch_add_explicit(&s->next, take, memory_order_relaxed);
  if (got >= s->end) return false;
  *lo = got;
  *hi = got + take < s->end ? got + take : s->end;
  return true;
}

/* Runs chunks [lo, hi) unless the region already failed; false to stop. */
static inline bool run_chunks(struct cpuexec_executor *exec, const cpuexec__slot *own, const partition *pt,
                              int64_t lo, int64_t hi) {
  if (atomic_load_explicit(&exec->error, memory_order_relaxed) != 0) return false;
  int64_t end = hi >= pt->chunks ? own->total : hi * own->grain;
  int rc = cpuexec__participant_invoke(own->fn, own->ctx, lo * own->grain, end);
  if (rc != 0) {
    int expected = 0;
    atomic_compare_exchange_strong_explicit(&exec->error, &expected, rc, memory_order_relaxed,
                                            memory_order_relaxed);
    return false;
  }
  return true;
}

/* Closes victim's region when its worker has not checked in; true when this
 * participant did, and so owns the reserved chunk. A relaxed load first: a
 * worker that joined costs a read of its line, not a write. */
static inline bool take_over(cpuexec__slot *victim) {
  uint32_t e = atomic_load_explicit(&victim->epoch, memory_order_relaxed);
  return cpuexec__epoch_open(e) && cpuexec__epoch_try_take(&victim->epoch, e);
}

static void run_share(struct cpuexec_executor *exec, uint32_t index) {
  cpuexec__slot *own = &exec->slots[index];
  uint32_t participants = own->participants;
  partition pt = {own->chunks, own->q, own->rem};
  int64_t lo = block_first(&pt, index), hi = lo + 1, clo, chi;
  bool pending = claim(own, &clo, &chi);
  if (pending && clo == hi) {
    hi = chi;
    pending = false;
  }
  if (!run_chunks(exec, own, &pt, lo, hi)) return;
  if (pending && !run_chunks(exec, own, &pt, clo, chi)) return;
  while (claim(own, &clo, &chi))
    if (!run_chunks(exec, own, &pt, clo, chi)) return;
  uint64_t taken = 0;
  for (uint32_t k = 1; k < participants; k++) {
    uint32_t victim = index + k;
    if (victim >= participants) victim -= participants;
    cpuexec__slot *v = &exec->slots[victim];
    /* Participant 0 always runs: only workers can be late. */
    if (victim != 0 && own->takeover && take_over(v)) {
      taken++;
      int64_t first = block_first(&pt, victim);
      if (!run_chunks(exec, own, &pt, first, first + 1)) break;
    }
    /* A block of one chunk holds only its owner's reserved chunk: skip it
     * without touching its line. */
    if (block_size(&pt, victim) <= 1) continue;
    bool ok = true;
    while (ok && claim(v, &clo, &chi)) ok = run_chunks(exec, own, &pt, clo, chi);
    if (!ok) break;
  }
  if (taken) CPUEXEC__COUNT_AS(cpuexec__counters_of(exec), index, takeovers, taken);
}

typedef struct share_of {
  struct cpuexec_executor *exec;
  uint32_t index;
} share_of;

static void run_share_of(void *arg) {
  const share_of *s = arg;
  run_share(s->exec, s->index);
}

void cpuexec__region_participate(struct cpuexec_executor *exec, uint32_t index) {
  cpuexec__participant p;
  cpuexec__participant_enter(&p, exec, index, exec->slots[index].participants);
  share_of share = {exec, index};
  if (__builtin_expect(exec->slots[index].fpenv, 0) && index > 0) {
    cpuexec__fpenv own; /* the caller's state for the region (fpenv.h) */
    cpuexec__fpenv_apply(&exec->slots[index].env, &own);
    cpuexec__participant_share(run_share_of, &share);
    cpuexec__fpenv_restore(&own);
  } else {
    cpuexec__participant_share(run_share_of, &share);
  }
  cpuexec__participant_leave(&p);
}

void cpuexec__region_leave(struct cpuexec_executor *exec, uint32_t index) {
  cpuexec__finish_count_leave(exec->finish, index);
}

/* After the caller's share: closes every worker region still open (a
 * failed region may have stopped before the ring reached it), counts in
 * each group's tally the workers that joined, and sets *waited_cpu to where
 * one of them runs. A worker the permit model finds stuck (woken, but
 * missing regions unseen) may make the caller move off its processor. */
static void settle_workers(struct cpuexec_executor *exec, uint32_t participants,
                           const _Atomic int32_t **waited_cpu) {
  cpuexec__finish_tally *tally = exec->finish_tally;
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

/* Waits, group by group, for the joined workers' finishing adds; returns
 * whether the caller had to wait, and *slept whether it parked, *long_spin
 * whether it spun past its plan's spin (wait.h), in any group. */
static bool wait_for_workers(struct cpuexec_executor *exec, uint32_t participants,
                             const _Atomic int32_t *waited_cpu, bool *slept, bool *long_spin) {
  bool waited = false;
  *slept = *long_spin = false;
  for (uint32_t g = 0; g <= cpuexec__finish_group_of(participants - 1); g++) {
    cpuexec__finish_group *group = &exec->finish[g];
    uint32_t expect = exec->finish_tally[g].expect;
    if (atomic_load_explicit(&group->finished, memory_order_acquire) == expect) continue;
    cpuexec__wait_plan plan = {.spin = &exec->spin, .share_cpu = waited_cpu};
    cpuexec__wait_report report;
    atomic_store_explicit(&group->goal, expect, memory_order_relaxed);
    cpuexec__wait_until_equal(&group->finished, expect, &group->caller_parked, &plan, &report);
    waited = true;
    *slept = *slept || report.slept;
    *long_spin = *long_spin || report.long_spin;
  }
  return waited;
}

/* Writes every participant's slot: all of them before any epoch moves, so
 * a worker that acquires its epoch sees every block it may steal from. */
static void publish_slots(struct cpuexec_executor *exec, const cpuexec__region *r) {
  uint32_t participants = r->participants;
  partition pt = partition_of(r->total, r->grain, participants);
  for (uint32_t p = 0; p < participants; p++) {
    cpuexec__slot *s = &exec->slots[p];
    int64_t first = block_first(&pt, p);
    s->fn = r->fn;
    s->ctx = r->ctx;
    s->total = r->total;
    s->grain = r->grain;
    atomic_store_explicit(&s->next, first + 1, memory_order_relaxed);
    s->end = first + block_size(&pt, p);
    s->chunks = pt.chunks;
    s->q = pt.q;
    s->rem = pt.rem;
    s->participants = participants;
    s->takeover = !r->strict;
    s->fpenv = r->env != NULL;
    if (r->env) s->env = *r->env;
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

/* After the caller's share: settles the late workers (unless every one must
 * run), waits for those that joined, and counts. Returns how many
 * participants ran, the caller included (the tallies are the caller's own
 * memory: reading them costs no shared line). */
static uint32_t finish_region(struct cpuexec_executor *exec, uint32_t participants, bool every) {
  cpuexec__counters_block *counters = cpuexec__counters_of(exec);
  const _Atomic int32_t *waited_cpu = &exec->first_worker_cpu;
  uint32_t ran = participants; /* the caller and the workers that checked in */
  /* Every worker joined and finished: nothing to settle (the common case
   * of a hot pool reads one counter per group of workers). */
  if (!cpuexec__finish_count_all_done(exec->finish, exec->finish_tally, participants)) {
    if (!every) settle_workers(exec, participants, &waited_cpu);
    bool slept, long_spin;
    uint64_t start = counters ? cpuexec__os_now_ns() : 0;
    if (wait_for_workers(exec, participants, waited_cpu, &slept, &long_spin)) {
      counters = cpuexec__counters_of(exec);
      cpuexec__count_caller_wait(counters, slept, long_spin, start ? cpuexec__os_now_ns() - start : 0);
    }
    ran = 1;
    for (uint32_t g = 0; g <= cpuexec__finish_group_of(participants - 1); g++)
      ran += exec->finish_tally[g].expect - exec->finish_tally[g].target;
  }
  CPUEXEC__COUNT(counters, participants_run, ran);
  if (ran > 1) CPUEXEC__COUNT(counters, parallel_regions, 1);
  for (uint32_t g = 0; g <= cpuexec__finish_group_of(participants - 1); g++)
    exec->finish_tally[g].target = exec->finish_tally[g].expect;
  return ran;
}

int cpuexec__lane0_run(struct cpuexec_executor *exec, const cpuexec__region *r, uint32_t *ran) {
  CPUEXEC__COUNT(cpuexec__counters_of(exec), dispatches, 1);
  atomic_store_explicit(&exec->lane0_running, 1, memory_order_relaxed);
  publish_slots(exec, r);
  uint64_t wakes = admit_workers(exec, r->participants);
  cpuexec__region_participate(exec, 0);
  *ran = finish_region(exec, r->participants, r->strict);
  if (wakes) CPUEXEC__COUNT(cpuexec__counters_of(exec), wakeups, wakes);
  int rc = atomic_load_explicit(&exec->error, memory_order_relaxed);
  if (rc != 0) atomic_store_explicit(&exec->error, 0, memory_order_relaxed);
  atomic_store_explicit(&exec->lane0_running, 0, memory_order_relaxed);
  pthread_mutex_unlock(&exec->dispatch_lock);
  return rc;
}

/* ---- the worker's half ------------------------------------------------ */

static const cpuexec__spin_plan park_at_once = {CPUEXEC__SPIN_NONE, 0, 0, false};

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
                                           const cpuexec__cadence_hint *hint) {
  cpuexec__wait_plan plan = {.spin = &park_at_once, .share_cpu = &exec->caller_cpu};
  if (!cpuexec__permit_worker_spins(&exec->permit, &w->permit, aside) || !cpuexec__node_permit_run()) return plan;
  plan.spin = &exec->spin;
  plan.busy = w->missed ? &exec->lane0_running : NULL;
  plan.gap_spin_ns = cpuexec__permit_gap_spin_ns(&w->permit);
  plan.hint = hint;
  return plan;
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
  for (;;) {
    /* Open lanes (region_lanes.h) while lane 0 has nothing new for this
     * worker. On the one-caller path lanes_busy is 0: one load of a line
     * nobody writes. */
    if (atomic_load_explicit(&exec->lanes_busy, memory_order_relaxed) != 0 &&
        cpuexec__epoch_clear_nudge(&slot->epoch, atomic_load_explicit(&slot->epoch, memory_order_relaxed)) == e &&
        cpuexec__permit_node_lets_join(&exec->permit) && cpuexec__lanes_serve(exec, w->index))
      continue;
    bool joined = false, aside = cpuexec__permit_stands_aside(&exec->permit, w->index);
    cpuexec__wait_report seen;
    cpuexec__wait_plan plan = worker_wait_plan(exec, w, aside, &hint);
    uint32_t now = cpuexec__wait_while_equal(&slot->epoch, e, &slot->parked, &plan, &seen);
    /* Running: the caller tells a queued worker by this (settle_workers). */
    atomic_store_explicit(&w->regions_seen, atomic_load_explicit(&w->regions_seen, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    if (now & CPUEXEC__EPOCH_NUDGE) {
      now = cpuexec__epoch_clear_nudge(&slot->epoch, now);
      if (now == e) continue; /* a nudge only: the lanes, at the top */
    }
    e = now;
    aside = false;
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
                   !cpuexec__permit_node_lets_join(&exec->permit)))
        break;
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
      if (slot->participants == 0) {
        cpuexec__node_permit_park(); /* the pool ends: nothing to wait for */
        break;
      }
      CPUEXEC__CHECK(w->index < slot->participants && slot->participants <= exec->threads,
                     "executor %llu: worker %u admitted to a region of %u participants (executor of %u)",
                     (unsigned long long)exec->id, w->index, slot->participants, exec->threads);
      uint32_t participants = slot->participants;
      if (participants >= exec->wake_tree_min) { /* wide regions: wake_tree.h */
        uint64_t wakes = cpuexec__wake_tree_children(exec, w->index, participants);
        cpuexec__counters_block *c = cpuexec__counters_of(exec);
        if (c && wakes) atomic_fetch_add_explicit(&c->workers.wakeups, wakes, memory_order_relaxed);
      }
      int32_t cpu = cpuexec__os_current_cpu();
      if (atomic_load_explicit(&slot->cpu, memory_order_relaxed) != cpu)
        atomic_store_explicit(&slot->cpu, cpu, memory_order_relaxed);
      cpuexec__counters_block *counters = cpuexec__counters_of(exec);
      if (counters) {
        /* Counted before leaving: once the caller returns, its counts are complete. */
        atomic_fetch_add_explicit(seen.slept ? &counters->workers.parks : &counters->workers.spins_found_work, 1,
                                  memory_order_relaxed);
        if (seen.long_spin) atomic_fetch_add_explicit(&counters->workers.long_spins, 1, memory_order_relaxed);
        uint64_t start = cpuexec__os_now_ns();
        cpuexec__region_participate(exec, w->index);
        atomic_fetch_add_explicit(&counters->workers.worker_active_ns, cpuexec__os_now_ns() - start,
                                  memory_order_relaxed);
      } else {
        cpuexec__region_participate(exec, w->index);
      }
      cpuexec__region_leave(exec, w->index);
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
