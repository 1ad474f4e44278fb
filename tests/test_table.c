/*
 * The table printed at the end of an experiment (experiments/results/table.c)
 * and what it is made of: values in engineering form with units
 * (format_quantity.c), the labels of sweep points (value_labels.c), the grid
 * and its wrapping of long labels (text_grid.c). Every case is a run record
 * or a value written here; no simulation runs.
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

static cJSON *record(uint32_t run, uint32_t repeat, const char *sweep, const char *metrics,
                     const char *error) {
  exp_run r = {.run = run, .repeat = repeat, .seed = 1, .sweep = unit_json(sweep),
               .config = unit_json("{}")};
  cJSON *rec = exp_record_new("exp", &r, metrics ? unit_json(metrics) : NULL, error);
  cJSON_Delete(r.sweep);
  cJSON_Delete(r.config);
  CU_ASSERT_PTR_NOT_NULL(rec);
  return rec;
}

/* The table of records, with plots (a JSON list, or NULL) and --metrics. */
static char *table_of(const cJSON *records, const char *plots_json,
                      const char *const *metrics) {
  exp_plot_list plots = {0};
  exp_errors e;
  exp_errors_init(&e);
  cJSON *pj = plots_json ? unit_json(plots_json) : NULL;
  if (pj) CU_ASSERT_TRUE(exp_plots_parse(pj, &plots, &e));
  exp_results res = {records, pj ? &plots : NULL, metrics};
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  exp_table_print(mem, &res);
  fclose(mem);
  exp_plot_list_free(&plots);
  exp_errors_free(&e);
  cJSON_Delete(pj);
  return buf;
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

/* --------------------------------------------------------- quantities */

static void test_quantities(void) {
  static const struct {
    double v;
    const char *unit, *want;
  } cases[] = {
      /* seconds: prefixes down to pico, and up */
      {0.217267, "s", "217 ms"}, {3.1e-6, "s", "3.1 us"}, {12.5, "s", "12.5 s"},
      {0.0489841, "s", "49 ms"}, {2.5e-9, "s", "2.5 ns"}, {1500, "s", "1.5 ks"},
      {2e-13, "s", "0.2 ps"}, {0, "s", "0 s"}, {-0.0042, "s", "-4.2 ms"},
      /* bytes: SI prefixes up (1000), none down */
      {278438656, "B", "278 MB"}, {1200, "B", "1.2 kB"}, {999, "B", "999 B"},
      {0.5, "B", "0.5 B"}, {2.49833e7, "B", "25 MB"}, {3e12, "B", "3 TB"},
      /* a share is a percentage */
      {0.118726, "share", "11.9 %"}, {0.91037, "share", "91 %"}, {1, "share", "100 %"},
      {0, "share", "0 %"}, {0.000123, "share", "0.0123 %"},
      /* a unit written as a word keeps its prefix apart */
      {147284, "steps/s", "147 k steps/s"}, {2.5e6, "steps/s", "2.5 M steps/s"},
      {1.5, "steps/s", "1.5 steps/s"}, {12.5, "clocks", "12.5 clocks"},
      /* counts and plain numbers */
      {719672, "", "720 k"}, {14.7, "", "14.7"}, {0.75, "", "0.75"}, {3, "", "3"},
      {0, "", "0"}, {-1234, "", "-1.23 k"}, {0.000123, "", "0.000123"},
      {1e21, "", "1000 E"}, {1e-7, "", "0.0000001"},
      /* rounding to 3 digits that reaches 1000 moves to the next prefix */
      {999.5, "", "1 k"}, {999.49, "", "999"}, {1000, "", "1 k"},
      {999999.5, "", "1 M"}, {999.5, "B", "1 kB"}, {0.9996, "s", "1 s"},
      {9.9996e-4, "s", "1 ms"}, {0.99949, "share", "99.9 %"},
      /* nothing to show */
      {NAN, "s", "-"}, {NAN, "", "-"}, {INFINITY, "B", "inf"}, {-INFINITY, "", "-inf"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[64];
    exp_format_quantity(cases[i].v, cases[i].unit, buf, sizeof buf);
    if (strcmp(buf, cases[i].want) != 0)
      fprintf(stderr, "\n%.17g %s: got \"%s\", want \"%s\"", cases[i].v, cases[i].unit, buf,
              cases[i].want);
    CU_ASSERT_STRING_EQUAL(buf, cases[i].want);
    CU_ASSERT_FALSE(unit_contains(buf, "e+") || unit_contains(buf, "e-")); /* never an exponent */
  }
}

static void test_intervals(void) {
  static const struct {
    double mean, half;
    const char *unit, *want;
  } cases[] = {
      {0.217, 0.0031, "s", "217 \xc2\xb1 3.1 ms"},
      {0, 0.0031, "s", "0 \xc2\xb1 3.1 ms"},          /* the larger one's prefix */
      {0.0005, 0.002, "s", "0.5 \xc2\xb1 2 ms"},
      {147284, 2700, "steps/s", "147 \xc2\xb1 2.7 k steps/s"},
      {0.118726, 0.00114, "share", "11.9 \xc2\xb1 0.11 %"},
      {7.0 / 3, 3.7945830335967616, "", "2.33 \xc2\xb1 3.8"},
      {-5, 1, "", "-5 \xc2\xb1 1"},
      {2.5e8, 0, "B", "250 \xc2\xb1 0 MB"},
      {0.5, NAN, "share", "50 %"}, /* no interval: the value alone */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[64];
    exp_format_interval(cases[i].mean, cases[i].half, cases[i].unit, buf, sizeof buf);
    if (strcmp(buf, cases[i].want) != 0)
      fprintf(stderr, "\ngot \"%s\", want \"%s\"", buf, cases[i].want);
    CU_ASSERT_STRING_EQUAL(buf, cases[i].want);
  }
}

/* ------------------------------------------------------------- labels */

/* The label of values[k] among values (a JSON list). */
static char *label_at(const char *values_json, int k) {
  cJSON *values = unit_json(values_json);
  int n = cJSON_GetArraySize(values);
  const cJSON *all[8];
  for (int i = 0; i < n && i < 8; i++) all[i] = cJSON_GetArrayItem(values, i);
  char *labels[8] = {NULL};
  CU_ASSERT_TRUE(exp_value_labels_varying(all, (size_t)n, "type", labels));
  char *label = labels[k];
  for (int i = 0; i < n && i < 8; i++)
    if (i != k) free(labels[i]);
  cJSON_Delete(values);
  return label;
}

static void test_point_labels(void) {
  static const struct {
    const char *values;
    int k;
    const char *want;
  } cases[] = {
      /* quickstart's policies: the type bare, then what differs; the
       * partition they share is left out where it is the same */
      {"[{'type': 'static', 'partition': 'hash', 'fast_local_access': false},"
       " {'type': 'static', 'partition': 'hash'}, {'type': 'relocate', 'lookahead': 100,"
       " 'partition': 'hash'}]", 0, "static fast_local_access=false"},
      {"[{'type': 'static', 'partition': 'hash', 'fast_local_access': false},"
       " {'type': 'static', 'partition': 'hash'}, {'type': 'relocate', 'lookahead': 100,"
       " 'partition': 'hash'}]", 1, "static"},
      {"[{'type': 'static', 'partition': 'hash', 'fast_local_access': false},"
       " {'type': 'static', 'partition': 'hash'}, {'type': 'relocate', 'lookahead': 100,"
       " 'partition': 'hash'}]", 2, "relocate lookahead=100"},
      /* nested: the type names the thing, then the differing members
       * without the path prefix they share (as the plots label them) */
      {"[{'type': 'nups', 'sampling': {'scheme': 'pool', 'reuse': 64}},"
       " {'type': 'nups', 'sampling': {'scheme': 'naive'}}]", 0,
       "nups scheme=pool reuse=64"},
      /* the type kept when nothing else tells this one apart */
      {"[{'type': 'static'}, {'type': 'static', 'fast_local_access': false}]", 0, "static"},
      /* no type: k=v pairs; nothing differing: the whole value */
      {"[{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'x'}]", 1, "a=2"},
      {"[{}, {'a': 1}]", 0, "{}"},
      /* not objects: strings bare, numbers exact, lists compact */
      {"['relocate', 'static']", 0, "relocate"},
      {"[0.5, 1e-5]", 1, "1e-05"},
      {"[[1, 2], [3]]", 0, "[1,2]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *got = label_at(cases[i].values, cases[i].k);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    if (strcmp(got, cases[i].want) != 0)
      fprintf(stderr, "\ncase %zu: got \"%s\", want \"%s\"", i, got, cases[i].want);
    CU_ASSERT_STRING_EQUAL(got, cases[i].want);
    free(got);
  }
}

/* --------------------------------------------------------------- grid */

static void test_grid_wraps_labels_at_spaces(void) {
  const char *label = "relocate lookahead=100 partition=hash stripes=64 "
                      "sampling.scheme=pool sampling.reuse=64 sampling.group_size=250";
  const char *word = "a_single_word_longer_than_the_wrap_width_of_forty";
  exp_grid g;
  CU_ASSERT_TRUE_FATAL(exp_grid_init(&g, 3, 2, 1, 40));
  exp_grid_set(&g, 0, 0, "policy");
  exp_grid_set(&g, 0, 1, "time_s");
  exp_grid_set(&g, 1, 0, label);
  exp_grid_set(&g, 1, 1, "217 ms");
  exp_grid_set(&g, 2, 0, word);
  exp_grid_set(&g, 2, 1, "3 s");
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  exp_grid_print(&g, mem);
  fclose(mem);
  exp_grid_free(&g);
  char *text = strdup(buf), *lines[16];
  size_t n = lines_of(text, lines, 16);
  /* header, rule, the label on several lines, the long word on one */
  CU_ASSERT_TRUE_FATAL(n >= 6);
  /* Every word of the label intact and in order, on lines of at most 40
   * characters in the label column; the value on the row's first line. */
  char joined[512] = "";
  size_t label_lines = 0;
  for (size_t i = 2; i < n && !strstr(lines[i], word); i++, label_lines++) {
    char *cell = lines[i];
    if (i > 2) {
      CU_ASSERT_EQUAL(strncmp(cell, "  ", 2), 0); /* a continuation, indented */
      CU_ASSERT_NOT_EQUAL(cell[2], ' ');
    }
    size_t w = i == 2 ? strlen(cell) - strlen("217 ms") : strlen(cell);
    while (w > 0 && cell[w - 1] == ' ') w--;
    CU_ASSERT_TRUE(w <= 40);
    CU_ASSERT_EQUAL(i == 2, unit_contains(cell, "217 ms"));
    CU_ASSERT_NOT_EQUAL(cell[strlen(cell) - 1], ' '); /* no trailing spaces */
    size_t skip = strspn(cell, " ");
    snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%.*s",
             *joined ? " " : "", (int)(w - skip), cell + skip);
  }
  CU_ASSERT_TRUE(label_lines >= 3);
  CU_ASSERT_STRING_EQUAL(joined, label);
  /* A word longer than the width is not cut: it has a line of its own. */
  CU_ASSERT_TRUE(unit_contains(buf, "\na_single_word_longer_than_the_wrap_width_of_forty"));
  CU_ASSERT_TRUE(unit_contains(buf, "_of_forty     3 s\n"));
  free(text);
  free(buf);
}

/* -------------------------------------------------------------- table */

static cJSON *table_records(void) {
  cJSON *records = cJSON_CreateArray();
  const char *m[] = {"{'time_s': 1, 'steps_per_s': 1000, 'sample_tv_distance': 0.5, "
                     "'messages': 7, 'wall_s': 3, 'bytes': 2e6}",
                     "{'time_s': 2, 'steps_per_s': 1000, 'sample_tv_distance': 0.5, "
                     "'messages': 7, 'wall_s': 3, 'bytes': 2e6}",
                     "{'time_s': 4, 'steps_per_s': 1000, 'sample_tv_distance': 0.5, "
                     "'messages': 7, 'wall_s': 3, 'bytes': 2e6}"};
  for (uint32_t i = 0; i < 3; i++) {
    cJSON_AddItemToArray(records, record(3 * i + 1, i, "{'cluster.nodes': 2, 'policy.type': 'static'}",
                                         m[i], NULL));
    cJSON_AddItemToArray(records, record(3 * i + 2, i, "{'cluster.nodes': 4, 'policy.type': 'static'}",
                                         "{'time_s': 0.0025, 'steps_per_s': 147284, "
                                         "'sample_tv_distance': 0.25, 'messages': 719672, "
                                         "'wall_s': 1, 'bytes': 278438656}", NULL));
    cJSON_AddItemToArray(records, record(3 * i + 3, i, "{'cluster.nodes': 8, 'policy.type': 'static'}",
                                         NULL, "boom"));
  }
  return records;
}

static void test_table_default_columns(void) {
  cJSON *records = table_records();
  char *buf = table_of(records, "[{'name': 'c', 'x': 'cluster.nodes', 'y': 'sample_tv_distance'}]",
                       NULL);
  char *lines[16];
  size_t n = lines_of(buf, lines, 16);
  CU_ASSERT_EQUAL_FATAL(n, 7); /* header, rule, three points, what ± means */
  /* policy.type is the same everywhere: no column. The plotted metric and
   * time and throughput, in metric-table order; not messages or wall_s. */
  CU_ASSERT_STRING_EQUAL(lines[0],
                         "cluster.nodes  runs ok        time_s        steps_per_s  sample_tv_distance");
  /* Three repeats: mean ± ci95 (1, 2, 4: 2.33 ± 3.8, see test_results.c). */
  CU_ASSERT_TRUE(unit_contains(lines[2], "2                  3/3  2.33 \xc2\xb1 3.8 s"));
  /* Identical repeats: an interval of 0, in the mean's prefix and unit. */
  CU_ASSERT_TRUE(unit_contains(lines[3], "2.5 \xc2\xb1 0 ms"));
  CU_ASSERT_TRUE(unit_contains(lines[3], "147 \xc2\xb1 0 k steps/s"));
  CU_ASSERT_TRUE(unit_contains(lines[3], "0.25 \xc2\xb1 0"));
  /* A failed point: failed in the first metric column, - in the others. */
  CU_ASSERT_TRUE(unit_contains(lines[4], "8                  0/3"));
  CU_ASSERT_STRING_EQUAL(lines[4], "8                  0/3        failed                  -                   -");
  CU_ASSERT_STRING_EQUAL(lines[5], "");
  CU_ASSERT_STRING_EQUAL(lines[6], "\xc2\xb1 half-width of the 95% interval over 3 repeats");
  free(buf);
  cJSON_Delete(records);
}

static void test_table_metrics_option(void) {
  cJSON *records = table_records();
  const char *const metrics[] = {"bytes", "messages", "time_s", NULL};
  char *buf = table_of(records, "[{'name': 'c', 'x': 'cluster.nodes', 'y': 'sample_tv_distance'}]",
                       metrics);
  char *lines[16];
  size_t n = lines_of(buf, lines, 16);
  CU_ASSERT_EQUAL_FATAL(n, 7);
  /* Exactly the metrics asked for, in the order asked. */
  CU_ASSERT_STRING_EQUAL(lines[0],
                         "cluster.nodes  runs ok       bytes   messages        time_s");
  CU_ASSERT_STRING_EQUAL(lines[3], "4                  3/3  278 \xc2\xb1 0 MB  720 \xc2\xb1 0 k    2.5 \xc2\xb1 0 ms");
  CU_ASSERT_STRING_EQUAL(lines[4], "8                  0/3      failed          -             -");
  free(buf);
  cJSON_Delete(records);
}

/* Two repeats: mean ± sd, not a t interval of two runs (12.7 times the
 * standard error); a row of three beside it keeps its interval, and the line
 * under the table says which is which. */
static void test_table_two_repeats_show_sd(void) {
  cJSON *records = cJSON_CreateArray();
  static const struct { const char *nodes; double t; } runs[] = {
      {"1", 1}, {"1", 3}, {"2", 1}, {"2", 2}, {"2", 4}};
  for (size_t i = 0; i < 5; i++) {
    char sweep[64], metrics[64];
    snprintf(sweep, sizeof sweep, "{'cluster.nodes': %s}", runs[i].nodes);
    snprintf(metrics, sizeof metrics, "{'time_s': %g}", runs[i].t);
    cJSON_AddItemToArray(records, record((uint32_t)i + 1, (uint32_t)i % 3, sweep, metrics, NULL));
  }
  char *buf = table_of(records, NULL, NULL);
  /* 1 and 3: mean 2, sd 1.41 (the t interval would be 12.7). */
  CU_ASSERT_TRUE(unit_contains(buf, "\n1                  2/2     2 \xc2\xb1 1.4 s\n"));
  CU_ASSERT_TRUE(unit_contains(buf, "\n2                  3/3  2.33 \xc2\xb1 3.8 s\n"));
  CU_ASSERT_TRUE(unit_contains(buf, "\n\n\xc2\xb1 half-width of the 95% interval over the row's "
                                    "repeats; in rows of 2 repeats, too few for an interval, "
                                    "their standard deviation\n"));
  if (!unit_contains(buf, "2/2  2 \xc2\xb1 1.4 s\n")) fprintf(stderr, "\n%s\n", buf);
  free(buf);
  cJSON_DeleteItemFromArray(records, 4);
  cJSON_DeleteItemFromArray(records, 3);
  cJSON_DeleteItemFromArray(records, 2);
  buf = table_of(records, NULL, NULL);
  CU_ASSERT_TRUE(unit_contains(buf, "\n\xc2\xb1 standard deviation over 2 repeats (too few for a "
                                    "95% interval)\n"));
  free(buf);
  cJSON_Delete(records);
}

/* A point whose runs diverged reads "diverged @ epoch N" where the
 * divergence took the value (quality null; time to quality never reached),
 * "-" where its runs never had one (staleness without replicas); the runs
 * column counts them apart. */
static void test_table_diverged_points(void) {
  cJSON *records = cJSON_CreateArray();
  cJSON_AddItemToArray(records, record(1, 0, "{'workload.lr': 0.1}",
                                       "{'quality': 0.9, 'time_to_quality_s': 2, "
                                       "'staleness_mean_s': 0.001, 'epoch_quality': [1, 0.9]}",
                                       NULL));
  cJSON_AddItemToArray(records, record(2, 0, "{'workload.lr': 100}",
                                       "{'quality': null, 'epoch_quality': [1.5, null]}", NULL));
  const char *const metrics[] = {"quality", "time_to_quality_s", "staleness_mean_s", NULL};
  char *buf = table_of(records, NULL, metrics);
  CU_ASSERT_TRUE(unit_contains(buf, "runs ok"));
  CU_ASSERT_TRUE(unit_contains(buf, "\n100          0/1, 1 diverged  diverged @ epoch 2  "
                                    "diverged @ epoch 2                 -\n"));
  if (!unit_contains(buf, "0/1, 1 diverged  diverged")) fprintf(stderr, "\n%s\n", buf);
  free(buf);
  cJSON_Delete(records);
}

/* The quality column is named by the workload's measure and its better
 * direction, when every run's workload has the same one. */
static void test_table_quality_named_by_its_workload(void) {
  static const struct { const char *type1, *type2, *head; } cases[] = {
      {"{'type': 'mf'}", "{'type': 'mf'}", "quality (RMSE \xe2\x86\x93)"},
      {"{'type': 'kge'}", "{'type': 'kge', 'lr': 1}", "quality (filtered MRR \xe2\x86\x91)"},
      {"{'type': 'kge', 'eval': 'sampled'}", "{'type': 'kge', 'eval': 'sampled'}",
       "quality (sampled MRR \xe2\x86\x91)"},
      /* the same workload evaluated two ways: the metric's name */
      {"{'type': 'kge', 'eval': 'sampled'}", "{'type': 'kge'}", "quality"},
      {"{'type': 'mf'}", "{'type': 'kge'}", "quality"}, /* two measures: the metric's name */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    cJSON *records = cJSON_CreateArray();
    const char *types[] = {cases[c].type1, cases[c].type2};
    for (uint32_t i = 0; i < 2; i++) {
      char sweep[64], config[96];
      snprintf(sweep, sizeof sweep, "{'cluster.nodes': %u}", i + 1);
      snprintf(config, sizeof config, "{'workload': %s}", types[i]);
      exp_run r = {.run = i + 1, .seed = 1, .sweep = unit_json(sweep), .config = unit_json(config)};
      cJSON_AddItemToArray(records, exp_record_new("exp", &r, unit_json("{'quality': 0.8}"), NULL));
      cJSON_Delete(r.sweep);
      cJSON_Delete(r.config);
    }
    const char *const metrics[] = {"quality", NULL};
    char *buf = table_of(records, NULL, metrics);
    char *lines[8];
    CU_ASSERT_TRUE_FATAL(lines_of(buf, lines, 8) >= 3);
    char want[96];
    snprintf(want, sizeof want, "  %s", cases[c].head);
    CU_ASSERT_TRUE(unit_contains(lines[0], want) &&
                   strcmp(lines[0] + strlen(lines[0]) - strlen(cases[c].head), cases[c].head) == 0);
    if (!unit_contains(lines[0], want)) fprintf(stderr, "\n%s\n", buf);
    free(buf);
    cJSON_Delete(records);
  }
}

/* Runs whose evaluations during training read replicas: a line under the
 * table says the quality column is the owners' model and the curves are
 * not; none when every evaluation read owners. */
static void test_table_says_which_model(void) {
  for (int replicas = 0; replicas < 2; replicas++) {
    cJSON *records = cJSON_CreateArray();
    exp_run r = {.run = 1, .seed = 1, .sweep = unit_json("{'policy.type': 'replicate'}"),
                 .config = unit_json("{'workload': {'type': 'mf'}}")};
    cJSON_AddItemToArray(records, exp_record_new("exp", &r,
                                                 unit_json(replicas ? "{'quality': 0.8, "
                                                                      "'eval_replica_share': 0.75}"
                                                                    : "{'quality': 0.8, "
                                                                      "'eval_replica_share': 0}"),
                                                 NULL));
    cJSON_Delete(r.sweep);
    cJSON_Delete(r.config);
    const char *const metrics[] = {"quality", NULL};
    char *buf = table_of(records, NULL, metrics);
    bool said = unit_contains(buf, "\nquality: the model as a whole, evaluated on the owners' "
                                   "values once the run was quiet; the evaluations during "
                                   "training (the curves) read node-local replicas for up to "
                                   "75% of their keys (eval_replica_share)\n");
    CU_ASSERT_EQUAL(said, replicas == 1);
    CU_ASSERT_EQUAL(unit_contains(buf, "owners' values"), replicas == 1);
    if (said != (replicas == 1)) fprintf(stderr, "\n%s\n", buf);
    free(buf);
    cJSON_Delete(records);
  }
}

/* An empty sweep value reads as what it means in its label column. */
static void test_table_labels_empty_values(void) {
  cJSON *records = cJSON_CreateArray();
  cJSON_AddItemToArray(records, record(1, 0, "{'cluster.stragglers': []}", "{'time_s': 1}", NULL));
  cJSON_AddItemToArray(records, record(2, 0, "{'cluster.stragglers': [{'node': 3}]}",
                                       "{'time_s': 2}", NULL));
  char *buf = table_of(records, NULL, NULL);
  CU_ASSERT_TRUE(unit_contains(buf, "\nno straggler "));
  CU_ASSERT_TRUE(unit_contains(buf, "\n[{node=3}] "));
  CU_ASSERT_FALSE(unit_contains(buf, "[]"));
  if (!unit_contains(buf, "\n[{node=3}] ")) fprintf(stderr, "\n%s\n", buf);
  free(buf);
  cJSON_Delete(records);
}

static void test_table_one_run_per_point(void) {
  /* Without repeats or failures: no runs ok column, plain values; the
   * swept objects labelled by what differs, long labels wrapped. */
  cJSON *records = cJSON_CreateArray();
  cJSON_AddItemToArray(records, record(1, 0, "{'policy': {'type': 'static', 'partition': 'hash', "
                                             "'fast_local_access': false}}",
                                       "{'time_s': 0.217267, 'steps_per_s': 147284}", NULL));
  cJSON_AddItemToArray(records, record(2, 0, "{'policy': {'type': 'relocate', 'partition': 'hash', "
                                             "'lookahead': 100, 'sampling': {'scheme': 'pool', "
                                             "'group_size': 250, 'reuse': 16}}}",
                                       "{'time_s': 0.0962823, 'steps_per_s': 332356}", NULL));
  char *buf = table_of(records, NULL, NULL);
  CU_ASSERT_TRUE(unit_contains(buf, "policy"));
  CU_ASSERT_FALSE(unit_contains(buf, "runs ok"));
  CU_ASSERT_FALSE(unit_contains(buf, "partition"));
  CU_ASSERT_FALSE(unit_contains(buf, "\xc2\xb1"));
  CU_ASSERT_TRUE(unit_contains(buf, "\nstatic fast_local_access=false   217 ms  147 k steps/s\n"));
  /* 43 characters: wrapped between members, continuations indented. */
  CU_ASSERT_TRUE(unit_contains(buf, "\nrelocate lookahead=100          96.3 ms  332 k steps/s\n"
                               "  sampling.scheme=pool\n  sampling.group_size=250\n"
                               "  sampling.reuse=16\n"));
  free(buf);
  cJSON_Delete(records);
}

static void test_table_without_varying_paths(void) {
  /* Nothing varies (or nothing is swept): one label column, the name. */
  cJSON *records = cJSON_CreateArray();
  cJSON_AddItemToArray(records, record(1, 0, "{'cluster.nodes': 2}", "{'time_s': 1}", NULL));
  char *buf = table_of(records, NULL, NULL);
  char *lines[8];
  size_t n = lines_of(buf, lines, 8);
  CU_ASSERT_EQUAL_FATAL(n, 3);
  CU_ASSERT_STRING_EQUAL(lines[0], "experiment  time_s");
  CU_ASSERT_STRING_EQUAL(lines[2], "exp            1 s");
  free(buf);
  cJSON_Delete(records);
  /* No records: nothing at all. */
  records = cJSON_CreateArray();
  buf = table_of(records, NULL, NULL);
  CU_ASSERT_STRING_EQUAL(buf, "");
  free(buf);
  cJSON_Delete(records);
}

static void test_metrics_option_parsing(void) {
  char err[1024];
  char **m = exp_metrics_parse("time_s,sample_tv_distance", err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_STRING_EQUAL(m[0], "time_s");
  CU_ASSERT_STRING_EQUAL(m[1], "sample_tv_distance");
  CU_ASSERT_PTR_NULL(m[2]);
  free(m);
  CU_ASSERT_PTR_NULL(exp_metrics_parse("time_s,colour", err, sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "unknown metric \"colour\"; the metrics are: time_s, "));
  CU_ASSERT_TRUE(unit_contains(err, "sample_tv_distance"));
  CU_ASSERT_PTR_NULL(exp_metrics_parse("time_s,,bytes", err, sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "an empty metric name"));
  CU_ASSERT_PTR_NULL(exp_metrics_parse("", err, sizeof err));
}

PSLAB_SUITE("table",
            {"quantities: units, prefixes, rounding", test_quantities},
            {"intervals: mean and ci95 in one prefix", test_intervals},
            {"point labels: what differs, in words", test_point_labels},
            {"grid: long labels wrap at spaces", test_grid_wraps_labels_at_spaces},
            {"table: default columns, repeats, failure", test_table_default_columns},
            {"table: --metrics columns", test_table_metrics_option},
            {"table: two repeats show sd", test_table_two_repeats_show_sd},
            {"table: diverged points", test_table_diverged_points},
            {"table: quality named by its workload", test_table_quality_named_by_its_workload},
            {"table: which model the quality is of", test_table_says_which_model},
            {"table: empty values labelled by what they mean", test_table_labels_empty_values},
            {"table: one run per point, labels", test_table_one_run_per_point},
            {"table: nothing varies", test_table_without_varying_paths},
            {"--metrics parsing", test_metrics_option_parsing})
