#!/bin/sh
# libcpuexec's symbol versions (abi/libcpuexec.map):
#  - the library exports exactly the functions the public headers declare
#    with CPUEXEC_EXPORT, each at the default version CPUEXEC_1.0, plus
#    ompt_start_tool unversioned when the OMPT tool is built (the version
#    node would hide it from libomp's versioned reference; the OpenMP tests
#    show both runtimes find the tool), and nothing else;
#  - a program linked against the library records the version it needs;
#  - legacy code linked against an older build without versions runs on this
#    one: a program calling ParallelFor, ParallelForThreadCount and
#    cpuexec_version_string is linked against a stand-in libcpuexec with the
#    same soname and unversioned names (whose functions give other answers),
#    then run on the real library through LD_LIBRARY_PATH; its loop must run
#    every index once and the version must be the real library's;
#  - ompt_start_tool is what a lookup by name in the process (libomp's and
#    libgomp's way: dlsym) finds, in libcpuexec.
# Skipped (77) where configure did not apply the version script (not ELF).
set -u
top=$(cd "${top_srcdir:-$(dirname "$0")/..}" && pwd)
build=$(cd "${top_builddir:-.}" && pwd)
cc=${CPUEXEC_CC:-cc}
nm=${CPUEXEC_NM:-nm}  # libtool's NM may carry options ("nm -B")
flags=${SANITIZER_FLAGS:-}
lib=$build/.libs/libcpuexec.so
[ "${CPUEXEC_VERSION_SCRIPT:-}" = 1 ] || { echo "SKIP: this build has no version script (configure: symbol versions)"; exit 77; }
[ -f "$lib" ] || { echo "SKIP: no shared $lib"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/symbol-versions.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
failed=0
ok() { echo "ok - $1"; }
fail() { echo "not ok - $1"; failed=1; }

# 1. The exports and their versions.
grep -rhoE 'CPUEXEC_EXPORT [^;(]*[^A-Za-z0-9_][A-Za-z_][A-Za-z0-9_]* *\(' "$top/include" |
  sed -E 's/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*) *\($/\1/' | sort -u >"$dir/declared"
[ -s "$dir/declared" ] || { fail "no CPUEXEC_EXPORT function found in $top/include"; exit 1; }
# shellcheck disable=SC2086
$nm -D --defined-only "$lib" >"$dir/nm" || { fail "$nm -D $lib"; exit 1; }
awk '$2 != "A" { print $NF }' "$dir/nm" | sort >"$dir/exports"
sed 's/$/@@CPUEXEC_1.0/' "$dir/declared" >"$dir/want"
[ "${CPUEXEC_WITH_OMPT:-}" = 1 ] && echo ompt_start_tool >>"$dir/want"
sort -o "$dir/want" "$dir/want"
if diff "$dir/want" "$dir/exports" >"$dir/diff"; then
  ok "libcpuexec.so exports the $(wc -l <"$dir/declared") CPUEXEC_EXPORT functions at CPUEXEC_1.0$([ "${CPUEXEC_WITH_OMPT:-}" = 1 ] && echo ' and ompt_start_tool unversioned'), nothing else"
else
  fail "libcpuexec.so's exports differ from the headers' at CPUEXEC_1.0 (< missing, > extra):"
  grep '^[<>]' "$dir/diff" | head -n 20
fi
grep -q ' A CPUEXEC_1.0$' "$dir/nm" && ok "libcpuexec.so defines the version node CPUEXEC_1.0" ||
  fail "libcpuexec.so defines no version node CPUEXEC_1.0"
for name in ParallelFor ParallelForRequiringExecutor ParallelForThreadCount; do
  grep -q " T $name@@CPUEXEC_1.0\$" "$dir/nm" && ok "the legacy $name is $name@@CPUEXEC_1.0" ||
    fail "the legacy $name is not exported at CPUEXEC_1.0"
done

# 2. A program built now needs CPUEXEC_1.0.
cat >"$dir/legacy.c" <<'EOF'
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <cpuexec.h>
#include <cpuexec/compat/parallel_for.h>

static _Atomic long long sum;
static _Atomic int ranges;

static void body(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&sum, i);
  atomic_fetch_add(&ranges, 1);
}

int main(void) {
  int rc = ParallelFor(1000, 10, NULL, body);
  printf("rc %d sum %lld ranges>0 %d threads>0 %d version %s\n", rc, (long long)sum, ranges > 0,
         ParallelForThreadCount() > 0, cpuexec_version_string());
  return rc == 0 && sum == 499500 ? 0 : 1;
}
EOF
# shellcheck disable=SC2086
"$cc" $flags -pthread -I"$top/include" -o "$dir/linked_now" "$dir/legacy.c" -L"$build/.libs" -lcpuexec \
  -Wl,-rpath,"$build/.libs" 2>"$dir/cc.err" || { fail "a program does not link against libcpuexec"; cat "$dir/cc.err"; exit 1; }
if readelf -V -W "$dir/linked_now" | grep -q 'Name: CPUEXEC_1.0'; then
  ok "a program linked against libcpuexec needs CPUEXEC_1.0"
else
  fail "a program linked against libcpuexec records no need of CPUEXEC_1.0"
fi

# 3. The same program linked against an unversioned build runs on this one.
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ -n "$soname" ] || { fail "libcpuexec.so has no soname"; exit 1; }
mkdir "$dir/old"
cat >"$dir/old/stub.c" <<'EOF'
/* An older libcpuexec without symbol versions: the same names, other answers. */
#include <stdint.h>
typedef void (*ParallelForFunction)(void *ctx, int64_t begin, int64_t end);
int ParallelFor(int64_t total, int64_t grain, void *ctx, ParallelForFunction fn) { return -99; }
int32_t ParallelForThreadCount(void) { return -1; }
const char *cpuexec_version_string(void) { return "stand-in without versions"; }
EOF
# shellcheck disable=SC2086
"$cc" $flags -shared -fPIC -o "$dir/old/$soname" -Wl,-soname,"$soname" "$dir/old/stub.c" 2>"$dir/cc.err" &&
  ln -s "$soname" "$dir/old/libcpuexec.so" &&
  "$cc" $flags -pthread -I"$top/include" -o "$dir/linked_old" "$dir/legacy.c" -L"$dir/old" -lcpuexec 2>>"$dir/cc.err" ||
  { fail "the stand-in without versions or the program against it does not build"; cat "$dir/cc.err"; exit 1; }
if readelf -V -W "$dir/old/$soname" | grep -q 'CPUEXEC_1.0'; then
  fail "the stand-in has versions"
elif readelf -V -W "$dir/linked_old" | grep -q 'CPUEXEC_1.0'; then
  fail "the program linked against the stand-in needs CPUEXEC_1.0"
else
  ok "the program linked against the stand-in ($soname, no versions) needs no version of libcpuexec"
fi
LD_LIBRARY_PATH="$dir/old" "$dir/linked_old" >"$dir/old.out" 2>&1
grep -q 'rc -99 .*version stand-in without versions' "$dir/old.out" &&
  ok "on the stand-in it runs the stand-in's ParallelFor" ||
  fail "on the stand-in: $(cat "$dir/old.out")"
version=$("$build/tools/cpuexec-info" --version 2>/dev/null | sed -n 's/.* \([0-9][0-9.]*\)$/\1/p' | head -n 1)
LD_LIBRARY_PATH="$build/.libs" "$dir/linked_old" >"$dir/new.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "rc 0 sum 499500 ranges>0 1 threads>0 1 version ${version:-[0-9]}" "$dir/new.out"; then
  ok "on the versioned library it runs ParallelFor over every index and reports version $version: $(cat "$dir/new.out")"
else
  fail "on the versioned library (exit $rc): $(cat "$dir/new.out")"
fi

# 4. ompt_start_tool by name, as the OpenMP runtimes look for a tool.
if [ "${CPUEXEC_WITH_OMPT:-}" = 1 ]; then
  cat >"$dir/lookup.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <cpuexec.h>
int main(void) {
  (void)cpuexec_version();
  void *f = dlsym(RTLD_DEFAULT, "ompt_start_tool");
  Dl_info info;
  if (!f || !dladdr(f, &info) || !info.dli_fname) { puts("not found"); return 1; }
  puts(info.dli_fname);
  return strstr(info.dli_fname, "libcpuexec") ? 0 : 1;
}
EOF
  # shellcheck disable=SC2086
  "$cc" $flags -I"$top/include" -o "$dir/lookup" "$dir/lookup.c" -L"$build/.libs" -lcpuexec -Wl,-rpath,"$build/.libs" \
    -ldl 2>"$dir/cc.err" || { fail "the lookup program does not build"; cat "$dir/cc.err"; exit 1; }
  out=$("$dir/lookup" 2>&1) && ok "dlsym(RTLD_DEFAULT, \"ompt_start_tool\") finds libcpuexec's ($out)" ||
    fail "dlsym(RTLD_DEFAULT, \"ompt_start_tool\") does not find libcpuexec's: $out"
fi
exit $failed
