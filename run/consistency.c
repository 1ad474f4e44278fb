/*
 * The spec's "consistency" object: read, and checked against the policy and
 * the workload. What each model does for a run:
 * docs/consistency.md, "Consistency: BSP, SSP, ESSP, SparseSSP"; what it
 * means for the core: model/ps.h, "clocks, consistency".
 */
#include "run/internal.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

/* The consistency models a spec names; bsp is ssp with staleness 0. */
static const struct {
  const char *name;
  ps_consistency_model model;
} models[] = {{"async", PS_CONSISTENCY_ASYNC}, {"bsp", PS_CONSISTENCY_SSP},
              {"ssp", PS_CONSISTENCY_SSP},     {"essp", PS_CONSISTENCY_ESSP},
              {"sparse", PS_CONSISTENCY_SPARSE}};

/* "model": the index in models[], or -1 with a message. */
static int parse_model(const cJSON *json, char *err, size_t errlen) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(json, "model");
  size_t i = 0, n = sizeof models / sizeof models[0];
  while (cJSON_IsString(m) && i < n && strcmp(models[i].name, m->valuestring) != 0) i++;
  if (!cJSON_IsString(m) || i == n) {
    snprintf(err, errlen, "model: expected \"async\", \"bsp\", \"ssp\", \"essp\" or "
                          "\"sparse\", found %s%s%s",
             cJSON_IsString(m) ? "\"" : "",
             cJSON_IsString(m) ? m->valuestring : m ? "a non-string" : "nothing",
             cJSON_IsString(m) ? "\"" : "");
    return -1;
  }
  return (int)i;
}

/* "staleness", for out->model (bsp: the one named bsp). */
static int parse_staleness(const cJSON *json, bool bsp, ps_consistency *out, char *err,
                           size_t errlen) {
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(json, "staleness");
  if (st && (bsp || out->model == PS_CONSISTENCY_ASYNC)) {
    snprintf(err, errlen, "staleness: %s takes none (%s)", bsp ? "bsp" : "async",
             bsp ? "bsp is ssp with staleness 0" : "async has no bound");
    return -1;
  }
  if (st) {
    double v = cJSON_IsNumber(st) ? st->valuedouble : -1;
    if (v < 0 || v > 1000000 || v != (double)(uint32_t)v) {
      snprintf(err, errlen, "staleness: expected an integer from 0 to 1000000");
      return -1;
    }
    out->staleness = (uint32_t)v;
  } else if (!bsp && out->model != PS_CONSISTENCY_ASYNC) {
    snprintf(err, errlen, "staleness: expected the clocks a worker may run ahead (an "
                          "integer >= 0; 0 is bsp), found nothing");
    return -1;
  }
  return 0;
}

/* "lookahead", for out->model (sparse's default when absent). */
static int parse_lookahead(const cJSON *json, ps_consistency *out, char *err, size_t errlen) {
  const cJSON *la = cJSON_GetObjectItemCaseSensitive(json, "lookahead");
  if (la && out->model != PS_CONSISTENCY_SPARSE) {
    snprintf(err, errlen, "lookahead: only sparse takes one (the clocks ahead its workers "
                          "signal the keys they will use)");
    return -1;
  }
  out->lookahead = out->model == PS_CONSISTENCY_SPARSE ? RUN_SPARSE_LOOKAHEAD : 0;
  if (la) {
    double v = cJSON_IsNumber(la) ? la->valuedouble : -1;
    if (v < 1 || v > PS_MAX_LOOKAHEAD || v != (double)(uint32_t)v) {
      snprintf(err, errlen, "lookahead: expected an integer from 1 to %u", PS_MAX_LOOKAHEAD);
      return -1;
    }
    out->lookahead = (uint32_t)v;
  }
  return 0;
}

int run_consistency_parse(const cJSON *json, ps_consistency *out, char *err, size_t errlen) {
  *out = (ps_consistency){.model = PS_CONSISTENCY_ASYNC};
  if (!json) return 0;
  if (!cJSON_IsObject(json)) {
    snprintf(err, errlen, "expected an object {\"model\", \"staleness\"}");
    return -1;
  }
  static const char *const fields[] = {"model", "staleness", "lookahead"};
  for (const cJSON *f = json->child; f; f = f->next) {
    const char *near = NULL;
    size_t best = 3, d;
    bool known = false;
    for (size_t k = 0; k < 3 && !known; k++) {
      known = strcmp(f->string, fields[k]) == 0;
      if (ps_near_name(f->string, fields[k], &d) && d < best) best = d, near = fields[k];
    }
    if (known) continue;
    char hint[64] = "";
    if (near) snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", near);
    snprintf(err, errlen, "%s: unknown field (expected \"model\", \"staleness\" or "
                          "\"lookahead\")%s", f->string, hint);
    return -1;
  }
  int i = parse_model(json, err, errlen);
  if (i < 0) return -1;
  out->model = models[i].model;
  bool bsp = strcmp(models[i].name, "bsp") == 0;
  if (parse_staleness(json, bsp, out, err, errlen) != 0) return -1;
  return parse_lookahead(json, out, err, errlen);
}

int run_consistency_check(ps_consistency c, const ps_policy_settings *settings, bool samples,
                          char *err, size_t errlen) {
  if (c.model == PS_CONSISTENCY_ASYNC) return 0;
  if (settings->owner_replicas) {
    snprintf(err, errlen, "%s is refused with replicas synced through their owner (policy "
                          "adaptive, or sync \"owner\"): their reads cannot be bounded in "
                          "clocks; use sync \"allreduce\"",
             ps_consistency_name(c.model));
    return -1;
  }
  if (!settings->fast_local_access) {
    snprintf(err, errlen, "%s needs fast_local_access (its reads are served from the "
                          "node's memory and cache)",
             ps_consistency_name(c.model));
    return -1;
  }
  if (c.model == PS_CONSISTENCY_SPARSE && samples) {
    snprintf(err, errlen, "sparse is refused for a workload that samples: its samples are "
                          "not signalled as intents, so the keys a worker writes are not "
                          "known ahead");
    return -1;
  }
  return 0;
}
