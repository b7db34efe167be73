#!/bin/sh
# The CMake package: `make install DESTDIR=...` into a tree under the build
# directory, then examples/cmake (find_package(cpuexec CONFIG REQUIRED),
# cpuexec::cpuexec and cpuexec::pthreadpool) configured, built and run
# against it; then the same after moving the tree (no absolute paths of the
# build are kept). Also checks that the man pages are installed.
# CI runs the suite several times (.ci/run names the builds); a
# check of the sources and the packaging, the same in every build, runs in
# the first only: the later builds set CPUEXEC_SOURCE_CHECKS_DONE.
if [ -n "${CPUEXEC_SOURCE_CHECKS_DONE:-}" ]; then
  echo "SKIP: $(basename "$0") checks what every build shares; it ran in this CI run's first build (CPUEXEC_SOURCE_CHECKS_DONE)"
  exit 77
fi
set -eu
command -v cmake >/dev/null 2>&1 || { echo "cmake-package: cmake is not installed (Debian: cmake)"; exit 1; }
build=$(cd "${top_builddir:-.}" && pwd)
src=$(cd "${top_srcdir:-.}" && pwd)
work=$build/tests/cmake-package.dir
rm -rf "$work"
mkdir -p "$work"
# The test runs inside `make check`: a fresh make, not the caller's jobserver.
unset MAKEFLAGS MFLAGS MAKELEVEL || true
# One `make install` at a time in this build tree (tests/python-package.sh installs too).
lock=; command -v flock >/dev/null 2>&1 && lock="flock $build/tests/install-lock"
$lock ${MAKE:-make} -C "$build" install DESTDIR="$work/destdir" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; echo "cmake-package: make install failed"; exit 1; }

config=$(find "$work/destdir" -name cpuexecConfig.cmake)
[ -n "$config" ] || { echo "cmake-package: cpuexecConfig.cmake was not installed"; exit 1; }
case "$config" in */lib*/cmake/cpuexec/cpuexecConfig.cmake) ;; *)
  echo "cmake-package: installed at $config, not under lib/cmake/cpuexec"; exit 1;; esac
cmakedir=$(dirname "$config")
[ -f "$cmakedir/cpuexecConfigVersion.cmake" ] || { echo "cmake-package: no cpuexecConfigVersion.cmake"; exit 1; }
for f in "$cmakedir"/*.cmake; do
  for p in "$build" "$src" "$work"; do
    if grep -F "$p" "$f" >/dev/null; then echo "cmake-package: $f names the build path $p"; exit 1; fi
  done
done
for page in man1/cpuexec-info.1 man7/cpuexec.7 man7/cpuexec-pthreadpool.7; do
  [ -n "$(find "$work/destdir" -path "*/share/man/$page")" ] || { echo "cmake-package: $page not installed"; exit 1; }
done

# Configure, build and run the example against the package in $1 (a cmake dir).
try() {
  dir=$1; out=$2
  libdir=$(cd "$dir/../.." && pwd)
  cmake -S "$src/examples/cmake" -B "$out" -Dcpuexec_DIR="$dir" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="${CC:-cc}" -DCMAKE_CXX_COMPILER="${CXX:-c++}" \
    -DCMAKE_C_FLAGS="${SANITIZER_FLAGS:-}" -DCMAKE_CXX_FLAGS="${SANITIZER_FLAGS:-}" \
    -DCMAKE_EXE_LINKER_FLAGS="${SANITIZER_FLAGS:-}" >"$out.log" 2>&1 ||
    { cat "$out.log"; echo "cmake-package: configuring against $dir failed"; exit 1; }
  cmake --build "$out" >>"$out.log" 2>&1 || { cat "$out.log"; echo "cmake-package: build failed"; exit 1; }
  # The installed libraries' run path is the configured libdir, not this tree.
  LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$out/app"
  LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$out/pp_app"
  # What the example linked is the installed library of that tree.
  grep -F "$libdir/libcpuexec" "$out/CMakeFiles/app.dir/link.txt" >/dev/null ||
    { echo "cmake-package: app did not link $libdir/libcpuexec"; exit 1; }
}
try "$cmakedir" "$work/build"

# Relocated: the whole tree moved elsewhere.
mv "$work/destdir" "$work/moved"
try "$(echo "$cmakedir" | sed "s|^$work/destdir|$work/moved|")" "$work/build-moved"

# A version it does not satisfy is refused; its own major.minor is accepted.
release=$(sed -n 's/^release=//p' "$src/VERSION")
major_minor=$(echo "$release" | cut -d. -f1-2)
moved_dir=$(echo "$cmakedir" | sed "s|^$work/destdir|$work/moved|")
mkdir -p "$work/version"
cat >"$work/version/CMakeLists.txt" <<EOT
cmake_minimum_required(VERSION 3.13)
project(version_check NONE)
find_package(cpuexec 99.0 CONFIG QUIET PATHS "$moved_dir" NO_DEFAULT_PATH)
if(cpuexec_FOUND)
  message(FATAL_ERROR "cpuexec 99.0 was accepted")
endif()
find_package(cpuexec $major_minor CONFIG REQUIRED PATHS "$moved_dir" NO_DEFAULT_PATH)
if(NOT cpuexec_VERSION STREQUAL "$release")
  message(FATAL_ERROR "cpuexec_VERSION is \${cpuexec_VERSION}, VERSION says $release")
endif()
EOT
cmake -S "$work/version" -B "$work/version/build" >"$work/version.log" 2>&1 ||
  { cat "$work/version.log"; echo "cmake-package: the version check failed"; exit 1; }
echo "cmake-package: find_package(cpuexec) built and ran the example, installed and relocated"
rm -rf "$work"
