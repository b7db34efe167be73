#!/bin/sh
# Compares libcpuexec-pthreadpool with Debian's libpthreadpool, shape by
# shape: the same benchmark source built against each, run as separate
# processes in alternating order for ROUNDS rounds (default 7), on THREADS
# threads (default 2). Prints each backend's median ns per call and the
# ratio cpuexec / pthreadpool (below 1: libcpuexec is faster).
# CPUEXEC_POLICY reaches the libcpuexec side: pthreadpool's workers spin
# about a million pause instructions before sleeping, libcpuexec's default
# (adaptive) about 100 us; spin_policy=fixed_duration,spin_budget=20ms
# compares the two with similar spinning.
# usage: run_pthreadpool_shapes.sh BENCH_DIR
dir=${1:-bench}
rounds=${ROUNDS:-7}
threads=${THREADS:-2}
ms=${BENCH_MS:-40}
ours="$dir/bench_pthreadpool_shapes_cpuexec"
theirs="$dir/bench_pthreadpool_shapes_pthreadpool"
if [ ! -x "$theirs" ]; then
  echo "pthreadpool shapes: Debian libpthreadpool not found at configure time (install libpthreadpool-dev); skipped"
  exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
r=1
while [ "$r" -le "$rounds" ]; do
  # Alternate which backend runs first, so drift affects both alike.
  if [ $((r % 2)) -eq 1 ]; then order="$ours $theirs"; else order="$theirs $ours"; fi
  for prog in $order; do
    "$prog" "$threads" "$ms" >> "$tmp/$(basename "$prog").txt" || { echo "$prog failed" >&2; exit 1; }
  done
  r=$((r + 1))
done
echo "pthreadpool shapes: $threads threads, $rounds alternating rounds, median ns per call (1024 items)"
echo "libcpuexec policy: ${CPUEXEC_POLICY:-the default (CPUEXEC_POLICY unset)}"
awk -v ours="$tmp/bench_pthreadpool_shapes_cpuexec.txt" -v theirs="$tmp/bench_pthreadpool_shapes_pthreadpool.txt" '
function median(list,   n, a, i, j, t) {
  n = split(list, a, " ")
  for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
FILENAME == ours && $1 != "backend" { if (!($1 in o)) order[++count] = $1; o[$1] = o[$1] " " $2 }
FILENAME == theirs && $1 != "backend" { p[$1] = p[$1] " " $2 }
END {
  printf "%-12s %12s %12s %8s\n", "shape", "cpuexec", "pthreadpool", "ratio"
  worst = 0
  for (i = 1; i <= count; i++) {
    s = order[i]; a = median(o[s]); b = median(p[s])
    ratio = b > 0 ? a / b : 0
    if (ratio > worst) worst = ratio
    printf "%-12s %12.0f %12.0f %8.2f\n", s, a, b, ratio
  }
  printf "worst ratio %.2f (target: <= 1.00)\n", worst
}' "$tmp/bench_pthreadpool_shapes_cpuexec.txt" "$tmp/bench_pthreadpool_shapes_pthreadpool.txt"
