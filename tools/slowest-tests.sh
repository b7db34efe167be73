#!/bin/sh
# Prints the slowest test programs of a finished `make check`, from the
# times tests/run-test.sh writes at the end of each log, so CI's log says
# which tests a slow stage spent its time on.
# Usage: tools/slowest-tests.sh BUILD_DIR [COUNT]
dir=${1:-.}
count=${2:-8}
find "$dir/tests" -name '*.log' ! -name 'test-suite.log' -exec grep -h '^run-test: .* took [0-9]* s$' {} + |
  awk '{ print $(NF - 1), $2 }' | sort -rn | head -n "$count" |
  awk '{ printf "  %5d s  %s\n", $1, $2 }'
