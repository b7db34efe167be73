#!/bin/sh
# The committed charts (doc/bench/DATE.svg, the README's chart) are what
# bench/chart.py makes of the committed tables beside them (doc/bench/DATE.txt,
# the output of one `make bench`): a chart is never edited by hand, and a
# change to chart.py comes with the charts it changes. Exit 77 without Python.
set -u
srcdir=${top_srcdir:-$(dirname "$0")/..}
python=${PYTHON:-python3}
command -v "$python" >/dev/null 2>&1 || { echo "SKIP: no $python for bench/chart.py"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench-chart.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
failed=0 count=0
for table in "$srcdir"/doc/bench/*.txt; do
  svg=${table%.txt}.svg
  name=doc/bench/$(basename "$table")
  if [ ! -f "$svg" ]; then echo "not ok - $name has no chart beside it"; failed=1; continue; fi
  count=$((count + 1))
  if "$python" "$srcdir/bench/chart.py" "$table" "$dir/chart.svg" >/dev/null && cmp -s "$dir/chart.svg" "$svg"; then
    echo "ok - doc/bench/$(basename "$svg") is the chart of $name"
  else
    echo "not ok - doc/bench/$(basename "$svg") is not what bench/chart.py makes of $name; regenerate it:"
    echo "  $python bench/chart.py $name doc/bench/$(basename "$svg")"
    failed=1
  fi
done
[ "$count" -gt 0 ] || { echo "not ok - no table and chart under doc/bench"; failed=1; }
grep -q '(doc/bench/[0-9-]*\.svg)' "$srcdir/README.md" && echo "ok - README.md embeds a chart of doc/bench" ||
  { echo "not ok - README.md embeds no chart of doc/bench"; failed=1; }
exit $failed
