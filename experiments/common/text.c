/*
 * Text every room writes: a growing string buffer, numbers written so they
 * read back exactly, short labels for JSON values (table cells, plot
 * legends, progress lines), what a JSON value is for "found ..." in
 * messages, and the dotted paths messages name.
 */
#include "experiments/common/common.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ string buffer */

static bool buf_reserve(exp_buf *b, size_t extra) {
  if (b->failed) return false;
  if (b->len + extra + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1) cap *= 2;
  char *p = realloc(b->data, cap);
  if (!p) {
    b->failed = true;
    return false;
  }
  b->data = p;
  b->cap = cap;
  return true;
}

void exp_buf_printf(exp_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !buf_reserve(b, (size_t)n)) {
    b->failed = true;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void exp_buf_add(exp_buf *b, const char *data, size_t n) {
  if (!buf_reserve(b, n)) return;
  memcpy(b->data + b->len, data, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void exp_buf_puts(exp_buf *b, const char *s) { exp_buf_add(b, s, strlen(s)); }

char *exp_buf_take(exp_buf *b) {
  if (!buf_reserve(b, 0)) {
    exp_buf_free(b);
    return NULL;
  }
  b->data[b->len] = '\0';
  char *s = b->data;
  *b = (exp_buf){0};
  return s;
}

void exp_buf_free(exp_buf *b) {
  free(b->data);
  *b = (exp_buf){0};
}

/* ------------------------------------------------------------ values */

void exp_format_number(double v, char *buf, size_t n) {
  if (isnan(v)) {
    snprintf(buf, n, "nan");
  } else if (isinf(v)) {
    snprintf(buf, n, v > 0 ? "inf" : "-inf");
  } else if (v == rint(v) && fabs(v) < 1e15) {
    snprintf(buf, n, "%.0f", v);
  } else {
    snprintf(buf, n, "%.15g", v);
    if (strtod(buf, NULL) != v) snprintf(buf, n, "%.17g", v);
  }
}

static void label_into(exp_buf *b, const cJSON *v) {
  char num[40];
  if (cJSON_IsString(v)) {
    exp_buf_puts(b, v->valuestring);
  } else if (cJSON_IsNumber(v)) {
    exp_format_number(v->valuedouble, num, sizeof num);
    exp_buf_puts(b, num);
  } else if (cJSON_IsBool(v)) {
    exp_buf_puts(b, cJSON_IsTrue(v) ? "true" : "false");
  } else if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
    bool obj = cJSON_IsObject(v);
    exp_buf_puts(b, obj ? "{" : "[");
    for (const cJSON *c = v->child; c; c = c->next) {
      if (c != v->child) exp_buf_puts(b, ",");
      if (obj) exp_buf_printf(b, "%s=", c->string);
      label_into(b, c);
    }
    exp_buf_puts(b, obj ? "}" : "]");
  } else {
    exp_buf_puts(b, "null");
  }
}

char *exp_value_label(const cJSON *v) {
  exp_buf b = {0};
  label_into(&b, v);
  return exp_buf_take(&b);
}

/* The words of empty values, by the last segment of their path. */
static const struct {
  const char *field, *words;
} empty_words[] = {
    {"stragglers", "no straggler"},
    {"scale", "no scaling"},
    {"phases", "no phase"},
    {"stages", "no stage"},
};

const char *exp_empty_label(const char *path) {
  const char *dot = path ? strrchr(path, '.') : NULL;
  const char *field = dot ? dot + 1 : path;
  for (size_t i = 0; field && i < sizeof empty_words / sizeof empty_words[0]; i++)
    if (strcmp(field, empty_words[i].field) == 0) return empty_words[i].words;
  return "none";
}

void exp_describe(const cJSON *v, char *buf, size_t n) {
  enum { SHOWN = 60 };
  if (!v) {
    snprintf(buf, n, "nothing (the key is missing)");
  } else if (cJSON_IsString(v)) {
    size_t len = strlen(v->valuestring);
    snprintf(buf, n, "\"%.*s%s\"", SHOWN, v->valuestring,
             len > SHOWN ? "..." : "");
  } else if (cJSON_IsNumber(v)) {
    exp_format_number(v->valuedouble, buf, n);
  } else if (cJSON_IsBool(v)) {
    snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
  } else if (cJSON_IsArray(v)) {
    int size = cJSON_GetArraySize(v);
    if (size == 0)
      snprintf(buf, n, "an empty list");
    else
      snprintf(buf, n, "a list of %d", size);
  } else if (cJSON_IsObject(v)) {
    snprintf(buf, n, v->child ? "an object" : "an empty object");
  } else {
    snprintf(buf, n, "null");
  }
}

bool exp_metric_value(const cJSON *v, double *out) {
  if (cJSON_IsNumber(v)) {
    *out = v->valuedouble;
    return true;
  }
  if (!cJSON_IsArray(v) || !v->child) return false;
  double sum = 0;
  int n = 0;
  for (const cJSON *c = v->child; c; c = c->next) {
    if (!cJSON_IsNumber(c)) return false;
    sum += c->valuedouble;
    n++;
  }
  *out = sum / n;
  return true;
}

/* ----------------------------------------------------------- paths */

void exp_child_path(char *buf, size_t n, const char *parent, const char *key) {
  if (parent && *parent)
    snprintf(buf, n, "%s.%s", parent, key);
  else
    snprintf(buf, n, "%s", key);
}

void exp_index_path(char *buf, size_t n, const char *parent, size_t i) {
  snprintf(buf, n, "%s[%zu]", parent, i);
}
