/*
 * Results (experiments/results/, plots/ and runner/run_experiment.c): run
 * records and runs.jsonl, runs.csv and its quoting, the statistics over
 * repeats against a hand computation, summary.csv's rows and columns, the
 * gnuplot scripts (their text: axes with units, labels of swept values and
 * their wrapping, error bars, the legend; the svg and png when gnuplot is
 * installed), `pslab plot DIR`, and the runner itself, driven by a stand-in
 * backend that succeeds, fails or crashes, each in its forked child. The
 * table has its own suite (test_table.c).
 */
#include "tests/unit.h"

#include "experiments/experiment.h"
#include "run/run.h"
#include "experiments/plots/plots.h" /* label, wrapping, statistics */
#include "experiments/backends/backends.h" /* the stage scheduler's trials */

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---------------------------------------------------------- helpers */

/* A record as the runner makes it; metrics NULL for a failed run. */
static cJSON *record(uint32_t run, uint32_t repeat, const char *sweep,
                     const char *config, const char *metrics, const char *error) {
  exp_run r = {.run = run, .repeat = repeat, .seed = 5 + repeat,
               .sweep = unit_json(sweep), .config = unit_json(config)};
  cJSON *rec = exp_record_new("exp", &r, metrics ? unit_json(metrics) : NULL, error);
  cJSON_Delete(r.sweep);
  cJSON_Delete(r.config);
  CU_ASSERT_PTR_NOT_NULL(rec);
  return rec;
}

static bool has_gnuplot(void) { return system("command -v gnuplot >/dev/null 2>&1") == 0; }

/* ----------------------------------------------------------- records */

static void test_record_fields(void) {
  cJSON *r = record(3, 1, "{'cluster.nodes': 4}",
                    "{'name': 'exp', 'backend': 'sim', 'cluster': {'nodes': 4}}",
                    "{'time_s': 2}", NULL);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(r, "experiment")->valuestring, "exp");
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(r, "run")->valuedouble, 3);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(r, "repeat")->valuedouble, 1);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(r, "seed")->valuedouble, 6);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(r, "backend")->valuestring, "sim");
  CU_ASSERT_TRUE(cJSON_IsObject(cJSON_GetObjectItem(r, "sweep")));
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "sweep"), "cluster.nodes")->valuedouble, 4);
  CU_ASSERT_EQUAL(exp_path_get(r, "config.cluster.nodes")->valuedouble, 4);
  CU_ASSERT_EQUAL(exp_path_get(r, "metrics.time_s")->valuedouble, 2);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(r, "error"));
  cJSON_Delete(r);
  r = record(1, 0, "{}", "{'name': 'exp'}", NULL, "it broke");
  CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(r, "metrics")));
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(r, "error")->valuestring, "it broke");
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(r, "backend")->valuestring, "sim");
  cJSON_Delete(r);
}

static void test_jsonl_round_trip(void) {
  char *dir = unit_temp_dir();
  char path[1024];
  snprintf(path, sizeof path, "%s/runs.jsonl", dir);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  cJSON *a = record(1, 0, "{'x': 'a\\nb'}", "{'name': 'exp'}", "{'time_s': 1}", NULL);
  cJSON *b = record(2, 0, "{'x': 2}", "{'name': 'exp'}", NULL, "line one\nline two");
  CU_ASSERT_EQUAL(exp_jsonl_append(f, a), 0);
  CU_ASSERT_EQUAL(exp_jsonl_append(f, b), 0);
  fclose(f);
  char *text = unit_slurp(dir, "runs.jsonl");
  size_t lines = 0;
  for (char *p = text; p && *p; p++) lines += *p == '\n';
  CU_ASSERT_EQUAL(lines, 2); /* one line per record, newlines escaped */
  free(text);
  exp_errors e;
  exp_errors_init(&e);
  cJSON *loaded = exp_jsonl_load(path, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(loaded);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(loaded), 2);
  CU_ASSERT_TRUE(cJSON_Compare(cJSON_GetArrayItem(loaded, 0), a, true));
  CU_ASSERT_TRUE(cJSON_Compare(cJSON_GetArrayItem(loaded, 1), b, true));
  cJSON_Delete(loaded);
  /* A broken line is reported with its number. */
  f = fopen(path, "a");
  fputs("{\"run\": 3, oops\n", f);
  fclose(f);
  CU_ASSERT_PTR_NULL(exp_jsonl_load(path, &e));
  CU_ASSERT_TRUE(exp_errors_contain(&e, "runs.jsonl:3: expected a run record (a JSON object), found invalid JSON"));
  exp_errors_free(&e);
  cJSON_Delete(a);
  cJSON_Delete(b);
  unit_remove_tree(dir);
  free(dir);
}

/* The runner's append (exp_jsonl_append_fd) when the disk refuses part of a
 * line: a file size limit (RLIMIT_FSIZE, SIGXFSZ ignored) in a forked child
 * lets the first record in whole and the second only in part. The second
 * append must fail saying so and leave the file as it was: one whole line. */
static void test_jsonl_short_write_rolled_back(void) {
  char *dir = unit_temp_dir();
  char path[1024];
  snprintf(path, sizeof path, "%s/runs.jsonl", dir);
  cJSON *a = record(1, 0, "{'x': 1}", "{'name': 'exp'}", "{'time_s': 1}", NULL);
  cJSON *b = record(2, 0, "{'x': 2}", "{'name': 'exp'}", "{'time_s': 2}", NULL);
  char *first = cJSON_PrintUnformatted(a);
  size_t first_len = strlen(first) + 1;
  int pipefd[2];
  CU_ASSERT_EQUAL_FATAL(pipe(pipefd), 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(pipefd[0]);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {first_len + 20, first_len + 20}; /* b's line does not fit */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    char err[256] = "";
    int ok = fd >= 0 && setrlimit(RLIMIT_FSIZE, &lim) == 0 &&
             exp_jsonl_append_fd(fd, a, err, sizeof err) == 0;
    int second = ok ? exp_jsonl_append_fd(fd, b, err, sizeof err) : 0;
    dprintf(pipefd[1], "%s", err);
    _exit(!ok ? 2 : second == -1 ? 0 : 1);
  }
  close(pipefd[1]);
  char err[256] = "";
  ssize_t got = read(pipefd[0], err, sizeof err - 1);
  err[got > 0 ? got : 0] = '\0';
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "File too large"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "cut back to its last whole line"));
  struct stat st;
  CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
  CU_ASSERT_EQUAL((size_t)st.st_size, first_len); /* the whole first line, no more */
  exp_errors w, e;
  exp_errors_init(&w);
  exp_errors_init(&e);
  cJSON *loaded = exp_jsonl_load_interrupted(path, &w, &e);
  CU_ASSERT_EQUAL(w.count, 0); /* nothing cut short left behind */
  CU_ASSERT_EQUAL(cJSON_GetArraySize(loaded), 1);
  CU_ASSERT_TRUE(cJSON_Compare(cJSON_GetArrayItem(loaded, 0), a, true));
  cJSON_Delete(loaded);
  exp_errors_free(&w);
  exp_errors_free(&e);
  free(first);
  cJSON_Delete(a);
  cJSON_Delete(b);
  unit_remove_tree(dir);
  free(dir);
}

/* A write cut short by a kill: dropped with a warning when asked, an error
 * otherwise; exp_jsonl_write writes what exp_jsonl_append would. */
static void test_jsonl_cut_short_and_written_whole(void) {
  char *dir = unit_temp_dir();
  char path[1024];
  snprintf(path, sizeof path, "%s/runs.jsonl", dir);
  cJSON *records = cJSON_CreateArray();
  cJSON_AddItemToArray(records, record(1, 0, "{}", "{'name': 'exp'}", "{'time_s': 1}", NULL));
  cJSON_AddItemToArray(records, record(2, 0, "{}", "{'name': 'exp'}", NULL, "no"));
  char err[256];
  CU_ASSERT_EQUAL_FATAL(exp_jsonl_write(path, records, err, sizeof err), 0);
  CU_ASSERT_FALSE(unit_exists(dir, "runs.jsonl.tmp"));
  char *text = unit_slurp(dir, "runs.jsonl");
  char *a = cJSON_PrintUnformatted(cJSON_GetArrayItem(records, 0));
  char *b = cJSON_PrintUnformatted(cJSON_GetArrayItem(records, 1));
  char want[4096];
  snprintf(want, sizeof want, "%s\n%s\n", a, b);
  CU_ASSERT_STRING_EQUAL(text, want);
  free(text);
  free(a);
  free(b);
  FILE *f = fopen(path, "a");
  fputs("{\"experiment\":\"exp\",\"run\":3,\"rep", f); /* no newline */
  fclose(f);
  exp_errors e, w;
  exp_errors_init(&e);
  exp_errors_init(&w);
  cJSON *loaded = exp_jsonl_load_interrupted(path, &w, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(loaded);
  CU_ASSERT_EQUAL(e.count, 0);
  CU_ASSERT_TRUE(cJSON_Compare(loaded, records, true));
  CU_ASSERT_TRUE(exp_errors_contain(&w, "runs.jsonl:3: the last line is cut short"));
  cJSON_Delete(loaded);
  CU_ASSERT_PTR_NULL(exp_jsonl_load(path, &e)); /* strict: an error */
  CU_ASSERT_TRUE(exp_errors_contain(&e, "runs.jsonl:3: expected a run record"));
  /* A whole record without its newline is kept; a bad line before the last
   * is an error either way. */
  f = fopen(path, "w");
  fputs("{\"run\": 1}\n{oops\n{\"run\": 2}", f);
  fclose(f);
  exp_errors_free(&e);
  exp_errors_init(&e);
  CU_ASSERT_PTR_NULL(exp_jsonl_load_interrupted(path, &w, &e));
  CU_ASSERT_TRUE(exp_errors_contain(&e, "runs.jsonl:2: expected a run record"));
  f = fopen(path, "w");
  fputs("{\"run\": 1}\n{\"run\": 2}", f);
  fclose(f);
  loaded = exp_jsonl_load_interrupted(path, &w, &e);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(loaded), 2);
  cJSON_Delete(loaded);
  exp_errors_free(&e);
  exp_errors_free(&w);
  cJSON_Delete(records);
  unit_remove_tree(dir);
  free(dir);
}

/* --------------------------------------------------------------- CSV */

static cJSON *csv_records(void) {
  cJSON *records = cJSON_CreateArray();
  cJSON_AddItemToArray(records, record(1, 0, "{'policy': 'a,\\'b\\'', 'cluster.nodes': 2}",
                                       "{'name': 'exp'}",
                                       "{'time_s': 1.5, 'steps': 10, 'epoch_time_s': [1, 2], "
                                       "'extra': 7, 'local_ratio': 0.1}", NULL));
  cJSON_AddItemToArray(records, record(2, 0, "{'policy': {'type': 'static'}, 'cluster.nodes': 4}",
                                       "{'name': 'exp'}", NULL, "it broke, \"badly\""));
  return records;
}

static char *runs_csv_of(const cJSON *records) {
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  CU_ASSERT_TRUE(exp_runs_csv(mem, records));
  fclose(mem);
  return buf;
}

static char *summary_csv_of(const exp_results *r) {
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  CU_ASSERT_TRUE(exp_summary_csv(mem, r));
  fclose(mem);
  return buf;
}

static void test_runs_csv_columns_and_quoting(void) {
  cJSON *records = csv_records();
  char *buf = runs_csv_of(records);
  /* Metrics some record has, in metric-table order (local_ratio before the
   * unknown extra, though the record has extra first), lists left out. */
  const char *want =
      "run,repeat,seed,policy,cluster.nodes,time_s,steps,local_ratio,extra,error\n"
      "1,0,5,\"a,\"\"b\"\"\",2,1.5,10,0.1,7,\n"
      "2,0,5,\"{\"\"type\"\":\"\"static\"\"}\",4,,,,,\"it broke, \"\"badly\"\"\"\n";
  if (strcmp(buf, want) != 0) fprintf(stderr, "\n--- got:\n%s--- want:\n%s", buf, want);
  CU_ASSERT_STRING_EQUAL(buf, want);
  free(buf);
  cJSON_Delete(records);
}

static void test_results_written_whole(void) {
  char *dir = unit_temp_dir();
  char err[256];
  cJSON *records = csv_records();
  exp_results res = {.records = records};
  char *table = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&table, &len);
  CU_ASSERT_EQUAL(exp_results_write(dir, &res, mem, err, sizeof err), 0);
  fclose(mem);
  CU_ASSERT_TRUE(unit_exists(dir, "summary.csv"));
  CU_ASSERT_TRUE(unit_exists(dir, "runs.csv"));
  CU_ASSERT_FALSE(unit_exists(dir, "summary.csv.tmp"));
  CU_ASSERT_FALSE(unit_exists(dir, "runs.csv.tmp"));
  char *text = unit_slurp(dir, "runs.csv");
  CU_ASSERT_TRUE(text && strncmp(text, "run,repeat,seed,policy,", 23) == 0);
  free(text);
  text = unit_slurp(dir, "summary.csv");
  CU_ASSERT_TRUE(text && strncmp(text, "policy,cluster.nodes,runs,runs_ok,", 34) == 0);
  free(text);
  CU_ASSERT_TRUE(unit_contains(table, "runs ok")); /* the table, when asked for */
  free(table);
  /* A directory that does not exist: an error, not a crash. */
  CU_ASSERT_EQUAL(exp_results_write("/nonexistent/dir", &res, NULL, err, sizeof err), -1);
  CU_ASSERT_TRUE(unit_contains(err, "/nonexistent/dir/summary.csv: cannot write"));
  cJSON_Delete(records);
  unit_remove_tree(dir);
  free(dir);
}

/* ------------------------------------------------------- statistics */

/* The values 1, 2, 4, by hand:
 *   mean = 7/3 = 2.3333...
 *   sd   = sqrt(((1-7/3)^2 + (2-7/3)^2 + (4-7/3)^2) / 2) = sqrt((42/9) / 2)
 *        = sqrt(7/3) = 1.5275252316519465
 *   t(0.975, 2 degrees of freedom): Student's t with 2 degrees has the
 *        closed-form cdf 1/2 + t / (2 sqrt(2 + t^2)); setting it to 0.975,
 *        t / sqrt(2 + t^2) = 0.95, t = sqrt(2 * 0.95^2 / (1 - 0.95^2))
 *        = 4.302652729749464
 *   ci95 = t * sd / sqrt(3) = t * sqrt(7) / 3 = 3.7945830335967616 */
#define T_975_2 4.302652729749464
#define MEAN_124 (7.0 / 3.0)
#define SD_124 1.5275252316519465
#define CI_124 3.7945830335967616

static void test_stats_against_a_hand_computation(void) {
  exp_stats s = {0};
  CU_ASSERT_TRUE(isnan(exp_stats_combined(&s, RUN_COMBINE_MEAN))); /* no values */
  exp_stats_add(&s, 1);
  CU_ASSERT_TRUE(isnan(exp_stats_sd(&s)));   /* one value: no spread */
  CU_ASSERT_TRUE(isnan(exp_stats_ci95(&s)));
  exp_stats_add(&s, 2);
  exp_stats_add(&s, 4);
  CU_ASSERT_DOUBLE_EQUAL(exp_stats_combined(&s, RUN_COMBINE_MEAN), MEAN_124, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(exp_stats_sd(&s), SD_124, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(exp_stats_ci95(&s), CI_124, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(exp_stats_ci95(&s), T_975_2 * sqrt(7.0) / 3, 1e-9);
  CU_ASSERT_EQUAL(exp_stats_combined(&s, RUN_COMBINE_MAX), 4);
  CU_ASSERT_EQUAL(exp_stats_combined(&s, RUN_COMBINE_SUM), 7);
}

/* ------------------------------------------------------- summary.csv */

/* Splits a CSV line without quotes into at most max fields (in place). */
static size_t split_fields(char *line, char **fields, size_t max) {
  size_t n = 0;
  for (char *s = line; n < max;) {
    fields[n++] = s;
    s += strcspn(s, ",\n");
    if (*s != ',') {
      *s = '\0';
      break;
    }
    *s++ = '\0';
  }
  return n;
}

static size_t column_of(char **header, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(header[i], name) == 0) return i;
  CU_FAIL("no such column");
  return 0;
}

/* Point cluster.nodes=2: three repeats; point 4: one success, one failure. */
static cJSON *repeated_records(void) {
  cJSON *records = cJSON_CreateArray();
  const char *a[] = {
      "{'time_s': 1, 'epoch_time_s': [1, 3], 'staleness_max_s': 0.1, 'bad_messages': 1, 'pushed_floats': 9}",
      "{'time_s': 2, 'epoch_time_s': [2, 2], 'staleness_max_s': 0.3, 'bad_messages': 2, 'pushed_floats': 9}",
      "{'time_s': 4, 'epoch_time_s': [5, 7], 'staleness_max_s': 0.2, 'bad_messages': 3, 'pushed_floats': 9}"};
  for (uint32_t i = 0; i < 3; i++) {
    cJSON_AddItemToArray(records, record(2 * i + 1, i, "{'cluster.nodes': 2}", "{}", a[i], NULL));
    cJSON_AddItemToArray(records, record(2 * i + 2, i, "{'cluster.nodes': 4}", "{}",
                                         i == 0 ? "{'time_s': 5, 'epoch_time_s': [4]}" : NULL,
                                         i == 0 ? NULL : "boom"));
  }
  return records;
}

static void test_summary_one_row_per_point(void) {
  cJSON *records = repeated_records();
  cJSON *pj = unit_json("[{'name': 'e', 'x': 'cluster.nodes', 'y': 'epoch_time_s'}]");
  exp_plot_list plots;
  exp_errors e;
  exp_errors_init(&e);
  CU_ASSERT_TRUE(exp_plots_parse(pj, &plots, &e));
  const char *const asked[] = {"staleness_max_s", NULL};
  exp_results res = {.records = records, .plots = &plots, .metrics = asked};
  char *csv = summary_csv_of(&res);
  char *lines[6] = {0};
  size_t n_lines = 0;
  for (char *l = strtok(csv, "\n"); l && n_lines < 6; l = strtok(NULL, "\n")) lines[n_lines++] = l;
  CU_ASSERT_EQUAL_FATAL(n_lines, 3); /* header, one row per sweep point */
  /* time_s and bad_messages are shown in summaries and some record has
   * them; epoch_time_s is plotted; staleness_max_s asked for; pushed_floats
   * none of these. A mean has _sd and _ci95, a max or a sum does not. */
  CU_ASSERT_STRING_EQUAL(lines[0],
                         "cluster.nodes,runs,runs_ok,time_s,time_s_sd,time_s_ci95,"
                         "epoch_time_s,epoch_time_s_sd,epoch_time_s_ci95,staleness_max_s,"
                         "bad_messages");
  char *h[16], *a[16], *b[16];
  size_t nh = split_fields(lines[0], h, 16);
  CU_ASSERT_EQUAL(split_fields(lines[1], a, 16), nh);
  CU_ASSERT_EQUAL(split_fields(lines[2], b, 16), nh);
  CU_ASSERT_STRING_EQUAL(a[0], "2");
  CU_ASSERT_STRING_EQUAL(a[column_of(h, nh, "runs")], "3");
  CU_ASSERT_STRING_EQUAL(a[column_of(h, nh, "runs_ok")], "3");
  CU_ASSERT_DOUBLE_EQUAL(strtod(a[column_of(h, nh, "time_s")], NULL), MEAN_124, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(strtod(a[column_of(h, nh, "time_s_sd")], NULL), SD_124, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(strtod(a[column_of(h, nh, "time_s_ci95")], NULL), CI_124, 1e-9);
  /* A list by its mean per run (2, 2, 6), then over the runs: 10/3, sd
   * sqrt(16/3), ci95 t * sqrt(16/3) / sqrt(3) = t * 4/3. */
  CU_ASSERT_DOUBLE_EQUAL(strtod(a[column_of(h, nh, "epoch_time_s")], NULL), 10.0 / 3, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(strtod(a[column_of(h, nh, "epoch_time_s_sd")], NULL), sqrt(16.0 / 3), 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(strtod(a[column_of(h, nh, "epoch_time_s_ci95")], NULL), T_975_2 * 4 / 3, 1e-9);
  CU_ASSERT_STRING_EQUAL(a[column_of(h, nh, "staleness_max_s")], "0.3"); /* MAX */
  CU_ASSERT_STRING_EQUAL(a[column_of(h, nh, "bad_messages")], "6");      /* SUM */
  /* One success of two: its values, no interval, nothing it lacks. */
  CU_ASSERT_STRING_EQUAL(b[0], "4");
  CU_ASSERT_STRING_EQUAL(b[column_of(h, nh, "runs")], "3");
  CU_ASSERT_STRING_EQUAL(b[column_of(h, nh, "runs_ok")], "1");
  CU_ASSERT_STRING_EQUAL(b[column_of(h, nh, "time_s")], "5");
  CU_ASSERT_STRING_EQUAL(b[column_of(h, nh, "time_s_sd")], "");
  CU_ASSERT_STRING_EQUAL(b[column_of(h, nh, "time_s_ci95")], "");
  CU_ASSERT_STRING_EQUAL(b[column_of(h, nh, "epoch_time_s")], "4");
  CU_ASSERT_STRING_EQUAL(b[column_of(h, nh, "staleness_max_s")], "");
  CU_ASSERT_STRING_EQUAL(b[column_of(h, nh, "bad_messages")], "");
  free(csv);
  exp_plot_list_free(&plots);
  exp_errors_free(&e);
  cJSON_Delete(pj);
  cJSON_Delete(records);
}

static void test_summary_without_sweep(void) {
  cJSON *records = cJSON_CreateArray();
  cJSON_AddItemToArray(records, record(1, 0, "{}", "{}", "{'time_s': 1}", NULL));
  cJSON_AddItemToArray(records, record(2, 1, "{}", "{}", "{'time_s': 3}", NULL));
  exp_results res = {.records = records};
  char *csv = summary_csv_of(&res);
  CU_ASSERT_TRUE(unit_contains(csv, "runs,runs_ok,time_s,time_s_sd,time_s_ci95\n2,2,2,"));
  free(csv);
  cJSON_Delete(records);
}



/* ----------------------------------------------------------- scripts */

static char *script_for(const char *plot, const cJSON *records, char *err, size_t errlen) {
  cJSON *j = unit_json(plot);
  exp_plot_list l;
  exp_errors e;
  exp_errors_init(&e);
  CU_ASSERT_TRUE(exp_plots_parse(j, &l, &e));
  char *s = l.count ? exp_plot_script(&l.items[0], "exp", records, err, errlen) : NULL;
  exp_plot_list_free(&l);
  exp_errors_free(&e);
  cJSON_Delete(j);
  return s;
}

static cJSON *scaling_records(void) {
  cJSON *records = cJSON_CreateArray();
  static const struct { int nodes; const char *type; double t; int repeat; } rows[] = {
      {4, "static", 4, 0}, {4, "relocate", 3, 0}, {2, "static", 1, 0}, {2, "relocate", 2, 0},
      {4, "static", 6, 1}, {4, "relocate", 5, 1}, {2, "static", 3, 1}, {2, "relocate", 2, 1},
  };
  for (size_t i = 0; i < 8; i++) {
    char sweep[128], config[160], metrics[128];
    snprintf(sweep, sizeof sweep, "{'cluster.nodes': %d, 'policy.type': '%s'}", rows[i].nodes, rows[i].type);
    snprintf(config, sizeof config, "{'cluster': {'nodes': %d}, 'policy': {'type': '%s'}}",
             rows[i].nodes, rows[i].type);
    snprintf(metrics, sizeof metrics, "{'time_s': %g, 'epoch_time_s': [%g, %g]}", rows[i].t,
             rows[i].t, rows[i].t + 2);
    cJSON_AddItemToArray(records, record((uint32_t)i + 1, (uint32_t)rows[i].repeat, sweep,
                                         config, metrics, NULL));
  }
  cJSON_AddItemToArray(records, record(9, 1, "{'cluster.nodes': 8, 'policy.type': 'static'}",
                                       "{'cluster': {'nodes': 8}, 'policy': {'type': 'static'}}",
                                       NULL, "failed runs are left out"));
  return records;
}

/* The numbers after `prefix` on the script line that starts with it (a data
 * row), into v[0..n); how many were read. "NaN" reads as NAN. */
static size_t data_row(const char *script, const char *prefix, double *v, size_t n) {
  size_t len = strlen(prefix), got = 0;
  for (const char *line = script; line && *line; line = strchr(line, '\n'), line += !!line) {
    if (strncmp(line, prefix, len) != 0) continue;
    const char *s = line + len;
    char *end;
    while (got < n) {
      double x = strtod(s, &end);
      if (end == s) break;
      v[got++] = x;
      s = end;
    }
    return got;
  }
  return 0;
}

static void test_script_lines_for_numeric_x(void) {
  cJSON *records = scaling_records();
  char err[256];
  char *s = script_for("[{'name': 'scale', 'x': 'cluster.nodes', 'y': 'time_s', "
                       "'series': 'policy.type', 'logx': true}]", records, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_TRUE(unit_contains(s, "set terminal svg"));
  CU_ASSERT_TRUE(unit_contains(s, "set output \"scale.svg\""));
  /* Axis words and units from the metric table; a config path by its path. */
  CU_ASSERT_TRUE(unit_contains(s, "set title \"exp: time by cluster.nodes\"\n"));
  CU_ASSERT_TRUE(unit_contains(s, "set xlabel \"cluster.nodes\"\n"));
  CU_ASSERT_TRUE(unit_contains(s, "set ylabel \"time (s)\"\nyscale = 1\n"));
  /* The legend below the plot, titled by the series path. */
  CU_ASSERT_TRUE(unit_contains(s, "set key below horizontal Left reverse title \"\\npolicy.type\"\n"));
  CU_ASSERT_TRUE(unit_contains(s, "set yrange [0:*]\n")); /* lines start at 0 too */
  CU_ASSERT_TRUE(unit_contains(s, "set logscale x\n"));
  CU_ASSERT_TRUE(unit_contains(s, "set xtics (2, 4)\n")); /* at the values swept */
  CU_ASSERT_FALSE(unit_contains(s, "set logscale y"));
  /* One block per series in order met, x sorted: x, mean, ci95, runs. */
  double v[4];
  CU_ASSERT_TRUE(unit_contains(s, "$s0 << EOD\n2 2 "));
  CU_ASSERT_EQUAL(data_row(s, "4 5 ", v, 2), 2);
  CU_ASSERT_DOUBLE_EQUAL(v[0], 12.7062047362, 1e-9); /* t(0.975, 1) * sd / sqrt(2) */
  CU_ASSERT_EQUAL(v[1], 2);
  CU_ASSERT_TRUE(unit_contains(s, "$s1 << EOD\n2 2 0 2\n4 4 "));
  CU_ASSERT_FALSE(unit_contains(s, "\n8 ")); /* the failed run */
  CU_ASSERT_TRUE(unit_contains(s, "plot $s0 using ($1*xscale):($2*yscale) with linespoints "
                             "linetype 1 title \"static\", \\\n"
                             "     $s0 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars "
                             "linetype 1 dashtype 1 notitle, \\\n"
                             "     $s1 using ($1*xscale):($2*yscale) with linespoints "
                             "linetype 2 title \"relocate\", \\\n"));
  free(s);
  /* List metrics (one value per epoch) by their mean; no 0 on a log axis. */
  s = script_for("[{'name': 'e', 'x': 'cluster.nodes', 'y': 'epoch_time_s', 'series': 'policy.type', "
                 "'logy': true}]", records, err, sizeof err);
  CU_ASSERT_TRUE(unit_contains(s, "$s0 << EOD\n2 3 "));
  CU_ASSERT_EQUAL(data_row(s, "4 6 ", v, 2), 2);
  CU_ASSERT_TRUE(unit_contains(s, "set logscale y\n"));
  CU_ASSERT_FALSE(unit_contains(s, "yrange"));
  CU_ASSERT_TRUE(unit_contains(s, "set autoscale xfix\n")); /* not logx: a margin instead */
  free(s);
  cJSON_Delete(records);
}

/* Servers' load over time: a line per server through its buckets (the
 * middle of each on x), repeats averaged bucket by bucket; "select" keeps
 * one sweep point's runs, and without it the lines of several points say
 * which point they are of. */
static void test_script_servers_over_time(void) {
  cJSON *records = cJSON_CreateArray();
  static const struct { const char *type; int repeat; double k0, k1; } rows[] = {
      {"static", 0, 100, 200}, {"psld", 0, 300, 50}, {"psld", 1, 500, 150}};
  for (size_t i = 0; i < 3; i++) {
    char sweep[96], config[128], metrics[400];
    snprintf(sweep, sizeof sweep, "{'policy.type': '%s'}", rows[i].type);
    snprintf(config, sizeof config, "{'policy': {'type': '%s'}}", rows[i].type);
    snprintf(metrics, sizeof metrics, "{'time_s': 1, 'servers': ["
             "{'node': 0, 'bucket_s': 0.5, 'keys_per_s': [%g, %g]}, "
             "{'node': 1, 'bucket_s': 0.5, 'keys_per_s': [7]}]}", rows[i].k0, rows[i].k1);
    cJSON_AddItemToArray(records, record((uint32_t)i + 1, (uint32_t)rows[i].repeat, sweep,
                                         config, metrics, NULL));
  }
  char err[256];
  char *s = script_for("[{'name': 's', 'kind': 'servers_over_time', "
                       "'select': {'policy.type': 'psld'}}]", records, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_TRUE(unit_contains(s, "set ylabel \"keys served per second\"\n"));
  CU_ASSERT_TRUE(unit_contains(s, "set xlabel \"time (ms)\"\n"));
  double v[4];
  CU_ASSERT_TRUE(unit_contains(s, "$s0 << EOD\n0.25 400 ")); /* (300 + 500) / 2 */
  CU_ASSERT_EQUAL(data_row(s, "0.75 100 ", v, 2), 2);
  CU_ASSERT_EQUAL(v[1], 2);                                  /* of 2 repeats */
  CU_ASSERT_TRUE(unit_contains(s, "$s1 << EOD\n0.25 7 "));
  CU_ASSERT_TRUE(unit_contains(s, "title \"server 0\""));
  CU_ASSERT_TRUE(unit_contains(s, "title \"server 1\""));
  CU_ASSERT_TRUE(unit_contains(s, "with lines linetype 1 linewidth 1.5 title"));
  CU_ASSERT_FALSE(unit_contains(s, "0.25 100 ")); /* static's, not selected */
  free(s);
  s = script_for("[{'name': 's', 'kind': 'servers_over_time'}]", records, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_TRUE(unit_contains(s, "title \"policy.type=static server 0\""));
  CU_ASSERT_TRUE(unit_contains(s, "title \"policy.type=psld server 1\""));
  free(s);
  cJSON_Delete(records);
  const char *bad[][2] = {
      {"[{'name': 's', 'kind': 'servers_over_time', 'y': 'time_s'}]",
       "plots[0].y: expected nothing with kind \"servers_over_time\""},
      {"[{'name': 's', 'kind': 'servers_over_time', 'select': 3}]",
       "plots[0].select: expected an object of dotted paths into the run config"},
  };
  for (size_t i = 0; i < 2; i++) {
    cJSON *j = unit_json(bad[i][0]);
    exp_plot_list l;
    exp_errors e;
    exp_errors_init(&e);
    CU_ASSERT_FALSE(exp_plots_parse(j, &l, &e));
    CU_ASSERT_TRUE(e.count > 0 && unit_contains(e.lines[0], bad[i][1]));
    if (e.count && !unit_contains(e.lines[0], bad[i][1])) fprintf(stderr, "\n  got: %s\n", e.lines[0]);
    exp_plot_list_free(&l);
    exp_errors_free(&e);
    cJSON_Delete(j);
  }
}

/* Quality against time: a line per sweep point through its epochs, the
 * repeats averaged epoch by epoch (x and y). */
static void test_script_quality_vs_time(void) {
  cJSON *records = cJSON_CreateArray();
  static const struct { const char *type; int repeat; double t0, t1, q0, q1; } rows[] = {
      {"static", 0, 1, 2, 0.5, 0.25}, {"relocate", 0, 0.5, 1, 0.75, 0.5},
      {"static", 1, 3, 4, 0.5, 0.75}, {"relocate", 1, 0.5, 1.5, 0.25, 0.5},
  };
  for (size_t i = 0; i < 4; i++) {
    char sweep[96], config[128], metrics[160];
    snprintf(sweep, sizeof sweep, "{'policy.type': '%s'}", rows[i].type);
    snprintf(config, sizeof config, "{'policy': {'type': '%s'}}", rows[i].type);
    snprintf(metrics, sizeof metrics, "{'time_s': 9, 'epoch_end_s': [%g, %g], "
             "'epoch_quality': [%g, %g]}", rows[i].t0, rows[i].t1, rows[i].q0, rows[i].q1);
    cJSON_AddItemToArray(records, record((uint32_t)i + 1, (uint32_t)rows[i].repeat, sweep,
                                         config, metrics, NULL));
  }
  /* A run without quality (another workload) is left out. */
  cJSON_AddItemToArray(records, record(5, 0, "{'policy.type': 'nups'}",
                                       "{'policy': {'type': 'nups'}}", "{'time_s': 1}", NULL));
  char err[256];
  char *s = script_for("[{'name': 'q', 'kind': 'quality_vs_time'}]", records, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_TRUE(unit_contains(s, "set xlabel \"training time (s)\"\n"));
  CU_ASSERT_TRUE(unit_contains(s, "set ylabel \"quality\"\n"));
  double v[4];
  /* static: epoch 0 at mean time 2, quality 0.5 (both repeats 0.5). */
  CU_ASSERT_TRUE(unit_contains(s, "$s0 << EOD\n2 0.5 0 2\n3 0.5 "));
  /* relocate: epoch 0 at 0.5, quality 0.5; epoch 1 at 1.25, quality 0.5. */
  CU_ASSERT_TRUE(unit_contains(s, "$s1 << EOD\n0.5 0.5 "));
  CU_ASSERT_EQUAL(data_row(s, "1.25 0.5 ", v, 2), 2);
  CU_ASSERT_EQUAL(v[1], 2);
  CU_ASSERT_TRUE(unit_contains(s, "title \"static\""));
  CU_ASSERT_TRUE(unit_contains(s, "title \"relocate\""));
  CU_ASSERT_FALSE(unit_contains(s, "nups"));
  free(s);
  /* y may be another per-epoch list; not a scalar metric. */
  s = script_for("[{'name': 'q', 'kind': 'quality_vs_time', 'y': 'epoch_end_s'}]", records, err,
                 sizeof err);
  CU_ASSERT_PTR_NOT_NULL(s);
  free(s);
  cJSON_Delete(records);
  const char *bad[][2] = {
      {"[{'name': 'q', 'kind': 'quality_vs_time', 'y': 'time_s'}]",
       "plots[0].y: expected a metric with one value per epoch"},
      {"[{'name': 'q', 'kind': 'scatter', 'x': 'a', 'y': 'time_s'}]",
       "plots[0].kind: expected \"points\" (the default), \"quality_vs_time\" or "
       "\"servers_over_time\""},
  };
  for (size_t i = 0; i < 2; i++) {
    cJSON *j = unit_json(bad[i][0]);
    exp_plot_list l;
    exp_errors e;
    exp_errors_init(&e);
    CU_ASSERT_FALSE(exp_plots_parse(j, &l, &e));
    CU_ASSERT_TRUE(e.count > 0 && unit_contains(e.lines[0], bad[i][1]));
    if (e.count && !unit_contains(e.lines[0], bad[i][1])) fprintf(stderr, "\n  got: %s\n", e.lines[0]);
    exp_plot_list_free(&l);
    exp_errors_free(&e);
    cJSON_Delete(j);
  }
}

static void test_script_bars_for_string_x(void) {
  cJSON *records = scaling_records();
  char err[256];
  char *s = script_for("[{'name': 'bars', 'x': 'policy.type', 'y': 'time_s', "
                       "'series': 'cluster.nodes', 'title': 'say \\'hi\\' \\\\o/'}]",
                       records, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_TRUE(unit_contains(s, "set title \"say \\\"hi\\\" \\\\o/\"\n"));
  CU_ASSERT_TRUE(unit_contains(s, "set xlabel \"policy.type\"\n")); /* not relabelled */
  CU_ASSERT_TRUE(unit_contains(s, "set yrange [0:*]"));
  CU_ASSERT_TRUE(unit_contains(s, "set key below horizontal Left reverse title \"\\ncluster.nodes\"\n"));
  /* Rows: categories in order met; per series (4 nodes, then 2): mean,
   * ci95, runs. Repeats give error bars. */
  double v[6];
  CU_ASSERT_EQUAL_FATAL(data_row(s, "\"static\" ", v, 6), 6);
  CU_ASSERT_EQUAL(v[0], 5);
  CU_ASSERT_DOUBLE_EQUAL(v[1], 12.7062047362, 1e-9);
  CU_ASSERT_EQUAL(v[2], 2);
  CU_ASSERT_EQUAL(v[3], 2);
  CU_ASSERT_EQUAL(v[5], 2);
  CU_ASSERT_EQUAL_FATAL(data_row(s, "\"relocate\" ", v, 6), 6);
  CU_ASSERT_EQUAL(v[0], 4);
  CU_ASSERT_EQUAL(v[3], 2);
  CU_ASSERT_EQUAL(v[4], 0); /* 2 and 2: no spread */
  CU_ASSERT_TRUE(unit_contains(s, "set style histogram errorbars"));
  CU_ASSERT_TRUE(unit_contains(s, "set xtics nomirror (\"static\" 0, \\\n  \"relocate\" 1)\n"
                             "set xrange [-0.5:1.5]\n"));
  CU_ASSERT_TRUE(unit_contains(s, "plot $data using ($2*yscale):($3*yscale) linetype 1 title \"4\", \\\n"
                             "     $data using ($5*yscale):($6*yscale) linetype 2 title \"2\"\n"));
  free(s);
  /* A missing combination is an empty bar, not a zero. */
  cJSON *more = scaling_records();
  cJSON_AddItemToArray(more, record(10, 0, "{'cluster.nodes': 8, 'policy.type': 'relocate'}",
                                    "{'cluster': {'nodes': 8}, 'policy': {'type': 'relocate'}}",
                                    "{'time_s': 7}", NULL));
  s = script_for("[{'name': 'bars', 'x': 'policy.type', 'y': 'time_s', 'series': 'cluster.nodes'}]",
                 more, err, sizeof err);
  CU_ASSERT_TRUE(unit_contains(s, " NaN NaN 0\n\"relocate\" "));
  CU_ASSERT_TRUE(unit_contains(s, " 7 NaN 1\nEOD\n"));
  free(s);
  cJSON_Delete(more);
  cJSON_Delete(records);
}

/* Runs of two sweep points (nodes 2 and 4) of one metric: the values of
 * nodes 2 over its repeats, and 10 once for nodes 4. */
static cJSON *repeat_records(const char *metric, const double *values, size_t n) {
  cJSON *records = cJSON_CreateArray();
  char metrics[128];
  for (size_t i = 0; i < n; i++) {
    snprintf(metrics, sizeof metrics, "{'%s': %.17g}", metric, values[i]);
    cJSON_AddItemToArray(records, record((uint32_t)i + 1, (uint32_t)i, "{'cluster.nodes': 2}",
                                         "{'cluster': {'nodes': 2}}", metrics, NULL));
  }
  snprintf(metrics, sizeof metrics, "{'%s': 10}", metric);
  cJSON_AddItemToArray(records, record((uint32_t)n + 1, 0, "{'cluster.nodes': 4}",
                                       "{'cluster': {'nodes': 4}}", metrics, NULL));
  return records;
}

static void test_script_error_bars_with_repeats(void) {
  const double three[] = {1, 2, 4};
  cJSON *records = repeat_records("time_s", three, 3);
  char err[256];
  char *s = script_for("[{'name': 'e', 'x': 'cluster.nodes', 'y': 'time_s'}]", records, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  /* Mean 7/3; half-width t(0.975, 2) * sd / sqrt(3), by hand. */
  double v[3], sd = sqrt(((1 - 7.0 / 3) * (1 - 7.0 / 3) + (2 - 7.0 / 3) * (2 - 7.0 / 3) +
                          (4 - 7.0 / 3) * (4 - 7.0 / 3)) / 2);
  CU_ASSERT_EQUAL_FATAL(data_row(s, "2 ", v, 3), 3);
  CU_ASSERT_DOUBLE_EQUAL(v[0], 2.3333333333, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(v[1], 4.302652729 * sd / sqrt(3), 1e-8);
  CU_ASSERT_DOUBLE_EQUAL(v[1], 3.7946, 1e-4);
  CU_ASSERT_EQUAL(v[2], 3);
  CU_ASSERT_TRUE(unit_contains(s, "\n4 10 NaN 1\n")); /* one run: no interval */
  CU_ASSERT_TRUE(unit_contains(s, "with yerrorbars"));
  CU_ASSERT_TRUE(unit_contains(s, "unset key\n")); /* one series */
  CU_ASSERT_TRUE(unit_contains(s, "#   ci95  half-width of the 95% confidence interval"));
  free(s);
  /* As bars: the histogram's error bars, the interval in column 3. */
  s = script_for("[{'name': 'b', 'x': 'cluster', 'y': 'time_s'}]", records, err, sizeof err);
  CU_ASSERT_TRUE(unit_contains(s, "set style histogram errorbars"));
  CU_ASSERT_TRUE(unit_contains(s, "using ($2*yscale):($3*yscale)"));
  free(s);
  cJSON_Delete(records);
  /* A metric combined by its largest value: no interval, y the largest. */
  records = repeat_records("staleness_max_s", three, 3);
  s = script_for("[{'name': 'm', 'x': 'cluster.nodes', 'y': 'staleness_max_s'}]", records, err, sizeof err);
  CU_ASSERT_TRUE(unit_contains(s, "\n2 4 NaN 3\n"));
  CU_ASSERT_TRUE(unit_contains(s, "#   y     the largest staleness_max_s"));
  CU_ASSERT_FALSE(unit_contains(s, "errorbars"));
  free(s);
  cJSON_Delete(records);
  /* No repeats: no error bars at all. */
  records = repeat_records("time_s", three, 1);
  s = script_for("[{'name': 'e', 'x': 'cluster.nodes', 'y': 'time_s'}]", records, err, sizeof err);
  CU_ASSERT_TRUE(unit_contains(s, "\n2 1 NaN 1\n"));
  CU_ASSERT_FALSE(unit_contains(s, "errorbars"));
  free(s);
  s = script_for("[{'name': 'b', 'x': 'cluster', 'y': 'time_s'}]", records, err, sizeof err);
  CU_ASSERT_TRUE(unit_contains(s, "set style histogram clustered"));
  CU_ASSERT_TRUE(unit_contains(s, "plot $data using ($2*yscale) linetype 1 title"));
  free(s);
  cJSON_Delete(records);
}

/* The y axis of a plot of one value of metric. */
static char *axis_script(const char *metric, double value) {
  const double values[] = {value};
  cJSON *records = repeat_records(metric, values, 1);
  cJSON_ReplaceItemInObject(cJSON_GetObjectItem(cJSON_GetArrayItem(records, 1), "metrics"),
                            metric, cJSON_CreateNumber(value / 2));
  char plot[160], err[256];
  snprintf(plot, sizeof plot, "[{'name': 'u', 'x': 'cluster.nodes', 'y': '%s'}]", metric);
  char *s = script_for(plot, records, err, sizeof err);
  cJSON_Delete(records);
  CU_ASSERT_PTR_NOT_NULL(s);
  return s;
}

static void test_script_axis_units(void) {
  static const struct {
    const char *metric;
    double value;
    const char *axis;
  } cases[] = {
      {"time_s", 2.5, "set ylabel \"time (s)\"\nyscale = 1\n"},
      {"time_s", 0.000123, "set ylabel \"time (\xc2\xb5s)\"\nyscale = 1000000\n"},
      {"epoch_time_s", 0.25, "set ylabel \"epoch time (ms)\"\nyscale = 1000\n"},
      {"bytes", 278439000, "set ylabel \"bytes sent (MB)\"\nyscale = 1e-06\n"},
      {"bytes", 512, "set ylabel \"bytes sent (B)\"\nyscale = 1\n"},
      {"local_ratio", 0.25, "set ylabel \"local accesses (%)\"\nyscale = 100\n"},
      {"steps_per_s", 150000, "set ylabel \"throughput (thousand steps/s)\"\nyscale = 0.001\n"},
      {"steps_per_s", 150, "set ylabel \"throughput (steps/s)\"\nyscale = 1\n"},
      {"messages", 5, "set ylabel \"messages\"\nyscale = 1\n"},
      {"messages", 3e6, "set ylabel \"messages (millions)\"\nyscale = 1e-06\n"},
      {"staleness_mean_steps", 3, "set ylabel \"replica staleness (steps)\"\nyscale = 1\n"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *s = axis_script(cases[i].metric, cases[i].value);
    if (!unit_contains(s, cases[i].axis))
      fprintf(stderr, "\n%s = %g: want %s in:\n%s", cases[i].metric, cases[i].value,
              cases[i].axis, s ? s : "(null)");
    CU_ASSERT_TRUE(unit_contains(s, cases[i].axis));
    /* The data stay in the metric's unit; gnuplot never picks exponents. */
    char row[64];
    snprintf(row, sizeof row, "\n2 %.15g NaN 1\n", cases[i].value);
    CU_ASSERT_TRUE(unit_contains(s, row));
    CU_ASSERT_FALSE(unit_contains(s, "e+0"));
    CU_ASSERT_TRUE(unit_contains(s, "using ($1*xscale):($2*yscale)"));
    free(s);
  }
}

static void test_script_keeps_distinct_sweep_points_apart(void) {
  /* x = policy.type while whole policies are swept: two different static
   * policies must not be averaged into one bar. */
  cJSON *records = cJSON_CreateArray();
  const char *policies[] = {"{'type': 'static', 'partition': 'range', 'fast_local_access': false}",
                            "{'type': 'static', 'partition': 'range'}",
                            "{'type': 'relocate', 'partition': 'range'}",
                            "{'type': 'relocate', 'partition': 'range', 'lookahead': 100}"};
  for (size_t i = 0; i < 4; i++) {
    char sweep[128], config[128], metrics[64];
    snprintf(sweep, sizeof sweep, "{'policy': %s}", policies[i]);
    snprintf(config, sizeof config, "{'policy': %s}", policies[i]);
    snprintf(metrics, sizeof metrics, "{'time_s': %zu}", i + 1);
    cJSON_AddItemToArray(records, record((uint32_t)i + 1, 0, sweep, config, metrics, NULL));
  }
  char err[256];
  char *s = script_for("[{'name': 't', 'x': 'policy.type', 'y': 'time_s'}]", records, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  /* Labelled by what differs, type first, no braces: partition=range,
   * common to all, is left out. */
  CU_ASSERT_TRUE(unit_contains(s, "\"static fast_local_access=false\" 1 NaN 1\n"
                             "\"static\" 2 NaN 1\n\"relocate\" 3 NaN 1\n"
                             "\"relocate lookahead=100\" 4 NaN 1\n"));
  /* The bars are whole policies: x says so. */
  CU_ASSERT_TRUE(unit_contains(s, "set xlabel \"policy\""));
  CU_ASSERT_TRUE(unit_contains(s, "set title \"exp: time by policy\"\n"));
  CU_ASSERT_FALSE(unit_contains(s, "xlabel \"policy.type\""));
  /* The longest word does not fit 4 slots of the default canvas: it
   * widens, and labels wrap at spaces, words whole. */
  CU_ASSERT_TRUE(unit_contains(s, "set terminal svg size 890,518 "));
  CU_ASSERT_TRUE(unit_contains(s, "set xtics nomirror (\"static\\nfast_local_access=false\" 0, \\\n"
                             "  \"static\" 1, \\\n  \"relocate\" 2, \\\n"
                             "  \"relocate lookahead=100\" 3)\n"));
  CU_ASSERT_TRUE(unit_contains(s, "set xlabel \"policy\" offset 0,-1\n")); /* below both lines */
  CU_ASSERT_TRUE(unit_contains(s, "set terminal pngcairo size 890,518 "));
  free(s);
  /* The table labels its rows by what differs too, in the same words. */
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  exp_results res = {.records = records};
  exp_table_print(mem, &res);
  fclose(mem);
  CU_ASSERT_TRUE(unit_contains(buf, "\nstatic fast_local_access=false "));
  CU_ASSERT_TRUE(unit_contains(buf, "\nstatic "));
  CU_ASSERT_TRUE(unit_contains(buf, "\nrelocate "));
  CU_ASSERT_FALSE(unit_contains(buf, "partition"));
  free(buf);
  cJSON_Delete(records);
}

static void test_script_labels_nested_sweep_values(void) {
  /* x inside the swept objects (sampling's scheme) leads each label; the
   * other differing leaves follow without the prefix they share. */
  cJSON *records = cJSON_CreateArray();
  const char *policies[] = {"{'type': 'nups', 'sampling': {'scheme': 'naive'}}",
                            "{'type': 'nups', 'sampling': {'scheme': 'pool'}}",
                            "{'type': 'nups', 'sampling': {'scheme': 'pool', 'reuse': 64}}"};
  for (size_t i = 0; i < 3; i++) {
    char sweep[128], config[128], metrics[64];
    snprintf(sweep, sizeof sweep, "{'policy': %s}", policies[i]);
    snprintf(config, sizeof config, "{'policy': %s}", policies[i]);
    snprintf(metrics, sizeof metrics, "{'local_ratio': 0.%zu}", i + 1);
    cJSON_AddItemToArray(records, record((uint32_t)i + 1, 0, sweep, config, metrics, NULL));
  }
  char err[256];
  char *s = script_for("[{'name': 's', 'x': 'policy.sampling.scheme', 'y': 'local_ratio'}]",
                       records, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_TRUE(unit_contains(s, "\"naive\" 0.1 NaN 1\n\"pool\" 0.2 NaN 1\n\"pool reuse=64\" 0.3 NaN 1\n"));
  CU_ASSERT_TRUE(unit_contains(s, "set xlabel \"policy\"\n"));
  CU_ASSERT_TRUE(unit_contains(s, "set ylabel \"local accesses (%)\"\nyscale = 100\n"));
  CU_ASSERT_TRUE(unit_contains(s, "set terminal svg size 800,500 ")); /* fits as it is */
  free(s);
  cJSON_Delete(records);
}

static void test_script_lines_relabelled_by_sweep_values(void) {
  /* series = policy.type while whole policies are swept: a line per
   * policy, the legend titled by what tells them apart. */
  cJSON *records = cJSON_CreateArray();
  const char *policies[] = {"{'type': 'static', 'fast_local_access': false}", "{'type': 'static'}"};
  for (size_t i = 0; i < 4; i++) {
    char sweep[128], config[160], metrics[64];
    snprintf(sweep, sizeof sweep, "{'cluster.nodes': %zu, 'policy': %s}", 2 + 2 * (i / 2),
             policies[i % 2]);
    snprintf(config, sizeof config, "{'cluster': {'nodes': %zu}, 'policy': %s}", 2 + 2 * (i / 2),
             policies[i % 2]);
    snprintf(metrics, sizeof metrics, "{'time_s': %zu}", i + 1);
    cJSON_AddItemToArray(records, record((uint32_t)i + 1, 0, sweep, config, metrics, NULL));
  }
  char err[256];
  char *s = script_for("[{'name': 'l', 'x': 'cluster.nodes', 'y': 'time_s', 'series': 'policy.type'}]",
                       records, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_TRUE(unit_contains(s, "$s0 << EOD\n2 1 NaN 1\n4 3 NaN 1\nEOD\n"));
  CU_ASSERT_TRUE(unit_contains(s, "title \"static fast_local_access=false\""));
  CU_ASSERT_TRUE(unit_contains(s, "title \"static\""));
  CU_ASSERT_TRUE(unit_contains(s, "set key below horizontal Left reverse title \"\\npolicy\"\n"));
  free(s);
  cJSON_Delete(records);
}

static void test_script_draws_a_png_too(void) {
  cJSON *records = scaling_records();
  char err[256];
  char *s = script_for("[{'name': 'p', 'x': 'cluster.nodes', 'y': 'time_s'}]", records, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  /* svg first, then the same plot again as a PNG; a gnuplot without cairo
   * stops with the status draw_plots.c knows. */
  const char *svg = strstr(s, "set output \"p.svg\"\n");
  const char *png = strstr(s, "set terminal pngcairo size 800,500 ");
  CU_ASSERT_TRUE(svg && png && svg < png);
  CU_ASSERT_TRUE(unit_contains(s, "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") == 0) {\n"));
  CU_ASSERT_TRUE(unit_contains(s, "  exit status 4\n}\n"));
  CU_ASSERT_TRUE(unit_contains(s, "set output \"p.png\"\nreplot\nunset output\n"));
  free(s);
  cJSON_Delete(records);
}

static void test_script_without_data_is_an_error(void) {
  cJSON *records = scaling_records();
  char err[256] = "";
  char *s = script_for("[{'name': 'n', 'x': 'cluster.racks', 'y': 'time_s'}]", records, err, sizeof err);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_TRUE(unit_contains(err, "no successful run has a value for both x (\"cluster.racks\") and y (\"time_s\")"));
  cJSON_Delete(records);
}

/* ------------------------------------------------------------ labels */

static void check_labels(const char *values_json, const char *lead, const char *const *want) {
  cJSON *values = unit_json(values_json);
  size_t n = (size_t)cJSON_GetArraySize(values), i = 0;
  const cJSON *v[8];
  char *out[8];
  for (const cJSON *c = values->child; c && i < 8; c = c->next) v[i++] = c;
  CU_ASSERT_TRUE_FATAL(exp_value_labels_varying(v, n, lead, out));
  for (i = 0; i < n; i++) {
    if (strcmp(out[i], want[i]) != 0)
      fprintf(stderr, "\nlabel %zu of %s: got \"%s\", want \"%s\"", i, values_json, out[i], want[i]);
    CU_ASSERT_STRING_EQUAL(out[i], want[i]);
    free(out[i]);
  }
  cJSON_Delete(values);
}

static void test_labels_of_varying_values(void) {
  check_labels("[{'type': 'static', 'partition': 'hash', 'fast_local_access': false},"
               " {'type': 'static', 'partition': 'hash'},"
               " {'type': 'relocate', 'partition': 'hash', 'lookahead': 100}]", "type",
               (const char *const[]){"static fast_local_access=false", "static",
                                     "relocate lookahead=100"});
  /* Differing leaves under one parent: named without it. */
  check_labels("[{'a': 1, 's': {'x': 1, 'y': 2}}, {'a': 1, 's': {'x': 2, 'y': 2}}]", NULL,
               (const char *const[]){"x=1", "x=2"});
  check_labels("[{'s': {'p': {'x': 1}, 'q': 3}}, {'s': {'p': {'x': 2}}}]", NULL,
               (const char *const[]){"p.x=1 q=3", "p.x=2"});
  /* Nothing differs (the repeats of one point): the whole value. */
  check_labels("[{'type': 'static', 'partition': 'range'}, {'type': 'static', 'partition': 'range'}]",
               "type", (const char *const[]){"static partition=range", "static partition=range"});
  check_labels("[{'type': 'static', 'ks': [1, 2]}]", "type",
               (const char *const[]){"static ks=[1,2]"});
  /* Plain values as they are. */
  check_labels("['static', 3, true, {}]", "type",
               (const char *const[]){"static", "3", "true", "{}"});
  /* An empty member says what it means: the field's word, or none. */
  check_labels("[{'nodes': 8, 'stragglers': []}, {'nodes': 8, 'stragglers': [{'node': 3}]}]", NULL,
               (const char *const[]){"no straggler", "stragglers=[{node=3}]"});
  check_labels("[{'type': 'static', 'ks': []}, {'type': 'static', 'ks': [1]}]", "type",
               (const char *const[]){"static ks=none", "static ks=[1]"});
  CU_ASSERT_STRING_EQUAL(exp_empty_label("cluster.stragglers"), "no straggler");
  CU_ASSERT_STRING_EQUAL(exp_empty_label("stragglers"), "no straggler");
  CU_ASSERT_STRING_EQUAL(exp_empty_label("cluster.scale"), "no scaling");
  CU_ASSERT_STRING_EQUAL(exp_empty_label("workload.layers"), "none");
  CU_ASSERT_STRING_EQUAL(exp_empty_label(NULL), "none");
}

/* A swept empty value is labelled by what it means, on the x axis, in the
 * legend and in the labels of colliding sweep points alike. */
static void test_script_labels_empty_values(void) {
  cJSON *records = cJSON_CreateArray();
  const char *stragglers[] = {"[]", "[{'node': 3, 'speed_factor': 0.25}]"};
  for (uint32_t i = 0; i < 4; i++) {
    char sweep[160], config[200];
    snprintf(sweep, sizeof sweep, "{'cluster.stragglers': %s, 'consistency.staleness': %u}",
             stragglers[i % 2], i / 2);
    snprintf(config, sizeof config, "{'cluster': {'nodes': 4, 'stragglers': %s}, "
             "'consistency': {'staleness': %u}}", stragglers[i % 2], i / 2);
    cJSON_AddItemToArray(records, record(i + 1, 0, sweep, config, "{'time_s': 1}", NULL));
  }
  char err[256];
  char *s = script_for("[{'name': 'b', 'x': 'cluster.stragglers', 'y': 'time_s', "
                       "'series': 'consistency.staleness'}]", records, err, sizeof err);
  CU_ASSERT_TRUE(s && unit_contains(s, "set xtics nomirror (\"no straggler\" 0, "));
  CU_ASSERT_FALSE(s && unit_contains(s, "\"[]\""));
  free(s);
  s = script_for("[{'name': 'l', 'x': 'consistency.staleness', 'y': 'time_s', "
                 "'series': 'cluster.stragglers'}]", records, err, sizeof err);
  CU_ASSERT_TRUE(s && unit_contains(s, "title \"no straggler\""));
  free(s);
  s = script_for("[{'name': 'c', 'x': 'cluster.nodes', 'y': 'time_s'}]", records, err, sizeof err);
  CU_ASSERT_TRUE(s && unit_contains(s, "title \"cluster.stragglers: no straggler; "
                                       "consistency.staleness: 0\""));
  if (s && !unit_contains(s, "no straggler;")) fprintf(stderr, "\n%s\n", s);
  free(s);
  cJSON_Delete(records);
}

static void test_wrap_words_never_cuts_a_word(void) {
  const char *label = "static partition=hash  fast_local_access=false";
  static const struct {
    size_t width;
    const char *want;
  } cases[] = {
      {80, "static partition=hash fast_local_access=false"},
      {21, "static partition=hash\nfast_local_access=false"},
      {20, "static\npartition=hash\nfast_local_access=false"},
      {3, "static\npartition=hash\nfast_local_access=false"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *w = exp_wrap_words(label, cases[i].width);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_STRING_EQUAL(w, cases[i].want);
    free(w);
  }
  char *w = exp_wrap_words("", 10);
  CU_ASSERT_STRING_EQUAL(w, "");
  free(w);
}

/* ------------------------------------------------------------ drawing */

/* A stand-in for gnuplot in dir: a shell script that writes what `files`
 * says ("svg", "svg png") for the plot its argument names, then exits with
 * `status`. Its path; caller frees. */
static char *fake_gnuplot(const char *dir, const char *files, int status) {
  char *path = malloc(1024);
  snprintf(path, 1024, "%s/fake-gnuplot", dir);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, "#!/bin/sh\nname=$(basename \"$1\" .gp)\nfor ext in %s; do echo drawn > \"$name.$ext\"; done\n"
             "exit %d\n", files, status);
  fclose(f);
  chmod(path, 0755);
  return path;
}

/* Draws plots with gnuplot program prog; the status, and the log in *log. */
static int draw_with(const exp_plot_list *plots, const cJSON *records, const char *dir,
                     const char *prog, char **log) {
  size_t len = 0;
  FILE *f = open_memstream(log, &len);
  int rc = exp_plots_draw(plots, "exp", records, dir, prog, f);
  fclose(f);
  return rc;
}

static void test_draw_svg_png_and_missing_gnuplot(void) {
  char *dir = unit_temp_dir();
  cJSON *records = scaling_records();
  cJSON *pj = unit_json("[{'name': 'lines', 'x': 'cluster.nodes', 'y': 'time_s', 'series': 'policy.type'},"
                      " {'name': 'bars', 'x': 'policy.type', 'y': 'time_s'}]");
  exp_plot_list plots;
  exp_errors e;
  exp_errors_init(&e);
  CU_ASSERT_TRUE(exp_plots_parse(pj, &plots, &e));
  char *buf = NULL;
  CU_ASSERT_EQUAL(draw_with(&plots, records, dir, "/nonexistent/gnuplot", &buf), EXP_EXIT_PLOTS);
  CU_ASSERT_TRUE(unit_exists(dir, "lines.gp")); /* the scripts are still written */
  CU_ASSERT_TRUE(unit_exists(dir, "bars.gp"));
  CU_ASSERT_FALSE(unit_exists(dir, "lines.svg"));
  CU_ASSERT_TRUE(unit_contains(buf, "/nonexistent/gnuplot is not installed"));
  free(buf);
  /* A gnuplot that draws the svg but not the PNG has not drawn the plot. */
  char *fake = fake_gnuplot(dir, "svg", 0);
  CU_ASSERT_EQUAL(draw_with(&plots, records, dir, fake, &buf), EXP_EXIT_PLOTS);
  CU_ASSERT_TRUE(unit_contains(buf, "pslab: plot lines not drawn: "));
  CU_ASSERT_TRUE(unit_contains(buf, "wrote no "));
  CU_ASSERT_TRUE(unit_contains(buf, "/lines.png (script: "));
  free(buf);
  free(fake);
  /* One without pngcairo stops the script with status 4: said plainly. */
  fake = fake_gnuplot(dir, "svg", 4);
  CU_ASSERT_EQUAL(draw_with(&plots, records, dir, fake, &buf), EXP_EXIT_PLOTS);
  CU_ASSERT_TRUE(unit_contains(buf, "has no pngcairo terminal, so the PNG was not drawn"));
  free(buf);
  free(fake);
  fake = fake_gnuplot(dir, "svg png", 0);
  CU_ASSERT_EQUAL(draw_with(&plots, records, dir, fake, &buf), EXP_EXIT_OK);
  CU_ASSERT_TRUE(unit_exists(dir, "bars.png"));
  free(buf);
  free(fake);
  if (has_gnuplot()) {
    CU_ASSERT_EQUAL(exp_plots_draw(&plots, "exp", records, dir, NULL, stderr), EXP_EXIT_OK);
    char *svg = unit_slurp(dir, "lines.svg"), *png = unit_slurp(dir, "bars.png");
    CU_ASSERT_TRUE(unit_contains(svg, "<svg"));
    CU_ASSERT_TRUE(png && strncmp(png, "\x89PNG", 4) == 0);
    free(svg);
    free(png);
    CU_ASSERT_TRUE(unit_exists(dir, "bars.svg"));
    CU_ASSERT_TRUE(unit_exists(dir, "lines.png"));
  } else {
    fprintf(stderr, "(gnuplot not installed: svg and png drawing not checked) ");
  }
  exp_plot_list_free(&plots);
  exp_errors_free(&e);
  cJSON_Delete(pj);
  cJSON_Delete(records);
  unit_remove_tree(dir);
  free(dir);
}

/* What gnuplot writes to stderr never reaches the terminal raw: a plot it
 * drew gets pslab's one line naming the plot ("drawn, but gnuplot warned",
 * its first line and how many others), a plot it failed has it in the
 * reason. */
static void test_draw_turns_gnuplot_warnings_into_one_line(void) {
  char *dir = unit_temp_dir();
  cJSON *records = scaling_records();
  cJSON *pj = unit_json("[{'name': 'lines', 'x': 'cluster.nodes', 'y': 'time_s', 'series': 'policy.type'}]");
  exp_plot_list plots;
  exp_errors e;
  exp_errors_init(&e);
  CU_ASSERT_TRUE(exp_plots_parse(pj, &plots, &e));
  char path[1024];
  snprintf(path, sizeof path, "%s/warning-gnuplot", dir);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, "#!/bin/sh\nname=$(basename \"$1\" .gp)\necho drawn > \"$name.svg\"\n"
             "echo drawn > \"$name.png\"\n"
             "echo '\"lines.gp\" line 9: warning: Warning - difficulty fitting plot titles into key' >&2\n"
             "echo '\"lines.gp\" line 9: warning: Warning - difficulty fitting plot titles into key' >&2\n"
             "echo 'Warning: empty x range [4:4], adjusting to [3.96:4.04]' >&2\n"
             "exit ${FAKE_STATUS:-0}\n");
  fclose(f);
  chmod(path, 0755);
  char *buf = NULL;
  CU_ASSERT_EQUAL(draw_with(&plots, records, dir, path, &buf), EXP_EXIT_OK);
  CU_ASSERT_TRUE(unit_contains(buf, "pslab: plot lines drawn, but gnuplot warned: \"lines.gp\" line 9: "
                                    "warning: Warning - difficulty fitting plot titles into key (and 1 "
                                    "more line) (script: "));
  CU_ASSERT_EQUAL(strchr(buf, '\n') - buf + 1, (long)strlen(buf)); /* one line */
  if (!unit_contains(buf, "gnuplot warned")) fprintf(stderr, "\n%s\n", buf);
  free(buf);
  setenv("FAKE_STATUS", "1", 1);
  CU_ASSERT_EQUAL(draw_with(&plots, records, dir, path, &buf), EXP_EXIT_PLOTS);
  unsetenv("FAKE_STATUS");
  CU_ASSERT_TRUE(unit_contains(buf, "pslab: plot lines not drawn: "));
  CU_ASSERT_TRUE(unit_contains(buf, " exited with status 1: \"lines.gp\" line 9: warning: "));
  free(buf);
  exp_plot_list_free(&plots);
  exp_errors_free(&e);
  cJSON_Delete(pj);
  cJSON_Delete(records);
  /* The real gnuplot, on plots it used to warn about: one x value (an
   * empty x range), every y 0 (an empty y range), many long legend entries
   * (titles that did not fit the key): nothing to say. */
  if (!has_gnuplot()) {
    fprintf(stderr, "(gnuplot not installed: its warnings not checked) ");
    unit_remove_tree(dir);
    free(dir);
    return;
  }
  records = cJSON_CreateArray();
  for (uint32_t i = 0; i < 24; i++) {
    char sweep[160], config[200];
    snprintf(sweep, sizeof sweep, "{'policy.note': 'a policy with a long name, number %u', "
             "'consistency.staleness': %u}", i % 12, i);
    snprintf(config, sizeof config, "{'cluster': {'nodes': 4}, 'policy': {'note': 'a policy with "
             "a long name, number %u'}, 'consistency': {'staleness': %u}}", i % 12, i);
    cJSON_AddItemToArray(records, record(i + 1, 0, sweep, config, "{'time_s': 1, 'relocations': 0}",
                                         NULL));
  }
  pj = unit_json("[{'name': 'one', 'x': 'cluster.nodes', 'y': 'time_s'},"
                 " {'name': 'zero', 'x': 'consistency.staleness', 'y': 'relocations', 'logx': true}]");
  exp_errors_init(&e);
  CU_ASSERT_TRUE(exp_plots_parse(pj, &plots, &e));
  CU_ASSERT_EQUAL(draw_with(&plots, records, dir, "gnuplot", &buf), EXP_EXIT_OK);
  CU_ASSERT_STRING_EQUAL(buf, "");
  char *one = unit_slurp(dir, "one.gp");
  CU_ASSERT_TRUE(unit_contains(one, "set xrange [3.6:4.4]\n"));
  CU_ASSERT_FALSE(unit_contains(one, "autoscale xfix"));
  free(one);
  char *zero = unit_slurp(dir, "zero.gp");
  CU_ASSERT_TRUE(unit_contains(zero, "set yrange [0:1]\n"));
  free(zero);
  free(buf);
  exp_plot_list_free(&plots);
  exp_errors_free(&e);
  cJSON_Delete(pj);
  cJSON_Delete(records);
  unit_remove_tree(dir);
  free(dir);
}

static void test_plot_dir_redraws_from_files(void) {
  char *dir = unit_temp_dir();
  char path[1024];
  snprintf(path, sizeof path, "%s/spec.json", dir);
  FILE *f = fopen(path, "w");
  fputs("{\"name\": \"exp\", \"plots\": [{\"name\": \"again\", \"x\": \"cluster.nodes\", "
        "\"y\": \"time_s\"}]}", f);
  fclose(f);
  snprintf(path, sizeof path, "%s/runs.jsonl", dir);
  f = fopen(path, "w");
  cJSON *records = scaling_records();
  for (cJSON *r = records->child; r; r = r->next) exp_jsonl_append(f, r);
  fclose(f);
  int want = has_gnuplot() ? EXP_EXIT_OK : EXP_EXIT_PLOTS;
  CU_ASSERT_EQUAL(exp_plot_dir(dir, NULL, stderr), want);
  CU_ASSERT_TRUE(unit_exists(dir, "again.gp"));
  if (want == EXP_EXIT_OK) {
    CU_ASSERT_TRUE(unit_exists(dir, "again.svg"));
    CU_ASSERT_TRUE(unit_exists(dir, "again.png"));
  }
  /* Without runs.jsonl: a failure that says so. */
  remove(path);
  char *buf = NULL;
  size_t len = 0;
  FILE *log = open_memstream(&buf, &len);
  CU_ASSERT_EQUAL(exp_plot_dir(dir, NULL, log), EXP_EXIT_FAILED);
  fclose(log);
  CU_ASSERT_TRUE(unit_contains(buf, "runs.jsonl: cannot read"));
  free(buf);
  cJSON_Delete(records);
  unit_remove_tree(dir);
  free(dir);
}

/* ---------------------------------------------------- metric reference */

/* experiments/SPEC.md's metric list is `pslab metrics --markdown`, so the
 * reference and the metric table cannot drift apart. */
static void test_spec_md_lists_the_metric_table(void) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/experiments", unit_source_dir());
  char *doc = unit_slurp(dir, "SPEC.md");
  CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
  const char *begin = "<!-- metrics: generated by `pslab metrics --markdown`; do not edit by hand -->\n";
  char *from = strstr(doc, begin), *to = from ? strstr(from, "<!-- end of metrics -->") : NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(to);
  from += strlen(begin);
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  exp_metrics_print(mem, true);
  fclose(mem);
  bool same = (size_t)(to - from) == len && memcmp(from, text, len) == 0;
  if (!same)
    fprintf(stderr, "\n  experiments/SPEC.md's metric list differs from the metric table: "
                    "replace it with the output of `build/pslab metrics --markdown`\n");
  CU_ASSERT_TRUE(same);
  /* Every metric has its row, and the text form names them all too. */
  size_t n;
  const run_metric *t = run_metric_table(&n);
  for (size_t i = 0; i < n; i++) {
    char row[96];
    snprintf(row, sizeof row, "| `%s` |", t[i].name);
    CU_ASSERT_TRUE(unit_contains(text, row));
  }
  free(text);
  free(doc);
}

/* ------------------------------------------------------------ runner */

/* Stands in for the simulator in each forked child: 2 nodes fail, 3 nodes
 * crash. */
static cJSON *fake_simulate(const exp_backend_job *a, char *err, size_t errlen) {
  uint32_t nodes = a->cluster->sim.nodes;
  if (a->progress) a->progress(a->progress_ctx, 0.5, 0.5);
  if (nodes == 2) {
    fprintf(stderr, "fake: failing on purpose\n");
    snprintf(err, errlen, "boom on %u nodes", nodes);
    return NULL;
  }
  if (nodes == 5) { /* a run that would never end: --timeout ends it */
    for (;;) pause();
  }
  if (nodes == 3) {
    fprintf(stderr, "fake: about to crash\n");
    fflush(stderr);
    raise(SIGKILL);
  }
  cJSON *m = cJSON_CreateObject();
  cJSON_AddNumberToObject(m, "time_s", 1.0 / nodes);
  cJSON_AddNumberToObject(m, "steps", 100.0 * nodes);
  cJSON_AddNumberToObject(m, "seed_seen", (double)a->seed);
  const cJSON *keys = cJSON_GetObjectItem(a->workload, "keys");
  cJSON_AddNumberToObject(m, "keys_seen", keys ? keys->valuedouble : -1);
  cJSON_AddNumberToObject(m, "bandwidth_seen", a->cluster->sim.bandwidth);
  return m;
}

static const char *const fake_keys[] = {"nodes", NULL};
static const exp_backend fake_backends[] = {{"sim", "a stand-in", fake_keys, fake_simulate}};

static exp_spec *runner_spec(const char *nodes) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"name\": \"fake\", \"seed\": 9, \"cluster\": {\"nodes\": 1, "
           "\"network\": {\"bandwidth\": \"8Mbps\"}}, "
           "\"workload\": {\"type\": \"zipf\", \"keys\": 100, \"steps_per_worker\": 10}, "
           "\"policy\": {\"type\": \"static\"}, \"sweep\": {\"cluster.nodes\": %s}, "
           "\"plots\": [{\"name\": \"t\", \"x\": \"cluster.nodes\", \"y\": \"time_s\"}]}",
           nodes);
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = exp_spec_parse(text, strlen(text), "fake.json", ".", NULL, 0, &e);
  exp_errors_print(&e, stderr);
  exp_errors_free(&e);
  CU_ASSERT_PTR_NOT_NULL(s);
  return s;
}

static void test_runner_goes_on_after_failures(void) {
  exp_spec *spec = runner_spec("[1, 2, 3, 4]");
  if (!spec) return;
  char *dir = unit_temp_dir();
  char *log_text = NULL, *table = NULL;
  size_t log_len = 0, table_len = 0;
  exp_runner_options o;
  exp_runner_options_default(&o);
  o.out_dir = dir;
  o.progress_tty = 0;
  o.backends = fake_backends;
  o.n_backends = 1;
  const char *const metrics[] = {"steps", "time_s", NULL};
  o.metrics = metrics;
  o.log = open_memstream(&log_text, &log_len);
  o.out = open_memstream(&table, &table_len);
  int rc = exp_run_experiment(spec, &o);
  fclose(o.log);
  fclose(o.out);
  CU_ASSERT_EQUAL(rc, EXP_EXIT_FAILED);

  exp_errors e;
  exp_errors_init(&e);
  char path[1024];
  snprintf(path, sizeof path, "%s/runs.jsonl", dir);
  cJSON *records = exp_jsonl_load(path, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(records);
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(records), 4);
  cJSON *r1 = cJSON_GetArrayItem(records, 0), *r2 = cJSON_GetArrayItem(records, 1);
  cJSON *r3 = cJSON_GetArrayItem(records, 2), *r4 = cJSON_GetArrayItem(records, 3);
  /* What the child received: the typed cluster, the workload, the seed. */
  CU_ASSERT_EQUAL(exp_path_get(r1, "metrics.time_s")->valuedouble, 1);
  CU_ASSERT_EQUAL(exp_path_get(r1, "metrics.seed_seen")->valuedouble, 9);
  CU_ASSERT_EQUAL(exp_path_get(r1, "metrics.keys_seen")->valuedouble, 100);
  CU_ASSERT_EQUAL(exp_path_get(r1, "metrics.bandwidth_seen")->valuedouble, 1e6);
  CU_ASSERT_TRUE(cJSON_IsNumber(exp_path_get(r1, "metrics.wall_s")));
  CU_ASSERT_TRUE(exp_path_get(r1, "metrics.wall_s")->valuedouble >= 0);
  /* The failure and the crash, each said, and the run after them done. */
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(r2, "error")->valuestring, "boom on 2 nodes");
  CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(r2, "metrics")));
  const char *crash = cJSON_GetObjectItem(r3, "error")->valuestring;
  CU_ASSERT_TRUE(unit_contains(crash, "the simulation crashed (signal 9"));
  CU_ASSERT_TRUE(unit_contains(crash, "its log ends with: fake: about to crash"));
  CU_ASSERT_EQUAL(exp_path_get(r4, "metrics.time_s")->valuedouble, 0.25);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(r4, "sweep"), "cluster.nodes")->valuedouble, 4);

  CU_ASSERT_TRUE(unit_contains(log_text, "[run 1/4] cluster.nodes=1: started\n"));
  CU_ASSERT_TRUE(unit_contains(log_text, "[run 1/4] cluster.nodes=1: done, time 1 s, wall "));
  CU_ASSERT_TRUE(unit_contains(log_text, "[run 2/4] cluster.nodes=2: FAILED: boom on 2 nodes\n"));
  CU_ASSERT_TRUE(unit_contains(log_text, "[run 3/4] cluster.nodes=3: FAILED: the simulation crashed"));
  CU_ASSERT_TRUE(unit_contains(log_text, "pslab: 2 of 4 runs failed"));
  CU_ASSERT_TRUE(unit_contains(table, "cluster.nodes"));
  CU_ASSERT_TRUE(unit_contains(table, "failed"));

  /* One row per run, and (each point ran once) one per point; the table's
   * columns as --metrics said. */
  const char *files[] = {"summary.csv", "runs.csv"};
  for (size_t i = 0; i < 2; i++) {
    char *csv = unit_slurp(dir, files[i]);
    size_t lines = 0;
    for (char *p = csv; p && *p; p++) lines += *p == '\n';
    CU_ASSERT_EQUAL(lines, 5);
    free(csv);
  }
  CU_ASSERT_TRUE(unit_contains(table, "runs ok   steps  time_s\n"));
  CU_ASSERT_TRUE(unit_contains(table, "\n4                  1/1     400  250 ms\n"));
  CU_ASSERT_TRUE(unit_contains(table, "\n2                  0/1  failed       -\n"));
  char *saved = unit_slurp(dir, "spec.json");
  cJSON *saved_json = saved ? cJSON_Parse(saved) : NULL;
  CU_ASSERT_TRUE(cJSON_Compare(saved_json, exp_spec_json(spec), true));
  cJSON_Delete(saved_json);
  free(saved);
  /* Logs are kept only for runs that printed something. */
  CU_ASSERT_FALSE(unit_exists(dir, "logs/run-1.log"));
  CU_ASSERT_TRUE(unit_exists(dir, "logs/run-2.log"));
  CU_ASSERT_TRUE(unit_exists(dir, "logs/run-3.log"));
  CU_ASSERT_TRUE(unit_exists(dir, "t.gp"));

  cJSON_Delete(records);
  exp_errors_free(&e);
  unit_remove_tree(dir);
  free(dir);
  free(log_text);
  free(table);
  exp_spec_free(spec);
}

/* Runs spec with the stand-in backend, not on a terminal, with the
 * progress period and timeout given; the log in *log_text. */
static int run_fake(exp_spec *spec, const char *dir, double period, double timeout,
                    char **log_text) {
  char *table = NULL;
  size_t log_len = 0, table_len = 0;
  exp_runner_options o;
  exp_runner_options_default(&o);
  o.out_dir = dir;
  o.progress_tty = 0;
  o.progress_period_s = period;
  o.timeout_s = timeout;
  o.backends = fake_backends;
  o.n_backends = 1;
  o.gnuplot = "/nonexistent/gnuplot";
  o.log = open_memstream(log_text, &log_len);
  o.out = open_memstream(&table, &table_len);
  int rc = exp_run_experiment(spec, &o);
  fclose(o.log);
  fclose(o.out);
  free(table);
  return rc;
}

static void test_runner_progress_lines_off_a_terminal(void) {
  exp_spec *spec = runner_spec("[1]");
  if (!spec) return;
  char *dir = unit_temp_dir();
  char *log_text = NULL;
  /* A run longer than the period (here a nanosecond) gets a line per
   * period with its fraction done, its time and its wall time so far. */
  CU_ASSERT_EQUAL(run_fake(spec, dir, 1e-9, 0, &log_text), EXP_EXIT_PLOTS);
  CU_ASSERT_TRUE(unit_contains(log_text, "[run 1/1] cluster.nodes=1: started\n"
                                         "[run 1/1] cluster.nodes=1: 50% done, time 0.5 s, "
                                         "wall "));
  free(log_text);
  log_text = NULL;
  /* By default a line every 10 s: none for a run this short. */
  CU_ASSERT_EQUAL(run_fake(spec, dir, 0, 0, &log_text), EXP_EXIT_PLOTS);
  CU_ASSERT_FALSE(unit_contains(log_text, "% done"));
  CU_ASSERT_TRUE(unit_contains(log_text, "[run 1/1] cluster.nodes=1: done"));
  free(log_text);
  unit_remove_tree(dir);
  free(dir);
  exp_spec_free(spec);
}

static void test_runner_timeout_ends_a_run(void) {
  exp_spec *spec = runner_spec("[1, 5, 4]");
  if (!spec) return;
  char *dir = unit_temp_dir();
  char *log_text = NULL;
  /* The run on 5 nodes never ends; the limit ends it, the others run. */
  CU_ASSERT_EQUAL(run_fake(spec, dir, 0, 2, &log_text), EXP_EXIT_FAILED);
  CU_ASSERT_TRUE(unit_contains(log_text, "[run 2/3] cluster.nodes=5: FAILED: timed out after "
                                         "2 s\n"));
  CU_ASSERT_TRUE(unit_contains(log_text, "pslab: 1 of 3 runs failed"));
  exp_errors e;
  exp_errors_init(&e);
  char path[1024];
  snprintf(path, sizeof path, "%s/runs.jsonl", dir);
  cJSON *records = exp_jsonl_load(path, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(records);
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(records), 3);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(records, 1), "error")->valuestring,
                         "timed out after 2 s");
  CU_ASSERT_EQUAL(exp_path_get(cJSON_GetArrayItem(records, 0), "metrics.time_s")->valuedouble, 1);
  CU_ASSERT_EQUAL(exp_path_get(cJSON_GetArrayItem(records, 2), "metrics.time_s")->valuedouble,
                  0.25);
  cJSON_Delete(records);
  exp_errors_free(&e);
  free(log_text);
  unit_remove_tree(dir);
  free(dir);
  exp_spec_free(spec);
}

/* A run of two stages, each probed alone: the first's steps dear (2.1 CPU
 * s), the second's cheap (0.2 CPU s). Its estimate is the setup plus each
 * stage's own steps, not the first stage's rate taken to the whole run. */
static void test_estimate_stages(void) {
  bool lower;
  const exp_calib_point dear[] = {{0.4, 0, 0, 0.1}, {1.6, 0.01, 0.1, 0.4},
                                  {2.4, 0.02, 0.2, 0.6}, {3.2, 0.03, 0.3, 0.8}};
  const exp_calib_point cheap[] = {{0.4, 0, 0, 0.1}, {0.5, 0.002, 0.1, 0.12},
                                   {0.6, 0.004, 0.2, 0.14}, {0.7, 0.006, 0.3, 0.16}};
  exp_calibration c[] = {{dear, 4, 3.3, false, NAN}, {cheap, 4, 0.8, false, NAN}};
  exp_stage_cost fixed[2] = {{0, 0}, {0, 0}};
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_stages(c, fixed, 2, 1, false, 0, &lower),
                         0.4 + 2.1 + 0.2, 1e-12);
  CU_ASSERT_FALSE(lower);
  /* At 4 wall s per CPU s: the steps four times as long, the setup not. */
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_stages(c, fixed, 2, 4, false, 0, &lower),
                         0.4 + (2.1 + 0.2) * 4, 1e-12);
  /* Real: each stage's simulated time, 0.03 s at 30% and 0.006 s at 30%. */
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_stages(c, fixed, 2, 1, true, 0, &lower),
                         0.4 + 0.1 + 0.02, 1e-12);
  /* The second "auto": 4 simulations of the setup and the first stage
   * whole, then prefixes of half its steps in all. */
  exp_stage_cost second_auto[2] = {{0, 0}, {4, 0.5}};
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_stages(c, second_auto, 2, 1, false, 0, &lower),
                         0.4 + 2.1 + 0.2 + 4 * (0.4 + 2.1) + 0.5 * 0.2, 1e-12);
  /* On the real backend those simulations are still the simulator's. */
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_stages(c, second_auto, 2, 1, true, 0, &lower),
                         0.4 + 0.1 + 0.02 + 4 * (0.4 + 2.1) + 0.5 * 0.2, 1e-12);
  /* The second stage's probe saw no step in the 0.5 s after its setup: at
   * least 0.5 s times 10 (per_first), and only a lower bound. */
  c[1].n = 1;
  c[1].elapsed_s = 0.9;
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_stages(c, fixed, 2, 1, false, 10, &lower),
                         0.4 + 2.1 + 0.5 * 10, 1e-12);
  CU_ASSERT_TRUE(lower);
  /* What the scheduler simulates for an auto stage of 800 steps on 8
   * workers: 1, 2, 4 and 8 workers, 50 steps each. */
  double prefix;
  CU_ASSERT_EQUAL(exp_stages_trials(800, 8, &prefix), 4);
  CU_ASSERT_DOUBLE_EQUAL(prefix, 50 * (1 + 2 + 4 + 8), 1e-12);
  CU_ASSERT_EQUAL(exp_stages_trials(60, 8, &prefix), 4); /* 8 x 8 steps: 60 in all */
  CU_ASSERT_DOUBLE_EQUAL(prefix, 50 + 30 * 2 + 15 * 4 + 8 * 8, 1e-12);
}

/* The load of the last minute against the one the probes met: on 2
 * processors, 3 tasks runnable during the calibration (1.5 wall s per CPU
 * s) and a load average of 4.91 (with the run, 2.955) make the runs 1.97
 * times as slow per CPU second as the probes were; a load that held, or
 * tasks fewer than the processors, change nothing; the ratio is bounded. */
static void test_estimate_load_factor(void) {
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_load_factor(3, 4.91, 2), (5.91 / 2) / 1.5, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_load_factor(5, 4, 2), 1, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_load_factor(1, 0.2, 2), 1, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_load_factor(2, 0.5, 4), 1, 1e-12);
  /* Busier during the calibration than over the minute: faster runs. */
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_load_factor(6, 3, 2), (4.0 / 2) / 3, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_load_factor(1, 40, 2), 4, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_load_factor(40, 0, 2), 0.25, 1e-12);
}

/* The estimate's arithmetic on calibrations made up by hand. */
static void test_estimate_arithmetic(void) {
  bool lower;
  /* Wall seconds only (no CPU seconds, no report at 0): the line through
   * the first and last reports, 0.5 s + 5 s a run, reports at 10% and 30%
   * (those at 0 and 1 say nothing of the rate). */
  const exp_calib_point two[] = {{0.2, 0, 0.1, NAN}, {1.0, 0.01, 0.1, NAN},
                                 {1.5, 0.02, 0.2, NAN}, {2.0, 0.03, 0.3, NAN},
                                 {2.1, 0.1, 1, NAN}};
  exp_calibration c = {two + 1, 4, 2.2, false, NAN};
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_run(&c, 3, false, &lower), 5.5, 1e-12);
  CU_ASSERT_FALSE(lower);
  /* Real: that setup plus the simulated time, 0.03 s at 30%. */
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_run(&c, 3, true, &lower), 0.5 + 0.1, 1e-12);
  CU_ASSERT_FALSE(lower);
  /* Finished within the calibration: its own wall time (real: setup plus
   * its time_s). */
  c.finished = true;
  c.time_s = 0.04;
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_run(&c, 3, false, &lower), 2.2, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_run(&c, 3, true, &lower), 0.54, 1e-12);
  /* One report: wall / fraction. */
  exp_calibration one = {two + 1, 1, 1.2, false, NAN};
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_run(&one, 3, false, &lower), 10, 1e-12);
  CU_ASSERT_FALSE(lower);
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_run(&one, 3, true, &lower), 0.1, 1e-12);
  /* None: the time it was given, a lower bound. */
  exp_calibration none = {two + 4, 0, 0.7, false, NAN};
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_run(&none, 3, false, &lower), 0.7, 1e-12);
  CU_ASSERT_TRUE(lower);
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_run(&none, 3, true, &lower), 0.7, 1e-12);
  CU_ASSERT_TRUE(lower);

  /* With the report at 0 (set up at 0.4 s, 0.1 CPU s) and CPU seconds: the
   * first report took 0.3 CPU s for 10% (warming up), then 0.2 CPU s per
   * 10%: 0.3 + 0.2 * 9 = 2.1 CPU s of steps, at 4 wall s per CPU s, plus the
   * setup. */
  const exp_calib_point cpu[] = {{0.4, 0, 0, 0.1}, {1.6, 0.01, 0.1, 0.4},
                                 {2.4, 0.02, 0.2, 0.6}, {3.2, 0.03, 0.3, 0.8}};
  exp_calibration cc = {cpu, 4, 3.3, false, NAN};
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_run(&cc, 4, false, &lower), 0.4 + 2.1 * 4, 1e-12);
  CU_ASSERT_FALSE(lower);
  /* The calibration's own load: 2.8 wall s for 0.7 CPU s from 0 to the last
   * report, 4 wall s per CPU s. */
  double wall, cpu_s;
  exp_calibration_span(&cc, &wall, &cpu_s);
  CU_ASSERT_DOUBLE_EQUAL(wall, 2.8, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(cpu_s, 0.7, 1e-12);
  /* A cost paid once in the second 10% (0.3 CPU s more): counted once (0.8
   * CPU s to the report at 20%), the rest at the rate between the last two
   * reports, 0.2 CPU s per 10%. */
  const exp_calib_point once[] = {{0.4, 0, 0, 0.1}, {1.6, 0.01, 0.1, 0.4},
                                  {2.4, 0.02, 0.2, 0.9}, {3.2, 0.03, 0.3, 1.1}};
  exp_calibration oc = {once, 4, 3.3, false, NAN};
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_run(&oc, 4, false, &lower), 0.4 + (0.8 + 0.2 * 8) * 4,
                         1e-12);
  /* Without that rate, in wall seconds: 1.2 s to the first, 0.8 s per 10%. */
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_run(&cc, 0, false, &lower), 0.4 + 1.2 + 0.8 * 9, 1e-12);
  /* One report after the setup: its own rate, 0.3 CPU s per 10%. */
  cc.n = 2;
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_run(&cc, 4, false, &lower), 0.4 + 3.0 * 4, 1e-12);
  /* Real: the setup to the first step, plus the simulated time. */
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_run(&cc, 4, true, &lower), 0.4 + 0.1, 1e-12);
  /* How many times its first report's time (1.2 s after the setup) a run
   * came to: (12.4 - 0.4) / 1.2 = 10. */
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_per_first(&cc, 12.4), 10, 1e-12);
  /* Only the report at 0: a lower bound, the time it was given; and since
   * no first report came in the 2.9 s after the setup, where another run's
   * came to 10 times its first report's time: at least 0.4 + 2.9 * 10. */
  cc.n = 1;
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_run(&cc, 4, false, &lower), 3.3, 1e-12);
  CU_ASSERT_TRUE(lower);
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_per_first(&cc, 3.3), 0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_floor(&cc, 10), 0.4 + 2.9 * 10, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_floor(&cc, 0), 3.3, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_floor(&oc, 10), 3.3, 1e-12); /* it gave reports */
  exp_calibration_span(&cc, &wall, &cpu_s);
  CU_ASSERT_DOUBLE_EQUAL(wall + cpu_s, 0, 1e-12);

  /* The order of the points probed: every one once, the last axis's values
   * all among the first that many (4 x 3, 4 x 5, 2 x 2 x 4). */
  static const size_t axes[][3] = {{4, 3, 1}, {4, 5, 1}, {2, 2, 4}, {1, 1, 1}, {2, 1, 1}};
  for (size_t a = 0; a < sizeof axes / sizeof axes[0]; a++) {
    size_t n = axes[a][0] * axes[a][1] * axes[a][2], last = axes[a][2] > 1 ? axes[a][2] : axes[a][1];
    bool seen[64] = {false}, inner[8] = {false};
    for (size_t j = 0; j < n; j++) {
      size_t i = exp_estimate_order(n, j);
      CU_ASSERT_FATAL(i < n);
      CU_ASSERT_FALSE(seen[i]);
      seen[i] = true;
      if (j < last) inner[i % last] = true;
    }
    for (size_t v = 0; v < last; v++) CU_ASSERT_TRUE(inner[v]);
  }

  /* The sweep: each point's estimate times its runs, the point not
   * calibrated counting the mean of the others, (10 + 20) / 2. */
  const double est[] = {10, 0, 20};
  const bool calibrated[] = {true, false, true};
  const size_t runs[] = {3, 2, 1};
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_total(est, NULL, calibrated, runs, 3), 30 + 30 + 20,
                         1e-12);
  /* With works: the mean per unit of work, (10 / 100 + 20 / 100) / 2,
   * times its own work 400. */
  const double work[] = {100, 400, 100};
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_total(est, work, calibrated, runs, 3), 30 + 2 * 60 + 20,
                         1e-12);
  /* Its work unknown: the mean again. */
  const double unknown[] = {100, -1, 100};
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_total(est, unknown, calibrated, runs, 3), 30 + 30 + 20,
                         1e-12);
  /* A point that gave only a lower bound (12 s or 40 s, no report after its
   * setup): the others' mean where that is more, else the bound. */
  const double floor12[] = {10, 12, 20}, floor40[] = {10, 40, 20};
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_total(floor12, NULL, calibrated, runs, 3), 30 + 30 + 20,
                         1e-12);
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_total(floor40, NULL, calibrated, runs, 3), 30 + 80 + 20,
                         1e-12);
  /* None calibrated: the bounds alone. */
  const bool none_known[] = {false, false, false};
  CU_ASSERT_DOUBLE_EQUAL(exp_estimate_total(floor40, NULL, none_known, runs, 3),
                         30 + 80 + 20, 1e-12);
}

static void test_runner_progress_on_a_terminal(void) {
  exp_spec *spec = runner_spec("[1]");
  if (!spec) return;
  char *dir = unit_temp_dir();
  /* A log an earlier experiment left there goes. */
  char old_log[1024];
  snprintf(old_log, sizeof old_log, "%s/logs", dir);
  mkdir(old_log, 0777);
  snprintf(old_log, sizeof old_log, "%s/logs/run-7.log", dir);
  FILE *f = fopen(old_log, "w");
  fputs("old\n", f);
  fclose(f);
  char *log_text = NULL, *table = NULL;
  size_t log_len = 0, table_len = 0;
  exp_runner_options o;
  exp_runner_options_default(&o);
  o.out_dir = dir;
  o.progress_tty = 1;
  o.backends = fake_backends;
  o.n_backends = 1;
  o.gnuplot = "/nonexistent/gnuplot";
  o.log = open_memstream(&log_text, &log_len);
  o.out = open_memstream(&table, &table_len);
  int rc = exp_run_experiment(spec, &o);
  fclose(o.log);
  fclose(o.out);
  CU_ASSERT_EQUAL(rc, EXP_EXIT_PLOTS); /* runs fine, plot not drawn */
  CU_ASSERT_TRUE(unit_contains(log_text, "\r\033[K[run 1/1] cluster.nodes=1 sim t=0.5s 50%"));
  CU_ASSERT_FALSE(unit_contains(log_text, "started\n")); /* no per-run lines */
  CU_ASSERT_TRUE(unit_contains(log_text, "is not installed"));
  CU_ASSERT_FALSE(unit_exists(dir, "logs")); /* no run printed anything */
  unit_remove_tree(dir);
  free(dir);
  free(log_text);
  free(table);
  exp_spec_free(spec);
}

/* ------------------------------------------------------- divergence */

/* Records of runs whose training diverged (null from some epoch on, as
 * runs.jsonl holds NaN) draw a marker where their point would be: on lines,
 * on bars, on quality against time; a plot of only diverged runs is drawn
 * rather than refused. */
/* The two ends of the script's `set yrange [lo:hi]`; false without one. */
static bool yrange_of(const char *s, double *lo, double *hi) {
  const char *at = strstr(s, "set yrange [");
  if (!at) return false;
  char *end;
  *lo = strtod(at + 12, &end);
  if (*end != ':') return false;
  *hi = strtod(end + 1, &end);
  return *end == ']';
}

/* A quality or a loss is drawn on a y axis from its data with a margin of
 * 5% of their span each side (0 only when the margin would cross it; one
 * value gets a tenth of itself around it); a time keeps its axis from 0. */
static void test_script_quality_axis_from_the_data(void) {
  static const struct { const char *y; double a, b, lo, hi; } cases[] = {
      {"quality", 0.773, 0.788, 0.77225, 0.78875},
      {"epoch_quality", 0.773, 0.788, 0.77225, 0.78875},
      {"loss", 0.01, 1, 0, 1.0495},     /* the margin would cross 0 */
      {"quality", 0.8, 0.8, 0.796, 0.804}, /* one value */
      {"quality", -0.2, 0.4, -0.23, 0.43}, /* rho may be negative */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    cJSON *records = cJSON_CreateArray();
    double ys[] = {cases[c].a, cases[c].b};
    for (uint32_t i = 0; i < 2; i++) {
      char sweep[64], config[96], metrics[160];
      snprintf(sweep, sizeof sweep, "{'workload.lr': %u}", i + 1);
      snprintf(config, sizeof config, "{'workload': {'type': 'mf', 'lr': %u}}", i + 1);
      snprintf(metrics, sizeof metrics, "{'time_s': %u, 'quality': %g, 'loss': %g, "
               "'epoch_end_s': [1], 'epoch_quality': [%g]}", i + 1, ys[i], ys[i], ys[i]);
      cJSON_AddItemToArray(records, record(i + 1, 0, sweep, config, metrics, NULL));
    }
    char plot[160], err[256];
    snprintf(plot, sizeof plot, strcmp(cases[c].y, "epoch_quality") == 0
                 ? "[{'name': 'q', 'kind': 'quality_vs_time', 'series': 'workload.lr'}]"
                 : "[{'name': 'q', 'x': 'workload.lr', 'y': '%s'}]", cases[c].y);
    char *s = script_for(plot, records, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    double lo = NAN, hi = NAN;
    CU_ASSERT_TRUE(yrange_of(s, &lo, &hi));
    CU_ASSERT_DOUBLE_EQUAL(lo, cases[c].lo, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(hi, cases[c].hi, 1e-9);
    CU_ASSERT_FALSE(unit_contains(s, "[0:*]"));
    free(s);
    s = script_for("[{'name': 't', 'x': 'workload.lr', 'y': 'time_s'}]", records, err, sizeof err);
    CU_ASSERT_TRUE(s && unit_contains(s, "set yrange [0:*]\n"));
    free(s);
    cJSON_Delete(records);
  }
}

/* The quality axis and the title name the workload's measure and say which
 * way is better; runs of two measures keep the metric's words. */
static void test_script_quality_named_by_its_workload(void) {
  static const struct { const char *w1, *w2, *ylabel, *title; } cases[] = {
      {"{'type': 'mf', 'lr': 0.1}", "{'type': 'mf', 'lr': 0.2}", "RMSE (lower is better)",
       "exp: RMSE by workload.lr"},
      {"{'type': 'kge', 'lr': 0.1, 'quality': 'hits10'}", "{'type': 'kge', 'lr': 0.2, 'quality': 'hits10'}",
       "filtered Hits@10 (higher is better)", "exp: filtered Hits@10 by workload.lr"},
      {"{'type': 'kge', 'lr': 0.1, 'eval': 'sampled'}", "{'type': 'kge', 'lr': 0.2, 'eval': 'sampled'}",
       "sampled MRR (higher is better)", "exp: sampled MRR by workload.lr"},
      {"{'type': 'mf', 'lr': 0.1}", "{'type': 'dnn', 'lr': 0.2}", "quality",
       "exp: quality by workload.lr"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    cJSON *records = cJSON_CreateArray();
    const char *w[] = {cases[c].w1, cases[c].w2};
    for (uint32_t i = 0; i < 2; i++) {
      char sweep[64], config[128];
      snprintf(sweep, sizeof sweep, "{'workload.lr': %g}", 0.1 * (i + 1));
      snprintf(config, sizeof config, "{'workload': %s}", w[i]);
      cJSON_AddItemToArray(records, record(i + 1, 0, sweep, config,
                                           "{'quality': 0.8, 'epoch_end_s': [1], "
                                           "'epoch_quality': [0.8]}", NULL));
    }
    char err[256], want[160];
    const char *plots[] = {"[{'name': 'q', 'x': 'workload.lr', 'y': 'quality'}]",
                           "[{'name': 'q', 'kind': 'quality_vs_time', 'series': 'workload.lr'}]"};
    for (size_t k = 0; k < 2; k++) {
      char *s = script_for(plots[k], records, err, sizeof err);
      CU_ASSERT_PTR_NOT_NULL_FATAL(s);
      snprintf(want, sizeof want, "set ylabel \"%s\"\n", cases[c].ylabel);
      CU_ASSERT_TRUE(unit_contains(s, want));
      if (!unit_contains(s, want)) fprintf(stderr, "\n%s\n", s);
      snprintf(want, sizeof want, "set title \"%s\"\n", cases[c].title);
      CU_ASSERT_TRUE(k == 1 || unit_contains(s, want));
      free(s);
    }
    cJSON_Delete(records);
  }
}

/* Quality against training time ends where the runs ended: a dotted line
 * from each line's last epoch to its runs' time_s and final quality (the
 * mean over repeats), so that it reaches the time a plot of time_s shows;
 * not for a diverged run, nor when x is not the training time. */
static void test_script_quality_vs_time_reaches_the_end(void) {
  cJSON *records = cJSON_CreateArray();
  static const struct { int repeat; double t0, t1, q0, q1, end; } rows[] = {
      {0, 1, 2, 0.5, 0.25, 3}, {1, 3, 4, 0.5, 0.75, 5}};
  for (size_t i = 0; i < 2; i++) {
    char metrics[192];
    snprintf(metrics, sizeof metrics, "{'time_s': %g, 'quality': %g, 'epoch_end_s': [%g, %g], "
             "'epoch_quality': [%g, %g], 'epoch_time_s': [1, 1]}", rows[i].end, rows[i].q1,
             rows[i].t0, rows[i].t1, rows[i].q0, rows[i].q1);
    cJSON_AddItemToArray(records, record((uint32_t)i + 1, (uint32_t)rows[i].repeat,
                                         "{'policy.type': 'static'}",
                                         "{'policy': {'type': 'static'}}", metrics, NULL));
  }
  cJSON_AddItemToArray(records, record(3, 0, "{'policy.type': 'psld'}", "{'policy': {'type': 'psld'}}",
                                       "{'time_s': 7, 'quality': null, 'epoch_end_s': [1, 2], "
                                       "'epoch_quality': [0.5, null]}", NULL));
  char err[256];
  char *s = script_for("[{'name': 'q', 'kind': 'quality_vs_time'}]", records, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  /* static: last epoch at mean time 3, quality 0.5; its runs ended at mean
   * time 4 with mean quality 0.5. psld diverged: no end. */
  CU_ASSERT_TRUE(unit_contains(s, "$ends << EOD\n3 0.5 4 0.5 1\nEOD\n"));
  CU_ASSERT_TRUE(unit_contains(s, "$ends using ($3*xscale):($4*yscale):5 with points pointtype 6 "
                                  "linecolor variable title \"the run's end (time_s, evaluation "
                                  "included)\""));
  CU_ASSERT_TRUE(unit_contains(s, "with vectors nohead dashtype 3"));
  CU_ASSERT_FALSE(unit_contains(s, "unset key"));
  if (!unit_contains(s, "$ends << EOD\n3 0.5 4 0.5 1\n")) fprintf(stderr, "\n%s\n", s);
  free(s);
  /* Another x or y: no end. */
  s = script_for("[{'name': 'q', 'kind': 'quality_vs_time', 'y': 'epoch_time_s'}]", records, err,
                 sizeof err);
  CU_ASSERT_TRUE(s && !unit_contains(s, "$ends"));
  free(s);
  cJSON_Delete(records);
}

/* Many series: 8 colours, then the same colours with another dash pattern
 * and point shape (bars: a hatch), 32 line types in all; the legend's
 * entries all fit, the canvas taller for its rows and wider for its widest
 * entry. */
static void test_script_many_series_differ(void) {
  cJSON *records = cJSON_CreateArray();
  for (uint32_t i = 0; i < 20; i++) {
    char sweep[96], config[160];
    snprintf(sweep, sizeof sweep, "{'consistency.staleness': %u}", i);
    snprintf(config, sizeof config, "{'cluster': {'nodes': 2}, 'policy': {'type': 'static'}, "
             "'consistency': {'model': 'ssp', 'staleness': %u}}", i);
    cJSON_AddItemToArray(records, record(i + 1, 0, sweep, config, "{'time_s': 1}", NULL));
  }
  char err[256];
  char *s = script_for("[{'name': 'l', 'x': 'cluster.nodes', 'y': 'time_s', "
                       "'series': 'consistency.staleness'}]", records, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_TRUE(unit_contains(s, "set linetype 1 linecolor rgb \"#0072B2\" linewidth 2 dashtype 1 "
                                  "pointtype 7 pointsize 1.2\n"));
  CU_ASSERT_TRUE(unit_contains(s, "set linetype 9 linecolor rgb \"#0072B2\" linewidth 2 dashtype 2 "
                                  "pointtype 5 pointsize 1.2\n"));
  CU_ASSERT_TRUE(unit_contains(s, "set linetype 17 linecolor rgb \"#0072B2\" linewidth 2 dashtype 4 "));
  CU_ASSERT_TRUE(unit_contains(s, "set linetype cycle 32\n"));
  CU_ASSERT_TRUE(unit_contains(s, "with linespoints linetype 9 title \"8\""));
  CU_ASSERT_TRUE(unit_contains(s, "with linespoints linetype 20 title \"19\""));
  /* 20 short entries: 9 columns of 84 px (8 characters of 10.5) in 800,
   * 3 rows: one beyond the default's two, and one more row's room. */
  CU_ASSERT_TRUE(unit_contains(s, "set terminal svg size 800,540 "));
  free(s);
  s = script_for("[{'name': 'b', 'x': 'policy.type', 'y': 'time_s', "
                 "'series': 'consistency.staleness'}]", records, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_TRUE(unit_contains(s, "($8*yscale) linetype 3 title \"2\""));
  CU_ASSERT_TRUE(unit_contains(s, " linetype 9 fillstyle pattern 4 border title \"8\""));
  free(s);
  cJSON_Delete(records);
  /* Long entries: one column, a row each, and a wider canvas for the widest. */
  records = cJSON_CreateArray();
  for (uint32_t i = 0; i < 6; i++) {
    char sweep[160], config[200];
    snprintf(sweep, sizeof sweep, "{'policy.note': 'a rather long name of a policy that goes on "
             "and on and on and on and on, number %u'}", i);
    snprintf(config, sizeof config, "{'cluster': {'nodes': 2}, 'policy': {'note': 'a rather long "
             "name of a policy that goes on and on and on and on and on, number %u'}}", i);
    cJSON_AddItemToArray(records, record(i + 1, 0, sweep, config, "{'time_s': 1}", NULL));
  }
  s = script_for("[{'name': 'l', 'x': 'cluster.nodes', 'y': 'time_s', 'series': 'policy.note'}]",
                 records, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  /* 81 characters and 6 of a sample: 913.5 px, to 920; 6 rows, 5 of them
   * at 20 px each. */
  CU_ASSERT_TRUE(unit_contains(s, "set terminal svg size 920,600 "));
  free(s);
  cJSON_Delete(records);
}

static void test_script_marks_diverged_runs(void) {
  cJSON *records = cJSON_CreateArray();
  cJSON_AddItemToArray(records, record(1, 0, "{'workload.lr': 0.1}",
                                       "{'workload': {'type': 'mf', 'lr': 0.1}}",
                                       "{'time_s': 1, 'quality': 0.9, 'epoch_end_s': [1, 2, 3], "
                                       "'epoch_quality': [1.2, 1, 0.9], 'epoch_loss': [3, 2, 1]}",
                                       NULL));
  cJSON_AddItemToArray(records, record(2, 0, "{'workload.lr': 100}",
                                       "{'workload': {'type': 'mf', 'lr': 100}}",
                                       "{'time_s': 1, 'quality': null, 'epoch_end_s': [1, 2, 3], "
                                       "'epoch_quality': [1.5, null, null], "
                                       "'epoch_loss': [9, null, null]}", NULL));
  CU_ASSERT_EQUAL(exp_record_diverged(cJSON_GetArrayItem(records, 0)), 0);
  CU_ASSERT_EQUAL(exp_record_diverged(cJSON_GetArrayItem(records, 1)), 2);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(records, 1), "diverged_epoch")->valuedouble, 2);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(cJSON_GetArrayItem(records, 0), "diverged_epoch"));
  static const struct { const char *plots, *row; } cases[] = {
      /* lines: at x 100, above the highest point (0.9, and a range around
       * one value of a tenth of it: 0.9 + 0.08 * 0.09) */
      {"[{'name': 'q', 'x': 'workload.lr', 'y': 'quality'}]",
       "$diverged << EOD\n100 0.9072 \"diverged @ epoch 2\" 1\nEOD\n"},
      /* bars: the second of two bars in cluster 0 */
      {"[{'name': 'q', 'x': 'workload.type', 'y': 'quality', 'series': 'workload.lr'}]",
       "$diverged << EOD\n0.16666666666666666 0.9072 \"epoch 2\" 2\n"},
      /* per epoch: at the end of the epoch it diverged in, above 1.5 (the
       * data span 0.9 to 1.5: 1.5 + 0.08 * 0.6) */
      {"[{'name': 'q', 'kind': 'quality_vs_time'}]",
       "$diverged << EOD\n2 1.548 \"epoch 2\" 2\n"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char err[256];
    char *s = script_for(cases[i].plots, records, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_TRUE(unit_contains(s, cases[i].row));
    CU_ASSERT_TRUE(unit_contains(s, "$diverged using "));
    CU_ASSERT_TRUE(unit_contains(s, "title \"diverged (loss or quality became NaN or infinite)\""));
    CU_ASSERT_FALSE(unit_contains(s, "unset key"));
    if (!unit_contains(s, cases[i].row)) fprintf(stderr, "\n%s\n", s);
    free(s);
  }
  cJSON_DeleteItemFromArray(records, 0);
  char err[256];
  char *s = script_for("[{'name': 'q', 'x': 'workload.lr', 'y': 'quality'}]", records, err,
                       sizeof err);
  CU_ASSERT_PTR_NOT_NULL(s);
  CU_ASSERT_TRUE(unit_contains(s, "$diverged << EOD\n100 1 \"diverged @ epoch 2\" 1\nEOD\n"));
  free(s);
  cJSON_Delete(records);
}

/* A spec that diverges by construction (mf with a learning rate far too
 * high), on the simulator: "diverged" in the record, the progress, the
 * summary line, the table and the plot's script. */
static void test_runner_diverged_spec(void) {
  const char *text =
      "{\"name\": \"div\", \"seed\": 3, \"cluster\": {\"nodes\": 2, \"workers_per_node\": 1}, "
      "\"workload\": {\"type\": \"mf\", \"rows\": 200, \"cols\": 100, \"nnz\": 2000, "
      "\"rank\": 4, \"lr\": 0.04, \"epochs\": 3, \"math\": \"real\"}, "
      "\"policy\": {\"type\": \"static\"}, \"sweep\": {\"workload.lr\": [0.04, 1000]}, "
      "\"plots\": [{\"name\": \"q\", \"x\": \"workload.lr\", \"y\": \"quality\"}]}";
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *spec = exp_spec_parse(text, strlen(text), "div.json", ".", NULL, 0, &e);
  exp_errors_print(&e, stderr);
  exp_errors_free(&e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(spec);
  char *dir = unit_temp_dir();
  char *log_text = NULL, *table = NULL;
  size_t log_len = 0, table_len = 0;
  exp_runner_options o;
  exp_runner_options_default(&o);
  o.out_dir = dir;
  o.progress_tty = 0;
  o.gnuplot = "/nonexistent/gnuplot";
  o.log = open_memstream(&log_text, &log_len);
  o.out = open_memstream(&table, &table_len);
  exp_run_experiment(spec, &o);
  fclose(o.log);
  fclose(o.out);
  char *jsonl = unit_slurp(dir, "runs.jsonl"), *gp = unit_slurp(dir, "q.gp");
  CU_ASSERT_TRUE(unit_contains(jsonl, "\"diverged_epoch\":1"));
  CU_ASSERT_TRUE(unit_contains(log_text, "workload.lr=1000: done, diverged @ epoch 1, time "));
  CU_ASSERT_TRUE(unit_contains(log_text, "pslab: 1 run ok, 1 diverged; results in "));
  CU_ASSERT_TRUE(unit_contains(table, "0/1, 1 diverged"));
  CU_ASSERT_TRUE(unit_contains(table, "diverged @ epoch 1"));
  CU_ASSERT_TRUE(unit_contains(gp, "\"diverged @ epoch 1\" 1\nEOD\n"));
  if (!unit_contains(table, "diverged @ epoch 1")) fprintf(stderr, "\n%s\n%s\n", log_text, table);
  free(jsonl);
  free(gp);
  unit_remove_tree(dir);
  free(dir);
  free(log_text);
  free(table);
  exp_spec_free(spec);
}

PSLAB_SUITE("results",
            {"record fields", test_record_fields},
            {"runs.jsonl round trip", test_jsonl_round_trip},
            {"runs.jsonl cut short, and written whole", test_jsonl_cut_short_and_written_whole},
            {"runs.jsonl: a short write is rolled back", test_jsonl_short_write_rolled_back},
            {"runs.csv columns and quoting", test_runs_csv_columns_and_quoting},
            {"results written whole", test_results_written_whole},
            {"stats against a hand computation", test_stats_against_a_hand_computation},
            {"summary.csv: one row per point, mean/max/sum", test_summary_one_row_per_point},
            {"summary.csv without a sweep", test_summary_without_sweep},
            {"script: lines for numeric x", test_script_lines_for_numeric_x},
            {"script: quality against time, per epoch", test_script_quality_vs_time},
            {"script: servers' load over time", test_script_servers_over_time},
            {"script: bars for string x", test_script_bars_for_string_x},
            {"script: error bars with repeats", test_script_error_bars_with_repeats},
            {"script: axis units", test_script_axis_units},
            {"script: distinct sweep points kept apart", test_script_keeps_distinct_sweep_points_apart},
            {"script: nested sweep values labelled", test_script_labels_nested_sweep_values},
            {"script: lines relabelled by sweep values", test_script_lines_relabelled_by_sweep_values},
            {"script: a png too", test_script_draws_a_png_too},
            {"script: no data is an error", test_script_without_data_is_an_error},
            {"labels of varying values", test_labels_of_varying_values},
            {"script: empty values labelled by what they mean", test_script_labels_empty_values},
            {"wrapping never cuts a word", test_wrap_words_never_cuts_a_word},
            {"draw: svg and png, gnuplot missing or without png", test_draw_svg_png_and_missing_gnuplot},
            {"plot DIR redraws from files", test_plot_dir_redraws_from_files},
            {"draw: gnuplot's warnings become one line", test_draw_turns_gnuplot_warnings_into_one_line},
            {"SPEC.md lists the metric table", test_spec_md_lists_the_metric_table},
            {"runner goes on after a failure and a crash", test_runner_goes_on_after_failures},
            {"runner progress on a terminal", test_runner_progress_on_a_terminal},
            {"runner progress lines off a terminal", test_runner_progress_lines_off_a_terminal},
            {"runner --timeout ends a run, the others go on", test_runner_timeout_ends_a_run},
            {"estimate: arithmetic on a made-up calibration", test_estimate_arithmetic},
            {"estimate: each stage from its own steps", test_estimate_stages},
            {"estimate: the load of the last minute", test_estimate_load_factor},
            {"script: diverged runs marked", test_script_marks_diverged_runs},
            {"script: quality named by its workload", test_script_quality_named_by_its_workload},
            {"script: many series differ, their legend fits", test_script_many_series_differ},
            {"script: a quality's y axis from its data", test_script_quality_axis_from_the_data},
            {"script: quality against time reaches the run's end", test_script_quality_vs_time_reaches_the_end},
            {"runner: a diverging spec says so", test_runner_diverged_spec})
