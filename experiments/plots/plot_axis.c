/*
 * Plot axes: what an axis is called and in which unit.
 *
 * A metric's axis takes its words and unit from the metric table (run.h):
 * "time (ms)". The values stay in the metric's own unit (seconds, bytes);
 * the axis shows them in the unit that keeps its numbers short, chosen from
 * the largest value shown: milliseconds rather than 0.000123 s, MB rather
 * than 2.78439e+08 B, a share as a percentage, a count in thousands or
 * millions. The script multiplies by the axis' scale as it plots, so its
 * inline data still read in the metric's unit. (gnuplot's engineering
 * format "%.1s%c" was the other way; it cannot drop trailing zeros, so its
 * ticks read "0.0", "50.0m", and a prefixed unit on the label reads better
 * in a paper.)
 */
#include "experiments/plots/plots.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- units */

typedef struct {
  double factor; /* one of this unit, in the metric's unit */
  const char *unit;
} unit_step;

/* Each ladder runs from the smallest unit up; NULL-terminated. */
static const unit_step seconds[] = {
    {1e-9, "ns"}, {1e-6, "\xc2\xb5s"}, {1e-3, "ms"}, {1, "s"}, {0, NULL}};
static const unit_step bytes[] = {
    {1, "B"}, {1e3, "kB"}, {1e6, "MB"}, {1e9, "GB"}, {1e12, "TB"}, {0, NULL}};
static const unit_step counts[] = {
    {1, ""}, {1e3, "thousand"}, {1e6, "million"}, {1e9, "billion"}, {0, NULL}};

/* The largest unit of which max_abs is at least one; the metric's own unit
 * (factor 1) when max_abs says nothing (0, NaN). */
static const unit_step *pick_step(const unit_step *ladder, double max_abs) {
  const unit_step *base = NULL, *best = NULL;
  for (const unit_step *u = ladder; u->unit; u++) {
    if (u->factor == 1) base = u;
    if (!best || max_abs >= u->factor * (1 - 1e-9)) best = u;
  }
  return isfinite(max_abs) && max_abs > 0 ? best : base;
}

/* "time (ms)" from the metric's label and unit, for the largest value. */
static void metric_axis(exp_plot_axis *a, const run_metric *m, double max_abs) {
  a->data_unit = m->unit;
  snprintf(a->words, sizeof a->words, "%s", m->label);
  if (strcmp(m->unit, "share") == 0) {
    a->scale = 100;
    snprintf(a->label, sizeof a->label, "%s (%%)", m->label);
    return;
  }
  bool s = strcmp(m->unit, "s") == 0, b = strcmp(m->unit, "B") == 0;
  const unit_step *u = pick_step(s ? seconds : b ? bytes : counts, max_abs);
  a->scale = 1 / u->factor;
  if (s || b)
    snprintf(a->label, sizeof a->label, "%s (%s)", m->label, u->unit);
  else if (!*m->unit && !*u->unit)
    snprintf(a->label, sizeof a->label, "%s", m->label);
  else if (!*m->unit) /* a count: "messages (thousands)" */
    snprintf(a->label, sizeof a->label, "%s (%ss)", m->label, u->unit);
  else
    snprintf(a->label, sizeof a->label, "%s (%s%s%s)", m->label, u->unit,
             *u->unit ? " " : "", m->unit);
}

void exp_plot_axis_make(exp_plot_axis *a, const char *name, double max_abs) {
  const run_metric *m = run_metric_find(name);
  *a = (exp_plot_axis){.scale = 1, .data_unit = ""};
  if (m) {
    metric_axis(a, m, max_abs);
    return;
  }
  snprintf(a->label, sizeof a->label, "%s", name);
  snprintf(a->words, sizeof a->words, "%s", name);
}

void exp_plot_axis_quality(exp_plot_axis *a, const char *metric, const cJSON *records) {
  const char *measure;
  bool higher;
  if (!exp_is_quality_metric(metric) || !exp_records_quality(records, &measure, &higher))
    return;
  snprintf(a->words, sizeof a->words, "%s", measure);
  snprintf(a->label, sizeof a->label, "%s (%s is better)", measure, higher ? "higher" : "lower");
}
