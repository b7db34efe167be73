/* cpuexec_parallel_for: checking a call, and choosing where its region
 * runs. Inline (no executor, nested, one participant), on a foreign pool
 * (foreign.c), in lane 0 (region_protocol.c: both halves of the check-in
 * protocol), in another lane beside it (region_lanes.c), or, past the bound
 * of lanes, as the serial loop on the calling thread. In a lane, every
 * participant runs its share through region_share.c. */
#include <errno.h>
#include <string.h>

#include "core/error.h"
#include "crowd_places.h"
#include "executor_internal.h"
#include "os/os.h"
#include "os/placement_generation.h"
#include "participant.h"
#include "observers.h"
#include "region_lanes.h"

/* The caller's processor as last pinned by an explicit policy (-1: never)
 * and the placement generation it was checked under, so a dispatch looks
 * again only when the thread may have moved (pin_caller). */
typedef struct caller_pin {
  int32_t cpu;
  uint64_t generation;
} caller_pin;
static __thread caller_pin pinned_caller __attribute__((tls_model("initial-exec"))) = {-1, 0};

/* The serial loop on the calling thread, as one participant of one. */
static int run_inline(struct cpuexec_executor *exec, const cpuexec__region *r) {
  cpuexec__participant p;
  cpuexec__participant_enter(&p, exec, 0, 1);
  int rc = cpuexec__participant_invoke(r->fn, r->ctx, 0, r->total);
  cpuexec__participant_leave(&p);
  return rc;
}

/* Announces the call to the observers (observers.h); ev is NULL when there
 * are none, so a call nobody observes fills no event. */
static inline void announce(uint32_t live, cpuexec_dispatch_event *ev, uint32_t admitted, bool ran_inline) {
  if (!ev) return;
  ev->admitted_participants = (int32_t)admitted;
  ev->ran_inline = ran_inline;
  cpuexec__observers_notify(live, ev);
}

static inline void note_executed(cpuexec_dispatch_event *ev, uint32_t participants) {
  if (ev) ev->executed_participants = (int32_t)participants;
}

/* The caller's pin under an explicit policy is made at its first region
 * and cached. It is looked at again (cpuexec__executor_pin_caller, one
 * system call) when the cache may be stale: the thread runs on another
 * processor now (the kernel moved it: its set shrank), or the placement
 * generation moved (a fork, a reload of the process topology, a placement
 * check that found a thread moved). Otherwise a pinned region costs one
 * current-processor read (sched_getcpu, which glibc answers from its rseq
 * area) and two loads (doc/performance.md, section 7, has its cost). The
 * thread stays pinned after
 * the region (cpuexec/executor.h, "The caller's placement"). */
static int pin_caller(const struct cpuexec_executor *exec) {
  int32_t cpu = exec->caller_processor;
  uint64_t generation = cpuexec__placement_generation();
  bool mine = pinned_caller.cpu == cpu;
  if (mine && pinned_caller.generation == generation) {
    int32_t now = cpuexec__os_current_cpu();
    if (now == cpu || now < 0) return 0;
  }
  int rc = cpuexec__executor_pin_caller(cpu, mine);
  if (rc != 0) return rc;
  pinned_caller.cpu = cpu;
  pinned_caller.generation = generation;
  return 0;
}

/* The caller is free (not placed) but runs on the processor a pinned worker
 * of this region needs (the permit model's pinned-processor rule): nothing
 * can run in parallel, and a busy scheduler may leave the pair there for
 * whole runs (doc/performance.md, "Sharing a processor"). Narrowing the caller's CPU set to
 * exclude the admitted workers' processors moves it at once; restoring the
 * set right after leaves its affinity exactly as it was, only its current
 * processor changed, as any migration by the scheduler would. Costs two
 * system calls, only when the collision is seen. Returns where the caller
 * runs now. */
static int32_t step_off_worker_processor(const struct cpuexec_executor *exec, int32_t cpu, uint32_t participants) {
  const cpuexec_resolved *r = exec->resolved;
  uint32_t n = participants - 1 < r->worker_processor_count ? participants - 1 : r->worker_processor_count;
  int32_t now = cpuexec__os_step_off(r->worker_processors, n);
  CPUEXEC__COUNT(cpuexec__counters_of(exec), step_offs, 1);
  return now >= 0 ? now : cpu;
}

/* A range run with the caller's floating-point state (foreign executors). */
typedef struct fp_call {
  cpuexec_range_fn fn;
  void *ctx;
  cpuexec__fpenv env;
} fp_call;

static int fp_range(void *arg, int64_t begin, int64_t end) {
  const fp_call *call = arg;
  cpuexec__fpenv own;
  cpuexec__fpenv_apply(&call->env, &own);
  int rc = call->fn(call->ctx, begin, end);
  cpuexec__fpenv_restore(&own);
  return rc;
}

/* Where the caller runs, for workers that yield when they share its
 * processor (wait.h); written only when it changes, so the line stays
 * shared. Lane 0's caller only. */
static void note_caller_cpu(struct cpuexec_executor *exec, uint32_t participants) {
  int32_t cpu = cpuexec__os_current_cpu();
  if (cpuexec__permit_caller_on_worker_cpu(&exec->permit, cpu)) cpu = step_off_worker_processor(exec, cpu, participants);
  if (atomic_load_explicit(&exec->caller_cpu, memory_order_relaxed) != cpu)
    atomic_store_explicit(&exec->caller_cpu, cpu, memory_order_relaxed);
}

/* Lane 0's region, the caller holding dispatch_lock (released by it). */
static int run_lane0(struct cpuexec_executor *exec, const cpuexec__region *r, uint32_t *ran) {
  note_caller_cpu(exec, r->participants);
  return cpuexec__lane0_run(exec, r, ran);
}

CPUEXEC_EXPORT int cpuexec_parallel_for(cpuexec_executor *exec, int64_t total, int64_t grain, void *ctx,
                                        cpuexec_range_fn fn, int32_t max_participants) {
  return cpuexec_parallel_for_flags(exec, total, grain, ctx, fn, max_participants, 0);
}

/* The call's arguments, checked before anything runs; 0 or the error. */
static int check_call(const cpuexec_executor *exec, int64_t grain, cpuexec_range_fn fn, int32_t max_participants,
                      uint32_t flags) {
  if (flags & ~(CPUEXEC_FOR_EVERY_PARTICIPANT | CPUEXEC_FOR_INHERIT_FP_ENV))
    return cpuexec__fail(CPUEXEC_EINVAL,
                         "flags: 0x%x has unknown bits 0x%x; the flags are CPUEXEC_FOR_EVERY_PARTICIPANT (0x%x) and "
                         "CPUEXEC_FOR_INHERIT_FP_ENV (0x%x)",
                         flags, flags & ~(CPUEXEC_FOR_EVERY_PARTICIPANT | CPUEXEC_FOR_INHERIT_FP_ENV),
                         CPUEXEC_FOR_EVERY_PARTICIPANT, CPUEXEC_FOR_INHERIT_FP_ENV);
  if (exec && exec->fork_generation != cpuexec__fork_generation_now())
    return cpuexec__fail(CPUEXEC_EFORKED,
                         "executor %llu: created by the parent process before fork(); create a new one in the child",
                         (unsigned long long)exec->id);
  if (grain < 1)
    return cpuexec__fail(CPUEXEC_EINVAL, "grain: %lld is below 1; use at least 1 index per range",
                         (long long)grain);
  if (!fn) return cpuexec__fail(CPUEXEC_EINVAL, "fn: NULL; a range callback is required");
  if (max_participants < 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "max_participants: %d is negative; use 0 for the executor's limit",
                         (int)max_participants);
  return 0;
}

/* A foreign pool's region. Its threads are not ours to prepare per region:
 * with the caller's FP state asked for, every range carries it (fpenv.h). */
static int run_foreign(struct cpuexec_executor *exec, const cpuexec__region *r, uint32_t flags) {
  if (!(flags & CPUEXEC_FOR_INHERIT_FP_ENV))
    return cpuexec__foreign_run(exec, r->total, r->grain, r->ctx, r->fn, r->participants);
  fp_call call = {.fn = r->fn, .ctx = r->ctx};
  cpuexec__fpenv_capture(&call.env);
  return cpuexec__foreign_run(exec, r->total, r->grain, &call, fp_range, r->participants);
}

/* A crowded caller's yields in a row that found its processor empty
 * (cpuexec__permit_crowd_rests) and its turns in a row that saw its
 * process's crowded callers placed unevenly (cpuexec__permit_crowd_moves),
 * both kept from one region to the next; and the word its rest sleeps on,
 * which nobody wakes. */
static __thread uint32_t crowd_alone_in_a_row;
static __thread uint32_t crowd_uneven_looks;
static __thread _Atomic uint32_t crowd_rest_word;

/* A crowded caller's region: where it counts itself (crowd_places.h), and
 * whether it may still move (not where the policy places the caller). */
typedef struct crowd_state {
  cpuexec__crowd_place place;
  bool may_move;
} crowd_state;

/* A crowded caller of one process whose processor holds more of its
 * process's crowded callers than another moves there (the crowd move, once
 * it saw that CPUEXEC__CROWD_UNEVEN_LOOKS turns in a row); the move
 * failing (the caller's affinity does not allow it), it tries no more in
 * this region. */
static void crowd_place(crowd_state *crowd) {
  cpuexec__crowd_look look;
  cpuexec__crowd_places_look(&crowd->place, cpuexec__os_current_cpu(), &look);
  if (!crowd->may_move || !cpuexec__permit_crowd_moves(&crowd_uneven_looks, look.here, look.fewest)) return;
  /* Counted there before it moves: the move waits its turn on the busy
   * processor, and the callers left behind, looking meanwhile, must see
   * it gone or they all follow it. */
  int32_t there = look.emptiest;
  cpuexec__crowd_places_look(&crowd->place, there, &look);
  int32_t now = cpuexec__os_move_to(there);
  if (now == there) return;
  crowd->may_move = false;
  cpuexec__crowd_places_look(&crowd->place, now, &look);
}

/* A crowded caller's turn between two pieces, its slice having ended at
 * now_ns: it yields; among processes it rests when its yields keep
 * finding nobody to yield to (the crowd rest), and among one process's
 * callers it moves where they are placed unevenly (the crowd move).
 * Returns when the next slice begins. */
static uint64_t crowd_turn(uint64_t now_ns, crowd_state *crowd, bool among_processes) {
  cpuexec__os_yield();
  uint64_t after = cpuexec__permit_now_ns();
  if (!among_processes) {
    crowd_place(crowd);
    return after;
  }
  if (!cpuexec__permit_crowd_rests(&crowd_alone_in_a_row, after - now_ns)) return after;
  cpuexec__os_wait_until(&crowd_rest_word, 0, cpuexec__os_now_ns() + CPUEXEC__CROWD_REST_NS);
  return cpuexec__permit_now_ns();
}

/* More callers than the executor has threads run regions on it (four on a
 * pool of two): the kernel time-slices the callers, and one it preempts
 * mid-region waits a scheduler tick to finish it (the K = 4 p99 of make
 * bench). So a caller that runs alone in such a crowd runs its region in
 * pieces and yields its processor between them once a slice has passed
 * (the permit model's crowd rule): the callers then take turns at that
 * grain (libomp's teams do the same in their yielding barriers), each
 * region taking its fair share of a processor but none waiting a tick. A
 * yield with nobody else runnable returns at once. The kernel moves
 * nothing among threads that only yield, so the turns also even out where
 * the callers run: among one process's callers, a caller on a processor
 * that holds two more of them than another moves there (the crowd move);
 * where callers of several processes crowd the node (among_processes),
 * whose placement no process sees, a yield found with nobody to yield to
 * twice in a row makes the caller rest, and the kernel pulls a queued
 * caller onto its idle processor (the crowd rest); there no turn comes
 * after a region's last piece (cpuexec__permit_crowd_turns;
 * doc/performance.md section 6 says why not among one process's
 * callers). */
static int run_crowded(struct cpuexec_executor *exec, const cpuexec__region *r, bool among_processes) {
  int64_t total = r->total, step = cpuexec__permit_crowd_step(total, r->grain);
  cpuexec__participant p;
  cpuexec__participant_enter(&p, exec, 0, 1);
  int rc = 0;
  /* Only callers of one process look at where the crowd runs. */
  crowd_state crowd = {.place = {.cpu = -1}, .may_move = !exec->permit.placed_caller};
  if (!among_processes) cpuexec__crowd_places_enter(&crowd.place, cpuexec__os_current_cpu());
  uint64_t slice_start = cpuexec__permit_now_ns();
  for (int64_t begin = 0, end; begin < total && rc == 0; begin = end) {
    end = total - begin > step ? begin + step : total;
    rc = cpuexec__participant_invoke(r->fn, r->ctx, begin, end);
    uint64_t now = cpuexec__permit_now_ns();
    if (cpuexec__permit_crowd_turns(now, slice_start, end == total, among_processes))
      slice_start = crowd_turn(now, &crowd, among_processes);
  }
  if (!among_processes) cpuexec__crowd_places_leave(&crowd.place);
  cpuexec__participant_leave(&p);
  return rc;
}

/* How a caller runs a region alone: at once, or in crowd pieces, among
 * one process's callers or several processes' (run_crowded). */
enum alone_way { ALONE_AT_ONCE, ALONE_IN_PIECES, ALONE_AMONG_PROCESSES };

/* A region that runs on its caller alone after all, woken nobody: not a
 * dispatch (counters.h); one participant ran. */
static int run_caller_only(struct cpuexec_executor *exec, const cpuexec__region *r, enum alone_way way,
                           uint32_t *ran) {
  *ran = 1;
  return way == ALONE_AT_ONCE ? run_inline(exec, r) : run_crowded(exec, r, way == ALONE_AMONG_PROCESSES);
}

/* The callers running regions on exec, lane 0's included. */
static inline uint32_t callers_now(struct cpuexec_executor *exec) {
  return 1 + cpuexec__permit_side_callers(&exec->permit);
}

/* A region the occupancy cap (permit.h) leaves to its caller alone, in
 * crowd pieces when more callers run than the executor has threads, or
 * than the node's budget has slots (node, NULL where the node was not
 * asked), resting where callers of other processes crowd the node. */
static int run_alone(struct cpuexec_executor *exec, const cpuexec__region *r, const cpuexec__node_region *node,
                     uint32_t *ran) {
  CPUEXEC__COUNT(cpuexec__counters_of(exec), occupied_inline, 1);
  enum alone_way way = ALONE_AT_ONCE;
  if (node != NULL && node->processes_over)
    way = ALONE_AMONG_PROCESSES;
  else if ((node != NULL && node->crowded) || cpuexec__permit_caller_crowded(&exec->permit, callers_now(exec)))
    way = ALONE_IN_PIECES;
  return run_caller_only(exec, r, way, ran);
}

/* A caller beside lane 0's: in a free lane, alone when the callers running
 * already occupy the executor's threads, or past the bound the serial loop
 * (a strict region waits for lane 0 instead). Take-over callers count in
 * the permit's `side` meanwhile, whichever way they run. */
static int run_beside(struct cpuexec_executor *exec, const cpuexec__region *r, uint32_t *ran) {
  int rc;
  if (r->strict) {
    if (!cpuexec__lane_run(exec, r, &rc, ran)) {
      pthread_mutex_lock(&exec->dispatch_lock);
      rc = run_lane0(exec, r, ran);
    }
    return rc;
  }
  cpuexec__permit_caller_arrives(&exec->permit);
  cpuexec__region admitted = *r;
  admitted.participants = cpuexec__permit_region_admits(&exec->permit, r->participants);
  if (admitted.participants == 1) {
    rc = run_alone(exec, r, NULL, ran);
  } else if (!cpuexec__lane_run(exec, &admitted, &rc, ran)) {
    CPUEXEC__COUNT(cpuexec__counters_of(exec), bound_inline, 1);
    rc = run_caller_only(exec, r, ALONE_AT_ONCE, ran);
  }
  cpuexec__permit_caller_leaves(&exec->permit);
  return rc;
}

/* A region of our pool: lane 0 when its lock is free, the path of a lone
 * caller; beside it when not. The policy's participation rule makes every
 * region strict; a strict region marks strict_running for its whole call
 * (unless the policy makes every region strict: region_lanes.h reads the
 * policy then), so no worker stands aside from its team. *ran: the
 * participants that ran. */
static int run_native(struct cpuexec_executor *exec, cpuexec__region *r, uint32_t flags, uint32_t *ran) {
  bool every_call = (flags & CPUEXEC_FOR_EVERY_PARTICIPANT) && !exec->resolved->every_participant;
  r->strict = every_call || exec->resolved->every_participant;
  cpuexec__fpenv env;
  if ((flags & CPUEXEC_FOR_INHERIT_FP_ENV) || exec->resolved->inherit_fpenv) {
    cpuexec__fpenv_capture(&env);
    r->env = &env;
  }
  if (r->strict) pthread_mutex_lock(&exec->strict_lock);
  /* Before any epoch or admit word opens (release): a worker that acquires one sees the mark. */
  if (every_call) atomic_store_explicit(&exec->permit.strict_running, 1, memory_order_relaxed);
  /* The node's budget first (the other processes' callers and workers):
   * it caps every lane's region alike. */
  cpuexec__node_region node_region;
  uint32_t wanted = r->participants;
  r->participants = cpuexec__permit_node_admits(&exec->permit, r->strict, r->participants, &node_region);
  if (r->participants < wanted) CPUEXEC__COUNT(cpuexec__counters_of(exec), node_slot_waits, 1);
  int rc;
  if (r->participants == 1) {
    rc = run_alone(exec, r, &node_region, ran);
  } else if (pthread_mutex_trylock(&exec->dispatch_lock) == 0) {
    cpuexec__region admitted = *r;
    if (!r->strict) admitted.participants = cpuexec__permit_region_admits(&exec->permit, r->participants);
    if (admitted.participants > 1) {
      rc = run_lane0(exec, &admitted, ran);
    } else {
      rc = run_alone(exec, r, NULL, ran);
      pthread_mutex_unlock(&exec->dispatch_lock);
    }
  } else {
    rc = run_beside(exec, r, ran);
  }
  cpuexec__node_region_ends(&node_region);
  if (every_call) atomic_store_explicit(&exec->permit.strict_running, 0, memory_order_relaxed);
  if (r->strict) pthread_mutex_unlock(&exec->strict_lock);
  return rc;
}

/* The participants a call on exec admits: the executor's threads, at most
 * max_participants (0: no limit) and at most one per chunk. */
static uint32_t admitted_for(const struct cpuexec_executor *exec, const cpuexec__region *r, int32_t max_participants) {
  int64_t chunks = cpuexec__region_chunks(r);
  uint32_t participants = exec->threads;
  if (max_participants != 0 && (uint32_t)max_participants < participants) participants = (uint32_t)max_participants;
  return chunks < (int64_t)participants ? (uint32_t)chunks : participants;
}

/* The call on exec once checked: inline, on a foreign pool or on ours; the
 * observers hear of it before it runs (ev is theirs, NULL when there are
 * none; executed_participants is set here). Returns the call's result. */
static int dispatch(struct cpuexec_executor *exec, cpuexec__region *r, int32_t max_participants, uint32_t flags,
                    uint32_t live, cpuexec_dispatch_event *ev) {
  /* The counters are read where a count is made: a region of our pool counts
   * its dispatch where it opens (cpuexec__lane0_run, cpuexec__lane_run), so
   * its path reads the pointer once, there. */
  note_executed(ev, 1);
  if (cpuexec__participant_nested()) {
    CPUEXEC__COUNT(cpuexec__counters_of(exec), nested_inline, 1);
    announce(live, ev, 1, true);
    return cpuexec__callback_rc(run_inline(exec, r));
  }
  uint32_t participants = admitted_for(exec, r, max_participants);
  if (exec->pin_caller) {
    int rc = pin_caller(exec);
    if (rc != 0) return rc;
  }
  if (participants == 1) {
    CPUEXEC__COUNT(cpuexec__counters_of(exec), limited_inline, 1);
    announce(live, ev, 1, true);
    return cpuexec__callback_rc(run_inline(exec, r));
  }
  announce(live, ev, participants, false);
  note_executed(ev, participants);
  if (exec->foreign) {
    CPUEXEC__COUNT(cpuexec__counters_of(exec), dispatches, 1);
    r->participants = participants;
    return run_foreign(exec, r, flags);
  }
  uint32_t ran = participants;
  r->participants = participants;
  int rc = run_native(exec, r, flags, &ran);
  note_executed(ev, ran);
  return cpuexec__callback_rc(rc);
}

CPUEXEC_EXPORT int cpuexec_parallel_for_flags(cpuexec_executor *exec, int64_t total, int64_t grain, void *ctx,
                                              cpuexec_range_fn fn, int32_t max_participants, uint32_t flags) {
  int bad = check_call(exec, grain, fn, max_participants, flags);
  if (bad != 0) return bad;
  if (total <= 0) return 0;
  cpuexec__region r = {.fn = fn, .ctx = ctx, .total = total, .grain = grain, .participants = 1};
  if (!exec) return cpuexec__callback_rc(run_inline(NULL, &r));
  uint32_t live = cpuexec__observers_now();
  if (__builtin_expect(live == 0, 1)) return dispatch(exec, &r, max_participants, flags, 0, NULL);
  cpuexec_dispatch_event ev = {.executor_id = exec->id, .effective_threads = (int32_t)exec->threads,
                               .requested_participants = max_participants, .total = total, .grain = grain};
  int rc = dispatch(exec, &r, max_participants, flags, live, &ev);
  /* Announced (admitted set) and observed to the end: the completion. */
  if (cpuexec__observers_want_completion(live) && ev.admitted_participants != 0) {
    ev.completed = true;
    cpuexec__observers_notify(live, &ev);
  }
  return rc;
}
