/*
 * The reference tables as a reader sees them. `pslab metrics` prints the
 * metric table for a terminal, and `pslab metrics --markdown` the list that
 * experiments/SPEC.md holds between its "metrics" markers; `pslab policies`
 * prints the policies' field tables, and with --markdown the block
 * docs/policies.md holds. Tests hold each document to its table, so the
 * reference cannot drift from the code.
 */
#include "experiments/common/common.h"

#include <stdlib.h>
#include <string.h>

static const char *combine_name(run_combine c) {
  switch (c) {
  case RUN_COMBINE_MAX: return "max";
  case RUN_COMBINE_SUM: return "sum";
  case RUN_COMBINE_MEAN: break;
  }
  return "mean";
}

static const char *shown(unsigned show) {
  if ((show & RUN_SHOW_TABLE) && (show & RUN_SHOW_SUMMARY)) return "table, summary.csv";
  if (show & RUN_SHOW_TABLE) return "table";
  if (show & RUN_SHOW_SUMMARY) return "summary.csv";
  return "";
}

/* Writes text wrapped at `width` columns, every line after the first
 * indented by `indent` spaces. */
static void wrapped(FILE *f, const char *text, size_t indent, size_t width) {
  size_t col = indent;
  bool first = true;
  for (const char *s = text; *s;) {
    size_t word = strcspn(s, " ");
    if (!first && col + 1 + word > width) {
      fprintf(f, "\n%*s", (int)indent, "");
      col = indent;
    } else if (!first) {
      fputc(' ', f);
      col++;
    }
    fwrite(s, 1, word, f);
    col += word;
    first = false;
    s += word;
    s += strspn(s, " ");
  }
  fputc('\n', f);
}

static void print_text(FILE *f, const run_metric *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "%s%s%s%s\n", t[i].name, *t[i].unit ? " (" : "", t[i].unit,
            *t[i].unit ? ")" : "");
    exp_buf b = {0};
    exp_buf_printf(&b, "%s%s Repeats: %s.", t[i].list ? "A list. " : "", t[i].meaning,
                   combine_name(t[i].combine));
    if (t[i].show) exp_buf_printf(&b, " Shown by default in the %s.", shown(t[i].show));
    if (t[i].when) exp_buf_printf(&b, " Present %s.", t[i].when);
    char *text = exp_buf_take(&b);
    fputs("    ", f);
    wrapped(f, text ? text : t[i].meaning, 4, 78);
    free(text);
  }
}

static void print_markdown(FILE *f, const run_metric *t, size_t n) {
  fputs("| metric | unit | repeats | shown | meaning |\n|---|---|---|---|---|\n", f);
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "| `%s` | %s | %s | %s | %s%s", t[i].name, *t[i].unit ? t[i].unit : "",
            combine_name(t[i].combine), shown(t[i].show), t[i].list ? "List. " : "",
            t[i].meaning);
    if (t[i].when) fprintf(f, " Present %s.", t[i].when);
    fputs(" |\n", f);
  }
}

void exp_metrics_print(FILE *f, bool markdown) {
  size_t n;
  const run_metric *t = run_metric_table(&n);
  if (markdown)
    print_markdown(f, t, n);
  else
    print_text(f, t, n);
}

void exp_policies_print(FILE *f, bool markdown) { ps_policy_fields_print(f, markdown); }
