#!/bin/sh
# The libraries the adapters' tests run against (mk/libraries.am) were found
# by configure. A missing one means its tests were not built: in CI
# (CPUEXEC_REQUIRE_PACKAGES=1, as .ci/run sets) that fails, so a package
# dropped from tools/install-deps.sh cannot turn into a silent skip;
# elsewhere the test is skipped (77) naming what to install.
missing=
[ "${CPUEXEC_HAVE_FFTW3_THREADS:-no}" = yes ] || missing="$missing libfftw3-dev(tests/test_fftw)"
[ "${CPUEXEC_HAVE_OPENCV:-no}" = yes ] || missing="$missing libopencv-core-dev,libopencv-imgproc-dev(tests/test_opencv)"
[ "${CPUEXEC_HAVE_EIGEN:-no}" = yes ] || missing="$missing libeigen3-dev(tests/test_eigen)"
if [ -z "$missing" ]; then
  echo "library-packages: every adapter's library was found; their tests are built"
  exit 0
fi
echo "library-packages: not found by configure:$missing; install them (sh tools/install-deps.sh) and re-run configure"
if [ "${CPUEXEC_REQUIRE_PACKAGES:-0}" = 1 ]; then exit 1; fi
exit 77
