#!/bin/sh
# The Windows build, made and tested on Linux (.ci/run calls it; issue 23):
#   1. hwloc and CMocka cross-built from Debian's source packages
#      (tools/cross-mingw-deps.sh) into DIR/deps;
#   2. libcpuexec configured --host=x86_64-w64-mingw32 (the windows OS
#      backend), built in DIR/build: libcpuexec-1.dll,
#      libcpuexec-pthreadpool-0.dll, cpuexec-info.exe, the tests;
#   3. `make check` there: every test program under wine (tests/run-test.sh),
#      cpuexec-info.exe's checks (tests/info-cli.sh), the DLLs' exports
#      against the Linux .so files' (CPUEXEC_SO_EXPORTS, when given);
#   4. installed into DIR/install; a consumer built with pkg-config and one
#      with the CMake package, both run under wine.
# Prints the time of each step. Usage, from the source tree (unconfigured:
# the build is out of tree):
#   sh tools/cross-mingw-ci.sh DIR
# Needs tools/install-deps.sh --mingw.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
dir=$(cd "$1" && pwd)
host=x86_64-w64-mingw32
cc=$host-gcc-posix
cxx=$host-g++-posix
jobs=${JOBS:-2}
start=$(date +%s)
elapsed() { echo "$(($(date +%s) - start)) s"; }

# wine keeps its state in a prefix of its own here; one wineserver serves
# every test program of the run (started once, stopped at the end).
WINEPREFIX="$dir/wine"
WINEDEBUG=-all
export WINEPREFIX WINEDEBUG
mkdir -p "$WINEPREFIX"
trap 'wineserver -k >/dev/null 2>&1 || true' EXIT

deps="$dir/deps"
sh "$src/tools/cross-mingw-deps.sh" "$deps" "$dir/deps.work"
rm -rf "$dir/deps.work" # the sources and build trees (not needed again)
deps_time=$(elapsed)
echo "cross-mingw: dependencies ready ($deps_time)"

wine64 wineboot -i >/dev/null 2>&1 || wine wineboot -i >/dev/null 2>&1 || true
wineserver -p >/dev/null 2>&1 || true

rm -rf "$dir/build" "$dir/install"
mkdir -p "$dir/build"
cd "$dir/build"
PKG_CONFIG_LIBDIR="$deps/lib/pkgconfig" PKG_CONFIG=pkg-config \
  "$src/configure" -q --host=$host CC="$cc" CXX="$cxx" --prefix="$dir/install"
make -s -j"$jobs" >/dev/null
build_time=$(elapsed)
echo "cross-mingw: libcpuexec built ($build_time)"

make -s -j"$jobs" check >/dev/null 2>&1 || { cat test-suite.log; exit 1; }
check_time=$(elapsed)
pass=$(sed -n 's/^# PASS: *//p' test-suite.log)
skip=$(sed -n 's/^# SKIP: *//p' test-suite.log)
skipped_cases=$(grep -h '^\[  SKIPPED \] [a-z]' tests/*.log tests/whitebox/*.log examples/*.log 2>/dev/null | sort -u | wc -l)
echo "cross-mingw: make check under wine: $pass passed, $skip programs skipped, $skipped_cases cases skipped ($check_time)"
grep -h '^SKIP: ' tests/*.log || true

# A consumer of the installed package: pkg-config, then CMake.
make -s install >/dev/null
consumer="$dir/consumer"
rm -rf "$consumer" && mkdir -p "$consumer"
cat > "$consumer/main.c" <<'EOF'
#include <stdio.h>
#include <cpuexec.h>
static int add(void *ctx, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; i++) __atomic_fetch_add((int64_t *)ctx, i, __ATOMIC_RELAXED);
  return 0;
}
int main(void) {
  cpuexec_session *s = NULL;
  if (cpuexec_session_create(NULL, &s) != 0) return 1;
  int64_t sum = 0;
  int rc = cpuexec_parallel_for(cpuexec_session_executor(s), 1000, 10, &sum, add, 0);
  cpuexec_session_destroy(s);
  printf("consumer: libcpuexec %s, sum %lld\n", cpuexec_version_string(), (long long)sum);
  return rc == 0 && sum == 999 * 1000 / 2 ? 0 : 1;
}
EOF
pc_path="$dir/install/lib/pkgconfig:$deps/lib/pkgconfig"
# shellcheck disable=SC2046
$cc "$consumer/main.c" -o "$consumer/pkgconfig.exe" \
  $(PKG_CONFIG_LIBDIR="$pc_path" pkg-config --cflags --libs cpuexec)
cat > "$consumer/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.13)
project(consumer C)
find_package(cpuexec REQUIRED)
add_executable(cmake_consumer main.c)
target_link_libraries(cmake_consumer PRIVATE cpuexec::cpuexec)
EOF
cmake -S "$consumer" -B "$consumer/build" -DCMAKE_SYSTEM_NAME=Windows -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_PREFIX_PATH="$dir/install;$deps" -DCMAKE_FIND_ROOT_PATH="$dir/install;$deps" >/dev/null
cmake --build "$consumer/build" >/dev/null
WINEPATH="$(sed -n 's/^TEST_DLL_PATH = //p' Makefile);$dir/install/bin"
export WINEPATH
wine "$consumer/pkgconfig.exe"
wine "$consumer/build/cmake_consumer.exe"
echo "cross-mingw: pkg-config and CMake consumers built and run under wine ($(elapsed))"
echo "cross-mingw: done in $(elapsed): dependencies $deps_time, build to $build_time, check to $check_time"
