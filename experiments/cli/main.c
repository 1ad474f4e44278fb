/*
 * The `pslab` command: run, check, plot and merge experiments.
 *
 * This file only runs the commands: their names, usage, options and help
 * come from the tables of cli.h (commands.c, options.c),
 * which also parse the command line (`pslab --help`, `pslab CMD --help`).
 * Everything a command does is in experiment.h. Exit statuses: 0 success,
 * 1 invalid spec or failed run, 2 bad command line, 3 plots not drawn.
 */
#include "experiments/experiment.h"
#include "experiments/cli/cli.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------- commands */

/* The spec, checked whole: its fields, and unless --force the work its runs
 * ask for. */
static exp_spec *load(const cli *c, bool silent) {
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = exp_spec_load(c->target, c->sets, c->n_sets, &e);
  if (s && !c->force && !exp_spec_check_work(s, &e)) {
    exp_spec_free(s);
    s = NULL;
  }
  if (!silent) exp_errors_print(&e, stderr);
  if (!s && !silent)
    fprintf(stderr, "pslab: %s is not valid (%zu problem%s); nothing was run\n",
            c->target, e.count, e.count == 1 ? "" : "s");
  const exp_errors *w = s ? exp_spec_warnings(s) : NULL;
  for (size_t i = 0; w && !silent && i < w->count; i++)
    fprintf(stderr, "pslab: warning: %s\n", w->lines[i]);
  exp_errors_free(&e);
  return s;
}

/* The calibration budget: PSLAB_ESTIMATE_S when set (0: no estimate), else
 * dflt. */
static double estimate_budget(double dflt) {
  const char *v = getenv("PSLAB_ESTIMATE_S");
  char *end;
  double b = v && *v ? strtod(v, &end) : dflt;
  return v && *v && (*end || !(b >= 0)) ? dflt : b;
}

/* Prints the estimate of the runs shard holds on f, unless turned off. */
static void print_estimate(FILE *f, const char *lead, const exp_spec *s, const exp_shard *shard,
                           double dflt) {
  double budget = estimate_budget(dflt);
  exp_estimate e;
  if (budget > 0 && exp_estimate_spec(s, shard, budget, &e) == 0)
    exp_estimate_print(f, lead, &e);
}

static int cmd_check(const cli *c) {
  exp_spec *s = load(c, false);
  if (!s) return EXP_EXIT_FAILED;
  const exp_run_list *runs = exp_spec_runs(s);
  printf("%s: valid, %zu run%s", c->target, runs->count, runs->count == 1 ? "" : "s");
  if (runs->count > 1)
    printf(" (%zu sweep point%s x %zu repeat%s)", runs->points,
           runs->points == 1 ? "" : "s", runs->count / runs->points,
           runs->count / runs->points == 1 ? "" : "s");
  if (c->shard.count)
    printf("; shard %u/%u holds %zu of them", c->shard.index, c->shard.count,
           exp_shard_size(&c->shard, runs));
  printf("\n");
  fflush(stdout);
  print_estimate(stdout, "", s, &c->shard, EXP_ESTIMATE_BUDGET_S);
  exp_spec_free(s);
  return EXP_EXIT_OK;
}

static int cmd_run(const cli *c) {
  exp_spec *s = load(c, false);
  if (!s) return EXP_EXIT_FAILED;
  exp_runner_options o;
  exp_runner_options_default(&o);
  o.out_dir = c->out;
  o.quiet = c->quiet;
  o.shard = c->shard;
  o.resume = c->resume;
  o.force = c->force;
  o.metrics = (const char *const *)c->metrics;
  o.record_trace = c->record_trace;
  o.timeout_s = c->timeout_s;
  o.save_params = c->save_params;
  if (!c->quiet) print_estimate(stderr, "pslab: ", s, &c->shard, EXP_ESTIMATE_RUN_S);
  int rc = exp_run_experiment(s, &o);
  exp_spec_free(s);
  return rc;
}

/* Every run to run must have as many nodes as the launcher started
 * processes. */
static bool sizes_match(const exp_spec *s, const exp_shard *shard, uint32_t size,
                        bool report) {
  const exp_run_list *runs = exp_spec_runs(s);
  bool ok = true;
  for (size_t i = 0; i < runs->count; i++) {
    if (!exp_shard_has(shard, runs->runs[i].run)) continue;
    const cJSON *n = exp_path_get(runs->runs[i].config, "cluster.nodes");
    double nodes = cJSON_IsNumber(n) ? n->valuedouble : 0;
    if (nodes == size) continue;
    if (report)
      fprintf(stderr, "pslab node: run %u: cluster.nodes is %g but %u processes were "
              "started\n", runs->runs[i].run, nodes, size);
    ok = false;
  }
  return ok;
}

static int cmd_node(const cli *c) {
  uint32_t rank, size;
  char err[512];
  if (real_rank_from_env(&rank, &size, err, sizeof err) != 0) {
    fprintf(stderr, "pslab node: %s\n", err);
    return EXP_EXIT_USAGE;
  }
  exp_spec *s = load(c, rank != 0); /* one report of a bad spec, not one per rank */
  if (!s) return EXP_EXIT_FAILED;
  int rc = EXP_EXIT_FAILED;
  if (sizes_match(s, &c->shard, size, rank == 0)) {
    exp_node_role role = {rank, size, c->coordinator, c->coordinator_file};
    exp_runner_options o;
    exp_runner_options_default(&o);
    o.out_dir = c->out;
    o.quiet = c->quiet || rank != 0;
    o.node = &role;
    o.shard = c->shard;
    o.resume = c->resume;
    o.force = c->force;
    o.metrics = (const char *const *)c->metrics;
    o.record_trace = c->record_trace;
    o.timeout_s = c->timeout_s;
    o.save_params = c->save_params;
    rc = exp_run_experiment(s, &o);
  }
  exp_spec_free(s);
  return rc;
}

static int cmd_keygen(const cli *c) {
  real_curve_key k;
  char err[512];
  int rc = real_curve_keygen(&k, err, sizeof err);
  if (rc == 0) rc = real_key_file_write(c->out, &k, err, sizeof err);
  real_curve_key_wipe(&k);
  if (rc != 0) {
    fprintf(stderr, "pslab keygen: %s\n", err);
    return EXP_EXIT_FAILED;
  }
  if (!c->quiet) fprintf(stderr, "pslab keygen: wrote %s (mode 0600): give it to every node "
                         "as cluster.key_file or --key-file\n", c->out);
  return EXP_EXIT_OK;
}

static int cmd_merge(const cli *c) {
  exp_merge_options o;
  exp_merge_options_default(&o);
  o.out_dir = c->out;
  o.quiet = c->quiet;
  return exp_merge_dirs(c->targets, c->n_targets, &o);
}

static int cmd_trace(const cli *c) {
  if (c->n_targets != 2 || (strcmp(c->targets[0], "stats") != 0 &&
                            strcmp(c->targets[0], "merge") != 0))
    return cli_usage_error(c->cmd, "expected stats FILE or merge FILE", NULL);
  if (strcmp(c->targets[0], "merge") == 0) {
    if (c->svg || c->nodes)
      return cli_usage_error(c->cmd, "--svg and --nodes are options of ", "stats");
    return exp_trace_merge(c->targets[1], stderr);
  }
  return exp_trace_stats(c->targets[1], c->nodes, c->svg, NULL, stdout, stderr);
}

static int cmd_calibrate(const cli *c) {
  if (!c->workload && (c->n_sets || c->reuse_real))
    return cli_usage_error(c->cmd, c->reuse_real ? "--reuse-real" : "--set",
                           " goes with --workload: the machine's own figures are measured "
                           "afresh");
  if (c->workload || c->profile) {
    if (!c->workload || !c->profile)
      return cli_usage_error(c->cmd, "--workload and --profile go together: ",
                             "the workload's step cost is added to a machine's profile");
    if (c->quick) return cli_usage_error(c->cmd, "--quick measures the machine, not ", "--workload");
    if (c->pin) return cli_usage_error(c->cmd, "--pin measures the machine, not ", "--workload");
    exp_workload_options wo = {.sets = c->sets, .n_sets = c->n_sets,
                               .reuse_real = c->reuse_real};
    return exp_calibrate_workload(c->workload, c->profile,
                                  c->out ? c->out : "calibration.json", &wo, stderr,
                                  c->quiet ? NULL : stdout);
  }
  exp_calib_options o;
  exp_calib_options_default(&o);
  if (c->quick) {
    o.min_rounds = 2;
    o.max_rounds = 3;
    o.scale = 0.25;
  }
  o.log = c->quiet ? NULL : stdout;
  o.pin = c->pin;
  return exp_calibrate_file(c->out ? c->out : "calibration.json", &o, stderr);
}

static int cmd_validate(const cli *c) {
  exp_validate_options o;
  exp_validate_options_default(&o);
  o.out_dir = c->out;
  o.repeats = c->repeats;
  o.profile = c->profile;
  o.netns = c->netns;
  o.rate = c->rate;
  o.reuse_real = c->reuse_real;
  o.netns_script = getenv("PSLAB_NETNS_SCRIPT");
  if (o.netns_script && !*o.netns_script) o.netns_script = NULL;
  o.quiet = c->quiet;
  o.force = c->force;
  o.timeout_s = c->timeout_s;
  o.estimate_s = estimate_budget(EXP_ESTIMATE_RUN_S);
  /* o.repeats sets the repeats on each side: without the last --set, which
   * cli_parse made of --repeats, they would be set twice. */
  return exp_validate(c->target, c->sets, c->n_sets - (c->repeats_set != NULL), &o);
}

static int cmd_advise(const cli *c) {
  exp_advise_options o;
  exp_advise_options_default(&o);
  o.out_dir = c->out;
  if (c->budget_s > 0) o.budget_s = c->budget_s;
  o.candidates = c->candidates;
  o.confirm = c->confirm;
  o.jobs = c->jobs;
  o.metric = c->metric;
  o.fidelity = c->fidelity;
  o.screen = c->screen;
  o.quiet = c->quiet;
  return exp_advise(c->target, c->sets, c->n_sets, &o);
}

static int cmd_plot(const cli *c) { return exp_plot_dir(c->target, NULL, stderr); }

static int cmd_metrics(const cli *c) {
  exp_metrics_print(stdout, c->markdown);
  return EXP_EXIT_OK;
}

static int cmd_policies(const cli *c) {
  exp_policies_print(stdout, c->markdown);
  return EXP_EXIT_OK;
}

static int cmd_completion(const cli *c) {
  if (strcmp(c->target, "bash") != 0)
    return cli_usage_error(c->cmd, "no completion script for the shell ", c->target);
  cli_print_bash_completion(stdout);
  return EXP_EXIT_OK;
}

/* What each command of cli_commands runs. */
static int (*const command_fn[CLI_N_COMMANDS])(const cli *c) = {
    [CLI_RUN] = cmd_run,
    [CLI_CHECK] = cmd_check,
    [CLI_NODE] = cmd_node,
    [CLI_KEYGEN] = cmd_keygen,
    [CLI_PLOT] = cmd_plot,
    [CLI_MERGE] = cmd_merge,
    [CLI_METRICS] = cmd_metrics,
    [CLI_POLICIES] = cmd_policies,
    [CLI_TRACE] = cmd_trace,
    [CLI_CALIBRATE] = cmd_calibrate,
    [CLI_VALIDATE] = cmd_validate,
    [CLI_ADVISE] = cmd_advise,
    [CLI_COMPLETION] = cmd_completion,
};

static int help_command(int argc, char **argv) {
  if (argc < 3) {
    cli_print_main_help(stdout);
    return EXP_EXIT_OK;
  }
  const cli_command *cmd = cli_command_find(argv[2]);
  if (!cmd) return cli_usage_error(NULL, "no help for unknown command ", argv[2]);
  cli_print_help(stdout, cmd);
  return EXP_EXIT_OK;
}

int main(int argc, char **argv) {
  if (argc < 2) return cli_usage_error(NULL, "missing command", NULL);
  const char *name = argv[1];
  if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
    cli_print_main_help(stdout);
    return EXP_EXIT_OK;
  }
  if (strcmp(name, "help") == 0) return help_command(argc, argv);
  const cli_command *cmd = cli_command_find(name);
  if (!cmd)
    return cli_usage_error(NULL, name[0] == '-' ? "unknown option " : "unknown command ",
                           name);
  cli c;
  int rc = cli_parse(&c, cmd, argc, argv);
  if (rc == 0 && c.help)
    cli_print_help(stdout, cmd);
  else if (rc == 0)
    rc = command_fn[cli_command_of(cmd)](&c);
  cli_free(&c);
  return rc;
}
