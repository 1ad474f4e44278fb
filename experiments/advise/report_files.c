/*
 * advise's results directory: advise.jsonl (what was searched, every
 * evaluation in the order it ran, the ranking, the summary), advise.txt
 * (the table as printed), winner.json (the first candidate as a spec that
 * `pslab run` takes as it is: its file paths made absolute, since it lives
 * in another directory than the spec) and the plot of the search.
 */
#include "experiments/advise/advise.h"
#include "experiments/plots/plots.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Makes the string at o's field absolute when it names a file relative to
 * base_dir. */
static void absolute_field(cJSON *o, const char *field, const char *base_dir, bool must) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
  if (!cJSON_IsString(v) || !*v->valuestring || v->valuestring[0] == '/') return;
  char *path = exp_join_path(base_dir ? base_dir : ".", v->valuestring);
  char *abs = path ? realpath(path, NULL) : NULL;
  if (abs || (must && path)) cJSON_SetValuestring(v, abs ? abs : path);
  free(abs);
  free(path);
}

/* The winner's spec: the candidate's, with its relative file names made
 * absolute (cluster profile, platform and key files; any workload string
 * that names a file beside the spec), less the stop_after advise gave it.
 * Caller deletes. */
static cJSON *winner_spec(const adv_report *rp, const char *base_dir, const char *name) {
  const adv_candidate *w = &rp->cands->items[rp->res->order[0]];
  cJSON *spec = cJSON_Duplicate(w->spec, true);
  cJSON *cluster = cJSON_GetObjectItemCaseSensitive(spec, "cluster");
  absolute_field(cluster, "profile", base_dir, true);
  absolute_field(cluster, "platform_file", base_dir, true);
  absolute_field(cluster, "key_file", base_dir, true);
  cJSON *wl = cJSON_GetObjectItemCaseSensitive(spec, "workload");
  if (w->stop_added) cJSON_DeleteItemFromObjectCaseSensitive(wl, "stop_after");
  for (cJSON *f = wl ? wl->child : NULL; f; f = f->next)
    absolute_field(wl, f->string, base_dir, false);
  char text[512];
  snprintf(text, sizeof text, "%s-winner", name);
  cJSON_ReplaceItemInObjectCaseSensitive(spec, "name", cJSON_CreateString(text));
  snprintf(text, sizeof text, "Recommended by pslab advise: %s", w->label);
  cJSON_DeleteItemFromObjectCaseSensitive(spec, "description");
  cJSON_AddStringToObject(spec, "description", text);
  return spec;
}

/* The records of advise.jsonl. */
static cJSON *records_of(const adv_report *rp, const cJSON *ranking, const cJSON *summary,
                         const cJSON *extra) {
  cJSON *all = cJSON_CreateArray();
  cJSON_AddItemToArray(all, cJSON_Duplicate(summary, true));
  for (size_t i = 0; i < rp->cands->count; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", "candidate");
    cJSON_AddNumberToObject(o, "candidate", (double)i);
    cJSON_AddStringToObject(o, "label", rp->cands->items[i].label);
    cJSON_AddStringToObject(o, "origin", rp->cands->items[i].origin);
    cJSON_AddItemToObject(o, "spec", cJSON_Duplicate(rp->cands->items[i].spec, true));
    cJSON_AddItemToArray(all, o);
  }
  for (const cJSON *s = rp->cands->skipped->child; s; s = s->next) {
    cJSON *o = cJSON_Duplicate(s, true);
    cJSON_AddStringToObject(o, "kind", "skipped");
    cJSON_AddItemToArray(all, o);
  }
  for (const cJSON *e = rp->res->evaluations->child; e; e = e->next) {
    cJSON *o = cJSON_Duplicate(e, true);
    cJSON_AddStringToObject(o, "kind", "evaluation");
    size_t c = (size_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "candidate"));
    cJSON_AddStringToObject(o, "label", rp->cands->items[c].label);
    cJSON_AddItemToArray(all, o);
  }
  for (const cJSON *r = ranking->child; r; r = r->next)
    cJSON_AddItemToArray(all, cJSON_Duplicate(r, true));
  for (const cJSON *x = extra ? extra->child : NULL; x; x = x->next)
    cJSON_AddItemToArray(all, cJSON_Duplicate(x, true));
  return all;
}

/* {"kind": "advise", ...}: what was searched, how, and the margin. */
cJSON *adv_summary(const adv_report *rp, const char *experiment, double margin) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "kind", "advise");
  cJSON_AddStringToObject(o, "experiment", experiment);
  cJSON_AddStringToObject(o, "metric", rp->metric.name);
  if (rp->metric.to_quality) {
    cJSON_AddNumberToObject(o, "target_quality", rp->target);
    cJSON_AddStringToObject(o, "target_from", rp->target_from);
  }
  cJSON_AddNumberToObject(o, "candidates", (double)rp->cands->count);
  cJSON_AddNumberToObject(o, "skipped", cJSON_GetArraySize(rp->cands->skipped));
  cJSON_AddNumberToObject(o, "budget_s", rp->budget_s);
  cJSON_AddNumberToObject(o, "jobs", (double)rp->jobs);
  cJSON_AddNumberToObject(o, "spent_s", rp->res->spent_s);
  cJSON_AddNumberToObject(o, "rounds", (double)rp->res->rounds);
  cJSON_AddStringToObject(o, "stop", rp->res->stop);
  if (rp->own_model) cJSON_AddStringToObject(o, "model", rp->own_model);
  if (rp->res->screened && rp->screen_model) {
    cJSON_AddStringToObject(o, "screen_model", rp->screen_model);
    cJSON_AddNumberToObject(o, "screen_pairs", (double)rp->res->screen_pairs);
    cJSON_AddNumberToObject(o, "screen_agree", (double)rp->res->screen_agree);
    if (isfinite(rp->res->screen_ratio))
      cJSON_AddNumberToObject(o, "screen_ratio", rp->res->screen_ratio);
  }
  cJSON_AddStringToObject(o, "winner", rp->cands->items[rp->res->order[0]].label);
  if (isfinite(margin)) cJSON_AddNumberToObject(o, "margin", margin);
  cJSON_AddNumberToObject(o, "error", rp->error);
  cJSON_AddStringToObject(o, "error_from", rp->error_from);
  cJSON_AddBoolToObject(o, "warning", !(margin >= rp->error));
  return o;
}

/* Writes text to DIR/name whole. */
static int put(const char *dir, const char *name, const char *text, FILE *log) {
  char err[512];
  char *path = exp_join_path(dir, name);
  int rc = path && text ? exp_write_file_atomic(path, text, strlen(text), err, sizeof err) : -1;
  if (rc != 0) fprintf(log, "pslab advise: %s not written: %s\n", name,
                       path && text ? err : "out of memory");
  free(path);
  return rc;
}

/* The table as advise.txt, every row. */
static char *table_text(const adv_report *rp, const cJSON *ranking, double margin) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  adv_print(f, rp, ranking, margin);
  fclose(f);
  return text;
}

int adv_write(const char *dir, const adv_report *rp, const cJSON *ranking, double margin,
              const cJSON *extra, const char *experiment, const char *gnuplot, FILE *log) {
  cJSON *summary = adv_summary(rp, experiment, margin);
  cJSON *all = records_of(rp, ranking, summary, extra);
  char err[512];
  char *path = exp_join_path(dir, "advise.jsonl");
  int rc = path ? exp_jsonl_write(path, all, err, sizeof err) : -1;
  if (rc != 0) fprintf(log, "pslab advise: advise.jsonl not written: %s\n", path ? err : "");
  free(path);
  char *text = table_text(rp, ranking, margin);
  rc |= put(dir, "advise.txt", text, log);
  free(text);
  cJSON *winner = winner_spec(rp, rp->base_dir, experiment);
  text = winner ? cJSON_Print(winner) : NULL;
  rc |= put(dir, "winner.json", text, log);
  free(text);
  cJSON_Delete(winner);
  cJSON_Delete(all);
  cJSON_Delete(summary);
  if (rc != 0) return -1;
  return adv_draw_search(rp, dir, experiment, gnuplot, log) == 0 ? 0 : 1;
}
