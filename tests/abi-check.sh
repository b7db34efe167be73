#!/bin/sh
# abi/check.sh, the ABI check `make abi-check` runs on libcpuexec in CI,
# fails on what breaks programs built against the baseline and passes what
# does not: a stand-in library with an options struct and two functions is
# dumped as the baseline, then compared with rebuilds of itself. Unchanged:
# passes; a function added: passes; a function removed: fails; a struct
# member changed from int to long: fails; a member added to the struct
# (its size grows): fails; the private struct behind an opaque handle of
# the header grown: passes (no program sees its layout). Skipped (77) without libabigail's abidw and
# abidiff (Debian: abigail-tools) or a compiler.
set -u
srcdir=$(cd "${top_srcdir:-$(dirname "$0")/..}" && pwd)
cc=${CPUEXEC_CC:-cc}
check=$srcdir/abi/check.sh
for tool in "${ABIDW:-abidw}" "${ABIDIFF:-abidiff}"; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: no $tool (Debian: abigail-tools)"; exit 77; }
done
dir=$(mktemp -d "${TMPDIR:-/tmp}/abi-check.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
failed=0

# build NAME STRUCT_MEMBERS [CFLAGS...]: lib NAME.so from the stand-in, its
# header in NAME/include.
build() {
  name=$1 members=$2; shift 2
  mkdir -p "$dir/$name/include"
  cat >"$dir/$name/include/stub.h" <<HEADER
typedef struct stub_options { $members } stub_options;
typedef struct stub_handle stub_handle;
int stub_run(const stub_options *o);
stub_handle *stub_open(void);
#ifndef STUB_NO_SECOND
int stub_second(int x);
#endif
#ifdef STUB_ADDED
int stub_added(int x);
#endif
HEADER
  cat >"$dir/$name/stub.c" <<'SOURCE'
#include <stdlib.h>
#include "stub.h"
struct stub_handle {
  int state;
#ifdef STUB_PRIVATE_GROWN
  long more[4];
#endif
};
stub_handle *stub_open(void) { return calloc(1, sizeof(stub_handle)); }
int stub_run(const stub_options *o) { return (int)o->threads; }
#ifndef STUB_NO_SECOND
int stub_second(int x) { return x + 1; }
#endif
#ifdef STUB_ADDED
int stub_added(int x) { return x + 2; }
#endif
SOURCE
  (cd "$dir/$name" && "$cc" -g -O0 -shared -fPIC "$@" -Iinclude -o "$name.so" stub.c) ||
    { echo "not ok - the stand-in $name does not build"; exit 1; }
}
# expect DESCRIPTION STATUS NAME: abi/check.sh compare exits STATUS on NAME.
expect() {
  (cd "$dir/$3" && sh "$check" compare "$dir/baseline.abi" "$3.so" include) >"$dir/out" 2>&1
  rc=$?
  if [ "$rc" -eq "$2" ]; then
    echo "ok - $1 (exit $rc)"
  else
    echo "not ok - $1: exit $rc, expected $2"; sed 's/^/  /' "$dir/out"; failed=1
  fi
}

build base "int threads; int spin;"
(cd "$dir/base" && sh "$check" dump "$dir/baseline.abi" base.so include) >"$dir/out" 2>&1 ||
  { echo "not ok - abi/check.sh dump failed"; cat "$dir/out"; exit 1; }
grep -q "stub_second" "$dir/baseline.abi" && grep -q "stub_options" "$dir/baseline.abi" &&
  echo "ok - the baseline holds the functions and the struct" ||
  { echo "not ok - the baseline lacks stub_second or stub_options"; failed=1; }
build same "int threads; int spin;"
build added "int threads; int spin;" -DSTUB_ADDED
build removed "int threads; int spin;" -DSTUB_NO_SECOND
build member "int threads; long spin;"
build grown "int threads; int spin; int more;"
build private "int threads; int spin;" -DSTUB_PRIVATE_GROWN
expect "an unchanged rebuild passes" 0 same
expect "an added function passes" 0 added
expect "a removed export fails" 1 removed
grep -q "stub_second" "$dir/out" && echo "ok - the failure names the removed function" ||
  { echo "not ok - the failure does not name stub_second"; failed=1; }
expect "a struct member's type changed fails" 1 member
expect "a struct grown by a member fails" 1 grown
expect "the private struct behind an opaque handle grown passes" 0 private
exit $failed
