/*
 * The `pslab` command: run, check and plot experiments.
 *
 *   pslab run SPEC [--out DIR] [--set PATH=VALUE]... [--backend sim|real] [--quiet]
 *   pslab check SPEC [--set PATH=VALUE]... [--backend sim|real]
 *   pslab node SPEC [--out DIR] [--set PATH=VALUE]... [--coordinator HOST:PORT]
 *              [--coordinator-file PATH] [--quiet]
 *   pslab plot DIR
 *
 * This file only reads the command line and calls the door of experiments/;
 * everything it does is in experiment.h. Exit statuses: 0 success, 1 invalid
 * spec or failed run, 2 bad command line, 3 plots not drawn.
 */
#include "experiments/experiment.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static const char main_help[] =
    "usage: pslab <command> [options]\n"
    "\n"
    "pslab is a laboratory for parameter-server management: it runs experiments\n"
    "described by a JSON spec on a simulated cluster and writes their results.\n"
    "\n"
    "Commands:\n"
    "  run SPEC     run every run of an experiment and write its results\n"
    "  check SPEC   validate a spec and count its runs; runs nothing\n"
    "  node SPEC    be one node of a real cluster (under mpirun or srun)\n"
    "  plot DIR     redraw the plots of a results directory\n"
    "  help [CMD]   this help, or the help of a command\n"
    "\n"
    "Options:\n"
    "  -h, --help   this help; `pslab CMD --help` explains a command's options\n"
    "\n"
    "The spec format (every field, its units and defaults, sweeps, plots and\n"
    "the results format) is described in README.md, section \"Spec reference\"\n"
    "(experiments/SPEC.md). A first spec: experiments/specs/quickstart.json.\n";

static const char run_help[] =
    "usage: pslab run SPEC [--out DIR] [--set PATH=VALUE]... [--backend sim|real]\n"
    "                      [--quiet]\n"
    "\n"
    "Validates SPEC whole (nothing runs until every problem is fixed), then runs\n"
    "each of its runs (the cartesian product of its sweep lists, times its\n"
    "repeats) in a process of its own, and writes, in DIR:\n"
    "  runs.jsonl        one JSON record per run, appended as each run ends\n"
    "  summary.csv       one row per run: sweep values, then the main metrics\n"
    "  spec.json         the spec as run (after --set)\n"
    "  NAME.gp           each plot the spec asks for, a gnuplot script that\n"
    "                    draws NAME.svg and NAME.png (needs gnuplot, pngcairo)\n"
    "  logs/run-N.log    what run N printed, when it printed anything\n"
    "and prints a table (means over repeats) on stdout. Progress goes to stderr:\n"
    "one updating line on a terminal, a line per run start and end otherwise.\n"
    "A failing run is reported and the others go on.\n"
    "\n"
    "Options:\n"
    "  -o, --out DIR         results directory, created with its parents\n"
    "                        (default: results/<name>/, <name> from the spec)\n"
    "  -s, --set PATH=VALUE  change the spec before it is validated. PATH is\n"
    "                        dotted (cluster.nodes, policy.type; a number indexes\n"
    "                        a list); its parent must exist. sweep.<path> sets\n"
    "                        one sweep list (sweep.cluster.nodes=[2,4,8]). VALUE\n"
    "                        is JSON when it parses (16, true, [1,2],\n"
    "                        '{\"type\":\"static\"}', '\"quoted\"') and a plain\n"
    "                        string otherwise (10Gbps). May be repeated.\n"
    "      --backend B       sim (SimGrid, the default) or real (one process per\n"
    "                        node on this machine, over loopback TCP; times are\n"
    "                        wall-clock); the same as --set backend=B\n"
    "  -q, --quiet           no progress lines (failed runs are still reported)\n"
    "  -h, --help            this help\n"
    "\n"
    "Exit status: 0 every run succeeded and every plot was drawn; 1 the spec is\n"
    "invalid, a run failed or results could not be written; 2 bad command line;\n"
    "3 every run succeeded but a plot was not drawn (e.g. gnuplot is missing).\n"
    "\n"
    "Spec reference: README.md, \"Spec reference\" (experiments/SPEC.md).\n";

static const char check_help[] =
    "usage: pslab check SPEC [--set PATH=VALUE]... [--backend sim|real]\n"
    "\n"
    "Validates SPEC as `pslab run` would, after the overrides, and prints\n"
    "\"SPEC: valid, N runs\", or every problem, one per line:\n"
    "  <file>: <json.path>: expected <what>, found <what>\n"
    "Runs nothing and writes nothing.\n"
    "\n"
    "Options:\n"
    "  -s, --set PATH=VALUE  as for `pslab run` (see `pslab run --help`)\n"
    "      --backend B       sim or real; the same as --set backend=B\n"
    "  -h, --help            this help\n"
    "\n"
    "Exit status: 0 valid; 1 invalid; 2 bad command line.\n"
    "\n"
    "Spec reference: README.md, \"Spec reference\" (experiments/SPEC.md).\n";

static const char node_help[] =
    "usage: pslab node SPEC [--out DIR] [--set PATH=VALUE]... [--coordinator HOST:PORT]\n"
    "                       [--coordinator-file PATH] [--quiet]\n"
    "\n"
    "Runs this process as one node of every run of SPEC on the real backend, as\n"
    "a launcher starts one process per node on a cluster:\n"
    "  mpirun -np 8 --hostfile H pslab node SPEC --coordinator node01:5555\n"
    "  srun -N 8 -n 8 pslab node SPEC --coordinator-file $HOME/pslab.addr\n"
    "The rank and the number of processes come from PSLAB_RANK/PSLAB_SIZE,\n"
    "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE (mpirun), PMI_RANK/PMI_SIZE or\n"
    "SLURM_PROCID/SLURM_NTASKS (srun); every run's cluster.nodes must equal the\n"
    "number of processes. Rank 0 listens at the coordinator's address and the\n"
    "others meet there; rank 0 writes the results (as `pslab run` does), the\n"
    "others write nothing. Servers bind cluster.bind (default 127.0.0.1: set\n"
    "\"*\" or an address of each machine to span machines).\n"
    "\n"
    "Options:\n"
    "  -o, --out DIR              results directory (rank 0; default results/<name>/)\n"
    "  -s, --set PATH=VALUE       as for `pslab run` (backend is always real)\n"
    "  -c, --coordinator H:P      rank 0's address (default: cluster.coordinator)\n"
    "      --coordinator-file F   instead, rank 0 listens on a free port and writes\n"
    "                             its address to F (a fresh path on a file system\n"
    "                             every node sees); the others read it there\n"
    "  -q, --quiet                no progress lines\n"
    "  -h, --help                 this help\n"
    "\n"
    "Exit status: 0 every run succeeded; 1 invalid spec or a failed run (a peer\n"
    "that died or never arrived is named by rank, within cluster.timeout_s);\n"
    "2 bad command line or no rank in the environment.\n"
    "\n"
    "Reference: README.md, \"Real clusters\".\n";

static const char plot_help[] =
    "usage: pslab plot DIR\n"
    "\n"
    "Redraws the plots a results directory's spec asks for, from DIR/spec.json\n"
    "and DIR/runs.jsonl, into DIR/NAME.gp, DIR/NAME.svg and DIR/NAME.png (needs\n"
    "gnuplot with its pngcairo terminal).\n"
    "Edit the \"plots\" list of DIR/spec.json to change or add plots.\n"
    "\n"
    "Options:\n"
    "  -h, --help   this help\n"
    "\n"
    "Exit status: 0 every plot drawn; 1 DIR cannot be read; 2 bad command line;\n"
    "3 some plot was not drawn.\n"
    "\n"
    "Plot reference: README.md, \"Spec reference\" (experiments/SPEC.md).\n";

typedef struct {
  const char *name;
  const char *help;
  const char *usage; /* first line of help, for errors */
  const char *options; /* letters of the options it takes: o s b q c f */
} command;

static const command commands[] = {
    {"run", run_help, "pslab run SPEC [--out DIR] [--set PATH=VALUE]... "
                      "[--backend sim|real] [--quiet]", "osbq"},
    {"check", check_help, "pslab check SPEC [--set PATH=VALUE]... "
                          "[--backend sim|real]", "sb"},
    {"node", node_help, "pslab node SPEC [--out DIR] [--set PATH=VALUE]... "
                        "[--coordinator HOST:PORT] [--coordinator-file PATH] [--quiet]",
     "osqcf"},
    {"plot", plot_help, "pslab plot DIR", ""},
};

typedef struct {
  const command *cmd;
  const char *target;  /* SPEC or DIR */
  const char *out;
  const char *coordinator, *coordinator_file;
  const char **sets;   /* argv strings, plus the --backend one */
  size_t n_sets;
  char *backend_set;   /* "backend=<B>", owned */
  bool quiet, help;
} cli;

/* ---------------------------------------------------- command line */

static int usage_error(const command *cmd, const char *what, const char *arg) {
  fprintf(stderr, "pslab%s%s: %s%s\n", cmd ? " " : "", cmd ? cmd->name : "", what,
          arg ? arg : "");
  fprintf(stderr, "usage: %s\nTry 'pslab %s%s--help' for more.\n",
          cmd ? cmd->usage : "pslab <command> [options]", cmd ? cmd->name : "",
          cmd ? " " : "");
  return EXP_EXIT_USAGE;
}

static const command *find_command(const char *name) {
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

/* Matches argv[*i] as --lng VALUE, --lng=VALUE or -shrt VALUE: 1 (with
 * *value), 0 when it is another option, -1 when the value is missing. */
static int option_value(int argc, char **argv, int *i, const char *lng,
                        const char *shrt, const char **value) {
  const char *a = argv[*i];
  size_t len = strlen(lng);
  if (strncmp(a, lng, len) == 0 && a[len] == '=') {
    *value = a + len + 1;
    return 1;
  }
  if (strcmp(a, lng) != 0 && !(shrt && strcmp(a, shrt) == 0)) return 0;
  if (*i + 1 >= argc) return -1;
  *value = argv[++*i];
  return 1;
}

/* One option at argv[*i]: 0 done, or an exit status. */
static int parse_option(int argc, char **argv, int *i, cli *c) {
  const char *a = argv[*i], *v = NULL, *takes = c->cmd->options;
  int m = 0;
  if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
    c->help = true;
    return 0;
  }
  if (strchr(takes, 'q') && (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)) {
    c->quiet = true;
    return 0;
  }
  if (strchr(takes, 'o') && (m = option_value(argc, argv, i, "--out", "-o", &v)) > 0)
    c->out = v;
  else if (m == 0 && strchr(takes, 's') &&
           (m = option_value(argc, argv, i, "--set", "-s", &v)) > 0)
    c->sets[c->n_sets++] = v;
  else if (m == 0 && strchr(takes, 'c') &&
           (m = option_value(argc, argv, i, "--coordinator", "-c", &v)) > 0)
    c->coordinator = v;
  else if (m == 0 && strchr(takes, 'f') &&
           (m = option_value(argc, argv, i, "--coordinator-file", NULL, &v)) > 0)
    c->coordinator_file = v;
  else if (m == 0 && strchr(takes, 'b') &&
           (m = option_value(argc, argv, i, "--backend", NULL, &v)) > 0) {
    if (strcmp(v, "sim") != 0 && strcmp(v, "real") != 0)
      return usage_error(c->cmd, "--backend must be sim or real, not ", v);
    free(c->backend_set);
    c->backend_set = malloc(strlen(v) + 9);
    if (c->backend_set) sprintf(c->backend_set, "backend=%s", v);
  }
  if (m < 0) return usage_error(c->cmd, "missing value after ", a);
  if (m == 0) return usage_error(c->cmd, "unknown option ", a);
  return 0;
}

static int parse_args(int argc, char **argv, cli *c) {
  bool options = true;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (options && strcmp(a, "--") == 0) {
      options = false;
    } else if (options && a[0] == '-' && a[1]) {
      int rc = parse_option(argc, argv, &i, c);
      if (rc != 0) return rc;
    } else if (c->target) {
      return usage_error(c->cmd, "unexpected argument ", a);
    } else {
      c->target = a;
    }
  }
  if (!c->help && !c->target)
    return usage_error(c->cmd, "missing ", strcmp(c->cmd->name, "plot") ? "SPEC" : "DIR");
  /* --backend counts as the last --set, whatever its place. */
  if (c->backend_set) c->sets[c->n_sets++] = c->backend_set;
  return 0;
}

/* --------------------------------------------------------- commands */

static exp_spec *load(const cli *c, bool silent) {
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = exp_spec_load(c->target, c->sets, c->n_sets, &e);
  if (!silent) exp_errors_print(&e, stderr);
  if (!s && !silent)
    fprintf(stderr, "pslab: %s is not valid (%zu problem%s); nothing was run\n",
            c->target, e.count, e.count == 1 ? "" : "s");
  exp_errors_free(&e);
  return s;
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
  printf("\n");
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
  int rc = exp_run_experiment(s, &o);
  exp_spec_free(s);
  return rc;
}

/* Every run must have as many nodes as the launcher started processes. */
static bool sizes_match(const exp_spec *s, uint32_t size, bool report) {
  const exp_run_list *runs = exp_spec_runs(s);
  bool ok = true;
  for (size_t i = 0; i < runs->count; i++) {
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
  if (sizes_match(s, size, rank == 0)) {
    exp_node_role role = {rank, size, c->coordinator, c->coordinator_file};
    exp_runner_options o;
    exp_runner_options_default(&o);
    o.out_dir = c->out;
    o.quiet = c->quiet || rank != 0;
    o.node = &role;
    rc = exp_run_experiment(s, &o);
  }
  exp_spec_free(s);
  return rc;
}

static int dispatch(const cli *c) {
  if (c->help) {
    fputs(c->cmd->help, stdout);
    return EXP_EXIT_OK;
  }
  if (strcmp(c->cmd->name, "run") == 0) return cmd_run(c);
  if (strcmp(c->cmd->name, "check") == 0) return cmd_check(c);
  if (strcmp(c->cmd->name, "node") == 0) return cmd_node(c);
  return exp_plot_dir(c->target, NULL, stderr);
}

static int help_command(int argc, char **argv) {
  if (argc < 3) {
    fputs(main_help, stdout);
    return EXP_EXIT_OK;
  }
  const command *cmd = find_command(argv[2]);
  if (!cmd) return usage_error(NULL, "no help for unknown command ", argv[2]);
  fputs(cmd->help, stdout);
  return EXP_EXIT_OK;
}

int main(int argc, char **argv) {
  if (argc < 2) return usage_error(NULL, "missing command", NULL);
  const char *name = argv[1];
  if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
    fputs(main_help, stdout);
    return EXP_EXIT_OK;
  }
  if (strcmp(name, "help") == 0) return help_command(argc, argv);
  cli c = {.cmd = find_command(name)};
  if (!c.cmd)
    return usage_error(NULL, name[0] == '-' ? "unknown option " : "unknown command ",
                       name);
  c.sets = calloc((size_t)argc + 1, sizeof *c.sets);
  if (!c.sets) {
    fprintf(stderr, "pslab: out of memory\n");
    return EXP_EXIT_FAILED;
  }
  if (strcmp(c.cmd->name, "node") == 0) c.backend_set = strdup("backend=real");
  int rc = parse_args(argc, argv, &c);
  if (rc == 0) rc = dispatch(&c);
  free(c.backend_set);
  free(c.sets);
  return rc;
}
