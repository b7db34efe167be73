/* Module functions on the running process: cpuexec.parallel_for on the
 * executor installed on this thread, the installed executor's id, and the
 * OpenMP interop status, counters and report. */
#include "module.h"

#include <string.h>

#include <cpuexec/compat/range_executor.h>

/* Shared by the participants of one parallel_for; every field is touched
 * with the GIL held. */
typedef struct {
  PyObject *fn;
  PyObject *exc_type, *exc_value, *exc_tb; /* the first exception a callback raised */
  uint64_t *ran;                           /* a bit per participant index that ran a range */
  uint32_t threads;                        /* the bits there are: the executor's effective threads */
  int32_t executed;                        /* how many bits are set */
} range_ctx;

/* Runs on every participant with the GIL released by the caller: each range
 * takes the GIL for its Python call. After a failure no new call starts. */
static int run_range(void *ctx, int64_t begin, int64_t end) {
  range_ctx *c = ctx;
  PyGILState_STATE gil = PyGILState_Ensure();
  uint32_t index = cpuexec_participant_index();
  uint64_t bit = 1ull << (index % 64);
  if (index < c->threads && !(c->ran[index / 64] & bit)) {
    c->ran[index / 64] |= bit;
    c->executed++;
  }
  int rc = 1;
  if (c->exc_type == NULL) {
    PyObject *r = PyObject_CallFunction(c->fn, "LL", (long long)begin, (long long)end);
    if (r != NULL) {
      Py_DECREF(r);
      rc = 0;
    } else {
      PyErr_Fetch(&c->exc_type, &c->exc_value, &c->exc_tb);
    }
  }
  PyGILState_Release(gil);
  return rc;
}

PyObject *cpx_parallel_for(PyObject *module, PyObject *args, PyObject *kwargs) {
  cpx_state *st = cpx_state_of_module(module);
  static char *kw[] = {"fn", "total", "grain", "max_participants", NULL};
  PyObject *fn, *total_obj, *grain_obj = NULL, *max_obj = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OO:parallel_for", kw, &fn, &total_obj, &grain_obj, &max_obj))
    return NULL;
  if (!PyCallable_Check(fn)) {
    PyErr_Format(PyExc_TypeError, "fn: got %.100s; use a callable fn(begin, end)", Py_TYPE(fn)->tp_name);
    return NULL;
  }
  int64_t total, grain = 1, max = 0;
  if (cpx_int64_arg(st, total_obj, "total", INT64_MIN, INT64_MAX, &total) < 0 ||
      (grain_obj != NULL && cpx_int64_arg(st, grain_obj, "grain", INT64_MIN, INT64_MAX, &grain) < 0) ||
      (max_obj != NULL && cpx_int64_arg(st, max_obj, "max_participants", 0, INT32_MAX, &max) < 0))
    return NULL;
  cpuexec_executor *exec = cpuexec_executor_current();
  int32_t threads = exec ? cpuexec_executor_effective_threads(exec) : 1;
  uint64_t *ran = PyMem_Calloc((size_t)(threads + 63) / 64, sizeof *ran);
  if (ran == NULL)
    return PyErr_NoMemory();
  range_ctx c = {.fn = fn, .ran = ran, .threads = (uint32_t)threads};
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = cpuexec_parallel_for(exec, total, grain, &c, run_range, (int32_t)max);
  Py_END_ALLOW_THREADS
  PyMem_Free(ran);
  if (c.exc_type != NULL) {
    PyErr_Restore(c.exc_type, c.exc_value, c.exc_tb);
    return NULL;
  }
  if (rc != 0)
    return cpx_raise(st, rc);
  return PyLong_FromLong(c.executed);
}

/* The error of a run_all as a cpuexec.Error object, not raised. */
static PyObject *error_object(cpx_state *st, int code) {
  cpx_raise(st, code);
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  return value;
}

PyObject *cpx_run_all(PyObject *module, PyObject *args, PyObject *kwargs) {
  cpx_state *st = cpx_state_of_module(module);
  static char *kw[] = {"fn", "count", NULL};
  PyObject *fn, *count_obj;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:run_all", kw, &fn, &count_obj))
    return NULL;
  if (!PyCallable_Check(fn)) {
    PyErr_Format(PyExc_TypeError, "fn: got %.100s; use a callable fn(begin, end)", Py_TYPE(fn)->tp_name);
    return NULL;
  }
  int64_t count;
  if (cpx_int64_arg(st, count_obj, "count", INT64_MIN, INT64_MAX, &count) < 0)
    return NULL;
  cpuexec_executor *exec = cpuexec_executor_current();
  int32_t threads = exec ? cpuexec_executor_effective_threads(exec) : 1;
  uint64_t *ran = PyMem_Calloc((size_t)(threads + 63) / 64, sizeof *ran);
  if (ran == NULL)
    return PyErr_NoMemory();
  range_ctx c = {.fn = fn, .ran = ran, .threads = (uint32_t)threads};
  cpuexec_range_executor installed = cpuexec_range_executor_installed();
  cpuexec_run_all_report report;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = cpuexec_range_executor_run_all(&installed, count, &c, run_range, &report);
  Py_END_ALLOW_THREADS
  PyMem_Free(ran);
  if (c.exc_type != NULL) {
    PyErr_Restore(c.exc_type, c.exc_value, c.exc_tb);
    return NULL;
  }
  if (rc != 0)
    return cpx_raise(st, rc);
  PyObject *error = Py_None;
  if (report.error != 0)
    error = error_object(st, report.error);
  else
    Py_INCREF(error);
  if (error == NULL)
    return NULL;
  return Py_BuildValue("(NL)", error, (long long)report.caller_indices);
}

PyObject *cpx_node_budget(PyObject *module, PyObject *unused) {
  (void)module, (void)unused;
  char text[4096];
  int n = cpuexec_node_budget_describe(text, sizeof text);
  return PyUnicode_FromStringAndSize(text, n < 0 ? 0 : n < (int)sizeof text ? n : (int)sizeof text - 1);
}

PyObject *cpx_current_executor_id(PyObject *module, PyObject *unused) {
  uint64_t id = cpuexec_executor_id(cpuexec_executor_current());
  if (id == 0)
    Py_RETURN_NONE;
  return PyLong_FromUnsignedLongLong(id);
}

/* The detection states by value, as the enum in cpuexec/interop.h. */
static const char *const detection_names[] = {
    "live",           "no_runtime",  "not_started", "no_ompt",   "tool_disabled",
    "declined",       "other_tool",  "started_before", "init_failed", "finalized",
};

PyObject *cpx_openmp_status(PyObject *module, PyObject *unused) {
  cpx_state *st = cpx_state_of_module(module);
  cpuexec_openmp_state s;
  int rc;
  /* It walks the loaded objects under the loader's lock. */
  Py_BEGIN_ALLOW_THREADS
  rc = cpuexec_openmp_status_get(&s);
  Py_END_ALLOW_THREADS
  if (rc != 0)
    return cpx_raise(st, rc);
  size_t d = (size_t)s.detection;
  const char *detection = d < sizeof detection_names / sizeof detection_names[0] ? detection_names[d] : "unknown";
  return Py_BuildValue("{s:s,s:O,s:O,s:O,s:O,s:O,s:s,s:s,s:s,s:s}", "detection", detection, "live",
                       s.live ? Py_True : Py_False, "libomp_loaded", s.libomp_loaded ? Py_True : Py_False,
                       "libgomp_loaded", s.libgomp_loaded ? Py_True : Py_False, "guard_active",
                       s.guard_active ? Py_True : Py_False, "chained_tool", s.chained_tool ? Py_True : Py_False,
                       "reason", s.reason != NULL ? s.reason : "", "chained_tool_name", s.chained_tool_name,
                       "libomp_path", s.libomp_path, "libgomp_path", s.libgomp_path);
}

PyObject *cpx_openmp_counters(PyObject *module, PyObject *unused) {
  cpx_state *st = cpx_state_of_module(module);
  cpuexec_openmp_counters c;
  int rc = cpuexec_openmp_counters_get(&c);
  if (rc != 0)
    return cpx_raise(st, rc);
  return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "regions_in_callbacks",
                       (unsigned long long)c.regions_in_callbacks, "regions_inline",
                       (unsigned long long)c.regions_inline, "regions_multithreaded",
                       (unsigned long long)c.regions_multithreaded, "toplevel_regions_in_sessions",
                       (unsigned long long)c.toplevel_regions_in_sessions, "toplevel_regions_outside",
                       (unsigned long long)c.toplevel_regions_outside, "nested_regions",
                       (unsigned long long)c.nested_regions, "openmp_workers_created",
                       (unsigned long long)c.openmp_workers_created, "openmp_workers_ended",
                       (unsigned long long)c.openmp_workers_ended, "untracked_regions",
                       (unsigned long long)c.untracked_regions, "report_overflow",
                       (unsigned long long)c.report_overflow);
}

PyObject *cpx_openmp_report(PyObject *module, PyObject *unused) {
  cpx_state *st = cpx_state_of_module(module);
  size_t count = 0;
  int rc = cpuexec_openmp_report_get(NULL, 0, &count);
  if (rc != 0)
    return cpx_raise(st, rc);
  /* A few spare entries for functions seen between the two calls. */
  size_t capacity = count + 8;
  cpuexec_openmp_report_entry *entries = PyMem_Calloc(capacity, sizeof *entries);
  if (entries == NULL)
    return PyErr_NoMemory();
  rc = cpuexec_openmp_report_get(entries, capacity, &count);
  if (rc != 0) {
    PyMem_Free(entries);
    return cpx_raise(st, rc);
  }
  if (count > capacity)
    count = capacity;
  PyObject *list = PyList_New(0);
  for (size_t i = 0; list != NULL && i < count; i++) {
    const cpuexec_openmp_report_entry *e = &entries[i];
    PyObject *d = Py_BuildValue(
        "{s:K,s:s,s:s,s:K,s:K,s:K,s:K,s:K,s:I,s:I}", "codeptr", (unsigned long long)(uintptr_t)e->codeptr,
        "function", e->function, "object", e->object, "offset", (unsigned long long)e->offset,
        "inline_in_callbacks", (unsigned long long)e->inline_in_callbacks, "multithreaded_in_callbacks",
        (unsigned long long)e->multithreaded_in_callbacks, "toplevel_in_sessions",
        (unsigned long long)e->toplevel_in_sessions, "toplevel_outside", (unsigned long long)e->toplevel_outside,
        "max_requested_threads", (unsigned)e->max_requested_threads, "max_actual_threads",
        (unsigned)e->max_actual_threads);
    if (d == NULL || PyList_Append(list, d) < 0)
      Py_CLEAR(list);
    Py_XDECREF(d);
  }
  PyMem_Free(entries);
  return list;
}

PyObject *cpx_openmp_reset(PyObject *module, PyObject *unused) {
  cpuexec_openmp_counters_reset();
  Py_RETURN_NONE;
}

static const char *const family_names[] = {"openmp", "openblas", "blis", "tbb", "mkl"};
static const char *const guard_names[] = {"per_thread", "process_wide", "through_openmp", "serial_build", "none"};

PyObject *cpx_runtimes(PyObject *module, PyObject *unused) {
  cpx_state *st = cpx_state_of_module(module);
  cpuexec_runtime_info list[32];
  size_t n = 0;
  int rc;
  /* It walks the loaded objects under the loader's lock. */
  Py_BEGIN_ALLOW_THREADS
  rc = cpuexec_runtimes_get(list, 32, &n);
  Py_END_ALLOW_THREADS
  if (rc != 0)
    return cpx_raise(st, rc);
  if (n > 32)
    n = 32;
  PyObject *out = PyList_New(0);
  for (size_t i = 0; out != NULL && i < n; i++) {
    const cpuexec_runtime_info *e = &list[i];
    size_t f = (size_t)e->family, g = (size_t)e->guard;
    PyObject *d = Py_BuildValue(
        "{s:s,s:s,s:s,s:s,s:s,s:s,s:O,s:s}", "family",
        f < sizeof family_names / sizeof family_names[0] ? family_names[f] : "unknown", "name", e->name, "version",
        e->version, "threading", e->threading, "path", e->path, "guard",
        g < sizeof guard_names / sizeof guard_names[0] ? guard_names[g] : "unknown", "governed",
        e->governed ? Py_True : Py_False, "reason", e->reason);
    if (d == NULL || PyList_Append(out, d) != 0) {
      Py_XDECREF(d);
      Py_DECREF(out);
      return NULL;
    }
    Py_DECREF(d);
  }
  return out;
}

PyObject *cpx_kernel_executor_id(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"kernel", "required", NULL};
  const char *kernel;
  int required = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|p:kernel_executor_id", kw, &kernel, &required)) return NULL;
  cpuexec_executor *exec = NULL;
  int rc = cpuexec_kernel_executor(kernel, required ? CPUEXEC_EXECUTOR_REQUIRED : CPUEXEC_EXECUTOR_SUPPORTED, &exec);
  if (rc != 0) return cpx_raise(cpx_state_of_module(module), rc);
  return PyLong_FromUnsignedLongLong(cpuexec_executor_id(exec));
}
