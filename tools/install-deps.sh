#!/bin/sh
# Installs the Debian 12 packages libcpuexec needs to build, test and benchmark.
# The runtime guards' tests link OpenBLAS's pthreads build and BLIS's
# pthreads and OpenMP builds by their paths (libopenblas0-pthread,
# libblis4-pthread, libblis4-openmp); tests/guard-packages.sh fails when one
# is missing. Installing them may move the system's libblas.so.3 alternative;
# no test depends on where it points. libgtest-dev and libfxdiv-dev serve
# tools/pthreadpool-upstream-tests.sh (upstream's suites and its own pool).
# abigail-tools (libabigail's abidw and abidiff) checks libcpuexec's ABI
# against abi/libcpuexec.abi (make abi-check, tests/abi-check.sh).
# --mingw adds what the Windows build made on Linux needs (the mingw-w64
# compilers, wine to run its tests (the package wine: wine64 alone puts no
# command on PATH), dpkg-dev for `apt-get source` of hwloc
# and CMocka; tools/cross-mingw-deps.sh, tools/cross-mingw-ci.sh). .ci/run
# passes it.
set -e
packages="build-essential autoconf automake libtool pkgconf libhwloc-dev hwloc libcmocka-dev
  python3-dev python3-pytest python3-numpy python3-venv python3-pip python3-setuptools python3-wheel
  clang libomp-dev libpthreadpool-dev libtbb-dev libopenblas-openmp-dev strace
  libfftw3-dev libopencv-core-dev libopencv-imgproc-dev libeigen3-dev libgtest-dev libfxdiv-dev
  libopenblas0-pthread libblis4-pthread libblis4-openmp
  cmake doxygen groff-base abigail-tools"
for arg in "$@"; do
  case $arg in
    --mingw) packages="$packages gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 wine wine64 dpkg-dev" ;;
    *) echo "usage: $0 [--mingw]" >&2; exit 2 ;;
  esac
done
if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $packages
