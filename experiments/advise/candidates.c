/*
 * The candidate set: whole specs, one per way of running the spec's
 * workload on its cluster. Each is checked by the spec's own checks
 * (exp_spec_parse): what they refuse (a policy that cannot run on the
 * cluster's roles, a consistency model a policy does not support) is left
 * out, with the reason, so that what combines is decided in one place.
 * pslab's own candidates are made in candidate_sets.c; here: the base,
 * adding one candidate, the spec's own policy and sweep, and --candidates.
 */
#include "experiments/advise/advise.h"
#include "workloads/workload.h"

#include <stdlib.h>
#include <string.h>

void adv_candidates_free(adv_candidates *c) {
  for (size_t i = 0; i < c->count; i++) {
    free(c->items[i].label);
    cJSON_Delete(c->items[i].spec);
  }
  free(c->items);
  cJSON_Delete(c->skipped);
  *c = (adv_candidates){0};
}

bool adv_spec_ok(const cJSON *spec, const char *file, const char *base_dir, char *why,
                 size_t whylen) {
  char *text = cJSON_PrintUnformatted(spec);
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = text ? exp_spec_parse(text, strlen(text), file, base_dir, NULL, 0, &e) : NULL;
  if (!s) snprintf(why, whylen, "%s", e.count ? e.lines[0] : "out of memory");
  bool ok = s != NULL;
  exp_spec_free(s);
  exp_errors_free(&e);
  free(text);
  return ok;
}

/* A copy of spec for comparing: the policy's partition and fast local
 * access given their defaults (hash, true) when absent, so that {"type":
 * "relocate"} and {"type": "relocate", "partition": "hash"} are one. */
static cJSON *normalized(const cJSON *spec) {
  cJSON *n = cJSON_Duplicate(spec, true);
  cJSON *p = cJSON_GetObjectItemCaseSensitive(n, "policy");
  if (cJSON_IsObject(p) && !cJSON_GetObjectItemCaseSensitive(p, "partition"))
    cJSON_AddStringToObject(p, "partition", "hash");
  if (cJSON_IsObject(p) && !cJSON_GetObjectItemCaseSensitive(p, "fast_local_access"))
    cJSON_AddBoolToObject(p, "fast_local_access", true);
  return n;
}

/* Whether c holds a candidate that runs as spec does. */
static bool holds(const adv_candidates *c, const cJSON *spec) {
  cJSON *mine = normalized(spec);
  bool found = false;
  for (size_t i = 0; i < c->count && !found; i++) {
    cJSON *theirs = normalized(c->items[i].spec);
    found = cJSON_Compare(mine, theirs, true);
    cJSON_Delete(theirs);
  }
  cJSON_Delete(mine);
  return found;
}

void adv_candidate_add(adv_candidates *c, const adv_build *b, cJSON *spec, const char *label,
                       const char *origin) {
  if (holds(c, spec)) {
    cJSON_Delete(spec);
    return;
  }
  char why[1024];
  if (!adv_spec_ok(spec, b->file, b->base_dir, why, sizeof why)) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "label", label);
    cJSON_AddStringToObject(o, "reason", why);
    cJSON_AddItemToArray(c->skipped, o);
    cJSON_Delete(spec);
    return;
  }
  if (c->count == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 32;
    adv_candidate *items = realloc(c->items, cap * sizeof *items);
    if (!items) {
      cJSON_Delete(spec);
      return;
    }
    c->items = items;
    c->cap = cap;
  }
  c->items[c->count++] = (adv_candidate){strdup(label), spec, origin,
                                         adv_trades_quality(spec, b->spec), false};
}

/* Whether the numbers at path in a and b are equal (def where absent). */
static bool same_number(const cJSON *a, const cJSON *b, const char *path, double def) {
  const cJSON *x = exp_path_get(a, path), *y = exp_path_get(b, path);
  return (cJSON_IsNumber(x) ? x->valuedouble : def) == (cJSON_IsNumber(y) ? y->valuedouble : def);
}

bool adv_trades_quality(const cJSON *cand, const cJSON *spec) {
  const cJSON *type = exp_path_get(cand, "policy.type");
  bool one_copy = cJSON_IsString(type) && (strcmp(type->valuestring, "static") == 0 ||
                                           strcmp(type->valuestring, "relocate") == 0);
  const cJSON *mine = cJSON_GetObjectItemCaseSensitive(cand, "consistency");
  const cJSON *theirs = cJSON_GetObjectItemCaseSensitive(spec, "consistency");
  bool same = (!mine && !theirs) || (mine && theirs && cJSON_Compare(mine, theirs, true));
  double nodes = cJSON_IsNumber(exp_path_get(spec, "cluster.nodes"))
                     ? exp_path_get(spec, "cluster.nodes")->valuedouble : 1;
  return !(one_copy && !exp_path_get(cand, "policy.sampling") && same &&
           same_number(cand, spec, "cluster.workers_per_node", 1) &&
           same_number(cand, spec, "cluster.nodes", 1) &&
           same_number(cand, spec, "cluster.worker_nodes", nodes));
}

void adv_policy_label(const cJSON *policy, exp_buf *b) {
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(policy, "type");
  exp_buf_puts(b, cJSON_IsString(type) ? type->valuestring : "?");
  for (const cJSON *f = policy ? policy->child : NULL; f; f = f->next) {
    if (strcmp(f->string, "type") == 0) continue;
    char *v = exp_value_label(f);
    exp_buf_printf(b, " %s=%s", f->string, v ? v : "?");
    free(v);
  }
}

cJSON *adv_base_of(const cJSON *spec) {
  cJSON *base = cJSON_Duplicate(spec, true);
  cJSON_DeleteItemFromObjectCaseSensitive(base, "sweep");
  cJSON_DeleteItemFromObjectCaseSensitive(base, "plots");
  cJSON_DeleteItemFromObjectCaseSensitive(base, "repeats");
  cJSON_DeleteItemFromObjectCaseSensitive(base, "policy");
  return base;
}

/* Whether a sweep path is a choice of how to run (not of what runs). */
static bool is_choice(const char *path) {
  static const char *const choices[] = {"policy", "consistency", "cluster.workers_per_node",
                                        "cluster.servers"};
  for (size_t i = 0; i < sizeof choices / sizeof choices[0]; i++) {
    size_t n = strlen(choices[i]);
    if (strncmp(path, choices[i], n) == 0 && (path[n] == '\0' || path[n] == '.')) return true;
  }
  return false;
}

/* The spec's own policy, and every point of its sweep over choices. */
void adv_add_spec_set(adv_candidates *c, const adv_build *b) {
  const cJSON *spec = b->spec;
  cJSON *own = cJSON_Duplicate(spec, true);
  cJSON_DeleteItemFromObjectCaseSensitive(own, "sweep");
  cJSON *sweep = cJSON_CreateObject();
  const cJSON *sw = cJSON_GetObjectItemCaseSensitive(spec, "sweep");
  for (const cJSON *ax = sw ? sw->child : NULL; ax; ax = ax->next)
    if (is_choice(ax->string)) cJSON_AddItemToObject(sweep, ax->string, cJSON_Duplicate(ax, true));
  cJSON_AddItemToObject(own, "sweep", sweep);
  exp_run_list runs = {0};
  exp_errors e;
  exp_errors_init(&e);
  exp_sweep_expand(own, &runs, &e);
  for (size_t i = 0; i < runs.points && i < runs.count; i++) {
    cJSON *cand = adv_base_of(spec);
    cJSON_AddItemToObject(cand, "policy", cJSON_Duplicate(
        cJSON_GetObjectItemCaseSensitive(spec, "policy"), true));
    for (const cJSON *v = runs.runs[i].sweep->child; v; v = v->next) {
      char err[256];
      exp_path_set(cand, v->string, cJSON_Duplicate(v, true), err, sizeof err);
    }
    exp_buf label = {0};
    adv_choice_label(cand, b, &label);
    char *l = exp_buf_take(&label);
    adv_candidate_add(c, b, cand, l ? l : "?", "spec");
    free(l);
  }
  exp_run_list_free(&runs);
  exp_errors_free(&e);
  cJSON_Delete(own);
}

/* " name=value" into out when cand's value at path differs from the spec's. */
static void label_if_differs(const cJSON *cand, const adv_build *b, const char *path,
                             const char *name, exp_buf *out) {
  const cJSON *mine = exp_path_get(cand, path), *theirs = exp_path_get(b->base, path);
  if (!mine || (theirs && cJSON_Compare(mine, theirs, true))) return;
  if (cJSON_IsObject(mine)) { /* {"model": "ssp", "staleness": 4}: "ssp staleness=4" */
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(mine, "model");
    exp_buf_printf(out, ", %s%s", name, cJSON_IsString(model) ? model->valuestring : "");
    for (const cJSON *f = mine->child; f; f = f->next) {
      if (strcmp(f->string, "model") == 0) continue;
      char *v = exp_value_label(f);
      exp_buf_printf(out, " %s=%s", f->string, v ? v : "?");
      free(v);
    }
    return;
  }
  char *v = exp_value_label(mine);
  exp_buf_printf(out, ", %s=%s", name, v ? v : "?");
  free(v);
}

void adv_choice_label(const cJSON *cand, const adv_build *b, exp_buf *out) {
  adv_policy_label(cJSON_GetObjectItemCaseSensitive(cand, "policy"), out);
  label_if_differs(cand, b, "consistency", "", out);
  label_if_differs(cand, b, "cluster.workers_per_node", "workers_per_node", out);
  label_if_differs(cand, b, "cluster.servers", "servers", out);
}

/* One item of a --candidates file: a policy object, or {"path": value, ...}
 * set on the base (which has the spec's policy). */
static cJSON *file_item(const adv_build *b, const cJSON *item, size_t i, const char *path,
                        exp_errors *errs) {
  cJSON *cand = cJSON_Duplicate(b->base, true);
  cJSON_AddItemToObject(cand, "policy", cJSON_Duplicate(
      cJSON_GetObjectItemCaseSensitive(b->spec, "policy"), true));
  if (cJSON_GetObjectItemCaseSensitive(item, "type")) {
    cJSON_ReplaceItemInObjectCaseSensitive(cand, "policy", cJSON_Duplicate(item, true));
    return cand;
  }
  for (const cJSON *v = item->child; v; v = v->next) {
    char err[256];
    if (exp_path_set(cand, v->string, cJSON_Duplicate(v, true), err, sizeof err) != 0) {
      exp_errors_addf(errs, "%s: [%zu].%s: %s", path, i, v->string, err);
      cJSON_Delete(cand);
      return NULL;
    }
  }
  return cand;
}

int adv_add_file_set(adv_candidates *c, const adv_build *b, const char *path,
                     exp_errors *errs) {
  char err[512];
  char *text = exp_read_file(path, NULL, err, sizeof err);
  cJSON *list = text ? cJSON_Parse(text) : NULL;
  free(text);
  if (!text) exp_errors_addf(errs, "--candidates: %s", err);
  else if (!cJSON_IsArray(list) || !cJSON_GetArraySize(list))
    exp_errors_addf(errs, "%s: expected a non-empty list of candidates (policy objects, or "
                    "objects of \"path\": value), found %s", path,
                    list ? "another value" : "text that is not JSON");
  size_t i = 0;
  for (const cJSON *item = cJSON_IsArray(list) ? list->child : NULL; item; item = item->next, i++) {
    if (!cJSON_IsObject(item)) {
      exp_errors_addf(errs, "%s: [%zu]: expected an object", path, i);
      continue;
    }
    cJSON *cand = file_item(b, item, i, path, errs);
    if (!cand) continue;
    exp_buf label = {0};
    adv_choice_label(cand, b, &label);
    char *l = exp_buf_take(&label);
    adv_candidate_add(c, b, cand, l ? l : "?", "file");
    free(l);
  }
  cJSON_Delete(list);
  return errs->count ? -1 : 0;
}

/* A number of the spec at path, or dflt. */
static double number_at(const cJSON *spec, const char *path, double dflt) {
  const cJSON *v = exp_path_get(spec, path);
  return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* The reasons candidates were refused, for the error that none applies. */
static void explain_none(const adv_candidates *c, exp_errors *errs, const char *file) {
  exp_errors_addf(errs, "%s: policy: no candidate applies to this workload and cluster "
                  "(every one was refused by the spec's checks); the first reasons:", file);
  size_t k = 0;
  for (const cJSON *s = c->skipped ? c->skipped->child : NULL; s && k < 5; s = s->next, k++) {
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(s, "label");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(s, "reason");
    exp_errors_addf(errs, "  %s: %s", cJSON_GetStringValue(l), cJSON_GetStringValue(r));
  }
}

/* The steps per worker of spec's workload on its cluster (0: it cannot be
 * made); cheap in advise, which keeps workloads (wl_keep_tables). */
static uint64_t steps_of(const cJSON *spec, const char *base_dir) {
  double nodes = number_at(spec, "cluster.nodes", 1);
  wl_context ctx = {.nodes = (uint32_t)number_at(spec, "cluster.worker_nodes", nodes),
                    .workers_per_node = (uint32_t)number_at(spec, "cluster.workers_per_node", 1),
                    .base_dir = base_dir};
  char err[512];
  wl_workload *wl = wl_create(exp_path_get(spec, "workload"), &ctx, err, sizeof err);
  uint64_t steps = wl ? wl_steps_per_worker(wl) : 0;
  wl_free(wl);
  return steps;
}

/* Each candidate's length, where adv_prefix needs it to cut the run and
 * the spec does not say it, set in the spec as the same run, counted for
 * its own workers: a trace that runs its longest replayed sequence (no
 * steps_per_worker, one epoch; recorded worker i is replayed by worker i
 * mod W) gets workload.steps_per_worker; an mf, kge or w2v (whose length is
 * their data's epochs, or their own stop_after) gets workload.stop_after
 * "<n> steps", so that it can be cut below one epoch (stop_added where the
 * spec had none: winner.json leaves it out again). */
static void run_steps(adv_candidates *c, const char *base_dir) {
  for (size_t i = 0; i < c->count; i++) {
    cJSON *spec = c->items[i].spec;
    const cJSON *wl = exp_path_get(spec, "workload");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(wl, "type");
    bool trace = cJSON_IsString(type) && strcmp(type->valuestring, "trace") == 0 &&
                 !cJSON_GetObjectItemCaseSensitive(wl, "steps_per_worker") &&
                 number_at(spec, "workload.epochs", 1) == 1;
    if (!trace && !adv_stops_after(wl)) continue;
    uint64_t steps = steps_of(spec, base_dir);
    c->items[i].stop_added =
        steps > 0 && !trace && !cJSON_GetObjectItemCaseSensitive(wl, "stop_after");
    char err[512], text[64];
    snprintf(text, sizeof text, "%llu steps", (unsigned long long)steps);
    if (steps > 0 && trace)
      exp_path_set(spec, "workload.steps_per_worker", cJSON_CreateNumber((double)steps), err,
                   sizeof err);
    else if (steps > 0)
      exp_path_set(spec, "workload.stop_after", cJSON_CreateString(text), err, sizeof err);
  }
}

int adv_candidates_build(const cJSON *spec, const char *file, const char *base_dir,
                         const char *cand_file, adv_candidates *out, exp_errors *errs) {
  *out = (adv_candidates){.skipped = cJSON_CreateArray()};
  if (cJSON_GetObjectItemCaseSensitive(spec, "stages")) {
    exp_errors_addf(errs, "%s: stages: advise does not search multi-stage runs yet (the "
                    "stage scheduler's \"workers\": \"auto\" chooses within a run)", file);
    return -1;
  }
  adv_build b = {.file = file, .base_dir = base_dir, .spec = spec, .base = adv_base_of(spec)};
  b.nodes = number_at(spec, "cluster.nodes", 1);
  b.workers_per_node = number_at(spec, "cluster.workers_per_node", 1);
  b.servers = number_at(spec, "cluster.servers", 0);
  b.steps = number_at(spec, "workload.steps_per_worker", 0);
  b.quality = wl_quality_of(cJSON_GetObjectItemCaseSensitive(spec, "workload")) != NULL;
  if (cand_file) {
    adv_add_file_set(out, &b, cand_file, errs);
  } else {
    adv_add_spec_set(out, &b);
    adv_add_pslab_set(out, &b);
  }
  cJSON_Delete(b.base);
  if (errs->count) return -1;
  if (!out->count) {
    explain_none(out, errs, file);
    return -1;
  }
  run_steps(out, base_dir);
  return 0;
}
