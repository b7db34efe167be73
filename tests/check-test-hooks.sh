#!/bin/sh
# The shipped library carries no test hook (src/core/test_hooks.h): no
# cpuexec__test_* symbol in libcpuexec's dynamic or full symbol table (nor in
# its static archive, when built), so no path of it, the worker's included,
# reads one. The white-box library must carry them, which shows the scan
# finds a hook where there is one.
build=${top_builddir:-.}
cd "$build" || exit 1
status=0
found_any=no
for lib in .libs/libcpuexec.so .libs/libcpuexec.a; do
  [ -f "$lib" ] || continue
  found_any=yes
  for flags in -D ""; do
    [ "$lib" = .libs/libcpuexec.a ] && [ -n "$flags" ] && continue
    hooks=$(nm $flags "$lib" 2>/dev/null | grep -o 'cpuexec__test_[A-Za-z0-9_]*' | sort -u | tr '\n' ' ')
    if [ -n "$hooks" ]; then
      echo "check-test-hooks: $lib (nm $flags) carries test hooks: $hooks"
      status=1
    fi
  done
done
if [ $found_any = no ]; then
  echo "check-test-hooks: no libcpuexec.so or .a under $build/.libs; build the library first"
  exit 1
fi
whitebox=.libs/libcpuexec_whitebox.a
if [ ! -f "$whitebox" ]; then
  echo "check-test-hooks: $whitebox is missing; make check builds it"
  exit 1
fi
in_whitebox=$(nm "$whitebox" 2>/dev/null | awk '$2 ~ /^[BDR]$/ && $3 ~ /^cpuexec__test_/ { print $3 }' | sort -u)
if [ -z "$in_whitebox" ]; then
  echo "check-test-hooks: $whitebox defines no cpuexec__test_* symbol: the scan would not see one either"
  status=1
fi
[ $status -eq 0 ] && echo "check-test-hooks: libcpuexec has no test hook; the white-box library has $(printf '%s\n' "$in_whitebox" | wc -l) ($(printf '%s ' $in_whitebox))"
exit $status
