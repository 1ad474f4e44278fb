/*
 * The commands of `pslab`, one entry each: the name, the line `pslab
 * --help` gives it, its usage (where "@" stands for the options the options
 * table gives it), what it names on the command line, and the prose of its
 * --help around the options. help.c prints them; main.c runs them.
 */
#include "experiments/cli/cli.h"

#include <stddef.h>

const char cli_main_about[] =
    "pslab is a laboratory for parameter-server management: it runs experiments\n"
    "described by a JSON spec on a simulated cluster and writes their results.\n";

const char cli_main_after[] =
    "The spec format (every field, its units and defaults, sweeps, plots and\n"
    "the results format) is described in experiments/SPEC.md, \"Spec reference\";\n"
    "README.md and docs/ explain the rest. A first spec:\n"
    "experiments/specs/quickstart.json.\n";

static const char run_about[] =
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
    "A failing run is reported and the others go on.\n";

static const char run_after[] =
    "Exit status: 0 every run succeeded and every plot was drawn; 1 the spec is\n"
    "invalid, a run failed or results could not be written; 2 bad command line;\n"
    "3 every run succeeded but a plot was not drawn (e.g. gnuplot is missing).\n"
    "\n"
    "Reference: experiments/SPEC.md, \"Spec reference\".\n";

static const char check_about[] =
    "Validates SPEC as `pslab run` would, after the overrides, and prints\n"
    "\"SPEC: valid, N runs\", or every problem, one per line:\n"
    "  <file>: <json.path>: expected <what>, found <what>\n"
    "A valid spec's line is followed by an estimate of the wall time of its runs\n"
    "(\"estimate: about 3 min 20 s of wall time for 12 runs (from ...)\"), from\n"
    "running sweep points for a moment on the simulator, about 2 s in all on an\n"
    "idle machine, up to 4 times that on a busy one (PSLAB_ESTIMATE_S=SECONDS\n"
    "sets it, 0 turns the estimate off; `pslab run` and `pslab validate` print\n"
    "it too, from 4 s a side). Writes nothing; runs no more than that.\n";

static const char check_after[] =
    "Exit status: 0 valid; 1 invalid; 2 bad command line.\n"
    "\n"
    "Reference: experiments/SPEC.md, \"Spec reference\".\n";

static const char node_about[] =
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
    "Give every rank the same options; the backend is always real. Rank 0 alone\n"
    "writes the results and the table (--out, --metrics); with --resume every\n"
    "rank reads which runs to skip, and with --record-trace each node writes\n"
    "its workers' parts FILE.part<rank>, which rank 0 merges (else `pslab trace\n"
    "merge FILE` later): give them an --out and a FILE on a file system every\n"
    "node sees.\n";

static const char node_after[] =
    "Exit status: 0 every run succeeded; 1 invalid spec or a failed run (a peer\n"
    "that died or never arrived is named by rank, within cluster.timeout_s);\n"
    "2 bad command line or no rank in the environment.\n"
    "\n"
    "Reference: docs/real-clusters.md, \"Real clusters\".\n";

static const char keygen_about[] =
    "Makes a new key for a real cluster: one ZeroMQ CURVE keypair, written to\n"
    "FILE with mode 0600 (an existing FILE is refused, never overwritten). Every\n"
    "node of a `pslab node` cluster whose nodes bind beyond loopback reads it\n"
    "(cluster.key_file, or `pslab node --key-file FILE`): a node admits a\n"
    "connection only from a peer that proves it holds the key, so hosts without\n"
    "FILE cannot send messages into a run. Copy FILE to the nodes (or keep it on\n"
    "a file system only you can read); a node refuses a key file that group or\n"
    "others may read. `pslab run` needs none: it makes a key in memory for the\n"
    "nodes it forks.\n";

static const char keygen_after[] =
    "Exit status: 0 written; 1 FILE cannot be written (or exists), or ZeroMQ has\n"
    "no CURVE; 2 bad command line.\n"
    "\n"
    "Reference: docs/real-clusters.md, \"Authenticated clusters\".\n";

static const char plot_about[] =
    "Redraws the plots a results directory's spec asks for, from DIR/spec.json\n"
    "and DIR/runs.jsonl, into DIR/NAME.gp, DIR/NAME.svg and DIR/NAME.png (needs\n"
    "gnuplot with its pngcairo terminal).\n"
    "Edit the \"plots\" list of DIR/spec.json to change or add plots.\n";

static const char plot_after[] =
    "Exit status: 0 every plot drawn; 1 DIR cannot be read; 2 bad command line;\n"
    "3 some plot was not drawn.\n"
    "\n"
    "Plot reference: experiments/SPEC.md, \"plots\".\n";

static const char merge_about[] =
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
    "  pslab merge --out results/x results/x/shard-*\n";

static const char merge_after[] =
    "Exit status: 0 every run of the experiment is there, succeeded, and every\n"
    "plot was drawn; 1 the spec.json differ, a directory cannot be read or DIR\n"
    "is one of them (nothing is written then), or some runs are in no\n"
    "directory or failed (what there is is written); 2 bad command line; 3 a\n"
    "plot was not drawn.\n"
    "\n"
    "Reference: experiments/SPEC.md, \"Shards: one sweep on several machines\".\n";

static const char metrics_about[] =
    "Lists every metric a run can report, as runs.jsonl, summary.csv, the table\n"
    "and plots name it: its unit, what it means, when a run has it, how the\n"
    "repeats of a sweep point combine (mean with a 95% confidence interval, max\n"
    "or sum), and whether the table and summary.csv show it by default.\n";

static const char metrics_after[] =
    "Exit status: 0; 2 bad command line.\n";

static const char policies_about[] =
    "Lists every policy's fields, then those of the sampling object every policy\n"
    "takes: its type, default, range and meaning, from the tables the policies\n"
    "read their objects by (so `pslab check` refuses what this does not allow).\n";

static const char policies_after[] =
    "Exit status: 0; 2 bad command line.\n"
    "\n"
    "Reference: docs/policies.md, \"Policies and their fields\".\n";

static const char trace_about[] =
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
    "parts in one place first).\n";

static const char trace_after[] =
    "Exit status: 0 done; 1 FILE cannot be read or is not a valid trace (the\n"
    "message names the byte offset or the line); 2 bad command line; 3 the SVG\n"
    "was not drawn (e.g. gnuplot is missing).\n";

static const char calibrate_about[] =
    "Measures this machine with the real backend itself (two real nodes on\n"
    "loopback, this process and a forked child) and writes a cluster profile\n"
    "that specs include with \"cluster\": {\"profile\": \"FILE\", ...} (fields given\n"
    "beside it override it). Figures, each measured in rounds until the last 5\n"
    "agree within 5% (or 25 rounds), printed per pull with their spread:\n"
    "  remote pulls of 1 to 256 keys and 1 to 4096 floats, one at a time; 4 and\n"
    "  16 outstanding; one outstanding while a thread per core spins; both\n"
    "  nodes pulling at once; two pulling threads: wall time, and per node\n"
    "  the CPU time of the process, of its receiver and pulling threads and\n"
    "  of their sends, and the wake-ups of the threads that read its\n"
    "  messages;\n"
    "  local pulls (per key); local pulls and pushes by one thread and by\n"
    "  two on the same keys (what an access costs more when the other thread\n"
    "  touched its key last); a compute kernel (flop/s); the cores; the\n"
    "  scheduler's slice (two threads a core spinning); how long a thread\n"
    "  woken from another core waits for its core beside 1 to 4 spinning\n"
    "  threads (machines.preempt_wait and preempt_per_thread, with preempt\n"
    "  false: the simulator's wake-up preemption is off unless a spec sets it;\n"
    "  with --pin too, measured on both cores).\n"
    "The profile holds what the simulator's node model needs on this machine:\n"
    "host_speed, cost.{per_message_s, per_key_s, per_byte_s, local_per_key_s,\n"
    "send_per_message_s, wakeup_s, io_per_message_s, io_wakeup_s,\n"
    "wakeup_wait_s, initial_per_float_s, shared_per_key_s,\n"
    "shared_per_byte_s}, machines.{count 1, cores, loopback_latency,\n"
    "loopback_bandwidth, slice, preempt, preempt_wait, preempt_per_thread},\n"
    "and under \"calibration\" every\n"
    "figure, every fitted parameter with its spread, and a check: the model's\n"
    "predictions of the batches the fit did not use (both ways, two pullers)\n"
    "against what they measured (experiments/fidelity/calibrate.c). It takes\n"
    "5-30 s; run it on an idle machine, since load changes the figures (the\n"
    "profile keeps the load average of the minute before, and its notes and\n"
    "the log warn when it was above 0.5).\n"
    "With --workload SPEC --profile PROFILE it measures a workload instead:\n"
    "cost.step_s, a worker's own work per step that no figure above charges\n"
    "(drawing keys, making lists, real math slower than its flop count), as\n"
    "the median over 5 runs of (real CPU - simulated CPU) / steps of SPEC on\n"
    "one node of one worker under static, and cost.step_s_by_policy, the\n"
    "same under each other policy type of SPEC (its policy and its sweep's\n"
    "\"policy\" list: what the model leaves uncharged under that policy),\n"
    "charged in place of step_s to runs of that type; the sweep's\n"
    "other fields left out. Writes PROFILE with them, their runs' figures and\n"
    "the workload under \"calibration\".\"step\" to --out, and keeps the\n"
    "validation in OUT less .json plus .runs/. The figures belong to that\n"
    "workload, and to the simulator's model they were measured under, since\n"
    "they are what it leaves uncharged: with --set (such as\n"
    "cluster.machines.preempt=true) they are measured under a changed model,\n"
    "and with --reuse-real derived again from the real runs already in\n"
    "OUT's .runs/, against a new simulation; see\n"
    "docs/fidelity.md, \"A worker's own work per step\".\n";

static const char calibrate_after[] =
    "Exit status: 0 written; 1 a measurement failed or FILE cannot be written;\n"
    "2 bad command line.\n"
    "\n"
    "Reference: docs/fidelity.md, \"Calibrating: pslab calibrate\".\n";

static const char validate_about[] =
    "Does the simulator predict the real backend? Runs every run of SPEC (its\n"
    "sweep points times its repeats) twice, with the same seeds: on the sim\n"
    "backend into DIR/sim/ and on the real backend into DIR/real/, each an\n"
    "ordinary results directory as `pslab run --backend X --out DIR/X` writes\n"
    "it (progress lines start \"sim: \" and \"real: \"; before them, an estimate\n"
    "of the wall time of both sides, and of each, as `pslab check` makes it).\n"
    "Then compares, for each run and each sweep point, the metrics time_s,\n"
    "steps_per_s, messages, bytes and local_ratio, and what a training run\n"
    "learned: quality, loss and\n"
    "time_to_quality_s (each where both records have it as a number, else left\n"
    "out: a run without real math has none of these three), and the telemetry\n"
    "that says where the two part: rt_p50_s, rt_p99_s, utilization, queue_p50,\n"
    "queue_p99, messages_per_wakeup, messages_per_io_wakeup, cpu_s,\n"
    "cpu_per_message_s, op_wait_s and io_cpu_s:\n"
    "  error   (sim - real) / real; of a sweep point: of the means over its runs\n"
    "  within  whether sim lies within the real runs' spread at the point:\n"
    "          |sim - real mean| <= (real max - real min) / 2; n/a with one\n"
    "          real run, and where the real runs all agree exactly (a spread of\n"
    "          0 measures no noise) and sim differs: the error alone says how\n"
    "          close it is\n"
    "  ranking for each pair of sweep points one swept field apart (two\n"
    "          policies, say), whether the simulated time_s orders them as the\n"
    "          real one does; counted only where the real means differ by more\n"
    "          than both points' spreads together, judged only with 2 or more\n"
    "          real runs at each\n"
    "  largest gap  at each sweep point, the telemetry metric whose simulated\n"
    "          mean is the largest factor from the real one, |log(sim / real)|\n"
    "and writes, in DIR:\n"
    "  validate.jsonl   a record per run and metric (\"kind\": \"run\"), per\n"
    "                   sweep point and metric (\"kind\": \"point\"), per sweep\n"
    "                   point its largest gap (\"kind\": \"gap\") and the\n"
    "                   ranking's counts and disagreeing pairs (\"kind\":\n"
    "                   \"ranking\")\n"
    "  validate.csv     the run and point records, a row each\n"
    "  validate.gp      a gnuplot script drawing validate.svg and validate.png:\n"
    "                   real time_s against simulated time_s, a point per run,\n"
    "                   and the line y = x\n"
    "and prints a table on stdout: a row per sweep point, labelled as `pslab\n"
    "run` labels it, with per metric the simulated value, the real one (mean \xc2\xb1\n"
    "half the range), the error and whether it is within the spread (the\n"
    "telemetry left out); then a line per sweep point with its largest gap; then\n"
    "per metric the median and largest |error| over the sweep points and at how\n"
    "many the simulator was within the spread; then the ranking, as\n"
    "  ranking: A of C pairs agree (W pairs within the real spread not counted,\n"
    "  U pairs with fewer than two real runs not judged)\n"
    "and a line per pair that disagrees, with both points' sim and real times.\n";

static const char validate_after[] =
    "Exit status: 0 every run succeeded on both backends; 1 the spec is invalid\n"
    "or --netns cannot be honoured (nothing ran), a run failed on either\n"
    "backend (each is named) or a file could not be written; 2 bad command\n"
    "line; 3 every run succeeded but a drawing was not made (e.g. gnuplot is\n"
    "missing).\n"
    "\n"
    "Reference: docs/fidelity.md, \"Does the simulator predict the real backend?\".\n";

static const char advise_about[] =
    "Which policy and settings run SPEC's workload fastest on its cluster? Builds\n"
    "the candidates from the spec's workload and cluster (every policy the spec's\n"
    "checks accept, with look-ahead, hot keys from the workload's measured skew,\n"
    "sync rates, staleness, workers per node and servers over ranges; the spec's\n"
    "own policy and sweep points too; or --candidates FILE), and searches them by\n"
    "successive halving on the simulator: every candidate on a short prefix of\n"
    "the run, the better half on a prefix twice as long, and so on up to the\n"
    "whole run, until the budget is spent or one leads by more than the\n"
    "estimates' errors. Ranks by time_s, or by time to quality where the\n"
    "workload measures a quality. Prints the ranked table (estimate, interval,\n"
    "the share of the run it comes from), the margin between the first and the\n"
    "second and a warning when it is smaller than the simulator's measured\n"
    "error, and writes, in DIR:\n"
    "  advise.jsonl   the summary, every candidate (and those the checks\n"
    "                 refused, with why), every evaluation in the order it ran,\n"
    "                 the ranking, the confirmation\n"
    "  advise.txt     the table\n"
    "  winner.json    the first candidate as a spec: pslab run DIR/winner.json\n"
    "  search.gp      draws search.svg and .png: each estimate by round\n";

static const char advise_after[] =
    "Exit status: 0 done; 1 the spec or an option is invalid (the message names\n"
    "the field), no candidate applies, the budget cannot pay for one round,\n"
    "every candidate failed, a confirmation run failed or a file could not be\n"
    "written; 2 bad command line.\n"
    "\n"
    "Reference: docs/advise.md.\n";

static const char completion_about[] =
    "Prints a bash completion script made from pslab's tables of commands and\n"
    "options: it completes command names, each command's options, backend names\n"
    "after --backend and file names elsewhere. Load it into this shell with\n"
    "  source <(pslab completion bash)\n"
    "or for every shell of yours with\n"
    "  pslab completion bash > ~/.local/share/bash-completion/completions/pslab\n";

static const char completion_after[] =
    "Exit status: 0 printed; 2 bad command line (a shell other than bash).\n";

const cli_command cli_commands[CLI_N_COMMANDS] = {
    [CLI_RUN] =
        {.name = "run",
         .args = "SPEC",
         .summary = "run every run of an experiment and write its results",
         .synopsis = "SPEC @",
         .target = "SPEC",
         .about = run_about,
         .after = run_after},
    [CLI_CHECK] =
        {.name = "check",
         .args = "SPEC",
         .summary = "validate a spec, count its runs, estimate their wall time",
         .synopsis = "SPEC @",
         .target = "SPEC",
         .about = check_about,
         .after = check_after},
    [CLI_NODE] =
        {.name = "node",
         .args = "SPEC",
         .summary = "be one node of a real cluster (under mpirun or srun)",
         .synopsis = "SPEC @",
         .target = "SPEC",
         .implied = "backend=real",
         .about = node_about,
         .after = node_after},
    [CLI_KEYGEN] =
        {.name = "keygen",
         .args = "",
         .summary = "make the key file that authenticates a real cluster's nodes",
         .synopsis = "@",
         .required = "out",
         .about = keygen_about,
         .after = keygen_after},
    [CLI_PLOT] =
        {.name = "plot",
         .args = "DIR",
         .summary = "redraw the plots of a results directory",
         .synopsis = "DIR @",
         .target = "DIR",
         .about = plot_about,
         .after = plot_after},
    [CLI_MERGE] =
        {.name = "merge",
         .args = "DIR...",
         .summary = "join the results directories of an experiment's shards",
         .synopsis = "@ SHARD_DIR...",
         .target = "SHARD_DIR",
         .many = true,
         .about = merge_about,
         .after = merge_after},
    [CLI_METRICS] =
        {.name = "metrics",
         .args = "",
         .summary = "every metric a run reports: unit, meaning, how repeats combine",
         .synopsis = "@",
         .about = metrics_about,
         .after = metrics_after},
    [CLI_POLICIES] =
        {.name = "policies",
         .args = "",
         .summary = "every policy's fields: type, default, range, meaning",
         .synopsis = "@",
         .about = policies_about,
         .after = policies_after},
    [CLI_TRACE] =
        {.name = "trace",
         .args = "",
         .summary = "what a recorded access trace says (stats), or merge its parts",
         .synopsis = "stats FILE @\nmerge FILE",
         .target = "stats FILE or merge FILE",
         .many = true,
         .words = "stats merge",
         .about = trace_about,
         .after = trace_after},
    [CLI_CALIBRATE] =
        {.name = "calibrate",
         .args = "",
         .summary = "measure this machine with the real backend: a cluster profile",
         .synopsis = "@",
         .about = calibrate_about,
         .after = calibrate_after},
    [CLI_VALIDATE] =
        {.name = "validate",
         .args = "SPEC",
         .summary = "run a spec on both backends with the same seeds and report how well "
                    "the simulator predicted the real backend",
         .synopsis = "SPEC @",
         .target = "SPEC",
         .about = validate_about,
         .after = validate_after},
    [CLI_ADVISE] =
        {.name = "advise",
         .args = "SPEC",
         .summary = "search the policies and their settings for a spec's workload and "
                    "cluster by simulation, and recommend one",
         .synopsis = "SPEC @",
         .target = "SPEC",
         .about = advise_about,
         .after = advise_after},
    [CLI_COMPLETION] =
        {.name = "completion",
         .args = "bash",
         .summary = "print a bash completion script for pslab's commands and options",
         .synopsis = "bash @",
         .target = "SHELL",
         .words = "bash",
         .about = completion_about,
         .after = completion_after},
};
