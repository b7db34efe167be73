#!/bin/sh
# cpuexec-info --bench: exits 0, times the default executor (and names each
# OpenMP runtime it found or says it is not installed), and the counters of
# its scripted run are exact: 1010 full regions + 1 with nested calls woke
# workers, 100 one-grain regions ran inline, and each of the 2 participants
# made one nested call; every counter of cpuexec_counters is shown, and
# one caller alone never runs beside another.
set -u
: "${top_builddir:=.}"
out=$(CPUEXEC_POLICY="num_threads=2,affinity_policy=none" "$top_builddir/tools/cpuexec-info" --bench 2>&1)
rc=$?
echo "$out"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
[ "$rc" -eq 0 ] || fail "cpuexec-info --bench exited $rc"
for needle in "libcpuexec default executor" "libomp" "libgomp" \
  "dispatches         1011" "nested_inline      2" "limited_inline     100" \
  "concurrent_regions 0" "occupied_inline    0" "bound_inline       0" "stood_aside        0"; do
  case $out in
  *"$needle"*) ;;
  *) fail "no \"$needle\" in the output" ;;
  esac
done
fields=$(sed -n '/^typedef struct cpuexec_counters {/,/^} cpuexec_counters;/p' "${top_srcdir:-$(dirname "$0")/..}/include/cpuexec/counters.h" |
  sed -n 's/^ *uint64_t \([a-z_]*\);.*/\1/p')
[ -n "$fields" ] || fail "no fields read from include/cpuexec/counters.h"
for field in $fields; do
  echo "$out" | grep -q "^  $field " || fail "counter $field not shown"
done
[ "$failures" -eq 0 ]
