#!/bin/sh
# The README stays a front door: at most 250 lines, its figures
# of single runs in doc/benchmarks.md, and its chart between the RECORDED RUN
# marks, where a recorded `make bench` replaces it (doc/benchmarks.md says how).
set -u
srcdir=${top_srcdir:-$(dirname "$0")/..}
readme=$srcdir/README.md
failed=0
lines=$(wc -l <"$readme")
if [ "$lines" -le 250 ]; then
  echo "ok - README.md has $lines lines (at most 250)"
else
  echo "not ok - README.md has $lines lines, more than 250: move figures and details to doc/"
  failed=1
fi
marked=$(sed -n '/<!-- RECORDED RUN/,/<!-- END RECORDED RUN -->/p' "$readme")
if printf '%s\n' "$marked" | grep -q '^!\[[^]]*\](doc/bench/[0-9-]*\.svg)$'; then
  echo "ok - README.md's chart of doc/bench is between its RECORDED RUN marks"
else
  echo "not ok - README.md has no chart of doc/bench between <!-- RECORDED RUN and <!-- END RECORDED RUN -->"
  failed=1
fi
exit $failed
