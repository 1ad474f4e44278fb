/*
 * Error lists: problems collected as one line each (exp_errors), so that a
 * bad spec, a bad results directory or a failed merge is reported whole
 * rather than one problem at a time. The wording of a spec's problems is
 * spec/field_checks.c's.
 */
#include "experiments/common/common.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void exp_errors_init(exp_errors *e) { *e = (exp_errors){0}; }

void exp_errors_free(exp_errors *e) {
  for (size_t i = 0; i < e->count; i++) free(e->lines[i]);
  free(e->lines);
  *e = (exp_errors){0};
}

bool exp_errors_addf(exp_errors *e, const char *fmt, ...) {
  if (e->count == e->cap) {
    size_t cap = e->cap ? e->cap * 2 : 8;
    char **lines = realloc(e->lines, cap * sizeof *lines);
    if (!lines) return false;
    e->lines = lines;
    e->cap = cap;
  }
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *line = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (!line) return false;
  va_start(ap, fmt);
  vsnprintf(line, (size_t)n + 1, fmt, ap);
  va_end(ap);
  e->lines[e->count++] = line;
  return true;
}

void exp_errors_print(const exp_errors *e, FILE *f) {
  for (size_t i = 0; i < e->count; i++) fprintf(f, "%s\n", e->lines[i]);
}

bool exp_errors_contain(const exp_errors *e, const char *needle) {
  for (size_t i = 0; i < e->count; i++)
    if (strstr(e->lines[i], needle)) return true;
  return false;
}
