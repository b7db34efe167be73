#!/bin/sh
# The man pages render without a single groff warning (-ww: all of them),
# and each names what it must: the options of cpuexec-info, the environment
# variables, grammar, precedence and files of cpuexec(7).
set -eu
src=${top_srcdir:-.}
command -v groff >/dev/null 2>&1 || { echo "man-pages: groff is not installed (Debian: groff-base)"; exit 1; }
status=0
for page in "$src"/doc/man/cpuexec-info.1 "$src"/doc/man/cpuexec.7 "$src"/doc/man/cpuexec-pthreadpool.7; do
  warnings=$(groff -ww -man -z "$page" 2>&1)
  if [ -n "$warnings" ]; then
    echo "man-pages: $page:"
    echo "$warnings"
    status=1
  fi
done
# Every option the tool's --help lists is in its page.
for opt in --policy --topology --json --bench --node --openmp-report --libraries-report --help --version; do
  grep -q -- "$(echo "$opt" | sed 's/-/\\\\-/g')" "$src/doc/man/cpuexec-info.1" ||
    { echo "man-pages: cpuexec-info.1 does not describe $opt"; status=1; }
done
for word in CPUEXEC_POLICY CPUEXEC_NUM_THREADS OMP_NUM_THREADS CPUEXEC_DISPLAY CPUEXEC_OMPT \
  CPUEXEC_NODE_BUDGET CPUEXEC_NODE_DIR MAKEFLAGS \
  "SS Policy grammar" "SS Precedence" "SH FILES" cpu.max; do
  grep -q -- "$word" "$src/doc/man/cpuexec.7" || { echo "man-pages: cpuexec.7 does not mention $word"; status=1; }
done
# The pages name the release they describe (VERSION).
release=$(sed -n 's/^release=//p' "$src/VERSION")
for page in "$src"/doc/man/*.[17]; do
  grep -q "^\.TH .*\"libcpuexec $release\"" "$page" || { echo "man-pages: $page does not say libcpuexec $release"; status=1; }
done
[ "$status" -eq 0 ] && echo "man-pages: 3 pages render without warnings"
exit "$status"
