#!/bin/sh
# Every relative link of README.md, HACKING.md and doc/*.md ([text](path),
# ![alt](path), with or without #anchor) names a file or folder of the source
# tree: pages moved out of the README keep their links working.
set -u
srcdir=${top_srcdir:-$(dirname "$0")/..}
failed=0 count=0
for page in "$srcdir/README.md" "$srcdir/HACKING.md" "$srcdir"/doc/*.md; do
  [ -f "$page" ] || continue
  dir=$(dirname "$page")
  links=$(grep -o '\](\([^)#: ]*\)\(#[^) ]*\)\{0,1\})' "$page" | sed -e 's/^](//' -e 's/)$//' -e 's/#.*//')
  for link in $links; do
    [ -n "$link" ] || continue
    count=$((count + 1))
    if [ ! -e "$dir/$link" ]; then
      echo "not ok - ${page#"$srcdir"/} links $link, which does not exist"
      failed=1
    fi
  done
done
[ "$failed" -eq 0 ] && echo "ok - $count relative links of README.md, HACKING.md and doc/*.md name files"
exit $failed
