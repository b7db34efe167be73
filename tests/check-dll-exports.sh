#!/bin/sh
# A Windows build's DLLs export what the Linux build's shared libraries do
# (issue 23): libcpuexec-*.dll exports exactly the functions the public
# headers declare with CPUEXEC_EXPORT, plus ompt_start_tool when the OMPT
# tool is built, and nothing else (no internal cpuexec__* name);
# libcpuexec-pthreadpool-*.dll exports the pthreadpool_* functions of its
# header. With CPUEXEC_SO_EXPORTS=DIR (.ci/run sets it), DIR/libcpuexec.txt
# and DIR/libcpuexec-pthreadpool.txt, the sorted names `nm -D
# --defined-only` gave for the Linux .so files, are the reference instead.
# A native build has no DLL: skipped (77).
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top=$(cd "$top" && pwd)
build=${top_builddir:-.}
objdump=${CPUEXEC_OBJDUMP:-objdump}
work=$(mktemp -d "${TMPDIR:-/tmp}/cpuexec-exports.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

dll=$(ls "$build"/.libs/libcpuexec-[0-9]*.dll 2>/dev/null | head -1)
ppdll=$(ls "$build"/.libs/libcpuexec-pthreadpool-[0-9]*.dll 2>/dev/null | head -1)
if [ -z "$dll" ]; then
  echo "SKIP: no libcpuexec DLL in $build/.libs (not a Windows build)"
  exit 77
fi

# The export table's names, one a line, sorted.
exports() {
  "$objdump" -p "$1" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' | sed -e '1d' -n -e 's/^.*\] *//p' | sort -u
}

if [ -n "${CPUEXEC_SO_EXPORTS:-}" ]; then
  cp "$CPUEXEC_SO_EXPORTS/libcpuexec.txt" "$work/want"
  cp "$CPUEXEC_SO_EXPORTS/libcpuexec-pthreadpool.txt" "$work/ppwant"
  what="the Linux build's .so files ($CPUEXEC_SO_EXPORTS)"
else
  grep -rhoE 'CPUEXEC_EXPORT [^;(]*[^A-Za-z0-9_][A-Za-z_][A-Za-z0-9_]* *\(' "$top/include" |
    sed -E 's/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*) *\($/\1/' > "$work/want"
  grep -q '^#define CPUEXEC_WITH_OMPT 1' "$build/build-aux/config.h" && echo ompt_start_tool >> "$work/want"
  sort -u -o "$work/want" "$work/want"
  grep -hoE '^[a-z_0-9 *]*[^A-Za-z0-9_](pthreadpool_[a-z0-9_]+) *\(' "$top/include/cpuexec-pthreadpool/pthreadpool.h" |
    sed -E 's/.*[^A-Za-z0-9_](pthreadpool_[a-z0-9_]+) *\($/\1/' | sort -u > "$work/ppwant"
  what="the public headers"
fi

status=0
exports "$dll" > "$work/have"
if ! diff "$work/want" "$work/have" > "$work/diff"; then
  echo "not ok - $(basename "$dll") does not export what $what say (< missing, > extra):"
  grep '^[<>]' "$work/diff"
  status=1
else
  echo "ok - $(basename "$dll") exports the $(wc -l < "$work/have") functions of $what"
fi
if [ -n "$ppdll" ]; then
  exports "$ppdll" > "$work/pphave"
  if ! diff "$work/ppwant" "$work/pphave" > "$work/ppdiff"; then
    echo "not ok - $(basename "$ppdll") does not export what $what say (< missing, > extra):"
    grep '^[<>]' "$work/ppdiff"
    status=1
  else
    echo "ok - $(basename "$ppdll") exports the $(wc -l < "$work/pphave") functions of $what"
  fi
fi
exit $status
