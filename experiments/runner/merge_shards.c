/*
 * `pslab merge`: joins result directories, the shards of one experiment run
 * apart (`pslab run SPEC --shard K/N`, one per machine or Slurm array task),
 * into one directory, as if the experiment had run in one go.
 *
 * Every directory must hold the same spec.json (the spec as run, after
 * --set): records of different specs cannot be compared, so a difference
 * stops the merge before anything is written. The experiment's runs are
 * expanded again from that spec, so a record is taken only when it is one of
 * them (same run number, config and seed) and the runs no directory holds
 * can be named. Each run keeps one record: a successful one over a failed
 * one, and the first directory's when two succeeded (a run is deterministic
 * in the simulator, so two successes differ only in wall_s; the user is told,
 * as it usually means a directory was given twice). What is written at the
 * end is written by the runner's own functions (exp_jsonl_write,
 * exp_results_finish), so a merged directory reads as one `pslab run` made.
 */
#include "experiments/runner/runner.h"
#include "experiments/results/results.h"
#include "experiments/spec/spec.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *const *dirs;
  size_t n_dirs;
  exp_merge_options o;
  cJSON *spec;          /* the first directory's spec.json */
  const char *name;     /* borrowed from spec */
  exp_run_list runs;
  exp_plot_list plots;
  cJSON **chosen;       /* chosen[r - 1]: run r's record, or NULL */
  size_t *from;         /* from[r - 1]: the directory it came from */
  char *out_dir;
} merger;

void exp_merge_options_default(exp_merge_options *o) { *o = (exp_merge_options){0}; }

/* ------------------------------------------------------------ specs */

/* DIR/spec.json parsed; NULL with the reason on log. */
static cJSON *read_spec(const char *dir, FILE *log) {
  char err[EXP_PATH_MAX + 128];
  char *path = exp_join_path(dir, "spec.json");
  char *text = path ? exp_read_file(path, NULL, err, sizeof err) : NULL;
  cJSON *json = text ? cJSON_Parse(text) : NULL;
  if (!path)
    fprintf(log, "pslab merge: out of memory\n");
  else if (!text)
    fprintf(log, "pslab merge: %s (is %s a results directory?)\n", err, dir);
  else if (!cJSON_IsObject(json))
    fprintf(log, "pslab merge: %s: expected a spec (a JSON object), found %s\n", path,
            json ? "another JSON value" : "invalid JSON");
  if (!cJSON_IsObject(json)) {
    cJSON_Delete(json);
    json = NULL;
  }
  free(text);
  free(path);
  return json;
}

/* Every directory's spec.json must be the first one's. */
static bool load_specs(merger *m) {
  m->spec = read_spec(m->dirs[0], m->o.log);
  for (size_t i = 1; m->spec && i < m->n_dirs; i++) {
    cJSON *other = read_spec(m->dirs[i], m->o.log);
    bool same = other && cJSON_Compare(other, m->spec, true);
    if (other && !same)
      fprintf(m->o.log, "pslab merge: %s/spec.json is not the spec of %s/spec.json: the "
              "directories hold results of different specs (or of different --set); "
              "nothing was written\n", m->dirs[i], m->dirs[0]);
    cJSON_Delete(other);
    if (!same) return false;
  }
  return m->spec != NULL;
}

/* The experiment's runs and plots, from the spec the shards ran. */
static bool expand(merger *m) {
  exp_errors e;
  exp_errors_init(&e);
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(m->spec, "name");
  if (!cJSON_IsString(name) || !exp_is_file_stem(name->valuestring))
    exp_expect(&e, "name", "a name of letters, digits, '_', '.' and '-'", name);
  else
    m->name = name->valuestring;
  exp_sweep_expand(m->spec, &m->runs, &e);
  exp_plots_parse(cJSON_GetObjectItemCaseSensitive(m->spec, "plots"), &m->plots, &e);
  for (size_t i = 0; i < e.count; i++)
    fprintf(m->o.log, "pslab merge: %s/spec.json: %s\n", m->dirs[0], e.lines[i]);
  bool ok = e.count == 0;
  exp_errors_free(&e);
  return ok;
}

/* ---------------------------------------------------------- output */

/* Whether two paths name one directory (both must exist). */
static bool same_dir(const char *a, const char *b) {
  char ra[PATH_MAX], rb[PATH_MAX];
  return realpath(a, ra) && realpath(b, rb) && strcmp(ra, rb) == 0;
}

/* DIR, which may not be one of the directories merged: it is rewritten. */
static bool resolve_out(merger *m) {
  m->out_dir = m->o.out_dir ? strdup(m->o.out_dir) : exp_join_path("results", m->name);
  if (!m->out_dir) {
    fprintf(m->o.log, "pslab merge: out of memory\n");
    return false;
  }
  for (size_t i = 0; i < m->n_dirs; i++) {
    if (!same_dir(m->out_dir, m->dirs[i])) continue;
    fprintf(m->o.log, "pslab merge: the output directory %s is one of the directories "
            "to merge (%s), which merging would overwrite; give another --out\n",
            m->out_dir, m->dirs[i]);
    return false;
  }
  return true;
}

/* -------------------------------------------------------- records */

/* Puts rec (taken) in its run's slot unless a better record is there. */
static void choose(merger *m, cJSON *rec, const exp_run *run, size_t dir) {
  size_t i = run->run - 1;
  cJSON *had = m->chosen[i];
  bool better = !had || (exp_record_ok(rec) && !exp_record_ok(had));
  if (had && exp_record_ok(rec) && exp_record_ok(had))
    fprintf(m->o.log, "pslab merge: warning: run %u succeeded in both %s and %s; "
            "keeping the record of %s\n", run->run, m->dirs[m->from[i]], m->dirs[dir],
            m->dirs[m->from[i]]);
  if (!better) {
    cJSON_Delete(rec);
    return;
  }
  cJSON_Delete(had);
  m->chosen[i] = rec;
  m->from[i] = dir;
}

/* Takes the records of DIR/runs.jsonl that are runs of the spec. */
static bool collect_dir(merger *m, size_t dir) {
  exp_errors w, e;
  exp_errors_init(&w);
  exp_errors_init(&e);
  char *path = exp_join_path(m->dirs[dir], "runs.jsonl");
  cJSON *loaded = path ? exp_jsonl_load_interrupted(path, &w, &e) : NULL;
  for (size_t i = 0; i < w.count; i++)
    fprintf(m->o.log, "pslab merge: warning: %s\n", w.lines[i]);
  for (size_t i = 0; i < e.count; i++) fprintf(m->o.log, "pslab merge: %s\n", e.lines[i]);
  size_t foreign = 0;
  for (cJSON *rec = loaded ? loaded->child : NULL; rec;) {
    cJSON *next = rec->next;
    const exp_run *run = exp_record_run(rec, &m->runs);
    if (run)
      choose(m, cJSON_DetachItemViaPointer(loaded, rec), run, dir);
    else
      foreign++;
    rec = next;
  }
  if (foreign)
    fprintf(m->o.log, "pslab merge: warning: %s: %zu record%s of no run of the spec (run "
            "number, config or seed differ) left out\n", path, foreign,
            foreign == 1 ? "" : "s");
  bool ok = loaded != NULL;
  cJSON_Delete(loaded);
  free(path);
  exp_errors_free(&w);
  exp_errors_free(&e);
  return ok;
}

static bool collect(merger *m) {
  m->chosen = calloc(m->runs.count + 1, sizeof *m->chosen);
  m->from = calloc(m->runs.count + 1, sizeof *m->from);
  if (!m->chosen || !m->from) {
    fprintf(m->o.log, "pslab merge: out of memory\n");
    return false;
  }
  for (size_t d = 0; d < m->n_dirs; d++)
    if (!collect_dir(m, d)) return false;
  return true;
}

/* ---------------------------------------------------------- writing */

/* "run 3" or "runs 5-7, 12": the runs without a record, ranges joined. */
static char *missing_label(const merger *m, size_t *n_missing) {
  exp_buf b = {0};
  size_t n = 0;
  for (size_t i = 0; i < m->runs.count; i++) {
    if (m->chosen[i]) continue;
    size_t j = i;
    while (j + 1 < m->runs.count && !m->chosen[j + 1]) j++;
    exp_buf_puts(&b, n ? ", " : "");
    if (j > i)
      exp_buf_printf(&b, "%zu-%zu", i + 1, j + 1);
    else
      exp_buf_printf(&b, "%zu", i + 1);
    n += j - i + 1;
    i = j;
  }
  *n_missing = n;
  char *list = exp_buf_take(&b);
  exp_buf_printf(&b, "run%s %s", n == 1 ? "" : "s", list ? list : "?");
  free(list);
  return exp_buf_take(&b);
}

/* DIR/spec.json and DIR/runs.jsonl (records sorted by run number); the
 * records are moved into *records. */
static bool write_files(merger *m, cJSON *records) {
  char err[EXP_PATH_MAX + 128];
  for (size_t i = 0; i < m->runs.count; i++) {
    if (m->chosen[i]) cJSON_AddItemToArray(records, m->chosen[i]);
    m->chosen[i] = NULL;
  }
  char *jsonl = exp_join_path(m->out_dir, "runs.jsonl");
  int rc = jsonl ? 0 : -1;
  if (rc != 0) snprintf(err, sizeof err, "out of memory");
  if (rc == 0) rc = exp_mkdir_p(m->out_dir, err, sizeof err);
  if (rc == 0) rc = exp_spec_save(m->out_dir, m->spec, err, sizeof err);
  if (rc == 0) rc = exp_jsonl_write(jsonl, records, err, sizeof err);
  if (rc != 0) fprintf(m->o.log, "pslab merge: %s\n", err);
  free(jsonl);
  return rc == 0;
}

/* Writes DIR whole, then says what it holds. */
static int write_out(merger *m) {
  size_t missing = 0, failed = 0;
  char *label = missing_label(m, &missing);
  cJSON *records = cJSON_CreateArray();
  int rc = records && write_files(m, records) ? EXP_EXIT_OK : EXP_EXIT_FAILED;
  exp_results res = {records, &m->plots, NULL};
  if (rc == EXP_EXIT_OK)
    rc = exp_results_finish(m->out_dir, m->name, &res, m->o.gnuplot, m->o.out, m->o.log);
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next)
    failed += !exp_record_ok(r);
  if (missing)
    fprintf(m->o.log, "pslab merge: warning: %s of the experiment's %zu are in none of "
            "the directories\n", label ? label : "some runs", m->runs.count);
  if (failed)
    fprintf(m->o.log, "pslab merge: %zu of the runs merged failed\n", failed);
  if (rc != EXP_EXIT_FAILED && (missing || failed || !m->o.quiet))
    fprintf(m->o.log, "pslab merge: %zu of the experiment's %zu runs from %zu "
            "director%s; results in %s/\n", m->runs.count - missing, m->runs.count,
            m->n_dirs, m->n_dirs == 1 ? "y" : "ies", m->out_dir);
  free(label);
  cJSON_Delete(records);
  return missing || failed ? EXP_EXIT_FAILED : rc;
}

/* ------------------------------------------------------------- door */

int exp_merge_dirs(const char *const *dirs, size_t n_dirs, const exp_merge_options *opts) {
  merger m = {.dirs = dirs, .n_dirs = n_dirs};
  exp_merge_options_default(&m.o);
  if (opts) m.o = *opts;
  if (!m.o.out) m.o.out = stdout;
  if (!m.o.log) m.o.log = stderr;
  int rc = EXP_EXIT_FAILED;
  if (n_dirs == 0)
    fprintf(m.o.log, "pslab merge: no directory to merge\n");
  else if (load_specs(&m) && expand(&m) && resolve_out(&m) && collect(&m))
    rc = write_out(&m);
  for (size_t i = 0; m.chosen && i < m.runs.count; i++) cJSON_Delete(m.chosen[i]);
  free(m.chosen);
  free(m.from);
  free(m.out_dir);
  exp_plot_list_free(&m.plots);
  exp_run_list_free(&m.runs);
  cJSON_Delete(m.spec);
  return rc;
}
