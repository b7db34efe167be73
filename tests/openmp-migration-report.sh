#!/bin/sh
# The migration report of doc/migrating-openmp.md, read as the guide says:
# examples/openmp/pipeline, with some of its three kernels migrated, writes
# the report to CPUEXEC_OPENMP_REPORT=FILE at exit; each row's offset, less
# one, given to addr2line -f -i, names a kernel, and the rows name exactly
# the kernels still on OpenMP, each with one region outside sessions and
# one in the session (the pipeline runs each kernel once in each).
set -u
builddir=$top_builddir/examples/openmp
report=$(mktemp)
trap 'rm -f "$report"' EXIT
if ! command -v addr2line >/dev/null 2>&1; then
  echo "not ok - addr2line (binutils) is not on PATH"
  exit 1
fi
failed=0

# expect "NAMES ON OPENMP" MIGRATED...
expect() {
  want=$1
  shift
  : >"$report"
  if ! CPUEXEC_OPENMP_REPORT=$report "$builddir/pipeline" "$@" >/dev/null; then
    echo "not ok - pipeline $*: exited with an error"
    failed=1
    return
  fi
  if ! grep -q '^calling function' "$report"; then
    echo "not ok - pipeline $*: wrote no report to CPUEXEC_OPENMP_REPORT"
    failed=1
    return
  fi
  # The table's rows: "? (object+0xOFFSET)  inline multi top-sess top-other r/a".
  rows=$(sed -n '/^calling function/,/^threaded libraries/p' "$report" | sed -e '1d' -e '/^threaded libraries/d' \
    -e '/^(no OpenMP region seen)/d')
  got=$(echo "$rows" | while read -r row; do
    [ -n "$row" ] || continue
    object=$(echo "$row" | sed 's/^.*(\([^+()]*\)+0x[0-9a-f]*).*$/\1/')
    offset=$(echo "$row" | sed 's/^.*+\(0x[0-9a-f]*\)).*$/\1/')
    counts=$(echo "$row" | sed 's/^.*) *//' | awk '{ print $1, $2, $3, $4 }')
    binary=$builddir/.libs/$object
    [ -f "$binary" ] || binary=$builddir/$object
    name=$(addr2line -f -i -e "$binary" "$(printf '0x%x' $((offset - 1)))" | head -n 1)
    echo "$name [$counts]"
  done | sort | tr '\n' ' ')
  want_rows=$(for name in $want; do echo "$name [0 0 1 1]"; done | sort | tr '\n' ' ')
  if [ "$got" = "$want_rows" ]; then
    echo "ok - migrated: ${*:-none}; the report names ${want:-no kernel}"
  else
    echo "not ok - migrated: ${*:-none}; the report names '$got', not '$want_rows':"
    cat "$report"
    failed=1
  fi
}

expect "kernel_gemm_omp kernel_jacobi_2d_omp kernel_atax_omp"
expect "kernel_jacobi_2d_omp kernel_atax_omp" gemm
expect "kernel_gemm_omp" jacobi_2d atax
expect "" gemm jacobi_2d atax
exit $failed
