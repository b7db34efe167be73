/* The inline guard and the scope hooks: per-thread OpenMP settings driven in
 * every runtime the process has loaded (src/openmp/openmp_runtimes.c finds them).
 *
 * Why both settings: on a thread outside any OpenMP region,
 * omp_set_num_threads(1) alone does not stop a num_threads(4) clause, and
 * omp_set_max_active_levels(0) alone serializes every region but leaves
 * omp_get_max_threads() at its old value, so OpenBLAS's OpenMP build splits
 * its work for threads that never come and waits for them forever. With both,
 * every region is one thread and no OpenMP worker starts. Both settings are
 * per thread in libomp and in libgomp >= 11 (checked by the tests), so the
 * guard on one participant never changes another thread. */
#include "openmp_guard.h"

#include <cpuexec/executor.h>
#include <cpuexec/hooks.h>
#include <cpuexec/resolve.h>

#include "openmp_internal.h"
#include "executor/participant.h"
#include "executor/thread_state.h"
#include "guards/guards_internal.h"
#include "core/test_hooks.h"

/* Per thread, written only by its thread.
 * countdown: region begins left before this thread checks the loader again.
 * Starts at 0, so a thread's first region checks; then 32..63, staggered by
 * a process-wide refresh count so the participants of one region rarely
 * check together. runtimes: what the innermost guard_begin saved, which is what
 * guard_callback drives. initial-exec, like cpuexec__tls (src/executor/thread_state.h):
 * the hook runs on every participant of every region, and the default model
 * makes each access a __tls_get_addr call (8 bytes more of static TLS). */
static __thread struct {
  uint32_t countdown;
  uint32_t runtimes;
} guard_tls __attribute__((tls_model("initial-exec")));

#define RUNTIMES_FOR_EACH(mask, r) \
  for (int r = 0; r < CPUEXEC__OMP_RUNTIMES; r++) \
    if ((mask) & (1U << r))

static _Atomic uint32_t refreshes;

/* The OpenMP runtimes and the other guarded libraries (src/guards/) are
 * looked for together: one countdown, two loader-count checks. */
static void refresh_detection(void) {
  guard_tls.countdown = 32 + (atomic_fetch_add_explicit(&refreshes, 7, memory_order_relaxed) & 31);
  cpuexec__openmp_detect(false);
  cpuexec__guards_detect(false);
}

void cpuexec__openmp_guard_begin(cpuexec__openmp_saved *saved) {
  if (__builtin_expect(guard_tls.countdown-- == 0 || cpuexec__openmp_detect_due(), 0))
    refresh_detection();
  uint32_t mask = atomic_load_explicit(&cpuexec__omp_present, memory_order_acquire);
  saved->runtimes = mask;
  saved->outer_runtimes = guard_tls.runtimes;
  guard_tls.runtimes = mask;
  if (__builtin_expect(mask == 0, 1))
    return;
  RUNTIMES_FOR_EACH(mask, r) {
    const cpuexec__omp_runtime *rt = &cpuexec__omp_runtimes[r];
    saved->num_threads[r] = rt->get_max_threads();
    saved->max_active_levels[r] = rt->get_max_active_levels();
  }
}

void cpuexec__openmp_guard_callback(void) {
  uint32_t mask = guard_tls.runtimes;
  if (__builtin_expect(mask == 0, 1))
    return;
  RUNTIMES_FOR_EACH(mask, r) {
    const cpuexec__omp_runtime *rt = &cpuexec__omp_runtimes[r];
    rt->set_num_threads(1);
    rt->set_max_active_levels(0);
  }
}

void cpuexec__openmp_guard_end(const cpuexec__openmp_saved *saved) {
  uint32_t mask = saved->runtimes;
  guard_tls.runtimes = saved->outer_runtimes;
  if (__builtin_expect(mask == 0, 1))
    return;
  RUNTIMES_FOR_EACH(mask, r) {
    const cpuexec__omp_runtime *rt = &cpuexec__omp_runtimes[r];
    rt->set_max_active_levels(saved->max_active_levels[r]);
    rt->set_num_threads(saved->num_threads[r]);
  }
}

/* Scope slots: [0] libomp threads, [1] libgomp threads, [2] libomp block
 * time, [3] bit mask of the slots saved (SCOPE_SAVED_*). */
enum { SCOPE_SAVED_THREADS_0 = 1, SCOPE_SAVED_THREADS_1 = 2, SCOPE_SAVED_BLOCKTIME = 4 };

int cpuexec__openmp_blocktime_for(const cpuexec_resolved_spin *spin) {
  switch (spin->policy) {
  case CPUEXEC_SPIN_ADAPTIVE:
  case CPUEXEC_SPIN_FIXED_DURATION:
    /* Rounded down: libomp's idle workers never spin longer than ours. */
    return (int)(spin->spin_ns / 1000000u > 1000000u ? 1000000u : spin->spin_ns / 1000000u);
  case CPUEXEC_SPIN_FIXED_ITERATIONS: /* no time to translate: park at once */
  case CPUEXEC_SPIN_PARK_IMMEDIATELY:
  default:
    return 0;
  }
}

void cpuexec__openmp_scope_apply(uint32_t threads, int blocktime_ms, int32_t saved[4]) {
  saved[3] = 0;
  if (cpuexec__tls.callback_depth > 0)
    return; /* inside a callback the guard owns the settings */
  uint32_t mask = cpuexec__openmp_detect(false);
  if (mask == 0)
    return;
  RUNTIMES_FOR_EACH(mask, r) {
    const cpuexec__omp_runtime *rt = &cpuexec__omp_runtimes[r];
    if (threads > 0) {
      saved[r] = rt->get_max_threads();
      rt->set_num_threads((int)threads);
      saved[3] |= r == 0 ? SCOPE_SAVED_THREADS_0 : SCOPE_SAVED_THREADS_1;
    }
    if (blocktime_ms >= 0 && rt->set_blocktime != NULL) {
      saved[2] = rt->get_blocktime();
      rt->set_blocktime(blocktime_ms);
      saved[3] |= SCOPE_SAVED_BLOCKTIME;
    }
  }
}

void cpuexec__openmp_scope_enter(cpuexec_executor *exec, int32_t saved[4]) {
  saved[3] = 0;
  if (exec == NULL)
    return;
  /* A foreign executor (no resolved policy) says nothing about spinning:
   * libomp's block time is left alone. */
  const cpuexec_resolved *policy = cpuexec_executor_resolved(exec);
  cpuexec_resolved_spin spin = cpuexec_resolved_spin_behaviour(policy);
  cpuexec__openmp_scope_apply(cpuexec_executor_effective_threads(exec),
                              policy != NULL ? cpuexec__openmp_blocktime_for(&spin) : -1, saved);
}

void cpuexec__openmp_scope_leave(const int32_t saved[4]) {
  uint32_t what = (uint32_t)saved[3];
  if (what == 0)
    return;
  const cpuexec__omp_runtime *omp = &cpuexec__omp_runtimes[CPUEXEC__OMP_LIBOMP];
  const cpuexec__omp_runtime *gomp = &cpuexec__omp_runtimes[CPUEXEC__OMP_LIBGOMP];
  if (what & SCOPE_SAVED_THREADS_0)
    omp->set_num_threads(saved[0]);
  if (what & SCOPE_SAVED_THREADS_1)
    gomp->set_num_threads(saved[1]);
  if (what & SCOPE_SAVED_BLOCKTIME)
    omp->set_blocktime(saved[2]);
}

/* The guard is one runtime hook of the region primitive (src/executor/participant.h):
 * the executor and scopes know nothing about OpenMP. Registered when the
 * library is loaded, before any region can start. The same hook runs the
 * guards of OpenBLAS, BLIS and oneTBB (src/guards/guards_internal.h), after
 * the OpenMP part on begin and before it on end, so a BLAS build that
 * threads with OpenMP sees one OpenMP thread whenever it is held. */
_Static_assert(sizeof(cpuexec__openmp_saved) <= CPUEXEC_HOOK_STATE_MAX, "the guard's save area fits a hook's state");
_Static_assert(4 * sizeof(int32_t) <= CPUEXEC_HOOK_STATE_MAX, "the scope's save area fits a hook's state");

#if CPUEXEC_TEST_HOOKS
/* Set: the hook runs the OpenMP part alone, as a build without the other
 * guards would (bench/questions/guards' "no guards" baseline). */
_Atomic int cpuexec__test_guards_off;
#endif

static void hook_begin(void *user, void *state) {
  (void)user;
  cpuexec__openmp_guard_begin(state);
  if (!CPUEXEC__TEST_HOOK(cpuexec__test_guards_off, 0)) cpuexec__guards_begin();
}

static void hook_before_callback(void *user) {
  (void)user;
  cpuexec__openmp_guard_callback();
  if (!CPUEXEC__TEST_HOOK(cpuexec__test_guards_off, 0)) cpuexec__guards_callback();
}

static void hook_end(void *user, void *state) {
  (void)user;
  if (!CPUEXEC__TEST_HOOK(cpuexec__test_guards_off, 0)) cpuexec__guards_end();
  cpuexec__openmp_guard_end(state);
}

static void hook_scope_enter(void *user, cpuexec_executor *exec, void *state) {
  (void)user;
  cpuexec__openmp_scope_enter(exec, state);
  cpuexec__guards_detect(false);
}

static void hook_scope_leave(void *user, void *state) {
  (void)user;
  cpuexec__openmp_scope_leave(state);
}

__attribute__((constructor)) static void register_guard_hook(void) {
  cpuexec_hook hook = {
      .name = "openmp-inline-guard",
      .participant_begin = hook_begin,
      .before_callback = hook_before_callback,
      .participant_end = hook_end,
      .scope_enter = hook_scope_enter,
      .scope_leave = hook_scope_leave,
  };
  /* The first registration of the process: it cannot run out of room. */
  (void)cpuexec__hook_add(&hook);
}
