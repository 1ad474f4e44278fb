/*
 * Policy fields as data: the one reader of policy objects and the field
 * reference of the docs. A policy declares its fields in a policy_field
 * table (policies/common.h); policy_read_fields checks an object against it
 * (unknown fields, types, ranges, enum values, refused values) and fills the
 * policy's knobs, defaults first, and ps_policy_fields_print prints every
 * table for docs/policies.md, which tests/test_policies.c compares with it.
 */
#include "policies/common.h"
#include "policies/policy.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

const policy_enum_value policy_partition_values[] = {
    {"hash", PS_PARTITION_HASH}, {"range", PS_PARTITION_RANGE}, {NULL, 0}};

/* ------------------------------------------------------------- values */

static double load(const policy_field *f, const void *at) {
  switch (f->type) {
  case FIELD_BOOL: return *(const bool *)at;
  case FIELD_ENUM: return *(const int *)at;
  case FIELD_INT:
  case FIELD_COUNT_OR_ALL: return *(const uint32_t *)at;
  default: return *(const double *)at;
  }
}

static void store(const policy_field *f, void *at, double v) {
  switch (f->type) {
  case FIELD_BOOL: *(bool *)at = v != 0; break;
  case FIELD_ENUM: *(int *)at = (int)v; break;
  case FIELD_INT:
  case FIELD_COUNT_OR_ALL: *(uint32_t *)at = (uint32_t)v; break;
  default: *(double *)at = v; break;
  }
}

/* A number as short as %g writes it, exponents without '+' and leading
 * zeros (1e8, not 1e+08). */
static void format_number(double v, char *buf, size_t n) {
  char raw[64];
  snprintf(raw, sizeof raw, "%g", v);
  char *e = strchr(raw, 'e');
  if (!e) {
    snprintf(buf, n, "%s", raw);
    return;
  }
  char *digits = e + 1 + (e[1] == '+' || e[1] == '-');
  while (digits[0] == '0' && digits[1]) digits++;
  snprintf(buf, n, "%.*s%s%s", (int)(e - raw) + 1, raw, e[1] == '-' ? "-" : "", digits);
}

/* Value v of field f as JSON writes it. */
static void format_value(const policy_field *f, double v, char *buf, size_t n) {
  if (f->type == FIELD_BOOL) {
    snprintf(buf, n, "%s", v != 0 ? "true" : "false");
  } else if (f->type == FIELD_ENUM) {
    const policy_enum_value *e = f->values;
    while (e->name && e->code != (int)v) e++;
    snprintf(buf, n, "\"%s\"", e->name ? e->name : "?");
  } else if (f->type == FIELD_COUNT_OR_ALL && v == FIELD_ALL) {
    snprintf(buf, n, "\"all\"");
  } else {
    format_number(v, buf, n);
  }
}

/* What a message says was found: a number's value (when numbers), a
 * string in quotes (when not), else the kind of JSON value. */
static void describe_found(const cJSON *j, bool numbers, char *buf, size_t n) {
  if (numbers && cJSON_IsNumber(j)) snprintf(buf, n, "%g", j->valuedouble);
  else if (!numbers && cJSON_IsString(j)) snprintf(buf, n, "\"%s\"", j->valuestring);
  else snprintf(buf, n, "%s", policy_json_kind(j));
}

/* -------------------------------------------------------------- reading */

static int check_known(const cJSON *json, const policy_field *fields, policy_fields_mode mode,
                       char *err, size_t errlen) {
  bool typed = mode == FIELDS_CONFIGURE;
  for (const cJSON *j = json && mode != FIELDS_INIT ? json->child : NULL; j; j = j->next) {
    bool found = typed && strcmp(j->string, "type") == 0;
    for (const policy_field *f = fields; f->name && !found; f++)
      found = strcmp(j->string, f->name) == 0;
    if (found) continue;
    size_t off = (size_t)snprintf(err, errlen, "%s: unknown field; expected one of%s",
                                  j->string, typed ? " type" : "");
    const char *near = NULL;
    size_t best = SIZE_MAX, d;
    for (const policy_field *f = fields; f->name && off < errlen; f++) {
      off += (size_t)snprintf(err + off, errlen - off, "%s %s",
                              f == fields && !typed ? "" : ",", f->name);
      if (ps_near_name(j->string, f->name, &d) && d < best) {
        best = d;
        near = f->name;
      }
    }
    if (near && off < errlen) snprintf(err + off, errlen - off, " (did you mean \"%s\"?)", near);
    return PS_ERR_INVAL;
  }
  return PS_OK;
}

static int read_int(const cJSON *j, const policy_field *f, void *at, char *err,
                    size_t errlen) {
  if (f->type == FIELD_COUNT_OR_ALL && cJSON_IsString(j)) {
    if (strcmp(j->valuestring, "all") == 0) {
      store(f, at, FIELD_ALL);
      return PS_OK;
    }
    snprintf(err, errlen, "%s: expected an integer >= %.0f or \"all\", found \"%s\"", f->name,
             f->min, j->valuestring);
    return PS_ERR_INVAL;
  }
  double v = cJSON_IsNumber(j) ? j->valuedouble : -1;
  if (!cJSON_IsNumber(j) || v != floor(v) || v < f->min || v > f->max) {
    char found[64];
    describe_found(j, true, found, sizeof found);
    snprintf(err, errlen, "%s: expected an integer in [%.0f, %.0f], found %s", f->name, f->min,
             f->max, found);
    return PS_ERR_INVAL;
  }
  store(f, at, v);
  return PS_OK;
}

/* A number, or a share's lower bound (its upper one: check_share). */
static int read_number(const cJSON *j, const policy_field *f, void *at, char *err,
                       size_t errlen) {
  double v = cJSON_IsNumber(j) ? j->valuedouble : 0;
  bool over = f->type == FIELD_NUMBER && v > f->max;
  if (!cJSON_IsNumber(j) || over || v < f->min || (v == f->min && !f->min_ok)) {
    char found[64];
    describe_found(j, true, found, sizeof found);
    snprintf(err, errlen, "%s: expected a number %s %g, found %s", f->name,
             f->min_ok ? ">=" : ">", f->min, found);
    return PS_ERR_INVAL;
  }
  store(f, at, v);
  return PS_OK;
}

static int read_bool(const cJSON *j, const policy_field *f, void *at, char *err,
                     size_t errlen) {
  if (!cJSON_IsBool(j)) {
    snprintf(err, errlen, "%s: expected true or false, found %s", f->name, policy_json_kind(j));
    return PS_ERR_INVAL;
  }
  store(f, at, cJSON_IsTrue(j));
  return PS_OK;
}

/* The values of an enum field, "\"a\" or \"b\"" for two, else "one of
 * \"a\", \"b\", ..."; each in backticks when code (Markdown). */
static void enum_choices(const policy_field *f, bool code, char *buf, size_t n) {
  size_t count = 0, off = 0;
  const char *tick = code ? "`" : "";
  while (f->values[count].name) count++;
  if (count != 2) off = (size_t)snprintf(buf, n, "one of ");
  for (size_t i = 0; i < count && off < n; i++)
    off += (size_t)snprintf(buf + off, n - off, "%s%s\"%s\"%s",
                            i == 0 ? "" : count == 2 ? " or " : ", ", tick, f->values[i].name,
                            tick);
}

static int read_enum(const cJSON *j, const policy_field *f, void *at, char *err,
                     size_t errlen) {
  for (const policy_enum_value *e = f->values; cJSON_IsString(j) && e->name; e++)
    if (strcmp(j->valuestring, e->name) == 0) {
      store(f, at, e->code);
      return PS_OK;
    }
  char choices[160], found[96];
  enum_choices(f, false, choices, sizeof choices);
  describe_found(j, false, found, sizeof found);
  snprintf(err, errlen, "%s: expected %s, found %s", f->name, choices, found);
  return PS_ERR_INVAL;
}

/* Whether f's condition (when_field has when_value) holds in knobs; the
 * condition's field comes earlier in the table, so it is read already. */
static bool condition_holds(const policy_field *fields, const policy_field *f,
                            const unsigned char *knobs) {
  const policy_field *c = fields;
  while (c->name && strcmp(c->name, f->when_field) != 0) c++;
  const policy_enum_value *e = c->values;
  while (e && e->name && strcmp(e->name, f->when_value) != 0) e++;
  return c->name && e && e->name && load(c, knobs + c->offset) == e->code;
}

static int read_field(const cJSON *json, const policy_field *fields, const policy_field *f,
                      unsigned char *knobs, char *err, size_t errlen) {
  const cJSON *j = json ? cJSON_GetObjectItemCaseSensitive(json, f->name) : NULL;
  void *at = knobs + f->offset;
  if (j && f->when_field && !condition_holds(fields, f, knobs)) {
    snprintf(err, errlen, "%s: expected nothing (only %s \"%s\" takes it), found %s", f->name,
             f->when_field, f->when_value, policy_json_kind(j));
    return PS_ERR_INVAL;
  }
  if (!j && !(json && f->required)) {
    store(f, at, f->def);
    return PS_OK;
  }
  switch (f->type) {
  case FIELD_INT:
  case FIELD_COUNT_OR_ALL: return read_int(j, f, at, err, errlen);
  case FIELD_NUMBER:
  case FIELD_SHARE: return read_number(j, f, at, err, errlen);
  case FIELD_BOOL: return read_bool(j, f, at, err, errlen);
  default: return read_enum(j, f, at, err, errlen);
  }
}

static int check_share(const policy_field *f, const unsigned char *knobs, char *err,
                       size_t errlen) {
  double v = load(f, knobs + f->offset);
  if (f->type != FIELD_SHARE || v <= 1) return PS_OK;
  snprintf(err, errlen, "%s: expected a share in [%s%g, 1], found %g", f->name,
           f->min_ok ? "" : "above ", f->min, v);
  return PS_ERR_INVAL;
}

/* What a refused field expects instead: the other boolean, or an integer. */
static void refused_instead(const policy_field *f, char *buf, size_t n) {
  if (f->type == FIELD_BOOL) snprintf(buf, n, "%s", strcmp(f->refused, "true") ? "true" : "false");
  else snprintf(buf, n, "an integer >= %.0f", f->min);
}

static int check_refused(const policy_field *f, const unsigned char *knobs, char *err,
                         size_t errlen) {
  char value[64], instead[64];
  if (!f->refused) return PS_OK;
  format_value(f, load(f, knobs + f->offset), value, sizeof value);
  if (strcmp(value, f->refused) != 0) return PS_OK;
  refused_instead(f, instead, sizeof instead);
  snprintf(err, errlen, "%s: expected %s (%s), found %s", f->name, instead, f->why, value);
  return PS_ERR_INVAL;
}

int policy_read_fields(const cJSON *json, const policy_field *fields, policy_fields_mode mode,
                       void *knobs, char *err, size_t errlen) {
  if (json && !cJSON_IsObject(json)) {
    snprintf(err, errlen, "expected an object, found %s", policy_json_kind(json));
    return PS_ERR_INVAL;
  }
  int rc = check_known(json, fields, mode, err, errlen);
  for (const policy_field *f = fields; rc == PS_OK && f->name; f++)
    rc = read_field(json, fields, f, knobs, err, errlen);
  for (const policy_field *f = fields; rc == PS_OK && f->name; f++)
    rc = check_share(f, knobs, err, errlen);
  for (const policy_field *f = fields; rc == PS_OK && f->name; f++)
    rc = check_refused(f, knobs, err, errlen);
  return rc;
}

/* ------------------------------------------------------------------ docs */

static const char *type_text(const policy_field *f) {
  switch (f->type) {
  case FIELD_INT: return "integer";
  case FIELD_COUNT_OR_ALL: return "integer or `\"all\"`";
  case FIELD_NUMBER:
  case FIELD_SHARE: return "number";
  case FIELD_BOOL: return "boolean";
  default: return "string";
  }
}

/* The values a field takes: an interval, the booleans or the enum's names. */
static void range_values(const policy_field *f, char *buf, size_t n) {
  char lo[32], hi[32];
  format_number(f->min, lo, sizeof lo);
  format_number(f->type == FIELD_SHARE ? 1 : f->max, hi, sizeof hi);
  const char *open = f->min_ok ? "[" : "(";
  if (f->type == FIELD_INT || f->type == FIELD_COUNT_OR_ALL)
    snprintf(buf, n, "[%.0f, %.0f]%s", f->min, f->max,
             f->type == FIELD_COUNT_OR_ALL && !f->refused ? " or `\"all\"`" : "");
  else if (f->type == FIELD_BOOL)
    snprintf(buf, n, "%s", f->refused ? "" : "`true` or `false`");
  else if (f->type == FIELD_ENUM)
    enum_choices(f, true, buf, n);
  else if (f->type == FIELD_NUMBER && f->max >= 1e300)
    snprintf(buf, n, "%s %s", f->min_ok ? ">=" : ">", lo);
  else
    snprintf(buf, n, "%s%s, %s]", open, lo, hi);
}

/* The range cell: the values, a refused value and why, a condition. */
static void range_text(const policy_field *f, char *buf, size_t n) {
  char values[192], instead[64];
  range_values(f, values, sizeof values);
  size_t off = (size_t)snprintf(buf, n, "%s", values);
  if (f->refused) refused_instead(f, instead, sizeof instead);
  if (f->refused && f->type == FIELD_BOOL && off < n)
    off += (size_t)snprintf(buf + off, n - off, "`%s` only: %s", instead, f->why);
  else if (f->refused && off < n)
    off += (size_t)snprintf(buf + off, n - off, "; not `%s`: %s", f->refused, f->why);
  if (f->when_field && off < n)
    snprintf(buf + off, n - off, "; only with `%s` `\"%s\"`", f->when_field, f->when_value);
}

/* Prints s without Markdown's backticks (the plain form of a table). */
static void print_plain(FILE *out, const char *s) {
  for (; *s; s++)
    if (*s != '`') fputc(*s, out);
}

static void print_table(FILE *out, const char *name, const policy_field *fields, bool markdown) {
  const char *of_every = ps_policy_find(name) ? "" : " (a field of every policy)";
  if (markdown)
    fprintf(out, "### `%s`%s\n\n| field | type | default | range | meaning |\n"
                 "|---|---|---|---|---|\n", name, of_every);
  else
    fprintf(out, "%s%s\n", name, of_every);
  for (const policy_field *f = fields; f->name; f++) {
    char v[48], def[96], range[512], line[1024];
    format_value(f, f->def, v, sizeof v);
    if (f->required) snprintf(def, sizeof def, "required (`%s` without the object)", v);
    else if (f->default_text) snprintf(def, sizeof def, "%s", f->default_text);
    else snprintf(def, sizeof def, "`%s`", v);
    range_text(f, range, sizeof range);
    if (markdown) {
      fprintf(out, "| `%s` | %s | %s | %s | %s |\n", f->name, type_text(f), def, range, f->meaning);
      continue;
    }
    snprintf(line, sizeof line, "  %s: %s, default %s; %s\n      %s\n", f->name, type_text(f), def,
             range, f->meaning);
    print_plain(out, line);
  }
  fprintf(out, "\n");
}

void ps_policy_fields_print(FILE *out, bool markdown) {
  const char *name;
  const policy_field *fields;
  for (size_t i = 0; (fields = policy_field_table(i, &name)) != NULL; i++)
    print_table(out, name, fields, markdown);
}
