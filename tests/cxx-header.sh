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
flags="-std=c++17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I$src/include -I$build/cxx-include"
"$cxx" $flags "$src/tests/test_cxx.cc"
"$cxx" $flags -fno-exceptions "$src/tests/test_cxx_noexcept.cc"
# The header alone, first in its translation unit (it stands alone).
printf '#include <cpuexec.hpp>\nint main() { return cpuexec::current() ? 1 : 0; }\n' |
  "$cxx" $flags -Wshadow -x c++ -
echo "cxx-header: $cxx compiles cpuexec.hpp's tests without warnings"
