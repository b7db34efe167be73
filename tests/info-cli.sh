#!/bin/sh
# tools/cpuexec-info: exit status 0 for good input and 2 (with a message
# naming the field) for each invalid input; the stored topologies resolve;
# the hybrid with performance_cores puts every worker on its own P-core;
# JSON output is deterministic.
# A Windows build made on Linux runs cpuexec-info.exe under the test runner
# (wine; tests/run-test.sh), and checks processor groups on top.
set -u
: "${top_srcdir:=.}" "${top_builddir:=.}"
if [ -n "${CPUEXEC_TEST_RUNNER:-}" ]; then
  windows=yes
  # The program, not libtool's wrapper; the build's DLLs are in .libs.
  WINEPATH="$(cd "$top_builddir" && pwd)/.libs;${CPUEXEC_TEST_DLL_PATH:-}${WINEPATH:+;$WINEPATH}"
  WINEDEBUG=${WINEDEBUG:--all}
  export WINEPATH WINEDEBUG
  info_program="$top_builddir/tools/.libs/cpuexec-info.exe"
  info() { $CPUEXEC_TEST_RUNNER "$info_program" "$@"; }
else
  windows=no
  info_program="$top_builddir/tools/cpuexec-info"
  info() { "$info_program" "$@"; }
fi
topo="$top_srcdir/tests/data/topologies"
hybrid="$topo/hybrid-8p-smt2-16e.xml"
work=$(mktemp -d "${TMPDIR:-/tmp}/cpuexec-info-test.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
failures=0
checks=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect STATUS [NEEDLE-IN-STDERR] -- ARGS...
expect() {
  want=$1
  needle=$2
  shift 3
  checks=$((checks + 1))
  info "$@" >"$work/out" 2>"$work/err"
  rc=$?
  if [ "$rc" -ne "$want" ]; then
    fail "cpuexec-info $* exited $rc, want $want: $(cat "$work/err")"
  elif [ -n "$needle" ] && ! grep -q -- "$needle" "$work/err"; then
    fail "cpuexec-info $* said \"$(cat "$work/err")\", which does not name $needle"
  else
    echo "ok $checks: exit $rc: cpuexec-info $*"
  fi
}

unset CPUEXEC_POLICY CPUEXEC_NUM_THREADS OMP_NUM_THREADS CPUEXEC_DISPLAY

# Good input.
expect 0 "" -- --help
grep -q "usage: cpuexec-info" "$work/out" || fail "--help prints no usage"
release=$(sed -n 's/^release=//p' "$top_srcdir/VERSION")
expect 0 "" -- --version
tr -d '\r' <"$work/out" | grep -qx "cpuexec-info (libcpuexec) $release" || fail "--version says \"$(cat "$work/out")\", not VERSION's $release"
expect 0 "" --
grep -q "== Resolution of the default policy ==" "$work/out" || fail "no resolution section"
grep -q "libgomp" "$work/out" || fail "no OpenMP runtime section"
# --node: the node budget alone, one line (the suite runs with it off,
# tests/run-test.sh; a table of this test's own when it is on). Without
# make's variables: under `make -j check` they name a jobserver this test
# was not given, which the line would report.
unset MAKEFLAGS MFLAGS || true
expect 0 "" -- --node
if [ "$windows" = no ]; then
  expected_off="off (CPUEXEC_NODE_BUDGET=off)"
else
  expected_off="off (not built for Windows: each process keeps its own count)"
fi
tr -d '\r' <"$work/out" | grep -qxF "$expected_off" || fail "--node says \"$(cat "$work/out")\", not \"$expected_off\""
if [ "$windows" = no ]; then
  mkdir -p "$work/node"
  saved_budget=${CPUEXEC_NODE_BUDGET:-off}
  export CPUEXEC_NODE_BUDGET=host CPUEXEC_NODE_DIR="$work/node"
  expect 0 "" -- --node
  grep -q "CPUs shared by this user's processes in the whole host.*held by: nobody$" "$work/out" ||
    fail "--node says \"$(cat "$work/out")\" with a budget of the host"
  export CPUEXEC_NODE_BUDGET="$saved_budget"
  unset CPUEXEC_NODE_DIR
fi
expect 0 "" -- --json
for t in "$topo"/*.xml "$topo"/quota-1.5; do
  for a in none physical_cores performance_cores physical_then_smt; do
    expect 0 "" -- --topology "$t" --policy "affinity_policy=$a" --json
  done
  expect 0 "" -- --topology "$t" --policy "affinity_policy=explicit,cpu_set=0" --json
  grep -q '"caller_processor":0,' "$work/out" || fail "$t: explicit cpu_set=0 does not place the caller on 0"
done

# The quota fixture: 4 cores, 1.5 CPUs -> 2 participants (rounded up).
expect 0 "" -- --topology "$topo/quota-1.5" --json
grep -q '"effective_threads":2,' "$work/out" || fail "quota-1.5 does not resolve to 2 threads"
grep -q '"cpu_quota":1.5,' "$work/out" || fail "quota-1.5 reports no 1.5 CPU quota"

# Done criterion: hybrid + performance_cores, every worker on a P-core
# (P#0-15, two siblings per core) and no two participants on one core.
expect 0 "" -- --topology "$hybrid" --policy affinity_policy=performance_cores --json
workers=$(sed -n 's/.*"worker_processors":\[\([0-9,]*\)\].*/\1/p' "$work/out")
[ -n "$workers" ] || fail "hybrid: no worker processors in $(cat "$work/out")"
used=" 0 " # core 0 is kept for the caller
for w in $(echo "$workers" | tr ',' ' '); do
  [ "$w" -lt 16 ] || fail "hybrid: worker on processor $w, an efficiency core"
  core=$((w / 2))
  case "$used" in *" $core "*) fail "hybrid: two participants on core $core" ;; esac
  used="$used$core "
done
echo "hybrid performance_cores workers: $workers"

# Same input, same bytes.
info --topology "$hybrid" --policy affinity_policy=physical_then_smt,num_threads=20 --json >"$work/a"
info --topology "$hybrid" --policy affinity_policy=physical_then_smt,num_threads=20 --json >"$work/b"
cmp -s "$work/a" "$work/b" || fail "two runs gave different JSON"

# Two Windows processor groups (P#0-47, P#64-111): physical_cores puts
# workers in both; on Windows the topology names the groups.
groups="$topo/windows-2groups.xml"
expect 0 "" -- --topology "$groups" --policy affinity_policy=physical_cores
grep -q "worker processors: *2,4,.*,46,64,66,.*,110" "$work/out" || fail "2 groups: workers not across both groups"
if [ "$windows" = yes ]; then
  grep -q "processor groups: *2 (group 0: 0-47; group 1: 64-111)" "$work/out" || fail "2 groups: the groups are not named"
  expect 0 "" --
  grep -q "processor groups: *1 (group 0: " "$work/out" || fail "this machine: its processor group is not named"
fi

# The participation rule is shown, and is part of the sharing key.
expect 0 "" -- --topology "$hybrid" --policy num_threads=2,participation=every_participant
grep -q "^participation: *every_participant" "$work/out" || fail "participation: the rule is not shown"
grep -q "^sharing key: .*;participation=every" "$work/out" || fail "participation: not in the sharing key"

# Invalid input: exit 2, the message names the field.
expect 2 participation -- --topology "$hybrid" --policy participation=every
expect 2 num_threads -- --topology "$hybrid" --policy num_threads=-1
expect 2 spin_budget -- --topology "$hybrid" --policy spin_policy=fixed_duration
expect 2 spin_budget -- --topology "$hybrid" --policy spin_policy=fixed_iterations
expect 2 spin_budget -- --topology "$hybrid" --policy spin_budget=5
expect 2 spin_budget -- --topology "$hybrid" --policy spin_policy=park_immediately,spin_budget=5
expect 2 cpu_set -- --topology "$hybrid" --policy cpu_set=1
expect 2 affinity_policy -- --topology "$hybrid" --policy affinity_policy=explicit
expect 2 cpu_set -- --topology "$hybrid" --policy affinity_policy=explicit,cpu_set=1,1
expect 2 cpu_set -- --topology "$hybrid" --policy affinity_policy=explicit,cpu_set=0,40
expect 2 cpu_set -- --topology "$topo/restricted-siblings.xml" --policy affinity_policy=explicit,cpu_set=0,2
expect 2 num_threads -- --topology "$hybrid" --policy num_threads=3,affinity_policy=explicit,cpu_set=0,2
expect 2 num_threads -- --topology "$hybrid" --policy num_threads=25,affinity_policy=physical_cores
expect 2 num_threads -- --topology "$hybrid" --policy num_threads=25,affinity_policy=performance_cores
expect 2 num_threads -- --topology "$hybrid" --policy num_threads=33,affinity_policy=physical_then_smt
expect 2 bogus -- --topology "$hybrid" --policy bogus=1
expect 2 no-such-machine.xml -- --topology "$topo/no-such-machine.xml"
expect 2 --frobnicate -- --frobnicate
expect 2 --policy -- --policy
export CPUEXEC_POLICY=num_threads=lots
expect 2 CPUEXEC_POLICY -- --topology "$hybrid"
unset CPUEXEC_POLICY
export CPUEXEC_NUM_THREADS=lots
expect 2 CPUEXEC_NUM_THREADS -- --topology "$hybrid"
export CPUEXEC_NUM_THREADS=30
expect 2 CPUEXEC_NUM_THREADS -- --topology "$hybrid" --policy affinity_policy=physical_cores
unset CPUEXEC_NUM_THREADS

# --libraries-report PROGRAM: the program's threaded libraries at its exit
# (cpuexec-info itself, linked with libcpuexec, loads none of them).
expect 2 "needs a program" -- --libraries-report
checks=$((checks + 1))
if info --libraries-report "$info_program" --help >"$work/out" 2>"$work/err" &&
  grep -q '^fftw  *- ' "$work/out" && grep -q '^opencv  *- ' "$work/out" && grep -q '^pthreadpool  *- ' "$work/out"; then
  echo "ok $checks: cpuexec-info --libraries-report lists fftw, opencv, pthreadpool"
else
  fail "cpuexec-info --libraries-report cpuexec-info --help: $(cat "$work/out" "$work/err")"
fi

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]
