/* Exceptions: cpuexec.Error carries the library's code, CPUEXEC_E* name and
 * message; invalid arguments are also ValueError (cpuexec.InvalidArgument).
 * Plus the integer argument checks every file uses. */
#include "module.h"

#include <stdarg.h>

static PyObject *raise_with(PyObject *type, int code, PyObject *message) {
  if (message == NULL)
    return NULL;
  PyObject *exc = PyObject_CallOneArg(type, message);
  if (exc != NULL) {
    PyObject *code_obj = PyLong_FromLong(code);
    PyObject *name = PyUnicode_FromString(cpuexec_error_name(code));
    if (code_obj == NULL || name == NULL || PyObject_SetAttrString(exc, "code", code_obj) < 0 ||
        PyObject_SetAttrString(exc, "name", name) < 0 || PyObject_SetAttrString(exc, "message", message) < 0)
      Py_CLEAR(exc);
    Py_XDECREF(code_obj);
    Py_XDECREF(name);
  }
  Py_DECREF(message);
  if (exc != NULL) {
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
  return NULL;
}

PyObject *cpx_raise(cpx_state *st, int code) {
  const char *detail = cpuexec_error_message();
  PyObject *message = PyUnicode_DecodeUTF8(detail, (Py_ssize_t)strlen(detail), "replace");
  if (message != NULL && PyUnicode_GetLength(message) == 0) {
    Py_DECREF(message);
    message = PyUnicode_FromString(cpuexec_error_string(code));
  }
  return raise_with(code == CPUEXEC_EINVAL ? st->invalid_argument : st->error, code, message);
}

PyObject *cpx_error(cpx_state *st, int code, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  PyObject *message = PyUnicode_FromFormatV(format, ap);
  va_end(ap);
  return raise_with(code == CPUEXEC_EINVAL ? st->invalid_argument : st->error, code, message);
}

PyObject *cpx_invalid(cpx_state *st, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  PyObject *message = PyUnicode_FromFormatV(format, ap);
  va_end(ap);
  return raise_with(st->invalid_argument, CPUEXEC_EINVAL, message);
}

int cpx_errors_init(PyObject *module, cpx_state *st) {
  st->error = PyErr_NewExceptionWithDoc(
      "cpuexec.Error",
      "A libcpuexec call failed. Attributes: code (the negative CPUEXEC_E* value), name (\"CPUEXEC_E...\") "
      "and message (the library's message: what was wrong, the value, what is allowed).",
      PyExc_RuntimeError, NULL);
  if (st->error == NULL)
    return -1;
  PyObject *bases = PyTuple_Pack(2, st->error, PyExc_ValueError);
  if (bases == NULL)
    return -1;
  st->invalid_argument = PyErr_NewExceptionWithDoc(
      "cpuexec.InvalidArgument",
      "An argument libcpuexec rejects (CPUEXEC_EINVAL): both a cpuexec.Error and a ValueError.", bases, NULL);
  Py_DECREF(bases);
  if (st->invalid_argument == NULL)
    return -1;
  if (PyModule_AddObjectRef(module, "Error", st->error) < 0 ||
      PyModule_AddObjectRef(module, "InvalidArgument", st->invalid_argument) < 0)
    return -1;
  return 0;
}

/* The object as an int, or NULL with TypeError naming field. */
static PyObject *as_int(PyObject *value, const char *field) {
  if (PyBool_Check(value) || !PyIndex_Check(value)) {
    if (PyBool_Check(value))
      PyErr_Format(PyExc_TypeError, "%s: %s is a bool; use an int", field, value == Py_True ? "True" : "False");
    else
      PyErr_Format(PyExc_TypeError, "%s: got %.100s; use an int", field, Py_TYPE(value)->tp_name);
    return NULL;
  }
  return PyNumber_Index(value);
}

int cpx_int64_arg(cpx_state *st, PyObject *value, const char *field, int64_t min, int64_t max, int64_t *out) {
  PyObject *i = as_int(value, field);
  if (i == NULL)
    return -1;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
  Py_DECREF(i);
  if (v == -1 && PyErr_Occurred())
    return -1;
  if (overflow != 0 || v < min || v > max) {
    if (overflow != 0)
      cpx_invalid(st, "%s: %s than any 64-bit integer; use %lld to %lld", field, overflow > 0 ? "larger" : "smaller",
                  (long long)min, (long long)max);
    else
      cpx_invalid(st, "%s: %lld is out of range; use %lld to %lld", field, v, (long long)min, (long long)max);
    return -1;
  }
  *out = (int64_t)v;
  return 0;
}

int cpx_uint64_arg(cpx_state *st, PyObject *value, const char *field, uint64_t *out) {
  PyObject *i = as_int(value, field);
  if (i == NULL)
    return -1;
  int overflow = 0;
  long long signed_value = PyLong_AsLongLongAndOverflow(i, &overflow);
  if (signed_value == -1 && PyErr_Occurred()) {
    Py_DECREF(i);
    return -1;
  }
  if (overflow < 0 || (overflow == 0 && signed_value < 0)) {
    Py_DECREF(i);
    if (overflow < 0)
      cpx_invalid(st, "%s: negative; use 0 to %llu", field, (unsigned long long)UINT64_MAX);
    else
      cpx_invalid(st, "%s: %lld is negative; use 0 to %llu", field, signed_value, (unsigned long long)UINT64_MAX);
    return -1;
  }
  unsigned long long v = PyLong_AsUnsignedLongLong(i);
  Py_DECREF(i);
  if (v == (unsigned long long)-1 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError))
      return -1;
    PyErr_Clear();
    cpx_invalid(st, "%s: larger than any 64-bit integer; use 0 to %llu", field, (unsigned long long)UINT64_MAX);
    return -1;
  }
  *out = (uint64_t)v;
  return 0;
}
