/*
 * Readable labels for swept values, for plot axes and legends.
 *
 * A sweep over whole objects (policies) gives values that differ in a few
 * members and share the rest. A reader wants to see only what differs, in
 * words rather than JSON: "relocate lookahead=100", not
 * {type=relocate,partition=hash,lookahead=100}. So objects are flattened to
 * their leaves (sampling.reuse=64), leaves every value has alike are left
 * out, the path prefix all differing leaves share is dropped (reuse=64), and
 * one leaf may lead as its bare value (the policy's type). The values are
 * labelled together, because what differs is a property of the whole set.
 */
#include "experiments/results/results.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  char *path; /* dotted, from the value's top */
  const cJSON *v;
} leaf;

typedef struct {
  leaf *items;
  size_t n, cap;
  bool failed;
} leaf_list;

static void leaves_add(leaf_list *l, const char *path, const cJSON *v) {
  if (l->failed) return;
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 8;
    leaf *items = realloc(l->items, cap * sizeof *items);
    if (!items) {
      l->failed = true;
      return;
    }
    l->items = items;
    l->cap = cap;
  }
  char *copy = strdup(path);
  if (!copy) {
    l->failed = true;
    return;
  }
  l->items[l->n++] = (leaf){copy, v};
}

/* Every member that is not itself a non-empty object, by its dotted path;
 * lists are leaves (their items have no names to show). */
static void leaves_collect(leaf_list *l, const cJSON *obj, const char *prefix) {
  for (const cJSON *c = obj->child; c; c = c->next) {
    char path[EXP_PATH_MAX];
    exp_child_path(path, sizeof path, prefix, c->string);
    if (cJSON_IsObject(c) && c->child)
      leaves_collect(l, c, path);
    else
      leaves_add(l, path, c);
  }
}

static void leaves_free(leaf_list *l) {
  for (size_t i = 0; i < l->n; i++) free(l->items[i].path);
  free(l->items);
  *l = (leaf_list){0};
}

static const cJSON *leaf_at(const leaf_list *l, const char *path) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->items[i].path, path) == 0) return l->items[i].v;
  return NULL;
}

/* The values' leaves, and which of the first value's leaves every value
 * has alike (only those can be shared). */
typedef struct {
  leaf_list *lists;
  size_t n;
  bool *shared; /* by index into lists[0] */
} leaf_sets;

static bool leaf_shared(const leaf_sets *s, const char *path) {
  for (size_t i = 0; s->shared && i < s->lists[0].n; i++)
    if (strcmp(s->lists[0].items[i].path, path) == 0) return s->shared[i];
  return false;
}

static bool leaf_sets_make(leaf_sets *s, const cJSON *const *values, size_t n) {
  *s = (leaf_sets){calloc(n + 1, sizeof *s->lists), n, NULL};
  if (!s->lists) return false;
  bool objects = true;
  for (size_t i = 0; i < n; i++) {
    if (cJSON_IsObject(values[i])) leaves_collect(&s->lists[i], values[i], NULL);
    if (s->lists[i].failed) return false;
    objects = objects && cJSON_IsObject(values[i]);
  }
  if (n == 0 || !objects) return true; /* nothing is shared */
  s->shared = calloc(s->lists[0].n + 1, sizeof *s->shared);
  if (!s->shared) return false;
  for (size_t j = 0; j < s->lists[0].n; j++) {
    const leaf *f = &s->lists[0].items[j];
    bool all = true;
    for (size_t i = 1; i < n && all; i++) {
      const cJSON *o = leaf_at(&s->lists[i], f->path);
      all = o && cJSON_Compare(o, f->v, true);
    }
    s->shared[j] = all;
  }
  return true;
}

static void leaf_sets_free(leaf_sets *s) {
  for (size_t i = 0; s->lists && i < s->n; i++) leaves_free(&s->lists[i]);
  free(s->lists);
  free(s->shared);
}

/* Length of the dotted prefix ("sampling.") that every differing leaf path
 * but lead's has before its own last segment; 0 when they share none. */
static size_t varying_prefix(const leaf_sets *s, const char *lead) {
  const char *first = NULL;
  size_t len = 0;
  for (size_t i = 0; i < s->n; i++)
    for (size_t j = 0; j < s->lists[i].n; j++) {
      const char *p = s->lists[i].items[j].path;
      if ((lead && strcmp(p, lead) == 0) || leaf_shared(s, p)) continue;
      if (!first) {
        first = p;
        const char *dot = strrchr(p, '.');
        len = dot ? (size_t)(dot - p) + 1 : 0;
      }
      while (len && strncmp(p, first, len) != 0) {
        size_t k = len - 1; /* back to the dot before the last kept segment */
        while (k && first[k - 1] != '.') k--;
        len = k;
      }
    }
  return len;
}

static bool is_empty(const cJSON *v) {
  return (cJSON_IsArray(v) || cJSON_IsObject(v)) && !v->child;
}

bool exp_label_empty_values(const cJSON *const *values, size_t n, const char *path,
                            char **labels) {
  bool ok = true;
  for (size_t i = 0; i < n; i++) {
    if (!is_empty(values[i])) continue;
    free(labels[i]);
    labels[i] = strdup(exp_empty_label(path));
    ok = ok && labels[i];
  }
  return ok;
}

/* A leaf's "key=value": an empty value in words ("no straggler", or
 * "key=none"). */
static void leaf_text(exp_buf *b, const char *path, const cJSON *v) {
  const char *sep = b->len ? " " : "";
  if (is_empty(v)) {
    const char *words = exp_empty_label(path);
    if (strcmp(words, "none") != 0)
      exp_buf_printf(b, "%s%s", sep, words);
    else
      exp_buf_printf(b, "%s%s=none", sep, path);
    return;
  }
  char *text = exp_value_label(v);
  exp_buf_printf(b, "%s%s=%s", sep, path, text ? text : "?");
  free(text);
}

/* One object's label: lead's bare value, then "key=value" of each leaf
 * that differs between the values (s NULL: of every leaf), separated by
 * spaces. *differing counts what was written that differs (lead too). */
static char *object_label(const leaf_list *l, const leaf_sets *s, const char *lead,
                          size_t prefix, size_t *differing) {
  exp_buf b = {0};
  exp_buf_puts(&b, "");
  *differing = 0;
  const cJSON *lv = lead ? leaf_at(l, lead) : NULL;
  char *text = lv ? exp_value_label(lv) : NULL;
  if (text) {
    exp_buf_puts(&b, text);
    *differing += !s || !leaf_shared(s, lead);
  }
  free(text);
  for (size_t i = 0; i < l->n; i++) {
    const char *p = l->items[i].path;
    if ((lead && strcmp(p, lead) == 0) || (s && leaf_shared(s, p))) continue;
    leaf_text(&b, p + (s ? prefix : 0), l->items[i].v);
    ++*differing;
  }
  return exp_buf_take(&b);
}

bool exp_value_labels_varying(const cJSON *const *values, size_t n, const char *lead,
                              char **out) {
  leaf_sets s;
  bool ok = leaf_sets_make(&s, values, n);
  size_t prefix = ok ? varying_prefix(&s, lead) : 0;
  for (size_t i = 0; i < n; i++) {
    out[i] = NULL;
    if (!ok) continue;
    if (!cJSON_IsObject(values[i]) || !values[i]->child) {
      out[i] = exp_value_label(values[i]);
    } else {
      size_t differing;
      out[i] = object_label(&s.lists[i], &s, lead, prefix, &differing);
      if (out[i] && differing == 0) { /* nothing sets it apart: say it all */
        free(out[i]);
        out[i] = object_label(&s.lists[i], NULL, lead, 0, &differing);
      }
    }
    ok = out[i] != NULL;
  }
  leaf_sets_free(&s);
  for (size_t i = 0; !ok && i < n; i++) {
    free(out[i]);
    out[i] = NULL;
  }
  return ok;
}
