/*
 * `pslab validate`'s comparison (experiments/fidelity/validate_compare.c,
 * validate_plot.c) on hand-made run records of both backends: the relative
 * error, the spread rule and its n/a, run k paired with run k, records left
 * out for runs that failed and for metrics a record lacks or holds as a
 * list, what a training run learned (quality, loss, time to quality) beside
 * its speed, the records' fields, validate.csv and validate.jsonl, the
 * table and its summary, each point's largest telemetry gap, the ranking of
 * sweep points one field apart, the scatter plot's script. No backend runs
 * (it_validate.sh runs the command).
 */
#include "tests/unit.h"

#include "experiments/experiment.h"
#include "experiments/results/results.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- helpers */

/* A run record of backend `backend` as the runner writes it; metrics NULL
 * for a failed run. */
static cJSON *record(const char *backend, uint32_t run, uint32_t repeat, const char *sweep,
                     const char *metrics) {
  char config[128];
  snprintf(config, sizeof config, "{'name': 'exp', 'backend': '%s'}", backend);
  exp_run r = {.run = run, .repeat = repeat, .seed = 10 + repeat,
               .sweep = unit_json(sweep), .config = unit_json(config)};
  cJSON *rec = exp_record_new("exp", &r, metrics ? unit_json(metrics) : NULL,
                              metrics ? NULL : "it broke");
  cJSON_Delete(r.sweep);
  cJSON_Delete(r.config);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
  return rec;
}

static void add(cJSON *list, cJSON *rec) { cJSON_AddItemToArray(list, rec); }

/* The comparison's record of kind, point or run number (the other 0) and
 * metric; NULL when there is none. */
static const cJSON *find(const cJSON *cmp, const char *kind, double point, double run,
                         const char *metric) {
  for (const cJSON *r = cmp->child; r; r = r->next) {
    if (strcmp(cJSON_GetObjectItem(r, "kind")->valuestring, kind) != 0) continue;
    if (strcmp(cJSON_GetObjectItem(r, "metric")->valuestring, metric) != 0) continue;
    if (point && cJSON_GetObjectItem(r, "point")->valuedouble != point) continue;
    if (run && cJSON_GetObjectItem(r, "run")->valuedouble != run) continue;
    return r;
  }
  return NULL;
}

static double get(const cJSON *rec, const char *key) {
  const cJSON *v = cJSON_GetObjectItem(rec, key);
  CU_ASSERT_TRUE(cJSON_IsNumber(v));
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static size_t count(const cJSON *cmp, const char *kind) {
  size_t n = 0;
  for (const cJSON *r = cmp->child; r; r = r->next)
    n += strcmp(cJSON_GetObjectItem(r, "kind")->valuestring, kind) == 0;
  return n;
}

/* Two sweep points (static, relocate), two repeats, on both backends:
 * runs 1 and 3 are static, 2 and 4 relocate. The real static runs take 3
 * and 5 s (mean 4, half-range 1); the simulated ones 4.5 and 3.5 (mean 4).
 * The real relocate runs take 2 and 2.2 s (mean 2.1, half-range 0.1); the
 * simulated ones 1 and 1 (mean 1). */
static void two_points(cJSON **sim, cJSON **real) {
  *sim = cJSON_CreateArray();
  *real = cJSON_CreateArray();
  const char *st = "{'policy': {'type': 'static'}}";
  const char *re = "{'policy': {'type': 'relocate', 'lookahead': 4}}";
  add(*sim, record("sim", 1, 0, st, "{'time_s': 4.5, 'messages': 100, 'bytes': 800, "
                                    "'local_ratio': 0.5, 'epoch_time_s': [4.5]}"));
  add(*sim, record("sim", 2, 0, re, "{'time_s': 1, 'messages': 10, 'bytes': 80}"));
  add(*sim, record("sim", 3, 1, st, "{'time_s': 3.5, 'messages': 100, 'bytes': 800, "
                                    "'local_ratio': 0.5}"));
  add(*sim, record("sim", 4, 1, re, "{'time_s': 1, 'messages': 10, 'bytes': 80}"));
  add(*real, record("real", 1, 0, st, "{'time_s': 3, 'messages': 100, 'bytes': 800, "
                                      "'local_ratio': 0.25, 'epoch_time_s': [3]}"));
  add(*real, record("real", 2, 0, re, "{'time_s': 2, 'messages': 12, 'bytes': 96}"));
  add(*real, record("real", 3, 1, st, "{'time_s': 5, 'messages': 100, 'bytes': 800, "
                                      "'local_ratio': 0.75}"));
  add(*real, record("real", 4, 1, re, "{'time_s': 2.2, 'messages': 12, 'bytes': 96}"));
}

static char *print_to_string(void (*fn)(FILE *, const cJSON *), const cJSON *cmp) {
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  fn(mem, cmp);
  fclose(mem);
  return buf;
}

static void csv_of(FILE *f, const cJSON *cmp) { CU_ASSERT_TRUE(exp_validate_csv(f, cmp)); }

/* ------------------------------------------------------------- rules */

static void test_error_and_spread_rules(void) {
  CU_ASSERT_DOUBLE_EQUAL(exp_validate_error(3, 4), -0.25, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(exp_validate_error(6, 4), 0.5, 1e-15);
  CU_ASSERT_EQUAL(exp_validate_error(0, 0), 0);
  CU_ASSERT_TRUE(isnan(exp_validate_error(1, 0)));
  /* Real runs 3 and 5: mean 4, half-range 1. */
  CU_ASSERT_EQUAL(exp_validate_within(4.5, 4, 3, 5, 2), 1);
  CU_ASSERT_EQUAL(exp_validate_within(5, 4, 3, 5, 2), 1);   /* on the edge */
  CU_ASSERT_EQUAL(exp_validate_within(3, 4, 3, 5, 2), 1);
  CU_ASSERT_EQUAL(exp_validate_within(5.01, 4, 3, 5, 2), 0);
  CU_ASSERT_EQUAL(exp_validate_within(2.9, 4, 3, 5, 2), 0);
  /* Mean ± half-range, not [min, max]: runs 1, 1, 4 (mean 2, half 1.5). */
  CU_ASSERT_EQUAL(exp_validate_within(3.9, 2, 1, 4, 3), 0);
  CU_ASSERT_EQUAL(exp_validate_within(3.5, 2, 1, 4, 3), 1);
  /* Equal real runs: the same value is within, up to rounding; another
   * one is n/a, not outside (a spread of 0 measures no noise). */
  CU_ASSERT_EQUAL(exp_validate_within(7, 7, 7, 7, 3), 1);
  CU_ASSERT_EQUAL(exp_validate_within(7 * (1 + 1e-12), 7, 7, 7, 3), 1);
  CU_ASSERT_EQUAL(exp_validate_within(7.001, 7, 7, 7, 3), -1);
  CU_ASSERT_EQUAL(exp_validate_within(1003, 1000, 1000, 1000, 3), -1); /* 0.3 % */
  /* One real run: no spread. */
  CU_ASSERT_EQUAL(exp_validate_within(4, 4, 4, 4, 1), -1);
  size_t n;
  const char *const *m = exp_validate_metrics(&n);
  const char *want[] = {"time_s",      "steps_per_s", "messages",         "bytes",
                        "local_ratio", "quality",     "loss", "time_to_quality_s",
                        "rt_p50_s", "rt_p99_s", "utilization", "queue_p50", "queue_p99",
                        "messages_per_wakeup", "messages_per_io_wakeup", "cpu_s",
                        "cpu_per_message_s", "op_wait_s", "io_cpu_s", "io_turn_s",
                        "io_run_wait_s", "worker_turn_s", "worker_run_wait_s",
                        "worker_blocked_s"};
  CU_ASSERT_EQUAL_FATAL(n, 24);
  for (size_t i = 0; i < n; i++) {
    CU_ASSERT_STRING_EQUAL(m[i], want[i]);
    CU_ASSERT_TRUE(exp_is_metric(m[i])); /* compared, never defined here */
  }
  size_t nt;
  const char *const *t = exp_validate_telemetry(&nt);
  CU_ASSERT_EQUAL(nt, 16);
  CU_ASSERT_PTR_EQUAL(t, m + 8); /* the last sixteen */
  /* The gap: |log(sim / real)|, the same both ways; counts of messages
   * waiting (offset 1) compare 0 and 1 as 1 and 2. */
  CU_ASSERT_DOUBLE_EQUAL(exp_validate_gap(2, 1, 0), log(2), 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(exp_validate_gap(1, 2, 0), log(2), 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(exp_validate_gap(0, 1, 1), log(2), 1e-15);
  CU_ASSERT_EQUAL(exp_validate_gap(0, 0, 0), 0);
  CU_ASSERT_TRUE(isinf(exp_validate_gap(0, 1, 0)));
  CU_ASSERT_TRUE(isinf(exp_validate_gap(0.5, 0, 0)));
}

/* ------------------------------------------------------- comparison */

static void test_run_records(void) {
  cJSON *sim, *real;
  two_points(&sim, &real);
  cJSON *cmp = exp_validate_compare(sim, real);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  const cJSON *r = find(cmp, "run", 0, 1, "time_s");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(r, "experiment")->valuestring, "exp");
  CU_ASSERT_EQUAL(get(r, "point"), 1);
  CU_ASSERT_EQUAL(get(r, "repeat"), 0);
  CU_ASSERT_EQUAL(get(r, "seed"), 10);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(r, "label")->valuestring, "static");
  CU_ASSERT_STRING_EQUAL(exp_path_get(r, "sweep.policy.type")->valuestring, "static");
  CU_ASSERT_EQUAL(get(r, "sim"), 4.5);
  CU_ASSERT_EQUAL(get(r, "real"), 3);
  CU_ASSERT_DOUBLE_EQUAL(get(r, "error"), 0.5, 1e-15);
  /* 4.5 against the point's real 4 ± 1. */
  CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(r, "within")));
  r = find(cmp, "run", 0, 4, "time_s");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(get(r, "point"), 2);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(r, "label")->valuestring, "relocate lookahead=4");
  CU_ASSERT_DOUBLE_EQUAL(get(r, "error"), (1 - 2.2) / 2.2, 1e-15);
  CU_ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItem(r, "within")));
  /* Metrics a record lacks (steps_per_s, local_ratio of relocate) or holds
   * as a list (epoch_time_s) have no record; the others do: 3 + 4 per
   * static run, 3 per relocate run. */
  CU_ASSERT_PTR_NULL(find(cmp, "run", 0, 1, "steps_per_s"));
  CU_ASSERT_PTR_NULL(find(cmp, "run", 0, 2, "local_ratio"));
  CU_ASSERT_PTR_NULL(find(cmp, "run", 0, 1, "epoch_time_s"));
  CU_ASSERT_EQUAL(count(cmp, "run"), 4 + 3 + 4 + 3);
  /* Runs first, in run order, metrics in the list's order. */
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cmp->child, "metric")->valuestring, "time_s");
  CU_ASSERT_EQUAL(get(cmp->child, "run"), 1);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

static void test_point_records(void) {
  cJSON *sim, *real;
  two_points(&sim, &real);
  cJSON *cmp = exp_validate_compare(sim, real);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  CU_ASSERT_EQUAL(count(cmp, "point"), 4 + 3);
  const cJSON *p = find(cmp, "point", 1, 0, "time_s");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(p, "run"));
  CU_ASSERT_EQUAL(get(p, "runs"), 2);
  CU_ASSERT_EQUAL(get(p, "compared"), 2);
  CU_ASSERT_DOUBLE_EQUAL(get(p, "sim"), 4, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(get(p, "real"), 4, 1e-15);
  CU_ASSERT_EQUAL(get(p, "real_min"), 3);
  CU_ASSERT_EQUAL(get(p, "real_max"), 5);
  CU_ASSERT_EQUAL(get(p, "real_spread"), 1);
  CU_ASSERT_DOUBLE_EQUAL(get(p, "error"), 0, 1e-15);
  CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(p, "within")));
  p = find(cmp, "point", 2, 0, "time_s");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_DOUBLE_EQUAL(get(p, "real"), 2.1, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(get(p, "real_spread"), 0.1, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(get(p, "error"), (1 - 2.1) / 2.1, 1e-12);
  CU_ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItem(p, "within")));
  p = find(cmp, "point", 1, 0, "local_ratio"); /* 0.5 against 0.5 ± 0.25 */
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_DOUBLE_EQUAL(get(p, "error"), 0, 1e-15);
  CU_ASSERT_PTR_NULL(find(cmp, "point", 2, 0, "local_ratio"));
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

/* A run that failed on one side is not compared; its point counts it in
 * "runs", not in "compared", and one real run left has no spread. */
static void test_failed_runs_and_one_repeat(void) {
  cJSON *sim, *real;
  two_points(&sim, &real);
  CU_ASSERT_TRUE(cJSON_ReplaceItemInArray(real, 2, record("real", 3, 1,
                                                         "{'policy': {'type': 'static'}}",
                                                         NULL))); /* run 3 failed */
  cJSON_DeleteItemFromArray(sim, 3); /* run 4: no sim record at all */
  CU_ASSERT_EQUAL(cJSON_GetArraySize(real), 4);
  CU_ASSERT_FALSE(exp_record_ok(cJSON_GetArrayItem(real, 2)));
  cJSON *cmp = exp_validate_compare(sim, real);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  CU_ASSERT_PTR_NULL(find(cmp, "run", 0, 3, "time_s"));
  CU_ASSERT_PTR_NULL(find(cmp, "run", 0, 4, "time_s"));
  const cJSON *p = find(cmp, "point", 1, 0, "time_s");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(get(p, "runs"), 2);
  CU_ASSERT_EQUAL(get(p, "compared"), 1);
  CU_ASSERT_EQUAL(get(p, "sim"), 4.5);
  CU_ASSERT_EQUAL(get(p, "real"), 3);
  CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(p, "real_spread")));
  CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(p, "within")));
  const cJSON *r = find(cmp, "run", 0, 1, "time_s");
  CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(r, "within")));
  CU_ASSERT_EQUAL(get(find(cmp, "point", 2, 0, "time_s"), "runs"), 2);
  char *table = print_to_string(exp_validate_print, cmp);
  CU_ASSERT_TRUE(unit_contains(table, "n/a"));
  CU_ASSERT_TRUE(unit_contains(table, "1/2"));
  free(table);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

/* An error against a real 0 is null (not a number), or 0 when sim is 0 too. */
static void test_real_zero(void) {
  cJSON *sim = cJSON_CreateArray(), *real = cJSON_CreateArray();
  add(sim, record("sim", 1, 0, "{}", "{'messages': 5, 'bytes': 0}"));
  add(real, record("real", 1, 0, "{}", "{'messages': 0, 'bytes': 0}"));
  cJSON *cmp = exp_validate_compare(sim, real);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(find(cmp, "run", 0, 1, "messages"), "error")));
  CU_ASSERT_EQUAL(get(find(cmp, "run", 0, 1, "bytes"), "error"), 0);
  /* Nothing swept: the label is the experiment's name. */
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(find(cmp, "point", 1, 0, "bytes"), "label")->valuestring,
                         "exp");
  char *table = print_to_string(exp_validate_print, cmp);
  CU_ASSERT_TRUE(unit_contains(table, "experiment"));
  free(table);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

/* Runs pair by run number, not by their place in the lists. */
static void test_pairs_by_run_number(void) {
  cJSON *sim, *real;
  two_points(&sim, &real);
  cJSON *reversed = cJSON_CreateArray();
  while (real->child) cJSON_InsertItemInArray(reversed, 0, cJSON_DetachItemFromArray(real, 0));
  cJSON *cmp = exp_validate_compare(sim, reversed);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  CU_ASSERT_EQUAL(get(find(cmp, "run", 0, 1, "time_s"), "real"), 3);
  CU_ASSERT_EQUAL(get(find(cmp, "run", 0, 4, "time_s"), "real"), 2.2);
  CU_ASSERT_EQUAL(get(find(cmp, "point", 1, 0, "time_s"), "real_max"), 5);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
  cJSON_Delete(reversed);
}

/* --------------------------------------------------------- formats */

static void test_csv(void) {
  cJSON *sim, *real;
  two_points(&sim, &real);
  cJSON *cmp = exp_validate_compare(sim, real);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  char *csv = print_to_string(csv_of, cmp);
  char *line = strtok(csv, "\n");
  CU_ASSERT_STRING_EQUAL(line, "kind,point,run,repeat,seed,policy,label,metric,runs,compared,"
                               "sim,real,real_min,real_max,real_spread,error,within");
  size_t rows = 0;
  bool run1 = false, point1 = false;
  while ((line = strtok(NULL, "\n"))) {
    rows++;
    run1 = run1 || strcmp(line, "run,1,1,0,10,\"{\"\"type\"\":\"\"static\"\"}\",static,time_s,,,"
                                "4.5,3,,,,0.5,yes") == 0;
    point1 = point1 || strcmp(line, "point,1,,,,\"{\"\"type\"\":\"\"static\"\"}\",static,time_s,"
                                    "2,2,4,4,3,5,1,0,yes") == 0;
  }
  CU_ASSERT_EQUAL(rows, count(cmp, "run") + count(cmp, "point")); /* the ranking: no row */
  CU_ASSERT_EQUAL(count(cmp, "ranking"), 1);
  CU_ASSERT_TRUE(run1);
  CU_ASSERT_TRUE(point1);
  free(csv);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

/* validate.jsonl: one record a line, read back as it was written. */
static void test_jsonl(void) {
  cJSON *sim, *real;
  two_points(&sim, &real);
  cJSON *cmp = exp_validate_compare(sim, real);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  char *dir = unit_temp_dir(), path[1024], err[256];
  snprintf(path, sizeof path, "%s/validate.jsonl", dir);
  CU_ASSERT_EQUAL(exp_jsonl_write(path, cmp, err, sizeof err), 0);
  exp_errors e;
  exp_errors_init(&e);
  cJSON *back = exp_jsonl_load(path, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(back);
  CU_ASSERT_TRUE(cJSON_Compare(back, cmp, true));
  char *text = unit_slurp(dir, "validate.jsonl");
  size_t lines = 0;
  for (const char *s = text; s && *s; s++) lines += *s == '\n';
  CU_ASSERT_EQUAL(lines, (size_t)cJSON_GetArraySize(cmp));
  CU_ASSERT_TRUE(unit_contains(text, "{\"kind\":\"run\",\"experiment\":\"exp\",\"point\":1,"
                                     "\"run\":1,\"repeat\":0,\"seed\":10,\"label\":\"static\""));
  CU_ASSERT_TRUE(unit_contains(text, "\"kind\":\"point\""));
  free(text);
  exp_errors_free(&e);
  cJSON_Delete(back);
  unit_remove_tree(dir);
  free(dir);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

/* Splits text into its lines (in place); at most max. */
static size_t lines_of(char *text, char **lines, size_t max) {
  size_t n = 0;
  for (char *s = text; s && *s && n < max;) {
    lines[n++] = s;
    s += strcspn(s, "\n");
    if (*s) *s++ = '\0';
  }
  return n;
}

static void test_table(void) {
  cJSON *sim, *real;
  two_points(&sim, &real);
  cJSON *cmp = exp_validate_compare(sim, real);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  char *table = print_to_string(exp_validate_print, cmp);
  char *lines[64];
  size_t n = lines_of(table, lines, 64);
  CU_ASSERT_FATAL(n > 12);
  /* The label column as `pslab run` labels the points. */
  CU_ASSERT_TRUE(strncmp(lines[0], "policy", 6) == 0);
  for (const char *w = "runs metric sim real error within"; *w;) {
    char word[16];
    size_t len = strcspn(w, " ");
    snprintf(word, sizeof word, "%.*s", (int)len, w);
    CU_ASSERT_TRUE(unit_contains(lines[0], word));
    w += len + (w[len] == ' ');
  }
  /* Point 1's row: its label and runs on the first line, a line per
   * metric it has. */
  CU_ASSERT_TRUE(strncmp(lines[2], "static ", 7) == 0);
  CU_ASSERT_TRUE(unit_contains(lines[2], "2/2"));
  CU_ASSERT_TRUE(unit_contains(lines[2], "time_s"));
  CU_ASSERT_TRUE(unit_contains(lines[2], "4 s"));
  CU_ASSERT_TRUE(unit_contains(lines[2], "4 \xc2\xb1 1 s"));
  CU_ASSERT_TRUE(unit_contains(lines[2], "+0.0 %"));
  CU_ASSERT_TRUE(unit_contains(lines[2], "yes"));
  CU_ASSERT_TRUE(unit_contains(lines[3], "messages"));
  CU_ASSERT_TRUE(lines[3][0] == ' ');
  CU_ASSERT_TRUE(strncmp(lines[6], "relocate", 8) == 0);
  CU_ASSERT_TRUE(unit_contains(lines[6], "-52.4 %"));
  CU_ASSERT_TRUE(unit_contains(lines[6], "no"));
  /* The summary: a row per metric, median and max |error|, within. */
  size_t s = 0;
  while (s < n && strncmp(lines[s], "metric", 6) != 0) s++;
  CU_ASSERT_FATAL(s + 5 < n);
  CU_ASSERT_TRUE(unit_contains(lines[s], "median |error|"));
  CU_ASSERT_TRUE(strncmp(lines[s + 2], "time_s", 6) == 0);
  /* |error| 0 and 52.4 %: median 26.2 %, max 52.4 %; within at 1 of 2. */
  CU_ASSERT_TRUE(unit_contains(lines[s + 2], "26.2 %"));
  CU_ASSERT_TRUE(unit_contains(lines[s + 2], "52.4 %"));
  CU_ASSERT_TRUE(unit_contains(lines[s + 2], "1 of 2"));
  free(table);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

/* What a training run learned is compared as its speed is: one point, two
 * repeats. quality: sim 0.9 and 0.94 (mean 0.92) against real 0.9 and 1
 * (0.95 ± 0.05), within. loss: sim 0.5 against two real runs of 0.4 (a
 * spread of 0: n/a, the error alone). time_to_quality_s: the second real
 * run never reached the target, so only run 1 is compared. */
static void test_quality_and_loss(void) {
  cJSON *sim = cJSON_CreateArray(), *real = cJSON_CreateArray();
  add(sim, record("sim", 1, 0, "{}", "{'time_s': 2, 'quality': 0.9, 'loss': 0.5, "
                                     "'time_to_quality_s': 1.5, 'epoch_loss': [0.7, 0.5]}"));
  add(sim, record("sim", 2, 1, "{}", "{'time_s': 2, 'quality': 0.94, 'loss': 0.5, "
                                     "'time_to_quality_s': 1.5}"));
  add(real, record("real", 1, 0, "{}", "{'time_s': 2, 'quality': 0.9, 'loss': 0.4, "
                                       "'time_to_quality_s': 1, 'epoch_loss': [0.6, 0.4]}"));
  add(real, record("real", 2, 1, "{}", "{'time_s': 2, 'quality': 1, 'loss': 0.4}"));
  cJSON *cmp = exp_validate_compare(sim, real);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  const cJSON *p = find(cmp, "point", 1, 0, "quality");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(get(p, "compared"), 2);
  CU_ASSERT_DOUBLE_EQUAL(get(p, "sim"), 0.92, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(get(p, "real"), 0.95, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(get(p, "real_spread"), 0.05, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(get(p, "error"), (0.92 - 0.95) / 0.95, 1e-12);
  CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(p, "within")));
  const cJSON *r = find(cmp, "run", 0, 2, "quality"); /* 0.94 against 0.95 ± 0.05 */
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_DOUBLE_EQUAL(get(r, "error"), -0.06, 1e-12);
  CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(r, "within")));
  p = find(cmp, "point", 1, 0, "loss");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_DOUBLE_EQUAL(get(p, "error"), 0.25, 1e-12);
  CU_ASSERT_EQUAL(get(p, "real_spread"), 0);
  CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(p, "within")));
  CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(find(cmp, "run", 0, 1, "loss"), "within")));
  CU_ASSERT_PTR_NOT_NULL(find(cmp, "run", 0, 1, "time_to_quality_s"));
  CU_ASSERT_PTR_NULL(find(cmp, "run", 0, 2, "time_to_quality_s"));
  p = find(cmp, "point", 1, 0, "time_to_quality_s");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(get(p, "runs"), 2);
  CU_ASSERT_EQUAL(get(p, "compared"), 1);
  CU_ASSERT_DOUBLE_EQUAL(get(p, "error"), 0.5, 1e-12);
  CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(p, "within")));
  CU_ASSERT_PTR_NULL(find(cmp, "run", 0, 1, "epoch_loss")); /* a list: not compared */
  CU_ASSERT_EQUAL(count(cmp, "run"), 2 + 2 + 2 + 1);
  CU_ASSERT_EQUAL(count(cmp, "point"), 4);
  /* The summary's rows, after time_s: quality within at 1 of 1, loss and
   * time to quality not judged. */
  char *table = print_to_string(exp_validate_print, cmp);
  char *lines[64];
  size_t n = lines_of(table, lines, 64), s = 0;
  while (s < n && strncmp(lines[s], "metric", 6) != 0) s++;
  CU_ASSERT_FATAL(s + 5 < n);
  CU_ASSERT_TRUE(strncmp(lines[s + 2], "time_s", 6) == 0);
  CU_ASSERT_TRUE(strncmp(lines[s + 3], "quality ", 8) == 0);
  CU_ASSERT_TRUE(unit_contains(lines[s + 3], "3.2 %"));
  CU_ASSERT_TRUE(unit_contains(lines[s + 3], "1 of 1"));
  CU_ASSERT_TRUE(strncmp(lines[s + 4], "loss ", 5) == 0);
  CU_ASSERT_TRUE(unit_contains(lines[s + 4], "25.0 %"));
  CU_ASSERT_TRUE(unit_contains(lines[s + 4], "n/a"));
  CU_ASSERT_TRUE(strncmp(lines[s + 5], "time_to_quality_s", 17) == 0);
  CU_ASSERT_TRUE(unit_contains(lines[s + 5], "50.0 %"));
  free(table);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

/* Runs without real math have no quality or loss: nothing of them is
 * compared or shown, and a metric only one side has is left out too. */
static void test_no_quality(void) {
  cJSON *sim, *real;
  two_points(&sim, &real);
  cJSON *extra = unit_json("{'quality': 0.8, 'loss': 0.3}");
  cJSON *m = cJSON_GetObjectItem(cJSON_GetArrayItem(sim, 0), "metrics");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_TRUE(cJSON_AddItemToObject(m, "quality", cJSON_DetachItemFromObject(extra, "quality")));
  CU_ASSERT_TRUE(cJSON_AddItemToObject(m, "loss", cJSON_DetachItemFromObject(extra, "loss")));
  cJSON_Delete(extra);
  cJSON *cmp = exp_validate_compare(sim, real);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  const char *learned[] = {"quality", "loss", "time_to_quality_s"};
  for (size_t i = 0; i < 3; i++) {
    CU_ASSERT_PTR_NULL(find(cmp, "run", 0, 1, learned[i]));
    CU_ASSERT_PTR_NULL(find(cmp, "point", 1, 0, learned[i]));
  }
  CU_ASSERT_EQUAL(count(cmp, "run"), 4 + 3 + 4 + 3);
  char *table = print_to_string(exp_validate_print, cmp);
  CU_ASSERT_FALSE(unit_contains(table, "quality"));
  CU_ASSERT_FALSE(unit_contains(table, "loss"));
  free(table);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

static void test_nothing_to_compare(void) {
  cJSON *sim = cJSON_CreateArray(), *real = cJSON_CreateArray();
  add(sim, record("sim", 1, 0, "{}", NULL));
  add(real, record("real", 1, 0, "{}", "{'time_s': 1}"));
  cJSON *cmp = exp_validate_compare(sim, real);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cmp), 0);
  char *table = print_to_string(exp_validate_print, cmp);
  CU_ASSERT_TRUE(unit_contains(table, "nothing to compare"));
  free(table);
  char err[256] = "";
  CU_ASSERT_PTR_NULL(exp_validate_plot_script(cmp, "exp", err, sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "no run"));
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

/* ---------------------------------------------------------- ranking */

/* Four sweep points of two swept fields, two repeats: A static, B relocate,
 * C nups at 2 nodes, D static at 4 nodes (its second real run failed: one
 * real run). Real time_s (mean ± half-range) and simulated means:
 *   A 10, 12 (11 ± 1), sim 5      B 4, 4.4 (4.2 ± 0.2), sim 2
 *   C 11.5, 12.5 (12 ± 0.5), sim 1   D 20, sim 9.
 * The pairs one field apart: A-B (real apart, sim agrees), A-C (real
 * within 1 + 0.5: not counted), B-C (real apart, sim the other way: B is
 * simulated slower), A-D (D has one real run: not judged). B-D and C-D
 * differ in two fields: no pair. Every real messages count is 1000 and
 * every simulated one 1003: an error of 0.3 % against a spread of 0. */
static void ranked_points(cJSON **sim, cJSON **real) {
  static const char *const sweeps[] = {
      "{'policy': {'type': 'static'}, 'cluster.nodes': 2}",
      "{'policy': {'type': 'relocate'}, 'cluster.nodes': 2}",
      "{'policy': {'type': 'nups'}, 'cluster.nodes': 2}",
      "{'policy': {'type': 'static'}, 'cluster.nodes': 4}"};
  static const double real_t[2][4] = {{10, 4, 11.5, 20}, {12, 4.4, 12.5, 0}};
  static const double sim_t[4] = {5, 2, 1, 9};
  *sim = cJSON_CreateArray();
  *real = cJSON_CreateArray();
  for (uint32_t rep = 0; rep < 2; rep++)
    for (uint32_t k = 0; k < 4; k++) {
      char m[96];
      uint32_t run = rep * 4 + k + 1;
      snprintf(m, sizeof m, "{'time_s': %g, 'messages': 1003}", sim_t[k]);
      add(*sim, record("sim", run, rep, sweeps[k], m));
      snprintf(m, sizeof m, "{'time_s': %g, 'messages': 1000}", real_t[rep][k]);
      add(*real, record("real", run, rep, sweeps[k], rep && k == 3 ? NULL : m));
    }
}

static const cJSON *ranking_of(const cJSON *cmp) {
  for (const cJSON *r = cmp->child; r; r = r->next)
    if (strcmp(cJSON_GetObjectItem(r, "kind")->valuestring, "ranking") == 0) return r;
  return NULL;
}

static void test_ranking(void) {
  cJSON *sim, *real;
  ranked_points(&sim, &real);
  cJSON *cmp = exp_validate_compare(sim, real);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  const cJSON *k = ranking_of(cmp);
  CU_ASSERT_PTR_NOT_NULL_FATAL(k);
  CU_ASSERT_EQUAL(cmp->child->prev, k); /* the last record */
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(k, "metric")->valuestring, "time_s");
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(k, "experiment")->valuestring, "exp");
  CU_ASSERT_EQUAL(get(k, "pairs"), 4);
  CU_ASSERT_EQUAL(get(k, "counted"), 2);
  CU_ASSERT_EQUAL(get(k, "agree"), 1);
  CU_ASSERT_EQUAL(get(k, "disagree"), 1);
  CU_ASSERT_EQUAL(get(k, "within_spread"), 1);
  CU_ASSERT_EQUAL(get(k, "not_judged"), 1);
  const cJSON *d = cJSON_GetObjectItem(k, "disagreeing");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(d), 1);
  const cJSON *a = cJSON_GetArrayItem(d->child, 0), *b = cJSON_GetArrayItem(d->child, 1);
  CU_ASSERT_EQUAL(get(a, "point"), 2);
  CU_ASSERT_EQUAL(get(a, "sim"), 2);
  CU_ASSERT_DOUBLE_EQUAL(get(a, "real"), 4.2, 1e-12);
  CU_ASSERT_EQUAL(get(b, "point"), 3);
  CU_ASSERT_EQUAL(get(b, "sim"), 1);
  CU_ASSERT_EQUAL(get(b, "real"), 12);
  CU_ASSERT_TRUE(unit_contains(cJSON_GetObjectItem(a, "label")->valuestring, "relocate"));
  char *table = print_to_string(exp_validate_print, cmp);
  CU_ASSERT_TRUE(unit_contains(table, "\nranking: 1 of 2 pairs agree (1 pair within the real "
                                      "spread not counted, 1 pair with fewer than two real "
                                      "runs not judged)\n"));
  CU_ASSERT_TRUE(unit_contains(table, "  disagree: "));
  CU_ASSERT_TRUE(unit_contains(table, "(sim 2 s, real 4.2 s) vs "));
  CU_ASSERT_TRUE(unit_contains(table, "(sim 1 s, real 12 s)\n"));
  free(table);
  /* validate.jsonl holds it as a record of its own. */
  char *dir = unit_temp_dir(), path[1024], err[256];
  snprintf(path, sizeof path, "%s/validate.jsonl", dir);
  CU_ASSERT_EQUAL(exp_jsonl_write(path, cmp, err, sizeof err), 0);
  char *text = unit_slurp(dir, "validate.jsonl");
  CU_ASSERT_TRUE(unit_contains(text, "\n{\"kind\":\"ranking\",\"experiment\":\"exp\","
                                     "\"metric\":\"time_s\",\"pairs\":4,\"counted\":2,"
                                     "\"agree\":1,\"disagree\":1,\"within_spread\":1,"
                                     "\"not_judged\":1,\"disagreeing\":[[{\"point\":2,"));
  free(text);
  unit_remove_tree(dir);
  free(dir);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

/* Every pair agrees: no parenthesis, no disagreeing pair; no sweep at all:
 * no pair. */
static void test_ranking_all_agree_and_no_pairs(void) {
  cJSON *sim, *real;
  two_points(&sim, &real); /* static 4 ± 1 vs relocate 2.1 ± 0.1; sim 4 vs 1 */
  cJSON *cmp = exp_validate_compare(sim, real);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  const cJSON *k = ranking_of(cmp);
  CU_ASSERT_PTR_NOT_NULL_FATAL(k);
  CU_ASSERT_EQUAL(get(k, "agree"), 1);
  CU_ASSERT_EQUAL(get(k, "counted"), 1);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(k, "disagreeing")), 0);
  char *table = print_to_string(exp_validate_print, cmp);
  CU_ASSERT_TRUE(unit_contains(table, "\nranking: 1 of 1 pairs agree\n"));
  CU_ASSERT_FALSE(unit_contains(table, "disagree"));
  free(table);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
  sim = cJSON_CreateArray();
  real = cJSON_CreateArray();
  add(sim, record("sim", 1, 0, "{}", "{'time_s': 1}"));
  add(real, record("real", 1, 0, "{}", "{'time_s': 2}"));
  cmp = exp_validate_compare(sim, real);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  CU_ASSERT_EQUAL(get(ranking_of(cmp), "pairs"), 0);
  table = print_to_string(exp_validate_print, cmp);
  CU_ASSERT_TRUE(unit_contains(table, "ranking: no two sweep points differ in exactly one"));
  free(table);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

/* Real runs that agree exactly (messages 1000, 1000): a simulated 1003 is
 * not outside their spread of 0 but n/a, its error 0.3 %. */
static void test_zero_spread(void) {
  cJSON *sim, *real;
  ranked_points(&sim, &real);
  cJSON *cmp = exp_validate_compare(sim, real);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  const cJSON *p = find(cmp, "point", 1, 0, "messages");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(get(p, "real_spread"), 0);
  CU_ASSERT_DOUBLE_EQUAL(get(p, "error"), 0.003, 1e-12);
  CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(p, "within")));
  CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(find(cmp, "run", 0, 1, "messages"), "within")));
  char *table = print_to_string(exp_validate_print, cmp);
  char *lines[64];
  size_t n = lines_of(table, lines, 64), s = 0;
  while (s < n && strncmp(lines[s], "messages", 8) != 0) s++;
  CU_ASSERT_FATAL(s < n);
  CU_ASSERT_TRUE(unit_contains(lines[s], "0.3 %")); /* median and max |error| */
  CU_ASSERT_TRUE(unit_contains(lines[s], "n/a"));   /* no point judged */
  free(table);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

/* ------------------------------------------------------ largest gap */

/* Two points with telemetry, one run each. static: rt_p50_s 3x too slow
 * (300 against 100 us: log 3), queue_p50 0 against 1 (as 1 + the count: a
 * factor of 2, not an infinite one), cpu_per_message_s 1.5x, utilization 0
 * on both (no gap): rt_p50_s is its largest gap. relocate: cpu_s 0 against
 * 0.5 (a cost the simulator does not charge: an infinite gap) beats
 * rt_p50_s 4x too fast. */
static void test_largest_gap(void) {
  cJSON *sim = cJSON_CreateArray(), *real = cJSON_CreateArray();
  const char *st = "{'policy': {'type': 'static'}}";
  const char *re = "{'policy': {'type': 'relocate', 'lookahead': 4}}";
  add(sim, record("sim", 1, 0, st, "{'time_s': 2, 'rt_p50_s': 3e-4, 'queue_p50': 0, "
                                   "'cpu_per_message_s': 3e-5, 'utilization': 0}"));
  add(real, record("real", 1, 0, st, "{'time_s': 1, 'rt_p50_s': 1e-4, 'queue_p50': 1, "
                                     "'cpu_per_message_s': 2e-5, 'utilization': 0}"));
  add(sim, record("sim", 2, 0, re, "{'time_s': 1, 'rt_p50_s': 1e-4, 'cpu_s': 0}"));
  add(real, record("real", 2, 0, re, "{'time_s': 1, 'rt_p50_s': 4e-4, 'cpu_s': 0.5}"));
  cJSON *cmp = exp_validate_compare(sim, real);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cmp);
  CU_ASSERT_EQUAL(count(cmp, "gap"), 2);
  const cJSON *g1 = find(cmp, "gap", 1, 0, "rt_p50_s");
  CU_ASSERT_PTR_NOT_NULL_FATAL(g1);
  CU_ASSERT_DOUBLE_EQUAL(get(g1, "gap"), log(3), 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(get(g1, "error"), 2, 1e-12);
  CU_ASSERT_EQUAL(get(g1, "sim"), 3e-4);
  CU_ASSERT_EQUAL(get(g1, "real"), 1e-4);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(g1, "label")->valuestring, "static");
  const cJSON *g2 = find(cmp, "gap", 2, 0, "cpu_s");
  CU_ASSERT_PTR_NOT_NULL_FATAL(g2);
  CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(g2, "gap"))); /* infinite */
  CU_ASSERT_DOUBLE_EQUAL(get(g2, "error"), -1, 1e-15);
  /* Gap records come after the points, before the ranking, and have no
   * CSV row. */
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(cmp, cJSON_GetArraySize(cmp) - 1),
                                             "kind")->valuestring, "ranking");
  char *csv = print_to_string(csv_of, cmp);
  CU_ASSERT_FALSE(unit_contains(csv, "gap"));
  free(csv);
  /* The table: no line per telemetry metric in a point's row, a line per
   * point for its largest gap, the telemetry in the summary. */
  char *table = print_to_string(exp_validate_print, cmp);
  CU_ASSERT_TRUE(unit_contains(table, "\n  static                largest gap: rt_p50_s +200.0 % "
                                      "(sim 300 us, real 100 us)\n"));
  CU_ASSERT_TRUE(unit_contains(table, "\n  relocate lookahead=4  largest gap: cpu_s -100.0 % "
                                      "(sim 0 s, real 500 ms)\n"));
  char *lines[64];
  size_t n = lines_of(table, lines, 64), rt = 0, summary = 0;
  for (size_t i = 0; i < n; i++) {
    rt += unit_contains(lines[i], "rt_p50_s");
    summary += strncmp(lines[i], "rt_p50_s ", 9) == 0 || strncmp(lines[i], "cpu_s ", 6) == 0;
  }
  CU_ASSERT_EQUAL(rt, 2);      /* point 1's gap line and the summary's row */
  CU_ASSERT_EQUAL(summary, 2); /* rt_p50_s and cpu_s */
  free(table);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

/* ------------------------------------------------------------- plot */

static void test_plot_script(void) {
  cJSON *sim, *real;
  two_points(&sim, &real);
  cJSON *cmp = exp_validate_compare(sim, real);
  char err[256];
  char *gp = exp_validate_plot_script(cmp, "exp", err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(gp);
  CU_ASSERT_TRUE(unit_contains(gp, "set output \"validate.svg\""));
  CU_ASSERT_TRUE(unit_contains(gp, "set output \"validate.png\""));
  CU_ASSERT_TRUE(unit_contains(gp, "set xlabel \"simulated time (s)\""));
  CU_ASSERT_TRUE(unit_contains(gp, "set ylabel \"real time (s)\""));
  CU_ASSERT_TRUE(unit_contains(gp, "plot x with lines"));      /* y = x */
  CU_ASSERT_TRUE(unit_contains(gp, "title \"static\""));        /* a colour per point */
  CU_ASSERT_TRUE(unit_contains(gp, "title \"relocate lookahead=4\""));
  CU_ASSERT_TRUE(unit_contains(gp, "4.5 3 1\n"));                /* sim, real, run */
  CU_ASSERT_TRUE(unit_contains(gp, "1 2.2 4\n"));
  CU_ASSERT_FALSE(unit_contains(gp, "logscale")); /* 1 to 5 s: within a decade */
  free(gp);
  cJSON_Delete(cmp);
  /* Times from 1 ms to 5 s span more than a decade: log axes. */
  cJSON *fast = cJSON_GetObjectItem(cJSON_GetArrayItem(sim, 1), "metrics");
  cJSON_ReplaceItemInObject(fast, "time_s", cJSON_CreateNumber(0.001));
  cmp = exp_validate_compare(sim, real);
  gp = exp_validate_plot_script(cmp, "exp", err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(gp);
  CU_ASSERT_TRUE(unit_contains(gp, "set logscale xy"));
  CU_ASSERT_TRUE(unit_contains(gp, "set xtics ("));
  free(gp);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

PSLAB_SUITE("validate",
            {"error and spread rules", test_error_and_spread_rules},
            {"run records", test_run_records},
            {"point records", test_point_records},
            {"failed runs, one repeat", test_failed_runs_and_one_repeat},
            {"real zero", test_real_zero},
            {"pairs by run number", test_pairs_by_run_number},
            {"validate.csv", test_csv},
            {"validate.jsonl", test_jsonl},
            {"table and summary", test_table},
            {"quality, loss, time to quality", test_quality_and_loss},
            {"no quality: not compared", test_no_quality},
            {"nothing to compare", test_nothing_to_compare},
            {"ranking", test_ranking},
            {"ranking: all agree, no pairs", test_ranking_all_agree_and_no_pairs},
            {"zero real spread", test_zero_spread},
            {"largest gap", test_largest_gap},
            {"plot script", test_plot_script})
