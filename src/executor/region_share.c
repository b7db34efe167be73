/* One participant's share of a region in any lane, and the owner's end of
 * it (region_share.h): the blocks of lane 0 and the guided cursor of the
 * other lanes, behind one share routine. */
#include "region_share.h"

#include "core/debug.h"
#include "os/os.h"
#include "participant.h"

/* Claims 1 / per of what remains of [*cursor, end), rounded up: chunks
 * [*lo, *hi). A participant reads the cursor before adding to it, so an
 * exhausted cursor costs a load, not a write. */
static inline bool claim(_Atomic int64_t *cursor, int64_t end, int64_t per, int64_t *lo, int64_t *hi) {
  int64_t next = atomic_load_explicit(cursor, memory_order_relaxed);
  if (next >= end) return false;
  int64_t take = (end - next + per - 1) / per;
  int64_t got = atomic_fetch_add_explicit(cursor, take, memory_order_relaxed);
  if (got >= end) return false;
  *lo = got;
  *hi = got + take < end ? got + take : end;
  return true;
}

/* Runs chunks [lo, hi) of r (of `chunks` in all) unless the region already
 * failed; false to stop. The first failure is the region's (`error`). */
static inline bool run_chunks(const cpuexec__region *r, _Atomic int *error, int64_t chunks, int64_t lo,
                              int64_t hi) {
  if (atomic_load_explicit(error, memory_order_relaxed) != 0) return false;
  int64_t end = hi >= chunks ? r->total : hi * r->grain;
  int rc = cpuexec__participant_invoke(r->fn, r->ctx, lo * r->grain, end);
  if (rc != 0) {
    int expected = 0;
    atomic_compare_exchange_strong_explicit(error, &expected, rc, memory_order_relaxed, memory_order_relaxed);
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

/* Lane 0: the participant's block (its reserved chunk, merged with its
 * first claim when they touch), then the other blocks in ring order. */
static void share_blocks(cpuexec__share_of *s) {
  cpuexec__slot *slots = s->exec->slots, *own = &slots[s->index];
  const cpuexec__region *r = s->region;
  _Atomic int *error = &s->lane->error;
  uint32_t participants = r->participants;
  cpuexec__partition pt = own->part;
  int64_t lo = cpuexec__block_first(&pt, s->index), hi = lo + 1, clo, chi;
  bool pending = claim(&own->next, own->end, CPUEXEC__CLAIM_DIVISOR, &clo, &chi);
  if (pending && clo == hi) {
    hi = chi;
    pending = false;
  }
  if (!run_chunks(r, error, pt.chunks, lo, hi)) return;
  if (pending && !run_chunks(r, error, pt.chunks, clo, chi)) return;
  while (claim(&own->next, own->end, CPUEXEC__CLAIM_DIVISOR, &clo, &chi))
    if (!run_chunks(r, error, pt.chunks, clo, chi)) return;
  for (uint32_t k = 1; k < participants; k++) {
    uint32_t victim = s->index + k;
    if (victim >= participants) victim -= participants;
    cpuexec__slot *v = &slots[victim];
    /* Participant 0 always runs: only workers can be late. */
    if (victim != 0 && !r->strict && take_over(v)) {
      s->taken++;
      int64_t first = cpuexec__block_first(&pt, victim);
      if (!run_chunks(r, error, pt.chunks, first, first + 1)) return;
    }
    /* A block of one chunk holds only its owner's reserved chunk: skip it
     * without touching its line. */
    if (cpuexec__block_size(&pt, victim) <= 1) continue;
    while (claim(&v->next, v->end, CPUEXEC__CLAIM_DIVISOR, &clo, &chi))
      if (!run_chunks(r, error, pt.chunks, clo, chi)) return;
  }
}

/* Lanes 1 ..: the participant's reserved chunk, then claims from the one
 * cursor; the owner of a take-over region then closes the lane and runs
 * the reserved chunks of the indices nobody joined as (nobody waits for a
 * worker that has not started). The lane is closed even after a failure,
 * so no worker joins once the owner counted the joiners. */
static void share_guided(cpuexec__share_of *s) {
  cpuexec__lane *l = s->lane;
  const cpuexec__region *r = s->region;
  int64_t per = CPUEXEC__GUIDED_DIVISOR * (int64_t)r->participants, lo, hi;
  if (run_chunks(r, &l->error, l->chunks, s->index, (int64_t)s->index + 1))
    while (claim(&l->next, l->chunks, per, &lo, &hi) && run_chunks(r, &l->error, l->chunks, lo, hi)) {
    }
  if (s->index != 0 || r->strict) return;
  s->joined = cpuexec__lane_close(l);
  s->taken = r->participants - s->joined;
  for (uint32_t q = s->joined; q < r->participants; q++)
    if (!run_chunks(r, &l->error, l->chunks, q, (int64_t)q + 1)) break;
}

static void share_body(void *arg) {
  cpuexec__share_of *s = arg;
  if (s->lane == s->exec->lanes)
    share_blocks(s);
  else
    share_guided(s);
}

void cpuexec__share_run(cpuexec__share_of *s) {
  cpuexec__participant p;
  cpuexec__participant_enter(&p, s->exec, s->index, s->region->participants);
  if (__builtin_expect(s->region->env != NULL, 0) && s->index > 0) {
    cpuexec__fpenv own; /* the caller's state for the region (fpenv.h) */
    cpuexec__fpenv_apply(s->region->env, &own);
    cpuexec__participant_share(share_body, s);
    cpuexec__fpenv_restore(&own);
  } else {
    cpuexec__participant_share(share_body, s);
  }
  cpuexec__participant_leave(&p);
  if (s->taken) CPUEXEC__COUNT_AS(cpuexec__counters_of(s->exec), s->index, takeovers, s->taken);
}

static void share_run_of(void *arg) { cpuexec__share_run(arg); }

void cpuexec__share_work(cpuexec__share_of *s, cpuexec__finish_group *finish) {
  cpuexec__worker_active(s->exec, share_run_of, s);
  cpuexec__finish_group_leave(finish);
}

void cpuexec__region_wait(struct cpuexec_executor *exec, cpuexec__lane *lane, uint32_t groups,
                          const _Atomic int32_t *share_cpu) {
  bool waited = false, slept = false, long_spin = false;
  uint64_t start = 0;
  for (uint32_t g = 0; g < groups; g++) {
    cpuexec__finish_group *group = &lane->finish[g];
    uint32_t expect = lane->tally[g].expect;
    if (atomic_load_explicit(&group->finished, memory_order_acquire) == expect) continue;
    if (!waited && cpuexec__counters_of(exec)) start = cpuexec__os_now_ns();
    waited = true;
    cpuexec__wait_plan plan = {.spin = &exec->spin, .share_cpu = share_cpu};
    cpuexec__wait_report report;
    atomic_store_explicit(&group->goal, expect, memory_order_relaxed);
    cpuexec__wait_until_equal(&group->finished, expect, &group->caller_parked, &plan, &report);
    slept = slept || report.slept;
    long_spin = long_spin || report.long_spin;
  }
  if (waited)
    cpuexec__count_caller_wait(cpuexec__counters_of(exec), slept, long_spin, start ? cpuexec__os_now_ns() - start : 0);
}

int cpuexec__region_close(struct cpuexec_executor *exec, cpuexec__lane *lane, uint32_t groups, uint64_t wakes,
                          uint32_t *ran) {
  /* The tallies are the owner's own memory: reading them costs no shared line. */
  uint32_t n = 1;
  for (uint32_t g = 0; g < groups; g++) {
    n += lane->tally[g].expect - lane->tally[g].target;
    lane->tally[g].target = lane->tally[g].expect;
  }
  *ran = n;
  cpuexec__counters_block *counters = cpuexec__counters_of(exec);
  CPUEXEC__COUNT(counters, participants_run, n);
  if (n > 1) CPUEXEC__COUNT(counters, parallel_regions, 1);
  if (wakes) CPUEXEC__COUNT(counters, wakeups, wakes);
  int rc = atomic_load_explicit(&lane->error, memory_order_relaxed);
  if (rc != 0) atomic_store_explicit(&lane->error, 0, memory_order_relaxed);
  return rc;
}
