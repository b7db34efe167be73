/* The cpuexec module: multi-phase initialisation, one module state, the
 * module-level functions. The objects live in policy.c, topology.c,
 * resolution.c and session.c; see module.h. */
#include "module.h"

cpx_state *cpx_state_of_module(PyObject *module) { return PyModule_GetState(module); }

cpx_state *cpx_state_of_type(PyTypeObject *type) {
  PyObject *module = PyType_GetModuleByDef(type, &cpx_module_def);
  return module != NULL ? PyModule_GetState(module) : NULL;
}

static int module_exec(PyObject *module) {
  cpx_state *st = cpx_state_of_module(module);
  PyObject *json = PyImport_ImportModule("json");
  if (json == NULL)
    return -1;
  st->json_loads = PyObject_GetAttrString(json, "loads");
  Py_DECREF(json);
  if (st->json_loads == NULL)
    return -1;
  if (cpx_errors_init(module, st) < 0 || cpx_policy_init_types(module, st) < 0 ||
      cpx_topology_init_types(module, st) < 0 || cpx_resolution_init_types(module, st) < 0 ||
      cpx_session_init_types(module, st) < 0 || cpx_tasks_init_types(module, st) < 0)
    return -1;
  unsigned v = cpuexec_version();
  PyObject *info = Py_BuildValue("(III)", (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
  if (PyModule_AddStringConstant(module, "version", cpuexec_version_string()) < 0 ||
      PyModule_AddStringConstant(module, "__version__", cpuexec_version_string()) < 0 ||
      PyModule_AddObject(module, "version_info", info) < 0) {
    Py_XDECREF(info);
    return -1;
  }
  return 0;
}

static int module_traverse(PyObject *module, visitproc visit, void *arg) {
  cpx_state *st = cpx_state_of_module(module);
  Py_VISIT(st->error);
  Py_VISIT(st->invalid_argument);
  Py_VISIT(st->spin_enum);
  Py_VISIT(st->affinity_enum);
  Py_VISIT(st->policy_type);
  Py_VISIT(st->topology_type);
  Py_VISIT(st->resolution_type);
  Py_VISIT(st->session_type);
  Py_VISIT(st->spin_type);
  Py_VISIT(st->counters_type);
  Py_VISIT(st->task_group_type);
  Py_VISIT(st->json_loads);
  return 0;
}

static int module_clear(PyObject *module) {
  cpx_state *st = cpx_state_of_module(module);
  Py_CLEAR(st->error);
  Py_CLEAR(st->invalid_argument);
  Py_CLEAR(st->spin_enum);
  Py_CLEAR(st->affinity_enum);
  Py_CLEAR(st->policy_type);
  Py_CLEAR(st->topology_type);
  Py_CLEAR(st->resolution_type);
  Py_CLEAR(st->session_type);
  Py_CLEAR(st->spin_type);
  Py_CLEAR(st->counters_type);
  Py_CLEAR(st->task_group_type);
  Py_CLEAR(st->json_loads);
  return 0;
}

static void module_free(void *module) { module_clear(module); }

static PyMethodDef module_functions[] = {
    {"resolve", (PyCFunction)(void (*)(void))cpx_resolve, METH_VARARGS | METH_KEYWORDS,
     "resolve(policy_or_mapping=None, topology=None) -> Resolution\n\nResolves a cpuexec.Policy, a mapping, "
     "policy text or None (the process default, CPUEXEC_POLICY) on topology (None: this process)."},
    {"parallel_for", (PyCFunction)(void (*)(void))cpx_parallel_for, METH_VARARGS | METH_KEYWORDS,
     "parallel_for(fn, total, grain=1, max_participants=0) -> int\n\nThe loop `for i in range(0, total, grain): "
     "fn(i, min(i + grain, total))` run on the executor installed on this thread (serially without one); "
     "fn(begin, end) may get several grains at once. Each call takes the GIL, so this parallelises only "
     "work that releases it. The first exception fn raises stops new ranges and is raised here. Returns the "
     "participants that ran a range (0 when total <= 0)."},
    {"run_all", (PyCFunction)(void (*)(void))cpx_run_all, METH_VARARGS | METH_KEYWORDS,
     "run_all(fn, count) -> (Error | None, int)\n\nfn(begin, end) over ranges covering range(count) on the "
     "executor installed on this thread (cpuexec_range_executor_run_all), every index exactly once whatever "
     "the executor does: after an error of the executor or the library (an executor inherited across fork, "
     "no memory) the ranges left run on the calling thread. Returns that error (a cpuexec.Error, not "
     "raised; None when there was none) and how many indices the calling thread ran because of it. The first "
     "exception fn raises stops new ranges and is raised here."},
    {"current_executor_id", cpx_current_executor_id, METH_NOARGS,
     "The id of the executor installed on this thread (Session.executor_id), or None."},
    {"kernel_executor_id", (PyCFunction)(void (*)(void))cpx_kernel_executor_id, METH_VARARGS | METH_KEYWORDS,
     "kernel_executor_id(kernel, required=True) -> int\n\nThe id of the executor the kernel named `kernel` runs "
     "on (cpuexec_kernel_executor): the one installed on this thread; with none, the process default pool's "
     "when required is False, else the library's state error naming the kernel."},
    {"node_budget", cpx_node_budget, METH_NOARGS,
     "The node budget that applies to this process (cpuexec_node_budget_describe): its size, where it came "
     "from, the slots held and by whom (pid and slots), what the cgroup's quota throttled since the process joined, "
     "or why the process keeps its own count (a str)."},
    {"openmp_status", cpx_openmp_status, METH_NOARGS, "Where OpenMP detection stands (a dict)."},
    {"openmp_counters", cpx_openmp_counters, METH_NOARGS, "Process-wide OpenMP region counts (a dict)."},
    {"openmp_report", cpx_openmp_report, METH_NOARGS,
     "OpenMP regions per calling function, most first (a list of dicts)."},
    {"openmp_reset", cpx_openmp_reset, METH_NOARGS, "Zeroes the OpenMP counters and report."},
    {"runtimes", cpx_runtimes, METH_NOARGS,
     "Every threaded library found (OpenMP, OpenBLAS, BLIS, oneTBB, MKL) and how the runtime guards govern it "
     "(a list of dicts)."},
    {NULL},
};

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

PyModuleDef cpx_module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "cpuexec",
    .m_doc = "libcpuexec from Python: typed CPU execution policies, their resolution on a topology, sessions "
             "that install a shared executor on the calling thread, counters and the OpenMP report.",
    .m_size = sizeof(cpx_state),
    .m_methods = module_functions,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit_cpuexec(void);
PyMODINIT_FUNC PyInit_cpuexec(void) { return PyModuleDef_Init(&cpx_module_def); }
