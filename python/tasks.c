/* cpuexec.TaskGroup: a task group (cpuexec/tasks.h) on the executor
 * installed on the creating thread (a Session's, inside `with session:`;
 * none: tasks run at submit). submit(fn, *args) queues fn(*args); wait()
 * runs queued tasks on this thread too and raises the first exception a
 * task raised; `with TaskGroup() as g:` waits at the end of the block.
 *
 * Each task takes the GIL for its Python call, so tasks parallelise only
 * work that releases it. The tasks a group holds (function and arguments)
 * are kept in a list owned by the group, guarded by the GIL, and dropped at
 * the end of every wait: a task skipped after a failure is never called,
 * and still released. wait() and the destructor release the GIL while
 * libcpuexec waits. */
#include "module.h"

typedef struct task_item {
  struct task_item *next;
  PyObject *owner; /* the TaskGroupObject (borrowed: it outlives its tasks) */
  PyObject *fn, *args;
} task_item;

typedef struct {
  PyObject_HEAD
  cpuexec_task_group *group;
  task_item *items;                        /* submitted since the last wait; the GIL guards it */
  PyObject *exc_type, *exc_value, *exc_tb; /* the first exception a task raised; the GIL guards it */
} TaskGroupObject;

static int run_item(void *ctx) {
  task_item *t = ctx;
  PyGILState_STATE gil = PyGILState_Ensure();
  TaskGroupObject *g = (TaskGroupObject *)t->owner;
  int rc = 1;
  if (g->exc_type == NULL) {
    PyObject *r = PyObject_Call(t->fn, t->args, NULL);
    if (r != NULL) {
      Py_DECREF(r);
      rc = 0;
    } else if (g->exc_type == NULL) {
      PyErr_Fetch(&g->exc_type, &g->exc_value, &g->exc_tb);
    } else {
      PyErr_Clear();
    }
  }
  PyGILState_Release(gil);
  return rc;
}

static void drop_items(TaskGroupObject *self) {
  task_item *t = self->items;
  self->items = NULL;
  while (t) {
    task_item *next = t->next;
    Py_DECREF(t->fn);
    Py_DECREF(t->args);
    PyMem_Free(t);
    t = next;
  }
}

static PyObject *task_group_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  cpx_state *st = cpx_state_of_type(type);
  if (st == NULL)
    return NULL;
  static char *kw[] = {"max_concurrency", "queue_capacity", NULL};
  PyObject *cap_obj = NULL, *queue_obj = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:TaskGroup", kw, &cap_obj, &queue_obj))
    return NULL;
  int64_t cap = 0, queue = 0;
  if ((cap_obj != NULL && cpx_int64_arg(st, cap_obj, "max_concurrency", 0, INT32_MAX, &cap) < 0) ||
      (queue_obj != NULL && cpx_int64_arg(st, queue_obj, "queue_capacity", 0, INT32_MAX, &queue) < 0))
    return NULL;
  cpuexec_task_group_options o;
  cpuexec_task_group_options_init(&o);
  o.max_concurrency = (int32_t)cap;
  o.queue_capacity = (int32_t)queue;
  TaskGroupObject *self = (TaskGroupObject *)type->tp_alloc(type, 0);
  if (self == NULL)
    return NULL;
  int rc = cpuexec_task_group_create(cpuexec_executor_current(), &o, &self->group);
  if (rc != 0) {
    Py_DECREF(self);
    return cpx_raise(st, rc);
  }
  return (PyObject *)self;
}

/* Waits with the GIL released; 0 or the group's result. */
static int wait_released(TaskGroupObject *self) {
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = cpuexec_task_group_wait(self->group);
  Py_END_ALLOW_THREADS
  return rc;
}

static void task_group_dealloc(PyObject *obj) {
  TaskGroupObject *self = (TaskGroupObject *)obj;
  PyTypeObject *type = Py_TYPE(obj);
  if (self->group != NULL) {
    cpuexec_task_group *group = self->group;
    Py_BEGIN_ALLOW_THREADS
    cpuexec_task_group_destroy(group);
    Py_END_ALLOW_THREADS
  }
  drop_items(self);
  Py_XDECREF(self->exc_type);
  Py_XDECREF(self->exc_value);
  Py_XDECREF(self->exc_tb);
  type->tp_free(obj);
  Py_DECREF(type);
}

static PyObject *task_group_submit(PyObject *obj, PyObject *args) {
  TaskGroupObject *self = (TaskGroupObject *)obj;
  cpx_state *st = cpx_state_of_type(Py_TYPE(obj));
  if (st == NULL)
    return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (n < 1 || !PyCallable_Check(PyTuple_GET_ITEM(args, 0))) {
    PyErr_SetString(PyExc_TypeError, "submit(fn, *args): fn must be callable");
    return NULL;
  }
  task_item *t = PyMem_Malloc(sizeof *t);
  if (t == NULL)
    return PyErr_NoMemory();
  t->owner = obj;
  t->fn = Py_NewRef(PyTuple_GET_ITEM(args, 0));
  t->args = PyTuple_GetSlice(args, 1, n);
  if (t->args == NULL) {
    Py_DECREF(t->fn);
    PyMem_Free(t);
    return NULL;
  }
  t->next = self->items;
  self->items = t;
  /* Quick, and a full queue runs the task here, taking the GIL we hold. */
  int rc = cpuexec_task_group_submit(self->group, t, run_item);
  if (rc != 0)
    return cpx_raise(st, rc);
  Py_RETURN_NONE;
}

static PyObject *finish_wait(TaskGroupObject *self, int rc) {
  cpx_state *st = cpx_state_of_type(Py_TYPE((PyObject *)self));
  if (rc == CPUEXEC_EBUSY) /* refused (from inside one of its tasks): its tasks still run */
    return st ? cpx_raise(st, rc) : NULL;
  drop_items(self);
  if (self->exc_type != NULL) {
    PyErr_Restore(self->exc_type, self->exc_value, self->exc_tb);
    self->exc_type = self->exc_value = self->exc_tb = NULL;
    return NULL;
  }
  if (rc != 0)
    return st ? cpx_raise(st, rc) : NULL;
  Py_RETURN_NONE;
}

static PyObject *task_group_wait(PyObject *obj, PyObject *unused) {
  TaskGroupObject *self = (TaskGroupObject *)obj;
  return finish_wait(self, wait_released(self));
}

static PyObject *task_group_enter(PyObject *obj, PyObject *unused) { return Py_NewRef(obj); }

static PyObject *task_group_exit(PyObject *obj, PyObject *args) {
  TaskGroupObject *self = (TaskGroupObject *)obj;
  PyObject *r = finish_wait(self, wait_released(self));
  if (r == NULL)
    return NULL;
  Py_DECREF(r);
  Py_RETURN_FALSE;
}

static PyMethodDef task_group_methods[] = {
    {"submit", task_group_submit, METH_VARARGS,
     "submit(fn, *args)\n\nQueues fn(*args) (a full queue runs it now, on this thread)."},
    {"wait", task_group_wait, METH_NOARGS,
     "Runs queued tasks on this thread too, returns when every task ran, and raises the first exception a "
     "task raised (tasks not started after it are dropped)."},
    {"__enter__", task_group_enter, METH_NOARGS, "The group itself."},
    {"__exit__", task_group_exit, METH_VARARGS, "Waits (as wait())."},
    {NULL},
};

static PyType_Slot task_group_slots[] = {
    {Py_tp_doc, "TaskGroup(max_concurrency=0, queue_capacity=0)\n\nIndependent tasks on the workers of the "
                "executor installed on this thread (inside `with session:`), at most max_concurrency workers "
                "at once (0: all of them), queue_capacity queued tasks (0: 1024)."},
    {Py_tp_new, task_group_new},
    {Py_tp_dealloc, task_group_dealloc},
    {Py_tp_methods, task_group_methods},
    {0, NULL},
};

static PyType_Spec task_group_spec = {
    .name = "cpuexec.TaskGroup",
    .basicsize = sizeof(TaskGroupObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = task_group_slots,
};

int cpx_tasks_init_types(PyObject *module, cpx_state *st) {
  st->task_group_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &task_group_spec, NULL);
  if (st->task_group_type == NULL)
    return -1;
  return PyModule_AddType(module, st->task_group_type);
}
