/*
 * What the table printed at the end of an experiment is made of: values in
 * engineering form with units (quantity.c), the labels of sweep points
 * (labels.c), the grid and its wrapping of long labels (grid.c). Every case
 * is a value written here; no simulation runs.
 */
#include "tests/unit.h"

#include "experiments/experiment.h"
#include "experiments/internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- helpers */

static cJSON *json_of(const char *single_quoted) {
  char *t = strdup(single_quoted);
  for (char *p = t; *p; p++)
    if (*p == '\'') *p = '"';
  cJSON *j = cJSON_Parse(t);
  free(t);
  CU_ASSERT_PTR_NOT_NULL(j);
  return j;
}

static bool contains(const char *text, const char *needle) {
  return text && strstr(text, needle);
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
    CU_ASSERT_FALSE(contains(buf, "e+") || contains(buf, "e-")); /* never an exponent */
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
  cJSON *values = json_of(values_json);
  int n = cJSON_GetArraySize(values);
  const cJSON *all[8];
  for (int i = 0; i < n && i < 8; i++) all[i] = cJSON_GetArrayItem(values, i);
  char *label = exp_point_label(all[k], all, (size_t)n);
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
      /* nested: the shared type left out, members by their dotted path */
      {"[{'type': 'nups', 'sampling': {'scheme': 'pool', 'reuse': 64}},"
       " {'type': 'nups', 'sampling': {'scheme': 'naive'}}]", 0,
       "sampling.scheme=pool sampling.reuse=64"},
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
    CU_ASSERT_EQUAL(i == 2, contains(cell, "217 ms"));
    CU_ASSERT_NOT_EQUAL(cell[strlen(cell) - 1], ' '); /* no trailing spaces */
    size_t skip = strspn(cell, " ");
    snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%.*s",
             *joined ? " " : "", (int)(w - skip), cell + skip);
  }
  CU_ASSERT_TRUE(label_lines >= 3);
  CU_ASSERT_STRING_EQUAL(joined, label);
  /* A word longer than the width is not cut: it has a line of its own. */
  CU_ASSERT_TRUE(contains(buf, "\na_single_word_longer_than_the_wrap_width_of_forty"));
  CU_ASSERT_TRUE(contains(buf, "_of_forty     3 s\n"));
  free(text);
  free(buf);
}

PSLAB_SUITE("table",
            {"quantities: units, prefixes, rounding", test_quantities},
            {"intervals: mean and ci95 in one prefix", test_intervals},
            {"point labels: what differs, in words", test_point_labels},
            {"grid: long labels wrap at spaces", test_grid_wraps_labels_at_spaces})
