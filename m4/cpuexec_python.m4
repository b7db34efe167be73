# CPUEXEC_CHECK_PYTHON: the CPython extension module (python/, mk/python.am).
#
# Built when a Python 3.8+ interpreter with its headers is found (Debian:
# python3-dev); --disable-python turns it off, --enable-python makes a
# missing interpreter or header an error. PYTHON=... picks the interpreter;
# otherwise the python3 executables on PATH are tried in order and the first
# with headers and pytest wins (else the first with headers), so `make check`
# runs the Python tests whenever it can.
#
# Sets: have_python (yes|no), python_summary (for the configure summary),
# PYTHON, PYTHON_CPPFLAGS, PYTHON_EXT_SUFFIX, pyexecdir, PYTHON_TEST_PRELOAD
# (the sanitizer runtime an uninstrumented interpreter must preload), and the
# conditional WITH_PYTHON.
AC_DEFUN([CPUEXEC_CHECK_PYTHON], [
AC_ARG_ENABLE([python],
  [AS_HELP_STRING([--disable-python], [do not build the cpuexec Python module (default: build it when python3 and its headers are found)])],
  [], [enable_python=check])
AC_ARG_VAR([PYTHON], [the Python 3 interpreter to build the cpuexec module for])
have_python=no
python_summary="no (--disable-python)"
PYTHON_CPPFLAGS=""
PYTHON_EXT_SUFFIX=""
PYTHON_TEST_PRELOAD=""
AS_IF([test "x$enable_python" = xcheck && test "x$cross_compiling" = xyes], [
  enable_python=no
  python_summary="no (cross-compiling: the build machine's python3 cannot load a $host module)"])
AS_IF([test "x$enable_python" != xno], [
  python_summary="no (no python3 with headers found; Debian: install python3-dev)"
  AS_IF([test -n "$PYTHON"], [python_candidates="$PYTHON"], [
    python_candidates=""
    save_IFS=$IFS; IFS=:
    for d in $PATH; do
      IFS=$save_IFS
      AS_IF([test -n "$d" && test -x "$d/python3"], [python_candidates="$python_candidates $d/python3"])
    done
    IFS=$save_IFS])
  python_first=""
  python_chosen=""
  for py in $python_candidates; do
    # Usable: Python 3.8 or later whose Python.h exists.
    inc=`$py -c 'import sys, sysconfig, os
if sys.version_info < (3, 8): sys.exit(1)
inc = sysconfig.get_paths()@<:@"include"@:>@
print(inc if os.path.exists(os.path.join(inc, "Python.h")) else "")' 2>/dev/null`
    AS_IF([test -z "$inc"], [continue])
    AS_IF([test -z "$python_first"], [python_first=$py])
    AS_IF([$py -c 'import pytest' >/dev/null 2>&1], [python_chosen=$py; break])
  done
  AS_IF([test -z "$python_chosen"], [python_chosen=$python_first])
  AS_IF([test -n "$python_chosen"], [
    PYTHON=$python_chosen
    AC_MSG_CHECKING([whether $PYTHON's headers compile an extension])
    PYTHON_CPPFLAGS="-I`$PYTHON -c 'import sysconfig; print(sysconfig.get_paths()@<:@"include"@:>@)'`"
    PYTHON_EXT_SUFFIX=`$PYTHON -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX") or ".so")'`
    save_CPPFLAGS=$CPPFLAGS; CPPFLAGS="$CPPFLAGS $PYTHON_CPPFLAGS"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#define PY_SSIZE_T_CLEAN
#include <Python.h>]], [[PyModuleDef_Init(0);]])], [have_python=yes])
    CPPFLAGS=$save_CPPFLAGS
    AC_MSG_RESULT([$have_python])])
  AS_IF([test "x$have_python" = xyes], [
    # The interpreter's own platform site-packages, moved under our
    # exec_prefix: Debian's python3 searches <prefix>/lib/python3.X/dist-packages
    # for /usr/local, which automake's default (site-packages) misses.
    python_tail=`$PYTHON -c 'import sys, sysconfig
p = sysconfig.get_path("platlib")
for base in (sys.exec_prefix + "/local/", sys.exec_prefix + "/"):
    if p.startswith(base):
        print(p.replace(base, "", 1)); break
else:
    print("lib/python%d.%d/site-packages" % sys.version_info@<:@:2@:>@)'`
    AS_IF([test -z "$pyexecdir"], [pyexecdir="\${exec_prefix}/$python_tail"])
    AS_IF([$PYTHON -c 'import pytest' >/dev/null 2>&1], [python_tests="pytest"],
          [python_tests="skipped: no pytest for $PYTHON (Debian: python3-pytest)"])
    AS_IF([$PYTHON -c 'import numpy' >/dev/null 2>&1], [], [python_tests="$python_tests, no numpy (Debian: python3-numpy)"])
    python_summary="yes ($PYTHON, $pyexecdir, tests: $python_tests)"
    # An interpreter built without sanitizers loads an instrumented module
    # only with the sanitizer's runtime preloaded (for the tests only).
    AS_CASE(["$enable_sanitizers"],
      [*address*], [PYTHON_TEST_PRELOAD=`$CC -print-file-name=libasan.so`],
      [thread], [PYTHON_TEST_PRELOAD=`$CC -print-file-name=libtsan.so`])
  ], [AS_IF([test "x$enable_python" = xyes], [AC_MSG_ERROR([--enable-python: $python_summary])])])
])
AC_SUBST([PYTHON])
AC_SUBST([PYTHON_CPPFLAGS])
AC_SUBST([PYTHON_EXT_SUFFIX])
AC_SUBST([PYTHON_TEST_PRELOAD])
AC_SUBST([pyexecdir])
AM_CONDITIONAL([WITH_PYTHON], [test "x$have_python" = xyes])
])
