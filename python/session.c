/* cpuexec.Session: a policy resolved and leased once (cpuexec_session);
 * `with session:` installs its executor on the calling thread for the block
 * (cpuexec_scope_enter/leave), so cpuexec.parallel_for and the OpenMP
 * regions the thread starts there (NumPy's OpenBLAS) follow the session.
 * Also the optional counters of its executor (cpuexec.Counters).
 *
 * One Session may be entered by several threads at once and re-entered on
 * one thread: each entry keeps its own cpuexec_scope (heap, so its address
 * is stable) in a list guarded by the GIL, and holds a reference to the
 * session so the executor outlives every scope that installs it. */
#include "module.h"

#include <stddef.h>
#include <pythread.h>

typedef struct scope_entry {
  struct scope_entry *next;
  unsigned long thread;
  cpuexec_scope scope;
} scope_entry;

typedef struct {
  PyObject_HEAD
  cpuexec_session *session;
  cpuexec_executor *exec;
  scope_entry *scopes; /* entered and not left, most recent first; the GIL guards it */
} SessionObject;

static PyObject *session_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  cpx_state *st = cpx_state_of_type(type);
  if (st == NULL)
    return NULL;
  static char *kw[] = {"policy_or_mapping", NULL};
  PyObject *policy_obj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Session", kw, &policy_obj))
    return NULL;
  cpuexec_policy policy;
  int is_default;
  if (cpx_policy_convert(st, policy_obj, &policy, &is_default) < 0)
    return NULL;
  SessionObject *self = (SessionObject *)type->tp_alloc(type, 0);
  if (self == NULL)
    return NULL;
  int rc;
  cpuexec_session *session = NULL;
  /* Resolving may load the topology and leasing may start workers. */
  Py_BEGIN_ALLOW_THREADS
  rc = cpuexec_session_create(is_default ? NULL : &policy, &session);
  Py_END_ALLOW_THREADS
  if (rc != 0) {
    Py_DECREF(self);
    return cpx_raise(st, rc);
  }
  self->session = session;
  self->exec = cpuexec_session_executor(session);
  return (PyObject *)self;
}

static void session_dealloc(PyObject *obj) {
  SessionObject *self = (SessionObject *)obj;
  PyTypeObject *type = Py_TYPE(obj);
  /* Every scope entry holds a reference, so none is left here. */
  cpuexec_session *session = self->session;
  if (session != NULL) {
    /* The last lease stops and joins the workers. */
    Py_BEGIN_ALLOW_THREADS
    cpuexec_session_destroy(session);
    Py_END_ALLOW_THREADS
  }
  type->tp_free(obj);
  Py_DECREF(type);
}

static PyObject *session_enter(PyObject *obj, PyObject *unused) {
  SessionObject *self = (SessionObject *)obj;
  cpx_state *st = cpx_state_of_type(Py_TYPE(obj));
  if (st == NULL)
    return NULL;
  scope_entry *e = PyMem_Calloc(1, sizeof *e);
  if (e == NULL)
    return PyErr_NoMemory();
  int rc = cpuexec_scope_enter(self->exec, &e->scope);
  if (rc != 0) {
    PyMem_Free(e);
    return cpx_raise(st, rc);
  }
  e->thread = PyThread_get_thread_ident();
  e->next = self->scopes;
  self->scopes = e;
  Py_INCREF(obj); /* the entry's reference */
  return Py_NewRef(obj);
}

static PyObject *session_exit(PyObject *obj, PyObject *args) {
  SessionObject *self = (SessionObject *)obj;
  cpx_state *st = cpx_state_of_type(Py_TYPE(obj));
  if (st == NULL)
    return NULL;
  unsigned long thread = PyThread_get_thread_ident();
  scope_entry **link = &self->scopes;
  while (*link != NULL && (*link)->thread != thread)
    link = &(*link)->next;
  if (*link == NULL)
    return cpx_error(st, CPUEXEC_ESTATE, "session: __exit__ on a thread that has not entered it");
  scope_entry *e = *link;
  int rc = cpuexec_scope_leave(&e->scope);
  if (rc != 0)
    return cpx_raise(st, rc); /* left out of order: the entry stays, so leaving in order still works */
  *link = e->next;
  PyMem_Free(e);
  Py_DECREF(obj); /* the entry's reference; the caller still holds one */
  Py_RETURN_FALSE;
}

static PyObject *session_enable_counters(PyObject *obj, PyObject *unused) {
  SessionObject *self = (SessionObject *)obj;
  cpx_state *st = cpx_state_of_type(Py_TYPE(obj));
  if (st == NULL)
    return NULL;
  int rc = cpuexec_executor_counters_enable(self->exec);
  if (rc != 0)
    return cpx_raise(st, rc);
  Py_RETURN_NONE;
}

static PyObject *session_counters(PyObject *obj, PyObject *unused) {
  SessionObject *self = (SessionObject *)obj;
  cpx_state *st = cpx_state_of_type(Py_TYPE(obj));
  if (st == NULL)
    return NULL;
  cpuexec_counters c;
  int rc = cpuexec_executor_counters_get(self->exec, &c);
  if (rc != 0)
    return cpx_raise(st, rc);
  /* Every field of cpuexec_counters, in its order (counters_fields): the
   * first 8 are the tuple; the rest are named only (counters_desc). */
  const uint64_t values[] = {c.dispatches,         c.nested_inline,    c.limited_inline, c.spins_found_work,
                             c.parks,              c.wakeups,          c.caller_waits,   c.worker_active_ns,
                             c.takeovers,          c.late_arrivals,    c.cadence_hits,   c.cadence_misses,
                             c.concurrent_regions, c.participants_run, c.caller_wait_ns, c.bound_inline,
                             c.occupied_inline,    c.stood_aside,      c.step_offs,      c.long_spins,
                             c.parallel_regions,   c.node_slots_taken, c.node_slot_waits};
  _Static_assert(sizeof values == offsetof(cpuexec_counters, reserved_more_), "every counter, once");
  PyObject *s = PyStructSequence_New(st->counters_type);
  if (s == NULL)
    return NULL;
  for (Py_ssize_t i = 0; i < (Py_ssize_t)(sizeof values / sizeof values[0]); i++) {
    PyObject *v = PyLong_FromUnsignedLongLong(values[i]);
    if (v == NULL) {
      Py_DECREF(s);
      return NULL;
    }
    PyStructSequence_SET_ITEM(s, i, v);
  }
  return s;
}

static PyObject *get_resolution(PyObject *obj, void *c) {
  SessionObject *self = (SessionObject *)obj;
  cpx_state *st = cpx_state_of_type(Py_TYPE(obj));
  if (st == NULL)
    return NULL;
  const cpuexec_resolved *r = cpuexec_executor_resolved(self->exec);
  if (r == NULL)
    Py_RETURN_NONE;
  /* Borrowed from the executor, which this session's lease keeps alive. */
  return cpx_resolution_wrap(st, NULL, r, obj);
}

static PyObject *get_identity(PyObject *obj, void *c) {
  const char *key = cpuexec_resolved_sharing_key(cpuexec_executor_resolved(((SessionObject *)obj)->exec));
  if (key == NULL)
    Py_RETURN_NONE;
  return PyUnicode_FromString(key);
}

static PyObject *get_executor_id(PyObject *obj, void *c) {
  return PyLong_FromUnsignedLongLong(cpuexec_executor_id(((SessionObject *)obj)->exec));
}

static PyObject *get_effective_threads(PyObject *obj, void *c) {
  return PyLong_FromUnsignedLong(cpuexec_executor_effective_threads(((SessionObject *)obj)->exec));
}

static PyObject *session_repr(PyObject *obj) {
  SessionObject *self = (SessionObject *)obj;
  return PyUnicode_FromFormat("<cpuexec.Session executor_id=%llu effective_threads=%u>",
                              (unsigned long long)cpuexec_executor_id(self->exec),
                              (unsigned)cpuexec_executor_effective_threads(self->exec));
}

static PyGetSetDef session_getset[] = {
    {"resolution", get_resolution, NULL, "the cpuexec.Resolution its executor runs"},
    {"identity", get_identity, NULL, "the sharing key: sessions with equal identities share one executor"},
    {"executor_id", get_executor_id, NULL, "the process-local id of its executor (never reused)"},
    {"effective_threads", get_effective_threads, NULL, "participants of its executor, the caller included"},
    {NULL},
};

static PyMethodDef session_methods[] = {
    {"__enter__", session_enter, METH_NOARGS, "Installs the executor on this thread until __exit__."},
    {"__exit__", session_exit, METH_VARARGS, "Restores what was installed before."},
    {"enable_counters", session_enable_counters, METH_NOARGS,
     "Turns counting on for the shared executor (every compatible session sees it) until it is destroyed."},
    {"counters", session_counters, METH_NOARGS, "A cpuexec.Counters snapshot (all zero while counting is off)."},
    {NULL},
};

static PyType_Slot session_slots[] = {
    {Py_tp_doc, "Session(policy_or_mapping=None)\n\nResolves the policy and leases a shared executor (None: the "
                "executor installed on this thread, else the process default). `with session:` installs it on "
                "the calling thread for the block."},
    {Py_tp_new, session_new},
    {Py_tp_dealloc, session_dealloc},
    {Py_tp_repr, session_repr},
    {Py_tp_getset, session_getset},
    {Py_tp_methods, session_methods},
    {0, NULL},
};

static PyType_Spec session_spec = {
    .name = "cpuexec.Session",
    .basicsize = sizeof(SessionObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = session_slots,
};

static PyStructSequence_Field counters_fields[] = {
    {"dispatches", "parallel regions opened to workers"},
    {"nested_inline", "calls made inside a callback, run inline"},
    {"limited_inline", "calls run inline because the work admitted one participant"},
    {"spins_found_work", "waits that ended while spinning"},
    {"parks", "waits that parked in the kernel"},
    {"wakeups", "wake system calls made by dispatches"},
    {"caller_waits", "times the caller waited for workers to finish"},
    {"worker_active_ns", "time workers spent running callbacks"},
    {"takeovers", "reserved ranges run by another participant: their worker had not checked in"},
    {"late_arrivals", "times a worker woke to a region whose share was already taken"},
    {"cadence_hits", "regions that found a worker spinning in its cadence window"},
    {"cadence_misses", "cadence windows that ended without a region, or regions that came before theirs"},
    {"concurrent_regions", "regions that ran in a lane beside the lane-0 region of another caller"},
    {"participants_run", "participants that ran in dispatched regions (the caller and the workers that checked "
                         "in), summed over regions: the executed participants, not the admitted ones"},
    {"caller_wait_ns", "time callers waited, after their share, for workers to finish"},
    {"bound_inline", "calls run inline on the caller because the executor ran its most regions already"},
    {"occupied_inline", "calls run on the caller alone because the callers running regions on the executor "
                        "already occupied every one of its threads, or the node's budget had no slot for a worker"},
    {"stood_aside", "times a worker left a region to its caller for the same reason"},
    {"step_offs", "times a free caller moved off its processor so that a worker could run there"},
    {"long_spins", "waits that spun on past the policy's spin (adaptive only): while the thread waited for ran, "
                   "or through the short gaps between regions a worker keeps seeing"},
    {"parallel_regions", "regions in which more than one participant ran a part of the work: the count that "
                         "says whether work went parallel (dispatches also counts regions whose caller ran "
                         "every chunk before a worker checked in)"},
    {"node_slots_taken", "slots of the node's budget (and make's jobserver tokens) a worker took to run or spin"},
    {"node_slot_waits", "times the node's budget was full: a region it cut to fewer participants, or a worker "
                        "that found no slot to join or spin with"},
    {NULL, NULL},
};

static PyStructSequence_Desc counters_desc = {"cpuexec.Counters", "A snapshot of an executor's optional counters.",
                                              counters_fields, 8};

int cpx_session_init_types(PyObject *module, cpx_state *st) {
  st->session_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &session_spec, NULL);
  if (st->session_type == NULL || PyModule_AddType(module, st->session_type) < 0)
    return -1;
  st->counters_type = PyStructSequence_NewType(&counters_desc);
  if (st->counters_type == NULL)
    return -1;
  return PyModule_AddType(module, st->counters_type);
}
