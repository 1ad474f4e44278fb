/*
 * Results of an experiment: run records, runs.jsonl, summary.csv and the
 * table printed at the end.
 *
 * A record is one JSON object per run (experiment, run, repeat, seed,
 * backend, sweep, config, metrics, and error for a failed run). runs.jsonl
 * holds the records as they come, one line each, flushed at once, so an
 * interrupted experiment keeps every finished run. summary.csv (and the
 * table, table.c) are derived from a list of records only: `pslab plot` and
 * the tests use them without running anything.
 */
#include "experiments/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const summary_metrics[] = {
    "time_s", "steps", "steps_per_s", "accesses", "local_ratio", "messages",
    "bytes", "relocations", "replica_syncs", "wall_s", NULL};

const char *const *exp_summary_metrics(void) { return summary_metrics; }

static bool in_list(const char *const *list, const char *name) {
  for (size_t i = 0; list[i]; i++)
    if (strcmp(list[i], name) == 0) return true;
  return false;
}

bool exp_is_metric(const char *name) { return run_metric_find(name) != NULL; }

/* ---------------------------------------------------------- records */

cJSON *exp_record_new(const char *experiment, const exp_run *run,
                      cJSON *metrics, const char *error) {
  cJSON *r = cJSON_CreateObject();
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(run->config, "backend");
  bool ok = r && cJSON_AddStringToObject(r, "experiment", experiment) &&
            cJSON_AddNumberToObject(r, "run", run->run) &&
            cJSON_AddNumberToObject(r, "repeat", run->repeat) &&
            cJSON_AddNumberToObject(r, "seed", (double)run->seed) &&
            cJSON_AddStringToObject(r, "backend",
                                    cJSON_IsString(b) ? b->valuestring : "sim");
  ok = ok && cJSON_AddItemToObject(r, "sweep", cJSON_Duplicate(run->sweep, true));
  ok = ok && cJSON_AddItemToObject(r, "config", cJSON_Duplicate(run->config, true));
  if (ok && metrics) {
    ok = cJSON_AddItemToObject(r, "metrics", metrics);
    metrics = NULL;
  } else if (ok) {
    ok = cJSON_AddNullToObject(r, "metrics") != NULL;
  }
  if (ok && error) ok = cJSON_AddStringToObject(r, "error", error) != NULL;
  cJSON_Delete(metrics);
  if (!ok) cJSON_Delete(r);
  return ok ? r : NULL;
}

int exp_jsonl_append(FILE *f, const cJSON *record) {
  char *text = cJSON_PrintUnformatted(record);
  if (!text) return -1;
  bool ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF && fflush(f) == 0;
  free(text);
  return ok ? 0 : -1;
}

static bool load_line(cJSON *records, const char *line, size_t len,
                      const char *path, size_t lineno, exp_errors *errs) {
  if (strspn(line, " \t\r") >= len) return true;
  cJSON *r = cJSON_ParseWithLength(line, len);
  if (!cJSON_IsObject(r)) {
    exp_errors_addf(errs, "%s:%zu: expected a run record (a JSON object), found %s",
                    path, lineno, r ? "another JSON value" : "invalid JSON");
    cJSON_Delete(r);
    return false;
  }
  cJSON_AddItemToArray(records, r);
  return true;
}

/* Whether the text from s is one last line without '\n' that is not a
 * record: what a write cut short by a kill leaves. */
static bool cut_short(const char *s, size_t len) {
  if (s[len] != '\0' || strspn(s, " \t\r") >= len) return false;
  cJSON *r = cJSON_ParseWithLength(s, len);
  bool record = cJSON_IsObject(r);
  cJSON_Delete(r);
  return !record;
}

cJSON *exp_jsonl_load_interrupted(const char *path, exp_errors *warnings,
                                  exp_errors *errs) {
  char err[EXP_PATH_MAX + 128];
  char *text = exp_read_file(path, NULL, err, sizeof err);
  if (!text) {
    exp_errors_addf(errs, "%s", err);
    return NULL;
  }
  cJSON *records = cJSON_CreateArray();
  bool ok = records != NULL;
  size_t lineno = 1;
  for (const char *s = text; ok && *s; lineno++) {
    size_t len = strcspn(s, "\n");
    if (warnings && cut_short(s, len))
      exp_errors_addf(warnings, "%s:%zu: the last line is cut short (no newline, not a "
                      "whole record: a write was interrupted); left out", path, lineno);
    else
      ok = load_line(records, s, len, path, lineno, errs);
    s += len + (s[len] == '\n');
  }
  free(text);
  if (!ok) cJSON_Delete(records);
  return ok ? records : NULL;
}

cJSON *exp_jsonl_load(const char *path, exp_errors *errs) {
  return exp_jsonl_load_interrupted(path, NULL, errs);
}

/* -------------------------------------------------------- columns */

/* Names in first-appearance order, without duplicates. */
typedef struct {
  const char **names;
  size_t count;
} name_list;

static void name_add(name_list *l, const char *name) {
  for (size_t i = 0; i < l->count; i++)
    if (strcmp(l->names[i], name) == 0) return;
  const char **n = realloc(l->names, (l->count + 1) * sizeof *n);
  if (!n) return;
  l->names = n;
  l->names[l->count++] = name;
}

static name_list sweep_paths(const cJSON *records) {
  name_list l = {0};
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "sweep");
    for (const cJSON *c = cJSON_IsObject(s) ? s->child : NULL; c; c = c->next)
      name_add(&l, c->string);
  }
  return l;
}

/* Scalar metrics beyond the summary list (list-valued ones are left out). */
static name_list extra_metrics(const cJSON *records) {
  name_list l = {0};
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metrics");
    for (const cJSON *c = cJSON_IsObject(m) ? m->child : NULL; c; c = c->next)
      if (cJSON_IsNumber(c) && !in_list(summary_metrics, c->string))
        name_add(&l, c->string);
  }
  return l;
}

/* -------------------------------------------------------------- CSV */

static void csv_field(FILE *f, const char *s) {
  if (!s[strcspn(s, ",\"\r\n")]) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* Strings bare, numbers exact, lists and objects as compact JSON. */
static void csv_value(FILE *f, const cJSON *v) {
  char num[40];
  if (!v || cJSON_IsNull(v)) return;
  if (cJSON_IsString(v)) {
    csv_field(f, v->valuestring);
  } else if (cJSON_IsNumber(v)) {
    exp_format_number(v->valuedouble, num, sizeof num);
    fputs(num, f);
  } else {
    char *text = cJSON_PrintUnformatted(v);
    if (text) csv_field(f, text);
    free(text);
  }
}

static void csv_row(FILE *f, const cJSON *r, const name_list *paths,
                    const name_list *extra) {
  const cJSON *sweep = cJSON_GetObjectItemCaseSensitive(r, "sweep");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metrics");
  csv_value(f, cJSON_GetObjectItemCaseSensitive(r, "run"));
  fputc(',', f);
  csv_value(f, cJSON_GetObjectItemCaseSensitive(r, "repeat"));
  fputc(',', f);
  csv_value(f, cJSON_GetObjectItemCaseSensitive(r, "seed"));
  for (size_t i = 0; i < paths->count; i++) {
    fputc(',', f);
    csv_value(f, cJSON_GetObjectItemCaseSensitive(sweep, paths->names[i]));
  }
  for (size_t i = 0; summary_metrics[i]; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, summary_metrics[i]);
    fputc(',', f);
    if (cJSON_IsNumber(v)) csv_value(f, v);
  }
  for (size_t i = 0; i < extra->count; i++) {
    fputc(',', f);
    csv_value(f, cJSON_GetObjectItemCaseSensitive(m, extra->names[i]));
  }
  fputc(',', f);
  csv_value(f, cJSON_GetObjectItemCaseSensitive(r, "error"));
  fputc('\n', f);
}

void exp_summary_csv(FILE *f, const cJSON *records) {
  name_list paths = sweep_paths(records), extra = extra_metrics(records);
  fputs("run,repeat,seed", f);
  for (size_t i = 0; i < paths.count; i++) {
    fputc(',', f);
    csv_field(f, paths.names[i]);
  }
  for (size_t i = 0; summary_metrics[i]; i++) fprintf(f, ",%s", summary_metrics[i]);
  for (size_t i = 0; i < extra.count; i++) {
    fputc(',', f);
    csv_field(f, extra.names[i]);
  }
  fputs(",error\n", f);
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next)
    csv_row(f, r, &paths, &extra);
  free(paths.names);
  free(extra.names);
}

int exp_summary_write(const char *path, const cJSON *records, char *err,
                      size_t errlen) {
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  if (!mem) {
    snprintf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  exp_summary_csv(mem, records);
  bool ok = fclose(mem) == 0;
  int rc = ok ? exp_write_file_atomic(path, text, len, err, errlen) : -1;
  if (!ok) snprintf(err, errlen, "%s: out of memory", path);
  free(text);
  return rc;
}
