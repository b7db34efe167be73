#!/bin/sh
# libcpuexec's ABI against the stored baseline (libabigail: Debian's
# abigail-tools). Two commands, each on a built shared library and the
# public headers (only the types the headers declare are compared):
#
#   abi/check.sh dump BASELINE LIBRARY HEADERS_DIR      writes BASELINE (abidw)
#   abi/check.sh compare BASELINE LIBRARY HEADERS_DIR   abidiff BASELINE LIBRARY
#
# compare fails (exit 1) when an exported function or variable of the
# baseline is gone or has changed, or a type it reaches (a struct's members,
# size or layout, an enum) changed; a function or variable that is only
# added passes, so new API needs no new baseline, but its next release does
# (`make abi-baseline`). Exit 2 when a tool is missing or fails. The library
# needs its debug information (a build with -g, configure's default).
set -u
usage() { echo "usage: $0 dump|compare BASELINE LIBRARY HEADERS_DIR" >&2; exit 2; }
[ $# -eq 4 ] || usage
command=$1 baseline=$2 library=$3 headers=$4
abidw=${ABIDW:-abidw} abidiff=${ABIDIFF:-abidiff}
[ -f "$library" ] || { echo "abi: $library is not built" >&2; exit 2; }
case $command in
  dump)
    command -v "$abidw" >/dev/null 2>&1 || { echo "abi: no $abidw (Debian: abigail-tools)" >&2; exit 2; }
    # No library path or build directory. The declarations' locations stay:
    # compare tells the public types (declared under HEADERS_DIR) by them.
    "$abidw" --headers-dir "$headers" --drop-private-types --no-corpus-path --no-comp-dir-path \
      --out-file "$baseline.tmp" "$library" || { rm -f "$baseline.tmp"; echo "abi: $abidw failed" >&2; exit 2; }
    mv "$baseline.tmp" "$baseline"
    echo "abi: wrote $baseline from $library"
    ;;
  compare)
    command -v "$abidiff" >/dev/null 2>&1 || { echo "abi: no $abidiff (Debian: abigail-tools)" >&2; exit 2; }
    [ -f "$baseline" ] || { echo "abi: no baseline $baseline (make abi-baseline)" >&2; exit 2; }
    "$abidiff" --headers-dir2 "$headers" --drop-private-types --no-added-syms --fail-no-debug-info \
      "$baseline" "$library" > "${TMPDIR:-/tmp}/abi-check.$$" 2>&1
    status=$?
    report=$(cat "${TMPDIR:-/tmp}/abi-check.$$"); rm -f "${TMPDIR:-/tmp}/abi-check.$$"
    # abidiff's status bits: 1 error, 2 usage, 4 an ABI change, 8 an
    # incompatible one. Added symbols are left out of the report and so of
    # the status (--no-added-syms).
    if [ $((status & 3)) -ne 0 ]; then
      printf '%s\n' "$report" >&2
      echo "abi: $abidiff failed (status $status)" >&2
      exit 2
    fi
    if [ "$status" -ne 0 ]; then
      printf '%s\n' "$report"
      echo "abi: FAIL: $library changes or removes what $baseline exports (abidiff status $status)"
      echo "abi: if the release means it, regenerate the baseline: make abi-baseline"
      exit 1
    fi
    echo "abi: $library keeps every export and type of $baseline"
    ;;
  *) usage ;;
esac
