#!/bin/sh
# Cross-builds libcpuexec's two dependencies for Windows (x86_64-w64-mingw32)
# from Debian's own source packages, into PREFIX:
#   hwloc   (apt-get source hwloc): the library only, shared (libhwloc-15.dll),
#           every optional part off (no libxml2: hwloc's own XML parser reads
#           the stored topologies; no I/O, PCI, GPU, cairo, plugins);
#   CMocka  (apt-get source cmocka): static (libcmocka.a), for the tests.
# PREFIX then has include/, lib/ (with pkgconfig/hwloc.pc and cmocka.pc) and
# bin/libhwloc-15.dll. Usage:
#   sh tools/cross-mingw-deps.sh PREFIX [WORKDIR]
# WORKDIR (default PREFIX.work) holds the sources and build trees. The
# deb-src entry is this script's own: a private apt configuration in WORKDIR
# (its own sources.list and lists) naming the mirror the system's apt already
# uses for its Debian release (or DEBIAN_MIRROR), so the system's apt sources
# are never changed. Needs: the packages of tools/install-deps.sh --mingw (the
# mingw-w64 compilers, dpkg-dev, cmake) and that mirror.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 PREFIX [WORKDIR]" >&2; exit 2; }
host=x86_64-w64-mingw32
mkdir -p "$1"
prefix=$(cd "$1" && pwd)
work=${2:-$prefix.work}
mkdir -p "$work"
work=$(cd "$work" && pwd)
jobs=${JOBS:-2}
cc=${CC_MINGW:-$host-gcc-posix}
suite=${DEBIAN_SUITE:-$(. /etc/os-release && echo "$VERSION_CODENAME")}
start=$(date +%s)

# The URI of the system's apt source for $suite: one-line entries
# (`deb [options] URI suite ...`) and deb822 stanzas (URIs:, Suites:).
system_mirror() {
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk -v s="$suite" '$1 == "deb" { for (i = 2; i < NF; i++) if ($i ~ /^[a-z+]+:\/\//) { if ($(i + 1) == s) print $i; break } }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v s="$suite" 'BEGIN { RS = ""; FS = "\n" }
      { uri = ""; found = 0
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^URIs:/) { split($i, u, " "); uri = u[2] }
          if ($i ~ /^Suites:/) { n = split($i, w, " "); for (j = 2; j <= n; j++) if (w[j] == s) found = 1 }
        }
        if (found && uri != "") print uri }' "$f"
  done
}
mirror=${DEBIAN_MIRROR:-$(system_mirror | head -n 1)}
[ -n "$mirror" ] || { echo "cross-mingw-deps: no apt source for $suite found; set DEBIAN_MIRROR" >&2; exit 1; }

# 1. The source packages, through a private apt configuration.
apt="$work/apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$work/src"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" \
  > "$apt/sources.list"
set -- -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts="$apt/parts" \
  -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o APT::Sandbox::User=root
apt-get -qq "$@" update
(cd "$work/src" && rm -rf hwloc-* cmocka-* && apt-get -qq "$@" source --only-source hwloc cmocka >/dev/null)
hwloc_src=$(ls -d "$work"/src/hwloc-*/ | head -1)
cmocka_src=$(ls -d "$work"/src/cmocka-*/ | head -1)
echo "cross-mingw-deps: sources $(basename "$hwloc_src") $(basename "$cmocka_src") ($(($(date +%s) - start)) s)"

# Runs a step with its output in WORKDIR/LOG, shown only when it fails.
step() {
  log="$work/$1.log"
  shift
  if ! "$@" > "$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "cross-mingw-deps: failed: $* (log: $log)" >&2
    exit 1
  fi
}

# 2. hwloc: the library, its headers and hwloc.pc; no utilities, tests, docs.
rm -rf "$work/build-hwloc" && mkdir -p "$work/build-hwloc"
cd "$work/build-hwloc"
step hwloc-configure "$hwloc_src/configure" --host=$host CC="$cc" --prefix="$prefix" --enable-shared --disable-static \
  --disable-cairo --disable-libxml2 --disable-io --disable-pci --disable-opencl --disable-cuda --disable-nvml \
  --disable-rsmi --disable-levelzero --disable-gl --disable-libudev --disable-plugin-dlopen \
  --disable-plugin-ltdl --disable-doxygen --disable-readme --disable-picky
step hwloc-include make -j"$jobs" -C include install
step hwloc-build make -j"$jobs" -C hwloc install
mkdir -p "$prefix/lib/pkgconfig"
cp hwloc.pc "$prefix/lib/pkgconfig/"
cd "$work"
echo "cross-mingw-deps: hwloc built ($(($(date +%s) - start)) s)"

# 3. CMocka: the static library only, installed as libcmocka.a with its
# header and a cmocka.pc naming it. It is built with mingw-w64's C99 stdio
# (__USE_MINGW_ANSI_STDIO, as libcpuexec and its tests are: msvcrt's printf
# has no %zu), so the installed header declares its printf-like functions
# gnu_printf instead of the target's default (ms_printf).
rm -rf "$work/build-cmocka"
step cmocka-configure cmake -S "$cmocka_src" -B "$work/build-cmocka" -DCMAKE_SYSTEM_NAME=Windows \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS=-D__USE_MINGW_ANSI_STDIO=1 -DCMAKE_BUILD_TYPE=Release \
  -DWITH_STATIC_LIB=ON -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF
step cmocka-build cmake --build "$work/build-cmocka" --target cmocka-static -j "$jobs"
mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
sed 's/__format__ (__printf__, a, b)/__format__ (__gnu_printf__, a, b)/' "$cmocka_src/include/cmocka.h" \
  > "$prefix/include/cmocka.h"
grep -q __gnu_printf__ "$prefix/include/cmocka.h" || { echo "cross-mingw-deps: cmocka.h: no printf attribute to fix" >&2; exit 1; }
cp "$(find "$work/build-cmocka" -name 'libcmocka-static.a' | head -1)" "$prefix/lib/libcmocka.a"
cmocka_version=$(basename "$cmocka_src" | sed 's/^cmocka-//; s/\/$//')
cat > "$prefix/lib/pkgconfig/cmocka.pc" <<EOF
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: cmocka
Description: The cmocka unit testing library (static, cross-built for $host)
Version: $cmocka_version
Libs: -L\${libdir} -lcmocka
Cflags: -I\${includedir}
EOF
echo "cross-mingw-deps: CMocka built; done in $(($(date +%s) - start)) s: $prefix"
