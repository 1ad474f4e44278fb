/*
 * `pslab validate SPEC`: one spec run on both backends, then the comparison.
 *
 * The spec is loaded twice, with --set backend=sim and --set backend=real
 * after the user's overrides, and both are validated before anything runs.
 * Only the backend differs, so both have the same runs, numbered alike,
 * with the same seeds (exp_run_seed takes the spec's seed and the repeat).
 * The sim side is the runner, into DIR/sim/; the real side is the runner
 * too (its nodes forked on loopback), into DIR/real/, or, with --netns,
 * scripts/netns-cluster.sh, which runs one `pslab node` per network
 * namespace and whose rank 0 writes DIR/real/. Each side's directory is
 * what `pslab run --backend X --out DIR/X` writes; its progress lines carry
 * the side's name, and its table is not printed (summary.csv holds it).
 *
 * Then the records of both are read back, each checked to be of its spec's
 * runs (run number, config and seed: a stale runs.jsonl of another spec is
 * not compared), failed runs are named, and validate_compare.c compares the rest.
 */
#include "experiments/plots/plots.h"
#include "experiments/runner/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void exp_validate_options_default(exp_validate_options *o) {
  *o = (exp_validate_options){0};
}

/* What one validation holds. */
typedef struct {
  exp_validate_options o;
  const char *spec_path;
  const char **sets;     /* the user's, then --profile's and --repeats'; room
                            for the backend's */
  size_t n_sets;
  char *profile_set, *repeats_set;
  exp_spec *sim, *real;
  char *dir, *sim_dir, *real_dir;
  uint32_t nodes;        /* --netns: every run's cluster.nodes */
  char *script, *pslab;  /* --netns: the script and the binary it runs */
  cJSON *sim_records, *real_records;
  double spec_repeats;   /* the spec's repeats when raised, else 0 */
} validation;

/* ------------------------------------------------------- overrides */

/* "cluster.profile=<FILE made absolute, as a JSON string>". */
static char *profile_set(const char *file) {
  char cwd[PATH_MAX];
  char *abs = file[0] == '/' ? strdup(file)
              : getcwd(cwd, sizeof cwd) ? exp_join_path(cwd, file) : NULL;
  cJSON *s = abs ? cJSON_CreateString(abs) : NULL;
  char *json = s ? cJSON_PrintUnformatted(s) : NULL;
  exp_buf b = {0};
  if (json) exp_buf_printf(&b, "cluster.profile=%s", json);
  else b.failed = true;
  free(json);
  cJSON_Delete(s);
  free(abs);
  return exp_buf_take(&b);
}

static int set_repeats(validation *v, uint32_t repeats) {
  free(v->repeats_set);
  v->repeats_set = malloc(32);
  if (!v->repeats_set) return -1;
  snprintf(v->repeats_set, 32, "repeats=%u", (unsigned)repeats);
  return 0;
}

/* The spec with the overrides and backend=<backend>; NULL with the
 * problems on the log. */
static exp_spec *load_side(validation *v, const char *backend) {
  char set[32];
  snprintf(set, sizeof set, "backend=%s", backend);
  size_t n = v->n_sets;
  if (v->profile_set) v->sets[n++] = v->profile_set;
  if (v->repeats_set) v->sets[n++] = v->repeats_set;
  v->sets[n++] = set;
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = exp_spec_load(v->spec_path, v->sets, n, &e);
  if (s && !v->o.force && !exp_spec_check_work(s, &e)) {
    exp_spec_free(s);
    s = NULL;
  }
  exp_errors_print(&e, v->o.log);
  /* The sim side is loaded first: only a problem of the real side alone is
   * the backend's. */
  bool real = strcmp(backend, "real") == 0;
  if (!s)
    fprintf(v->o.log, "pslab validate: %s is not valid%s (%zu problem%s); nothing was "
                      "run\n", v->spec_path, real ? " for the real backend" : "", e.count,
            e.count == 1 ? "" : "s");
  exp_errors_free(&e);
  return s;
}

static double spec_repeats(const exp_spec *s) {
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(exp_spec_json(s), "repeats");
  return cJSON_IsNumber(r) ? r->valuedouble : 1;
}

/* Each side's warnings, those both have once. */
static void print_warnings(const validation *v) {
  const exp_errors *ws = exp_spec_warnings(v->sim), *wr = exp_spec_warnings(v->real);
  for (size_t i = 0; i < ws->count; i++)
    fprintf(v->o.log, "pslab validate: warning: %s\n", ws->lines[i]);
  for (size_t i = 0; i < wr->count; i++)
    if (!exp_errors_contain(ws, wr->lines[i]))
      fprintf(v->o.log, "pslab validate: warning: %s\n", wr->lines[i]);
}

/* Both specs, valid, with the repeats decided. */
static int load_both(validation *v) {
  if ((v->o.profile && !(v->profile_set = profile_set(v->o.profile))) ||
      (v->o.repeats && set_repeats(v, v->o.repeats) != 0)) {
    fprintf(v->o.log, "pslab validate: out of memory\n");
    return -1;
  }
  if (!(v->sim = load_side(v, "sim"))) return -1;
  double repeats = spec_repeats(v->sim);
  if (!v->o.repeats && repeats < EXP_VALIDATE_REPEATS) {
    exp_spec_free(v->sim);
    v->sim = NULL;
    if (set_repeats(v, EXP_VALIDATE_REPEATS) != 0) {
      fprintf(v->o.log, "pslab validate: out of memory\n");
      return -1;
    }
    if (!(v->sim = load_side(v, "sim"))) return -1;
    v->spec_repeats = repeats;
  }
  if (!(v->real = load_side(v, "real"))) return -1;
  print_warnings(v);
  return 0;
}

/* ----------------------------------------------------------- netns */

/* Every run's cluster.nodes, which must be one number. */
static int netns_nodes(validation *v) {
  const exp_run_list *runs = exp_spec_runs(v->real);
  double first = 0;
  for (size_t i = 0; i < runs->count; i++) {
    const cJSON *n = exp_path_get(runs->runs[i].config, "cluster.nodes");
    double nodes = cJSON_IsNumber(n) ? n->valuedouble : 0;
    if (i == 0) first = nodes;
    if (nodes == first) continue;
    fprintf(v->o.log, "pslab validate: --netns runs every run on one set of network "
                      "namespaces, so every run needs the same cluster.nodes, but run 1 has "
                      "%g and run %u has %g; validate one node count at a time (for a sweep "
                      "over it: --set 'sweep.cluster.nodes=[%g]'); nothing was run\n",
            first, runs->runs[i].run, nodes, first);
    return -1;
  }
  v->nodes = (uint32_t)first;
  return 0;
}

/* This process's binary. */
static char *self_path(void) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return NULL;
  buf[n] = '\0';
  return strdup(buf);
}

/* scripts/netns-cluster.sh in the nearest folder above the binary (the
 * repository it was built in) that has one; NULL when none does. */
static char *script_above(const char *binary) {
  char *dir = strdup(binary);
  char *found = NULL;
  while (dir && !found) {
    char *slash = strrchr(dir, '/');
    if (!slash) break;
    *slash = '\0';
    char *path = exp_join_path(*dir ? dir : "/", "scripts/netns-cluster.sh");
    if (path && access(path, F_OK) == 0) found = path;
    else free(path);
  }
  free(dir);
  return found;
}

static int netns_script(validation *v) {
  v->pslab = v->o.pslab ? strdup(v->o.pslab) : self_path();
  if (!v->pslab) {
    fprintf(v->o.log, "pslab validate: --netns: cannot tell where this pslab binary is\n");
    return -1;
  }
  v->script = v->o.netns_script ? strdup(v->o.netns_script) : script_above(v->pslab);
  if (!v->script) {
    fprintf(v->o.log, "pslab validate: --netns needs scripts/netns-cluster.sh (the network "
                      "namespace launcher), and no folder above %s has it; set "
                      "PSLAB_NETNS_SCRIPT to its path; nothing was run\n", v->pslab);
    return -1;
  }
  if (access(v->script, X_OK) != 0) {
    fprintf(v->o.log, "pslab validate: --netns: %s: %s; nothing was run\n", v->script,
            errno == ENOENT ? "no such file" : "not an executable file");
    return -1;
  }
  return 0;
}

/* The script's command line: --nodes N [--rate R] --pslab BIN -- SPEC
 * [--set S]... --out DIR/real [--quiet] [--force] [--timeout T], the overrides those of the spec
 * as run but the backend (`pslab node` runs real). Borrows spec and
 * nodes. NULL on no memory. */
static char **netns_argv(const validation *v, char *spec, char *nodes, char *timeout) {
  size_t n = 0;
  char **argv = calloc(2 * v->n_sets + 16, sizeof *argv);
  if (!argv) return NULL;
  argv[n++] = v->script;
  argv[n++] = "--nodes";
  argv[n++] = nodes;
  if (v->o.rate) {
    argv[n++] = "--rate";
    argv[n++] = (char *)v->o.rate;
  }
  argv[n++] = "--pslab";
  argv[n++] = v->pslab;
  argv[n++] = "--";
  argv[n++] = spec;
  for (size_t i = 0; i < v->n_sets; i++) {
    argv[n++] = "--set";
    argv[n++] = (char *)v->sets[i];
  }
  if (v->profile_set) {
    argv[n++] = "--set";
    argv[n++] = v->profile_set;
  }
  if (v->repeats_set) {
    argv[n++] = "--set";
    argv[n++] = v->repeats_set;
  }
  argv[n++] = "--out";
  argv[n++] = v->real_dir;
  if (v->o.quiet) argv[n++] = "--quiet";
  if (v->o.force) argv[n++] = "--force";
  if (v->o.timeout_s > 0) {
    argv[n++] = "--timeout";
    argv[n++] = timeout;
  }
  return argv;
}

/* Runs argv with its output, both streams, on the log as "real: " lines.
 * The script's exit status (rank 0's), or -1 when it could not run. */
static int run_prefixed(char **argv, FILE *log) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  fflush(NULL);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    run_die_with_parent(parent); /* kept across execv: the script dies with pslab */
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    execv(argv[0], argv);
    fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  FILE *in = pid > 0 ? fdopen(fds[0], "r") : NULL;
  char *line = NULL;
  size_t cap = 0;
  while (in && getline(&line, &cap, in) > 0) {
    fprintf(log, "real: %s%s", line, line[strlen(line) - 1] == '\n' ? "" : "\n");
    fflush(log);
  }
  free(line);
  if (in) fclose(in);
  else close(fds[0]);
  int status = 0;
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) continue;
  if (pid < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_netns(validation *v) {
  char nodes[16];
  snprintf(nodes, sizeof nodes, "%u", (unsigned)v->nodes);
  char *spec = realpath(v->spec_path, NULL); /* the script may run elsewhere */
  char timeout[32];
  snprintf(timeout, sizeof timeout, "%.17g", v->o.timeout_s);
  char **argv = spec ? netns_argv(v, spec, nodes, timeout) : NULL;
  if (!argv) {
    fprintf(v->o.log, "pslab validate: %s: %s\n", v->spec_path,
            spec ? "out of memory" : strerror(errno));
    free(spec);
    return EXP_EXIT_FAILED;
  }
  /* A runs.jsonl left by an earlier validation must not pass for this one's
   * when the script fails before rank 0 starts afresh. */
  char *old = exp_join_path(v->real_dir, "runs.jsonl");
  if (old) remove(old);
  free(old);
  int status = run_prefixed(argv, v->o.log);
  if (status != 0)
    fprintf(v->o.log, "pslab validate: %s %s %d\n", v->script,
            status < 0 ? "could not be run" : "exited with status", status);
  free(spec);
  free(argv);
  return status == 0 ? EXP_EXIT_OK : status == EXP_EXIT_PLOTS ? EXP_EXIT_PLOTS
                                                                : EXP_EXIT_FAILED;
}

/* ------------------------------------------------------------ sides */

static int run_side(validation *v, const exp_spec *s, const char *dir, const char *prefix,
                    FILE *table) {
  if (!v->o.quiet)
    fprintf(v->o.log, "pslab validate: %zu runs on the %.*s backend into %s/\n",
            exp_spec_runs(s)->count, (int)strcspn(prefix, ":"), prefix, dir);
  exp_runner_options ro;
  exp_runner_options_default(&ro);
  ro.out_dir = dir;
  ro.quiet = v->o.quiet;
  ro.force = v->o.force;
  ro.timeout_s = v->o.timeout_s;
  ro.gnuplot = v->o.gnuplot;
  ro.out = table;
  ro.log = v->o.log;
  ro.prefix = prefix;
  return exp_run_experiment(s, &ro);
}

/* The run rec is a record of. Under --netns each node ran with the address
 * the script gave it (--set cluster.bind), so rank 0's record differs from
 * its run there and there only: that field is taken as the run's. */
static const exp_run *record_run(const cJSON *rec, const exp_run_list *runs, bool netns) {
  if (!netns) return exp_record_run(rec, runs);
  cJSON *copy = cJSON_Duplicate(rec, true);
  cJSON *cluster = exp_path_get(copy, "config.cluster");
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(rec, "run");
  const exp_run *run = NULL;
  if (cJSON_IsObject(cluster) && cJSON_IsNumber(n) && n->valuedouble >= 1 &&
      n->valuedouble <= (double)runs->count) {
    const cJSON *bind = exp_path_get(runs->runs[(size_t)n->valuedouble - 1].config,
                                     "cluster.bind");
    cJSON_DeleteItemFromObjectCaseSensitive(cluster, "bind");
    if (bind) cJSON_AddItemToObject(cluster, "bind", cJSON_Duplicate(bind, true));
    run = exp_record_run(copy, runs);
  }
  cJSON_Delete(copy);
  return run;
}

/* A side's records of its spec's runs (others, of another spec, are left
 * out); an empty list, after saying why, when there are none to read. */
static cJSON *read_side(const validation *v, const exp_spec *s, const char *dir) {
  char *path = exp_join_path(dir, "runs.jsonl");
  exp_errors e;
  exp_errors_init(&e);
  cJSON *all = path ? exp_jsonl_load(path, &e) : NULL;
  for (size_t i = 0; i < e.count; i++) fprintf(v->o.log, "pslab validate: %s\n", e.lines[i]);
  exp_errors_free(&e);
  free(path);
  cJSON *mine = cJSON_CreateArray();
  for (cJSON *r = all ? all->child : NULL, *next; mine && r; r = next) {
    next = r->next;
    bool match = v->o.reuse_real && s == v->real
                     ? exp_record_run_as(r, exp_spec_runs(s), "real") != NULL
                     : record_run(r, exp_spec_runs(s), v->o.netns && s == v->real) != NULL;
    if (match)
      cJSON_AddItemToArray(mine, cJSON_DetachItemViaPointer(all, r));
  }
  cJSON_Delete(all);
  return mine;
}

static const cJSON *record_of(const cJSON *records, uint32_t run) {
  for (const cJSON *r = records->child; r; r = r->next) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(r, "run");
    if (cJSON_IsNumber(n) && n->valuedouble == run) return r;
  }
  return NULL;
}

/* Names each run that failed, or has no record, on a side; how many runs
 * did on either. */
static size_t report_failures(const validation *v) {
  const exp_run_list *runs = exp_spec_runs(v->sim);
  const cJSON *sides[2] = {v->sim_records, v->real_records};
  const char *names[2] = {"sim", "real"};
  size_t failed = 0;
  for (size_t i = 0; i < runs->count; i++) {
    const exp_run *run = &runs->runs[i];
    bool bad = false;
    for (int k = 0; k < 2; k++) {
      const cJSON *rec = record_of(sides[k], run->run);
      if (rec && exp_record_ok(rec)) continue;
      const cJSON *err = cJSON_GetObjectItemCaseSensitive(rec, "error");
      char *label = exp_sweep_label(run->sweep);
      fprintf(v->o.log, "pslab validate: run %u%s%s%s failed on the %s backend: %s\n",
              run->run, label && *label ? " (" : "", label ? label : "",
              label && *label ? ")" : "", names[k],
              cJSON_IsString(err) ? err->valuestring
              : k == 1 && v->o.reuse_real
                  ? "no record of it in runs.jsonl (--reuse-real: the real runs there are of "
                    "another spec, --set or repeats)"
                  : "it has no record in runs.jsonl");
      free(label);
      bad = true;
    }
    failed += bad;
  }
  return failed;
}

/* ------------------------------------------------------- comparison */

static int write_comparison(const validation *v, const cJSON *cmp) {
  char err[EXP_PATH_MAX + 128];
  char *jsonl = exp_join_path(v->dir, "validate.jsonl");
  char *csv = exp_join_path(v->dir, "validate.csv");
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  bool ok = jsonl && csv && mem && exp_validate_csv(mem, cmp);
  if (mem && fclose(mem) != 0) ok = false;
  int rc = ok ? 0 : -1;
  if (!ok) snprintf(err, sizeof err, "out of memory");
  if (rc == 0) rc = exp_jsonl_write(jsonl, cmp, err, sizeof err);
  if (rc == 0) rc = exp_write_file_atomic(csv, text, len, err, sizeof err);
  if (rc != 0) fprintf(v->o.log, "pslab validate: %s\n", err);
  free(text);
  free(jsonl);
  free(csv);
  return rc;
}

/* validate.gp, and validate.svg and .png when gnuplot is there. */
static int draw(const validation *v, const cJSON *cmp) {
  char err[256];
  char *script = exp_validate_plot_script(cmp, exp_spec_name(v->sim), err, sizeof err);
  if (!script) {
    fprintf(v->o.log, "pslab validate: validate.svg not drawn: %s\n", err);
    return EXP_EXIT_PLOTS;
  }
  const char *prog = v->o.gnuplot ? v->o.gnuplot : "gnuplot";
  bool have = exp_program_exists(prog);
  int rc = exp_draw_script("validate", script, v->dir, prog, have, v->o.log);
  free(script);
  if (!have)
    fprintf(v->o.log, "pslab validate: validate.svg not drawn: %s is not installed (on "
                      "Debian: apt-get install gnuplot-nox, or scripts/install-deps.sh); "
                      "draw it later with `gnuplot validate.gp` in %s/\n", prog, v->dir);
  return rc == 0 && have ? EXP_EXIT_OK : EXP_EXIT_PLOTS;
}

/* Reads both sides back, compares, writes and draws. The exit status of
 * the comparison: EXP_EXIT_FAILED when a run failed or a file was not
 * written. */
static int compare(validation *v) {
  v->sim_records = read_side(v, v->sim, v->sim_dir);
  v->real_records = read_side(v, v->real, v->real_dir);
  if (!v->sim_records || !v->real_records) return EXP_EXIT_FAILED;
  size_t failed = report_failures(v);
  cJSON *cmp = exp_validate_compare(v->sim_records, v->real_records);
  if (!cmp) {
    fprintf(v->o.log, "pslab validate: out of memory\n");
    return EXP_EXIT_FAILED;
  }
  int rc = write_comparison(v, cmp) == 0 ? EXP_EXIT_OK : EXP_EXIT_FAILED;
  exp_validate_print(v->o.out, cmp);
  fflush(v->o.out);
  int plot_rc = draw(v, cmp);
  cJSON_Delete(cmp);
  size_t total = exp_spec_runs(v->sim)->count;
  if (!v->o.quiet || failed)
    fprintf(v->o.log, "pslab validate: %zu run%s on each backend, %zu failed; comparison "
                      "in %s/validate.jsonl and validate.csv%s\n", total,
            total == 1 ? "" : "s", failed, v->dir,
            plot_rc == EXP_EXIT_OK ? ", drawn in validate.svg" : "");
  if (failed) return EXP_EXIT_FAILED;
  return rc != EXP_EXIT_OK ? rc : plot_rc;
}

/* ------------------------------------------------------------- whole */

static int prepare_dirs(validation *v) {
  char err[EXP_PATH_MAX + 128];
  if (!v->dir) {
    exp_buf b = {0};
    exp_buf_printf(&b, "results/%s-validate", exp_spec_name(v->sim));
    v->dir = exp_buf_take(&b);
  }
  v->sim_dir = v->dir ? exp_join_path(v->dir, "sim") : NULL;
  v->real_dir = v->dir ? exp_join_path(v->dir, "real") : NULL;
  if (!v->sim_dir || !v->real_dir) {
    fprintf(v->o.log, "pslab validate: out of memory\n");
    return -1;
  }
  if (exp_mkdir_p(v->real_dir, err, sizeof err) != 0) {
    fprintf(v->o.log, "pslab validate: %s\n", err);
    return -1;
  }
  /* The script may run elsewhere than here: it is given DIR/real whole. */
  char *abs = v->o.netns ? realpath(v->real_dir, NULL) : NULL;
  if (abs) {
    free(v->real_dir);
    v->real_dir = abs;
  }
  return 0;
}

/* --reuse-real: the real runs an earlier validation left in DIR/real/ are
 * compared instead of new ones; only its records are needed. */
static int reused_real(const validation *v) {
  char *path = exp_join_path(v->real_dir, "runs.jsonl");
  FILE *f = path ? fopen(path, "r") : NULL;
  if (f) fclose(f);
  else
    fprintf(v->o.log, "pslab validate: --reuse-real: %s: %s (validate once without "
                      "--reuse-real to make the real runs)\n", path ? path : v->real_dir,
            path ? strerror(errno) : "out of memory");
  if (f && !v->o.quiet)
    fprintf(v->o.log, "pslab validate: the real runs already in %s/ (--reuse-real)\n",
            v->real_dir);
  free(path);
  return f ? EXP_EXIT_OK : EXP_EXIT_FAILED;
}

/* The wait, before it starts: both sides' estimate, then each side's (the
 * real side's from its simulated twin). */
static void print_estimates(const validation *v) {
  exp_estimate sim, real = {0};
  bool both = !v->o.reuse_real;
  if (exp_estimate_spec(v->sim, NULL, v->o.estimate_s, &sim) != 0 ||
      (both && exp_estimate_spec(v->real, NULL, v->o.estimate_s, &real) != 0))
    return;
  char total[48];
  exp_format_wall(sim.total_s + real.total_s, total, sizeof total);
  fprintf(v->o.log, "pslab validate: estimate: %s %s of wall time for %s:\n",
          sim.lower || real.lower ? "more than" : "about", total,
          both ? "both sides" : "the simulated side (the real runs are reused)");
  exp_estimate_print(v->o.log, "pslab validate: sim: ", &sim);
  if (both) exp_estimate_print(v->o.log, "pslab validate: real: ", &real);
}

/* Both sides, one after the other: the worse of their statuses. */
static int run_sides(validation *v) {
  if (!v->o.quiet && v->o.estimate_s > 0) print_estimates(v);
  if (v->spec_repeats && !v->o.quiet)
    fprintf(v->o.log, "pslab validate: %d repeats of each sweep point (the spec has %g): "
                      "the real runs' spread needs several; --repeats N to choose\n",
            EXP_VALIDATE_REPEATS, v->spec_repeats);
  FILE *null = fopen("/dev/null", "w"); /* the sides' tables: in summary.csv */
  FILE *table = null ? null : v->o.log;
  int rc = run_side(v, v->sim, v->sim_dir, "sim: ", table);
  int real_rc;
  if (v->o.reuse_real) {
    real_rc = reused_real(v);
  } else if (v->o.netns) {
    if (!v->o.quiet)
      fprintf(v->o.log, "pslab validate: %zu runs on the real backend in %u network "
                        "namespaces (%s) into %s/\n", exp_spec_runs(v->real)->count, v->nodes,
              v->script, v->real_dir);
    real_rc = run_netns(v);
  } else {
    real_rc = run_side(v, v->real, v->real_dir, "real: ", table);
  }
  if (null) fclose(null);
  if (rc == EXP_EXIT_FAILED || real_rc == EXP_EXIT_FAILED) return EXP_EXIT_FAILED;
  return rc != EXP_EXIT_OK ? rc : real_rc;
}

static void validation_free(validation *v) {
  exp_spec_free(v->sim);
  exp_spec_free(v->real);
  cJSON_Delete(v->sim_records);
  cJSON_Delete(v->real_records);
  free(v->sets);
  free(v->profile_set);
  free(v->repeats_set);
  free(v->dir);
  free(v->sim_dir);
  free(v->real_dir);
  free(v->script);
  free(v->pslab);
}

int exp_validate(const char *spec_path, const char *const *sets, size_t n_sets,
                 const exp_validate_options *opts) {
  validation v = {.spec_path = spec_path, .n_sets = n_sets};
  exp_validate_options_default(&v.o);
  if (opts) v.o = *opts;
  if (!v.o.out) v.o.out = stdout;
  if (!v.o.log) v.o.log = stderr;
  v.dir = v.o.out_dir ? strdup(v.o.out_dir) : NULL;
  v.sets = calloc(n_sets + 4, sizeof *v.sets);
  int rc = EXP_EXIT_FAILED;
  if (!v.sets || (v.o.out_dir && !v.dir)) {
    fprintf(v.o.log, "pslab validate: out of memory\n");
  } else {
    for (size_t i = 0; i < n_sets; i++) v.sets[i] = sets[i];
    if (load_both(&v) == 0 && (!v.o.netns || (netns_nodes(&v) == 0 && netns_script(&v) == 0)) &&
        prepare_dirs(&v) == 0) {
      int sides = run_sides(&v);
      rc = compare(&v);
      if (rc == EXP_EXIT_FAILED || sides == EXP_EXIT_FAILED) rc = EXP_EXIT_FAILED;
      else if (rc == EXP_EXIT_OK) rc = sides;
    }
  }
  validation_free(&v);
  return rc;
}
