/*
 * Stages: a run as a series of stages, each with its own number of active
 * workers, steps, batch, learning rate and consistency (FlexPS). run/run.h
 * says what the fields mean; here they are read and checked, the plan is
 * made (each stage's workload, consistency, closing clock and seed), and
 * which worker runs how many steps of a stage is decided, once for every
 * backend. The driving itself is in worker.c.
 *
 * One reader serves both callers: spec validation (run_stages_check, which
 * also accepts "workers": "auto") and run_setup_new (run_stages_plan, which
 * keeps each stage's workload and refuses "auto": the stage scheduler in
 * experiments/ resolves it before a backend sees the spec).
 */
#include "run/internal.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ worker share */

uint64_t run_stage_worker_steps(uint32_t nodes, uint32_t workers_per_node, uint32_t active,
                                uint64_t steps, uint32_t rank) {
  /* Round-robin over nodes: position p is worker p / nodes of node p % nodes. */
  uint32_t node = rank / workers_per_node, index = rank % workers_per_node;
  uint64_t pos = (uint64_t)index * nodes + node;
  if (active == 0 || pos >= active) return 0;
  return steps / active + (pos < steps % active ? 1 : 0);
}

size_t run_stage_candidates(const run_stage_info *st, uint32_t workers, uint32_t *out) {
  size_t n = 0;
  for (uint64_t c = 1; c <= workers; c = c < workers && c * 2 > workers ? workers : c * 2) {
    uint64_t per = (st->steps + c - 1) / c;
    if (c <= st->steps && per <= st->max_per_worker && n < RUN_STAGE_CANDIDATES_MAX)
      out[n++] = (uint32_t)c;
    if (c == workers) break;
  }
  return n;
}

/* ---------------------------------------------------------------- reading */

typedef struct {
  const run_args *a;
  const ps_policy_settings *settings;
  const wl_workload *base;  /* the run's workload */
  ps_consistency top;       /* the spec's top-level consistency */
  bool allow_auto;
  char *err;
  size_t errlen;
} reader;

static int bad(reader *r, size_t i, const char *fmt, ...) {
  char what[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(r->err, r->errlen, "stages[%zu]%s", i, what);
  return -1;
}

static const char *describe(const cJSON *v, char *buf, size_t n) {
  if (!v) return "nothing (the key is missing)";
  if (cJSON_IsString(v)) {
    snprintf(buf, n, "\"%.40s\"", v->valuestring);
    return buf;
  }
  if (cJSON_IsNumber(v)) {
    snprintf(buf, n, "%.17g", v->valuedouble);
    return buf;
  }
  return cJSON_IsArray(v) ? "a list" : cJSON_IsObject(v) ? "an object"
         : cJSON_IsBool(v) ? "a boolean" : "null";
}

static bool is_count(const cJSON *v, double lo, double hi) {
  return cJSON_IsNumber(v) && v->valuedouble >= lo && v->valuedouble <= hi &&
         v->valuedouble == floor(v->valuedouble);
}

static const char *const stage_keys[] = {"workers", "steps", "batch", "lr", "consistency",
                                         NULL};

static int check_keys(reader *r, const cJSON *stage, size_t i) {
  for (const cJSON *f = stage->child; f; f = f->next) {
    size_t k = 0;
    while (stage_keys[k] && strcmp(stage_keys[k], f->string) != 0) k++;
    if (!stage_keys[k])
      return bad(r, i, ".%s: unknown field (a stage takes workers, steps, batch, lr and "
                       "consistency)", f->string);
  }
  return 0;
}

/* The stage's workload: the run's with its batch and lr in their place;
 * *out NULL when it sets neither (the run's serves). */
static int stage_workload(reader *r, const cJSON *stage, size_t i, wl_workload **out) {
  *out = NULL;
  const cJSON *batch = cJSON_GetObjectItemCaseSensitive(stage, "batch");
  const cJSON *lr = cJSON_GetObjectItemCaseSensitive(stage, "lr");
  if (!batch && !lr) return 0;
  cJSON *json = cJSON_Duplicate(r->a->workload, true);
  const cJSON *fields[] = {batch, lr};
  const char *names[] = {"batch", "lr"};
  for (int k = 0; json && k < 2; k++) {
    if (!fields[k]) continue;
    cJSON *copy = cJSON_Duplicate(fields[k], true);
    bool ok = copy && (cJSON_GetObjectItemCaseSensitive(json, names[k])
                           ? cJSON_ReplaceItemInObjectCaseSensitive(json, names[k], copy)
                           : cJSON_AddItemToObject(json, names[k], copy));
    if (!ok) {
      cJSON_Delete(copy);
      cJSON_Delete(json);
      json = NULL;
    }
  }
  if (!json) return bad(r, i, ": out of memory");
  char why[512] = "";
  wl_context ctx = {.nodes = r->a->nodes, .workers_per_node = r->a->workers_per_node,
                    .base_dir = r->a->base_dir};
  *out = wl_create(json, &ctx, why, sizeof why);
  cJSON_Delete(json);
  if (!*out) {
    /* The workload's message is relative to it: "lr: expected ...". */
    for (int k = 0; k < 2; k++) {
      size_t len = strlen(names[k]);
      if (fields[k] && strncmp(why, names[k], len) == 0 && why[len] == ':')
        return bad(r, i, ".%s%s", names[k],
                   strstr(why, "unknown field")
                       ? ": the workload has no such field (a stage may set batch and lr "
                         "of the workloads that have them: mf, kge, w2v, dnn)"
                       : why + len);
    }
    return bad(r, i, ": the stage's workload: %s", why);
  }
  ps_layout mine = {0}, run = {0};
  wl_tables(*out, &mine);
  wl_tables(r->base, &run);
  if (mine.num_tables != run.num_tables ||
      memcmp(mine.tables, run.tables, run.num_tables * sizeof *run.tables) != 0) {
    wl_free(*out);
    *out = NULL;
    return bad(r, i, ": its batch or lr changes the workload's keys; a stage must keep them");
  }
  return 0;
}

static int stage_consistency(reader *r, const cJSON *stage, size_t i, bool samples,
                             ps_consistency *out) {
  char why[512];
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(stage, "consistency");
  *out = r->top;
  if (c && run_consistency_parse(c, out, why, sizeof why) != 0)
    return bad(r, i, ".consistency.%s", why);
  if (run_consistency_check(*out, r->settings, samples, why, sizeof why) != 0)
    return bad(r, i, ".consistency: %s", why);
  return 0;
}

/* Reads stage i into *info (and when wl is non-NULL, its own workload into
 * *wl and its consistency into *c). */
static int read_stage(reader *r, const cJSON *stage, size_t i, run_stage_info *info,
                      wl_workload **wl, ps_consistency *c) {
  char buf[64];
  uint32_t total = r->a->nodes * r->a->workers_per_node;
  if (!cJSON_IsObject(stage))
    return bad(r, i, ": expected an object {\"workers\", \"steps\", ...}, found %s",
               describe(stage, buf, sizeof buf));
  if (check_keys(r, stage, i) != 0) return -1;
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(stage, "workers");
  *info = (run_stage_info){0};
  if (cJSON_IsString(w) && strcmp(w->valuestring, "auto") == 0) {
    if (!r->allow_auto)
      return bad(r, i, ".workers: \"auto\" is resolved by the stage scheduler before a run "
                       "starts (pslab run does it); a backend needs a count");
    info->auto_workers = true;
  } else if (is_count(w, 1, total)) {
    info->workers = (uint32_t)w->valuedouble;
  } else {
    return bad(r, i, ".workers: expected an integer from 1 to %u (the cluster's workers) or "
                     "\"auto\", found %s", (unsigned)total, describe(w, buf, sizeof buf));
  }
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(stage, "steps");
  if (!is_count(st, 1, 9007199254740991.0))
    return bad(r, i, ".steps: expected the stage's steps in all, an integer >= 1, found %s",
               describe(st, buf, sizeof buf));
  info->steps = (uint64_t)st->valuedouble;
  wl_workload *own = NULL;
  if (stage_workload(r, stage, i, &own) != 0) return -1;
  const wl_workload *used = own ? own : r->base;
  info->max_per_worker = wl_steps_per_worker(used);
  ps_consistency cons;
  int rc = stage_consistency(r, stage, i, wl_samples(used), &cons);
  if (rc == 0 && info->workers && info->steps < info->workers)
    rc = bad(r, i, ".steps: %llu steps cannot keep %u workers busy (each active worker runs "
                   "at least one)", (unsigned long long)info->steps, (unsigned)info->workers);
  uint64_t per = info->workers ? (info->steps + info->workers - 1) / info->workers : 0;
  if (rc == 0 && per > info->max_per_worker)
    rc = bad(r, i, ".steps: %llu steps over %u workers is up to %llu per worker, more than the "
                   "%llu the workload gives one worker (workload.steps_per_worker, or its data "
                   "and epochs)", (unsigned long long)info->steps, (unsigned)info->workers,
             (unsigned long long)per, (unsigned long long)info->max_per_worker);
  uint32_t cand[RUN_STAGE_CANDIDATES_MAX];
  if (rc == 0 && info->auto_workers && run_stage_candidates(info, total, cand) == 0)
    rc = bad(r, i, ".steps: no worker count from 1 to %u runs %llu steps with at most %llu "
                   "per worker (the workload's steps per worker)", (unsigned)total,
             (unsigned long long)info->steps, (unsigned long long)info->max_per_worker);
  if (rc != 0 || !wl) {
    wl_free(own);
    return rc;
  }
  *wl = own;
  *c = cons;
  return 0;
}

static int read_list(reader *r, const cJSON *stages, size_t *n) {
  *n = 0;
  int count = cJSON_IsArray(stages) ? cJSON_GetArraySize(stages) : -1;
  if (count < 1 || count > RUN_STAGES_MAX) {
    char buf[64];
    snprintf(r->err, r->errlen, "stages: expected a list of 1 to %d stages "
             "[{\"workers\", \"steps\"}, ...], found %s", RUN_STAGES_MAX,
             count == 0 ? "an empty list" : describe(stages, buf, sizeof buf));
    return -1;
  }
  *n = (size_t)count;
  return 0;
}

/* ----------------------------------------------------------------- check */

int run_stages_check(const run_args *a, bool allow_auto, run_stage_info *info, size_t *n,
                     char *err, size_t errlen) {
  *n = 0;
  if (!a->stages) return 0;
  char why[512];
  const ps_policy_ops *ops;
  ps_policy_settings settings;
  ps_policy_settings_default(&settings);
  if (ps_policy_configure(a->policy, &ops, &settings, why, sizeof why) != PS_OK) return 0;
  wl_context ctx = {.nodes = a->nodes, .workers_per_node = a->workers_per_node,
                    .base_dir = a->base_dir};
  wl_workload *base = a->nodes && a->workers_per_node ? wl_create(a->workload, &ctx, why,
                                                                  sizeof why)
                                                      : NULL;
  if (!base) return 0;
  reader r = {.a = a, .settings = &settings, .base = base, .allow_auto = allow_auto,
              .err = err, .errlen = errlen};
  if (run_consistency_parse(a->consistency, &r.top, why, sizeof why) != 0)
    r.top = (ps_consistency){PS_CONSISTENCY_ASYNC, 0, 0}; /* reported on its own */
  size_t count;
  int rc = read_list(&r, a->stages, &count);
  size_t i = 0, used = 0;
  char one[768];
  r.err = one;
  r.errlen = sizeof one;
  for (const cJSON *st = rc == 0 ? a->stages->child : NULL; st; st = st->next, i++) {
    if (read_stage(&r, st, i, &info[i], NULL, NULL) == 0) continue;
    /* Every stage's problem, a line each. */
    int k = snprintf(err + used, errlen - used, "%s%s", rc ? "\n" : "", one);
    if (k > 0) used += (size_t)k < errlen - used ? (size_t)k : errlen - used - 1;
    rc = -1;
  }
  wl_free(base);
  if (rc == 0) *n = count;
  return rc;
}

/* ------------------------------------------------------------------ plan */

int run_stages_plan(run_setup *s, char *err, size_t errlen) {
  reader r = {.a = &s->args, .settings = &s->settings, .base = s->wl, .top = s->consistency,
              .allow_auto = false, .err = err, .errlen = errlen};
  size_t count;
  if (read_list(&r, s->args.stages, &count) != 0) return -1;
  s->stages = calloc(count, sizeof *s->stages);
  s->stage_ends = calloc(count, sizeof *s->stage_ends);
  if (!s->stages || !s->stage_ends) {
    snprintf(err, errlen, "run: out of memory");
    return -1;
  }
  size_t i = 0;
  int64_t clock = 0;
  for (const cJSON *st = s->args.stages->child; st; st = st->next, i++) {
    run_stage *p = &s->stages[i];
    run_stage_info info;
    if (read_stage(&r, st, i, &info, &p->wl, &p->consistency) != 0) return -1;
    s->n_stages = i + 1; /* from here run_stages_free frees its workload */
    p->workers = info.workers;
    p->steps = info.steps;
    /* One clock more than its longest share: a worker's driver ends its last
     * step's clock before that step's push is acknowledged (async does not
     * wait), so the stage's closing clock is one that every worker moves to
     * only after wl_drive returned, its writes applied. */
    clock += (int64_t)((info.steps + info.workers - 1) / info.workers) + 1;
    p->end_clock = clock;
    s->stage_ends[i] = clock;
    /* Distinct per stage, the same whichever backend runs it; each worker's
     * stream then mixes in its rank (wl_stream_new). */
    p->seed = ps_mix64(s->args.seed ^ ps_mix64(0x5354414745ULL + (uint64_t)i));
  }
  return 0;
}

void run_stages_free(run_setup *s) {
  for (size_t i = 0; s->stages && i < s->n_stages; i++) wl_free(s->stages[i].wl);
  free(s->stages);
  free(s->stage_ends);
  s->stages = NULL;
  s->stage_ends = NULL;
  s->n_stages = 0;
}

size_t run_setup_stages(const run_setup *s) { return s->n_stages; }
