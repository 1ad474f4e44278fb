/*
 * Labels of sweep points, for the table: a swept value written so that it
 * reads as words and tells its point apart from the others.
 *
 * A swept object shows only what differs among the points' values at its
 * path, member by member and into nested objects: with the policies
 * {"type": "static", "partition": "hash", "fast_local_access": false} and
 * {"type": "relocate", "partition": "hash", "lookahead": 100}, partition is
 * the same everywhere and the labels are "static fast_local_access=false"
 * and "relocate lookahead=100". A "type" comes first and bare, since it
 * names the thing; the other members are k=v separated by spaces (so a long
 * label wraps between members), nested ones by their dotted path
 * ("sampling.scheme=pool"). Anything else is written as exp_value_label
 * writes it: strings bare, numbers exact, lists [a,b].
 */
#include "experiments/internal.h"

#include <stdlib.h>
#include <string.h>

/* Whether every one of values[0..n) is there and equal to v. */
static bool same_everywhere(const cJSON *v, const cJSON *const *values, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!values[i] || !cJSON_Compare(values[i], v, true)) return false;
  return true;
}

static void put_leaf(exp_buf *b, const char *path, const cJSON *v) {
  char *text = exp_value_label(v);
  if (b->len) exp_buf_puts(b, " ");
  if (path) exp_buf_printf(b, "%s=", path);
  exp_buf_puts(b, text ? text : "?");
  if (!text) b->failed = true;
  free(text);
}

/* Writes the members of object v that differ somewhere among others[0..n)
 * (the same object of every point, or NULL where a point lacks it), each
 * under parent's dotted path; skips `skip` (the type, already written). */
static void put_members(exp_buf *b, const char *parent, const cJSON *v,
                        const cJSON *const *others, size_t n, const cJSON *skip) {
  const cJSON **sub = calloc(n + 1, sizeof *sub);
  if (!sub) {
    b->failed = true;
    return;
  }
  for (const cJSON *m = v->child; m; m = m->next) {
    if (m == skip) continue;
    char path[EXP_PATH_MAX];
    exp_child_path(path, sizeof path, parent, m->string);
    for (size_t i = 0; i < n; i++)
      sub[i] = cJSON_IsObject(others[i])
                   ? cJSON_GetObjectItemCaseSensitive(others[i], m->string)
                   : NULL;
    if (cJSON_IsObject(m) && m->child)
      put_members(b, path, m, sub, n, NULL);
    else if (!same_everywhere(m, sub, n))
      put_leaf(b, path, m);
  }
  free(sub);
}

char *exp_point_label(const cJSON *v, const cJSON *const *all, size_t n) {
  if (!cJSON_IsObject(v) || !v->child) return exp_value_label(v);
  exp_buf b = {0};
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(v, "type");
  const cJSON **types = calloc(n + 1, sizeof *types);
  if (!types) return NULL;
  for (size_t i = 0; i < n; i++)
    types[i] = cJSON_IsObject(all[i]) ? cJSON_GetObjectItemCaseSensitive(all[i], "type")
                                      : NULL;
  bool type_differs = type && !same_everywhere(type, types, n);
  free(types);
  if (type_differs) put_leaf(&b, NULL, type);
  put_members(&b, "", v, all, n, type);
  if (!b.failed && b.len == 0) {
    /* Nothing differs in this one (the others add members): its type, or
     * the whole value, says more than an empty cell. */
    if (!type) {
      exp_buf_free(&b);
      return exp_value_label(v);
    }
    put_leaf(&b, NULL, type);
  }
  return exp_buf_take(&b);
}
