#!/bin/sh
# The guide's code is the tested code: every C block of
# doc/migrating-openmp.md comes right after a line <!-- excerpt: PATH -->
# and is a run of whole, consecutive lines of PATH (a file make check builds
# and runs), character for character.
set -u
srcdir=${top_srcdir:-$(dirname "$0")/..}
awk -v srcdir="$srcdir" '
function slurp(path,   line, text, rc) {
  text = "\n"
  while ((rc = (getline line < path)) > 0)
    text = text line "\n"
  close(path)
  return rc < 0 ? "" : text
}
/^<!-- excerpt: [^ ]* -->$/ { path = $3; where = NR; next }
/^```c$/ {
  if (path == "") {
    printf "not ok - doc/migrating-openmp.md:%d: a C block without <!-- excerpt: PATH --> before it\n", NR
    failed = 1
  }
  inblock = 1; block = "\n"; start = NR
  next
}
/^```$/ && inblock {
  inblock = 0
  count++
  if (path != "") {
    text = slurp(srcdir "/" path)
    if (text == "") {
      printf "not ok - doc/migrating-openmp.md:%d: %s cannot be read\n", where, path
      failed = 1
    } else if (index(text, block) == 0) {
      printf "not ok - doc/migrating-openmp.md:%d: the block is not lines of %s as they are now\n", start, path
      failed = 1
    }
  }
  path = ""
  next
}
inblock { block = block $0 "\n"; next }
{ path = "" }
END {
  if (count == 0) {
    print "not ok - doc/migrating-openmp.md has no C block"
    failed = 1
  }
  if (!failed)
    printf "ok - the %d C blocks of doc/migrating-openmp.md are lines of the tested examples\n", count
  exit failed
}' "$srcdir/doc/migrating-openmp.md"
