#!/bin/sh
# The module boundaries, checked on the source tree (HACKING.md, "Modules"):
#   1. no include cycle among src/ files;
#   2. compat/*.c include only public headers (<cpuexec/...>, compat's own
#      installed headers) and the private headers named in COMPAT_ALLOW;
#   3. bench/ and tools/ include only public headers or their own (a quoted
#      include must name a file of the including file's own directory);
#   4. every file HACKING.md names (a `path` under a top-level folder) exists.
# Prints every violation, one a line, and exits 1 if there is any.

# The private headers compat/ may include: the region primitive's header,
# and error.h, the only way to report a failure through cpuexec_error_message()
# (the public API has no setter). Adjust here when the primitive moves.
COMPAT_ALLOW="src/executor/participant.h src/core/error.h"

top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 1

# "file<TAB>quoted-include" for every #include "..." of the given files.
quoted_includes() {
  for f in "$@"; do
    [ -f "$f" ] || continue
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
      while IFS= read -r inc; do printf '%s\t%s\n' "$f" "$inc"; done
  done
}

# The repository path an include names, resolved like the compiler with
# -I <dir of file> -I top -I top/include -I top/src (and tests/, to name
# where a stray include points); normalised (no ./ ..).
resolve() {
  dir=$(dirname "$1")
  for base in "$dir" . include src tests; do
    if [ -f "$base/$2" ]; then
      printf '%s/%s\n' "$base" "$2" | awk -F/ '{
        n = 0
        for (i = 1; i <= NF; i++) {
          if ($i == "." || $i == "") continue
          if ($i == ".." && n > 0) { n--; continue }
          part[++n] = $i
        }
        out = part[1]; for (i = 2; i <= n; i++) out = out "/" part[i]; print out }'
      return
    fi
  done
  printf '?%s\n' "$2"
}

failures=0
fail() {
  printf 'check-includes: %s\n' "$1"
  failures=$((failures + 1))
}

# ---- 1. no include cycle among src/ files --------------------------------
edges=$(quoted_includes src/*/*.c src/*/*.h | while IFS="$(printf '\t')" read -r f inc; do
  to=$(resolve "$f" "$inc")
  case $to in src/*) printf '%s %s\n' "$f" "$to" ;; esac
done)
cycle=$(printf '%s\n' "$edges" | awk '
  NF == 2 { adj[$1] = adj[$1] " " $2; node[$1] = 1; node[$2] = 1 }
  function visit(v,    i, n, next_, list) {
    color[v] = 1; stack[++depth] = v
    n = split(adj[v], list, " ")
    for (i = 1; i <= n; i++) {
      next_ = list[i]
      if (color[next_] == 1) {
        path = next_
        for (j = depth; j >= 1 && stack[j] != next_; j--) path = stack[j] " -> " path
        print next_ " -> " path
        found = 1
        return
      }
      if (color[next_] == 0) { visit(next_); if (found) return }
    }
    color[v] = 2; depth--
  }
  END { for (v in node) if (!found && color[v] == 0) visit(v) }')
[ -n "$cycle" ] && fail "include cycle among src/ files: $cycle"

# ---- 2. compat/*.c: public headers and COMPAT_ALLOW only ------------------
# A compat header is public when it installs as <cpuexec/compat/...>; its own
# includes are checked the same way (it is part of what the .c includes).
allowed() {
  for a in $COMPAT_ALLOW; do [ "$1" = "$a" ] && return 0; done
  return 1
}
check_compat() { # file, chain
  quoted_includes "$1" | while IFS="$(printf '\t')" read -r f inc; do
    to=$(resolve "$f" "$inc")
    if allowed "$to"; then continue; fi
    case $to in
      include/*) ;;
      compat/*.h) check_compat "$to" "$2 -> $to" ;;
      *) printf 'compat: %s includes "%s" (%s), not a public header or the region primitive\n' "$2" "$inc" "$to" ;;
    esac
  done
}
for f in compat/*.c compat/pthreadpool/*.c; do
  [ -f "$f" ] || continue
  out=$(check_compat "$f" "$f")
  [ -n "$out" ] && fail "$out"
done

# ---- 3. bench/ and tools/: public headers or their own ---------------------
out=$(for f in bench/*.c bench/*.cc bench/*.h tools/*.c tools/*.h; do
  [ -f "$f" ] || continue
  quoted_includes "$f"
done | while IFS="$(printf '\t')" read -r f inc; do
  case $(resolve "$f" "$inc") in
    "$(dirname "$f")"/*) own=yes ;;
    *) own=no ;;
  esac
  if [ $own = no ] || [ ! -f "$(dirname "$f")/$inc" ]; then
    printf '%s includes "%s" (%s), which is neither public nor in %s/\n' \
      "$f" "$inc" "$(resolve "$f" "$inc")" "$(dirname "$f")"
  fi
done)
[ -n "$out" ] && fail "$out"

# ---- 4. HACKING.md names only files that exist ------------------------------
out=$(grep -o '`[^`]*`' HACKING.md | tr -d '`' | sed 's/ .*//' |
  grep -E '^(src|compat|tests|tools|bench|mk|include|doc|examples)/' | grep -v '[*<]' | grep -v '\.dir$' | sort -u |
  while IFS= read -r path; do [ -e "$path" ] || printf 'HACKING.md names %s, which does not exist\n' "$path"; done)
[ -n "$out" ] && fail "$out"

if [ "$failures" -ne 0 ]; then
  printf 'check-includes: %d rule(s) broken (see HACKING.md, "Modules")\n' "$failures"
  exit 1
fi
echo "check-includes: src/ has no include cycle; compat/, bench/ and tools/ include what they may; HACKING.md names existing files"
