/* A minimal OMPT tool for the chaining tests: loaded through
 * OMP_TOOL_LIBRARIES (or found after libcpuexec), it counts its initialize
 * call and the parallel regions it is told about. The counters are
 * exported so the scenario program can read them. Declares the few OMPT
 * types it needs from the specification, like src/openmp/ompt_abi.h. */
#include <stdint.h>

typedef union probe_data {
  uint64_t value;
  void *ptr;
} probe_data;
typedef void (*probe_interface_fn)(void);
typedef probe_interface_fn (*probe_lookup_fn)(const char *);
typedef int (*probe_set_callback_fn)(int event, probe_interface_fn callback);
typedef struct probe_result {
  int (*initialize)(probe_lookup_fn, int, probe_data *);
  void (*finalize)(probe_data *);
  probe_data tool_data;
} probe_result;

__attribute__((visibility("default"))) volatile int probe_initialized;
__attribute__((visibility("default"))) volatile long probe_parallel_begins;
__attribute__((visibility("default"))) volatile long probe_parallel_ends;

static void on_parallel_begin(probe_data *task, const void *frame, probe_data *parallel, unsigned requested,
                              int flags, const void *codeptr) {
  (void)task, (void)frame, (void)requested, (void)flags, (void)codeptr;
  parallel->value = 42; /* the tool's own data slot: libcpuexec must leave it alone */
  __atomic_add_fetch(&probe_parallel_begins, 1, __ATOMIC_RELAXED);
}

static void on_parallel_end(probe_data *parallel, probe_data *task, int flags, const void *codeptr) {
  (void)task, (void)flags, (void)codeptr;
  if (parallel->value == 42)
    __atomic_add_fetch(&probe_parallel_ends, 1, __ATOMIC_RELAXED);
}

static int probe_initialize(probe_lookup_fn lookup, int device, probe_data *data) {
  (void)device, (void)data;
  probe_set_callback_fn set = (probe_set_callback_fn)lookup("ompt_set_callback");
  if (set == 0)
    return 0;
  set(3 /* parallel_begin */, (probe_interface_fn)on_parallel_begin);
  set(4 /* parallel_end */, (probe_interface_fn)on_parallel_end);
  probe_initialized = 1;
  return 1;
}

static void probe_finalize(probe_data *data) { (void)data; }

static probe_result result = {probe_initialize, probe_finalize, {0}};

__attribute__((visibility("default"))) probe_result *ompt_start_tool(unsigned version, const char *runtime);
probe_result *ompt_start_tool(unsigned version, const char *runtime) {
  (void)version, (void)runtime;
  return &result;
}
