#!/bin/sh
# Installs the Debian 12 packages libcpuexec needs to build, test and benchmark.
set -e
packages="build-essential autoconf automake libtool pkgconf libhwloc-dev hwloc libcmocka-dev
  python3-dev python3-pytest python3-numpy python3-venv python3-pip python3-setuptools python3-wheel
  clang libomp-dev libpthreadpool-dev libtbb-dev libopenblas-openmp-dev strace
  libfftw3-dev libopencv-core-dev libopencv-imgproc-dev libeigen3-dev
  cmake doxygen groff-base"
if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $packages
