# The checks of a soak (scripts/soak.sh) on one batch's runs.jsonl: what must
# hold for every run of every policy, consistency model and backend.
#   - the run succeeded (no `error`);
#   - no push lost or doubled: `value_sum` equals `pushed_floats` (the soak's
#     workloads have no math, so each push adds 1.0 a float), and no key was
#     left in transfer (`value_sum_unreadable`);
#   - nothing refused or dropped: `duplicates`, `out_of_sequence`, `hop_drops`,
#     `bad_seals`, `bad_messages` absent or 0 (no one forges in a soak);
#   - every key owned by exactly one server: the servers' `owned_keys` sum to
#     the workload's keys;
#   - every step ran: `steps` is worker nodes x workers_per_node x
#     steps_per_worker;
#   - replicas agree: `replica_max_diff` is 0, where runs.jsonl has it;
#   - the bound held under bsp, ssp and essp (not sparse, which may pass it):
#     `read_staleness_max_clocks` <= staleness (bsp: 0), and no step started
#     more than staleness + 1 clocks ahead of the slowest worker (the last
#     `clock_gap_hist` bucket it may count).
# Variables (awk -v): batch (its name), spec (its spec file), total (its
# runs), rc (pslab's exit status), limit (the watchdog's seconds), err
# (pslab's stderr file), repro (a directory for the specs of broken runs).
# Prints "R<TAB>backend<TAB>policy<TAB>model<TAB>stragglers<TAB>curve<TAB>wall_s"
# per run (stragglers and curve: 1 or 0) and "V<TAB>text" per violation.
function num(name,   m) {  # a number-valued field of the line, or "" when absent
  if (!match(LINE, "\"" name "\":-?[0-9.eE+-]+")) return ""
  m = substr(LINE, RSTART, RLENGTH)
  return substr(m, index(m, ":") + 1) + 0
}
function str(name, from,   s) {  # a string-valued field at or after `from`
  s = substr(LINE, from)
  if (!match(s, "\"" name "\":\"[^\"]*\"")) return ""
  s = substr(s, RSTART, RLENGTH)
  return substr(s, length(name) + 5, length(s) - length(name) - 5)
}
# The JSON object that starts at position p of the line (strings skipped).
function object_at(p,   i, c, depth, instr) {
  depth = 0; instr = 0
  for (i = p; i <= length(LINE); i++) {
    c = substr(LINE, i, 1)
    if (instr) { if (c == "\\") i++; else if (c == "\"") instr = 0; continue }
    if (c == "\"") instr = 1
    else if (c == "{") depth++
    else if (c == "}" && --depth == 0) return substr(LINE, p, i - p + 1)
  }
  return ""
}
function violation(what,   f, p) {
  f = repro "/" batch "-run" RUN ".json"
  p = index(LINE, "\"config\":{")
  if (p) { print object_at(p + 9) > f; close(f) }
  printf "V\t%s run %d (seed %s, %s, %s, %s): %s; reproduce: pslab run %s" \
         " (or pslab run %s --shard %d/%d)\n", batch, RUN, SEED, BACKEND, POLICY, MODEL, what,
         p ? f : "(no config recorded)", spec, RUN, total
  BAD = 1
}
function zero(name,   v) {
  v = num(name)
  if (v != "" && v != 0) violation(name " " v)
}
function check_bound(   s, h, n, b, i) {
  s = MODEL == "bsp" ? 0 : STALENESS
  if (num("read_staleness_max_clocks") != "" && num("read_staleness_max_clocks") > s)
    violation("read_staleness_max_clocks " num("read_staleness_max_clocks") " > staleness " s)
  if (!match(LINE, /"clock_gap_hist":\[[0-9,]*\]/)) return
  h = substr(LINE, RSTART + 18, RLENGTH - 19)
  n = split(h, b, ",")
  for (i = s + 3; i <= n; i++)
    if (b[i] > 0) { violation(b[i] " steps started " (i - 1) " clocks ahead (staleness " s ")"); return }
}
function check_run(   v, p, owned, keys, nodes, steps) {
  if ((v = str("error", 1)) != "") { violation("failed: " v); return }
  if ((v = num("value_sum_unreadable")) != "") violation(v " keys still in transfer at the end")
  else if (num("value_sum") == "") violation("no value_sum recorded")
  else if (num("value_sum") != num("pushed_floats"))
    violation("value_sum " num("value_sum") " != pushed_floats " num("pushed_floats") \
              " (pushes lost or doubled)")
  zero("duplicates"); zero("out_of_sequence"); zero("hop_drops"); zero("bad_seals")
  zero("bad_messages"); zero("replica_max_diff")
  owned = 0; v = LINE
  while (match(v, /"owned_keys":[0-9]+/)) {
    owned += substr(v, RSTART + 13, RLENGTH - 13); v = substr(v, RSTART + RLENGTH)
  }
  keys = num("keys")
  if (owned != keys) violation("servers own " owned " keys, the workload has " keys)
  nodes = num("worker_nodes") != "" ? num("worker_nodes") : num("nodes")
  steps = nodes * num("workers_per_node") * num("steps_per_worker")
  if (num("steps") != steps) violation("steps " num("steps") ", expected " steps)
  if (MODEL == "bsp" || MODEL == "ssp" || MODEL == "essp") check_bound()
}
{
  LINE = $0
  RUN = num("run"); SEED = num("seed"); BACKEND = str("backend", 1)
  POLICY = str("type", index(LINE, "\"policy\":{"))
  p = index(LINE, "\"consistency\":{")
  MODEL = p ? str("model", p) : "async"
  STALENESS = p ? num("staleness") : 0
  seen[RUN] = 1; records++
  check_run()
  printf "R\t%s\t%s\t%s\t%d\t%d\t%s\n", BACKEND, POLICY, MODEL,
         (index(LINE, "\"stragglers\":[{") > 0), (index(LINE, "\"auth\":\"curve\"") > 0), num("wall_s")
}
# Runs missing from the record: pslab refused the spec, crashed, or the
# watchdog stopped it (exit status 124 or 137) because a run never ended.
# Runs end in order, so the first missing one is where it stopped.
END {
  if (records >= total) exit
  tail = ""
  while ((getline l < err) > 0) if (l !~ /warning: .* has no effect/) tail = l
  for (first = 1; first in seen; first++) {}
  why = (rc == 124 || rc == 137) ? "killed after " limit " s: run " first " never ended" \
                                  : "pslab exit status " rc (tail == "" ? "" : ": " tail)
  printf "V\t%s: %d of its %d runs recorded (%s); reproduce: pslab run %s --shard %d/%d\n",
         batch, records, total, why, spec, first, total
}
