#!/bin/sh
# The architecture, checked on the source tree and the built objects
# (HACKING.md, "Modules and the data flow"):
#   1. src/ holds only the module folders of RANK, no loose file;
#   2. no include cycle among src/ files;
#   3. every include between modules points down RANK (nothing in src/
#      includes compat/; sessions and guards, of one rank, include neither
#      the other);
#   4. every symbol an object of a module takes from another module is
#      defined in a lower one (nm on the built objects, same rule as 3);
#   5. compat/ holds sources and *_private.h headers; they include public
#      headers, compat's private ones, and (compat/adapter_private.h only)
#      the src/ headers named in COMPAT_ALLOW;
#   6. bench/ and tools/ include only public headers or their own (a quoted
#      include names a file of bench/, resp. tools/, relative to the
#      including file);
#   7. HACKING.md's module map is the folder list, in RANK's order, and
#      every file HACKING.md names (a `path` under a top-level folder) exists;
#   8. installed headers (include/) name no internal path, no document
#      outside the repository and no measured figure;
#   9. src/core/env.c is the only file of the library that calls getenv.
# Prints every violation, one a line, and exits 1 if there is any.
# CI runs the suite several times (.ci/run names the builds); a
# check of the sources and the packaging, the same in every build, runs in
# the first only: the later builds set CPUEXEC_SOURCE_CHECKS_DONE.
if [ -n "${CPUEXEC_SOURCE_CHECKS_DONE:-}" ]; then
  echo "SKIP: $(basename "$0") checks what every build shares; it ran in this CI run's first build (CPUEXEC_SOURCE_CHECKS_DONE)"
  exit 77
fi

# The modules, lowest first; "a|b" are of one rank (neither uses the other).
# compat/ is the layer above every src/ module. HACKING.md carries this line.
RANK="core os policy topology resolve node executor sessions|guards openmp compat"

# The src/ headers compat/adapter_private.h may include: the region
# primitive's header, error.h, the only way to report a failure through cpuexec_error_message()
# (the public API has no setter), and env.h, the one rule for reading an adapter's own
# variable (CPUEXEC_LIBRARIES_REPORT). Adjust here when the primitive moves.
COMPAT_ALLOW="src/executor/participant.h src/core/error.h src/core/env.h src/os/loader.h"

top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top=$(cd "$top" && pwd)
build=${top_builddir:-$top}
build=$(cd "$build" && pwd)
cd "$top" || exit 1

# "module rank" for every module of RANK, one a line.
ranks() {
  i=0
  for step in $RANK; do
    for m in $(printf '%s\n' "$step" | tr '|' ' '); do printf '%s %d\n' "$m" "$i"; done
    i=$((i + 1))
  done
}
modules=$(ranks | cut -d ' ' -f 1 | grep -v '^compat$')

# The module a repository path belongs to: src/<module>/..., compat/... (not
# compat/pthreadpool/, a library of its own on the public API), or nothing.
module_of() {
  case $1 in
    src/*/*) printf '%s\n' "$1" | cut -d / -f 2 ;;
    compat/pthreadpool/*) ;;
    compat/*) echo compat ;;
  esac
}

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

# ---- 1. src/: the module folders only ------------------------------------
# (Build by-products, .deps and .dirstamp, are not sources.)
out=$(for entry in src/*; do
  [ -e "$entry" ] || continue
  name=${entry#src/}
  if [ -d "$entry" ]; then
    printf '%s\n' "$modules" | grep -qx "$name" ||
      printf 'src/%s/ is not a module of the rank (%s); add it to RANK and HACKING.md, or move its files\n' "$name" "$RANK"
  else
    printf 'src/%s is a loose file; put it in its module'"'"'s folder\n' "$name"
  fi
done)
[ -n "$out" ] && fail "$out"

# ---- 2. no include cycle among src/ files --------------------------------
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

# ---- 3. includes between modules point down the rank ----------------------
# "from to" module pairs whose tie points up or sideways, as awk reads them.
rank_table=$(ranks)
bad_tie() { # from-module to-module: true when from may not use to
  printf '%s\n' "$rank_table" | awk -v a="$1" -v b="$2" '
    $1 == a { ra = $2 } $1 == b { rb = $2 }
    END { exit !(ra != "" && rb != "" && a != b && rb >= ra) }'
}
out=$(quoted_includes src/*/*.c src/*/*.h compat/*.c compat/*.h | while IFS="$(printf '\t')" read -r f inc; do
  to=$(resolve "$f" "$inc")
  from_mod=$(module_of "$f")
  to_mod=$(module_of "$to")
  [ -n "$to_mod" ] || continue
  if bad_tie "$from_mod" "$to_mod"; then
    printf '%s (%s) includes "%s" (%s, module %s): a tie up or across the rank %s\n' \
      "$f" "$from_mod" "$inc" "$to" "$to_mod" "$RANK"
  fi
done)
[ -n "$out" ] && fail "$out"

# ---- 4. symbols between modules point down the rank (nm) ------------------
# The library's objects, by the module folder they are built in (in-tree or
# VPATH builds alike): src/<module>/**/*.o and compat/*.o.
objects=$(cd "$build" && for m in $modules; do
  [ -d "src/$m" ] && find "src/$m" -name '*.o' -type f
done; [ -d compat ] && find compat -path compat/pthreadpool -prune -o -name '*.o' -type f -print)
if [ -z "$objects" ]; then
  fail "no built objects under $build/src: run the check after the library is built (make check does)"
else
  out=$(cd "$build" && for o in $objects; do
    m=$(module_of "$o")
    nm -P "$o" 2>/dev/null | awk -v m="$m" -v o="$o" '
      $2 ~ /^[TDBRCVW]$/ { print "D", m, $1, o }
      $2 == "U" || $2 == "w" { print "U", m, $1, o }'
  done | awk -v table="$rank_table" '
    BEGIN { n = split(table, lines, "\n"); for (i = 1; i <= n; i++) { split(lines[i], f, " "); rank[f[1]] = f[2] } }
    $1 == "D" { if (!($3 in def)) { def[$3] = $2; where[$3] = $4 } next }
    { use[++uses] = $0 }
    END {
      for (i = 1; i <= uses; i++) {
        split(use[i], u, " ")
        if (!(u[3] in def)) continue
        d = def[u[3]]
        if (d != u[2] && rank[d] >= rank[u[2]])
          printf "%s (%s) uses %s, defined in %s (%s): a tie up or across the rank\n", u[4], u[2], u[3], where[u[3]], d
      }
    }' | sort -u)
  [ -n "$out" ] && fail "$out"
fi

# ---- 5. compat/: the public API, and src/ through one private header ------
# compat/ holds adapter sources and private headers, named *_private.h (the
# installed ones live in include/cpuexec/compat/). A compat file includes
# public headers and compat's private headers; only COMPAT_GATE reaches
# src/, and only the headers of COMPAT_ALLOW. compat/pthreadpool/, a library
# of its own, includes public headers and its own private ones only.
COMPAT_GATE=compat/adapter_private.h
out=$(for h in compat/*.h compat/pthreadpool/*.h; do
  [ -f "$h" ] || continue
  case $h in *_private.h) ;; *) printf '%s: compat/ keeps private headers only (*_private.h); an installed header belongs in include/cpuexec/compat/\n' "$h" ;; esac
done)
[ -n "$out" ] && fail "$out"
allowed() {
  for a in $COMPAT_ALLOW; do [ "$1" = "$a" ] && return 0; done
  return 1
}
out=$(quoted_includes compat/*.c compat/*.h compat/pthreadpool/*.c compat/pthreadpool/*.h |
  while IFS="$(printf '\t')" read -r f inc; do
  to=$(resolve "$f" "$inc")
  case $to in
    include/*) continue ;;
    "$(dirname "$f")"/*_private.h) continue ;;
  esac
  if [ "$f" = "$COMPAT_GATE" ] && allowed "$to"; then continue; fi
  printf 'compat: %s includes "%s" (%s); adapters include public headers, their own *_private.h and, through %s only, %s\n' \
    "$f" "$inc" "$to" "$COMPAT_GATE" "$COMPAT_ALLOW"
done)
[ -n "$out" ] && fail "$out"

# ---- 6. bench/ and tools/: public headers or their own ---------------------
out=$(for f in bench/*.c bench/*.cc bench/*.h bench/*/*.c bench/*/*.cc bench/*/*.h tools/*.c tools/*.h; do
  [ -f "$f" ] || continue
  quoted_includes "$f"
done | while IFS="$(printf '\t')" read -r f inc; do
  area=${f%%/*} # bench or tools: its own files, in any of its folders
  to=$(resolve "$f" "$inc")
  case $to in
    "$area"/*) own=yes ;;
    *) own=no ;;
  esac
  if [ $own = no ] || [ ! -f "$(dirname "$f")/$inc" ]; then
    printf '%s includes "%s" (%s), which is neither public nor in %s/\n' "$f" "$inc" "$to" "$area"
  fi
done)
[ -n "$out" ] && fail "$out"

# ---- 7. HACKING.md: the module map is the folder list; named files exist ---
grep -qF "    $(printf '%s' "$RANK" | sed 's/ / < /g; s/\([a-z]*\)|\([a-z]*\)/{\1, \2}/g')" HACKING.md ||
  fail "HACKING.md does not carry the rank line \"$(printf '%s' "$RANK" | sed 's/ / < /g; s/\([a-z]*\)|\([a-z]*\)/{\1, \2}/g')\" (the RANK of this script)"
mapped=$(sed -n 's/^- \*\*`src\/\([a-z_]*\)\/`\*\*.*/\1/p' HACKING.md | tr '\n' ' ')
folders=$(printf '%s\n' "$modules" | while IFS= read -r m; do [ -d "src/$m" ] && printf '%s ' "$m"; done)
[ "$mapped" = "$folders" ] ||
  fail "HACKING.md's module map (- **\`src/<module>/\`** ...) lists \"$mapped\"; the folders in rank order are \"$folders\""
for m in $modules; do
  [ -f "mk/$m.am" ] || fail "src/$m/ has no mk/$m.am to build it"
done
out=$(grep -o '`[^`]*`' HACKING.md | tr -d '`' | sed 's/ .*//' |
  grep -E '^(src|compat|tests|tools|bench|mk|include|doc|examples)/' | grep -v '[*<]' | grep -v '\.dir$' | sort -u |
  while IFS= read -r path; do [ -e "$path" ] || printf 'HACKING.md names %s, which does not exist\n' "$path"; done)
[ -n "$out" ] && fail "$out"

# ---- 8. installed headers speak of the public API only ---------------------
# No internal path, no document outside the repository (seeds, issues), no
# measured figure that can go stale; documents of doc/ may be named.
out=$(grep -rnE '(^|[^a-z_/])(src|bench|tests|compat)/|[Ss]eed [0-9]|[Ii]ssue [0-9]|[Mm]easured|\.\./' include |
  sed 's/^/installed header: /')
[ -n "$out" ] && fail "$out"

# ---- 8b. the library's sources keep no measured figure -------------------
# A figure measured on one machine goes stale in a comment; it belongs in
# doc/performance.md, and the constant it chose in src/core/tunables.h (or
# src/executor/plan_model.h), named with the bench row that chose it.
out=$(grep -rnE --include='*.c' --include='*.h' --include='*.cc' '[Mm]easured|[^A-Za-z]VM[^A-Za-z]|2-CPU|2-core' src |
  sed 's/^/measured figure in the source (move it to doc\/performance.md): /')
[ -n "$out" ] && fail "$out"

# ---- 9. the environment is read in one place --------------------------------
# src/core/env.c holds the library's only getenv (core/env.h: the
# whitespace rule, the variable's name on every error).
out=$(grep -rn --include='*.c' --include='*.h' -E '(^|[^_a-z])(secure_)?getenv[[:space:]]*\(' src compat |
  grep -v '^src/core/env\.c:' | sed 's/^/reads the environment outside src\/core\/env.c: /')
[ -n "$out" ] && fail "$out"

if [ "$failures" -ne 0 ]; then
  printf 'check-includes: %d rule(s) broken (see HACKING.md, "Modules and the data flow")\n' "$failures"
  exit 1
fi
echo "check-includes: src/ is the module folders; includes and symbols point down the rank ($RANK); no include cycle; compat/, bench/ and tools/ include what they may; HACKING.md's map is the folder list"
