#!/usr/bin/env bash
# The house rules (docs/ARCHITECTURE.md): scripts/check-house.sh passes on the
# source tree, and on a small tree made to break each rule it names every
# breach: a room entering one it may not, a room entered other than through
# its door, an include of no room, and a function over 60 lines.
# CTest sets PSLAB_SOURCE_DIR.
set -u

SRC=${PSLAB_SOURCE_DIR:?set PSLAB_SOURCE_DIR to the source tree}
TMP=$(mktemp -d /tmp/pslab-it-house.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

if bash "$SRC/scripts/check-house.sh" "$SRC" >"$TMP/out" 2>&1; then
  echo "ok   the source tree keeps the house rules"
else
  fail "the source tree breaks the house rules:"; sed 's/^/  | /' "$TMP/out"
fi

# A tree that breaks each rule once.
mkdir -p "$TMP/tree/docs" "$TMP/tree/model" "$TMP/tree/policies" "$TMP/tree/run"
cp "$SRC/docs/ARCHITECTURE.md" "$TMP/tree/docs/"
printf '#include "run/run.h"\n' >"$TMP/tree/model/up.c"
printf '#include "model/internal.h"\n#include "model/ps.h"\n' >"$TMP/tree/policies/side.c"
printf '#include "nowhere/x.h"\n' >"$TMP/tree/run/lost.c"
{
  echo 'static int long_one(int x) {'
  for i in $(seq 1 59); do echo "  x += $i;"; done
  echo '}'
  echo 'int short_one(int x) {'
  for i in $(seq 1 58); do echo "  x += $i;"; done
  echo '}'
} >"$TMP/tree/run/long.c"
bash "$SRC/scripts/check-house.sh" "$TMP/tree" >"$TMP/out" 2>&1
got=$?
[ "$got" -eq 1 ] || fail "a broken tree: exit status $got, expected 1"
expect() {
  if grep -qF -- "$1" "$TMP/out"; then echo "ok   reported: $1"; else fail "not reported: $1"; fi
}
expect "model/up.c:1: includes run/run.h: room model/ may not enter run/"
expect "policies/side.c:1: includes model/internal.h: model/ is entered through its door model/ps.h"
expect "run/lost.c:1: includes nowhere/x.h, which is in no room"
expect "run/long.c:1: long_one is 61 lines (at most 60)"
if grep -q "short_one\|policies/side.c:2" "$TMP/out"; then
  fail "reported what keeps the rules:"; sed 's/^/  | /' "$TMP/out"
fi
expect "check-house: 4 breach(es)"

[ "$failures" -eq 0 ] && echo "house: all checks passed" || echo "house: $failures check(s) failed"
exit $((failures > 0))
