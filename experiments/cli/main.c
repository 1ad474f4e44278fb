/*
 * The `pslab` command: run, check, plot and merge experiments.
 *
 *   pslab run SPEC [--out DIR] [--set PATH=VALUE]... [--backend sim|real]
 *             [--shard K/N] [--resume] [--metrics A,B,...] [--record-trace FILE]
 *             [--quiet]
 *   pslab check SPEC [--set PATH=VALUE]... [--backend sim|real] [--shard K/N]
 *   pslab node SPEC [--out DIR] [--set PATH=VALUE]... [--coordinator HOST:PORT]
 *              [--coordinator-file PATH] [--key-file FILE] [--shard K/N] [--resume]
 *              [--metrics A,B,...] [--record-trace FILE] [--quiet]
 *   pslab keygen --out FILE
 *   pslab plot DIR
 *   pslab merge [--out DIR] [--quiet] SHARD_DIR...
 *   pslab metrics [--markdown]
 *   pslab trace stats FILE [--svg OUT.svg] [--nodes N]
 *   pslab trace merge FILE
 *   pslab calibrate [--out FILE] [--quick] [--quiet]
 *   pslab validate SPEC [--profile FILE] [--repeats N] [--out DIR]
 *                  [--set PATH=VALUE]... [--netns [--rate RATE]] [--quiet]
 *
 * This file only reads the command line and calls the door of experiments/;
 * everything it does is in experiment.h. Exit statuses: 0 success, 1 invalid
 * spec or failed run, 2 bad command line, 3 plots not drawn.
 */
#include "experiments/experiment.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    "  keygen       make the key file that authenticates a real cluster's nodes\n"
    "  plot DIR     redraw the plots of a results directory\n"
    "  merge DIR... join the results directories of an experiment's shards\n"
    "  metrics      every metric a run reports: unit, meaning, how repeats combine\n"
    "  trace        what a recorded access trace says (stats), or merge its parts\n"
    "  calibrate    measure this machine with the real backend: a cluster profile\n"
    "  validate SPEC\n"
    "               run a spec on both backends with the same seeds and report how\n"
    "               well the simulator predicted the real backend\n"
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
    "                      [--shard K/N] [--resume] [--metrics A,B,...]\n"
    "                      [--record-trace FILE] [--force] [--quiet]\n"
    "\n"
    "Validates SPEC whole (nothing runs until every problem is fixed), then runs\n"
    "each of its runs (the cartesian product of its sweep lists, times its\n"
    "repeats) in a process of its own, and writes, in DIR:\n"
    "  runs.jsonl        one JSON record per run, appended as each run ends\n"
    "  runs.csv          one row per run: sweep values, every metric, error\n"
    "  summary.csv       one row per sweep point: sweep values, runs, runs_ok,\n"
    "                    each metric over the repeats (NAME; for a mean also\n"
    "                    NAME_sd and NAME_ci95, the 95% confidence half-width)\n"
    "  spec.json         the spec as run (after --set)\n"
    "  NAME.gp           each plot the spec asks for, a gnuplot script that\n"
    "                    draws NAME.svg and NAME.png (needs gnuplot, pngcairo)\n"
    "  logs/run-N.log    what run N printed, when it printed anything\n"
    "and prints a table on stdout: a row per sweep point, labelled by what\n"
    "varies, values with units, \"mean \xc2\xb1 ci95\" over repeats. Its columns are the\n"
    "metrics the spec's plots draw, time_s and steps_per_s (or --metrics').\n"
    "Progress goes to stderr:\n"
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
    "      --shard K/N       run only shard K of N: the runs r with\n"
    "                        (r - 1) % N == K - 1, numbered, seeded and recorded\n"
    "                        as in the whole experiment, so that N machines (or\n"
    "                        the tasks of a Slurm job array) share a sweep;\n"
    "                        `pslab merge` then joins their directories\n"
    "      --resume          keep what DIR holds: skip the runs whose successful\n"
    "                        record of this spec (same run number, config and\n"
    "                        seed) is in DIR/runs.jsonl, run the others and\n"
    "                        append them (failed records are replaced by their\n"
    "                        rerun, a last line cut short by a kill is dropped).\n"
    "                        Refused when DIR/spec.json is another spec. Without\n"
    "                        it, DIR's runs.jsonl is started afresh\n"
    "  -m, --metrics A,B,... the table's metric columns, in this order, instead\n"
    "                        of the default ones; also added to summary.csv.\n"
    "                        Names as in runs.jsonl (time_s, bytes, local_ratio,\n"
    "                        sample_tv_distance, ...; a wrong one lists them all)\n"
    "  -t, --record-trace FILE  record what every worker accessed (per worker, its\n"
    "                        clock, read/write/sample and the keys) into FILE, a\n"
    "                        binary trace (workloads/TRACE.md) that `pslab trace\n"
    "                        stats` studies and the \"trace\" workload replays. With\n"
    "                        one run FILE itself; with several (sweeps, repeats)\n"
    "                        one file per run, \"-run<N>\" before FILE's extension\n"
    "                        (t.trace -> t-run1.trace, t-run2.trace...). Written\n"
    "                        as FILE.part<rank> per worker during the run, then\n"
    "                        merged (under a temporary name, then renamed); a\n"
    "                        failed run leaves none\n"
    "      --force           run even a run whose memory estimate (its keys,\n"
    "                        replicas, nodes and workers) exceeds this machine's\n"
    "                        available memory; without it such a run fails at\n"
    "                        once with the fields that make it large\n"
    "  -q, --quiet           no progress lines (failed runs are still reported)\n"
    "  -h, --help            this help\n"
    "\n"
    "Exit status: 0 every run succeeded and every plot was drawn; 1 the spec is\n"
    "invalid, a run failed or results could not be written; 2 bad command line;\n"
    "3 every run succeeded but a plot was not drawn (e.g. gnuplot is missing).\n"
    "\n"
    "Spec reference: README.md, \"Spec reference\" (experiments/SPEC.md).\n";

static const char check_help[] =
    "usage: pslab check SPEC [--set PATH=VALUE]... [--backend sim|real] [--shard K/N]\n"
    "\n"
    "Validates SPEC as `pslab run` would, after the overrides, and prints\n"
    "\"SPEC: valid, N runs\", or every problem, one per line:\n"
    "  <file>: <json.path>: expected <what>, found <what>\n"
    "Runs nothing and writes nothing.\n"
    "\n"
    "Options:\n"
    "  -s, --set PATH=VALUE  as for `pslab run` (see `pslab run --help`)\n"
    "      --backend B       sim or real; the same as --set backend=B\n"
    "      --shard K/N       also say how many runs shard K of N holds\n"
    "  -h, --help            this help\n"
    "\n"
    "Exit status: 0 valid; 1 invalid; 2 bad command line.\n"
    "\n"
    "Spec reference: README.md, \"Spec reference\" (experiments/SPEC.md).\n";

static const char node_help[] =
    "usage: pslab node SPEC [--out DIR] [--set PATH=VALUE]... [--coordinator HOST:PORT]\n"
    "                       [--coordinator-file PATH] [--key-file FILE] [--shard K/N]\n"
    "                       [--resume]\n"
    "                       [--metrics A,B,...] [--record-trace FILE] [--force]\n"
    "                       [--quiet]\n"
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
    "\"*\" or an address of each machine to span machines). Nodes that bind\n"
    "beyond loopback authenticate each other with ZeroMQ CURVE (cluster.auth\n"
    "\"auto\") and need the cluster's key: `pslab keygen --out FILE` once, then\n"
    "--key-file FILE (or cluster.key_file) on every node.\n"
    "\n"
    "Options:\n"
    "  -o, --out DIR              results directory (rank 0; default results/<name>/)\n"
    "  -s, --set PATH=VALUE       as for `pslab run` (backend is always real)\n"
    "  -c, --coordinator H:P      rank 0's address (default: cluster.coordinator)\n"
    "      --coordinator-file F   instead, rank 0 listens on a free port and writes\n"
    "                             its address to F (a fresh path on a file system\n"
    "                             every node sees); the others read it there\n"
    "  -K, --key-file FILE        the cluster's key (`pslab keygen`; mode 0600):\n"
    "                             the same as --set cluster.key_file=\"FILE\" (made\n"
    "                             absolute); give every rank the same key\n"
    "      --shard K/N            run only shard K of N (as `pslab run`); give every\n"
    "                             rank the same\n"
    "      --resume               skip the runs already in DIR/runs.jsonl (as\n"
    "                             `pslab run`); give every rank the same --out on\n"
    "                             a file system every node sees: each reads which\n"
    "                             runs to skip, rank 0 writes\n"
    "  -m, --metrics A,B,...      the table's metric columns (rank 0), as for\n"
    "                             `pslab run` (see `pslab run --help`)\n"
    "  -t, --record-trace FILE    record a trace, as `pslab run` (one file per run\n"
    "                             when there are several); give every rank the same\n"
    "                             FILE on a file system every node sees: each node\n"
    "                             writes its workers' parts FILE.part<rank>, rank 0\n"
    "                             merges them (else `pslab trace merge FILE` later)\n"
    "      --force                run even when the run's memory estimate for this\n"
    "                             node exceeds its machine's available memory\n"
    "  -q, --quiet                no progress lines\n"
    "  -h, --help                 this help\n"
    "\n"
    "Exit status: 0 every run succeeded; 1 invalid spec or a failed run (a peer\n"
    "that died or never arrived is named by rank, within cluster.timeout_s);\n"
    "2 bad command line or no rank in the environment.\n"
    "\n"
    "Reference: README.md, \"Real clusters\".\n";

static const char keygen_help[] =
    "usage: pslab keygen --out FILE\n"
    "\n"
    "Makes a new key for a real cluster: one ZeroMQ CURVE keypair, written to\n"
    "FILE with mode 0600 (an existing FILE is refused, never overwritten). Every\n"
    "node of a `pslab node` cluster whose nodes bind beyond loopback reads it\n"
    "(cluster.key_file, or `pslab node --key-file FILE`): a node admits a\n"
    "connection only from a peer that proves it holds the key, so hosts without\n"
    "FILE cannot send messages into a run. Copy FILE to the nodes (or keep it on\n"
    "a file system only you can read); a node refuses a key file that group or\n"
    "others may read. `pslab run` needs none: it makes a key in memory for the\n"
    "nodes it forks.\n"
    "\n"
    "Options:\n"
    "  -o, --out FILE   where the key goes (required)\n"
    "  -h, --help       this help\n"
    "\n"
    "Exit status: 0 written; 1 FILE cannot be written (or exists), or ZeroMQ has\n"
    "no CURVE; 2 bad command line.\n"
    "\n"
    "Reference: README.md, \"Real clusters\" (threat model).\n";

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

static const char merge_help[] =
    "usage: pslab merge [--out DIR] [--quiet] SHARD_DIR...\n"
    "\n"
    "Joins results directories of one experiment, such as the shards that\n"
    "`pslab run SPEC --shard K/N` wrote on several machines, into one, as if\n"
    "the experiment had run in one go:\n"
    "  spec.json         the spec, which must be the same in every SHARD_DIR\n"
    "  runs.jsonl        the SHARD_DIRs' records, sorted by run number\n"
    "  summary.csv       and NAME.gp, NAME.svg, and the table on stdout, as\n"
    "                    `pslab run` makes them\n"
    "A run found in several directories keeps its successful record over a\n"
    "failed one, and of two successful ones the first directory's (with a\n"
    "warning). Runs in no directory are listed. Run logs stay in each\n"
    "SHARD_DIR/logs/.\n"
    "\n"
    "For example, each task of a Slurm job array (#SBATCH --array=1-8) runs\n"
    "  pslab run SPEC --shard $SLURM_ARRAY_TASK_ID/8 \\\n"
    "      --out results/x/shard-$SLURM_ARRAY_TASK_ID\n"
    "and once they are done\n"
    "  pslab merge --out results/x results/x/shard-*\n"
    "\n"
    "Options:\n"
    "  -o, --out DIR   the merged directory, created with its parents (default:\n"
    "                  results/<name>/, <name> from the spec); not a SHARD_DIR\n"
    "  -q, --quiet     no closing line (problems are still reported)\n"
    "  -h, --help      this help\n"
    "\n"
    "Exit status: 0 every run of the experiment is there, succeeded, and every\n"
    "plot was drawn; 1 the spec.json differ, a directory cannot be read or DIR\n"
    "is one of them (nothing is written then), or some runs are in no\n"
    "directory or failed (what there is is written); 2 bad command line; 3 a\n"
    "plot was not drawn.\n"
    "\n"
    "Reference: README.md, \"Spec reference\" (experiments/SPEC.md, Results).\n";

static const char metrics_help[] =
    "usage: pslab metrics [--markdown]\n"
    "\n"
    "Lists every metric a run can report, as runs.jsonl, summary.csv, the table\n"
    "and plots name it: its unit, what it means, when a run has it, how the\n"
    "repeats of a sweep point combine (mean with a 95% confidence interval, max\n"
    "or sum), and whether the table and summary.csv show it by default.\n"
    "\n"
    "Options:\n"
    "      --markdown   the same as a Markdown table (experiments/SPEC.md holds it)\n"
    "  -h, --help       this help\n"
    "\n"
    "Exit status: 0; 2 bad command line.\n";

static const char trace_help[] =
    "usage: pslab trace stats FILE [--svg OUT.svg] [--nodes N]\n"
    "       pslab trace merge FILE\n"
    "\n"
    "stats: what the access trace in FILE (binary, as `pslab run --record-trace`\n"
    "writes it, or the text form; workloads/TRACE.md) says, one \"name: value\"\n"
    "line each:\n"
    "  workers, steps, tables   as recorded\n"
    "  keys                     distinct keys accessed, and their share of the tables\n"
    "  accesses                 keys over all records (reads, writes, samples)\n"
    "  top keys                 the share of accesses to the hottest 0.1%, 1% and\n"
    "                           10% of the keys accessed\n"
    "  zipf exponent            least squares on the log-log rank-frequency curve,\n"
    "                           ranks weighted 1/rank, over the head: the ranks\n"
    "                           with at least 100 accesses\n"
    "  locality                 the share of accesses to keys that range\n"
    "                           partitioning over N nodes homes on the accessing\n"
    "                           worker's node (worker w on node w*N/workers)\n"
    "  reuse distance           p50, p90, p99 of the distinct keys a worker touches\n"
    "                           between two touches of one key (a step touches each\n"
    "                           of its keys once)\n"
    "\n"
    "merge: joins the parts FILE.part0, FILE.part1... that a recording run's\n"
    "workers wrote into FILE and removes them (`pslab run` does it after each run;\n"
    "for `pslab node` on machines that do not share the file system, gather the\n"
    "parts in one place first).\n"
    "\n"
    "Options:\n"
    "      --svg OUT.svg   also draw the log-log rank-frequency curve and the\n"
    "                      fitted Zipf line with gnuplot (script: OUT.gp)\n"
    "      --nodes N       nodes of the locality figure (default: the recording\n"
    "                      run's)\n"
    "  -h, --help          this help\n"
    "\n"
    "Exit status: 0 done; 1 FILE cannot be read or is not a valid trace (the\n"
    "message names the byte offset or the line); 2 bad command line; 3 the SVG\n"
    "was not drawn (e.g. gnuplot is missing).\n";

static const char calibrate_help[] =
    "usage: pslab calibrate [--out FILE] [--quick] [--quiet]\n"
    "\n"
    "Measures this machine with the real backend itself (two real nodes on\n"
    "loopback, this process and a forked child) and writes a cluster profile\n"
    "that specs include with \"cluster\": {\"profile\": \"FILE\", ...} (fields given\n"
    "beside it override it). Figures, each measured in rounds until the last 5\n"
    "agree within 5% (or 25 rounds), printed with their spread:\n"
    "  round trips of remote pulls of 1 to 64 keys and 1 to 4096 floats: wall\n"
    "  time, CPU time of both processes, CPU time of the pulling thread;\n"
    "  local pulls (per key); a compute kernel (flop/s); the cores.\n"
    "The profile holds what the simulator needs to predict runs of nodes on\n"
    "this machine: host_speed, cost.{per_message_s, per_key_s, per_byte_s,\n"
    "local_per_key_s, send_per_message_s}, machines.{count 1, cores,\n"
    "loopback_latency, loopback_bandwidth}, and under \"calibration\" every\n"
    "figure and how the model was fitted to them (experiments/calibrate.c). It\n"
    "takes 10-30 s; run it on an idle machine, since load changes the figures.\n"
    "\n"
    "Options:\n"
    "  -o, --out FILE   where the profile goes (default: calibration.json),\n"
    "                   written whole or not at all\n"
    "      --quick      fewer and shorter rounds (about 2 s; for tests)\n"
    "  -q, --quiet      print nothing but errors\n"
    "  -h, --help       this help\n"
    "\n"
    "Exit status: 0 written; 1 a measurement failed or FILE cannot be written;\n"
    "2 bad command line.\n"
    "\n"
    "Reference: README.md, \"Does the simulator predict the real backend?\".\n";

static const char validate_help[] =
    "usage: pslab validate SPEC [--profile FILE] [--repeats N] [--out DIR]\n"
    "                           [--set PATH=VALUE]... [--netns [--rate RATE]] [--quiet]\n"
    "\n"
    "Does the simulator predict the real backend? Runs every run of SPEC (its\n"
    "sweep points times its repeats) twice, with the same seeds: on the sim\n"
    "backend into DIR/sim/ and on the real backend into DIR/real/, each an\n"
    "ordinary results directory as `pslab run --backend X --out DIR/X` writes\n"
    "it (progress lines start \"sim: \" and \"real: \"). Then compares, for each\n"
    "run and each sweep point, the metrics time_s, steps_per_s, messages, bytes\n"
    "and local_ratio (those both records have as numbers):\n"
    "  error   (sim - real) / real; of a sweep point: of the means over its runs\n"
    "  within  whether sim lies within the real runs' spread at the point:\n"
    "          |sim - real mean| <= (real max - real min) / 2; n/a with one\n"
    "          real run\n"
    "and writes, in DIR:\n"
    "  validate.jsonl   a record per run and metric (\"kind\": \"run\") and per\n"
    "                   sweep point and metric (\"kind\": \"point\")\n"
    "  validate.csv     the same records, a row each\n"
    "  validate.gp      a gnuplot script drawing validate.svg and validate.png:\n"
    "                   real time_s against simulated time_s, a point per run,\n"
    "                   and the line y = x\n"
    "and prints a table on stdout: a row per sweep point, labelled as `pslab\n"
    "run` labels it, with per metric the simulated value, the real one (mean \xc2\xb1\n"
    "half the range), the error and whether it is within the spread; then per\n"
    "metric the median and largest |error| over the sweep points and at how\n"
    "many the simulator was within the spread.\n"
    "\n"
    "Options:\n"
    "  -o, --out DIR         results directory, created with its parents\n"
    "                        (default: results/<name>-validate/)\n"
    "      --repeats N       run each sweep point N times on each backend\n"
    "                        (default: the spec's repeats, at least 3, since the\n"
    "                        real runs' spread needs several)\n"
    "      --profile FILE    the cluster profile `pslab calibrate` wrote for the\n"
    "                        real machine: the same as --set\n"
    "                        cluster.profile=\"<FILE made absolute>\"\n"
    "  -s, --set PATH=VALUE  change the spec before it is validated, as for\n"
    "                        `pslab run` (see `pslab run --help`); the backend\n"
    "                        is set by each side\n"
    "      --netns           run the real side in network namespaces, one per\n"
    "                        node, joined by a bridge, through\n"
    "                        scripts/netns-cluster.sh (found in the repository\n"
    "                        the pslab binary was built in, or at\n"
    "                        $PSLAB_NETNS_SCRIPT; needs root). Every run must\n"
    "                        have the same cluster.nodes\n"
    "      --rate RATE       with --netns: each node's link rate, as tc writes\n"
    "                        it (1gbit, 100mbit)\n"
    "  -q, --quiet           no progress lines (failed runs are still reported)\n"
    "  -h, --help            this help\n"
    "\n"
    "Exit status: 0 every run succeeded on both backends; 1 the spec is invalid\n"
    "or --netns cannot be honoured (nothing ran), a run failed on either\n"
    "backend (each is named) or a file could not be written; 2 bad command\n"
    "line; 3 every run succeeded but a drawing was not made (e.g. gnuplot is\n"
    "missing).\n"
    "\n"
    "Reference: README.md, \"Does the simulator predict the real backend?\".\n";

typedef struct cli cli;

typedef struct {
  const char *name;
  const char *help;
  const char *usage;   /* first line of help, for errors */
  const char *options; /* letters of the options it takes: o s b q c f k r m d t
                          v n F (--force), calibrate's u (--quick), validate's p
                          (--profile), e (--repeats), N (--netns), a (--rate),
                          and node's K (--key-file) */
  const char *target;  /* what it names on the command line (SPEC, DIR...), or
                          NULL: nothing */
  bool many;           /* several of them */
  int (*fn)(const cli *c);
} command;

static int cmd_run(const cli *c);
static int cmd_check(const cli *c);
static int cmd_node(const cli *c);
static int cmd_keygen(const cli *c);
static int cmd_plot(const cli *c);
static int cmd_metrics(const cli *c);
static int cmd_merge(const cli *c);
static int cmd_trace(const cli *c);
static int cmd_calibrate(const cli *c);
static int cmd_validate(const cli *c);

static const command commands[] = {
    {"run", run_help, "pslab run SPEC [--out DIR] [--set PATH=VALUE]... "
                      "[--backend sim|real] [--shard K/N] [--resume] [--metrics A,B,...] "
                      "[--record-trace FILE] [--force] [--quiet]",
     "osbqkrmtF", "SPEC", false, cmd_run},
    {"check", check_help, "pslab check SPEC [--set PATH=VALUE]... "
                          "[--backend sim|real] [--shard K/N]", "sbk", "SPEC", false, cmd_check},
    {"node", node_help, "pslab node SPEC [--out DIR] [--set PATH=VALUE]... "
                        "[--coordinator HOST:PORT] [--coordinator-file PATH] "
                        "[--key-file FILE] [--shard K/N] [--resume] [--metrics A,B,...] "
                        "[--record-trace FILE] [--force] [--quiet]",
     "osqcfKkrmtF", "SPEC", false, cmd_node},
    {"keygen", keygen_help, "pslab keygen --out FILE", "o", NULL, false, cmd_keygen},
    {"plot", plot_help, "pslab plot DIR", "", "DIR", false, cmd_plot},
    {"merge", merge_help, "pslab merge [--out DIR] [--quiet] SHARD_DIR...", "oq",
     "SHARD_DIR", true, cmd_merge},
    {"metrics", metrics_help, "pslab metrics [--markdown]", "d", NULL, false, cmd_metrics},
    {"trace", trace_help, "pslab trace stats FILE [--svg OUT.svg] [--nodes N] | "
                          "pslab trace merge FILE", "vn", "stats FILE or merge FILE", true,
     cmd_trace},
    {"calibrate", calibrate_help, "pslab calibrate [--out FILE] [--quick] [--quiet]", "oqu",
     NULL, false, cmd_calibrate},
    {"validate", validate_help, "pslab validate SPEC [--profile FILE] [--repeats N] "
                                "[--out DIR] [--set PATH=VALUE]... [--netns [--rate RATE]] "
                                "[--quiet]",
     "osqpeNa", "SPEC", false, cmd_validate},
};

struct cli {
  const command *cmd;
  const char *target;  /* SPEC or DIR: the first of targets */
  const char **targets; /* argv strings */
  size_t n_targets;
  const char *out;
  const char *coordinator, *coordinator_file;
  const char **sets;   /* argv strings, plus the --backend one */
  size_t n_sets;
  char *backend_set;   /* "backend=<B>", owned */
  char *key_set;       /* "cluster.key_file=\"<absolute FILE>\"", owned */
  exp_shard shard;     /* {0, 0}: every run */
  char **metrics;      /* --metrics, owned (exp_metrics_parse), or NULL */
  const char *record_trace; /* --record-trace FILE */
  const char *svg;     /* pslab trace stats --svg */
  uint32_t nodes;      /* pslab trace stats --nodes (0: the trace's) */
  const char *profile; /* pslab validate --profile FILE */
  uint32_t repeats;    /* pslab validate --repeats (0: the default) */
  const char *rate;    /* pslab validate --rate */
  bool quiet, resume, help, markdown, netns, quick, force;
};

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

/* --metrics A,B,...: 0, or a usage error naming every metric. */
static int parse_metrics(cli *c, const char *list) {
  char err[2048];
  free(c->metrics);
  c->metrics = exp_metrics_parse(list, err, sizeof err);
  return c->metrics ? 0 : usage_error(c->cmd, "--metrics: ", err);
}

/* --key-file FILE: the --set cluster.key_file="FILE", FILE made absolute
 * (the spec's directory would be its base otherwise). */
static int set_key_file(cli *c, const char *file) {
  if (!*file) return usage_error(c->cmd, "--key-file needs a file name", NULL);
  char cwd[4096] = "";
  if (file[0] != '/' && !getcwd(cwd, sizeof cwd))
    return usage_error(c->cmd, "--key-file: cannot read the current directory", NULL);
  size_t len = strlen(cwd) + strlen(file) + 2;
  char *path = malloc(len);
  if (!path) return usage_error(c->cmd, "out of memory", NULL);
  snprintf(path, len, "%s%s%s", cwd, *cwd ? "/" : "", file);
  cJSON *str = cJSON_CreateString(path);
  char *json = str ? cJSON_PrintUnformatted(str) : NULL;
  cJSON_Delete(str);
  free(path);
  free(c->key_set);
  c->key_set = json ? malloc(strlen(json) + 18) : NULL;
  if (c->key_set) sprintf(c->key_set, "cluster.key_file=%s", json);
  free(json);
  return c->key_set ? 0 : usage_error(c->cmd, "out of memory", NULL);
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
  if (strchr(takes, 'F') && strcmp(a, "--force") == 0) {
    c->force = true;
    return 0;
  }
  if (strchr(takes, 'r') && strcmp(a, "--resume") == 0) {
    c->resume = true;
    return 0;
  }
  if (strchr(takes, 'd') && strcmp(a, "--markdown") == 0) {
    c->markdown = true;
    return 0;
  }
  if (strchr(takes, 'u') && strcmp(a, "--quick") == 0) {
    c->quick = true;
    return 0;
  }
  if (strchr(takes, 'N') && strcmp(a, "--netns") == 0) {
    c->netns = true;
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
  else if (m == 0 && strchr(takes, 'K') &&
           (m = option_value(argc, argv, i, "--key-file", "-K", &v)) > 0)
    return set_key_file(c, v);
  else if (m == 0 && strchr(takes, 't') &&
           (m = option_value(argc, argv, i, "--record-trace", "-t", &v)) > 0)
    c->record_trace = v;
  else if (m == 0 && strchr(takes, 'v') && (m = option_value(argc, argv, i, "--svg", NULL, &v)) > 0)
    c->svg = v;
  else if (m == 0 && strchr(takes, 'n') &&
           (m = option_value(argc, argv, i, "--nodes", NULL, &v)) > 0) {
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (!*v || *end || v[0] == '-' || n < 1 || n > UINT32_MAX)
      return usage_error(c->cmd, "--nodes must be an integer from 1 to 4294967295, not ", v);
    c->nodes = (uint32_t)n;
  } else if (m == 0 && strchr(takes, 'e') &&
             (m = option_value(argc, argv, i, "--repeats", NULL, &v)) > 0) {
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (!*v || *end || v[0] == '-' || n < 1 || n > 1000000)
      return usage_error(c->cmd, "--repeats must be an integer from 1 to 1000000, not ", v);
    c->repeats = (uint32_t)n;
  } else if (m == 0 && strchr(takes, 'p') &&
             (m = option_value(argc, argv, i, "--profile", NULL, &v)) > 0) {
    if (!*v) return usage_error(c->cmd, "--profile needs a file name", NULL);
    c->profile = v;
  } else if (m == 0 && strchr(takes, 'a') &&
             (m = option_value(argc, argv, i, "--rate", NULL, &v)) > 0) {
    c->rate = v;
  } else if (m == 0 && strchr(takes, 'm') &&
           (m = option_value(argc, argv, i, "--metrics", "-m", &v)) > 0)
    return parse_metrics(c, v);
  else if (m == 0 && strchr(takes, 'k') &&
           (m = option_value(argc, argv, i, "--shard", NULL, &v)) > 0) {
    char err[256];
    if (exp_shard_parse(v, &c->shard, err, sizeof err) != 0)
      return usage_error(c->cmd, "--shard: ", err);
  } else if (m == 0 && strchr(takes, 'b') &&
           (m = option_value(argc, argv, i, "--backend", NULL, &v)) > 0) {
    size_t n;
    const exp_backend *table = exp_backends(&n);
    if (!exp_backend_find(table, n, v)) {
      char what[128] = "--backend must be";
      for (size_t k = 0; k < n; k++)
        snprintf(what + strlen(what), sizeof what - strlen(what), "%s %s", k ? " or" : "",
                 table[k].name);
      strncat(what, ", not ", sizeof what - strlen(what) - 1);
      return usage_error(c->cmd, what, v);
    }
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
    } else if (!c->cmd->target || (c->target && !c->cmd->many)) {
      return usage_error(c->cmd, "unexpected argument ", a);
    } else {
      c->targets[c->n_targets++] = a;
      c->target = c->targets[0];
    }
  }
  if (!c->help && c->cmd->target && !c->target)
    return usage_error(c->cmd, "missing ", c->cmd->target);
  if (c->rate && !c->netns)
    return usage_error(c->cmd, "--rate shapes the links of --netns, which is not given", NULL);
  /* --key-file and --backend count as the last --sets, whatever their place. */
  if (c->key_set) c->sets[c->n_sets++] = c->key_set;
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
  const exp_errors *w = s ? exp_spec_warnings(s) : NULL;
  for (size_t i = 0; w && !silent && i < w->count; i++)
    fprintf(stderr, "pslab: warning: %s\n", w->lines[i]);
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
  if (c->shard.count)
    printf("; shard %u/%u holds %zu of them", c->shard.index, c->shard.count,
           exp_shard_size(&c->shard, runs));
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
  o.shard = c->shard;
  o.resume = c->resume;
  o.force = c->force;
  o.metrics = (const char *const *)c->metrics;
  o.record_trace = c->record_trace;
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
    rc = exp_run_experiment(s, &o);
  }
  exp_spec_free(s);
  return rc;
}

static int cmd_keygen(const cli *c) {
  if (!c->out) return usage_error(c->cmd, "missing --out FILE", NULL);
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
    return usage_error(c->cmd, "expected stats FILE or merge FILE", NULL);
  if (strcmp(c->targets[0], "merge") == 0) {
    if (c->svg || c->nodes)
      return usage_error(c->cmd, "--svg and --nodes are options of ", "stats");
    return exp_trace_merge(c->targets[1], stderr);
  }
  return exp_trace_stats(c->targets[1], c->nodes, c->svg, NULL, stdout, stderr);
}

static int cmd_calibrate(const cli *c) {
  exp_calib_options o;
  exp_calib_options_default(&o);
  if (c->quick) {
    o.min_rounds = 2;
    o.max_rounds = 3;
    o.scale = 0.25;
  }
  o.log = c->quiet ? NULL : stdout;
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
  o.netns_script = getenv("PSLAB_NETNS_SCRIPT");
  if (o.netns_script && !*o.netns_script) o.netns_script = NULL;
  o.quiet = c->quiet;
  return exp_validate(c->target, c->sets, c->n_sets, &o);
}

static int cmd_plot(const cli *c) { return exp_plot_dir(c->target, NULL, stderr); }

static int cmd_metrics(const cli *c) {
  exp_metrics_print(stdout, c->markdown);
  return EXP_EXIT_OK;
}

static int dispatch(const cli *c) {
  if (c->help) {
    fputs(c->cmd->help, stdout);
    return EXP_EXIT_OK;
  }
  return c->cmd->fn(c);
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
  c.targets = calloc((size_t)argc + 1, sizeof *c.targets);
  if (!c.sets || !c.targets) {
    free(c.sets);
    free(c.targets);
    fprintf(stderr, "pslab: out of memory\n");
    return EXP_EXIT_FAILED;
  }
  if (strcmp(c.cmd->name, "node") == 0) c.backend_set = strdup("backend=real");
  int rc = parse_args(argc, argv, &c);
  if (rc == 0) rc = dispatch(&c);
  free(c.backend_set);
  free(c.key_set);
  free(c.metrics);
  free(c.sets);
  free(c.targets);
  return rc;
}
