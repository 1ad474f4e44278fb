# The specs of a soak (scripts/soak.sh): seeded random batches of tiny runs.
# Each batch is one spec, so one pslab invocation runs many runs: a random
# zipf workload (a few hundred steps at most), a consistency model, and a
# sweep of every policy that model allows (each with random fields) times a
# few random clusters (2 to 6 nodes, 1 to 3 workers each, stragglers of the
# whole run, of a window or in phases; real runs under CURVE now and then).
# One batch in ten gives the servers their own nodes or scales them (static
# and psld only, which allow it).
# The same seed gives the same specs with any POSIX awk: the generator is
# Park and Miller's, whose products stay exact in a double.
#
# Variables (awk -v): seed, sim and real (runs of each backend), dir (where
# the specs go). Prints one line per batch: its name, backend and runs.
function rnd() { S = (S * 16807) % 2147483647; return S / 2147483647 }
function ri(a, b) { return a + int(rnd() * (b - a + 1)) }
function pick(list,   n, v) { n = split(list, v, " "); return v[ri(1, n)] }
function chance(p) { return rnd() < p }
function q(s) { return "\"" s "\"" }

function workload(backend,   steps, ep, w) {
  KEYS = ri(20, 1000)
  steps = ri(10, 100)
  ep = (steps % 2 == 0 && chance(0.5)) ? 2 : 1
  SAMPLES = chance(0.3) ? ri(1, 4) : 0
  w = "{\"type\": \"zipf\", \"keys\": " KEYS ", \"skew\": " pick("0 0.5 0.9 1.1 1.5")
  w = w ", \"value_length\": " ri(1, 16) ", \"reads_per_step\": " ri(0, 6)
  w = w ", \"writes_per_step\": " ri(1, 4) ", \"steps_per_worker\": " steps
  w = w ", \"epochs\": " ep ", \"flops_per_step\": " pick("0 1000 20000 100000")
  w = w ", \"locality\": " sprintf("%.2f", rnd())
  if (SAMPLES) w = w ", \"samples_per_step\": " SAMPLES
  return w "}"
}

# Sets MODEL; the consistency object, or "" for the default (async).
function consistency(   m) {
  m = pick("async async async bsp ssp ssp essp sparse")
  if (m == "sparse" && SAMPLES) m = "ssp"
  MODEL = m
  if (m == "async") return chance(0.5) ? "" : "{\"model\": \"async\"}"
  if (m == "bsp") return "{\"model\": \"bsp\"}"
  if (m == "sparse")
    return "{\"model\": \"sparse\", \"staleness\": " ri(0, 3) ", \"lookahead\": " ri(1, 20) "}"
  return "{\"model\": " q(m) ", \"staleness\": " ri(0, 5) "}"
}

# preloc and pool move sampled keys to the worker's node, refused when a
# worker node is not a server: a ROLES batch (which may split them) draws
# among the schemes that read keys where they are.
function sampling(   s, scheme) {
  if (!SAMPLES || chance(0.3)) return ""
  scheme = pick(ROLES ? "naive local" : "naive preloc pool local")
  s = ", \"sampling\": {\"scheme\": " q(scheme)
  if (scheme == "pool")
    s = s ", \"group_size\": " ri(1, 50) ", \"reuse\": " ri(1, 8) \
        ", \"postpone\": " pick("true false")
  return s "}"
}

# Fields shared by replicate and nups.
function replicas(all,   p, hot) {
  hot = (all && chance(0.3)) ? q("all") : ri(1, KEYS > 1 ? KEYS - 1 : 1)
  p = ", \"hot_keys\": " hot ", \"syncs_per_sec\": " pick("0 50 500 5000")
  if (MODEL == "async" && chance(0.4)) p = p ", \"sync\": \"owner\""
  if (chance(0.3)) p = p ", \"threshold\": " pick("0.5 2 10")
  return p
}

function policy(type, backend,   p) {
  p = "{\"type\": " q(type) ", \"partition\": " q(pick("hash range"))
  if (type == "static" && MODEL == "async" && chance(0.3)) p = p ", \"fast_local_access\": false"
  if (type == "relocate" || type == "nups") p = p ", \"lookahead\": " ri(1, 50)
  if (type == "replicate") {
    p = p replicas(1)
    if (MODEL == "async" && chance(0.2)) p = p ", \"fast_local_access\": false"
  }
  if (type == "nups") p = p replicas(0)
  if (type == "adaptive") {
    p = p ", \"lookahead\": " ri(1, 100) ", \"syncs_per_sec\": " pick("50 500 5000")
    if (chance(0.3)) p = p ", \"window_clocks\": " ri(0, 20)
  }
  if (type == "psld") {
    p = p ", \"window_s\": " (backend == "real" ? pick("0.002 0.005 0.02") : pick("0.0005 0.002 0.01"))
    p = p ", \"explore\": " sprintf("%.2f", rnd()) ", \"budget_Bps\": " pick("1e6 1e8")
    p = p ", \"blocks_per_server\": " ri(1, 32) ", \"tolerance\": " pick("0 0.1 0.5")
    p = p ", \"smoothing\": " pick("0.2 0.5 1")
  }
  return p sampling() "}"
}

# A straggler of node n: a factor or two, for the whole run, a window or phases.
function straggler(n, backend,   s, f, t) {
  t = backend == "real" ? 0.005 : 0.002  # about a tenth of a run
  f = ", \"speed_factor\": " pick("0.25 0.5 0.8")
  if (chance(0.5)) f = f ", \"bandwidth_factor\": " pick("0.25 0.5 0.8")
  s = "{\"node\": " n
  if (chance(0.4)) return s f "}"
  if (chance(0.5)) return s ", \"from_s\": " t * ri(0, 3) ", \"until_s\": " t * ri(4, 8) f "}"
  return s ", \"phases\": [{\"from_s\": " t * ri(0, 2) ", \"until_s\": " t * 3 f "}, " \
         "{\"from_s\": " t * ri(3, 5) ", \"bandwidth_factor\": " pick("0.25 0.5") "}]}"
}

# A cluster; ROLES (a batch of static and psld only) may split or scale the servers.
function cluster(backend,   c, n, i, k, first, wn) {
  n = ri(2, 6)
  c = "{\"nodes\": " n ", \"workers_per_node\": " ri(1, backend == "real" ? 2 : 3)
  c = c ", \"host_speed\": \"1Gf\""
  if (backend == "real") c = c ", \"timeout_s\": 10" (chance(0.3) ? ", \"auth\": \"curve\"" : "")
  if (backend == "sim")
    c = c ", \"network\": {\"bandwidth\": " q(pick("1Gbps 10Gbps")) ", \"latency\": " \
        q(pick("10us 100us")) (chance(0.25) ? ", \"model\": \"latency_bandwidth\"" : "") "}"
  if (ROLES && chance(0.5)) {
    wn = ri(1, n)
    c = c ", \"servers\": " ri(n - wn > 0 ? n - wn : 1, n) ", \"worker_nodes\": " wn
  } else if (ROLES) {
    c = c ", \"scale\": [{\"at_s\": " (backend == "real" ? 0.01 : 0.002) ", \"servers\": " ri(1, n) "}]"
  }
  if (chance(0.5)) {
    k = ri(1, 2); first = ri(0, n - 1)
    c = c ", \"stragglers\": [" straggler(first, backend)
    if (k == 2 && n > 2) c = c ", " straggler((first + 1) % n, backend)
    c = c "]"
  }
  return c "}"
}

function batch(backend, budget,   name, f, w, cons, types, t, np, nc, i, list, runs, sep) {
  name = sprintf("b%04d-%s", ++B, backend)
  f = dir "/" name ".json"
  w = workload(backend)
  ROLES = chance(0.1)
  cons = consistency()
  types = ROLES ? "static psld" : "static relocate replicate nups psld"
  if (!ROLES && MODEL == "async") types = types " adaptive"
  np = split(types, t, " ")
  nc = backend == "real" ? 1 : 2
  if (np > budget) np = budget
  if (np * nc > budget) nc = int(budget / np)
  runs = np * nc
  printf "{\"name\": %s, \"backend\": %s, \"seed\": %d,\n", q(name), q(backend), ri(1, 2147483646) > f
  printf "  \"cluster\": %s,\n  \"workload\": %s,\n", cluster(backend), w > f
  printf "  \"policy\": {\"type\": \"static\"},\n" > f
  if (cons != "") printf "  \"consistency\": %s,\n", cons > f
  printf "  \"sweep\": {\n    \"policy\": [\n" > f
  for (i = 1; i <= np; i++)
    printf("      %s%s\n", policy(t[i], backend), i < np ? "," : "") > f
  printf "    ],\n    \"cluster\": [\n" > f
  for (i = 1; i <= nc; i++)
    printf("      %s%s\n", cluster(backend), i < nc ? "," : "") > f
  printf "    ]\n  }\n}\n" > f
  close(f)
  print name, backend, runs
  return runs
}

BEGIN {
  S = (seed % 2147483646) + 1
  for (i = 0; i < 3; i++) rnd()
  left_sim = sim; left_real = real
  # Interleave the backends so that a soak cut short has run some of each.
  while (left_sim > 0 || left_real > 0) {
    if (left_sim > 0) left_sim -= batch("sim", left_sim)
    if (left_real > 0) left_real -= batch("real", left_real)
  }
}
