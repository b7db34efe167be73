#!/bin/sh
# Runs one test program with a timeout, so a hung test fails instead of
# hanging `make check`. CPUEXEC_TEST_TIMEOUT overrides the limit (seconds).
limit=${CPUEXEC_TEST_TIMEOUT:-300}
exec timeout --kill-after=10 "$limit" "$@"
