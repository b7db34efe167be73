/* cpuexec.resolve() and cpuexec.Resolution: what a request becomes on a
 * topology (immutable), with cpuexec.Spin for the waiting behaviour. The
 * text and JSON are the library's own, so they equal cpuexec-info's. */
#include "module.h"

#include <string.h>

typedef struct {
  PyObject_HEAD
  cpuexec_resolved *owned;     /* destroyed with the object, or NULL */
  const cpuexec_resolved *r;   /* owned, or borrowed from owner */
  PyObject *owner;             /* keeps a borrowed resolution alive, or NULL */
} ResolutionObject;

PyObject *cpx_describe(cpx_state *st, int (*describe)(const void *, cpuexec_format, char *, size_t),
                       const void *object, cpuexec_format format) {
  int n = describe(object, format, NULL, 0);
  if (n < 0)
    return cpx_raise(st, n);
  char *text = PyMem_Malloc((size_t)n + 1);
  if (text == NULL)
    return PyErr_NoMemory();
  describe(object, format, text, (size_t)n + 1);
  while (n > 0 && text[n - 1] == '\n')
    n--;
  PyObject *s = PyUnicode_DecodeUTF8(text, n, "replace");
  PyMem_Free(text);
  return s;
}

PyObject *cpx_resolution_wrap(cpx_state *st, cpuexec_resolved *owned, const cpuexec_resolved *borrowed,
                              PyObject *owner) {
  ResolutionObject *self = PyObject_New(ResolutionObject, st->resolution_type);
  if (self == NULL) {
    cpuexec_resolved_destroy(owned);
    return NULL;
  }
  self->owned = owned;
  self->r = owned != NULL ? owned : borrowed;
  self->owner = Py_XNewRef(owner);
  return (PyObject *)self;
}

PyObject *cpx_resolve(PyObject *module, PyObject *args, PyObject *kwargs) {
  cpx_state *st = cpx_state_of_module(module);
  static char *kw[] = {"policy_or_mapping", "topology", NULL};
  PyObject *policy_obj = Py_None, *topology_obj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:resolve", kw, &policy_obj, &topology_obj))
    return NULL;
  cpuexec_policy policy;
  int is_default;
  if (cpx_policy_convert(st, policy_obj, &policy, &is_default) < 0)
    return NULL;
  const cpuexec_topology *topology = NULL;
  if (topology_obj != Py_None && (topology = cpx_topology_get(st, topology_obj)) == NULL)
    return NULL;
  cpuexec_resolved *resolved = NULL;
  int rc;
  /* The topology object stays alive: args holds it for the whole call. */
  Py_BEGIN_ALLOW_THREADS
  rc = cpuexec_policy_resolve(is_default ? NULL : &policy, topology, &resolved);
  Py_END_ALLOW_THREADS
  if (rc != 0)
    return cpx_raise(st, rc);
  return cpx_resolution_wrap(st, resolved, NULL, NULL);
}

static PyObject *resolution_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  PyErr_SetString(PyExc_TypeError, "use cpuexec.resolve(policy) or Session.resolution");
  return NULL;
}

static void resolution_dealloc(PyObject *self) {
  ResolutionObject *r = (ResolutionObject *)self;
  PyTypeObject *type = Py_TYPE(self);
  cpuexec_resolved_destroy(r->owned);
  Py_XDECREF(r->owner);
  type->tp_free(self);
  Py_DECREF(type);
}

#define R(self) (((ResolutionObject *)(self))->r)

static PyObject *get_request(PyObject *self, void *c) {
  cpx_state *st = cpx_state_of_type(Py_TYPE(self));
  return st ? cpx_policy_wrap(st, cpuexec_resolved_request(R(self))) : NULL;
}

static PyObject *get_effective_threads(PyObject *self, void *c) {
  return PyLong_FromUnsignedLong(cpuexec_resolved_effective_threads(R(self)));
}

static PyObject *get_caller_processor(PyObject *self, void *c) {
  int32_t p = cpuexec_resolved_caller_processor(R(self));
  if (p < 0)
    Py_RETURN_NONE;
  return PyLong_FromLong(p);
}

static PyObject *get_worker_processors(PyObject *self, void *c) {
  int32_t n = 0;
  const int32_t *ids = cpuexec_resolved_worker_processors(R(self), &n);
  PyObject *t = PyTuple_New(n);
  for (int32_t i = 0; t != NULL && i < n; i++) {
    PyObject *id = PyLong_FromLong(ids[i]);
    if (id == NULL) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, i, id);
  }
  return t;
}

static PyObject *get_uses_smt(PyObject *self, void *c) { return PyBool_FromLong(cpuexec_resolved_uses_smt(R(self))); }
static PyObject *get_uses_efficiency_cores(PyObject *self, void *c) {
  return PyBool_FromLong(cpuexec_resolved_uses_efficiency_cores(R(self)));
}
static PyObject *get_allows_nesting(PyObject *self, void *c) {
  return PyBool_FromLong(cpuexec_resolved_allows_nesting(R(self)));
}

static PyObject *get_spin(PyObject *self, void *c) {
  cpx_state *st = cpx_state_of_type(Py_TYPE(self));
  if (st == NULL)
    return NULL;
  cpuexec_resolved_spin spin = cpuexec_resolved_spin_behaviour(R(self));
  PyObject *s = PyStructSequence_New(st->spin_type);
  if (s == NULL)
    return NULL;
  PyObject *fields[5] = {cpx_spin_member(st, spin.policy), PyLong_FromUnsignedLongLong(spin.spin_ns),
                         PyLong_FromUnsignedLongLong(spin.spin_iterations),
                         PyBool_FromLong(spin.park_when_oversubscribed),
                         PyLong_FromUnsignedLong(spin.cadence_burn_permille)};
  int failed = 0;
  for (int i = 0; i < 5; i++) {
    if (fields[i] == NULL)
      failed = 1;
    else
      PyStructSequence_SET_ITEM(s, i, fields[i]);
  }
  if (failed) {
    /* Unset items are NULL, which the struct sequence's dealloc skips. */
    Py_DECREF(s);
    return NULL;
  }
  return s;
}

static PyObject *get_diagnostics(PyObject *self, void *c) {
  size_t n = cpuexec_resolved_diagnostic_count(R(self));
  PyObject *t = PyTuple_New((Py_ssize_t)n);
  for (size_t i = 0; t != NULL && i < n; i++) {
    const char *d = cpuexec_resolved_diagnostic(R(self), i);
    PyObject *s = PyUnicode_DecodeUTF8(d, (Py_ssize_t)strlen(d), "replace");
    if (s == NULL) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, (Py_ssize_t)i, s);
  }
  return t;
}

static PyObject *get_identity(PyObject *self, void *c) {
  const char *key = cpuexec_resolved_sharing_key(R(self));
  return PyUnicode_DecodeUTF8(key, (Py_ssize_t)strlen(key), "replace");
}

static int describe_resolved(const void *r, cpuexec_format f, char *b, size_t s) {
  return cpuexec_resolved_describe(r, f, b, s);
}

static PyObject *resolution_describe(PyObject *self, PyObject *unused) {
  cpx_state *st = cpx_state_of_type(Py_TYPE(self));
  return st ? cpx_describe(st, describe_resolved, R(self), CPUEXEC_FORMAT_TEXT) : NULL;
}

static PyObject *resolution_to_json(PyObject *self, PyObject *unused) {
  cpx_state *st = cpx_state_of_type(Py_TYPE(self));
  return st ? cpx_describe(st, describe_resolved, R(self), CPUEXEC_FORMAT_JSON) : NULL;
}

static PyObject *resolution_to_dict(PyObject *self, PyObject *unused) {
  cpx_state *st = cpx_state_of_type(Py_TYPE(self));
  PyObject *json = st ? resolution_to_json(self, NULL) : NULL;
  if (json == NULL)
    return NULL;
  PyObject *d = PyObject_CallOneArg(st->json_loads, json);
  Py_DECREF(json);
  return d;
}

static PyObject *resolution_repr(PyObject *self) {
  PyObject *identity = get_identity(self, NULL);
  PyObject *caller = identity ? get_caller_processor(self, NULL) : NULL;
  PyObject *r = caller ? PyUnicode_FromFormat("<cpuexec.Resolution effective_threads=%u caller_processor=%R "
                                              "identity=%R>",
                                              (unsigned)cpuexec_resolved_effective_threads(R(self)), caller, identity)
                       : NULL;
  Py_XDECREF(identity);
  Py_XDECREF(caller);
  return r;
}

static PyGetSetDef resolution_getset[] = {
    {"request", get_request, NULL, "the cpuexec.Policy that was resolved"},
    {"effective_threads", get_effective_threads, NULL, "participants, the caller included"},
    {"caller_processor", get_caller_processor, NULL, "the caller's processor, or None when it is not placed"},
    {"worker_processors", get_worker_processors, NULL, "worker k runs on worker_processors[k-1]; () without affinity"},
    {"uses_smt", get_uses_smt, NULL, "two placed participants share a physical core"},
    {"uses_efficiency_cores", get_uses_efficiency_cores, NULL, "a placed participant is on a less performant kind"},
    {"allows_nesting", get_allows_nesting, NULL, "allow_nested_parallelism as recorded in the sharing key"},
    {"spin", get_spin, NULL, "what a waiting thread does (cpuexec.Spin)"},
    {"diagnostics", get_diagnostics, NULL, "every fallback taken and input ignored (tuple of str)"},
    {"identity", get_identity, NULL, "the behaviour-only sharing key: equal keys share one executor"},
    {NULL},
};

static PyMethodDef resolution_methods[] = {
    {"describe", resolution_describe, METH_NOARGS, "The resolution as cpuexec-info prints it (text)."},
    {"to_json", resolution_to_json, METH_NOARGS, "The resolution as cpuexec-info --json writes it."},
    {"to_dict", resolution_to_dict, METH_NOARGS, "json.loads(to_json())."},
    {NULL},
};

static PyType_Slot resolution_slots[] = {
    {Py_tp_doc, "An immutable resolution of a policy on a topology (cpuexec.resolve, Session.resolution)."},
    {Py_tp_new, resolution_new},
    {Py_tp_dealloc, resolution_dealloc},
    {Py_tp_repr, resolution_repr},
    {Py_tp_getset, resolution_getset},
    {Py_tp_methods, resolution_methods},
    {0, NULL},
};

static PyType_Spec resolution_spec = {
    .name = "cpuexec.Resolution",
    .basicsize = sizeof(ResolutionObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = resolution_slots,
};

static PyStructSequence_Field spin_fields[] = {
    {"policy", "the requested cpuexec.SpinPolicy"},
    {"spin_ns", "time spun before parking (0: parks at once; fixed_iterations: 0)"},
    {"spin_iterations", "fixed_iterations: pause iterations before parking; else 0"},
    {"park_when_oversubscribed", "adaptive: parks at once when the participants outnumber the visible processors (decided when the executor is made)"},
    {"cadence_burn_permille", "adaptive: follows a steady call cadence, spinning at most this many thousandths of each worker's time; 0: never"},
    {NULL, NULL},
};

static PyStructSequence_Desc spin_desc = {"cpuexec.Spin", "What a waiting thread will do.", spin_fields, 4};

int cpx_resolution_init_types(PyObject *module, cpx_state *st) {
  st->resolution_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &resolution_spec, NULL);
  if (st->resolution_type == NULL || PyModule_AddType(module, st->resolution_type) < 0)
    return -1;
  st->spin_type = PyStructSequence_NewType(&spin_desc);
  if (st->spin_type == NULL)
    return -1;
  return PyModule_AddType(module, st->spin_type);
}
