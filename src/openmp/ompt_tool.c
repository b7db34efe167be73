/* The OMPT tool inside libcpuexec, and the chain to the user's own tool.
 *
 * libomp looks for a tool on its first use by calling ompt_start_tool
 * through its PLT: a strong, unversioned, exported definition in a library
 * the program links is found whichever side of -lomp it is on (libomp's own
 * weak definition chains to the next one with dlsym(RTLD_NEXT)). It is not
 * found when the program defines its own ompt_start_tool that does not chain,
 * when OMP_TOOL=disabled, or when libcpuexec is loaded after libomp started
 * (libomp asks once). libgomp has no OMPT at all. cpuexec_openmp_status_get()
 * tells which of these happened (src/openmp/openmp_report.c).
 *
 * Events: thread_begin/end (OpenMP worker threads created), parallel_begin
 * and parallel_end (one region, on its encountering thread), implicit_task
 * (the team size the region really got, seen by its primary thread, which is
 * the encountering thread). Each region is attributed when it begins, from
 * the thread's own libcpuexec state (cpuexec__tls: inside a callback, or a
 * session installed) and handed to the counters when it ends. The tool keeps
 * its per-region state in a thread-local stack, not in the OMPT data slots,
 * so the slots stay free for a chained tool. No callback takes a lock.
 *
 * Chaining: before answering, ompt_start_tool asks for another tool, the way
 * libomp would have without us: the next ompt_start_tool in the symbol
 * search order (dlsym(RTLD_NEXT)), then each library named in
 * OMP_TOOL_LIBRARIES. That tool gets its initialize call from ours, with a
 * lookup function whose ompt_set_callback records its callbacks for the
 * events we also use (ours call theirs after our work, with the same
 * arguments) and registers the others directly with the runtime. */
#include <cpuexec/common.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"
#include "core/text.h"
#include "ompt_abi.h"
#include "openmp_counts.h"
#include "openmp_internal.h"
#include "executor/thread_state.h"
#include "os/loader.h"

#if CPUEXEC_WITH_OMPT
const bool cpuexec__ompt_built = true;
#else
const bool cpuexec__ompt_built = false;
#endif

_Atomic int cpuexec__ompt_tool_state = CPUEXEC__OMPT_NOT_ASKED;
_Atomic int cpuexec__ompt_chained;
/* Written once in ompt_start_tool, before the runtime dispatches anything. */
char cpuexec__ompt_chained_name[256];

#if CPUEXEC_WITH_OMPT

/* Regions this thread began and has not ended, innermost last. Deeper
 * nesting than this is counted as untracked. Written only by its thread.
 * initial-exec, like cpuexec__tls: every region reads it three times, and
 * the default model in a shared library makes each access a call. The block
 * is 16 + 16 * REGION_STACK_MAX + 8 bytes, well inside glibc's static TLS
 * reserve, so the library can still be dlopen()ed. */
#define REGION_STACK_MAX 16
/* A frame is two words, each written and read whole: parallel_end reads
 * what parallel_begin just stored, and a load that spans two smaller
 * stores (bit-fields, or fields the compiler reads together) cannot be
 * forwarded from the store buffer and stalls, which cost more than the
 * rest of the tool's work per region. meta: requested team (bits 0-31),
 * kind (32-39: cpuexec__omp_region_kind, or KIND_LEAGUE, not counted),
 * actual team (40-63: 1 unless implicit_task reported a larger one). */
#define KIND_LEAGUE 0xFFu
#define META(requested, kind, actual) \
  ((uint64_t)(requested) | (uint64_t)(kind) << 32 | (uint64_t)(actual) << 40)
#define META_ACTUAL_MAX 0xFFFFFFu
typedef struct region_frame {
  const void *codeptr;
  uint64_t meta;
} region_frame;
typedef struct tool_thread {
  uint32_t depth;
  uint32_t unused; /* keeps depth a load of its own */
  region_frame stack[REGION_STACK_MAX];
  bool openmp_worker; /* away from depth, for the same reason */
} tool_thread;
static __thread tool_thread tool_tls __attribute__((tls_model("initial-exec")));

/* The chained tool. next_tool is written in ompt_start_tool and the
 * callbacks below during our initialize, both before the runtime dispatches
 * any event; a tool that registers later is still seen (relaxed atomics). */
static cpuexec__ompt_start_tool_result *next_tool;
static cpuexec__ompt_set_callback_fn real_set_callback;
static cpuexec__ompt_lookup_fn real_lookup;
static _Atomic(cpuexec__ompt_thread_begin_fn) next_thread_begin;
static _Atomic(cpuexec__ompt_thread_end_fn) next_thread_end;
static _Atomic(cpuexec__ompt_parallel_begin_fn) next_parallel_begin;
static _Atomic(cpuexec__ompt_parallel_end_fn) next_parallel_end;
static _Atomic(cpuexec__ompt_implicit_task_fn) next_implicit_task;

#define NEXT(name) atomic_load_explicit(&next_##name, memory_order_relaxed)

static void on_thread_begin(int thread_type, cpuexec__ompt_data *thread_data) {
  if (thread_type == CPUEXEC__OMPT_THREAD_WORKER)
    tool_tls.openmp_worker = true;
  cpuexec__openmp_record_thread(thread_type, true);
  cpuexec__ompt_thread_begin_fn next = NEXT(thread_begin);
  if (next != NULL)
    next(thread_type, thread_data);
}

static void on_thread_end(cpuexec__ompt_data *thread_data) {
  cpuexec__ompt_thread_end_fn next = NEXT(thread_end);
  if (next != NULL)
    next(thread_data);
  cpuexec__openmp_record_thread(tool_tls.openmp_worker ? CPUEXEC__OMPT_THREAD_WORKER : CPUEXEC__OMPT_THREAD_OTHER,
                                false);
}

/* Each per-region callback comes in two builds: without the chain (what
 * the runtime gets when no other tool was found: no load, no test, no
 * argument kept for a call) and with it. chain is a constant in each. */
#define ALWAYS_INLINE static inline __attribute__((always_inline))

ALWAYS_INLINE void parallel_begin(bool chain, cpuexec__ompt_data *encountering_task_data,
                                  const cpuexec__ompt_frame *encountering_task_frame,
                                  cpuexec__ompt_data *parallel_data, unsigned int requested_parallelism, int flags,
                                  const void *codeptr_ra) {
  tool_thread *self = &tool_tls;
  cpuexec__omp_region_kind kind;
  if (cpuexec__tls.callback_depth > 0)
    kind = CPUEXEC__OMP_IN_CALLBACK;
  else if (self->openmp_worker || self->depth > 0)
    kind = CPUEXEC__OMP_NESTED;
  else if (cpuexec__tls.installed != NULL)
    kind = CPUEXEC__OMP_TOP_IN_SESSION;
  else
    kind = CPUEXEC__OMP_TOP_OUTSIDE;
  if (self->depth < REGION_STACK_MAX) {
    region_frame *frame = &self->stack[self->depth];
    frame->codeptr = codeptr_ra;
    /* A serialized region (the common case inside callbacks) reports a team
     * of one to implicit_task, which then has nothing to write. */
    frame->meta = META(requested_parallelism, (flags & CPUEXEC__OMPT_PARALLEL_LEAGUE) ? KIND_LEAGUE : (uint32_t)kind, 1);
  }
  self->depth++;
  cpuexec__ompt_parallel_begin_fn next = chain ? NEXT(parallel_begin) : NULL;
  if (next != NULL)
    next(encountering_task_data, encountering_task_frame, parallel_data, requested_parallelism, flags, codeptr_ra);
}

static void on_parallel_begin(cpuexec__ompt_data *encountering_task_data,
                              const cpuexec__ompt_frame *encountering_task_frame, cpuexec__ompt_data *parallel_data,
                              unsigned int requested_parallelism, int flags, const void *codeptr_ra) {
  parallel_begin(false, encountering_task_data, encountering_task_frame, parallel_data, requested_parallelism, flags,
                 codeptr_ra);
}

static void on_parallel_begin_chained(cpuexec__ompt_data *encountering_task_data,
                                      const cpuexec__ompt_frame *encountering_task_frame,
                                      cpuexec__ompt_data *parallel_data, unsigned int requested_parallelism,
                                      int flags, const void *codeptr_ra) {
  parallel_begin(true, encountering_task_data, encountering_task_frame, parallel_data, requested_parallelism, flags,
                 codeptr_ra);
}

ALWAYS_INLINE void implicit_task(bool chain, int endpoint, cpuexec__ompt_data *parallel_data,
                                 cpuexec__ompt_data *task_data, unsigned int actual_parallelism, unsigned int index,
                                 int flags) {
  /* The primary thread (index 0) of a region is its encountering thread,
   * so the innermost open region on this thread is the one beginning. A
   * team of one is what parallel_begin already assumed. */
  if (actual_parallelism > 1 && endpoint == CPUEXEC__OMPT_SCOPE_BEGIN && index == 0 &&
      (flags & CPUEXEC__OMPT_TASK_IMPLICIT) && !(flags & CPUEXEC__OMPT_TASK_INITIAL)) {
    tool_thread *self = &tool_tls;
    if (self->depth > 0 && self->depth <= REGION_STACK_MAX) {
      region_frame *frame = &self->stack[self->depth - 1];
      uint64_t actual = actual_parallelism < META_ACTUAL_MAX ? actual_parallelism : META_ACTUAL_MAX;
      frame->meta = (frame->meta & ((UINT64_C(1) << 40) - 1)) | actual << 40;
    }
  }
  cpuexec__ompt_implicit_task_fn next = chain ? NEXT(implicit_task) : NULL;
  if (next != NULL)
    next(endpoint, parallel_data, task_data, actual_parallelism, index, flags);
}

static void on_implicit_task(int endpoint, cpuexec__ompt_data *parallel_data, cpuexec__ompt_data *task_data,
                             unsigned int actual_parallelism, unsigned int index, int flags) {
  implicit_task(false, endpoint, parallel_data, task_data, actual_parallelism, index, flags);
}

static void on_implicit_task_chained(int endpoint, cpuexec__ompt_data *parallel_data, cpuexec__ompt_data *task_data,
                                     unsigned int actual_parallelism, unsigned int index, int flags) {
  implicit_task(true, endpoint, parallel_data, task_data, actual_parallelism, index, flags);
}

ALWAYS_INLINE void parallel_end(bool chain, cpuexec__ompt_data *parallel_data,
                                cpuexec__ompt_data *encountering_task_data, int flags, const void *codeptr_ra) {
  cpuexec__ompt_parallel_end_fn next = chain ? NEXT(parallel_end) : NULL;
  if (next != NULL)
    next(parallel_data, encountering_task_data, flags, codeptr_ra);
  tool_thread *self = &tool_tls;
  if (self->depth == 0) {
    cpuexec__openmp_record_untracked();
    return;
  }
  self->depth--;
  if (self->depth >= REGION_STACK_MAX) {
    cpuexec__openmp_record_untracked();
    return;
  }
  const region_frame *frame = &self->stack[self->depth];
  uint64_t meta = frame->meta;
  uint32_t kind = (uint32_t)(meta >> 32) & 0xFFu;
  if (kind != KIND_LEAGUE)
    cpuexec__openmp_record_region((cpuexec__omp_region_kind)kind, frame->codeptr, (uint32_t)meta,
                                  (uint32_t)(meta >> 40));
}

static void on_parallel_end(cpuexec__ompt_data *parallel_data, cpuexec__ompt_data *encountering_task_data,
                            int flags, const void *codeptr_ra) {
  parallel_end(false, parallel_data, encountering_task_data, flags, codeptr_ra);
}

static void on_parallel_end_chained(cpuexec__ompt_data *parallel_data, cpuexec__ompt_data *encountering_task_data,
                                    int flags, const void *codeptr_ra) {
  parallel_end(true, parallel_data, encountering_task_data, flags, codeptr_ra);
}

/* The events we use, and where a chained tool's callback for each goes. */
static const struct {
  int event;
  cpuexec__ompt_callback ours;
  cpuexec__ompt_callback ours_chained; /* registered when another tool was found */
  void *next_slot;
} our_events[] = {
    {CPUEXEC__OMPT_CB_THREAD_BEGIN, (cpuexec__ompt_callback)on_thread_begin, (cpuexec__ompt_callback)on_thread_begin,
     &next_thread_begin},
    {CPUEXEC__OMPT_CB_THREAD_END, (cpuexec__ompt_callback)on_thread_end, (cpuexec__ompt_callback)on_thread_end,
     &next_thread_end},
    {CPUEXEC__OMPT_CB_PARALLEL_BEGIN, (cpuexec__ompt_callback)on_parallel_begin,
     (cpuexec__ompt_callback)on_parallel_begin_chained, &next_parallel_begin},
    {CPUEXEC__OMPT_CB_PARALLEL_END, (cpuexec__ompt_callback)on_parallel_end,
     (cpuexec__ompt_callback)on_parallel_end_chained, &next_parallel_end},
    {CPUEXEC__OMPT_CB_IMPLICIT_TASK, (cpuexec__ompt_callback)on_implicit_task,
     (cpuexec__ompt_callback)on_implicit_task_chained, &next_implicit_task},
};
#define OUR_EVENTS (sizeof our_events / sizeof our_events[0])
/* Bit i: our_events[i] is registered with the runtime (set in initialize). */
static uint32_t registered_events;

static int find_our_event(int event) {
  for (size_t i = 0; i < OUR_EVENTS; i++)
    if (our_events[i].event == event && (registered_events & (1U << i)))
      return (int)i;
  return -1;
}

/* All five slots hold function pointers of the same size and representation. */
static void store_next(void *slot, cpuexec__ompt_callback callback) {
  atomic_store_explicit((_Atomic(cpuexec__ompt_callback) *)slot, callback, memory_order_relaxed);
}

static int mux_set_callback(int event, cpuexec__ompt_callback callback) {
  int i = find_our_event(event);
  if (i < 0)
    return real_set_callback(event, callback);
  store_next(our_events[i].next_slot, callback);
  return CPUEXEC__OMPT_SET_ALWAYS;
}

static int mux_get_callback(int event, cpuexec__ompt_callback *callback) {
  int i = find_our_event(event);
  if (i < 0) {
    cpuexec__ompt_get_callback_fn real = (cpuexec__ompt_get_callback_fn)real_lookup("ompt_get_callback");
    return real != NULL ? real(event, callback) : 0;
  }
  *callback = atomic_load_explicit((_Atomic(cpuexec__ompt_callback) *)our_events[i].next_slot, memory_order_relaxed);
  return *callback != NULL;
}

static cpuexec__ompt_interface_fn mux_lookup(const char *name) {
  if (strcmp(name, "ompt_set_callback") == 0)
    return (cpuexec__ompt_interface_fn)mux_set_callback;
  if (strcmp(name, "ompt_get_callback") == 0)
    return (cpuexec__ompt_interface_fn)mux_get_callback;
  return real_lookup(name);
}

static int tool_initialize(cpuexec__ompt_lookup_fn lookup, int initial_device_num, cpuexec__ompt_data *tool_data) {
  (void)tool_data;
  real_lookup = lookup;
  real_set_callback = (cpuexec__ompt_set_callback_fn)lookup("ompt_set_callback");
  bool all = real_set_callback != NULL;
  /* Only a tool found in ompt_start_tool can ever hand us callbacks to
   * chain (through mux_lookup, which only it receives). */
  bool chain = next_tool != NULL && next_tool->initialize != NULL;
  for (size_t i = 0; all && i < OUR_EVENTS; i++) {
    int result = real_set_callback(our_events[i].event, chain ? our_events[i].ours_chained : our_events[i].ours);
    if (result == CPUEXEC__OMPT_SET_ALWAYS)
      registered_events |= 1U << i;
    else
      all = false;
  }
  if (next_tool != NULL && next_tool->initialize != NULL && real_set_callback != NULL) {
    if (next_tool->initialize(mux_lookup, initial_device_num, &next_tool->tool_data) != 0)
      atomic_store_explicit(&cpuexec__ompt_chained, 1, memory_order_release);
    else
      for (size_t i = 0; i < OUR_EVENTS; i++)
        store_next(our_events[i].next_slot, NULL);
  }
  atomic_store_explicit(&cpuexec__ompt_tool_state, all ? CPUEXEC__OMPT_LIVE : CPUEXEC__OMPT_INIT_FAILED,
                        memory_order_release);
  /* Keep the runtime's interface (and so the chained tool's callbacks)
   * even when ours could not all be registered. */
  return all || atomic_load_explicit(&cpuexec__ompt_chained, memory_order_relaxed);
}

static void tool_finalize(cpuexec__ompt_data *tool_data) {
  (void)tool_data;
  if (atomic_load_explicit(&cpuexec__ompt_chained, memory_order_acquire) && next_tool->finalize != NULL)
    next_tool->finalize(&next_tool->tool_data);
  atomic_store_explicit(&cpuexec__ompt_tool_state, CPUEXEC__OMPT_FINALIZED, memory_order_release);
}

static cpuexec__ompt_start_tool_result our_tool = {tool_initialize, tool_finalize, {0}};

CPUEXEC_EXPORT cpuexec__ompt_start_tool_result *ompt_start_tool(unsigned int omp_version,
                                                                const char *runtime_version);

/* Set while ompt_start_tool runs: a tool library whose lookup leads back to
 * us (through libomp's weak definition) gets no answer instead of a loop. */
static _Atomic int starting;

static cpuexec__ompt_start_tool_result *try_tool(cpuexec__ompt_start_tool_fn start, unsigned int omp_version,
                                                 const char *runtime_version, const char *name) {
  if (start == NULL || start == ompt_start_tool)
    return NULL;
  cpuexec__ompt_start_tool_result *result = start(omp_version, runtime_version);
  if (result != NULL) {
    cpuexec__os_address info;
    if (name == NULL && cpuexec__os_address_info((void *)start, &info))
      name = info.module_path;
    snprintf(cpuexec__ompt_chained_name, sizeof cpuexec__ompt_chained_name, "%.255s", name != NULL ? name : "?");
  }
  return result;
}

/* OMP_TOOL_LIBRARIES separates paths as libomp does: ';' on Windows,
 * whose paths hold ':' after the drive letter. */
#ifdef _WIN32
#define TOOL_LIST_SEPARATOR ";"
#else
#define TOOL_LIST_SEPARATOR ":"
#endif

/* The tool libomp would have found without us. */
static cpuexec__ompt_start_tool_result *find_next_tool(unsigned int omp_version, const char *runtime_version) {
  cpuexec__ompt_start_tool_result *result =
      try_tool((cpuexec__ompt_start_tool_fn)cpuexec__os_next_symbol("ompt_start_tool"), omp_version, runtime_version,
               NULL);
  if (result != NULL)
    return result;
  const char *libraries = cpuexec__env_raw("OMP_TOOL_LIBRARIES"); /* libomp's grammar, read as it does */
  if (libraries == NULL)
    return NULL;
  char path[1024];
  for (const char *p = libraries; *p != '\0';) {
    size_t length = strcspn(p, TOOL_LIST_SEPARATOR);
    if (length > 0 && length < sizeof path) {
      memcpy(path, p, length);
      path[length] = '\0';
      void *handle = cpuexec__os_module_load(path);
      if (handle != NULL) {
        result = try_tool((cpuexec__ompt_start_tool_fn)cpuexec__os_module_symbol(handle, "ompt_start_tool"),
                          omp_version, runtime_version, path);
        if (result != NULL)
          return result; /* the handle stays open: the tool is in use */
        cpuexec__os_module_close(handle);
      }
    }
    p += length;
    if (*p == TOOL_LIST_SEPARATOR[0])
      p++;
  }
  return NULL;
}

/* CPUEXEC_OMPT: off|0|false|disabled declines; unset, empty, on|1|true|
 * enabled keeps the tool. Anything else keeps it too, with one warning on
 * stderr (the tool starts inside the OpenMP runtime, where no caller could
 * receive an error), so a typo such as "of" is never silent. */
static bool declined_by_environment(void) {
  static const char *const off[] = {"off", "0", "false", "disabled", NULL};
  static const char *const on[] = {"", "on", "1", "true", "enabled", NULL};
  const char *value = cpuexec__env_raw("CPUEXEC_OMPT");
  size_t len;
  const char *v = cpuexec__env_value("CPUEXEC_OMPT", &len);
  if (v == NULL)
    return false;
  if (cpuexec__text_is_one_of(v, len, off))
    return true;
  if (!cpuexec__text_is_one_of(v, len, on))
    fprintf(stderr,
            "libcpuexec: CPUEXEC_OMPT=\"%.48s\" is not a setting; use off, 0, false or disabled to decline the "
            "OMPT tool, on, 1, true or enabled to keep it; keeping it\n",
            value);
  return false;
}

CPUEXEC_EXPORT cpuexec__ompt_start_tool_result *ompt_start_tool(unsigned int omp_version,
                                                                const char *runtime_version) {
  int expected = 0;
  if (!atomic_compare_exchange_strong(&starting, &expected, 1))
    return NULL;
  cpuexec__openmp_request_detect(); /* an OpenMP runtime is starting: look again */
  if (atomic_load_explicit(&cpuexec__ompt_tool_state, memory_order_acquire) != CPUEXEC__OMPT_NOT_ASKED) {
    /* A second runtime in the process: one tool instance serves one runtime. */
    atomic_store(&starting, 0);
    return NULL;
  }
  next_tool = find_next_tool(omp_version, runtime_version);
  cpuexec__ompt_start_tool_result *answer;
  if (declined_by_environment()) {
    atomic_store_explicit(&cpuexec__ompt_tool_state, CPUEXEC__OMPT_DECLINED, memory_order_release);
    answer = next_tool; /* the user's tool takes our place */
  } else {
    atomic_store_explicit(&cpuexec__ompt_tool_state, CPUEXEC__OMPT_STARTED, memory_order_release);
    answer = &our_tool;
  }
  atomic_store(&starting, 0);
  return answer;
}

#endif /* CPUEXEC_WITH_OMPT */
