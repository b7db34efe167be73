#!/bin/sh
# Builds google/pthreadpool's own test suites (test/pthreadpool.cc,
# test/pthreadpool-cxx.cc, test/pthreadpool_v2.cc of a checkout given as $1)
# against libcpuexec-pthreadpool's header and library from this build tree,
# and runs them. Needs GoogleTest (Debian: libgtest-dev). The suites stay in
# the upstream checkout; nothing of theirs enters this tree.
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
