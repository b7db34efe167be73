#!/bin/sh
# The source tree holds no build leftovers. In a git checkout, of the files
# git tracks:
#  - none is a symbolic link whose target is an absolute path or leaves the
#    tree (a link into someone's machine or build directory);
#  - none is a build product: a file .gitignore ignores (the ignore list
#    names what the build writes: objects, libraries, programs, Makefiles,
#    logs), a file named like one (*.o, *.lo, *.la, *.a, *.so, *.so.N,
#    *.stamp, .dirstamp, *.log, *.trs, Makefile.in, configure), or a file
#    the Makefile cleans, builds first or builds as a program or library
#    (CLEANFILES, DISTCLEANFILES, BUILT_SOURCES, the _PROGRAMS and
#    _LTLIBRARIES lists: CPUEXEC_BUILD_OUTPUTS, which make check sets).
# Outside a checkout (the tarball `make distcheck` unpacks) the same link
# rule applies to every link under the source directory.
set -u
srcdir=$(cd "${top_srcdir:-$(dirname "$0")/..}" && pwd)
failed=0
dir=$(mktemp -d "${TMPDIR:-/tmp}/tracked-files.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT

# inside PATH TARGET: the link PATH (relative to the tree) to TARGET stays in the tree.
inside() {
  case $2 in /*) return 1 ;; esac
  # Resolve the target's ".." against the link's folder, textually.
  path=$(dirname "$1")/$2 depth=0
  old_ifs=$IFS IFS=/
  for part in $path; do
    case $part in
      '' | .) ;;
      ..) depth=$((depth - 1)); [ "$depth" -ge 0 ] || { IFS=$old_ifs; return 1; } ;;
      *) depth=$((depth + 1)) ;;
    esac
  done
  IFS=$old_ifs
  return 0
}

if git -C "$srcdir" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
  [ "$(git -C "$srcdir" rev-parse --show-toplevel)" = "$srcdir" ]; then
  git -C "$srcdir" ls-files -s | awk '$1 == "120000" { sub(/^[^\t]*\t/, ""); print }' >"$dir/links"
  while IFS= read -r link; do
    target=$(git -C "$srcdir" cat-file -p ":$link" 2>/dev/null)
    inside "$link" "$target" || { echo "not ok - tracked link $link points outside the tree ($target)"; failed=1; }
  done <"$dir/links"
  [ "$failed" -eq 0 ] && echo "ok - no tracked link points outside the tree ($(wc -l <"$dir/links") links)"

  git -C "$srcdir" ls-files -ci --exclude-standard >"$dir/ignored"
  if [ -s "$dir/ignored" ]; then
    echo "not ok - tracked files .gitignore calls build products (git rm --cached them):"
    sed 's/^/  /' "$dir/ignored"
    failed=1
  else
    echo "ok - no tracked file is one .gitignore ignores"
  fi

  git -C "$srcdir" ls-files >"$dir/tracked"
  grep -E '(^|/)([^/]*\.(o|lo|la|a|so|stamp|log|trs)|[^/]*\.so\.[0-9.]+|\.dirstamp|Makefile\.in|configure)$' \
    "$dir/tracked" >"$dir/named" || true
  if [ -s "$dir/named" ]; then
    echo "not ok - tracked files named like build products:"
    sed 's/^/  /' "$dir/named"
    failed=1
  else
    echo "ok - no tracked file is named like a build product"
  fi

  if [ -n "${CPUEXEC_BUILD_OUTPUTS:-}" ]; then
    for f in $CPUEXEC_BUILD_OUTPUTS; do echo "${f#./}"; done | sort -u >"$dir/outputs"
    sort "$dir/tracked" | comm -12 - "$dir/outputs" >"$dir/built"
    if [ -s "$dir/built" ]; then
      echo "not ok - tracked files the build writes (CLEANFILES, BUILT_SOURCES, programs, libraries):"
      sed 's/^/  /' "$dir/built"
      failed=1
    else
      echo "ok - none of the $(wc -l <"$dir/outputs") files the Makefile builds or cleans is tracked"
    fi
  fi
else
  (cd "$srcdir" && find . -type l) | sed 's|^\./||' >"$dir/links"
  while IFS= read -r link; do
    target=$(readlink "$srcdir/$link")
    inside "$link" "$target" || { echo "not ok - link $link points outside the tree ($target)"; failed=1; }
  done <"$dir/links"
  [ "$failed" -eq 0 ] && echo "ok - no link of the unpacked tree points outside it ($(wc -l <"$dir/links") links)"
fi
exit $failed
