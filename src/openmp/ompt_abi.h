/* Internal: the part of the OMPT binary interface (OpenMP 5.x, "OMPT
 * Interface") the tool uses, declared from the specification so the library
 * builds without an OpenMP compiler or its omp-tools.h. Values are fixed by
 * the specification; the names carry our cpuexec__ prefix so they never
 * clash with a real omp-tools.h in the same translation unit. */
#ifndef CPUEXEC_SRC_OMPT_ABI_H
#define CPUEXEC_SRC_OMPT_ABI_H

#include <stdint.h>

typedef union cpuexec__ompt_data {
  uint64_t value;
  void *ptr;
} cpuexec__ompt_data;

typedef struct cpuexec__ompt_frame {
  cpuexec__ompt_data exit_frame;
  cpuexec__ompt_data enter_frame;
  int exit_frame_flags;
  int enter_frame_flags;
} cpuexec__ompt_frame;

/* ompt_callbacks_t values. */
enum {
  CPUEXEC__OMPT_CB_THREAD_BEGIN = 1,
  CPUEXEC__OMPT_CB_THREAD_END = 2,
  CPUEXEC__OMPT_CB_PARALLEL_BEGIN = 3,
  CPUEXEC__OMPT_CB_PARALLEL_END = 4,
  CPUEXEC__OMPT_CB_IMPLICIT_TASK = 7
};

/* ompt_thread_t, ompt_scope_endpoint_t, ompt_task_flag_t, ompt_parallel_flag_t. */
enum { CPUEXEC__OMPT_THREAD_INITIAL = 1, CPUEXEC__OMPT_THREAD_WORKER = 2, CPUEXEC__OMPT_THREAD_OTHER = 3 };
enum { CPUEXEC__OMPT_SCOPE_BEGIN = 1, CPUEXEC__OMPT_SCOPE_END = 2, CPUEXEC__OMPT_SCOPE_BEGINEND = 3 };
enum { CPUEXEC__OMPT_TASK_INITIAL = 0x1, CPUEXEC__OMPT_TASK_IMPLICIT = 0x2 };
enum { CPUEXEC__OMPT_PARALLEL_LEAGUE = 0x40000000 };
/* ompt_set_result_t. */
enum { CPUEXEC__OMPT_SET_ERROR = 0, CPUEXEC__OMPT_SET_NEVER = 1, CPUEXEC__OMPT_SET_ALWAYS = 5 };

typedef void (*cpuexec__ompt_interface_fn)(void);
typedef cpuexec__ompt_interface_fn (*cpuexec__ompt_lookup_fn)(const char *interface_function_name);
typedef void (*cpuexec__ompt_callback)(void);
typedef int (*cpuexec__ompt_set_callback_fn)(int event, cpuexec__ompt_callback callback);
typedef int (*cpuexec__ompt_get_callback_fn)(int event, cpuexec__ompt_callback *callback);

typedef int (*cpuexec__ompt_initialize_fn)(cpuexec__ompt_lookup_fn lookup, int initial_device_num,
                                           cpuexec__ompt_data *tool_data);
typedef void (*cpuexec__ompt_finalize_fn)(cpuexec__ompt_data *tool_data);

typedef struct cpuexec__ompt_start_tool_result {
  cpuexec__ompt_initialize_fn initialize;
  cpuexec__ompt_finalize_fn finalize;
  cpuexec__ompt_data tool_data;
} cpuexec__ompt_start_tool_result;

typedef cpuexec__ompt_start_tool_result *(*cpuexec__ompt_start_tool_fn)(unsigned int omp_version,
                                                                        const char *runtime_version);

typedef void (*cpuexec__ompt_thread_begin_fn)(int thread_type, cpuexec__ompt_data *thread_data);
typedef void (*cpuexec__ompt_thread_end_fn)(cpuexec__ompt_data *thread_data);
typedef void (*cpuexec__ompt_parallel_begin_fn)(cpuexec__ompt_data *encountering_task_data,
                                                const cpuexec__ompt_frame *encountering_task_frame,
                                                cpuexec__ompt_data *parallel_data, unsigned int requested_parallelism,
                                                int flags, const void *codeptr_ra);
typedef void (*cpuexec__ompt_parallel_end_fn)(cpuexec__ompt_data *parallel_data,
                                              cpuexec__ompt_data *encountering_task_data, int flags,
                                              const void *codeptr_ra);
typedef void (*cpuexec__ompt_implicit_task_fn)(int endpoint, cpuexec__ompt_data *parallel_data,
                                               cpuexec__ompt_data *task_data, unsigned int actual_parallelism,
                                               unsigned int index, int flags);

#endif
