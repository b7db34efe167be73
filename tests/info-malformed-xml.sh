#!/bin/sh
# cpuexec-info --topology exits 2 with a message on every malformed file of
# tests/data/malformed-xml, never by a signal, and 0 on each odd but usable file
# of tests/data/odd-xml. Run by `make check` with
# top_builddir and top_srcdir set.
set -u
info="$top_builddir/tools/cpuexec-info"
failed=0
count=0
for f in "$top_srcdir"/tests/data/malformed-xml/*.xml; do
  count=$((count + 1))
  err=$("$info" --topology "$f" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne 2 ]; then
    echo "FAIL: $(basename "$f"): exit $rc (want 2)${err:+: $err}"
    failed=$((failed + 1))
  elif ! echo "$err" | grep -q '^cpuexec-info: '; then
    echo "FAIL: $(basename "$f"): exit 2 without a message"
    failed=$((failed + 1))
  else
    echo "ok: $(basename "$f"): $(echo "$err" | grep '^cpuexec-info: ' | head -n 1)"
  fi
done
# Odd but usable files (tests/data/odd-xml/README) are reported: exit 0.
for f in "$top_srcdir"/tests/data/odd-xml/*.xml; do
  err=$("$info" --topology "$f" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: odd $(basename "$f"): exit $rc (want 0)${err:+: $err}"
    failed=$((failed + 1))
  else
    echo "ok: odd $(basename "$f"): reported"
  fi
done
[ "$count" -ge 20 ] || { echo "FAIL: only $count files in the corpus"; exit 1; }
exit $failed
