#!/bin/sh
# bench/run.sh's arithmetic and verdicts, with fake backends that print known
# samples: pooled median, min, max and p99, ratios, PASS/MISS per target,
# "not available" peers, extra programs, a failing program failing the run,
# and the chart of the table (bench/chart.py) when a Python 3 is found.
# Needs no compiler and no timing: the numbers are fixed.
set -u
srcdir=${top_srcdir:-$(dirname "$0")/..}
runner=$srcdir/bench/run.sh
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench-runner.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
failed=0
check() { # check DESCRIPTION PATTERN: the table has a line matching PATTERN
  if grep -E -q -- "$2" "$dir/table"; then echo "ok - $1"; else echo "not ok - $1 (no line matching: $2)"; failed=1; fi
}

# fake NAME EPCC_N2 LAT_SCALE AXPY: a backend printing fixed samples per round.
fake() {
  cat >"$dir/$1" <<SCRIPT
#!/bin/sh
case "\$1" in
  --mode=calibrate) echo "C delay_len 42 100.0"; exit 0 ;;
  --mode=round) ;;
  *) exit 0 ;;
esac
echo "M $1 epcc_n2 us $2"
awk 'BEGIN { for (i = 1; i <= 100; i++) print "M $1 lat_gap50us us", i * $3 }'
echo "M $1 idle_burn ms/s 1.5"
echo "M $1 axpy_64k GB/s $4"
SCRIPT
  chmod +x "$dir/$1"
}
fake libcpuexec 0.2 1 10
fake pthreadpool 0.3 0.5 9
fake libgomp 0.35 1 11
cat >"$dir/extra" <<'SCRIPT'
#!/bin/sh
[ "$1" = --mode=round ] && echo "M libcpuexec extra_metric ns 7"
exit 0
SCRIPT
chmod +x "$dir/extra"
printf '#!/bin/sh\necho "other program ran with $# arguments"\n' >"$dir/other"
chmod +x "$dir/other"

backends="libcpuexec=$dir/libcpuexec libomp= libgomp=$dir/libgomp pthreadpool=$dir/pthreadpool tbb="
python=${PYTHON:-python3}
command -v "$python" >/dev/null 2>&1 || python=
BENCH_BACKENDS=$backends BENCH_PROGRAMS="$dir/libcpuexec $dir/extra $dir/other" \
  BENCH_TABLE_PROGRAMS="$dir/extra" BENCH_TARGETS=$srcdir/bench/targets.txt \
  BENCH_CHART=${python:+$dir/chart.svg} BENCH_PYTHON=$python \
  BENCH_ROUNDS=3 BENCH_STRACE=0 sh "$runner" >"$dir/table" 2>"$dir/err"
rc=$?
cat "$dir/table"
[ "$rc" -eq 0 ] && echo "ok - runner exits 0" || { echo "not ok - runner exit $rc"; cat "$dir/err"; failed=1; }
check "3 rounds reported" "3 interleaved rounds"
check "missing peers listed" "not available.*: libomp tbb"
check "pooled latency median, min, max, p99" "^lat_gap50us +us +libcpuexec +50\.500 +1\.000 +100\.000 +99\.000 "
check "latency ratio and MISS against pthreadpool" "^ +pthreadpool +25\.250 .* 2\.00 +cpuexec <= 1x +MISS"
check "epcc PASS against pthreadpool (0.2 <= 0.75 x 0.3)" "^ +pthreadpool +0\.300 .* 0\.67 +cpuexec <= 0\.75x +PASS"
check "epcc MISS against libgomp (0.2 > 0.5 x 0.35)" "^ +libgomp +0\.350 .* 0\.57 +cpuexec <= 0\.5x +MISS"
check "absolute bound on libcpuexec" "^idle_burn +ms/s +libcpuexec +1\.500 .* <= 2 +PASS"
check "best peer chosen for axpy (11 GB/s), MISS" "^ +libgomp +11\.000 .* 0\.91 +cpuexec >= 0\.97x best +MISS"
check "extra program's metric in the table" "^extra_metric +ns +libcpuexec +7\.000"
check "other programs run once, without arguments, after the table" "^other program ran with 0 arguments"
[ "$(grep -c "other program ran" "$dir/table")" -eq 1 ] && echo "ok - other program ran exactly once" ||
  { echo "not ok - other program ran $(grep -c "other program ran" "$dir/table") times"; failed=1; }
check "no p99 for per-round values" "^epcc_n2 +us +libcpuexec +0\.200 +0\.200 +0\.200 +- "

# The chart: per row, how many times better libcpuexec is than the best peer
# (peer/libcpuexec for times, libcpuexec/peer for throughputs).
svg_check() { # svg_check DESCRIPTION PATTERN: the chart has a line matching PATTERN
  if grep -E -q -- "$2" "$dir/chart.svg"; then echo "ok - $1"; else echo "not ok - $1 (no line matching: $2)"; failed=1; fi
}
if [ -z "$python" ]; then
  echo "ok - # SKIP the chart: no python3 (PYTHON)"
else
  check "the chart is reported after the table" "^chart: .*chart\.svg \(4 rows in 4 kinds"
  svg_check "a time row: best peer / libcpuexec (0.3 / 0.2)" "^<text[^>]*>1\.50x <tspan[^>]*>vs pthreadpool \(0\.2 against 0\.3\)"
  svg_check "a latency row behind the best peer (25.25 / 50.5)" ">0\.50x <tspan[^>]*>vs pthreadpool \(50\.5 against 25\.25\)"
  svg_check "a throughput row: libcpuexec / best peer (10 / 11)" ">0\.91x <tspan[^>]*>vs libgomp \(10 against 11\)"
  svg_check "rows grouped by kind" ">dispatch</text>"
  svg_check "1.0 marked" "stroke=\"#222222\""
  svg_check "a row without a peer is named, not drawn" "No peer to compare with.*: extra_metric<"
  # A smoke run fails when its chart cannot be made.
  if BENCH_BACKENDS="libcpuexec=$dir/libcpuexec" BENCH_SMOKE=1 BENCH_CHART=$dir/smoke.svg BENCH_PYTHON=false \
    sh "$runner" >"$dir/smoke.out" 2>&1; then
    echo "not ok - a smoke run without its chart passed"; cat "$dir/smoke.out"; failed=1
  else
    echo "ok - a smoke run without its chart fails"
  fi
fi

# The syscall count: a stand-in strace writes a known trace and runs the
# program, whose hot mode prints the loop's bounds; the count is the system
# calls any thread starts within them, without the "resumed" halves and
# signal/exit lines.
mkdir "$dir/bin"
cat >"$dir/bin/strace" <<'SCRIPT'
#!/bin/sh
while [ "$1" != -o ]; do shift; done
cat >"$2" <<TRACE
100 1000.000050 futex(0x1, FUTEX_WAKE_PRIVATE, 1) = 0
100 1000.000150 futex(0x2, FUTEX_WAIT_PRIVATE, 7, NULL <unfinished ...>
101 1000.000200 futex(0x2, FUTEX_WAKE_PRIVATE, 1 <unfinished ...>
100 1000.000300 <... futex resumed>) = 0
101 1000.000310 <... futex resumed>) = 1
101 1000.000400 --- SIGURG {si_signo=SIGURG} ---
100 1000.000500 read(3, "", 1) = 0
101 1000.001000 +++ exited with 0 +++
100 1000.002000 futex(0x1, FUTEX_WAKE_PRIVATE, 1) = 0
TRACE
shift 2
exec "$@"
SCRIPT
chmod +x "$dir/bin/strace"
printf '#!/bin/sh\n[ "$1" = --mode=hot ] && echo "H 1000.0001 1000.001000"\nexec "%s" "$@"\n' "$dir/libcpuexec" \
  >"$dir/hot"
chmod +x "$dir/hot"
PATH="$dir/bin:$PATH" BENCH_BACKENDS="libcpuexec=$dir/hot" BENCH_ROUNDS=1 BENCH_TARGETS=$srcdir/bench/targets.txt \
  sh "$runner" >"$dir/table" 2>"$dir/err"
check "syscalls counted within the hot loop's time bounds only" "^syscalls_hot +per10k +libcpuexec +3\.000 .* <= 0 +MISS"

# The time budget: no new round once it is spent, but never fewer than 2.
BENCH_BACKENDS="libcpuexec=$dir/libcpuexec" BENCH_ROUNDS=5 BENCH_BUDGET=0 BENCH_STRACE=0 sh "$runner" \
  >"$dir/table" 2>"$dir/err"
check "time budget stops the rounds after the minimum" "2 interleaved rounds \(time budget of 0s reached after 2 of 5\)"

# A program that fails (a wrong checksum) fails the run.
printf '#!/bin/sh\n[ "$1" = --mode=round ] && { echo "FAIL libcpuexec: index 3 has 0, expected 1"; exit 1; }\nexit 0\n' \
  >"$dir/broken"
chmod +x "$dir/broken"
BENCH_BACKENDS="libcpuexec=$dir/broken" BENCH_ROUNDS=1 BENCH_STRACE=0 sh "$runner" >/dev/null 2>"$dir/err"
rc=$?
if [ "$rc" -ne 0 ] && grep -q "index 3 has 0" "$dir/err"; then
  echo "ok - a failing program fails the run and its message is shown"
else
  echo "not ok - failing program: exit $rc"; cat "$dir/err"; failed=1
fi
exit $failed
