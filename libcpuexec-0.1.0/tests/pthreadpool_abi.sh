#!/bin/sh
# libcpuexec-pthreadpool exports every function Debian's libpthreadpool
# exports (the link half of "source- and link-compatible"). Skipped (77)
# where Debian's library is not installed.
builddir=${top_builddir:-.}
ours="$builddir/.libs/libcpuexec-pthreadpool.so"
theirs=$(${CC:-cc} -print-file-name=libpthreadpool.so 2>/dev/null)
case "$theirs" in /*) ;; *) echo "Debian libpthreadpool not installed; nothing to compare"; exit 77 ;; esac
[ -f "$ours" ] || { echo "$ours not built (static-only build?)"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$theirs" | awk '$2 == "T" {print $3}' | sort -u > "$tmp/theirs"
nm -D --defined-only "$ours" | awk '$2 == "T" {print $3}' | sort -u > "$tmp/ours"
[ -s "$tmp/theirs" ] || { echo "no symbols read from $theirs"; exit 1; }
missing=$(comm -23 "$tmp/theirs" "$tmp/ours")
if [ -n "$missing" ]; then
  echo "exported by $theirs but not by $ours:"; echo "$missing"; exit 1
fi
# Nothing of libcpuexec's own leaks out of the compat library.
leaked=$(grep -v '^pthreadpool_' "$tmp/ours")
if [ -n "$leaked" ]; then
  echo "unexpected exports from $ours:"; echo "$leaked"; exit 1
fi
echo "all $(wc -l < "$tmp/theirs") functions of $theirs are exported; $(wc -l < "$tmp/ours") in all"
