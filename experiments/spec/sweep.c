/*
 * Sweep expansion: from one spec to the list of runs it asks for.
 *
 * "sweep" maps dotted paths to lists of values. The runs are the cartesian
 * product of those lists, the first key outermost (it changes slowest), the
 * whole product repeated `repeats` times: all points of repeat 0 first, so
 * that a complete comparison exists as early as possible. Each run's config
 * is the spec without "sweep" and "plots", with the run's values put at
 * their paths in key order: a value that is an object replaces the object
 * at its path, and a later key may set a field inside what an earlier key
 * put there.
 *
 * Shards split the runs between invocations (machines, array jobs) by run
 * number, round robin: shard K of N holds runs K, K + N, K + 2N, ... Taking
 * every N-th run rather than a block spreads the sweep points and repeats,
 * so shards take about the same time and each has early results of most
 * points.
 */
#include "experiments/spec/spec.h"
#include "model/ps.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 1000000u

/* Top-level keys that are one value for the whole experiment. */
static const char *const fixed_keys[] = {"name", "repeats", "sweep", "plots",
                                         NULL};

typedef struct {
  const char *path;
  const cJSON *values;
  size_t size;
  size_t stride; /* points between two successive values of this axis */
} axis;

uint64_t exp_run_seed(uint64_t spec_seed, uint32_t repeat) {
  /* Every sweep point of one repeat gets the same seed, so the settings a
   * sweep compares (policies, cluster sizes) see the same generated data:
   * differences between points come from the setting, not from the draw.
   * Repeat 0 keeps the spec's seed, so a run can be redone alone from the
   * seed its record shows. Later repeats mix (seed, repeat) with SplitMix64
   * and keep it below EXP_SEED_LIMIT (10^15), so that the seed is exact as a
   * JSON number even where a writer prints 15 significant digits (cJSON
   * does, when they read back within its tolerance): a record whose seed
   * came back rounded would not be taken for its run. */
  if (repeat == 0) return spec_seed;
  uint64_t z = ps_mix64(spec_seed + (uint64_t)repeat * 0x9E3779B97F4A7C15ull);
  return z % EXP_SEED_LIMIT;
}

char *exp_sweep_label(const cJSON *sweep) {
  exp_buf b = {0};
  exp_buf_puts(&b, "");
  for (const cJSON *c = sweep ? sweep->child : NULL; c; c = c->next) {
    const char *sep = c == sweep->child ? "" : ", ";
    bool empty = (cJSON_IsArray(c) || cJSON_IsObject(c)) && !c->child;
    const char *words = empty ? exp_empty_label(c->string) : "none";
    if (strcmp(words, "none") != 0) { /* as the table says it: "no straggler" */
      exp_buf_printf(&b, "%s%s", sep, words);
      continue;
    }
    char *v = empty ? NULL : exp_value_label(c);
    exp_buf_printf(&b, "%s%s=%s", sep, c->string, empty ? "none" : v ? v : "?");
    free(v);
  }
  return exp_buf_take(&b);
}

/* ------------------------------------------------------------- axes */

static bool is_fixed(const char *path) {
  size_t len = strcspn(path, ".");
  for (size_t i = 0; fixed_keys[i]; i++)
    if (strlen(fixed_keys[i]) == len && strncmp(path, fixed_keys[i], len) == 0)
      return true;
  return false;
}

/* " (did you mean \"workload\"?)" for the first segment of path that the
 * spec lacks, when a key of the object above it is near; else nothing. */
static void near_segment(const cJSON *spec, const char *path, char *hint, size_t n) {
  const cJSON *at = spec;
  for (const char *s = path; cJSON_IsObject(at) && *s;) {
    size_t len = strcspn(s, ".");
    char seg[EXP_PATH_MAX];
    snprintf(seg, sizeof seg, "%.*s", (int)len, s);
    const cJSON *next = cJSON_GetObjectItemCaseSensitive(at, seg);
    if (next) {
      at = next;
      s += len + (s[len] == '.');
      continue;
    }
    size_t best = SIZE_MAX, d;
    for (const cJSON *k = at->child; k; k = k->next)
      if (k->string && ps_near_name(seg, k->string, &d) && d < best) {
        best = d;
        snprintf(hint, n, " (did you mean \"%s\"?)", k->string);
      }
    return;
  }
}

/* Whether the sweep key names something settable in spec. */
static bool settable(exp_errors *e, const cJSON *spec, const char *path,
                     const char *p) {
  if (!*path || path[0] == '.' || path[strlen(path) - 1] == '.' ||
      strstr(path, "..")) {
    exp_errors_addf(e, "%s: expected a dotted path such as \"cluster.nodes\", found \"%s\"",
                    p, path);
    return false;
  }
  if (is_fixed(path)) {
    exp_errors_addf(e, "%s: expected a setting that may differ between runs, "
                       "found \"%s\", which is one for the whole experiment", p, path);
    return false;
  }
  const char *dot = strrchr(path, '.');
  if (!dot) return true;
  char *parent_path = strndup(path, (size_t)(dot - path));
  const cJSON *parent = parent_path ? exp_path_get(spec, parent_path) : NULL;
  bool ok = cJSON_IsObject(parent) ||
            (cJSON_IsArray(parent) && exp_path_get(spec, path));
  char hint[128] = "";
  if (!ok && !parent) near_segment(spec, path, hint, sizeof hint);
  if (!ok)
    exp_errors_addf(e, "%s: expected a path whose parent exists in the spec, found %s %s%s",
                    p, parent ? "no element" : "no", parent ? path : parent_path, hint);
  free(parent_path);
  return ok;
}

static bool axis_ok(exp_errors *e, const cJSON *spec, const cJSON *sweep,
                    const cJSON *item) {
  char p[EXP_PATH_MAX];
  snprintf(p, sizeof p, "sweep[\"%s\"]", item->string);
  for (const cJSON *c = sweep->child; c != item; c = c->next) {
    if (strcmp(c->string, item->string) == 0) {
      exp_errors_addf(e, "%s: expected each path once in sweep, found it again", p);
      return false;
    }
  }
  bool ok = settable(e, spec, item->string, p);
  if (!cJSON_IsArray(item) || !item->child) {
    exp_expect(e, p, "a non-empty list of values", item);
    ok = false;
  }
  return ok;
}

/* The valid axes of spec's sweep; *n of them. NULL when there are none. */
static axis *collect_axes(exp_errors *e, const cJSON *spec, size_t *n) {
  *n = 0;
  const cJSON *sweep = cJSON_GetObjectItemCaseSensitive(spec, "sweep");
  if (!sweep) return NULL;
  if (!cJSON_IsObject(sweep)) {
    exp_expect(e, "sweep", "an object of dotted paths to lists of values", sweep);
    return NULL;
  }
  axis *axes = calloc((size_t)cJSON_GetArraySize(sweep) + 1, sizeof *axes);
  if (!axes) return NULL;
  for (const cJSON *c = sweep->child; c; c = c->next) {
    if (!axis_ok(e, spec, sweep, c)) continue;
    axes[*n] = (axis){.path = c->string, .values = c,
                      .size = (size_t)cJSON_GetArraySize(c)};
    (*n)++;
  }
  return axes;
}

/* Number of sweep points, strides filled; 0 when there are too many. */
static size_t count_points(axis *axes, size_t n) {
  size_t points = 1;
  for (size_t a = n; a-- > 0;) {
    axes[a].stride = points;
    if (axes[a].size > MAX_RUNS / points) return 0;
    points *= axes[a].size;
  }
  return points;
}

/* ------------------------------------------------------------- runs */

static double int_member(const cJSON *spec, const char *key, double min,
                         double fallback) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, key);
  double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
  return d >= min && d <= EXP_INT_MAX && d == (double)(uint64_t)d ? d : fallback;
}

/* Fills run (point p of repeat r). false on no memory. A value that cannot
 * be put at its path is reported once per axis (*reported). */
static bool make_run(const cJSON *base, const axis *axes, size_t n_axes,
                     size_t p, exp_run *run, bool *reported, exp_errors *e) {
  run->config = cJSON_Duplicate(base, true);
  run->sweep = cJSON_CreateObject();
  if (!run->config || !run->sweep) return false;
  for (size_t a = 0; a < n_axes; a++) {
    const cJSON *v = cJSON_GetArrayItem(axes[a].values,
                                        (int)((p / axes[a].stride) % axes[a].size));
    cJSON *copy = cJSON_Duplicate(v, true);
    if (!copy || !cJSON_AddItemToObject(run->sweep, axes[a].path, copy)) {
      cJSON_Delete(copy);
      return false;
    }
  }
  for (size_t a = 0; a < n_axes; a++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(run->sweep, axes[a].path);
    char err[EXP_PATH_MAX + 128];
    if (exp_path_set(run->config, axes[a].path, cJSON_Duplicate(v, true), err,
                     sizeof err) == 0 || reported[a])
      continue;
    reported[a] = true;
    char *label = exp_sweep_label(run->sweep);
    exp_errors_addf(e, "sweep[\"%s\"]: cannot be set in sweep point %s: %s",
                    axes[a].path, label ? label : "?", err);
    free(label);
  }
  run->point = p;
  run->seed = exp_run_seed((uint64_t)int_member(run->config, "seed", 0, 1),
                           run->repeat);
  return true;
}

static bool make_runs(const cJSON *spec, const axis *axes, size_t n_axes,
                      exp_run_list *out, exp_errors *e) {
  cJSON *base = cJSON_Duplicate(spec, true);
  bool *reported = calloc(n_axes + 1, sizeof *reported);
  bool ok = base && reported;
  if (ok) {
    cJSON_DeleteItemFromObjectCaseSensitive(base, "sweep");
    cJSON_DeleteItemFromObjectCaseSensitive(base, "plots");
  }
  for (size_t i = 0; ok && i < out->count; i++) {
    exp_run *run = &out->runs[i];
    run->run = (uint32_t)i + 1;
    run->repeat = (uint32_t)(i / out->points);
    ok = make_run(base, axes, n_axes, i % out->points, run, reported, e);
  }
  if (!ok) exp_errors_addf(e, "sweep: out of memory expanding %zu runs", out->count);
  free(reported);
  cJSON_Delete(base);
  return ok;
}

bool exp_sweep_expand(const cJSON *spec, exp_run_list *out, exp_errors *errs) {
  size_t before = errs->count;
  *out = (exp_run_list){0};
  if (!cJSON_IsObject(spec)) {
    exp_expect(errs, "", "an object", spec);
    return false;
  }
  size_t n_axes;
  axis *axes = collect_axes(errs, spec, &n_axes);
  size_t points = count_points(axes, n_axes);
  size_t repeats = (size_t)int_member(spec, "repeats", 1, 1);
  if (points == 0 || repeats > MAX_RUNS / points) {
    exp_errors_addf(errs, "sweep: expected at most %u runs (sweep points times "
                          "repeats), found more", MAX_RUNS);
    free(axes);
    return false;
  }
  out->points = points;
  out->count = points * repeats;
  out->runs = calloc(out->count, sizeof *out->runs);
  if (!out->runs) {
    out->count = 0;
    exp_errors_addf(errs, "sweep: out of memory for %zu runs", points * repeats);
  } else if (!make_runs(spec, axes, n_axes, out, errs)) {
    exp_run_list_free(out);
  }
  free(axes);
  return errs->count == before;
}

void exp_run_list_free(exp_run_list *l) {
  for (size_t i = 0; i < l->count; i++) {
    cJSON_Delete(l->runs[i].sweep);
    cJSON_Delete(l->runs[i].config);
  }
  free(l->runs);
  *l = (exp_run_list){0};
}

/* ----------------------------------------------------------- shards */

/* A whole number in [0, UINT32_MAX] of digits only (no sign, no spaces). */
static bool parse_u32(const char *s, size_t len, uint32_t *out) {
  if (len == 0 || len > 10 || strspn(s, "0123456789") < len) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++) v = v * 10 + (uint64_t)(s[i] - '0');
  if (v > UINT32_MAX) return false;
  *out = (uint32_t)v;
  return true;
}

int exp_shard_parse(const char *text, exp_shard *out, char *err, size_t errlen) {
  const char *slash = strchr(text, '/');
  uint32_t k, n;
  if (!slash || !parse_u32(text, (size_t)(slash - text), &k) ||
      !parse_u32(slash + 1, strlen(slash + 1), &n)) {
    snprintf(err, errlen, "expected K/N, two whole numbers such as 2/8, found \"%s\"",
             text);
    return -1;
  }
  if (k < 1 || k > n) {
    snprintf(err, errlen, "expected K/N with 1 <= K <= N (shard K of N), found \"%s\"",
             text);
    return -1;
  }
  *out = (exp_shard){k, n};
  return 0;
}

bool exp_shard_has(const exp_shard *s, uint32_t run) {
  return !s || s->count == 0 || (run - 1) % s->count == s->index - 1;
}

size_t exp_shard_size(const exp_shard *s, const exp_run_list *runs) {
  size_t n = 0;
  for (size_t i = 0; i < runs->count; i++) n += exp_shard_has(s, runs->runs[i].run);
  return n;
}
