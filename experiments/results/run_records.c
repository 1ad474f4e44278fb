/*
 * Results of an experiment: run records, runs.jsonl, and every result
 * derived from the records (runs.csv, summary.csv, the table).
 *
 * A record is one JSON object per run (experiment, run, repeat, seed,
 * backend, sweep, config, metrics, and error for a failed run). runs.jsonl
 * holds the records as they come, one line each, written with one write()
 * and synced to disk at once, so an interrupted experiment keeps every
 * finished run; a line the disk refused in part is cut off again, so the
 * file never ends with half a record. runs.csv, summary.csv
 * (csv.c) and the table (table.c) are derived from a list of records only,
 * so that whatever has the records (the runner after each run, a merge of
 * results directories, the tests) writes them with exp_results_write.
 */
#include "experiments/results/results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  int diverged = ok && !error ? exp_record_diverged(r) : 0;
  if (diverged) ok = cJSON_AddNumberToObject(r, "diverged_epoch", diverged) != NULL;
  cJSON_Delete(metrics);
  if (!ok) cJSON_Delete(r);
  return ok ? r : NULL;
}

bool exp_record_ok(const cJSON *rec) {
  return cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(rec, "metrics")) &&
         !cJSON_GetObjectItemCaseSensitive(rec, "error");
}

/* The first epoch (from 1) whose entry in the list is not a number: a
 * non-finite value, which JSON holds as null; 0 when every one is. */
static int first_gap(const cJSON *list) {
  int epoch = 1;
  for (const cJSON *v = cJSON_IsArray(list) ? list->child : NULL; v; v = v->next, epoch++)
    if (!cJSON_IsNumber(v)) return epoch;
  return 0;
}

int exp_metrics_diverged(const cJSON *metrics) {
  int loss = first_gap(cJSON_GetObjectItemCaseSensitive(metrics, "epoch_loss"));
  int quality = first_gap(cJSON_GetObjectItemCaseSensitive(metrics, "epoch_quality"));
  if (!loss || !quality) return loss ? loss : quality;
  return loss < quality ? loss : quality;
}

int exp_record_diverged(const cJSON *rec) {
  if (!exp_record_ok(rec)) return 0;
  return exp_metrics_diverged(cJSON_GetObjectItemCaseSensitive(rec, "metrics"));
}

bool exp_diverged_hides(const cJSON *rec, const char *metric) {
  if (!exp_record_diverged(rec)) return false;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(rec, "metrics"), metric);
  if (!v) return strcmp(metric, "time_to_quality_s") == 0;
  if (cJSON_IsNull(v)) return true;
  for (const cJSON *c = cJSON_IsArray(v) ? v->child : NULL; c; c = c->next)
    if (!cJSON_IsNumber(c)) return true;
  return false;
}

bool exp_same_point(const cJSON *a, const cJSON *b) {
  if (!a || !b) return a == b;
  return cJSON_Compare(a, b, true);
}

/* Writes len bytes at the end of fd: one write() when all goes well; after
 * a short one, a second for the rest, which either completes the line or
 * says why the disk refused it (errno). The number of bytes written. */
static size_t write_line(int fd, const char *text, size_t len, int *why) {
  size_t done = 0;
  *why = 0;
  for (int tries = 0; done < len && tries < 2;) {
    ssize_t n = write(fd, text + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    tries++;
    if (n < 0) {
      *why = errno;
      break;
    }
    done += (size_t)n;
  }
  return done;
}

int exp_jsonl_append_fd(int fd, const cJSON *record, char *err, size_t errlen) {
  size_t len;
  char *line = exp_json_text_nl(record, false, &len);
  if (!line) {
    snprintf(err, errlen, "out of memory");
    errno = ENOMEM;
    return -1;
  }
  off_t end = lseek(fd, 0, SEEK_END); /* where the last whole line ends */
  if (end < 0) {
    int why = errno;
    snprintf(err, errlen, "cannot find its end: %s", strerror(why));
    free(line);
    errno = why;
    return -1;
  }
  int why;
  size_t done = write_line(fd, line, len, &why);
  free(line);
  if (done < len) {
    /* Never leave a partial line: cut the file back to its last whole one. */
    bool cut = ftruncate(fd, end) == 0;
    snprintf(err, errlen, "wrote %zu of the record's %zu bytes (%s); %s", done, len,
             why ? strerror(why) : "short write",
             cut ? "cut back to its last whole line" : "could not cut it back to its last "
                                                       "whole line: it ends with a partial one");
    errno = why ? why : EIO;
    return -1;
  }
  if (fsync(fd) != 0 && errno != EINVAL) { /* EINVAL: a pipe or the like, nothing to sync */
    why = errno;
    snprintf(err, errlen, "cannot sync it to disk: %s", strerror(why));
    errno = why;
    return -1;
  }
  return 0;
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

/* ------------------------------------------------------ derived files */

typedef bool (*csv_writer)(FILE *f, const exp_results *r);

static bool write_runs(FILE *f, const exp_results *r) { return exp_runs_csv(f, r->records); }

/* Writes DIR/name through a temporary file renamed over it. When it cannot
 * be written, the file there is removed: it holds older records, and a
 * derived file must never disagree with runs.jsonl. */
static int write_csv(const char *dir, const char *name, csv_writer write,
                     const exp_results *r, char *err, size_t errlen) {
  char *path = exp_join_path(dir, name), *text = NULL;
  size_t len = 0;
  FILE *mem = path ? open_memstream(&text, &len) : NULL;
  if (!mem) {
    snprintf(err, errlen, "%s: out of memory", path ? path : name);
    free(path);
    return -1;
  }
  bool ok = write(mem, r);
  ok = fclose(mem) == 0 && ok;
  int rc = ok ? exp_write_file_atomic(path, text, len, err, errlen) : -1;
  if (!ok) snprintf(err, errlen, "%s: out of memory", path);
  if (rc != 0 && remove(path) == 0) {
    size_t used = strlen(err);
    snprintf(err + used, errlen - used, "; removed it rather than leave it stale "
             "against runs.jsonl");
  }
  free(text);
  free(path);
  return rc;
}

int exp_results_write(const char *dir, const exp_results *r, FILE *table, char *err,
                      size_t errlen) {
  int rc = write_csv(dir, "summary.csv", exp_summary_csv, r, err, errlen);
  char err2[EXP_PATH_MAX + 128];
  if (write_csv(dir, "runs.csv", write_runs, r, err2, sizeof err2) != 0) {
    /* Both files are named when both fail: a removed file must be said. */
    size_t used = rc == 0 ? 0 : strlen(err);
    snprintf(err + used, errlen - used, "%s%s", rc == 0 ? "" : "; and ", err2);
    rc = -1;
  }
  if (table) exp_table_print(table, r);
  return rc;
}
