#!/bin/sh
# The GNU make jobserver client (src/node/jobserver.h) under a real make -j2:
# workers of tests/programs/node_client hold tokens while they run, give
# them back, and every token is back when make ends (a last recipe counts
# the free tokens, and make itself complains of a lost or extra token); a
# recipe make does not mark as recursive gets closed descriptors and the
# client keeps its own count with a diagnostic. The fifo form, where the
# installed make does not offer it (make 4.4's --jobserver-style=fifo), is
# checked on a fifo this script serves as make would. The node table is off
# (CPUEXEC_NODE_BUDGET=off) so only the jobserver bounds the workers. Run by
# `make check` with top_builddir set.
set -u
client="$(cd "$top_builddir" && pwd)/tests/programs/node_client"
make=${MAKE_FOR_TESTS:-make}
if ! "$make" --version 2>/dev/null | grep -q '^GNU Make'; then
  echo "SKIP: no GNU make to run"
  exit 77
fi
version=$("$make" --version | sed -n 's/^GNU Make \([0-9.]*\).*/\1/p')
work=$(mktemp -d "${TMPDIR:-/tmp}/cpuexec-make.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }
export CPUEXEC_NODE_BUDGET=off
unset MAKEFLAGS MFLAGS

# make -j2 puts one token in its pipe; the first job runs on make's own.
# One job alone: its three workers get exactly that one token.
cat > "$work/Makefile" <<EOF
all: count
count: alone pair
	+@"$client" count-tokens > tokens.txt
alone:
	+@"$client" jobs 3 > alone.txt
pair: alone
	+@"$client" jobs 3 > pair1.txt & "$client" jobs 3 > pair2.txt; wait
	+@"$client" describe > closed.txt 2>&1 || true
	@"$client" describe > plain.txt 2>&1 || true
EOF
# The first recipe line of pair runs two clients at once: make gave the
# recipe no token beyond its own, so the two share the one free token.

check_form() {
  form=$1
  if ! "$make" -j2 --no-print-directory -C "$work" ${2:-} > "$work/make.out" 2>&1; then
    fail "$form: make -j2 failed: $(cat "$work/make.out")"
    return
  fi
  if grep -qi 'jobserver\|INTERNAL' "$work/make.out"; then
    fail "$form: make complained: $(grep -i 'jobserver\|INTERNAL' "$work/make.out")"
  fi
  [ "$(cat "$work/alone.txt")" = "held 1" ] || fail "$form: one job alone held '$(cat "$work/alone.txt")', want 'held 1'"
  a=$(sed -n 's/^held //p' "$work/pair1.txt")
  b=$(sed -n 's/^held //p' "$work/pair2.txt")
  # Each one at most the one free token (one may take it after the other
  # gave it back at its exit).
  [ -n "$a" ] && [ -n "$b" ] && [ "$a" -le 1 ] && [ "$b" -le 1 ] ||
    fail "$form: two clients on one free token held '$a' and '$b'"
  [ "$(cat "$work/tokens.txt")" = "tokens=1" ] || fail "$form: at the end $(cat "$work/tokens.txt"), want tokens=1"
  grep -q "make's jobserver" "$work/closed.txt" || fail "$form: a '+' recipe saw no jobserver: $(cat "$work/closed.txt")"
  echo "ok: $form: alone held 1, the pair $a + $b, every token back"
}

check_form "pipe form (make $version)"
# A recipe without '+': make 4.3 closes the descriptors it names.
if grep -q "descriptors are closed" "$work/plain.txt"; then
  echo "ok: a recipe without '+': $(grep -o 'jobserver: .*closed[^;]*' "$work/plain.txt" | head -n 1)"
elif grep -q "make's jobserver" "$work/plain.txt"; then
  echo "ok: a recipe without '+' kept the descriptors (this make passes them)"
elif grep -q "^off" "$work/plain.txt"; then
  echo "ok: a recipe without '+': no jobserver in its MAKEFLAGS"
else
  fail "a recipe without '+': $(cat "$work/plain.txt" 2>&1)"
fi

if "$make" --help 2>/dev/null | grep -q 'jobserver-style'; then
  rm -f "$work"/*.txt
  check_form "fifo form (make $version)" --jobserver-style=fifo
else
  echo "note: make $version offers the pipe form only (--jobserver-style=fifo came with make 4.4)"
  # The fifo form on a fifo served as make serves it: two tokens.
  mkfifo "$work/fifo" || exit 1
  exec 7<>"$work/fifo"
  printf '++' >&7
  flags="-j3 --jobserver-auth=fifo:$work/fifo"
  held=$(MAKEFLAGS="$flags" "$client" jobs 3)
  [ "$held" = "held 2" ] || fail "fifo form: three workers on two tokens held '$held', want 'held 2'"
  tokens=$(MAKEFLAGS="$flags" "$client" count-tokens)
  [ "$tokens" = "tokens=2" ] || fail "fifo form: at the end $tokens, want tokens=2"
  exec 7>&-
  echo "ok: fifo form (served by this script): $held, $tokens at the end"
fi
exit $failed
