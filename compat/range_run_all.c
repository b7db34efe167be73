/* cpuexec_range_executor_run_all (include/cpuexec/compat/range_executor.h):
 * the range-executor call that never loses an index, for hooks that return
 * void. The executor is handed pieces, at most PIECES of them, and every
 * piece a callback receives is claimed in a bitmap on this call's stack
 * before it runs; after the executor returned, whatever was never claimed
 * runs on the caller. A piece claimed twice runs once. */
#include <cpuexec/compat/range_executor.h>

#include <inttypes.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "adapter_private.h"

#define PIECES 4096
#define WORD_BITS 64
#define WORDS (PIECES / WORD_BITS)

typedef struct run_all_call {
  int64_t count;
  int64_t pieces;        /* what the executor is handed: min(count, PIECES) */
  int64_t piece_size;    /* count / pieces; the first `longer` pieces hold one index more */
  int64_t longer;
  void *ctx;
  cpuexec_range_fn callback;
  _Atomic uint64_t claimed[WORDS];
  atomic_int in_flight;  /* callbacks running now */
  atomic_int failed;     /* the first non-zero value a callback returned (0: none) */
  atomic_llong twice;    /* the first piece passed again, plus one (0: none) */
} run_all_call;

/* The first index of piece p (p == pieces: count). */
static int64_t piece_start(const run_all_call *call, int64_t p) {
  return p * call->piece_size + (p < call->longer ? p : call->longer);
}

/* Claims the pieces [first, last) among word w's bits: *mask gets the
 * word's bits in that range, and the result the ones this call claimed
 * (the others were claimed before). */
static uint64_t claim_word(run_all_call *call, int64_t w, int64_t first, int64_t last, uint64_t *mask) {
  int64_t lo = first > w * WORD_BITS ? first - w * WORD_BITS : 0;
  int64_t hi = last < (w + 1) * WORD_BITS ? last - w * WORD_BITS : WORD_BITS;
  *mask = (hi - lo == WORD_BITS ? ~UINT64_C(0) : ((UINT64_C(1) << (hi - lo)) - 1)) << lo;
  uint64_t before = atomic_fetch_or_explicit(&call->claimed[w], *mask, memory_order_relaxed);
  return *mask & ~before;
}

/* Runs the pieces of [first, last) nobody claimed yet, adjacent ones merged
 * into one call of the callback; with `report_twice`, a piece claimed
 * before is recorded as passed twice. Returns the first non-zero callback
 * result. *ran adds the indices run. */
static int run_unclaimed(run_all_call *call, int64_t first, int64_t last, bool report_twice, int64_t *ran,
                         int (*invoke)(void *, cpuexec_range_fn, int64_t, int64_t)) {
  int64_t run_from = -1;
  for (int64_t w = first / WORD_BITS; w * WORD_BITS < last; w++) {
    uint64_t mask;
    uint64_t mine = claim_word(call, w, first, last, &mask);
    int64_t lo = first > w * WORD_BITS ? first : w * WORD_BITS;
    int64_t hi = last < (w + 1) * WORD_BITS ? last : (w + 1) * WORD_BITS;
    if (mine == mask) { /* the usual case: every piece here is new */
      if (run_from < 0) run_from = lo;
      continue;
    }
    for (int64_t p = lo; p < hi; p++) {
      bool claimed_now = (mine >> (p - w * WORD_BITS)) & 1u;
      if (claimed_now && run_from < 0) run_from = p;
      if (claimed_now) continue;
      if (report_twice) {
        long long none = 0;
        atomic_compare_exchange_strong_explicit(&call->twice, &none, (long long)p + 1, memory_order_relaxed,
                                                memory_order_relaxed);
      }
      if (run_from >= 0) {
        int64_t b = piece_start(call, run_from), e = piece_start(call, p);
        run_from = -1;
        *ran += e - b;
        int rc = invoke(call->ctx, call->callback, b, e);
        if (rc != 0) return rc;
      }
    }
  }
  if (run_from < 0) return 0;
  int64_t b = piece_start(call, run_from), e = piece_start(call, last);
  *ran += e - b;
  return invoke(call->ctx, call->callback, b, e);
}

static int call_as_is(void *ctx, cpuexec_range_fn fn, int64_t begin, int64_t end) { return fn(ctx, begin, end); }

/* The callback the executor runs, through the core (which checked the
 * bounds and entered a region): [first, last) are pieces. */
static int run_pieces(void *arg, int64_t first, int64_t last) {
  run_all_call *call = arg;
  atomic_fetch_add_explicit(&call->in_flight, 1, memory_order_acq_rel);
  int64_t ran = 0;
  int rc = run_unclaimed(call, first, last, true, &ran, call_as_is);
  int none = 0;
  if (rc != 0)
    atomic_compare_exchange_strong_explicit(&call->failed, &none, rc, memory_order_relaxed, memory_order_relaxed);
  atomic_fetch_sub_explicit(&call->in_flight, 1, memory_order_acq_rel);
  return rc;
}

/* The first piece nobody claimed (pieces: none). */
static int64_t first_unclaimed(run_all_call *call) {
  for (int64_t w = 0; w * WORD_BITS < call->pieces; w++) {
    uint64_t free_bits = ~atomic_load_explicit(&call->claimed[w], memory_order_relaxed);
    if (free_bits != 0) {
      int64_t p = w * WORD_BITS + __builtin_ctzll(free_bits);
      return p < call->pieces ? p : call->pieces;
    }
  }
  return call->pieces;
}

CPUEXEC_EXPORT int cpuexec_range_executor_run_all(const cpuexec_range_executor *executor, int64_t count, void *ctx,
                                                  cpuexec_range_fn callback, cpuexec_run_all_report *report) {
  if (report != NULL) memset(report, 0, sizeof *report);
  if (callback == NULL || count < 0 || count <= 1 || executor == NULL || executor->run == NULL ||
      cpuexec__compat_nested())
    return cpuexec_range_executor_run(executor, count, ctx, callback); /* its checks, or one range on the caller */

  run_all_call call = {.count = count, .ctx = ctx, .callback = callback};
  call.pieces = count < PIECES ? count : PIECES;
  call.piece_size = count / call.pieces;
  call.longer = count % call.pieces;
  for (int w = 0; w < WORDS; w++) atomic_init(&call.claimed[w], 0);
  atomic_init(&call.in_flight, 0);
  atomic_init(&call.failed, 0);
  atomic_init(&call.twice, 0);

  int rc = cpuexec_range_executor_run(executor, call.pieces, &call, run_pieces);
  /* A conforming executor has waited for its callbacks; one that did not
   * is waited for here, so nothing touches ctx after the call returns. */
  bool early = atomic_load_explicit(&call.in_flight, memory_order_acquire) != 0;
  while (atomic_load_explicit(&call.in_flight, memory_order_acquire) != 0) sched_yield();
  int value = atomic_load_explicit(&call.failed, memory_order_relaxed);
  if (value != 0) { /* the callback's failure stops the call; an error of the executor beside it is reported */
    if (rc != CPUEXEC_ECALLBACK && report != NULL) report->error = rc;
    return rc == CPUEXEC_ECALLBACK ? rc : cpuexec__callback_failed(value);
  }

  int error = rc;
  if (error > 0 || error == CPUEXEC_ECALLBACK) /* no callback failed: the executor's own answer, made an error */
    error = cpuexec__fail(CPUEXEC_ESTATE, "range executor: returned %d though no callback failed", rc);
  long long twice = atomic_load_explicit(&call.twice, memory_order_relaxed);
  int64_t missing = first_unclaimed(&call);
  if (error == 0 && early)
    error = cpuexec__fail(CPUEXEC_ESTATE, "range executor: returned while callbacks were still running; it must wait "
                                          "for every callback it started");
  if (error == 0 && twice != 0)
    error = cpuexec__fail(CPUEXEC_ERANGE, "range executor: passed index %" PRId64 " twice; it ran once",
                          piece_start(&call, twice - 1));
  if (error == 0 && missing < call.pieces)
    error = cpuexec__fail(CPUEXEC_ESTATE,
                          "range executor: returned 0 but never ran index %" PRId64 " of [0, %" PRId64
                          "); it ran on the caller",
                          piece_start(&call, missing), count);
  if (report != NULL) report->error = error;
  if (missing == call.pieces) return 0;
  int64_t ran = 0;
  rc = run_unclaimed(&call, missing, call.pieces, false, &ran, cpuexec__compat_run_serial);
  if (report != NULL) report->caller_indices = ran;
  return cpuexec__callback_rc(rc);
}
