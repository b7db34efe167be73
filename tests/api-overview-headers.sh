#!/bin/sh
# doc/api-overview.md names every installed header: each one `make install`
# puts under include (CPUEXEC_INSTALLED_HEADERS, from the *_HEADERS lists of
# Makefile.am and mk/*.am), written as the path a program includes, in
# backquotes (`cpuexec/tasks.h`). And every header under include/ of the
# source tree is installed, so a header added there without its _HEADERS
# line fails here too. Run alone, without make, it checks the tree's include/.
set -u
srcdir=${top_srcdir:-$(dirname "$0")/..}
page=$srcdir/doc/api-overview.md
failed=0 count=0
tree=$(cd "$srcdir/include" && find . -type f \( -name '*.h' -o -name '*.hpp' \) | sed 's|^\./||' | LC_ALL=C sort)
if [ -n "${CPUEXEC_INSTALLED_HEADERS:-}" ]; then
  installed=$(for h in $CPUEXEC_INSTALLED_HEADERS; do echo "${h#include/}"; done | LC_ALL=C sort -u)
  for h in $tree; do
    printf '%s\n' "$installed" | grep -qx -- "$h" ||
      { echo "not ok - include/$h is not installed: add it to a _HEADERS list (mk/*.am)"; failed=1; }
  done
else
  installed=$tree
fi
for h in $installed; do
  count=$((count + 1))
  if grep -qF -- "\`$h\`" "$page"; then
    echo "ok - doc/api-overview.md names $h"
  else
    echo "not ok - doc/api-overview.md does not name the installed header $h (as \`$h\`)"
    failed=1
  fi
done
[ "$count" -gt 0 ] || { echo "not ok - no installed header found"; failed=1; }
exit $failed
