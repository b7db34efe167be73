/* cpuexec.Policy (the request, immutable), cpuexec.SpinPolicy and
 * cpuexec.AffinityPolicy (enum.Enum, values are the text grammar's names).
 *
 * Every way of building a policy (keywords, a mapping, text) ends in one
 * cpuexec_policy checked by cpuexec_policy_validate(), so the messages are
 * the library's. Values given as strings in the grammar (enum names, a
 * spin_budget such as "50us", a cpu_set such as "0,2-3") are read by
 * cpuexec_policy_parse() itself, one key at a time. */
#include "module.h"

#include <string.h>

typedef struct {
  PyObject_HEAD
  cpuexec_policy policy;
} PolicyObject;

enum {
  F_NUM_THREADS,
  F_SPIN_POLICY,
  F_SPIN_BUDGET,
  F_AFFINITY_POLICY,
  F_CPU_SET,
  F_NESTED,
  F_FPENV,
  F_PARTICIPATION,
  F_NODE_BUDGET,
  F_COUNT
};
static const char *const field_names[F_COUNT] = {"num_threads",     "spin_policy", "spin_budget",
                                                 "affinity_policy", "cpu_set",     "allow_nested_parallelism",
                                                 "inherit_fp_environment", "participation", "node_budget"};
#define FIELD_LIST                                                                                          \
  "num_threads, spin_policy, spin_budget, affinity_policy, cpu_set, allow_nested_parallelism, "               \
  "inherit_fp_environment, participation, node_budget"

/* Grammar strings longer than this are not valid names, budgets or lists
 * worth parsing; the message quotes them briefly. */
#define TEXT_VALUE_MAX 16384

PyObject *cpx_spin_member(cpx_state *st, cpuexec_spin_policy spin) {
  const char *name = cpuexec_spin_policy_name(spin);
  if (name == NULL)
    Py_RETURN_NONE;
  return PyObject_CallFunction(st->spin_enum, "s", name);
}

PyObject *cpx_affinity_member(cpx_state *st, cpuexec_affinity_policy affinity) {
  const char *name = cpuexec_affinity_policy_name(affinity);
  if (name == NULL)
    Py_RETURN_NONE;
  return PyObject_CallFunction(st->affinity_enum, "s", name);
}

/* The UTF-8 of a str value that can go into policy text: no NUL, none of
 * the characters in forbidden, not huge. NULL with InvalidArgument set
 * otherwise (TypeError is the caller's business). */
static const char *text_value(cpx_state *st, PyObject *value, const char *field, const char *forbidden) {
  Py_ssize_t size;
  const char *s = PyUnicode_AsUTF8AndSize(value, &size);
  if (s == NULL)
    return NULL;
  if ((size_t)size != strlen(s)) {
    cpx_invalid(st, "%s: %.40R contains a NUL character", field, value);
    return NULL;
  }
  if (size > TEXT_VALUE_MAX) {
    cpx_invalid(st, "%s: a string of %zd characters is no valid value", field, size);
    return NULL;
  }
  if (strpbrk(s, forbidden) != NULL) {
    cpx_invalid(st, "%s: %.60R holds one of \"%s\", which no %s value does", field, value, forbidden, field);
    return NULL;
  }
  return s;
}

/* Runs the library's parser on "prefix" "value" and returns the policy it
 * read; its message names the key, the value and what is allowed. */
static int parse_pair(cpx_state *st, const char *prefix, const char *value, cpuexec_policy *out) {
  size_t n = strlen(prefix) + strlen(value) + 1;
  char *text = PyMem_Malloc(n);
  if (text == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  snprintf(text, n, "%s%s", prefix, value);
  int rc = cpuexec_policy_parse(text, out);
  PyMem_Free(text);
  if (rc != 0) {
    cpx_raise(st, rc);
    return -1;
  }
  return 0;
}

/* spin_policy / affinity_policy: an enum member or its string. */
static int enum_arg(cpx_state *st, PyObject *value, int field, int *out) {
  PyObject *cls = field == F_SPIN_POLICY ? st->spin_enum : st->affinity_enum;
  int is_member = PyObject_IsInstance(value, cls);
  if (is_member < 0)
    return -1;
  PyObject *str = is_member ? PyObject_GetAttrString(value, "value") : Py_NewRef(value);
  if (str == NULL)
    return -1;
  int rc = -1;
  if (!PyUnicode_Check(str)) {
    PyErr_Format(PyExc_TypeError, "%s: got %.100s; use a cpuexec.%s member or its name as a str", field_names[field],
                 Py_TYPE(value)->tp_name, field == F_SPIN_POLICY ? "SpinPolicy" : "AffinityPolicy");
    goto done;
  }
  const char *s = text_value(st, str, field_names[field], ",=");
  if (s == NULL)
    goto done;
  for (int v = 0;; v++) {
    const char *name = field == F_SPIN_POLICY ? cpuexec_spin_policy_name((cpuexec_spin_policy)v)
                                              : cpuexec_affinity_policy_name((cpuexec_affinity_policy)v);
    if (name == NULL)
      break;
    if (strcmp(name, s) == 0) {
      *out = v;
      rc = 0;
      goto done;
    }
  }
  /* Not a name: the parser says so, naming the key and the names allowed. */
  char prefix[40];
  snprintf(prefix, sizeof prefix, "%s=", field_names[field]);
  cpuexec_policy parsed;
  if (parse_pair(st, prefix, s, &parsed) == 0)
    cpx_invalid(st, "%s: %.60R is not accepted", field_names[field], str);
done:
  Py_DECREF(str);
  return rc;
}

/* cpu_set: a str cpulist ("0,2-3"), or an ordered iterable of ints. */
static int cpu_set_arg(cpx_state *st, PyObject *value, cpuexec_policy *p) {
  if (PyUnicode_Check(value)) {
    const char *s = text_value(st, value, "cpu_set", "=");
    if (s == NULL)
      return -1;
    if (*s == '\0') {
      p->cpu_set_count = 0;
      return 0;
    }
    cpuexec_policy parsed;
    if (parse_pair(st, "affinity_policy=explicit,cpu_set=", s, &parsed) < 0)
      return -1;
    p->cpu_set_count = parsed.cpu_set_count;
    memcpy(p->cpu_set, parsed.cpu_set, parsed.cpu_set_count * sizeof p->cpu_set[0]);
    return 0;
  }
  if (PyAnySet_Check(value) || PyDict_Check(value) || PyBytes_Check(value) || PyByteArray_Check(value)) {
    PyErr_Format(PyExc_TypeError,
                 "cpu_set: got %.100s; use a list or tuple of processor ids (the caller's first) or a cpulist str",
                 Py_TYPE(value)->tp_name);
    return -1;
  }
  PyObject *it = PyObject_GetIter(value);
  if (it == NULL) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "cpu_set: got %.100s; use a list or tuple of processor ids or a cpulist str",
                 Py_TYPE(value)->tp_name);
    return -1;
  }
  uint32_t n = 0;
  PyObject *item;
  while ((item = PyIter_Next(it)) != NULL) {
    if (n == CPUEXEC_CPU_SET_MAX) {
      Py_DECREF(item);
      Py_DECREF(it);
      cpx_invalid(st, "cpu_set: more than %d entries; at most %d", CPUEXEC_CPU_SET_MAX, CPUEXEC_CPU_SET_MAX);
      return -1;
    }
    int64_t id;
    int rc = cpx_int64_arg(st, item, "cpu_set entry", INT32_MIN, INT32_MAX, &id);
    Py_DECREF(item);
    if (rc < 0) {
      Py_DECREF(it);
      return -1;
    }
    p->cpu_set[n++] = (int32_t)id;
  }
  Py_DECREF(it);
  if (PyErr_Occurred())
    return -1;
  p->cpu_set_count = (int32_t)n;
  return 0;
}

/* Applies the given fields (values[f] NULL: keep base's) and validates. */
static int policy_from_fields(cpx_state *st, PyObject *const values[F_COUNT], const cpuexec_policy *base,
                              cpuexec_policy *out) {
  cpuexec_policy p = *base;
  int64_t num_threads;
  int e;
  if (values[F_NUM_THREADS] != NULL) {
    if (cpx_int64_arg(st, values[F_NUM_THREADS], "num_threads", INT32_MIN, INT32_MAX, &num_threads) < 0)
      return -1;
    p.num_threads = (int32_t)num_threads;
  }
  if (values[F_SPIN_POLICY] != NULL) {
    if (enum_arg(st, values[F_SPIN_POLICY], F_SPIN_POLICY, &e) < 0)
      return -1;
    p.spin_policy = (cpuexec_spin_policy)e;
  }
  if (values[F_AFFINITY_POLICY] != NULL) {
    if (enum_arg(st, values[F_AFFINITY_POLICY], F_AFFINITY_POLICY, &e) < 0)
      return -1;
    p.affinity_policy = (cpuexec_affinity_policy)e;
  }
  PyObject *budget = values[F_SPIN_BUDGET];
  if (budget != NULL && PyUnicode_Check(budget)) {
    /* The grammar reads a budget against the spin policy (count or duration). */
    const char *s = text_value(st, budget, "spin_budget", ",=");
    if (s == NULL)
      return -1;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "spin_policy=%s,spin_budget=", cpuexec_spin_policy_name(p.spin_policy));
    cpuexec_policy parsed;
    if (parse_pair(st, prefix, s, &parsed) < 0)
      return -1;
    p.spin_budget = parsed.spin_budget;
  } else if (budget != NULL && cpx_uint64_arg(st, budget, "spin_budget", &p.spin_budget) < 0) {
    return -1;
  }
  if (values[F_CPU_SET] != NULL && cpu_set_arg(st, values[F_CPU_SET], &p) < 0)
    return -1;
  if (values[F_NESTED] != NULL) {
    if (!PyBool_Check(values[F_NESTED])) {
      PyErr_Format(PyExc_TypeError, "allow_nested_parallelism: got %.100s; use True or False",
                   Py_TYPE(values[F_NESTED])->tp_name);
      return -1;
    }
    p.allow_nested_parallelism = values[F_NESTED] == Py_True;
  }
  if (values[F_FPENV] != NULL) {
    if (!PyBool_Check(values[F_FPENV])) {
      PyErr_Format(PyExc_TypeError, "inherit_fp_environment: got %.100s; use True or False",
                   Py_TYPE(values[F_FPENV])->tp_name);
      return -1;
    }
    p.inherit_fp_environment = values[F_FPENV] == Py_True;
  }
  if (values[F_PARTICIPATION] != NULL) {
    /* A str in the grammar ("take_over", "every_participant"): the parser
     * reads it, so the message is the library's. */
    if (!PyUnicode_Check(values[F_PARTICIPATION])) {
      PyErr_Format(PyExc_TypeError, "participation: got %.100s; use \"take_over\" or \"every_participant\"",
                   Py_TYPE(values[F_PARTICIPATION])->tp_name);
      return -1;
    }
    const char *s = text_value(st, values[F_PARTICIPATION], "participation", ",=");
    cpuexec_policy parsed;
    if (s == NULL || parse_pair(st, "participation=", s, &parsed) < 0)
      return -1;
    p.participation = parsed.participation;
  }
  if (values[F_NODE_BUDGET] != NULL) {
    /* A str in the grammar ("default", "cgroup", "host", "off"), read by
     * the library's parser as participation is. */
    if (!PyUnicode_Check(values[F_NODE_BUDGET])) {
      PyErr_Format(PyExc_TypeError, "node_budget: got %.100s; use \"default\", \"cgroup\", \"host\" or \"off\"",
                   Py_TYPE(values[F_NODE_BUDGET])->tp_name);
      return -1;
    }
    const char *s = text_value(st, values[F_NODE_BUDGET], "node_budget", ",=");
    cpuexec_policy parsed;
    if (s == NULL || parse_pair(st, "node_budget=", s, &parsed) < 0)
      return -1;
    p.node_budget = parsed.node_budget;
  }
  int rc = cpuexec_policy_validate(&p);
  if (rc != 0) {
    cpx_raise(st, rc);
    return -1;
  }
  *out = p;
  return 0;
}

/* Reads a dict or mapping of field names. An unknown key raises
 * unknown_key_error (KeyError for mappings, TypeError for keywords). */
static int policy_from_mapping(cpx_state *st, PyObject *mapping, PyObject *unknown_key_error,
                               const cpuexec_policy *base, cpuexec_policy *out) {
  PyObject *items = PyMapping_Items(mapping);
  if (items == NULL)
    return -1;
  PyObject *values[F_COUNT] = {NULL};
  int rc = -1;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
    PyObject *pair = PyList_GET_ITEM(items, i);
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
      PyErr_SetString(PyExc_TypeError, "policy mapping: items() must give (key, value) pairs");
      goto done;
    }
    PyObject *key = PyTuple_GET_ITEM(pair, 0);
    int f = F_COUNT;
    if (PyUnicode_Check(key))
      for (f = 0; f < F_COUNT && PyUnicode_CompareWithASCIIString(key, field_names[f]) != 0; f++) {
      }
    if (f == F_COUNT) {
      PyObject *msg = PyUnicode_FromFormat("policy: unknown key %.100R; keys are " FIELD_LIST, key);
      if (msg != NULL) {
        PyErr_SetObject(unknown_key_error, msg);
        Py_DECREF(msg);
      }
      goto done;
    }
    values[f] = PyTuple_GET_ITEM(pair, 1);
  }
  rc = policy_from_fields(st, values, base, out);
done:
  Py_DECREF(items);
  return rc;
}

static int is_mapping(PyObject *obj) {
  return PyDict_Check(obj) || (PyMapping_Check(obj) && PyObject_HasAttrString(obj, "items") &&
                               PyObject_HasAttrString(obj, "keys") && !PySequence_Check(obj));
}

static int policy_from_text(cpx_state *st, PyObject *text, cpuexec_policy *out) {
  if (!PyUnicode_Check(text)) {
    PyErr_Format(PyExc_TypeError, "policy text: got %.100s; use a str such as \"num_threads=4\"",
                 Py_TYPE(text)->tp_name);
    return -1;
  }
  Py_ssize_t size;
  const char *s = PyUnicode_AsUTF8AndSize(text, &size);
  if (s == NULL)
    return -1;
  if ((size_t)size != strlen(s)) {
    cpx_invalid(st, "policy: the text contains a NUL character at index %zd", (Py_ssize_t)strlen(s));
    return -1;
  }
  int rc = cpuexec_policy_parse(s, out);
  if (rc != 0) {
    cpx_raise(st, rc);
    return -1;
  }
  return 0;
}

PyObject *cpx_policy_wrap(cpx_state *st, const cpuexec_policy *policy) {
  PolicyObject *self = PyObject_New(PolicyObject, st->policy_type);
  if (self == NULL)
    return NULL;
  self->policy = *policy;
  return (PyObject *)self;
}

int cpx_policy_convert(cpx_state *st, PyObject *obj, cpuexec_policy *out, int *is_default) {
  *is_default = 0;
  if (obj == NULL || obj == Py_None) {
    *is_default = 1;
    return 0;
  }
  if (Py_IS_TYPE(obj, st->policy_type)) {
    *out = ((PolicyObject *)obj)->policy;
    return 0;
  }
  if (PyUnicode_Check(obj))
    return policy_from_text(st, obj, out);
  if (is_mapping(obj)) {
    cpuexec_policy base;
    cpuexec_policy_init(&base);
    return policy_from_mapping(st, obj, PyExc_KeyError, &base, out);
  }
  PyErr_Format(PyExc_TypeError, "policy: got %.100s; use a cpuexec.Policy, a mapping, policy text or None",
               Py_TYPE(obj)->tp_name);
  return -1;
}

static PyObject *policy_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  cpx_state *st = cpx_state_of_type(type);
  if (st == NULL)
    return NULL;
  if (PyTuple_GET_SIZE(args) != 0) {
    PyErr_SetString(PyExc_TypeError, "Policy() takes keyword arguments only: " FIELD_LIST);
    return NULL;
  }
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  if (kwargs != NULL && policy_from_mapping(st, kwargs, PyExc_TypeError, &p, &p) < 0)
    return NULL;
  return cpx_policy_wrap(st, &p);
}

static void policy_dealloc(PyObject *self) {
  PyTypeObject *type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

static PyObject *policy_parse(PyObject *cls, PyObject *text) {
  cpx_state *st = cpx_state_of_type((PyTypeObject *)cls);
  cpuexec_policy p;
  if (st == NULL || policy_from_text(st, text, &p) < 0)
    return NULL;
  return cpx_policy_wrap(st, &p);
}

static PyObject *policy_from_mapping_method(PyObject *cls, PyObject *mapping) {
  cpx_state *st = cpx_state_of_type((PyTypeObject *)cls);
  if (st == NULL)
    return NULL;
  if (!is_mapping(mapping)) {
    PyErr_Format(PyExc_TypeError, "policy mapping: got %.100s; use a dict such as {\"num_threads\": 4}",
                 Py_TYPE(mapping)->tp_name);
    return NULL;
  }
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  if (policy_from_mapping(st, mapping, PyExc_KeyError, &p, &p) < 0)
    return NULL;
  return cpx_policy_wrap(st, &p);
}

static PyObject *policy_replace(PyObject *self, PyObject *args, PyObject *kwargs) {
  cpx_state *st = cpx_state_of_type(Py_TYPE(self));
  if (st == NULL)
    return NULL;
  if (PyTuple_GET_SIZE(args) != 0) {
    PyErr_SetString(PyExc_TypeError, "replace() takes keyword arguments only: " FIELD_LIST);
    return NULL;
  }
  cpuexec_policy p = ((PolicyObject *)self)->policy;
  if (kwargs != NULL && policy_from_mapping(st, kwargs, PyExc_TypeError, &p, &p) < 0)
    return NULL;
  return cpx_policy_wrap(st, &p);
}

static PyObject *cpu_set_tuple(const cpuexec_policy *p) {
  PyObject *t = PyTuple_New(p->cpu_set_count);
  for (int32_t i = 0; t != NULL && i < p->cpu_set_count; i++) {
    PyObject *id = PyLong_FromLong(p->cpu_set[i]);
    if (id == NULL) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, i, id);
  }
  return t;
}

static PyObject *policy_to_dict(PyObject *self, PyObject *unused) {
  const cpuexec_policy *p = &((PolicyObject *)self)->policy;
  PyObject *cpu_set = cpu_set_tuple(p);
  if (cpu_set == NULL)
    return NULL;
  return Py_BuildValue("{s:i,s:s,s:K,s:s,s:N,s:O,s:O,s:s,s:s}", "num_threads", (int)p->num_threads, "spin_policy",
                       cpuexec_spin_policy_name(p->spin_policy), "spin_budget", (unsigned long long)p->spin_budget,
                       "affinity_policy", cpuexec_affinity_policy_name(p->affinity_policy), "cpu_set", cpu_set,
                       "allow_nested_parallelism", p->allow_nested_parallelism ? Py_True : Py_False,
                       "inherit_fp_environment", p->inherit_fp_environment ? Py_True : Py_False,
                       "participation", cpuexec_participation_name(p->participation), "node_budget",
                       cpuexec_node_budget_name(p->node_budget));
}

static PyObject *policy_str(PyObject *self) {
  const cpuexec_policy *p = &((PolicyObject *)self)->policy;
  int n = cpuexec_policy_format(p, NULL, 0);
  if (n < 0) {
    cpx_state *st = cpx_state_of_type(Py_TYPE(self));
    return st != NULL ? cpx_raise(st, n) : NULL;
  }
  char *text = PyMem_Malloc((size_t)n + 1);
  if (text == NULL)
    return PyErr_NoMemory();
  cpuexec_policy_format(p, text, (size_t)n + 1);
  PyObject *s = PyUnicode_FromStringAndSize(text, n);
  PyMem_Free(text);
  return s;
}

static PyObject *policy_repr(PyObject *self) {
  const cpuexec_policy *p = &((PolicyObject *)self)->policy;
  PyObject *cpu_set = cpu_set_tuple(p);
  if (cpu_set == NULL)
    return NULL;
  PyObject *r = PyUnicode_FromFormat(
      "cpuexec.Policy(num_threads=%d, spin_policy='%s', spin_budget=%llu, affinity_policy='%s', cpu_set=%R, "
      "allow_nested_parallelism=%s, inherit_fp_environment=%s, participation='%s', node_budget='%s')",
      (int)p->num_threads, cpuexec_spin_policy_name(p->spin_policy), (unsigned long long)p->spin_budget,
      cpuexec_affinity_policy_name(p->affinity_policy), cpu_set, p->allow_nested_parallelism ? "True" : "False",
      p->inherit_fp_environment ? "True" : "False", cpuexec_participation_name(p->participation),
      cpuexec_node_budget_name(p->node_budget));
  Py_DECREF(cpu_set);
  return r;
}

static PyObject *policy_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !Py_IS_TYPE(b, Py_TYPE(a)))
    Py_RETURN_NOTIMPLEMENTED;
  bool equal = cpuexec_policy_equal(&((PolicyObject *)a)->policy, &((PolicyObject *)b)->policy);
  return PyBool_FromLong(op == Py_EQ ? equal : !equal);
}

/* Equal policies have equal canonical text (cpuexec_policy_format). */
static Py_hash_t policy_hash(PyObject *self) {
  PyObject *text = policy_str(self);
  if (text == NULL)
    return -1;
  Py_hash_t h = PyObject_Hash(text);
  Py_DECREF(text);
  return h;
}

static PyObject *policy_reduce(PyObject *self, PyObject *unused) {
  PyObject *text = policy_str(self);
  if (text == NULL)
    return NULL;
  PyObject *parse = PyObject_GetAttrString((PyObject *)Py_TYPE(self), "parse");
  if (parse == NULL) {
    Py_DECREF(text);
    return NULL;
  }
  return Py_BuildValue("(N(N))", parse, text);
}

static PyObject *get_num_threads(PyObject *self, void *c) {
  return PyLong_FromLong(((PolicyObject *)self)->policy.num_threads);
}
static PyObject *get_spin_policy(PyObject *self, void *c) {
  cpx_state *st = cpx_state_of_type(Py_TYPE(self));
  return st ? cpx_spin_member(st, ((PolicyObject *)self)->policy.spin_policy) : NULL;
}
static PyObject *get_spin_budget(PyObject *self, void *c) {
  return PyLong_FromUnsignedLongLong(((PolicyObject *)self)->policy.spin_budget);
}
static PyObject *get_affinity_policy(PyObject *self, void *c) {
  cpx_state *st = cpx_state_of_type(Py_TYPE(self));
  return st ? cpx_affinity_member(st, ((PolicyObject *)self)->policy.affinity_policy) : NULL;
}
static PyObject *get_cpu_set(PyObject *self, void *c) { return cpu_set_tuple(&((PolicyObject *)self)->policy); }
static PyObject *get_nested(PyObject *self, void *c) {
  return PyBool_FromLong(((PolicyObject *)self)->policy.allow_nested_parallelism);
}

static PyObject *get_fpenv(PyObject *self, void *c) {
  return PyBool_FromLong(((PolicyObject *)self)->policy.inherit_fp_environment);
}

static PyObject *get_participation(PyObject *self, void *c) {
  return PyUnicode_FromString(cpuexec_participation_name(((PolicyObject *)self)->policy.participation));
}

static PyObject *get_node_budget(PyObject *self, void *c) {
  return PyUnicode_FromString(cpuexec_node_budget_name(((PolicyObject *)self)->policy.node_budget));
}

static PyGetSetDef policy_getset[] = {
    {"num_threads", get_num_threads, NULL, "0: the topology default; 1: serial; N: participants with the caller"},
    {"spin_policy", get_spin_policy, NULL, "how waiting threads spin before they park (cpuexec.SpinPolicy)"},
    {"spin_budget", get_spin_budget, NULL, "fixed_iterations: pause iterations; fixed_duration: ns; else 0"},
    {"affinity_policy", get_affinity_policy, NULL, "where workers run (cpuexec.AffinityPolicy)"},
    {"cpu_set", get_cpu_set, NULL, "explicit processor ids, the caller's first (tuple of int)"},
    {"allow_nested_parallelism", get_nested, NULL, "recorded in the sharing key; nested calls still run inline"},
    {"inherit_fp_environment", get_fpenv, NULL, "workers take the caller's floating-point control state per region"},
    {"participation", get_participation, NULL,
     "'take_over' (late workers' shares are taken over) or 'every_participant' (every admitted participant runs)"},
    {"node_budget", get_node_budget, NULL,
     "with whom the executor's threads share the node's CPUs: 'default' (CPUEXEC_NODE_BUDGET, else the cgroup), "
     "'cgroup', 'host' or 'off'"},
    {NULL},
};

static PyMethodDef policy_methods[] = {
    {"parse", policy_parse, METH_O | METH_CLASS,
     "Policy.parse(text): the policy in the text grammar, e.g. \"num_threads=4,spin_policy=fixed_duration,"
     "spin_budget=50us\"."},
    {"from_mapping", policy_from_mapping_method, METH_O | METH_CLASS,
     "Policy.from_mapping(mapping): keys are the field names; unknown keys raise KeyError."},
    {"replace", (PyCFunction)(void (*)(void))policy_replace, METH_VARARGS | METH_KEYWORDS,
     "A copy with the given fields changed (validated again)."},
    {"to_dict", policy_to_dict, METH_NOARGS, "The fields as a dict of plain values (enum names as str)."},
    {"__reduce__", policy_reduce, METH_NOARGS, NULL},
    {NULL},
};

static PyType_Slot policy_slots[] = {
    {Py_tp_doc, "Policy(*, num_threads=0, spin_policy='adaptive', spin_budget=0, affinity_policy='none', "
                "cpu_set=(), allow_nested_parallelism=False, inherit_fp_environment=False, participation='take_over', node_budget='default')\n\nA CPU execution request: immutable, hashable, "
                "validated when built. str() is the text grammar."},
    {Py_tp_new, policy_new},
    {Py_tp_dealloc, policy_dealloc},
    {Py_tp_repr, policy_repr},
    {Py_tp_str, policy_str},
    {Py_tp_hash, policy_hash},
    {Py_tp_richcompare, policy_richcompare},
    {Py_tp_getset, policy_getset},
    {Py_tp_methods, policy_methods},
    {0, NULL},
};

static PyType_Spec policy_spec = {
    .name = "cpuexec.Policy",
    .basicsize = sizeof(PolicyObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = policy_slots,
};

/* enum.Enum(name, [(NAME, "name"), ...], module="cpuexec"), the names from
 * the library's name function for 0, 1, ... until it returns NULL. */
static PyObject *make_enum(PyObject *enum_cls, const char *name, const char *(*value_name)(int)) {
  PyObject *members = PyList_New(0);
  if (members == NULL)
    return NULL;
  for (int v = 0; value_name(v) != NULL; v++) {
    const char *lower = value_name(v);
    char upper[64];
    size_t i = 0;
    for (; lower[i] != '\0' && i + 1 < sizeof upper; i++)
      upper[i] = (char)(lower[i] >= 'a' && lower[i] <= 'z' ? lower[i] - 'a' + 'A' : lower[i]);
    upper[i] = '\0';
    PyObject *pair = Py_BuildValue("(ss)", upper, lower);
    if (pair == NULL || PyList_Append(members, pair) < 0) {
      Py_XDECREF(pair);
      Py_DECREF(members);
      return NULL;
    }
    Py_DECREF(pair);
  }
  PyObject *args = Py_BuildValue("(sN)", name, members);
  PyObject *kwargs = Py_BuildValue("{s:s,s:s}", "module", "cpuexec", "qualname", name);
  PyObject *cls = args && kwargs ? PyObject_Call(enum_cls, args, kwargs) : NULL;
  Py_XDECREF(args);
  Py_XDECREF(kwargs);
  return cls;
}

static const char *spin_name(int v) { return cpuexec_spin_policy_name((cpuexec_spin_policy)v); }
static const char *affinity_name(int v) { return cpuexec_affinity_policy_name((cpuexec_affinity_policy)v); }

int cpx_policy_init_types(PyObject *module, cpx_state *st) {
  PyObject *enum_module = PyImport_ImportModule("enum");
  if (enum_module == NULL)
    return -1;
  PyObject *enum_cls = PyObject_GetAttrString(enum_module, "Enum");
  Py_DECREF(enum_module);
  if (enum_cls == NULL)
    return -1;
  st->spin_enum = make_enum(enum_cls, "SpinPolicy", spin_name);
  st->affinity_enum = st->spin_enum ? make_enum(enum_cls, "AffinityPolicy", affinity_name) : NULL;
  Py_DECREF(enum_cls);
  if (st->affinity_enum == NULL || PyModule_AddObjectRef(module, "SpinPolicy", st->spin_enum) < 0 ||
      PyModule_AddObjectRef(module, "AffinityPolicy", st->affinity_enum) < 0)
    return -1;
  st->policy_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &policy_spec, NULL);
  if (st->policy_type == NULL)
    return -1;
  return PyModule_AddType(module, st->policy_type);
}
