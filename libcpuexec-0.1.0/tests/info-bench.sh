#!/bin/sh
# cpuexec-info --bench: exits 0, times the default executor (and names each
# OpenMP runtime it found or says it is not installed), and the counters of
# its scripted run are exact: 1010 full regions + 1 with nested calls woke
# workers, 100 one-grain regions ran inline, and each of the 2 participants
# made one nested call.
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
  "dispatches         1011" "nested_inline      2" "limited_inline     100"; do
  case $out in
  *"$needle"*) ;;
  *) fail "no \"$needle\" in the output" ;;
  esac
done
[ "$failures" -eq 0 ]
