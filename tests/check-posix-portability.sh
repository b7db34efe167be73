#!/bin/sh
# The POSIX layer builds beyond Linux (issue 23): every library object of
# the posix OS backend (src/*/*.c without the other backends' files,
# compat/*.c, compat/pthreadpool/*.c) is compiled with a strict POSIX
# feature set (-D_POSIX_C_SOURCE=200809L, no _GNU_SOURCE: glibc then
# declares nothing Linux- or GNU-only), an implicit declaration being an
# error, and the symbols the objects leave undefined (nm -u, less what they
# define among themselves) must all be in tests/posix-allowed-symbols.txt:
# C11 and POSIX.1-2008 functions, glibc's names for a few of them, the
# compiler's runtime, hwloc. Its "dlfcn-extension" part (dladdr) is allowed
# only in src/os/ objects: the one file that asks for it is
# src/os/loader_dlfcn.c. So a macOS or BSD port needs only its own OS file.
# Prints every offending symbol with the objects that use it; exits 1 if any.
# CI runs the suite several times (.ci/run names the builds); a
# check of the sources and the packaging, the same in every build, runs in
# the first only: the later builds set CPUEXEC_SOURCE_CHECKS_DONE.
if [ -n "${CPUEXEC_SOURCE_CHECKS_DONE:-}" ]; then
  echo "SKIP: $(basename "$0") checks what every build shares; it ran in this CI run's first build (CPUEXEC_SOURCE_CHECKS_DONE)"
  exit 77
fi
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top=$(cd "$top" && pwd)
build=${top_builddir:-$top}
build=$(cd "$build" && pwd)
cc=${CPUEXEC_CC:-${CC:-cc}}
nm=${CPUEXEC_NM:-${NM:-nm}}
hwloc_cflags=${CPUEXEC_HWLOC_CFLAGS:-$HWLOC_CFLAGS}

case $($cc -dumpmachine 2>/dev/null) in
  *mingw* | *cygwin* | *windows*)
    echo "SKIP: $cc builds for Windows; the POSIX layer's portability is checked by the native (Unix) build"
    exit 77 ;;
esac
config="$build/build-aux/config.h"
[ -f "$config" ] || { echo "no $config: run configure first"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/cpuexec-posix.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# The build's configuration, without what only glibc or Linux has.
cat > "$work/strict.h" <<EOH
#include "$config"
#undef _GNU_SOURCE
#undef HAVE_PTHREAD_SETNAME_NP
#define _POSIX_C_SOURCE 200809L
EOH

cd "$top" || exit 1
sources=$(ls src/*/*.c compat/*.c compat/pthreadpool/*.c | grep -v -e '^src/os/os_linux\.c$' -e '^src/os/os_windows\.c$' \
  -e '^src/os/loader_windows\.c$')
fail=0
for f in $sources; do
  o="$work/$(echo "$f" | tr / _).o"
  if ! $cc -std=gnu11 -pthread -include "$work/strict.h" -Iinclude -Isrc $hwloc_cflags -DCPUEXEC_BUILDING \
      -Werror=implicit-function-declaration -Werror=implicit-int -Wno-unused-parameter -O1 -c "$f" -o "$o" \
      2> "$work/err"; then
    echo "$f does not compile with the strict POSIX feature set:"
    sed 's/^/  /' "$work/err"
    fail=1
  fi
done
[ $fail -eq 0 ] || exit 1

# "symbol object" for every undefined symbol; the symbols some object defines.
for o in "$work"/*.o; do
  $nm -u "$o" | awk -v o="$(basename "$o" .o)" '{ print $NF, o }'
done | sort > "$work/undefined"
for o in "$work"/*.o; do $nm --defined-only "$o" | awk '{ print $NF }'; done | sort -u > "$work/defined"

allow="$top/tests/posix-allowed-symbols.txt"
sed -e 's/#.*//' "$allow" | awk 'NF' > "$work/allow"
# "name" lines are allowed anywhere; "name os-only" lines in src/os/ only.
awk 'NF == 1 { print $1 }' "$work/allow" | sort -u > "$work/anywhere"
awk '$2 == "os-only" { print $1 }' "$work/allow" | sort -u > "$work/os_only"

bad=$(join -v 1 "$work/undefined" "$work/defined" | while read -r sym obj; do
  case $sym in hwloc_*) continue ;; esac
  if grep -qx "$sym" "$work/anywhere"; then continue; fi
  if grep -qx "$sym" "$work/os_only"; then
    case $obj in src_os_*) continue ;; esac
    echo "$sym in $obj (allowed in src/os/ only: put the call behind src/os/)"
    continue
  fi
  echo "$sym in $obj (not a POSIX function in $allow)"
done)
if [ -n "$bad" ]; then
  printf '%s\n' "$bad"
  exit 1
fi
count=$(join -v 1 "$work/undefined" "$work/defined" | cut -d ' ' -f 1 | sort -u | wc -l)
echo "POSIX layer: $(echo "$sources" | wc -l) objects compiled with -D_POSIX_C_SOURCE=200809L, $count symbols used, all allowed"
