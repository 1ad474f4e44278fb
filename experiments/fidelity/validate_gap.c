/*
 * `pslab validate`, the largest gap: at each sweep point, which telemetry
 * metric (response times, the servers' busy share, messages waiting,
 * messages per wake-up, CPU: exp_validate_telemetry) the simulator missed
 * by the largest factor, so that the reader of a wrong time_s knows where
 * to look first.
 *
 * Made from the comparison's "point" records: the factor is |log(sim /
 * real)| of the point's means, so that twice too slow and twice too fast
 * weigh the same and metrics of any unit compare. Both 0: no gap. Counts of
 * messages waiting are compared as 1 + the count (the messages at the node
 * when one is handled, itself included), so that 0 against 1 is a factor of
 * 2, not an infinite one; any other value 0 on one side only is an infinite
 * gap (a cost the simulator does not charge at all, say). Ties go to the
 * metric listed first. The result is a record per point, of its own kind,
 * in validate.jsonl, and a line per point under the table.
 */
#include "experiments/results/results.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double num(const cJSON *r, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static bool is_kind(const cJSON *r, const char *kind) {
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(r, "kind");
  return cJSON_IsString(k) && strcmp(k->valuestring, kind) == 0;
}

/* Where the metric of a point record is a telemetry metric: its offset (1
 * for counts of messages waiting, else 0); -1 when it is none. */
static double telemetry_offset(const cJSON *r) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metric");
  size_t n;
  const char *const *names = exp_validate_telemetry(&n);
  for (size_t i = 0; cJSON_IsString(m) && i < n; i++)
    if (strcmp(m->valuestring, names[i]) == 0)
      return strncmp(names[i], "queue_", 6) == 0 ? 1 : 0;
  return -1;
}

double exp_validate_gap(double sim, double real, double offset) {
  double s = sim + offset, r = real + offset;
  if (s == r) return 0;
  if (!(s > 0) || !(r > 0)) return INFINITY;
  return fabs(log(s / r));
}

/* The point record of point k with the largest gap, and the gap. */
static const cJSON *largest(const cJSON *comparison, double k, double *gap) {
  const cJSON *best = NULL;
  *gap = -1;
  for (const cJSON *r = comparison->child; r; r = r->next) {
    double offset;
    if (!is_kind(r, "point") || num(r, "point") != k || (offset = telemetry_offset(r)) < 0)
      continue;
    double g = exp_validate_gap(num(r, "sim"), num(r, "real"), offset);
    if (!isnan(g) && g > *gap) {
      best = r;
      *gap = g;
    }
  }
  return best;
}

/* The gap record of point record r: its point's head, the metric, sim,
 * real, error, and the gap (null when infinite). */
static cJSON *gap_record(const cJSON *r, double gap) {
  static const char *const copied[] = {"experiment", "point", "label", "sweep",
                                       "metric",     "sim",   "real",  "error"};
  cJSON *o = cJSON_CreateObject();
  bool ok = o && cJSON_AddStringToObject(o, "kind", "gap");
  for (size_t i = 0; ok && i < sizeof copied / sizeof copied[0]; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, copied[i]);
    ok = cJSON_AddItemToObject(o, copied[i], v ? cJSON_Duplicate(v, true) : cJSON_CreateNull());
  }
  ok = ok && (isfinite(gap) ? cJSON_AddNumberToObject(o, "gap", gap)
                            : cJSON_AddNullToObject(o, "gap")) != NULL;
  if (ok) return o;
  cJSON_Delete(o);
  return NULL;
}

bool exp_validate_gaps(cJSON *comparison) {
  double last = 0;
  for (const cJSON *r = comparison->child; r; r = r->next)
    if (is_kind(r, "point") && num(r, "point") > last) last = num(r, "point");
  for (double k = 1; k <= last; k++) {
    double gap;
    const cJSON *r = largest(comparison, k, &gap);
    if (!r) continue;
    cJSON *o = gap_record(r, gap);
    if (!o || !cJSON_AddItemToArray(comparison, o)) {
      cJSON_Delete(o);
      return false;
    }
  }
  return true;
}

void exp_validate_print_gaps(FILE *f, const cJSON *comparison) {
  int width = 0;
  for (const cJSON *r = comparison->child; r; r = r->next) {
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(r, "label");
    if (is_kind(r, "gap") && cJSON_IsString(label) && (int)strlen(label->valuestring) > width)
      width = (int)strlen(label->valuestring);
  }
  bool first = true;
  for (const cJSON *r = comparison->child; r; r = r->next) {
    if (!is_kind(r, "gap")) continue;
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(r, "label");
    const cJSON *metric = cJSON_GetObjectItemCaseSensitive(r, "metric");
    const run_metric *m = run_metric_find(metric->valuestring);
    const char *unit = m ? m->unit : "";
    char sim[64], real[64], err[32] = "-";
    exp_format_quantity(num(r, "sim"), unit, sim, sizeof sim);
    exp_format_quantity(num(r, "real"), unit, real, sizeof real);
    if (!isnan(num(r, "error"))) snprintf(err, sizeof err, "%+.1f %%", 100 * num(r, "error"));
    if (first) fputc('\n', f);
    first = false;
    fprintf(f, "  %-*s  largest gap: %s %s (sim %s, real %s)\n", width,
            cJSON_IsString(label) ? label->valuestring : "", metric->valuestring, err, sim,
            real);
  }
}
