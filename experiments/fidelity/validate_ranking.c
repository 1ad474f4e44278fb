/*
 * `pslab validate`, the ranking: whether the simulator orders the sweep
 * points as the real backend does, which is what a user choosing a policy
 * decides on. Made from the comparison's "point" records of time_s (the
 * only metric ranked: it is the one a user picks the fastest by).
 *
 * The pairs ranked are the pairs of sweep points whose sweeps differ in
 * exactly one swept field (two policies at the same node count; two node
 * counts under the same policy). A pair is judged only when both points
 * have at least two real runs (else there is no real spread to tell a
 * difference from noise), and counted only when the real runs tell the two
 * apart: their intervals, mean ± half the range, do not meet,
 * |real_a - real_b| > spread_a + spread_b. A counted pair agrees when the
 * simulated means differ in the same direction (a simulated tie does not
 * agree). The result is a record of its own kind in validate.jsonl and a
 * summary line, with the pairs that disagree, under the table.
 */
#include "experiments/results/results.h"

#include <math.h>
#include <string.h>

static bool is_time_point(const cJSON *r) {
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(r, "kind");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metric");
  return cJSON_IsString(k) && strcmp(k->valuestring, "point") == 0 && cJSON_IsString(m) &&
         strcmp(m->valuestring, "time_s") == 0;
}

static double num(const cJSON *r, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* Whether two sweeps (objects of path: value) hold the same paths and
 * differ in the value of exactly one. */
static bool one_field_apart(const cJSON *a, const cJSON *b) {
  if (!cJSON_IsObject(a) || !cJSON_IsObject(b)) return false;
  if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b)) return false;
  int differ = 0;
  for (const cJSON *f = a->child; f; f = f->next) {
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(b, f->string);
    if (!g) return false;
    differ += !cJSON_Compare(f, g, true);
  }
  return differ == 1;
}

/* A point of a pair, as the disagreeing pairs list it. */
static cJSON *side(const cJSON *p) {
  cJSON *o = cJSON_CreateObject();
  if (o && cJSON_AddNumberToObject(o, "point", num(p, "point")) &&
      cJSON_AddItemToObject(o, "label",
                            cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(p, "label"), true)) &&
      cJSON_AddNumberToObject(o, "sim", num(p, "sim")) &&
      cJSON_AddNumberToObject(o, "real", num(p, "real")))
    return o;
  cJSON_Delete(o);
  return NULL;
}

typedef struct {
  size_t pairs, agree, disagree, within, not_judged;
} tally;

/* Judges the pair a, b; a disagreeing pair goes to list. */
static bool judge(tally *t, const cJSON *a, const cJSON *b, cJSON *list) {
  t->pairs++;
  if (num(a, "compared") < 2 || num(b, "compared") < 2) {
    t->not_judged++;
    return true;
  }
  double real = num(a, "real") - num(b, "real"), sim = num(a, "sim") - num(b, "sim");
  if (!(fabs(real) > num(a, "real_spread") + num(b, "real_spread"))) {
    t->within++;
    return true;
  }
  if ((real > 0 && sim > 0) || (real < 0 && sim < 0)) {
    t->agree++;
    return true;
  }
  t->disagree++;
  cJSON *pair = cJSON_CreateArray();
  return pair && cJSON_AddItemToArray(list, pair) && cJSON_AddItemToArray(pair, side(a)) &&
         cJSON_AddItemToArray(pair, side(b)) && cJSON_GetArraySize(pair) == 2;
}

static bool add_count(cJSON *o, const char *key, size_t n) {
  return cJSON_AddNumberToObject(o, key, (double)n) != NULL;
}

cJSON *exp_validate_ranking(const cJSON *comparison, const char *experiment) {
  tally t = {0};
  cJSON *o = cJSON_CreateObject(), *list = cJSON_CreateArray();
  bool ok = o && list;
  for (const cJSON *a = comparison ? comparison->child : NULL; ok && a; a = a->next)
    for (const cJSON *b = a->next; ok && is_time_point(a) && b; b = b->next)
      if (is_time_point(b) && one_field_apart(cJSON_GetObjectItemCaseSensitive(a, "sweep"),
                                              cJSON_GetObjectItemCaseSensitive(b, "sweep")))
        ok = judge(&t, a, b, list);
  ok = ok && cJSON_AddStringToObject(o, "kind", "ranking") &&
       cJSON_AddStringToObject(o, "experiment", experiment) &&
       cJSON_AddStringToObject(o, "metric", "time_s") && add_count(o, "pairs", t.pairs) &&
       add_count(o, "counted", t.agree + t.disagree) && add_count(o, "agree", t.agree) &&
       add_count(o, "disagree", t.disagree) && add_count(o, "within_spread", t.within) &&
       add_count(o, "not_judged", t.not_judged) && cJSON_AddItemToObject(o, "disagreeing", list);
  if (ok) return o;
  if (!cJSON_GetObjectItemCaseSensitive(o, "disagreeing")) cJSON_Delete(list);
  cJSON_Delete(o);
  return NULL;
}

/* ------------------------------------------------------------ print */

static void print_side(FILE *f, const cJSON *s) {
  const cJSON *label = cJSON_GetObjectItemCaseSensitive(s, "label");
  char sim[64], real[64];
  exp_format_quantity(num(s, "sim"), "s", sim, sizeof sim);
  exp_format_quantity(num(s, "real"), "s", real, sizeof real);
  fprintf(f, "%s (sim %s, real %s)", cJSON_IsString(label) ? label->valuestring : "?", sim,
          real);
}

void exp_validate_print_ranking(FILE *f, const cJSON *ranking) {
  size_t pairs = (size_t)num(ranking, "pairs"), within = (size_t)num(ranking, "within_spread"),
         unjudged = (size_t)num(ranking, "not_judged");
  if (pairs == 0) {
    fputs("ranking: no two sweep points differ in exactly one swept field\n", f);
    return;
  }
  fprintf(f, "ranking: %.0f of %.0f pairs agree", num(ranking, "agree"),
          num(ranking, "counted"));
  if (within || unjudged) fputs(" (", f);
  if (within) fprintf(f, "%zu pair%s within the real spread not counted", within,
                      within == 1 ? "" : "s");
  if (within && unjudged) fputs(", ", f);
  if (unjudged) fprintf(f, "%zu pair%s with fewer than two real runs not judged", unjudged,
                        unjudged == 1 ? "" : "s");
  fputs(within || unjudged ? ")\n" : "\n", f);
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(ranking, "disagreeing");
  for (const cJSON *p = list ? list->child : NULL; p; p = p->next) {
    fputs("  disagree: ", f);
    print_side(f, cJSON_GetArrayItem(p, 0));
    fputs(" vs ", f);
    print_side(f, cJSON_GetArrayItem(p, 1));
    fputc('\n', f);
  }
}
