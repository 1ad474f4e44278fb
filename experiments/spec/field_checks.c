/*
 * The checks that word a spec's problems.
 *
 * Every problem in a spec becomes one line, `<json.path>: expected <what>,
 * found <what>`, and all lines are collected before anything runs: a user
 * fixing a spec sees everything wrong with it at once. The member checks
 * below are what every part of the spec parser uses, so the wording is the
 * same everywhere (the file name is put in front later, by spec_load.c).
 */
#include "experiments/spec/spec.h"
#include "model/ps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------- wording */

void exp_expect(exp_errors *e, const char *path, const char *what,
                const cJSON *found) {
  char desc[128];
  exp_describe(found, desc, sizeof desc);
  exp_errors_addf(e, "%s: expected %s, found %s", *path ? path : "(top level)",
                  what, desc);
}

static void unknown_key(exp_errors *e, const char *path, const char *key,
                        const char *const *known) {
  exp_buf list = {0};
  const char *near = NULL;
  size_t near_d = 3;
  for (size_t i = 0; known[i]; i++) {
    exp_buf_printf(&list, "%s%s", i ? ", " : "", known[i]);
    size_t d;
    if (ps_near_name(key, known[i], &d) && d < near_d) {
      near_d = d;
      near = known[i];
    }
  }
  char *names = exp_buf_take(&list);
  char child[EXP_PATH_MAX];
  exp_child_path(child, sizeof child, path, key);
  char hint[128] = "";
  if (near) snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", near);
  exp_errors_addf(e, "%s: expected one of the keys of %s (%s), found an unknown key%s",
                  child, *path ? path : "the spec", names ? names : "", hint);
  free(names);
}

void exp_check_keys(exp_errors *e, const cJSON *obj, const char *path,
                    const char *const *known) {
  for (const cJSON *c = obj->child; c; c = c->next) {
    bool ok = false;
    for (size_t i = 0; known[i] && !ok; i++) ok = strcmp(c->string, known[i]) == 0;
    if (!ok) {
      unknown_key(e, path, c->string, known);
      continue;
    }
    size_t times = 0, first = 1;
    for (const cJSON *d = obj->child; d; d = d->next) {
      if (strcmp(d->string, c->string) != 0) continue;
      if (d != c && times == 0) first = 0;
      times++;
    }
    if (times > 1 && first) {
      char child[EXP_PATH_MAX];
      exp_child_path(child, sizeof child, path, c->string);
      exp_errors_addf(e, "%s: expected the key once, found it %zu times", child, times);
    }
  }
}

/* ------------------------------------------------------ member checks */

static const cJSON *member(const cJSON *obj, const char *key) {
  return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

static bool missing(exp_errors *e, const char *path, const char *what,
                    bool required) {
  if (required) exp_expect(e, path, what, NULL);
  return !required;
}

bool exp_get_int(exp_errors *e, const cJSON *obj, const char *path,
                 const char *key, double min, double max, bool required,
                 double *out) {
  char p[EXP_PATH_MAX], what[96];
  exp_child_path(p, sizeof p, path, key);
  const cJSON *v = member(obj, key);
  snprintf(what, sizeof what, "an integer >= %.0f", min);
  if (!v) return missing(e, p, what, required);
  double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
  if (!(d == floor(d) && d >= min)) {
    exp_expect(e, p, what, v);
    return false;
  }
  if (d > max) {
    snprintf(what, sizeof what, "an integer <= %.0f", max);
    exp_expect(e, p, what, v);
    return false;
  }
  *out = d;
  return true;
}

bool exp_get_number(exp_errors *e, const cJSON *obj, const char *path,
                    const char *key, double min, bool min_exclusive,
                    bool required, double *out) {
  char p[EXP_PATH_MAX], what[96], m[40];
  exp_child_path(p, sizeof p, path, key);
  exp_format_number(min, m, sizeof m);
  snprintf(what, sizeof what, "a number %s %s", min_exclusive ? ">" : ">=", m);
  const cJSON *v = member(obj, key);
  if (!v) return missing(e, p, what, required);
  double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
  bool ok = isfinite(d) && (min_exclusive ? d > min : d >= min);
  if (!ok) {
    exp_expect(e, p, what, v);
    return false;
  }
  *out = d;
  return true;
}

/* The member key of obj when it is there and `is` holds for it; otherwise
 * NULL, and *ok false with a message when it is required or of another
 * type (described as what). */
static const cJSON *typed_member(exp_errors *e, const cJSON *obj, const char *path,
                                 const char *key, bool required, const char *what,
                                 cJSON_bool (*is)(const cJSON *const), bool *ok) {
  char p[EXP_PATH_MAX];
  exp_child_path(p, sizeof p, path, key);
  const cJSON *v = member(obj, key);
  *ok = v ? is(v) : missing(e, p, what, required);
  if (v && !*ok) exp_expect(e, p, what, v);
  return *ok ? v : NULL;
}

bool exp_get_string(exp_errors *e, const cJSON *obj, const char *path,
                    const char *key, bool required, const char **out) {
  bool ok;
  const cJSON *v = typed_member(e, obj, path, key, required, "a string", cJSON_IsString, &ok);
  if (v) *out = v->valuestring;
  return ok;
}

bool exp_get_bool(exp_errors *e, const cJSON *obj, const char *path,
                  const char *key, bool *out) {
  bool ok;
  const cJSON *v = typed_member(e, obj, path, key, false, "true or false", cJSON_IsBool, &ok);
  if (v) *out = cJSON_IsTrue(v);
  return ok;
}

bool exp_get_choice(exp_errors *e, const cJSON *obj, const char *path,
                    const char *key, const char *const *choices,
                    const char **out) {
  char p[EXP_PATH_MAX];
  exp_child_path(p, sizeof p, path, key);
  const cJSON *v = member(obj, key);
  if (!v) return true;
  for (size_t i = 0; cJSON_IsString(v) && choices[i]; i++) {
    if (strcmp(v->valuestring, choices[i]) == 0) {
      *out = choices[i];
      return true;
    }
  }
  exp_buf what = {0};
  exp_buf_puts(&what, "one of ");
  for (size_t i = 0; choices[i]; i++)
    exp_buf_printf(&what, "%s\"%s\"", i ? ", " : "", choices[i]);
  char *w = exp_buf_take(&what);
  exp_expect(e, p, w ? w : "one of the choices", v);
  free(w);
  return false;
}

bool exp_get_object(exp_errors *e, const cJSON *obj, const char *path,
                    const char *key, bool required, const cJSON **out) {
  bool ok;
  const cJSON *v = typed_member(e, obj, path, key, required, "an object", cJSON_IsObject, &ok);
  if (v) *out = v;
  return ok;
}

const char *exp_quantity_forms(exp_quantity q) {
  static const char *const forms[] = {
      [EXP_QTY_FLOPS] = "a speed with its unit, such as \"10Gf\", \"1.5Mf\", \"100f\" "
                        "(flop/s)",
      [EXP_QTY_BANDWIDTH] = "a bandwidth with its unit, such as \"10Gbps\", \"100Mbps\", "
                            "\"125MBps\" (bits or bytes per second)",
      [EXP_QTY_DURATION] = "a duration with its unit, such as \"50us\", \"2ms\", \"1.5s\", "
                           "\"100ns\"",
  };
  return forms[q];
}

/* Whether the field's name says its unit: seconds ("per_key_s"). */
static bool unit_in_name(const char *key) {
  size_t len = strlen(key);
  return len > 2 && strcmp(key + len - 2, "_s") == 0;
}

bool exp_get_quantity(exp_errors *e, const cJSON *obj, const char *path,
                      const char *key, exp_quantity q, double *out) {
  char p[EXP_PATH_MAX];
  exp_child_path(p, sizeof p, path, key);
  const cJSON *v = member(obj, key);
  if (!v) return true;
  double d = NAN;
  if (cJSON_IsNumber(v)) {
    d = v->valuedouble;
  } else if (cJSON_IsString(v)) {
    int rc = q == EXP_QTY_FLOPS       ? exp_parse_flops(v->valuestring, &d)
             : q == EXP_QTY_BANDWIDTH ? exp_parse_bandwidth(v->valuestring, &d)
                                      : exp_parse_duration(v->valuestring, &d);
    if (rc != 0) d = NAN;
  }
  bool ok = isfinite(d) && (q == EXP_QTY_DURATION ? d >= 0 : d > 0);
  if (!ok) {
    char what[256];
    snprintf(what, sizeof what, "%s%s", exp_quantity_forms(q),
             unit_in_name(key) ? ", or a number of seconds >= 0"
             : q == EXP_QTY_DURATION ? "" : ", > 0");
    exp_expect(e, p, what, v);
    return false;
  }
  *out = d;
  return true;
}
