/* The cpuexec Python module: what its files share.
 *
 * One module state (multi-phase init, heap types), reached from a method
 * through the defining module of its type. Each file wraps one topic of the
 * C API: errors.c, policy.c, topology.c, resolution.c, session.c, tasks.c
 * (TaskGroup) and runtime.c (parallel_for, OpenMP, version); module.c
 * builds the module.
 * Every call into libcpuexec that can block (topology loading, resolution,
 * starting or stopping workers, running a loop) is made with the GIL
 * released, on data the call owns. */
#ifndef CPUEXEC_PYTHON_MODULE_H
#define CPUEXEC_PYTHON_MODULE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cpuexec.h>

typedef struct cpx_state {
  PyObject *error;            /* cpuexec.Error (RuntimeError) */
  PyObject *invalid_argument; /* cpuexec.InvalidArgument (Error and ValueError) */
  PyObject *spin_enum;        /* cpuexec.SpinPolicy */
  PyObject *affinity_enum;    /* cpuexec.AffinityPolicy */
  PyTypeObject *policy_type;
  PyTypeObject *topology_type;
  PyTypeObject *resolution_type;
  PyTypeObject *session_type;
  PyTypeObject *spin_type;     /* cpuexec.Spin, a struct sequence */
  PyTypeObject *counters_type; /* cpuexec.Counters, a struct sequence */
  PyTypeObject *task_group_type;
  PyObject *json_loads;
} cpx_state;

extern PyModuleDef cpx_module_def;

/* The state of the module that defined type (NULL with an exception set
 * when type is not one of ours). */
cpx_state *cpx_state_of_type(PyTypeObject *type);
cpx_state *cpx_state_of_module(PyObject *module);

/* errors.c: raise for a failed libcpuexec call. code CPUEXEC_EINVAL raises
 * cpuexec.InvalidArgument, others cpuexec.Error; both carry code, name
 * ("CPUEXEC_E...") and message (cpuexec_error_message() of this thread, or the
 * code's string when the call left none). Returns NULL. */
PyObject *cpx_raise(cpx_state *st, int code);
/* cpuexec.InvalidArgument with a message of our own (printf-like, as
 * PyUnicode_FromFormat). Returns NULL. */
PyObject *cpx_invalid(cpx_state *st, const char *format, ...);
/* The same for another code (cpuexec.Error, or InvalidArgument for EINVAL). */
PyObject *cpx_error(cpx_state *st, int code, const char *format, ...);
int cpx_errors_init(PyObject *module, cpx_state *st);

/* policy.c */
int cpx_policy_init_types(PyObject *module, cpx_state *st);
/* A new cpuexec.Policy holding a copy of policy. */
PyObject *cpx_policy_wrap(cpx_state *st, const cpuexec_policy *policy);
/* Converts what resolve() and Session() accept: None (sets *is_default:
 * the process default), a cpuexec.Policy, a mapping, or policy text.
 * Returns 0, or -1 with an exception set. */
int cpx_policy_convert(cpx_state *st, PyObject *obj, cpuexec_policy *out, int *is_default);
/* SpinPolicy / AffinityPolicy member for a C value (new reference). */
PyObject *cpx_spin_member(cpx_state *st, cpuexec_spin_policy spin);
PyObject *cpx_affinity_member(cpx_state *st, cpuexec_affinity_policy affinity);

/* topology.c */
int cpx_topology_init_types(PyObject *module, cpx_state *st);
/* The C topology of a cpuexec.Topology, or NULL with TypeError set when obj
 * is something else (None is left to the caller). */
const cpuexec_topology *cpx_topology_get(cpx_state *st, PyObject *obj);

/* resolution.c */
int cpx_resolution_init_types(PyObject *module, cpx_state *st);
/* Wraps an owned resolution (owner NULL: destroyed with the object) or one
 * borrowed from owner (kept alive by a reference). */
PyObject *cpx_resolution_wrap(cpx_state *st, cpuexec_resolved *owned, const cpuexec_resolved *borrowed,
                              PyObject *owner);
/* cpuexec.resolve(policy_or_mapping=None, topology=None) */
PyObject *cpx_resolve(PyObject *module, PyObject *args, PyObject *kwargs);
/* A libcpuexec describe() call's text in a new str, without trailing
 * newlines (as cpuexec-info prints it). */
PyObject *cpx_describe(cpx_state *st, int (*describe)(const void *, cpuexec_format, char *, size_t),
                       const void *object, cpuexec_format format);

/* session.c */
int cpx_session_init_types(PyObject *module, cpx_state *st);

/* tasks.c */
int cpx_tasks_init_types(PyObject *module, cpx_state *st);

/* runtime.c: module-level functions. */
PyObject *cpx_parallel_for(PyObject *module, PyObject *args, PyObject *kwargs);
PyObject *cpx_run_all(PyObject *module, PyObject *args, PyObject *kwargs);
PyObject *cpx_current_executor_id(PyObject *module, PyObject *unused);
PyObject *cpx_node_budget(PyObject *module, PyObject *unused);
PyObject *cpx_kernel_executor_id(PyObject *module, PyObject *args, PyObject *kwargs);
PyObject *cpx_openmp_status(PyObject *module, PyObject *unused);
PyObject *cpx_openmp_counters(PyObject *module, PyObject *unused);
PyObject *cpx_openmp_report(PyObject *module, PyObject *unused);
PyObject *cpx_openmp_reset(PyObject *module, PyObject *unused);
PyObject *cpx_runtimes(PyObject *module, PyObject *unused);

/* Integer arguments: bool is refused (TypeError), anything with __index__
 * accepted, out-of-range values raise InvalidArgument naming field. */
int cpx_int64_arg(cpx_state *st, PyObject *value, const char *field, int64_t min, int64_t max, int64_t *out);
int cpx_uint64_arg(cpx_state *st, PyObject *value, const char *field, uint64_t *out);

#endif
