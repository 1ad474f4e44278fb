#!/usr/bin/env bash
# scripts/step-cost.sh against a stand-in for pslab that writes made-up records: the median over
# the runs of (real CPU - simulated CPU) / steps, its range, the --set line; a simulator that
# charges more than the real runs spent gives 0 and says so; a failing validate and a missing
# spec are refused. CTest sets PSLAB_SOURCE_DIR.
set -u
SRC=${PSLAB_SOURCE_DIR:?set PSLAB_SOURCE_DIR to the source tree}
S="$SRC/scripts/step-cost.sh"
TMP=$(mktemp -d /tmp/pslab-it-step.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAIL $1"; failures=$((failures + 1)); }
# The stand-in: `validate SPEC ... --out DIR ...` writes DIR/validate.jsonl from $CPUS (pairs
# sim:real) and DIR/sim/runs.jsonl with 100 steps; it checks it was asked for one node of one worker.
cat >"$TMP/pslab" <<'EOF'
#!/usr/bin/env bash
out=
for ((i = 1; i <= $#; i++)); do [ "${!i}" = --out ] && { j=$((i + 1)); out=${!j}; }; done
[ "$1" = validate ] && [ -n "$out" ] || exit 3
case " $* " in *" cluster.nodes=1 "*" cluster.workers_per_node=1 "*) ;; *) exit 4 ;; esac
[ -n "${FAIL:-}" ] && { echo "made to fail"; exit 1; }
mkdir -p "$out/sim"
echo '{"experiment":"x","metrics":{"time_s":1,"steps":100}}' >"$out/sim/runs.jsonl"
for p in $CPUS; do
  echo "{\"kind\":\"run\",\"metric\":\"time_s\",\"sim\":9,\"real\":9}"
  echo "{\"kind\":\"run\",\"metric\":\"cpu_s\",\"sim\":${p%%:*},\"real\":${p##*:},\"error\":0}"
done >"$out/validate.jsonl"
EOF
chmod +x "$TMP/pslab"
echo '{}' >"$TMP/spec.json"
echo '{}' >"$TMP/profile.json"
out=$(PSLAB="$TMP/pslab" CPUS="0.01:0.012 0.01:0.011 0.01:0.015" bash "$S" "$TMP/spec.json" \
  "$TMP/profile.json" "$TMP/o1") || fail "exit status $?"
echo "$out"
grep -qF "step_s: 2e-05 s a step (3 real runs of 100 steps: 1e-05 to 5e-05)" <<<"$out" || fail "median"
grep -qxF -- "--set cluster.cost.step_s=2e-05" <<<"$out" || fail "the --set line"
out=$(PSLAB="$TMP/pslab" CPUS="0.02:0.012 0.02:0.011" bash "$S" "$TMP/spec.json" \
  "$TMP/profile.json" "$TMP/o2") || fail "exit status $? (sim above real)"
grep -qF "step_s stays 0" <<<"$out" || fail "sim above real: not said"
grep -qxF -- "--set cluster.cost.step_s=0" <<<"$out" || fail "sim above real: not 0"
FAIL=1 PSLAB="$TMP/pslab" CPUS="0.01:0.02" bash "$S" "$TMP/spec.json" "$TMP/profile.json" \
  "$TMP/o3" >/dev/null 2>"$TMP/err" && fail "a failing validate accepted"
grep -qF "pslab validate failed" "$TMP/err" || fail "a failing validate not said"
PSLAB="$TMP/pslab" bash "$S" "$TMP/none.json" "$TMP/profile.json" >/dev/null 2>"$TMP/err" &&
  fail "a missing spec accepted"
grep -qF "none.json: cannot be read" "$TMP/err" || fail "a missing spec not named"
bash "$S" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no argument: not exit status 2"
[ "$failures" -eq 0 ] && echo "all passed" || { echo "$failures failure(s)"; exit 1; }
