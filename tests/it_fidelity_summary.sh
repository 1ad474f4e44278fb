#!/usr/bin/env bash
# scripts/fidelity-summary.sh on hand-made validate.jsonl files: the median and largest |error| of
# time_s over sweep points, the counts within 10%, 25% and the real spread, the worst messages error,
# the ranking's sums, per file and pooled; points without an error (null) left out; the telemetry's
# median factor simulated / real and the points within a factor 1.25, pooled, points with a 0 left
# out; the cores kept busy (cpu_s / time_s, median over the points with both); a missing file
# refused. And scripts/fidelity-sets.sh's summary over sets of such files. CTest sets
# PSLAB_SOURCE_DIR.
set -u
SRC=${PSLAB_SOURCE_DIR:?set PSLAB_SOURCE_DIR to the source tree}
S="$SRC/scripts/fidelity-summary.sh"
TMP=$(mktemp -d /tmp/pslab-it-fsum.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAIL $1"; failures=$((failures + 1)); }
point() { # METRIC ERROR WITHIN
  echo "{\"kind\":\"point\",\"experiment\":\"x\",\"point\":1,\"label\":\"static\",\"metric\":\"$1\",\"runs\":3,\"sim\":1,\"real\":1,\"error\":$2,\"within\":$3}"
}
tpoint() { # METRIC SIM REAL
  echo "{\"kind\":\"point\",\"experiment\":\"x\",\"point\":1,\"label\":\"static\",\"metric\":\"$1\",\"runs\":3,\"sim\":$2,\"real\":$3,\"error\":0,\"within\":null}"
}
{ tpoint io_turn_s 3 1; tpoint io_turn_s 0.9 1; tpoint io_run_wait_s 0 1
  point time_s 0.05 true; point time_s -0.20 false; point time_s 0.40 false; point messages -0.03 null
  point time_s null null
  echo '{"kind":"ranking","experiment":"x","metric":"time_s","pairs":3,"counted":2,"agree":1,"disagree":1}'
} >"$TMP/a.jsonl"
{ point time_s -0.08 true; point messages 0.01 null; tpoint io_turn_s 2 0.5
  echo '{"kind":"ranking","experiment":"y","metric":"time_s","pairs":1,"counted":1,"agree":1,"disagree":0}'
} >"$TMP/b.jsonl"
out=$(bash "$S" "$TMP/a.jsonl" "$TMP/b.jsonl") || fail "exit status $?"
echo "$out"
grep -qF "| $TMP/a.jsonl | 3 | 20.0% | 40.0% | 1 | 2 | 1 | 3.0% | 1 of 2 |" <<<"$out" || fail "row of a"
grep -qF "| $TMP/b.jsonl | 1 | 8.0% | 8.0% | 1 | 1 | 1 | 1.0% | 1 of 1 |" <<<"$out" || fail "row of b"
grep -qF "| all | 4 | 14.0% | 40.0% | 2 | 3 | 2 | 3.0% | 2 of 3 |" <<<"$out" || fail "pooled row"
# io_turn_s: factors 3, 0.9 and 4; io_run_wait_s only a 0: no row.
grep -qF "| io_turn_s | 3 | 3.00 | 1 |" <<<"$out" || fail "telemetry row"
grep -qF "| io_run_wait_s |" <<<"$out" && fail "a telemetry metric with only a 0 has a row"
bash "$S" "$TMP/b.jsonl" | grep -qF "| io_turn_s | 1 | 4.00 | 0 |" || fail "telemetry of one file"
bash "$S" "$TMP/none.jsonl" >/dev/null 2>"$TMP/err" && fail "a missing file accepted"
grep -qF "none.jsonl: cannot be read" "$TMP/err" || fail "a missing file not named"
# The cores kept busy: cpu_s / time_s at each point with both, median, simulated and real.
{ tpoint time_s 0.5 0.8; tpoint cpu_s 1 1.2
  echo '{"kind":"point","experiment":"x","point":2,"label":"relocate","metric":"time_s","runs":3,"sim":1,"real":1,"error":0,"within":null}'
  echo '{"kind":"point","experiment":"x","point":2,"label":"relocate","metric":"cpu_s","runs":3,"sim":1.8,"real":1.6,"error":0,"within":null}'
  echo '{"kind":"point","experiment":"x","point":3,"label":"nups","metric":"cpu_s","runs":3,"sim":1,"real":1,"error":0,"within":null}'
} >"$TMP/c.jsonl"
bash "$S" "$TMP/c.jsonl" | grep -qF "cores kept busy (cpu_s / time_s), median over 2 points: simulated 1.90, real 1.55" ||
  fail "cores kept busy"
bash "$S" "$TMP/b.jsonl" | grep -qF "cores kept busy" && fail "cores kept busy without cpu_s"
# fidelity-sets.sh summary: each set's pooled line, then the sets' medians, then every point; a set still being
# made (.partial) left out; a TAG's re-simulation read from set-K/TAG.
F="$SRC/scripts/fidelity-sets.sh"
mkdir -p "$TMP/sets/set-1/v-a" "$TMP/sets/set-2/v-a" "$TMP/sets/set-3.partial/v-a" "$TMP/sets/set-2/t/v-a"
cp "$TMP/a.jsonl" "$TMP/sets/set-1/v-a/validate.jsonl"
cp "$TMP/b.jsonl" "$TMP/sets/set-2/v-a/validate.jsonl"
cp "$TMP/b.jsonl" "$TMP/sets/set-3.partial/v-a/validate.jsonl"
cp "$TMP/a.jsonl" "$TMP/sets/set-2/t/v-a/validate.jsonl"
sets=$(bash "$F" summary "$TMP/sets") || fail "fidelity-sets summary: exit status $?"
grep -qF "| set-1 | 3 | 20.0% | 40.0% | 1 of 2 |" <<<"$sets" || fail "fidelity-sets: set-1's line"
grep -qF "| set-2 | 1 | 8.0% | 8.0% | 1 of 1 |" <<<"$sets" || fail "fidelity-sets: set-2's line"
grep -qF "set-3" <<<"$sets" && fail "fidelity-sets: a partial set summarized"
grep -qF "median of the medians: 14.0%, of the worsts: 24.0% (2 sets)" <<<"$sets" ||
  fail "fidelity-sets: the sets' medians"
grep -qF "pooled, 4 points: median 14.0%, worst 40.0%, within 10% 2, within 25% 3, worst messages error 3.0%, ranking 2 of 3" <<<"$sets" ||
  fail "fidelity-sets: every point pooled"
# A set calibrated again after its runs: each figure after over before (cost's numbers, not the
# calibration's record of the same name); a set without p-after.json has no row.
printf '{"calibration": {"wakeup_s": {"value": 9}}, "host_speed": 4e9, "cost": {"wakeup_s": 4e-05, "per_key_s": 1e-07}, "machines": {"loopback_latency": 2e-05}}\n' >"$TMP/sets/set-1/p.json"
printf '{"calibration": {"wakeup_s": {"value": 1}}, "host_speed": 3e9, "cost": {"wakeup_s": 5e-05, "per_key_s": 1e-07}, "machines": {"loopback_latency": 3e-05}}\n' >"$TMP/sets/set-1/p-after.json"
sets=$(bash "$F" summary "$TMP/sets") || fail "fidelity-sets summary with p-after.json: exit status $?"
grep -qF "| set-1 | 0.75 | 1.50 | 1.25 | - | - | 1.00 |" <<<"$sets" || fail "fidelity-sets: the machine's drift (got: $sets)"
grep -qF "| set-2 | 0." <<<"$sets" && fail "fidelity-sets: a drift row without p-after.json"
bash "$F" summary "$TMP/sets" t | grep -qF "(1 set)" || fail "fidelity-sets: a tag's sets"
# resim derives the step figures again from a set's one-node real runs: a set without them is
# refused, nothing simulated.
err=$(PSLAB=/bin/true bash "$F" resim "$TMP/sets" again 2>&1) && fail "fidelity-sets: resim without one-node runs"
grep -qF "no p-fidelity.runs/real/" <<<"$err" || fail "fidelity-sets: resim's message (got: $err)"
bash "$F" summary "$TMP/sets" none 2>/dev/null && fail "fidelity-sets: a tag with no set accepted"
bash "$F" make "$TMP/sets" zero 2>/dev/null && fail "fidelity-sets: a bad N accepted"
err=$(bash "$F" make "$TMP/sets" 1 --pinned 2>&1) && fail "fidelity-sets: a bad flag accepted"
grep -qF "expected --pin after N" <<<"$err" || fail "fidelity-sets: a bad flag's message"
err=$(PSLAB=/nonexistent bash "$F" make "$TMP/sets" 1 --pin 2>&1) && fail "fidelity-sets: no pslab"
grep -qF "no pslab at /nonexistent" <<<"$err" || fail "fidelity-sets: --pin not taken (got: $err)"
bash "$S" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no argument: not exit status 2"
[ "$failures" -eq 0 ] && echo "all passed" || { echo "$failures failure(s)"; exit 1; }
