#!/bin/sh
# The OMPT tool is found only through a strong, unversioned, exported
# ompt_start_tool in libcpuexec.so's dynamic symbol table (a version node
# hides it from libomp). And cpuexec-info --openmp-report prints a report for
# the migration example (examples/openmp/pipeline). Run by `make check` with
# top_builddir set.
set -e
lib="$top_builddir/.libs/libcpuexec.so"
if [ "$CPUEXEC_WITH_OMPT" = 1 ]; then
  line=$(nm -D --defined-only "$lib" | grep ' ompt_start_tool' || true)
  case "$line" in
    *" T ompt_start_tool") echo "ok: $line" ;;
    *) echo "FAIL: ompt_start_tool is not a strong unversioned export: '$line'"; exit 1 ;;
  esac
else
  if nm -D --defined-only "$lib" | grep -q ' ompt_start_tool'; then
    echo "FAIL: built with --disable-ompt but ompt_start_tool is exported"; exit 1
  fi
  echo "ok: no ompt_start_tool (--disable-ompt)"
fi
if [ -x "$top_builddir/examples/openmp/pipeline" ]; then
  out=$("$top_builddir/tools/cpuexec-info" --openmp-report "$top_builddir/examples/openmp/pipeline")
  echo "$out"
  if [ "$CPUEXEC_WITH_OMPT" = 1 ]; then
    # Its three OpenMP kernels, once outside sessions and once in one.
    echo "$out" | grep -q 'top-level in sessions: 3; top-level outside sessions: 3;' ||
      { echo "FAIL: the report does not count 3 regions in the session and 3 outside"; exit 1; }
  else
    echo "$out" | grep -q 'disable-ompt' || { echo "FAIL: the report does not say why nothing is counted"; exit 1; }
  fi
  if [ "$CPUEXEC_WITH_OMPT" = 1 ]; then
    # CPUEXEC_OMPT: a value that is no setting warns once and keeps the tool;
    # a setting (with surrounding blanks, the environment's one rule) does not.
    err=$(CPUEXEC_OMPT=garbage "$top_builddir/examples/openmp/pipeline" 2>&1 >/dev/null)
    echo "$err" | grep -q 'CPUEXEC_OMPT="garbage" is not a setting' ||
      { echo "FAIL: CPUEXEC_OMPT=garbage gave no warning: '$err'"; exit 1; }
    err=$(CPUEXEC_OMPT=' off ' "$top_builddir/examples/openmp/pipeline" 2>&1 >/dev/null)
    if echo "$err" | grep -q 'CPUEXEC_OMPT'; then echo "FAIL: CPUEXEC_OMPT=' off ' warned: '$err'"; exit 1; fi
    echo "ok: CPUEXEC_OMPT=garbage warns, ' off ' does not"
  fi
  if "$top_builddir/tools/cpuexec-info" --openmp-report >/dev/null 2>&1; then
    echo "FAIL: --openmp-report without a program must fail"; exit 1
  fi
fi
