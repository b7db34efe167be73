/* cpuexec.Topology: this process's topology, or a stored hwloc XML or
 * synthetic one with an explicit allowed set, binding and quota, so
 * resolutions for other machines can be tried from Python. */
#include "module.h"

#include <math.h>
#include <string.h>

typedef struct {
  PyObject_HEAD
  cpuexec_topology *topology;
} TopologyObject;

const cpuexec_topology *cpx_topology_get(cpx_state *st, PyObject *obj) {
  if (!Py_IS_TYPE(obj, st->topology_type)) {
    PyErr_Format(PyExc_TypeError, "topology: got %.100s; use a cpuexec.Topology or None (this process)",
                 Py_TYPE(obj)->tp_name);
    return NULL;
  }
  return ((TopologyObject *)obj)->topology;
}

/* The option strings, owned until options_clear(). */
typedef struct {
  cpuexec_topology_options options;
  PyObject *owned[5]; /* bytes objects behind the char pointers */
} options_holder;

static void options_clear(options_holder *h) {
  for (size_t i = 0; i < sizeof h->owned / sizeof h->owned[0]; i++)
    Py_CLEAR(h->owned[i]);
}

/* A cpulist option: a str such as "0-3,8" or an iterable of ints. */
static int cpulist_option(cpx_state *st, PyObject *value, const char *field, PyObject **owned, const char **out) {
  if (value == NULL || value == Py_None)
    return 0;
  PyObject *text;
  if (PyUnicode_Check(value)) {
    text = Py_NewRef(value);
  } else if (PyAnySet_Check(value) || PyList_Check(value) || PyTuple_Check(value) || PyRange_Check(value)) {
    /* Written as a cpulist "a,b,c"; the library reads and checks it. */
    PyObject *items = PySequence_List(value);
    if (items == NULL)
      return -1;
    PyObject *parts = PyList_New(0);
    for (Py_ssize_t i = 0; parts != NULL && i < PyList_GET_SIZE(items); i++) {
      int64_t id;
      PyObject *s = NULL;
      if (cpx_int64_arg(st, PyList_GET_ITEM(items, i), field, 0, INT32_MAX, &id) < 0 ||
          (s = PyUnicode_FromFormat("%lld", (long long)id)) == NULL || PyList_Append(parts, s) < 0)
        Py_CLEAR(parts);
      Py_XDECREF(s);
    }
    Py_DECREF(items);
    if (parts == NULL)
      return -1;
    PyObject *comma = PyUnicode_FromString(",");
    text = comma ? PyUnicode_Join(comma, parts) : NULL;
    Py_XDECREF(comma);
    Py_DECREF(parts);
    if (text == NULL)
      return -1;
  } else {
    PyErr_Format(PyExc_TypeError, "%s: got %.100s; use a cpulist str such as \"0-3,8\" or a list of processor ids",
                 field, Py_TYPE(value)->tp_name);
    return -1;
  }
  *owned = PyUnicode_AsUTF8String(text);
  Py_DECREF(text);
  if (*owned == NULL)
    return -1;
  *out = PyBytes_AS_STRING(*owned);
  if (strlen(*out) != (size_t)PyBytes_GET_SIZE(*owned)) {
    cpx_invalid(st, "%s: contains a NUL character", field);
    return -1;
  }
  return 0;
}

/* A file-system path option (str, bytes or os.PathLike; no NUL). */
static int path_option(PyObject *value, PyObject **owned, const char **out) {
  if (value == NULL || value == Py_None)
    return 0;
  if (!PyUnicode_FSConverter(value, owned))
    return -1;
  *out = PyBytes_AS_STRING(*owned);
  return 0;
}

static int read_options(cpx_state *st, PyObject *allowed, PyObject *binding, PyObject *caller, PyObject *quota,
                        PyObject *cgroup_root, PyObject *proc_self_cgroup, options_holder *h) {
  memset(h, 0, sizeof *h);
  cpuexec_topology_options_init(&h->options);
  if (cpulist_option(st, allowed, "allowed", &h->owned[0], &h->options.allowed_cpulist) < 0 ||
      cpulist_option(st, binding, "binding", &h->owned[1], &h->options.binding_cpulist) < 0 ||
      cpulist_option(st, caller, "caller", &h->owned[2], &h->options.caller_cpulist) < 0 ||
      path_option(cgroup_root, &h->owned[3], &h->options.cgroup_root) < 0 ||
      path_option(proc_self_cgroup, &h->owned[4], &h->options.proc_self_cgroup) < 0)
    goto fail;
  if (quota != NULL && quota != Py_None) {
    if (PyBool_Check(quota) || !(PyFloat_Check(quota) || PyIndex_Check(quota))) {
      PyErr_Format(PyExc_TypeError, "quota: got %.100s; use a number of CPUs such as 1.5", Py_TYPE(quota)->tp_name);
      goto fail;
    }
    double q = PyFloat_AsDouble(quota);
    if (q == -1.0 && PyErr_Occurred()) {
      if (!PyErr_ExceptionMatches(PyExc_OverflowError))
        goto fail;
      PyErr_Clear();
      q = INFINITY;
    }
    if (!isfinite(q) || q <= 0 || q > 1e9) {
      cpx_invalid(st, "quota: %R CPUs; use a finite number above 0 (None: no quota)", quota);
      goto fail;
    }
    h->options.cpu_quota = q;
  }
  return 0;
fail:
  options_clear(h);
  return -1;
}

static PyObject *wrap(cpx_state *st, cpuexec_topology *t) {
  TopologyObject *self = PyObject_New(TopologyObject, st->topology_type);
  if (self == NULL) {
    cpuexec_topology_destroy(t);
    return NULL;
  }
  self->topology = t;
  return (PyObject *)self;
}

enum source { FROM_PROCESS, FROM_XML, FROM_SYNTHETIC };

/* hwloc reads files and /sys: the GIL is released while it does. */
static PyObject *load(PyObject *cls, PyObject *args, PyObject *kwargs, enum source source) {
  cpx_state *st = cpx_state_of_type((PyTypeObject *)cls);
  if (st == NULL)
    return NULL;
  static char *process_kw[] = {"allowed", "binding", "quota", "cgroup_root", "proc_self_cgroup", NULL};
  static char *stored_kw[] = {"", "allowed", "binding", "caller", "quota", "cgroup_root", "proc_self_cgroup", NULL};
  PyObject *what = NULL, *allowed = NULL, *binding = NULL, *caller = NULL, *quota = NULL, *cgroup_root = NULL,
           *proc = NULL;
  int ok = source == FROM_PROCESS
               ? PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOOO:this_process", process_kw, &allowed, &binding,
                                             &quota, &cgroup_root, &proc)
               : PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOOOOO", stored_kw, &what, &allowed, &binding,
                                             &caller, &quota, &cgroup_root, &proc);
  if (!ok)
    return NULL;
  options_holder h;
  if (read_options(st, allowed, binding, caller, quota, cgroup_root, proc, &h) < 0)
    return NULL;
  PyObject *what_bytes = NULL;
  const char *what_str = NULL;
  if (source == FROM_XML && what == Py_None) {
    PyErr_SetString(PyExc_TypeError, "path: got NoneType; use the path of an hwloc XML file");
    options_clear(&h);
    return NULL;
  }
  if (source == FROM_XML && path_option(what, &what_bytes, &what_str) < 0) {
    options_clear(&h);
    return NULL;
  }
  if (source == FROM_SYNTHETIC) {
    if (!PyUnicode_Check(what)) {
      PyErr_Format(PyExc_TypeError, "description: got %.100s; use a str such as \"package:2 core:8 pu:2\"",
                   Py_TYPE(what)->tp_name);
      options_clear(&h);
      return NULL;
    }
    what_bytes = PyUnicode_AsUTF8String(what);
    if (what_bytes == NULL || strlen(PyBytes_AS_STRING(what_bytes)) != (size_t)PyBytes_GET_SIZE(what_bytes)) {
      if (what_bytes != NULL)
        cpx_invalid(st, "description: contains a NUL character");
      Py_XDECREF(what_bytes);
      options_clear(&h);
      return NULL;
    }
    what_str = PyBytes_AS_STRING(what_bytes);
  }
  cpuexec_topology *t = NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  if (source == FROM_PROCESS)
    rc = cpuexec_topology_load(&h.options, &t);
  else if (source == FROM_XML)
    rc = cpuexec_topology_load_xml(what_str, &h.options, &t);
  else
    rc = cpuexec_topology_load_synthetic(what_str, &h.options, &t);
  Py_END_ALLOW_THREADS
  Py_XDECREF(what_bytes);
  options_clear(&h);
  if (rc != 0)
    return cpx_raise(st, rc);
  return wrap(st, t);
}

static PyObject *this_process(PyObject *cls, PyObject *args, PyObject *kwargs) {
  return load(cls, args, kwargs, FROM_PROCESS);
}
static PyObject *from_xml(PyObject *cls, PyObject *args, PyObject *kwargs) { return load(cls, args, kwargs, FROM_XML); }
static PyObject *from_synthetic(PyObject *cls, PyObject *args, PyObject *kwargs) {
  return load(cls, args, kwargs, FROM_SYNTHETIC);
}

static PyObject *topology_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  PyErr_SetString(PyExc_TypeError,
                  "use cpuexec.Topology.this_process(), Topology.from_xml(path) or Topology.from_synthetic(text)");
  return NULL;
}

static void topology_dealloc(PyObject *self) {
  PyTypeObject *type = Py_TYPE(self);
  cpuexec_topology_destroy(((TopologyObject *)self)->topology);
  type->tp_free(self);
  Py_DECREF(type);
}

static int describe_topology(const void *t, cpuexec_format f, char *b, size_t s) {
  return cpuexec_topology_describe(t, f, b, s);
}

static PyObject *topology_describe(PyObject *self, PyObject *unused) {
  cpx_state *st = cpx_state_of_type(Py_TYPE(self));
  return st ? cpx_describe(st, describe_topology, ((TopologyObject *)self)->topology, CPUEXEC_FORMAT_TEXT) : NULL;
}

static PyObject *topology_to_json(PyObject *self, PyObject *unused) {
  cpx_state *st = cpx_state_of_type(Py_TYPE(self));
  return st ? cpx_describe(st, describe_topology, ((TopologyObject *)self)->topology, CPUEXEC_FORMAT_JSON) : NULL;
}

static PyObject *topology_to_dict(PyObject *self, PyObject *unused) {
  cpx_state *st = cpx_state_of_type(Py_TYPE(self));
  PyObject *json = st ? topology_to_json(self, NULL) : NULL;
  if (json == NULL)
    return NULL;
  PyObject *d = PyObject_CallOneArg(st->json_loads, json);
  Py_DECREF(json);
  return d;
}

#define COUNT_GETTER(field, fn)                                                                                       \
  static PyObject *get_##field(PyObject *self, void *c) {                                                             \
    return PyLong_FromUnsignedLong(fn(((TopologyObject *)self)->topology));                                           \
  }
COUNT_GETTER(processor_count, cpuexec_topology_processor_count)
COUNT_GETTER(core_count, cpuexec_topology_core_count)
COUNT_GETTER(package_count, cpuexec_topology_package_count)
COUNT_GETTER(kind_count, cpuexec_topology_kind_count)
COUNT_GETTER(smt_width, cpuexec_topology_smt_width)
COUNT_GETTER(performance_core_count, cpuexec_topology_performance_core_count)

static PyObject *get_cpu_quota(PyObject *self, void *c) {
  double q = cpuexec_topology_cpu_quota(((TopologyObject *)self)->topology);
  if (q <= 0)
    Py_RETURN_NONE;
  return PyFloat_FromDouble(q);
}

static PyObject *get_processors(PyObject *self, void *c) {
  const cpuexec_topology *t = ((TopologyObject *)self)->topology;
  uint32_t n = cpuexec_topology_processor_count(t);
  PyObject *tuple = PyTuple_New(n);
  for (uint32_t i = 0; tuple != NULL && i < n; i++) {
    PyObject *id = PyLong_FromLong(cpuexec_topology_processor_id(t, i));
    if (id == NULL) {
      Py_CLEAR(tuple);
      break;
    }
    PyTuple_SET_ITEM(tuple, i, id);
  }
  return tuple;
}

static PyGetSetDef topology_getset[] = {
    {"processor_count", get_processor_count, NULL, "visible logical processors"},
    {"core_count", get_core_count, NULL, "visible physical cores"},
    {"package_count", get_package_count, NULL, "visible packages"},
    {"kind_count", get_kind_count, NULL, "CPU kinds hwloc reports (0 or 1: unknown or homogeneous)"},
    {"smt_width", get_smt_width, NULL, "most visible logical processors on one core"},
    {"performance_core_count", get_performance_core_count, NULL, "visible cores of the most performant kind"},
    {"cpu_quota", get_cpu_quota, NULL, "the cgroup CPU quota in CPUs, or None when unlimited"},
    {"processors", get_processors, NULL, "OS indices of the visible processors, in hwloc's logical order"},
    {NULL},
};

static PyMethodDef topology_methods[] = {
    {"this_process", (PyCFunction)(void (*)(void))this_process, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "Topology.this_process(*, allowed=None, binding=None, quota=None, cgroup_root=None, proc_self_cgroup=None): "
     "the processors this process may run on (options override what is read from the process)."},
    {"from_xml", (PyCFunction)(void (*)(void))from_xml, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "Topology.from_xml(path, *, allowed=None, binding=None, caller=None, quota=None, cgroup_root=None, "
     "proc_self_cgroup=None): a stored hwloc XML topology. allowed/binding/caller are cpulists (\"0-3,8\" or a "
     "list of ids); quota is a CPU count."},
    {"from_synthetic", (PyCFunction)(void (*)(void))from_synthetic, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "Topology.from_synthetic(description, **options): an hwloc synthetic topology such as "
     "\"package:2 core:8 pu:2\"; options as from_xml."},
    {"describe", topology_describe, METH_NOARGS, "The summary cpuexec-info prints (text)."},
    {"to_json", topology_to_json, METH_NOARGS, "The summary as cpuexec-info --json writes it."},
    {"to_dict", topology_to_dict, METH_NOARGS, "json.loads(to_json())."},
    {NULL},
};

static PyType_Slot topology_slots[] = {
    {Py_tp_doc, "A process-visible CPU topology (immutable). Build with this_process(), from_xml() or "
                "from_synthetic()."},
    {Py_tp_new, topology_new},
    {Py_tp_dealloc, topology_dealloc},
    {Py_tp_getset, topology_getset},
    {Py_tp_methods, topology_methods},
    {0, NULL},
};

static PyType_Spec topology_spec = {
    .name = "cpuexec.Topology",
    .basicsize = sizeof(TopologyObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = topology_slots,
};

int cpx_topology_init_types(PyObject *module, cpx_state *st) {
  st->topology_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &topology_spec, NULL);
  if (st->topology_type == NULL)
    return -1;
  return PyModule_AddType(module, st->topology_type);
}
