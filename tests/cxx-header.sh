#!/bin/sh
# cpuexec.hpp compiles warning-free with clang++ as well as g++ (the g++
# builds are tests/test_cxx and tests/test_cxx_noexcept): both test sources,
# with and without exceptions, -Wall -Wextra -Wpedantic -Werror, C++17.
# Skipped (exit 77) where clang++ is not installed.
set -eu
src=${top_srcdir:-.}
build=${top_builddir:-.}
cxx=""
for c in clang++ clang++-16 clang++-15 clang++-14; do
  if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
done
if [ -z "$cxx" ]; then
  echo "cxx-header: no clang++; skipped"
  exit 77
fi
flags="-std=c++17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I$src/include"
"$cxx" $flags "$src/tests/test_cxx.cc"
"$cxx" $flags -fno-exceptions "$src/tests/test_cxx_noexcept.cc"
# Each header alone, first in its translation unit (each stands alone).
for h in cpuexec.hpp cpuexec/cxx/capi.hpp cpuexec/cxx/error.hpp cpuexec/cxx/call_state.hpp cpuexec/cxx/policy.hpp \
  cpuexec/cxx/session.hpp cpuexec/cxx/loops.hpp cpuexec/cxx/range_executor.hpp cpuexec/cxx/counters.hpp; do
  printf '#include <%s>\nint main() { return 0; }\n' "$h" | "$cxx" $flags -Wshadow -x c++ -
done
echo "cxx-header: $cxx compiles cpuexec.hpp's tests without warnings"
