#!/bin/sh
# Runs one test program with a timeout, so a hung test fails instead of
# hanging `make check`. CPUEXEC_TEST_TIMEOUT overrides the limit (seconds).
# A Windows build made on Linux runs its programs (*.exe) under the runner
# configure found (CPUEXEC_TEST_RUNNER: wine), with the toolchain's and
# hwloc's DLLs on WINEPATH (CPUEXEC_TEST_DLL_PATH); shell checks run as
# they are.
limit=${CPUEXEC_TEST_TIMEOUT:-300}
# The node budget (doc/node-budget.md) would make every test process of a
# parallel `make check` share the machine's CPUs: a test that counts which
# workers took part would then see whatever its neighbours left it. Its own
# tests turn it on (tests/whitebox/test_node_budget.c,
# tests/whitebox/test_node_wiring.c); CPUEXEC_NODE_BUDGET=cgroup make check
# runs the whole suite under it.
CPUEXEC_NODE_BUDGET=${CPUEXEC_NODE_BUDGET:-off}
export CPUEXEC_NODE_BUDGET
name=$(basename "$1")
case $1 in
  *.exe)
    if [ -n "${CPUEXEC_TEST_RUNNER:-}" ]; then
      # The program itself rather than libtool's wrapper (one process
      # less under wine): the build's own DLLs are in .libs.
      real="$(dirname "$1")/.libs/$(basename "$1")"
      if [ -f "$real" ]; then
        shift
        set -- "$real" "$@"
      fi
      libs=$(cd "${top_builddir:-.}" && pwd)/.libs
      WINEPATH="$libs;${CPUEXEC_TEST_DLL_PATH:-}${WINEPATH:+;$WINEPATH}"
      WINEDEBUG=${WINEDEBUG:--all}
      export WINEPATH WINEDEBUG
      set -- $CPUEXEC_TEST_RUNNER "$@"
    fi ;;
esac
# Each log ends with the program's time, so a slow stage of CI can name
# the tests that made it slow (.ci/run prints the slowest of each suite).
start=$(date +%s)
status=0
timeout --kill-after=10 "$limit" "$@" || status=$?
echo "run-test: $name took $(($(date +%s) - start)) s" >&2
exit $status
