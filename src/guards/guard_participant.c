/* One participant's part of the guards (src/guards/guards_internal.h):
 * join the holds of the process-wide libraries, save and set the per-thread
 * ones, check before each callback, undo it all when the participant
 * leaves. Only the thread's outermost region runs these (the region
 * primitive runs hooks at callback depth 0 only), so one thread has at most
 * one begin outstanding and its state fits thread-local storage. */
#include "guards_internal.h"

#include <cpuexec/executor.h>

#include "executor/participant.h"
#include "executor/thread_state.h"

/* Bits of cpuexec__guards_engaged. */
enum {
  ENGAGED_HOLD_BLAS = 1U << CPUEXEC__HOLD_BLAS,
  ENGAGED_HOLD_TBB = 1U << CPUEXEC__HOLD_TBB,
  ENGAGED_THREAD = 4, /* per-thread settings saved */
  ENGAGED_WRAP = 8,   /* cpuexec__tls_wrap set */
  ENGAGED_FRESH = 16  /* no callback yet: the settings are the ones begin made */
};
_Static_assert(CPUEXEC__HOLDS == 2, "one engaged bit per hold");

__thread uint32_t cpuexec__guards_engaged __attribute__((tls_model("initial-exec")));

/* At most this many per-thread libraries are driven on a thread (BLIS >= 1.0
 * copies); more are reported by the status and left alone. */
#define THREAD_LIBS_MAX 4

/* What begin decided, read on every callback: initial-exec, like
 * cpuexec__guards_engaged (8 bytes more of static TLS). */
static __thread struct {
  uint32_t blas_mask;    /* the BLAS hold's slots at begin, checked before callbacks */
  uint32_t thread_slots; /* per-thread slots saved, at most THREAD_LIBS_MAX */
} guard_state __attribute__((tls_model("initial-exec")));

/* The per-thread libraries' saved settings: the default TLS model (touched
 * only with BLIS >= 1.0 loaded, and kept out of the static TLS block a
 * dlopen()ed libcpuexec shares with everything else). */
static __thread int64_t thread_saved[THREAD_LIBS_MAX][6];

#define SLOTS_FOR_EACH(mask, i) \
  for (uint32_t m_ = (mask), i; m_ != 0 && (i = (uint32_t)__builtin_ctz(m_), 1); m_ &= m_ - 1)

void cpuexec__guards_begin_slow(void) {
  uint32_t engaged = ENGAGED_FRESH;
  uint32_t blas = atomic_load_explicit(&cpuexec__guard_hold_mask[CPUEXEC__HOLD_BLAS], memory_order_acquire);
  uint32_t tbb = atomic_load_explicit(&cpuexec__guard_hold_mask[CPUEXEC__HOLD_TBB], memory_order_acquire);
  uint32_t thread = atomic_load_explicit(&cpuexec__guard_thread_mask, memory_order_acquire);
  if (blas != 0) {
    cpuexec__hold_enter(CPUEXEC__HOLD_BLAS, blas);
    engaged |= ENGAGED_HOLD_BLAS;
  }
  /* A foreign executor (no resolution of libcpuexec's) does not hold oneTBB. */
  cpuexec_executor *exec = cpuexec__tls.installed;
  if (tbb != 0 && !(exec != NULL && cpuexec_executor_resolved(exec) == NULL)) {
    cpuexec__hold_enter(CPUEXEC__HOLD_TBB, tbb);
    engaged |= ENGAGED_HOLD_TBB;
  }
  guard_state.blas_mask = blas;
  guard_state.thread_slots = 0;
  if (thread != 0) {
    int k = 0;
    SLOTS_FOR_EACH(thread, i) {
      const cpuexec__guard_lib *lib = &cpuexec__guard_libs[i];
      if (lib->family == CPUEXEC__GUARD_TBB) {
        /* The first oneTBB's module runs this thread's outermost callbacks. */
        if (cpuexec__tls_wrap == NULL)
          cpuexec__tls_wrap = lib->fn.tbb.call;
        engaged |= ENGAGED_WRAP;
        continue;
      }
      if (k == THREAD_LIBS_MAX)
        continue;
      cpuexec__guard_thread_save(lib, thread_saved[k++]);
      guard_state.thread_slots |= 1U << i;
      engaged |= ENGAGED_THREAD;
    }
  }
  cpuexec__guards_engaged = engaged == ENGAGED_FRESH ? 0 : engaged;
}

void cpuexec__guards_callback_slow(void) {
  uint32_t engaged = cpuexec__guards_engaged;
  if (engaged & ENGAGED_FRESH) {
    /* The first callback: the process-wide counts are the ones just held. */
    cpuexec__guards_engaged = engaged & ~ENGAGED_FRESH;
    engaged &= ~ENGAGED_HOLD_BLAS;
  }
  if (engaged & ENGAGED_HOLD_BLAS)
    cpuexec__hold_recheck(guard_state.blas_mask);
  if (engaged & ENGAGED_THREAD)
    SLOTS_FOR_EACH(guard_state.thread_slots, i) cpuexec__guard_thread_one(&cpuexec__guard_libs[i]);
}

void cpuexec__guards_end_slow(void) {
  uint32_t engaged = cpuexec__guards_engaged;
  cpuexec__guards_engaged = 0;
  if (engaged & ENGAGED_WRAP)
    cpuexec__tls_wrap = NULL;
  if (engaged & ENGAGED_THREAD) {
    int k = 0;
    SLOTS_FOR_EACH(guard_state.thread_slots, i)
    cpuexec__guard_thread_restore(&cpuexec__guard_libs[i], thread_saved[k++]);
  }
  if (engaged & ENGAGED_HOLD_TBB)
    cpuexec__hold_leave(CPUEXEC__HOLD_TBB);
  if (engaged & ENGAGED_HOLD_BLAS)
    cpuexec__hold_leave(CPUEXEC__HOLD_BLAS);
}
