#!/bin/sh
# Builds the libFuzzer targets of tests/fuzz with clang (-fsanitize=fuzzer,
# address) in BUILDDIR and runs each for SECONDS, starting from the corpus
# kept in tests/data/fuzz-corpus/<target>. Not part of `make check` or
# `make distcheck` (libFuzzer needs clang); .ci/run calls it.
#
#   sh tests/fuzz/run.sh [BUILDDIR [SECONDS]]   defaults: build-fuzz 60
#   FUZZ_UPDATE_CORPUS=1 sh tests/fuzz/run.sh   also merge what was found
#                                               into the corpus in the tree
#
# Exits 0 when every target ran its time without a finding, 1 on a finding
# (the input is kept as BUILDDIR/crash-* and named in the log), and 0 with
# a message when no clang with libFuzzer is installed.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build-fuzz}
seconds=${2:-60}
targets="fuzz_policy fuzz_topology_options fuzz_environment fuzz_topology_xml"

cc=${FUZZ_CC:-clang}
probe=$(mktemp -d)
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' > "$probe/p.c"
if ! command -v "$cc" >/dev/null 2>&1 || ! "$cc" -fsanitize=fuzzer,address "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
  rm -rf "$probe"
  echo "fuzz: skipped: no $cc with libFuzzer (-fsanitize=fuzzer) on this machine"
  exit 0
fi
rm -rf "$probe"

flags="-g -O1 -fno-omit-frame-pointer -fsanitize=address,fuzzer-no-link"
mkdir -p "$build"
build=$(cd "$build" && pwd)
# The library is built by its own configure, out of tree. A source tree
# that is configured itself cannot host a VPATH build: the fuzz build then
# works on a copy of the files git knows (tracked and untracked).
from="$src"
if [ -f "$src/config.status" ] || [ ! -x "$src/configure" ]; then
  from="$build/tree"
  if [ ! -x "$from/configure" ]; then
    mkdir -p "$from"
    (cd "$src" && git ls-files -co --exclude-standard | tar -cf - -T -) | (cd "$from" && tar -xf -)
    (cd "$from" && autoreconf -fi >/dev/null 2>&1)
  fi
fi
mkdir -p "$build/obj"
cd "$build/obj"
if [ ! -f Makefile ]; then
  "$from/configure" -q CC="$cc" CFLAGS="$flags" --disable-ompt >/dev/null
fi
make -s libcpuexec_internal.la libcpuexec_whitebox.la >/dev/null
failed=0
for t in $targets; do
  "$cc" -g -O1 -fno-omit-frame-pointer -fsanitize=address,fuzzer -std=gnu11 -pthread \
    -I"$src/include" -I"$src/src" -Ibuild-aux -include config.h \
    "$src/tests/fuzz/$t.c" .libs/libcpuexec_whitebox.a .libs/libcpuexec_internal.a -lhwloc -ldl -lm -o "$t"
  mkdir -p "work/$t"
  echo "fuzz: $t for ${seconds}s"
  if ! ASAN_OPTIONS=detect_leaks=1 "./$t" "work/$t" "$src/tests/data/fuzz-corpus/$t" -max_total_time="$seconds" \
      -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$t-" -print_final_stats=1 >"$t.log" 2>&1; then
    echo "fuzz: $t FOUND A FAILURE:"
    tail -n 40 "$t.log"
    failed=1
  else
    grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$t.log" | tr '\n' ' '
    echo
  fi
  if [ "${FUZZ_UPDATE_CORPUS:-0}" = 1 ]; then
    mkdir -p "$src/tests/data/fuzz-corpus/$t"
    "./$t" -merge=1 "$src/tests/data/fuzz-corpus/$t" "work/$t" >/dev/null 2>&1 || true
  fi
done
exit $failed
