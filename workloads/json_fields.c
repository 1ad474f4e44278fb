/*
 * JSON validation for workload objects: every bad field gets one message of
 * the form "<field>: expected <what>, found <what>", relative to the workload
 * object (the experiments layer prefixes "workload."). Generators read their
 * fields through these helpers so all of them speak the same way; unknown
 * and repeated fields are errors, since a typo must not silently become a
 * default.
 */
#include "workloads/internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------- messages */

void wlj_describe(const cJSON *v, char *buf, size_t len) {
  if (!v)
    snprintf(buf, len, "nothing");
  else if (cJSON_IsNumber(v))
    snprintf(buf, len, "%.15g", v->valuedouble);
  else if (cJSON_IsString(v))
    snprintf(buf, len, "\"%.40s%s\"", v->valuestring,
             strlen(v->valuestring) > 40 ? "..." : "");
  else if (cJSON_IsBool(v))
    snprintf(buf, len, "%s", cJSON_IsTrue(v) ? "true" : "false");
  else if (cJSON_IsNull(v))
    snprintf(buf, len, "null");
  else if (cJSON_IsArray(v))
    snprintf(buf, len, "an array");
  else if (cJSON_IsObject(v))
    snprintf(buf, len, "an object");
  else
    snprintf(buf, len, "an invalid value");
}

void wlj_error(char *err, size_t errlen, const char *field,
               const char *expected, const cJSON *found) {
  char what[64];
  wlj_describe(found, what, sizeof what);
  if (err && errlen)
    snprintf(err, errlen, "%s: expected %s, found %s", field, expected, what);
}

/* ------------------------------------------------------------- fields */

static bool is_known(const char *name, const char *const *known) {
  for (size_t i = 0; known[i]; i++)
    if (strcmp(name, known[i]) == 0) return true;
  return false;
}

static void list_fields(const char *const *known, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; known[i] && used < len; i++) {
    int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", known[i]);
    if (n < 0) break;
    used += (size_t)n; /* past len on truncation: the loop stops */
  }
}

/* The known field a typo most likely meant, or NULL. */
static const char *nearest(const char *name, const char *const *known) {
  const char *near = NULL;
  size_t best = SIZE_MAX, d;
  for (size_t i = 0; known[i]; i++)
    if (ps_near_name(name, known[i], &d) && d < best) {
      best = d;
      near = known[i];
    }
  return near;
}

bool wlj_check_fields(const cJSON *json, const char *const *known, char *err,
                      size_t errlen) {
  if (!cJSON_IsObject(json)) {
    char what[64];
    wlj_describe(json, what, sizeof what);
    snprintf(err, errlen, "expected an object, found %s", what);
    return false;
  }
  for (const cJSON *f = json->child; f; f = f->next) {
    if (!is_known(f->string, known)) {
      char fields[512], hint[96] = "";
      list_fields(known, fields, sizeof fields);
      const char *near = nearest(f->string, known);
      if (near) snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", near);
      snprintf(err, errlen,
               "%s: expected one of the fields %s, found an unknown field%s",
               f->string, fields, hint);
      return false;
    }
    for (const cJSON *g = f->next; g; g = g->next)
      if (strcmp(f->string, g->string) == 0) {
        snprintf(err, errlen, "%s: expected one value, found the field twice",
                 f->string);
        return false;
      }
  }
  return true;
}

/* ------------------------------------------------------------- values */

bool wlj_uint(const cJSON *json, const char *field, uint64_t min,
              uint64_t max, const uint64_t *def, uint64_t *out, char *err,
              size_t errlen) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(json, field);
  char expected[96];
  if ((double)max >= WLJ_INT_MAX)
    snprintf(expected, sizeof expected, "an integer >= %llu",
             (unsigned long long)min);
  else
    snprintf(expected, sizeof expected, "an integer in [%llu, %llu]",
             (unsigned long long)min, (unsigned long long)max);
  if (!v && def) {
    *out = *def;
    return true;
  }
  double d = v && cJSON_IsNumber(v) ? v->valuedouble : NAN;
  double hi = (double)max < WLJ_INT_MAX ? (double)max : WLJ_INT_MAX;
  if (!isfinite(d) || d != floor(d) || d < (double)min || d > hi) {
    wlj_error(err, errlen, field, expected, v);
    return false;
  }
  *out = (uint64_t)d;
  return true;
}

bool wlj_number(const cJSON *json, const char *field, double min, double max,
                double def, double *out, char *err, size_t errlen) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(json, field);
  if (!v) {
    *out = def;
    return true;
  }
  double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
  if (!isfinite(d) || d < min || d > max) {
    char expected[96];
    if (isinf(max) && isinf(min))
      snprintf(expected, sizeof expected, "a number");
    else if (isinf(max))
      snprintf(expected, sizeof expected, "a number >= %g", min);
    else
      snprintf(expected, sizeof expected, "a number in [%g, %g]", min, max);
    wlj_error(err, errlen, field, expected, v);
    return false;
  }
  *out = d;
  return true;
}

bool wlj_bool(const cJSON *json, const char *field, bool def, bool *out, char *err,
              size_t errlen) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(json, field);
  *out = def;
  if (!v) return true;
  if (!cJSON_IsBool(v)) {
    wlj_error(err, errlen, field, "true or false", v);
    return false;
  }
  *out = cJSON_IsTrue(v);
  return true;
}

bool wlj_string(const cJSON *json, const char *field, const char *def, const char **out,
                char *err, size_t errlen) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(json, field);
  if (!v && def) {
    *out = def;
    return true;
  }
  if (!cJSON_IsString(v) || !v->valuestring[0]) {
    wlj_error(err, errlen, field, "a non-empty string", v);
    return false;
  }
  *out = v->valuestring;
  return true;
}

bool wlj_choice(const cJSON *json, const char *field, const char *const *choices,
                size_t def_index, size_t *out, char *err, size_t errlen) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(json, field);
  if (!v && def_index != SIZE_MAX) {
    *out = def_index;
    return true;
  }
  for (size_t i = 0; cJSON_IsString(v) && choices[i]; i++)
    if (strcmp(v->valuestring, choices[i]) == 0) {
      *out = i;
      return true;
    }
  char expected[256] = "one of";
  size_t used = strlen(expected);
  for (size_t i = 0; choices[i] && used < sizeof expected; i++) {
    int n = snprintf(expected + used, sizeof expected - used, "%s \"%s\"", i ? "," : "",
                     choices[i]);
    if (n < 0) break;
    used += (size_t)n;
  }
  wlj_error(err, errlen, field, expected, v);
  const char *near = cJSON_IsString(v) ? nearest(v->valuestring, choices) : NULL;
  size_t at = near && err && errlen ? strlen(err) : errlen;
  if (at < errlen) snprintf(err + at, errlen - at, " (did you mean \"%s\"?)", near);
  return false;
}

#define EVAL_EVERY_FORMS \
  "a count of steps per worker or a fraction of an epoch, with its unit (\"250 steps\", " \
  "\"0.25 epochs\")"

/* Reads "<number> <unit>" (spaces optional) with unit step(s) or epoch(s):
 * *epochs says which; false for anything else. */
static bool read_eval_every(const char *text, double *n, bool *epochs) {
  char *end;
  *n = strtod(text, &end);
  if (end == text || !isfinite(*n)) return false;
  while (*end == ' ') end++;
  *epochs = strcmp(end, "epoch") == 0 || strcmp(end, "epochs") == 0;
  return *epochs || strcmp(end, "step") == 0 || strcmp(end, "steps") == 0;
}

bool wlj_eval_every(const cJSON *json, wl_info *info, char *err, size_t errlen) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(json, "eval_every");
  info->eval_steps = 0;
  if (!v) return true;
  if (!info->has_quality || !info->math) {
    wlj_error(err, errlen, "eval_every",
              info->math ? "nothing: this workload has no held-out data to evaluate"
                         : "nothing: with \"math\": \"none\" nothing is evaluated",
              v);
    return false;
  }
  double n = 0;
  bool epochs = false;
  if (!cJSON_IsString(v) || !read_eval_every(v->valuestring, &n, &epochs) || !(n > 0) ||
      (!epochs && (n != floor(n) || n > WLJ_INT_MAX))) {
    wlj_error(err, errlen, "eval_every", EVAL_EVERY_FORMS, v);
    return false;
  }
  double steps = epochs ? round(n * (double)info->steps_per_epoch) : n;
  info->eval_steps = steps >= 1 ? (uint64_t)steps : 1;
  return true;
}

bool wlj_stop_after(const cJSON *json, wl_info *info, char *err, size_t errlen) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(json, "stop_after");
  info->stop_steps = 0;
  if (!v) return true;
  double n = 0;
  bool epochs = false;
  if (!cJSON_IsString(v) || !read_eval_every(v->valuestring, &n, &epochs) || !(n > 0) ||
      (!epochs && (n != floor(n) || n > WLJ_INT_MAX))) {
    wlj_error(err, errlen, "stop_after", EVAL_EVERY_FORMS, v);
    return false;
  }
  double steps = epochs ? ceil(n * (double)info->steps_per_epoch) : n;
  info->stop_steps = steps >= 1 ? (uint64_t)steps : 1;
  if (info->stop_steps < info->steps_per_worker) info->steps_per_worker = info->stop_steps;
  return true;
}

bool wlj_optimizer(const cJSON *json, wl_optimizer *out, char *err, size_t errlen) {
  static const char *const optimizers[] = {"sgd", "adagrad", NULL};
  size_t i;
  if (!wlj_choice(json, "optimizer", optimizers, WL_OPT_SGD, &i, err, errlen)) return false;
  *out = i == 0 ? WL_OPT_SGD : WL_OPT_ADAGRAD;
  return true;
}

bool wlj_math_fields(const cJSON *json, wl_info *info, char *err, size_t errlen) {
  static const char *const maths[] = {"real", "none", NULL};
  size_t math;
  if (!wlj_choice(json, "math", maths, 0, &math, err, errlen)) return false;
  info->math = math == 0;
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(json, "target_quality");
  if (!t) return true;
  if (!info->has_quality || !info->math) {
    wlj_error(err, errlen, "target_quality",
              info->math ? "nothing: this workload has no held-out data to measure"
                         : "nothing: with \"math\": \"none\" nothing is measured",
              t);
    return false;
  }
  if (!wlj_number(json, "target_quality", -INFINITY, INFINITY, 0, &info->quality.target, err,
                  errlen))
    return false;
  info->quality.has_target = true;
  return true;
}
