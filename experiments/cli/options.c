/*
 * The options of the `pslab` command, one entry each, and the parser that
 * reads a command line with them: --long VALUE, --long=VALUE, -s VALUE, a
 * flag alone, "--" to end the options. An option is known only to the
 * commands its entry names; on the others it is an unknown option. The
 * wording of its help, where a command needs its own, is in
 * cli_option_texts. help.c prints usage, help and completion from the
 * same tables.
 */
#include "experiments/cli/cli.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int set_set(cli *c, const char *v);
static int set_backend(cli *c, const char *v);
static int set_shard(cli *c, const char *v);
static int set_metrics(cli *c, const char *v);
static int set_key_file(cli *c, const char *v);
static int set_profile(cli *c, const char *v);
static int set_timeout(cli *c, const char *v);
static int set_budget(cli *c, const char *v);

#define ON(x) CLI_ON(CLI_##x)
#define SPEC_RUNNERS (ON(RUN) | ON(NODE))
#define FLAG(name) CLI_FLAG, offsetof(cli, name), 0, NULL
#define STRING(name) CLI_STRING, offsetof(cli, name), 0, NULL
#define COUNT(name, most) CLI_COUNT, offsetof(cli, name), most, NULL
#define CALL(fn) CLI_CALL, 0, 0, fn

/* In the order every --help lists them. */
const cli_option cli_options[] = {
    {"out", 'o', "DIR",
     SPEC_RUNNERS | ON(MERGE) | ON(VALIDATE) | ON(ADVISE) | ON(KEYGEN) | ON(CALIBRATE),
     STRING(out), false,
     "results directory, created with its parents (default: results/<name>/, <name> from "
     "the spec)"},
    {"set", 's', "PATH=VALUE",
     SPEC_RUNNERS | ON(CHECK) | ON(VALIDATE) | ON(ADVISE) | ON(CALIBRATE),
     CALL(set_set), true,
     "change the spec before it is validated. PATH is dotted (cluster.nodes, policy.type; a "
     "number indexes a list); its parent must exist. sweep.<path> sets one sweep list "
     "(sweep.cluster.nodes=[2,4,8]). VALUE is JSON when it parses (16, true, [1,2], "
     "'{\"type\":\"static\"}', '\"quoted\"') and a plain string otherwise (10Gbps). May be "
     "repeated."},
    {"backend", 0, "sim|real", ON(RUN) | ON(CHECK), CALL(set_backend), false,
     "sim (SimGrid, the default) or real (one process per node on this machine, over "
     "loopback TCP; times are wall-clock); the same as --set backend=..."},
    {"repeats", 0, "N", SPEC_RUNNERS | ON(CHECK) | ON(VALIDATE), COUNT(repeats, 1000000), false,
     "run each sweep point N times; the same as --set repeats=N"},
    {"shard", 0, "K/N", SPEC_RUNNERS | ON(CHECK), CALL(set_shard), false,
     "run only shard K of N: the runs r with (r - 1) % N == K - 1, numbered, seeded and "
     "recorded as in the whole experiment, so that N machines (or the tasks of a Slurm job "
     "array) share a sweep; `pslab merge` then joins their directories"},
    {"resume", 0, NULL, SPEC_RUNNERS, FLAG(resume), false,
     "keep what DIR holds: skip the runs whose successful record of this spec (same run "
     "number, config and seed) is in DIR/runs.jsonl, run the others and append them (failed "
     "records are replaced by their rerun, a last line cut short by a kill is dropped). "
     "Refused when DIR/spec.json is another spec. Without it, DIR's runs.jsonl is started "
     "afresh"},
    {"metrics", 'm', "A,B,...", SPEC_RUNNERS, CALL(set_metrics), false,
     "the table's metric columns, in this order, instead of the default ones; also added to "
     "summary.csv. Names as in runs.jsonl (time_s, bytes, local_ratio, sample_tv_distance, "
     "...; a wrong one lists them all)"},
    {"record-trace", 't', "FILE", SPEC_RUNNERS, STRING(record_trace), false,
     "record what every worker accessed (per worker, its clock, read/write/sample and the "
     "keys) into FILE, a binary trace (workloads/TRACE.md) that `pslab trace stats` studies "
     "and the \"trace\" workload replays. With one run FILE itself; with several (sweeps, "
     "repeats) one file per run, \"-run<N>\" before FILE's extension (t.trace -> "
     "t-run1.trace, t-run2.trace...). Written as FILE.part<rank> per worker during the run, "
     "then merged (under a temporary name, then renamed); a failed run leaves none"},
    {"save-params", 0, "DIR", SPEC_RUNNERS, STRING(save_params), false,
     "save each run's trained parameters, gathered from their owners once the run is quiet, "
     "into DIR (made if missing): params.bin, every key's values in a binary table "
     "(experiments/SPEC.md, \"Saved parameters\"), and the workload's own files (w2v: "
     "vectors.txt in word2vec's text format and similarity.tsv, its quality's pairs; mf: "
     "user_factors.csv and item_factors.csv; kge: entities.tsv and relations.tsv; dnn: a .npy "
     "per tensor, layer<N>.weight.npy and layer<N>.bias.npy). With one "
     "run DIR itself; with several, DIR/run-<N>. Under `pslab node`, DIR must be on a file "
     "system every node sees: each node writes its part, rank 0 merges them; a failed run "
     "leaves none"},
    {"force", 0, NULL, SPEC_RUNNERS | ON(CHECK) | ON(VALIDATE), FLAG(force), false,
     "accept a spec or run that is larger than pslab's limits: a run whose work (the key "
     "accesses it asks for) exceeds the limit "
     "(experiments/SPEC.md, \"The work a run may ask for\"), and one whose memory estimate (its keys, replicas, nodes and workers) exceeds "
     "its machine's available memory; without it such a spec is refused, or such a run "
     "fails at once, with the fields that make it large"},
    {"timeout", 0, "SECONDS", SPEC_RUNNERS | ON(VALIDATE), CALL(set_timeout), false,
     "end a run still going after SECONDS of wall time (its processes killed) and record it as "
     "failed, \"timed out after SECONDS s\"; the next run starts. A number greater than 0 "
     "(30, 0.5); default: no limit"},
    {"coordinator", 'c', "HOST:PORT", ON(NODE), STRING(coordinator), false,
     "rank 0's address (default: cluster.coordinator)"},
    {"coordinator-file", 0, "FILE", ON(NODE), STRING(coordinator_file), false,
     "instead, rank 0 listens on a free port and writes its address to FILE (a fresh path on "
     "a file system every node sees); the others read it there"},
    {"key-file", 'K', "FILE", ON(NODE), CALL(set_key_file), false,
     "the cluster's key (`pslab keygen`; mode 0600): the same as --set "
     "cluster.key_file=\"FILE\" (made absolute); give every rank the same key"},
    {"profile", 0, "FILE", ON(VALIDATE) | ON(CALIBRATE), CALL(set_profile), false,
     "the cluster profile `pslab calibrate` wrote for the real machine: the same as --set "
     "cluster.profile=\"<FILE made absolute>\""},
    {"netns", 0, NULL, ON(VALIDATE), FLAG(netns), false,
     "run the real side in network namespaces, one per node, joined by a bridge, through "
     "scripts/netns-cluster.sh (found in the repository the pslab binary was built in, or at "
     "$PSLAB_NETNS_SCRIPT; needs root). Every run must have the same cluster.nodes"},
    {"rate", 0, "RATE", ON(VALIDATE), STRING(rate), false,
     "with --netns: each node's link rate, as tc writes it (1gbit, 100mbit)"},
    {"reuse-real", 0, NULL, ON(VALIDATE) | ON(CALIBRATE), FLAG(reuse_real), false,
     "run only the simulated side and compare it with the real runs an earlier validation "
     "left in DIR/real/ (same spec, --set and repeats; the simulator's cost figures and the "
     "profile may differ, not what the real backend reads): to try another profile or "
     "simulator against real runs already made"},
    {"budget", 0, "SECONDS", ON(ADVISE), CALL(set_budget), false,
     "wall time the search may spend simulating (default: 60). A round that the rest of the "
     "budget cannot pay for (at least its candidates' last costs; then as its first "
     "evaluation predicts) is not run; a first round too dear is tried on shorter prefixes "
     "(down to 10 steps or one epoch), and a budget that cannot pay for it even then is an "
     "error that says how much it needs; a first round that grows dearer than predicted "
     "ends where the budget does, and ranks what it simulated"},
    {"candidates", 0, "FILE", ON(ADVISE), STRING(candidates), false,
     "search these candidates instead of pslab's own set: a JSON list whose items are "
     "policy objects ({\"type\": \"relocate\", \"lookahead\": 50}) or objects of dotted paths "
     "and values set on the spec ({\"policy\": {...}, \"cluster.workers_per_node\": 8})"},
    {"confirm", 0, "N", ON(ADVISE), COUNT(confirm, 64), false,
     "run the top N candidates on the real backend (every node a process on this machine, "
     "over loopback, 3 repeats each) into DIR/confirm/ and say whether their real order is "
     "the simulated one; uncalibrated unless the spec's cluster has a profile of this machine"},
    {"jobs", 'j', "N", ON(ADVISE), COUNT(jobs, 64), false,
     "simulate N candidates at a time, each in a process of its own (default: the number of "
     "cores). The budget is charged each wave's longest evaluation; the ranking is the same "
     "for any N unless the budget cuts the search short"},
    {"metric", 0, "M", ON(ADVISE), STRING(metric), false,
     "rank by time_s (the default), time_to_quality_s, bytes or messages. A workload that "
     "measures quality is always ranked by time to quality (its target: "
     "workload.target_quality, else the best final quality of the static candidates)"},
    {"fidelity", 0, "DIR", ON(ADVISE), STRING(fidelity), false,
     "a `pslab validate` results directory (or its validate.jsonl) of this machine: the "
     "median |error| of its time_s is the simulator's error that the margin is held to "
     "(default: 28%, docs/fidelity.md)"},
    {"screen", 0, "MODEL", ON(ADVISE), STRING(screen), false,
     "the network model the first round screens every candidate under (default: "
     "latency_bandwidth, several times cheaper than CM02 where messages are many); the "
     "better half is simulated again on the same prefix under the spec's own model, and the "
     "later rounds too. `own`: every round under the spec's model"},
    {"svg", 0, "OUT.svg", ON(TRACE), STRING(svg), false,
     "also draw the log-log rank-frequency curve and the fitted Zipf line with gnuplot "
     "(script: OUT.gp)"},
    {"nodes", 0, "N", ON(TRACE), COUNT(nodes, UINT32_MAX), false,
     "nodes of the locality figure (default: the recording run's)"},
    {"markdown", 0, NULL, ON(METRICS) | ON(POLICIES), FLAG(markdown), false,
     "the same as Markdown tables (experiments/SPEC.md holds the metrics', docs/policies.md the "
     "policies')"},
    {"workload", 0, "SPEC", ON(CALIBRATE), STRING(workload), false,
     "instead of the machine, measure SPEC's workload: cost.step_s, a worker's own work per "
     "step beyond what the profile's figures and its flops charge (drawing keys, making "
     "lists, real math slower than its flop count), from SPEC validated on one node of one "
     "worker (5 runs a backend, kept in OUT less .json plus .runs/); writes --profile's "
     "profile with it to --out. Needs --profile"},
    {"quick", 0, NULL, ON(CALIBRATE), FLAG(quick), false,
     "fewer and shorter rounds (about 2 s; for tests)"},
    {"pin", 0, NULL, ON(CALIBRATE), FLAG(pin), false,
     "measure a core per node: the probe's two nodes each pinned to a core of its own (the "
     "first two this process may use), as specs with cluster.machines.pin lay their "
     "machines out on this one; the profile has machines {count: the cores here, cores: 1, "
     "pin: true, both I/O passes on the message's path, the preemption figures measured with "
     "both cores} and network {latency: the loopback's beyond those passes, bandwidth: the "
     "loopback's} for nodes on two cores"},
    {"quiet", 'q', NULL,
     SPEC_RUNNERS | ON(MERGE) | ON(VALIDATE) | ON(ADVISE) | ON(KEYGEN) | ON(CALIBRATE),
     FLAG(quiet), false, "no progress lines (failed runs are still reported)"},
    {"help", 'h', NULL, CLI_EVERY, FLAG(help), false, "this help"},
};
const size_t cli_n_options = sizeof cli_options / sizeof cli_options[0];
_Static_assert(sizeof cli_options / sizeof cli_options[0] <= 64, "cli.seen has a bit per option");

const cli_option_text cli_option_texts[] = {
    {"out", ON(VALIDATE), NULL,
     "results directory, created with its parents (default: results/<name>-validate/)"},
    {"out", ON(ADVISE), NULL,
     "results directory, created with its parents (default: results/<name>-advise/)"},
    {"out", ON(MERGE), NULL,
     "the merged directory, created with its parents (default: results/<name>/, <name> from "
     "the spec); not a SHARD_DIR"},
    {"out", ON(KEYGEN), "FILE", "where the key goes (required)"},
    {"out", ON(CALIBRATE), "FILE",
     "where the profile goes (default: calibration.json), written whole or not at all"},
    {"repeats", ON(VALIDATE), NULL,
     "run each sweep point N times on each backend (default: the spec's repeats, at least 3, "
     "since the real runs' spread needs several)"},
    {"shard", ON(CHECK), NULL, "also say how many runs shard K of N holds"},
    {"quiet", ON(MERGE), NULL, "no closing line (problems are still reported)"},
    {"quiet", ON(CALIBRATE) | ON(KEYGEN), NULL, "print nothing but errors"},
    {"profile", ON(CALIBRATE), NULL,
     "with --workload: the machine's profile (`pslab calibrate`) that step_s is added to"},
    {"set", ON(CALIBRATE), NULL,
     "with --workload: change SPEC before its validation on one node (not cluster.nodes, "
     "cluster.workers_per_node, sweep or repeats, which that sets), so that the figures are "
     "measured under the model the runs will use (cluster.machines.preempt=true: give "
     "validate the same --set); recorded in the profile. May be repeated."},
    {"reuse-real", ON(CALIBRATE), NULL,
     "with --workload: simulate again against the real runs an earlier --workload left in "
     "OUT less .json plus .runs/real/ (same SPEC), instead of making new ones: the figures "
     "derived again under another profile or --set, as validate --reuse-real"},
};
const size_t cli_n_option_texts = sizeof cli_option_texts / sizeof cli_option_texts[0];

/* ------------------------------------------------------------ lookups */

const cli_command *cli_command_find(const char *name) {
  for (size_t i = 0; i < CLI_N_COMMANDS; i++)
    if (strcmp(cli_commands[i].name, name) == 0) return &cli_commands[i];
  return NULL;
}

cli_command_id cli_command_of(const cli_command *cmd) {
  return (cli_command_id)(cmd - cli_commands);
}

const cli_option *cli_option_find(const char *lng) {
  for (size_t i = 0; i < cli_n_options; i++)
    if (strcmp(cli_options[i].lng, lng) == 0) return &cli_options[i];
  return NULL;
}

void cli_option_wording(const cli_option *opt, const cli_command *cmd, const char **metavar,
                        const char **help) {
  *metavar = opt->metavar;
  *help = opt->help;
  unsigned bit = CLI_ON(cli_command_of(cmd));
  for (size_t i = 0; i < cli_n_option_texts; i++) {
    const cli_option_text *t = &cli_option_texts[i];
    if (!(t->commands & bit) || strcmp(t->lng, opt->lng) != 0) continue;
    if (t->metavar) *metavar = t->metavar;
    *help = t->help;
    return;
  }
}

/* ---------------------------------------------------- value setters */

static int set_set(cli *c, const char *v) {
  c->sets[c->n_sets++] = v;
  return 0;
}

static int set_backend(cli *c, const char *v) {
  size_t n;
  const exp_backend *table = exp_backends(&n);
  if (!exp_backend_find(table, n, v)) {
    char what[128] = "--backend must be";
    for (size_t k = 0; k < n; k++)
      snprintf(what + strlen(what), sizeof what - strlen(what), "%s %s", k ? " or" : "",
               table[k].name);
    strncat(what, ", not ", sizeof what - strlen(what) - 1);
    return cli_usage_error(c->cmd, what, v);
  }
  free(c->backend_set);
  c->backend_set = malloc(strlen(v) + 9);
  if (!c->backend_set) return cli_usage_error(c->cmd, "out of memory", NULL);
  sprintf(c->backend_set, "backend=%s", v);
  return 0;
}

static int set_timeout(cli *c, const char *v) {
  char *end;
  double t = strtod(v, &end);
  if (!*v || *end || !(t > 0) || !isfinite(t))
    return cli_usage_error(c->cmd, "--timeout must be a number of seconds greater than 0 "
                                   "(30, 0.5), not ", v);
  c->timeout_s = t;
  c->timeout = v;
  return 0;
}

static int set_budget(cli *c, const char *v) {
  char *end;
  double t = strtod(v, &end);
  if (!*v || *end || !(t > 0) || !isfinite(t))
    return cli_usage_error(c->cmd, "--budget must be a number of seconds greater than 0 "
                                   "(60, 12.5), not ", v);
  c->budget_s = t;
  return 0;
}

static int set_shard(cli *c, const char *v) {
  char err[256];
  if (exp_shard_parse(v, &c->shard, err, sizeof err) != 0)
    return cli_usage_error(c->cmd, "--shard: ", err);
  return 0;
}

/* --metrics A,B,...: 0, or a usage error naming every metric. */
static int set_metrics(cli *c, const char *v) {
  char err[2048];
  free(c->metrics);
  c->metrics = exp_metrics_parse(v, err, sizeof err);
  return c->metrics ? 0 : cli_usage_error(c->cmd, "--metrics: ", err);
}

/* --key-file FILE: the --set cluster.key_file="FILE", FILE made absolute
 * (the spec's directory would be its base otherwise). */
static int set_key_file(cli *c, const char *file) {
  if (!*file) return cli_usage_error(c->cmd, "--key-file needs a file name", NULL);
  char cwd[4096] = "";
  if (file[0] != '/' && !getcwd(cwd, sizeof cwd))
    return cli_usage_error(c->cmd, "--key-file: cannot read the current directory", NULL);
  size_t len = strlen(cwd) + strlen(file) + 2;
  char *path = malloc(len);
  if (!path) return cli_usage_error(c->cmd, "out of memory", NULL);
  snprintf(path, len, "%s%s%s", cwd, *cwd ? "/" : "", file);
  cJSON *str = cJSON_CreateString(path);
  char *json = str ? cJSON_PrintUnformatted(str) : NULL;
  cJSON_Delete(str);
  free(path);
  free(c->key_set);
  c->key_set = json ? malloc(strlen(json) + 18) : NULL;
  if (c->key_set) sprintf(c->key_set, "cluster.key_file=%s", json);
  free(json);
  return c->key_set ? 0 : cli_usage_error(c->cmd, "out of memory", NULL);
}

static int set_profile(cli *c, const char *v) {
  if (!*v) return cli_usage_error(c->cmd, "--profile needs a file name", NULL);
  c->profile = v;
  return 0;
}

/* ------------------------------------------------------------ parsing */

/* The value of a CLI_COUNT option into its field. */
static int set_count(cli *c, const cli_option *o, const char *v) {
  char *end;
  unsigned long long n = strtoull(v, &end, 10);
  if (!*v || *end || v[0] == '-' || n < 1 || n > o->max) {
    char what[128];
    snprintf(what, sizeof what, "--%s must be an integer from 1 to %u, not ", o->lng,
             (unsigned)o->max);
    return cli_usage_error(c->cmd, what, v);
  }
  *(uint32_t *)((char *)c + o->field) = (uint32_t)n;
  return 0;
}

static int store(cli *c, const cli_option *o, const char *v) {
  c->seen |= (uint64_t)1 << (o - cli_options);
  switch (o->kind) {
    case CLI_FLAG:
      *(bool *)((char *)c + o->field) = true;
      return 0;
    case CLI_STRING:
      *(const char **)((char *)c + o->field) = v;
      return 0;
    case CLI_COUNT:
      return set_count(c, o, v);
    case CLI_CALL:
      return o->call(c, v);
  }
  return 0;
}

/* The option argv[*i] names for c's command, and where its "=VALUE" starts
 * (NULL: none), or NULL. */
static const cli_option *match(const cli *c, const char *a, const char **inline_value) {
  unsigned bit = CLI_ON(cli_command_of(c->cmd));
  const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
  size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
  *inline_value = eq ? eq + 1 : NULL;
  for (size_t k = 0; k < cli_n_options; k++) {
    const cli_option *o = &cli_options[k];
    if (!(o->commands & bit)) continue;
    if (a[1] == '-' ? strncmp(a + 2, o->lng, len) == 0 && o->lng[len] == '\0'
                    : o->shrt && a[1] == o->shrt && a[2] == '\0')
      return o;
  }
  return NULL;
}

/* One option at argv[*i]: 0 done, or an exit status. */
static int parse_option(int argc, char **argv, int *i, cli *c) {
  const char *a = argv[*i], *v = NULL;
  const cli_option *o = match(c, a, &v);
  if (!o || (v && !o->metavar)) return cli_usage_error(c->cmd, "unknown option ", a);
  if (o->metavar && !v) {
    if (*i + 1 >= argc) return cli_usage_error(c->cmd, "missing value after ", a);
    v = argv[++*i];
  }
  return store(c, o, v);
}

/* What the whole command line must hold, then the options that are --sets
 * appended: they count as the last ones, whatever their place. */
static int finish(cli *c) {
  const cli_command *cmd = c->cmd;
  if (!c->help && cmd->target && !c->target)
    return cli_usage_error(cmd, "missing ", cmd->target);
  const cli_option *req = cmd->required ? cli_option_find(cmd->required) : NULL;
  if (!c->help && req && !(c->seen & ((uint64_t)1 << (req - cli_options)))) {
    const char *metavar, *help;
    cli_option_wording(req, cmd, &metavar, &help);
    char what[128];
    snprintf(what, sizeof what, "missing --%s %s", req->lng, metavar ? metavar : "");
    return cli_usage_error(cmd, what, NULL);
  }
  if (!c->help && c->reuse_real && c->netns)
    return cli_usage_error(cmd, "--reuse-real runs no real side: --netns does not apply", NULL);
  if (!c->help && c->rate && !c->netns)
    return cli_usage_error(cmd, "--rate shapes the links of --netns, which is not given", NULL);
  if (c->repeats) {
    c->repeats_set = malloc(32);
    if (!c->repeats_set) return cli_usage_error(cmd, "out of memory", NULL);
    snprintf(c->repeats_set, 32, "repeats=%u", (unsigned)c->repeats);
  }
  char *last[] = {c->key_set, c->backend_set, c->repeats_set};
  for (size_t k = 0; k < sizeof last / sizeof last[0]; k++)
    if (last[k]) c->sets[c->n_sets++] = last[k];
  return 0;
}

int cli_parse(cli *c, const cli_command *cmd, int argc, char **argv) {
  *c = (cli){.cmd = cmd};
  c->sets = calloc((size_t)argc + 4, sizeof *c->sets);
  c->targets = calloc((size_t)argc + 1, sizeof *c->targets);
  if (cmd->implied) c->backend_set = strdup(cmd->implied);
  if (!c->sets || !c->targets || (cmd->implied && !c->backend_set))
    return cli_usage_error(cmd, "out of memory", NULL);
  bool options = true;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (options && strcmp(a, "--") == 0) {
      options = false;
    } else if (options && a[0] == '-' && a[1]) {
      int rc = parse_option(argc, argv, &i, c);
      if (rc != 0) return rc;
    } else if (!cmd->target || (c->target && !cmd->many)) {
      return cli_usage_error(cmd, "unexpected argument ", a);
    } else {
      c->targets[c->n_targets++] = a;
      c->target = c->targets[0];
    }
  }
  return finish(c);
}

void cli_free(cli *c) {
  free(c->backend_set);
  free(c->key_set);
  free(c->repeats_set);
  free(c->metrics);
  free(c->sets);
  free(c->targets);
  *c = (cli){0};
}
