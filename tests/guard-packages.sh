#!/bin/sh
# The packages the runtime-guard tests run against are installed, so those
# tests ran: a missing one fails here, naming the package, instead of its
# test silently not being built (tools/install-deps.sh installs them all).
# CPUEXEC_ALLOW_MISSING_GUARD_BUILDS=1 turns the failure into a skip, for a
# machine where they cannot be installed.
dir=${CPUEXEC_GUARD_BUILDS_DIR:-/usr/lib}
missing=""
check() { # FILE PACKAGE WHAT
  if [ -f "$1" ]; then
    echo "ok: $3: $1"
  else
    echo "missing: $3: $1 (Debian package $2)"
    missing="$missing $2"
  fi
}
check "$dir/openblas-pthread/libopenblas.so.0" libopenblas0-pthread "OpenBLAS, pthreads build"
check "$dir/blis-pthread/libblis.so.4" libblis4-pthread "BLIS, pthreads build"
check "$dir/blis-openmp/libblis.so.4" libblis4-openmp "BLIS, OpenMP build"
check "$dir/openblas-openmp/libopenblas.so.0" libopenblas0-openmp "OpenBLAS, OpenMP build"
if [ -n "${TBB_RUNTIME_LIB:-}" ]; then
  echo "ok: oneTBB: $TBB_RUNTIME_LIB"
else
  echo "missing: oneTBB's libtbb.so.12 where pkg-config's tbb lives (Debian package libtbb-dev)"
  missing="$missing libtbb-dev"
fi
[ -z "$missing" ] && exit 0
echo "install them (sh tools/install-deps.sh, or apt-get install$missing), then run configure again"
[ "${CPUEXEC_ALLOW_MISSING_GUARD_BUILDS:-0}" = 1 ] && exit 77
exit 1
