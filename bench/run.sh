#!/bin/sh
# libcpuexec benchmarks: runs every bench program in interleaved rounds and
# prints ONE table: per metric and backend the median, min, max (and p99 for
# pooled per-call samples), the ratio libcpuexec / backend, and a PASS/MISS
# verdict where bench/targets.txt sets a target. `make bench` calls it.
#
# Method. Each round runs every program once, each in its own process, in an
# order rotated by one every round (A B C, B C A, C A B, ...), so slow drifts
# of a busy machine spread over all backends. A program prints one line per
# sample, "M <backend> <metric> <unit> <value>"; the rounds are pooled and the
# statistics taken over the pool. Before the rounds, one program calibrates
# the EPCC delay (~0.1 us) and every program then runs that exact length.
# After the rounds, the hot dispatch loop of every backend (10000
# back-to-back calls after 1000 warm-up calls) runs under `strace -f -ttt`;
# the program prints the loop's wall-clock bounds and the system calls any
# thread starts within them are counted. OMP_*, KMP_* and GOMP_* variables are removed so the OpenMP
# runtimes run their defaults; CPUEXEC_POLICY is honoured.
#
# Environment (the Makefile sets the first four):
#   BENCH_BACKENDS  "name=program ..." for the side-by-side backends; an empty
#                   program means configure did not find that peer
#   BENCH_PROGRAMS  every bench program (bench_programs)
#   BENCH_TABLE_PROGRAMS  extra programs speaking the protocol below: they run in
#                   every round and their rows join the table; the other
#                   BENCH_PROGRAMS run once, without arguments, after the table
#   BENCH_TARGETS   the targets file (bench/targets.txt)
#   BENCH_TABLE     where to save a copy of the table
#   BENCH_CHART     where to write the table's chart (bench/chart.py: libcpuexec against
#                   the best peer per row, an SVG); BENCH_PYTHON runs it (default python3)
#   BENCH_QUICK=1   2 rounds, fewer samples (about 30 s); BENCH_ROUNDS=N sets the rounds
#   BENCH_BUDGET=S  no new round starts after S seconds of rounds (default 120, quick 20),
#                   once 2 rounds (quick: 1) are done: a loaded machine gets fewer rounds
#                   rather than a run of many minutes; the table says how many ran
#   BENCH_SMOKE=1   each program once with tiny counts: checks results; the table of
#                   those samples is not shown, but its chart (BENCH_CHART) must be made
#   BENCH_GRAIN=1   hands every backend a chunk of 1 instead of one block per participant
#   BENCH_PARTICIPANTS=N  participants per backend (default 2)
#   BENCH_STRACE=0  skips the syscall count; BENCH_OTHERS=0 skips the programs run once
#   BENCH_KEEP=1    keeps the raw outputs (results, per-program logs) and says where
#
# Extending. To add rows to the table, write a program that accepts
# --mode=round|smoke, --delay-len=N and --quick (it may ignore the last two),
# prints "M <backend> <metric> <unit> <value>" lines (backend "libcpuexec" for
# ours, the peer's name for a peer, so ratios line up) and exits non-zero on a
# wrong result; in its area's fragment add it to both `bench_programs` and
# `bench_table_programs`, and it runs in every round. To judge it, add a line
# to bench/targets.txt. Rows appear in the order metrics are first printed.
# A program only in bench_programs runs once after the table, without
# arguments, and its output is shown as it is.
set -u
LC_ALL=C; export LC_ALL
tab=$(printf '\t')

backends=${BENCH_BACKENDS:?set BENCH_BACKENDS (make bench sets it)}
programs=${BENCH_PROGRAMS:-}
table_programs=${BENCH_TABLE_PROGRAMS:-}
targets=${BENCH_TARGETS:-}
table_copy=${BENCH_TABLE:-}
chart=${BENCH_CHART:-}
python=${BENCH_PYTHON:-python3}
if [ -n "${BENCH_QUICK:-}" ] && [ "${BENCH_QUICK}" != 0 ]; then
  rounds=${BENCH_ROUNDS:-2}; quick=--quick; budget=${BENCH_BUDGET:-20}; min_rounds=1
else
  rounds=${BENCH_ROUNDS:-7}; quick=; budget=${BENCH_BUDGET:-120}; min_rounds=2
fi
smoke=${BENCH_SMOKE:-}
[ "$smoke" = 0 ] && smoke=

for v in $(env | sed -n -e 's/^\(OMP_[A-Za-z0-9_]*\)=.*/\1/p' -e 's/^\(KMP_[A-Za-z0-9_]*\)=.*/\1/p' \
  -e 's/^\(GOMP_[A-Za-z0-9_]*\)=.*/\1/p'); do
  unset "$v"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/cpuexec-bench.XXXXXX") || exit 1
if [ -n "${BENCH_KEEP:-}" ]; then
  echo "bench: keeping raw results in $work" >&2
else
  trap 'rm -rf "$work"' EXIT
fi
trap 'exit 130' INT TERM

# A hung backend must not hang `make bench`.
if command -v timeout >/dev/null 2>&1; then limit="timeout 300"; else limit=; fi

# name<TAB>program for everything that runs; missing backends listed apart.
: >"$work/run.list"
missing=
for b in $backends; do
  name=${b%%=*}; prog=${b#*=}
  if [ -n "$prog" ] && [ -x "$prog" ]; then
    printf '%s\t%s\tbackend\n' "$name" "$prog" >>"$work/run.list"
  else
    missing="$missing $name"
  fi
done
others=
for p in $table_programs $programs; do
  case " $backends " in *"=$p "*) continue ;; esac
  grep -q "$tab$p$tab" "$work/run.list" && continue
  case " $table_programs " in
    *" $p "*) printf '%s\t%s\textra\n' "${p#bench/}" "$p" >>"$work/run.list" ;;
    *) others="$others $p" ;;
  esac
done
count=$(wc -l <"$work/run.list")
[ "$count" -gt 0 ] || { echo "bench: no program to run" >&2; exit 1; }

failures=0
# run NAME PROGRAM ARGS...: appends the program's M lines to results, reports a failure.
run() {
  name=$1; shift
  $limit "$@" </dev/null >"$work/out" 2>"$work/err"
  rc=$?
  { echo "== $name: $*"; grep -v '^M ' "$work/out"; cat "$work/err"; } >>"$work/log"
  if [ "$rc" -eq 0 ]; then
    grep '^M ' "$work/out" >>"$work/results"
    return 0
  fi
  failures=$((failures + 1))
  echo "bench: $name failed (exit $rc): $*" >&2
  grep -v '^M ' "$work/out" | tail -n 5 >&2
  tail -n 5 "$work/err" >&2
  return 1
}

: >"$work/results"
if [ -n "$smoke" ]; then
  while IFS=$tab read -r name prog kind; do
    run "$name" "$prog" --mode=smoke && echo "bench-smoke: $name ok"
  done <"$work/run.list"
  [ -n "$missing" ] && echo "bench-smoke: not available:$missing"
  [ "$failures" -eq 0 ] || { echo "bench-smoke: $failures program(s) failed" >&2; exit 1; }
  [ -n "$chart" ] || exit 0
  # No rounds: the table below is made of the smoke samples, for its chart.
  rounds=0 table_copy= BENCH_STRACE=0 BENCH_OTHERS=0
fi

# The delay length, once for every backend.
first=$(awk -F '\t' '$3 == "backend" { print $2; exit }' "$work/run.list")
delay_len=100; delay_ns=?
if [ -z "$smoke" ] && [ -n "$first" ] && cal=$("$first" --mode=calibrate </dev/null) && [ -n "$cal" ]; then
  delay_len=$(echo "$cal" | awk '$1 == "C" { print $3 }')
  delay_ns=$(echo "$cal" | awk '$1 == "C" { print $4 }')
fi

load_before=$(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || echo '?')
started=$(date +%s)
budget_note=
r=0
while [ "$r" -lt "$rounds" ]; do
  if [ "$r" -ge "$min_rounds" ] && [ $(($(date +%s) - started)) -ge "$budget" ]; then
    budget_note=" (time budget of ${budget}s reached after $r of $rounds)"
    break
  fi
  # Rotate the order by one every round.
  k=$((r % count))
  { tail -n +$((k + 1)) "$work/run.list"; head -n "$k" "$work/run.list"; } >"$work/order"
  while IFS=$tab read -r name prog kind; do
    run "$name" "$prog" --mode=round --delay-len="$delay_len" $quick
  done <"$work/order"
  r=$((r + 1))
done

# System calls of the hot loop (backends only).
strace_note=
if [ "${BENCH_STRACE:-1}" = 0 ]; then
  strace_note="syscall count skipped (BENCH_STRACE=0)"
elif command -v strace >/dev/null 2>&1; then
  while IFS=$tab read -r name prog kind; do
    [ "$kind" = backend ] || continue
    # Every system call a thread starts inside the loop's time bounds (the
    # "H begin end" line): complete lines and "<unfinished ...>" lines, not
    # the "resumed" halves, signals or exits. Times compare in microseconds.
    if strace -f -ttt -o "$work/strace" "$prog" --mode=hot --calls=10000 </dev/null >"$work/hot" 2>/dev/null &&
      window=$(awk '$1 == "H" { print $2, $3 }' "$work/hot") && [ -n "$window" ] &&
      n=$(awk -v window="$window" '
        function us(t,  p) { split(t, p, "."); return p[1] * 1000000 + substr(p[2] "000000", 1, 6) }
        BEGIN { split(window, w, " "); lo = us(w[1]); hi = us(w[2]) }
        $2 ~ /^[0-9]+\.[0-9]+$/ && !/resumed>/ && $3 !~ /^(---|\+\+\+)/ { t = us($2); if (t >= lo && t <= hi) n++ }
        END { print n + 0 }' "$work/strace"); then
      echo "M $name syscalls_hot per10k $n" >>"$work/results"
    else
      strace_note="strace could not trace $name (ptrace not permitted?); no syscall count"
    fi
  done <"$work/run.list"
else
  strace_note="strace not installed; no syscall count"
fi
elapsed=$(($(date +%s) - started))
load_after=$(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || echo '?')

# The table. Backend order: libcpuexec, the other backends, then extras' names.
order=$(for b in $backends; do printf '%s ' "${b%%=*}"; done)
{
  echo "libcpuexec bench: $(uname -m), $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') CPUs," \
    "participants ${BENCH_PARTICIPANTS:-2}, chunk ${BENCH_GRAIN:+1}${BENCH_GRAIN:-ceil(n/participants)}," \
    "$r interleaved rounds$budget_note in ${elapsed}s, EPCC delay $delay_len iterations = $delay_ns ns"
  echo "load average before: $load_before, after: $load_after"
  [ -n "$missing" ] && echo "not available (configure did not find them):$missing"
  [ -n "$strace_note" ] && echo "$strace_note"
  sed -n 's/^# libcpuexec policy: /libcpuexec policy: /p' "$work/log" 2>/dev/null | head -n 1
  awk '!seen[$3]++ { print $3 }' "$work/results" >"$work/metrics"
  sort -k3,3 -k2,2 -k5,5g "$work/results" |
    awk -v order="$order" -v targets="${targets:-/dev/null}" -v metrics="$work/metrics" '
    function flush(  k, i) {
      if (cnt == 0) return
      k = cur_m SUBSEP cur_b
      n[k] = cnt; unit[cur_m] = cur_u
      med[k] = cnt % 2 ? v[(cnt + 1) / 2] : (v[cnt / 2] + v[cnt / 2 + 1]) / 2
      lo[k] = v[1]; hi[k] = v[cnt]
      i = int(0.99 * cnt); if (i < 0.99 * cnt) i++
      p99[k] = v[i]
      if (!((cur_b) in known)) { known[cur_b] = 1; extra_order = extra_order " " cur_b }
      cnt = 0
    }
    function fmt(x) { return sprintf("%.3f", x) }
    function add_target(m, b, text, verdict,  k, t) {
      k = m SUBSEP b
      # (assigning ttext[k] creates it before the right side runs: test first)
      if (k in ttext) { t = ttext[k] "; " text; ttext[k] = t; t = tverd[k] "; " verdict; tverd[k] = t }
      else { ttext[k] = text; tverd[k] = verdict }
    }
    BEGIN {
      nb = split(order, bo, " ")
      for (i = 1; i <= nb; i++) known[bo[i]] = 1
      nm = 0
      while ((getline line < metrics) > 0) mo[++nm] = line
    }
    {
      if ($3 != cur_m || $2 != cur_b) { flush(); cur_m = $3; cur_b = $2; cur_u = $4 }
      v[++cnt] = $5 + 0
    }
    END {
      flush()
      nx = split(extra_order, xo, " ")
      for (i = 1; i <= nx; i++) bo[nb + i] = xo[i]
      nb += nx
      # Targets: metric compare relation factor. compare is a backend, "best"
      # (the best peer) or "=" (an absolute bound on libcpuexec).
      while ((getline line < targets) > 0) {
        sub(/#.*/, "", line)
        if (split(line, f, " ") < 4) continue
        m = f[1]; cmp = f[2]; rel = f[3]; fac = f[4] + 0
        mine = m SUBSEP "libcpuexec"
        if (!(mine in med)) continue
        if (cmp == "=") {
          ok = rel == "<=" ? med[mine] <= fac : med[mine] >= fac
          add_target(m, "libcpuexec", rel " " f[4], ok ? "PASS" : "MISS")
          continue
        }
        peer = cmp
        if (cmp == "best") {
          peer = ""
          for (i = 1; i <= nb; i++) {
            k = m SUBSEP bo[i]
            # libcpuexec-pinned is libcpuexec under another policy, not a peer.
            if (bo[i] == "libcpuexec" || bo[i] == "libcpuexec-pinned" || !(k in med)) continue
            if (peer == "" || (rel == ">=" ? med[k] > med[m SUBSEP peer] : med[k] < med[m SUBSEP peer])) peer = bo[i]
          }
        }
        k = m SUBSEP peer
        if (peer == "" || !(k in med)) {
          add_target(m, "libcpuexec", "vs " cmp, "n/a: " cmp " not measured")
          continue
        }
        bound = fac * med[k]
        ok = rel == "<=" ? med[mine] <= bound : med[mine] >= bound
        add_target(m, peer, "cpuexec " rel " " f[4] "x" (cmp == "best" ? " best" : ""), ok ? "PASS" : "MISS")
      }
      printf "%-14s %-7s %-18s %10s %10s %10s %10s %9s  %-22s %s\n", "metric", "unit", "backend", "median", \
        "min", "max", "p99", "cpuexec/x", "target", "verdict"
      for (j = 1; j <= nm; j++) {
        m = mo[j]; first = 1
        for (i = 1; i <= nb; i++) {
          b = bo[i]; k = m SUBSEP b
          if (!(k in med)) continue
          mine = m SUBSEP "libcpuexec"
          ratio = "-"
          if (b != "libcpuexec" && (mine in med) && med[k] > 0 && med[mine] >= 0) ratio = sprintf("%.2f", med[mine] / med[k])
          printf "%-14s %-7s %-18s %10s %10s %10s %10s %9s  %-22s %s\n", first ? m : "", first ? unit[m] : "", b, \
            fmt(med[k]), fmt(lo[k]), fmt(hi[k]), (n[k] >= 50 ? fmt(p99[k]) : "-"), ratio, \
            (k in ttext) ? ttext[k] : "", (k in tverd) ? tverd[k] : ""
          first = 0
        }
      }
    }'
  cat <<'EOF'
epcc_nN: EPCC syncbench PARALLEL FOR overhead per call (us) for N iterations of a ~0.1 us delay:
  median(parallel loop) - median(serial share of ceil(N/participants) delays), one value per round.
lat_gapX: one call of `participants` iterations of the tiny body (us), X = no gap, a 50 us busy-wait,
  or a 1 ms / 10 ms clock_nanosleep before each call; every call a sample, p99 over the pooled rounds.
idle_burn: CPU time of the process minus the caller's own, during 1 s of sleep right after a burst
  of 1000 calls (ms per idle second). burn_cadX: the same during a steady stream of tiny calls, one every
  X (clock_nanosleep before each), over the stream's wall time (ms/s).
worst_region: the largest p99 over the four lat_gap rows of (call time - serial body time), us;
  libcpuexec-* rows are other libcpuexec policies (bench/questions/latency.c), worst_region_all the worst of them. axpy_S: y += a*x over S floats, 12 bytes per element (GB/s).
syscalls_hot: system calls, on any thread, during 10000 back-to-back calls (strace -f -ttt, in the loop's time bounds).
infer_*, sess2_*, gemm_gflops: the 20-operator model of bench/inference/model.h (3 GEMMs 64x512x512, a 1x512x2048 head,
  bias+GELU, softmax, layer norm, adds), ceil(items/participants) items per range on every backend:
  infer_ips back to back; infer_gapX one inference after an X clock_nanosleep (p99 over pooled samples);
  sess2_* two threads each running inferences on one shared pool (X-2pools: a pool each); gemm 64x512x512 alone.
min/max: over the rounds (pooled samples for lat_*, infer_gap*, sess2_lat). cpuexec/x: libcpuexec median / this backend's.
EOF
  # How each row's backend ran: the "# policy NAME: ..." lines programs print.
  awk '/^# policy [^:]*: / { sub(/^# policy /, ""); k = $1; if (!seen[k]++) print "  " $0 }' "$work/log" >"$work/policies"
  if [ -s "$work/policies" ]; then echo "policy and resolution per backend row:"; cat "$work/policies"; fi
} >"$work/table"
[ -n "$smoke" ] || cat "$work/table"
if [ -n "$table_copy" ]; then cp "$work/table" "$table_copy" 2>/dev/null || true; fi

# The chart of the table. A full run without Python says so and goes on; the
# smoke run fails unless the chart is made and is an SVG.
if [ -n "$chart" ]; then
  script=$(dirname "$0")/chart.py
  if ! command -v "$python" >/dev/null 2>&1; then
    echo "bench: no chart: $python not found (BENCH_PYTHON)" >&2
    [ -z "$smoke" ] || exit 1
  elif "$python" "$script" "$work/table" "$chart" >"$work/chart.out" &&
    "$python" -c 'import sys, xml.etree.ElementTree as et
sys.exit(et.parse(sys.argv[1]).getroot().tag != "{http://www.w3.org/2000/svg}svg")' "$chart"; then
    if [ -n "$smoke" ]; then sed 's/^chart: /bench-smoke: chart ok: /' "$work/chart.out"; exit 0; fi
    cat "$work/chart.out"
  else
    echo "bench: no chart: $script failed" >&2
    [ -z "$smoke" ] || exit 1
    failures=$((failures + 1))
  fi
fi

# The other bench programs: once each, without arguments, output as it is.
if [ "${BENCH_OTHERS:-1}" != 0 ]; then
  for p in $others; do
    echo
    echo "== ${p#bench/} (run once, without arguments)"
    if ! $limit "$p" </dev/null; then
      failures=$((failures + 1))
      echo "bench: $p failed" >&2
    fi
  done
fi
if [ "$failures" -ne 0 ]; then
  echo "bench: $failures program run(s) failed; their results are missing from the table" >&2
  exit 1
fi
exit 0
