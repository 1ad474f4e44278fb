/*
 * A results directory as a whole: what `pslab run` (and `pslab node` on
 * rank 0) and `pslab merge` leave in DIR, written by the same functions, and
 * what a resumed experiment finds there.
 *
 * The runner appends each record to runs.jsonl as its run ends, so a killed
 * experiment keeps every finished run; resuming (--resume) reads those
 * records back, keeps the successful ones of the spec being run and runs the
 * rest. A record counts as one of the spec's runs only when its run number,
 * config and seed are the run's: the config is the resolved spec of the run,
 * so a record made under other settings is never taken for this spec's. The
 * end of an experiment (summary.csv, the table, the plots) is one function,
 * so that a merged directory is exactly what one `pslab run` would have
 * written.
 */
#include "experiments/runner/runner.h"
#include "experiments/plots/plots.h"
#include "experiments/backends/backends.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------- records */

/* The record's run number, or 0 when it has none. */
static uint32_t record_number(const cJSON *rec) {
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(rec, "run");
  if (!cJSON_IsNumber(n) || n->valuedouble < 1 || n->valuedouble > UINT32_MAX ||
      n->valuedouble != floor(n->valuedouble))
    return 0;
  return (uint32_t)n->valuedouble;
}

const exp_run *exp_record_run(const cJSON *rec, const exp_run_list *runs) {
  uint32_t n = record_number(rec);
  if (n == 0 || n > runs->count) return NULL;
  const exp_run *run = &runs->runs[n - 1]; /* runs are numbered in order */
  const cJSON *seed = cJSON_GetObjectItemCaseSensitive(rec, "seed");
  if (!cJSON_IsNumber(seed) || seed->valuedouble != (double)run->seed) return NULL;
  const cJSON *config = cJSON_GetObjectItemCaseSensitive(rec, "config");
  return cJSON_Compare(config, run->config, true) ? run : NULL;
}

/* Removes from config.cluster of a copy of c what backend b does not read
 * (and the profile's name); NULL when out of memory. */
static cJSON *as_read_by(const cJSON *config, const exp_backend *b) {
  cJSON *copy = cJSON_Duplicate(config, true);
  cJSON *cluster = copy ? cJSON_GetObjectItemCaseSensitive(copy, "cluster") : NULL;
  for (cJSON *f = cluster ? cluster->child : NULL, *next; f; f = next) {
    next = f->next;
    if (strcmp(f->string, "profile") == 0 ||
        (!exp_backend_reads(b, f->string) && !exp_backend_reads_within(b, f->string))) {
      cJSON_Delete(cJSON_DetachItemViaPointer(cluster, f));
    } else if (cJSON_IsObject(f) && !exp_backend_reads(b, f->string)) {
      char path[128];
      for (cJSON *g = f->child, *gnext; g; g = gnext) {
        gnext = g->next;
        snprintf(path, sizeof path, "%s.%s", f->string, g->string);
        if (!exp_backend_reads(b, path)) cJSON_Delete(cJSON_DetachItemViaPointer(f, g));
      }
      /* Nothing the backend reads is left: as if the spec had not said it
       * (network.model alone, say, against no network at all). */
      if (!f->child) cJSON_Delete(cJSON_DetachItemViaPointer(cluster, f));
    }
  }
  return copy;
}

const exp_run *exp_record_run_as(const cJSON *rec, const exp_run_list *runs,
                                 const char *backend) {
  size_t n_backends;
  const exp_backend *table = exp_backends(&n_backends);
  const exp_backend *b = exp_backend_find(table, n_backends, backend);
  uint32_t n = record_number(rec);
  if (!b || n == 0 || n > runs->count) return NULL;
  const exp_run *run = &runs->runs[n - 1];
  const cJSON *seed = cJSON_GetObjectItemCaseSensitive(rec, "seed");
  if (!cJSON_IsNumber(seed) || seed->valuedouble != (double)run->seed) return NULL;
  cJSON *mine = as_read_by(cJSON_GetObjectItemCaseSensitive(rec, "config"), b);
  cJSON *theirs = as_read_by(run->config, b);
  bool same = mine && theirs && cJSON_Compare(mine, theirs, true);
  cJSON_Delete(mine);
  cJSON_Delete(theirs);
  return same ? run : NULL;
}

void exp_records_insert(cJSON *records, cJSON *rec) {
  uint32_t n = record_number(rec);
  const cJSON *last = records->child ? records->child->prev : NULL;
  cJSON *later = records->child;
  if (last && record_number(last) > n) /* else the usual case: runs come in order */
    while (later && record_number(later) <= n) later = later->next;
  else
    later = NULL;
  /* cJSON 1.7.15's cJSON_InsertItemInArray loses an item put in the middle
   * (it does not link it to the one before): append it, then move the
   * records that come after it behind it. */
  cJSON_AddItemToArray(records, rec);
  while (later && later != rec) {
    cJSON *next = later->next;
    cJSON_AddItemToArray(records, cJSON_DetachItemViaPointer(records, later));
    later = next;
  }
}

/* -------------------------------------------------------- writing */

int exp_jsonl_write(const char *path, const cJSON *records, char *err,
                    size_t errlen) {
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  bool ok = mem != NULL;
  /* The same lines exp_jsonl_append writes, so a rewritten or merged file
   * reads as one the runner appended to. */
  for (const cJSON *r = records ? records->child : NULL; ok && r; r = r->next)
    ok = exp_jsonl_append(mem, r) == 0;
  if (mem && fclose(mem) != 0) ok = false;
  int rc = ok ? exp_write_file_atomic(path, text, len, err, errlen) : -1;
  if (!ok) snprintf(err, errlen, "%s: out of memory", path);
  free(text);
  return rc;
}

int exp_spec_save(const char *dir, const cJSON *spec, char *err, size_t errlen) {
  char *path = exp_join_path(dir, "spec.json");
  char *text = cJSON_Print(spec);
  int rc = path && text ? exp_write_file_atomic(path, text, strlen(text), err, errlen) : -1;
  if (!path || !text) snprintf(err, errlen, "%s/spec.json: out of memory", dir);
  free(path);
  free(text);
  return rc;
}

int exp_results_finish(const char *dir, const char *experiment, const exp_results *r,
                       const char *gnuplot, FILE *out, FILE *log) {
  char err[EXP_PATH_MAX + 128];
  int rc = EXP_EXIT_OK;
  if (exp_results_write(dir, r, r->records->child ? out : NULL, err, sizeof err) != 0) {
    fprintf(log, "pslab: %s\n", err);
    rc = EXP_EXIT_FAILED;
  }
  fflush(out);
  int plots_rc = exp_plots_draw(r->plots, experiment, r->records, dir, gnuplot, log);
  return rc != EXP_EXIT_OK ? rc : plots_rc;
}

/* --------------------------------------------------------- resuming */

static bool file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* DIR/spec.json, when there is one, must be the spec being run: records of
 * another spec would be mixed with this one's. */
static int check_same_spec(const char *dir, const exp_spec *spec, exp_errors *errs) {
  char err[EXP_PATH_MAX + 128];
  char *path = exp_join_path(dir, "spec.json");
  if (!path) {
    exp_errors_addf(errs, "%s: out of memory", dir);
    return -1;
  }
  if (!file_exists(path)) {
    free(path);
    return 0;
  }
  char *text = exp_read_file(path, NULL, err, sizeof err);
  cJSON *saved = text ? cJSON_Parse(text) : NULL;
  int rc = 0;
  if (!text) {
    exp_errors_addf(errs, "%s", err);
    rc = -1;
  } else if (!cJSON_Compare(saved, exp_spec_json(spec), true)) {
    exp_errors_addf(errs, "%s: the results there are of a different spec than %s "
                    "(after --set); not resuming, nothing was changed. Run without "
                    "--resume to start afresh there, or give another --out",
                    path, exp_spec_file(spec));
    rc = -1;
  }
  cJSON_Delete(saved);
  free(text);
  free(path);
  return rc;
}

/* Moves the successful records of spec's runs out of loaded, the first of
 * each run. */
static void keep_done(cJSON *loaded, const exp_run_list *runs, exp_resumed *out) {
  cJSON *rec = loaded->child;
  while (rec) {
    cJSON *next = rec->next;
    const exp_run *run = exp_record_run(rec, runs);
    if (run && exp_record_ok(rec) && !out->done[run->run - 1]) {
      exp_records_insert(out->records, cJSON_DetachItemViaPointer(loaded, rec));
      out->done[run->run - 1] = true;
      out->kept++;
    }
    rec = next;
  }
}

int exp_resume_read(const char *dir, const exp_spec *spec, exp_resumed *out,
                    exp_errors *warnings, exp_errors *errs) {
  const exp_run_list *runs = exp_spec_runs(spec);
  *out = (exp_resumed){.records = cJSON_CreateArray(),
                       .done = calloc(runs->count + 1, sizeof *out->done)};
  char *path = exp_join_path(dir, "runs.jsonl");
  int rc = out->records && out->done && path ? 0 : -1;
  if (rc != 0) exp_errors_addf(errs, "%s: out of memory", dir);
  if (rc == 0) rc = check_same_spec(dir, spec, errs);
  if (rc == 0 && file_exists(path)) {
    cJSON *loaded = exp_jsonl_load_interrupted(path, warnings, errs);
    if (loaded) keep_done(loaded, runs, out);
    rc = loaded ? 0 : -1;
    cJSON_Delete(loaded);
  }
  free(path);
  if (rc != 0) exp_resumed_free(out);
  return rc;
}

void exp_resumed_free(exp_resumed *r) {
  cJSON_Delete(r->records);
  free(r->done);
  *r = (exp_resumed){0};
}
