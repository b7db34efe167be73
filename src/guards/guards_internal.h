/* Internal: the built-in guards for threaded libraries that are not OpenMP
 * (OpenBLAS's pthreads build, BLIS, oneTBB), found at run time like the
 * OpenMP runtimes, and the MKL that is found but not governed.
 *
 *   guard_libraries.c   finds them among the loaded modules (through the
 *                       dynamic loader's interface, src/os/loader.h),
 *                       decides from the version and the build what can be
 *                       governed and how, and publishes one slot each;
 *   guard_hold.c        the process-wide rule (a "hold") and each library's
 *                       save / one-thread / restore steps;
 *   guard_participant.c what one participant does: begin, before each
 *                       callback, end.
 * The OpenMP module's one runtime hook (src/openmp/openmp_guard.c) calls the
 * participant functions, so the guards cost no hook slot and no indirect
 * call of their own; its status list (src/openmp/runtime_list.c) reads the
 * slots.
 *
 * How each library is governed (cpuexec__guard_mode):
 *   - PER_THREAD: the library's setting is per thread (BLIS >= 1.0 built
 *     with thread-local storage): each participant saves it, sets one
 *     thread, and restores it when it leaves, as the OpenMP guard does; or
 *     (oneTBB, with the cpuexec-tbb module) each participant's share, all
 *     its outermost callbacks, and each task runs inside a task_arena of
 *     one thread of its own thread (src/guards/tbb_shim.cc, entered once
 *     per participant: cpuexec__participant_share);
 *   - PROCESS_WIDE: one setting for the process (OpenBLAS's thread count,
 *     BLIS 0.x's global runtime, oneTBB's max_allowed_parallelism when the
 *     module cannot be loaded). It is
 *     "held" at one thread while at least one participant of any region is
 *     inside: the first to enter saves it and sets one thread, the last to
 *     leave puts the saved value back. A top-level call made meanwhile on
 *     another thread runs on one thread too; it is never serialized longer
 *     than some thread is inside a region (guard_hold.c);
 *   - THROUGH_OPENMP: the build threads with OpenMP (OpenBLAS's and BLIS's
 *     OpenMP builds): the OpenMP guard already keeps it inline, per thread,
 *     so the process-wide setting is left alone;
 *   - SERIAL: a build that never starts a thread;
 *   - NONE: found, not governed; the slot's reason says why (MKL, a version
 *     the guard does not know, a library without the calls it needs).
 *
 * Slots are written once (under the detection lock) and published by a
 * release store of cpuexec__guard_count; readers load the count (or one of
 * the masks, stored with release after the slot) with acquire. A library
 * that is governed is pinned (cpuexec__os_module_loaded), so its function
 * pointers stay valid for the life of the process. */
#ifndef CPUEXEC_SRC_GUARDS_INTERNAL_H
#define CPUEXEC_SRC_GUARDS_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many libraries are recorded (several copies of OpenBLAS in
 * one process are several slots); more are ignored, and the status says so. */
#define CPUEXEC__GUARD_SLOTS 16

typedef enum cpuexec__guard_family {
  CPUEXEC__GUARD_OPENBLAS = 0,
  CPUEXEC__GUARD_BLIS,
  CPUEXEC__GUARD_TBB,
  CPUEXEC__GUARD_MKL
} cpuexec__guard_family;

typedef enum cpuexec__guard_mode {
  CPUEXEC__GUARD_PER_THREAD = 0,
  CPUEXEC__GUARD_PROCESS_WIDE,
  CPUEXEC__GUARD_THROUGH_OPENMP,
  CPUEXEC__GUARD_SERIAL,
  CPUEXEC__GUARD_NONE
} cpuexec__guard_mode;

/* The two holds: one for the BLAS libraries, one for oneTBB (which a
 * participant of a foreign executor does not join: a foreign pool may be a
 * oneTBB arena, whose own workers a one-thread limit would take away). */
enum { CPUEXEC__HOLD_BLAS = 0, CPUEXEC__HOLD_TBB = 1, CPUEXEC__HOLDS = 2 };

/* oneTBB's d1::global_control, as libtbb.so.12 reads it (the layout is part
 * of oneTBB's binary interface; tests/test_guard_tbb.c checks it against the
 * installed headers). */
typedef struct cpuexec__tbb_global_control {
  size_t value;
  intptr_t reserved;
  int param; /* 0: max_allowed_parallelism */
} cpuexec__tbb_global_control;

typedef struct cpuexec__guard_lib {
  cpuexec__guard_family family;
  cpuexec__guard_mode mode;
  int hold;            /* CPUEXEC__HOLD_* for PROCESS_WIDE slots */
  const void *object;  /* the defining module's base address: one slot per module */
  char version[32];    /* as the library reports it, or "" */
  char threading[16];  /* "pthreads", "openmp", "serial", "tbb", "" */
  char path[256];
  char reason[224];    /* what the guard does with it, or why nothing */
  union {
    struct {
      void (*set_num_threads)(int);
      int (*get_num_threads)(void);
      /* blas_cpu_number, the count every call reads, when the library
       * exports it: set directly (openblas_set_num_threads also re-pins the
       * calling thread in builds with affinity). */
      int *cpu_number;
      int saved; /* the hold's owner (busy) only */
    } openblas;
    struct {
      void (*set_num_threads)(int64_t);
      void (*set_ways)(int64_t, int64_t, int64_t, int64_t, int64_t);
      int64_t (*get_num_threads)(void);
      int64_t (*get_ways[5])(void); /* jc, pc, ic, jr, ir */
      int64_t saved[6];             /* num_threads, then the ways; under the hold's lock */
    } blis;
    struct {
      void (*create)(cpuexec__tbb_global_control *);
      void (*destroy)(cpuexec__tbb_global_control *);
      size_t (*active_value)(int);
      cpuexec__tbb_global_control control; /* alive while held */
      /* PER_THREAD: the cpuexec-tbb module's call in a one-thread arena. */
      int (*call)(int (*fn)(void *, int64_t, int64_t), void *ctx, int64_t begin, int64_t end);
    } tbb;
  } fn;
} cpuexec__guard_lib;

extern cpuexec__guard_lib cpuexec__guard_libs[CPUEXEC__GUARD_SLOTS];
extern _Atomic uint32_t cpuexec__guard_count;
/* Bit i: slot i is governed per thread / held by hold h. Stored with
 * release after slot i is complete. */
extern _Atomic uint32_t cpuexec__guard_thread_mask;
extern _Atomic uint32_t cpuexec__guard_hold_mask[CPUEXEC__HOLDS];
/* Loaded libraries that did not fit the slots (named in the status). */
extern _Atomic uint32_t cpuexec__guard_overflow;

/* Rescans the loaded objects when the loader's load/unload counts changed
 * since the last scan (or always, with force). Thread-safe and never
 * blocking: a thread that finds another scanning returns at once. */
void cpuexec__guards_detect(bool force);

/* ---- holds (guard_hold.c) ------------------------------------------------ */
/* A participant enters hold h (with the hold's mask as it sees it) and
 * leaves it later; the first to enter applies one thread to every slot of
 * the mask, the last to leave restores them. */
void cpuexec__hold_enter(int hold, uint32_t mask);
void cpuexec__hold_leave(int hold);
/* Before a callback: a process-wide count a callback (or another thread)
 * changed is set back to one thread, and the changed value becomes the one
 * restored (OpenBLAS only; BLIS's ways stay at one, oneTBB's limit cannot be
 * raised by a later global_control). */
void cpuexec__hold_recheck(uint32_t mask);
/* Threads inside hold h now (tests). */
uint32_t cpuexec__hold_inside(int hold);

/* Per-thread libraries (PER_THREAD slots). */
void cpuexec__guard_thread_save(const cpuexec__guard_lib *lib, int64_t saved[6]);
void cpuexec__guard_thread_one(const cpuexec__guard_lib *lib);
void cpuexec__guard_thread_restore(const cpuexec__guard_lib *lib, const int64_t saved[6]);

/* ---- participants (guard_participant.c) ---------------------------------- */
/* The calling protocol of src/openmp/openmp_guard.h, for these libraries:
 * begin when a thread joins its outermost region (with the thread state
 * describing it: a participant of a foreign executor does not join the
 * oneTBB hold), callback before each callback, end when it leaves. Cheap
 * when nothing is loaded: one load of cpuexec__guard_active in begin, one
 * thread-local test in the others. */
extern _Atomic uint32_t cpuexec__guard_active; /* thread mask | hold masks */
void cpuexec__guards_begin_slow(void);
void cpuexec__guards_callback_slow(void);
void cpuexec__guards_end_slow(void);

/* Per-thread: whether this thread's begin did anything (0: nothing to undo). */
extern __thread uint32_t cpuexec__guards_engaged __attribute__((tls_model("initial-exec")));

static inline void cpuexec__guards_begin(void) {
  if (__builtin_expect(atomic_load_explicit(&cpuexec__guard_active, memory_order_acquire) == 0, 1)) {
    cpuexec__guards_engaged = 0;
    return;
  }
  cpuexec__guards_begin_slow();
}

static inline void cpuexec__guards_callback(void) {
  if (__builtin_expect(cpuexec__guards_engaged != 0, 0))
    cpuexec__guards_callback_slow();
}

static inline void cpuexec__guards_end(void) {
  if (__builtin_expect(cpuexec__guards_engaged != 0, 0))
    cpuexec__guards_end_slow();
}

#endif
