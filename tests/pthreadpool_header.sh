#!/bin/sh
# include/cpuexec-pthreadpool/pthreadpool.h declares every type, flag and function of
# Debian's pthreadpool.h identically: one C translation unit includes
# Debian's header and then ours, and with -Werror any declaration that
# differs (a conflicting prototype or typedef, a redefined flag) fails it.
# Skipped (77) where Debian's header is not installed.
srcdir=${top_srcdir:-.}
cc=${CC:-cc}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
printf '#include <pthreadpool.h>\n' > "$tmp/probe.c"
if ! "$cc" -E "$tmp/probe.c" > /dev/null 2>&1; then
  echo "Debian pthreadpool.h not installed (libpthreadpool-dev); nothing to compare"
  exit 77
fi
ours=$(cd "$srcdir/include/cpuexec-pthreadpool" && pwd)/pthreadpool.h
cat > "$tmp/both.c" <<EOC
#include <pthreadpool.h>
#ifdef CPUEXEC_PTHREADPOOL_COMPAT
#error the system pthreadpool.h is ours; nothing to compare
#endif
#undef PTHREADPOOL_H_
#include "$ours"
#ifndef CPUEXEC_PTHREADPOOL_COMPAT
#error ours was not included
#endif
EOC
"$cc" -std=c11 -Wall -Wextra -pedantic -Werror -fsyntax-only "$tmp/both.c" || exit 1

# And ours alone names every typedef, macro and function of the system header.
system=$("$cc" -E -H "$tmp/probe.c" 2>&1 >/dev/null | sed -n 's/^\. //p' | grep 'pthreadpool\.h$' | head -n 1)
[ -f "$system" ] || { echo "cannot locate the system pthreadpool.h"; exit 1; }
{
  printf '#include "%s"\n' "$ours"
  sed -n 's/^typedef .*(\*\(pthreadpool_[a-z0-9_]*\)).*/\1/p' "$system" | sort -u |
    while read -r t; do printf 'typedef %s check_%s;\n' "$t" "$t"; done
  sed -n 's/^#define \(PTHREADPOOL_FLAG_[A-Z_]*\) .*/\1/p' "$system" | sort -u |
    while read -r m; do printf '#ifndef %s\n#error %s is missing\n#endif\n' "$m" "$m"; done
  sed -n 's/^\(pthreadpool_t\|size_t\|void\) \(pthreadpool_[a-z0-9_]*\)(.*/\2/p' "$system" | sort -u |
    while read -r f; do printf 'void *check_%s = (void *)&%s;\n' "$f" "$f"; done
} > "$tmp/alone.c"
names=$(grep -c check_ "$tmp/alone.c")
[ "$names" -gt 40 ] || { echo "only $names names read from $system"; exit 1; }
"$cc" -std=c11 -Wall -Wextra -Werror -Wno-pedantic -Wno-deprecated-declarations -fsyntax-only "$tmp/alone.c" || exit 1
echo "$names typedefs and functions and every flag of $system are named by ours"
echo "every declaration of the system pthreadpool.h matches $ours"
