#!/bin/sh
# Builds google/pthreadpool's own test suites (test/pthreadpool.cc,
# test/pthreadpool-cxx.cc, test/pthreadpool_v2.cc of a checkout given as $1)
# against libcpuexec-pthreadpool's header and library from this build tree,
# and runs them. Then builds upstream's pool itself (its src/, with FXdiv:
# Debian's libfxdiv-dev) with tools/pthreadpool-upstream-executor.c, linked
# with libcpuexec only, and runs it: upstream's pthreadpool_create_v2() on a
# libcpuexec executor (cpuexec/compat/pthreadpool_executor.h) runs its items
# on a session's threads. Needs GoogleTest (Debian: libgtest-dev). The
# suites and sources stay in the upstream checkout; nothing of theirs enters
# this tree.
#   sh tools/pthreadpool-upstream-tests.sh ~/src/pthreadpool [build-dir]
set -eu
upstream=${1:?usage: $0 UPSTREAM_CHECKOUT [BUILD_DIR]}
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${2:-$top}" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for suite in pthreadpool-cxx pthreadpool pthreadpool_v2; do
  src="$upstream/test/$suite.cc"
  [ -f "$src" ] || { echo "no $src"; exit 1; }
  ${CXX:-c++} -std=c++17 -O1 -I"$top/include/cpuexec-pthreadpool" "$src" -o "$out/$suite" \
    -L"$build/.libs" -Wl,-rpath,"$build/.libs" -lcpuexec-pthreadpool -lcpuexec -lgtest -lgtest_main -lpthread
  "$out/$suite" --gtest_brief=1
done
echo "pthreadpool-upstream-tests: every suite of $upstream passed on libcpuexec-pthreadpool"
for f in legacy-api portable-api memory pthreads fastpath; do
  ${CC:-cc} -std=gnu11 -O1 -DPTHREADPOOL_USE_CPUINFO=0 -DPTHREADPOOL_USE_FUTEX=1 -DPTHREADPOOL_USE_GCD=0 \
    -DPTHREADPOOL_USE_FASTPATH=0 -D_GNU_SOURCE=1 -I"$upstream/include" -I"$upstream/src" \
    -c "$upstream/src/$f.c" -o "$out/upstream-$f.o"
done
${CC:-cc} -std=gnu11 -O1 -I"$upstream/include" -I"$top/include" "$top/tools/pthreadpool-upstream-executor.c" \
  "$out"/upstream-*.o -o "$out/upstream-on-executor" -L"$build/.libs" -Wl,-rpath,"$build/.libs" -lcpuexec -lpthread
"$out/upstream-on-executor"
