/*
 * Dotted paths into JSON, the one way sweeps, --set overrides and plots name
 * a setting: "cluster.network.latency", "policy", "cluster.stragglers.0.node".
 *
 * A path is a list of segments separated by dots. In an object a segment is
 * a key (matched case-sensitively); in a list a segment of digits is an
 * index. Setting a value makes the objects missing on its way (so that
 * `--set cluster.network.model=...` works on a spec without a network
 * object); a typo in the middle of a path then makes a new key, which the
 * spec's checks refuse as unknown, naming it. Lists are never made or
 * grown: an index must exist.
 */
#include "experiments/spec/spec.h"

#include <stdlib.h>
#include <string.h>

/* The child of cur named by seg[0..len), or NULL. */
static cJSON *step(const cJSON *cur, const char *seg, size_t len) {
  if (!cur) return NULL;
  if (cJSON_IsObject(cur)) {
    for (cJSON *c = cur->child; c; c = c->next)
      if (strlen(c->string) == len && memcmp(c->string, seg, len) == 0) return c;
    return NULL;
  }
  if (!cJSON_IsArray(cur) || len == 0 || len > 9) return NULL;
  int index = 0;
  for (size_t i = 0; i < len; i++) {
    if (seg[i] < '0' || seg[i] > '9') return NULL;
    index = index * 10 + (seg[i] - '0');
  }
  return cJSON_GetArrayItem(cur, index);
}

static bool valid_path(const char *path) {
  if (!*path || path[0] == '.') return false;
  size_t n = strlen(path);
  return path[n - 1] != '.' && !strstr(path, "..");
}

cJSON *exp_path_get(const cJSON *root, const char *path) {
  if (!valid_path(path)) return NULL;
  const cJSON *cur = root;
  const char *seg = path;
  while (cur) {
    const char *dot = strchr(seg, '.');
    size_t len = dot ? (size_t)(dot - seg) : strlen(seg);
    cur = step(cur, seg, len);
    if (!dot) break;
    seg = dot + 1;
  }
  return (cJSON *)cur;
}

/* Puts value as the child `leaf` of parent (an object or a list). */
static int set_child(cJSON *parent, const char *leaf, cJSON *value,
                     const char *path, char *err, size_t errlen) {
  if (cJSON_IsObject(parent)) {
    bool ok = cJSON_GetObjectItemCaseSensitive(parent, leaf)
                  ? cJSON_ReplaceItemInObjectCaseSensitive(parent, leaf, value)
                  : cJSON_AddItemToObject(parent, leaf, value);
    if (ok) return 0;
    snprintf(err, errlen, "%s: out of memory", path);
  } else {
    cJSON *old = step(parent, leaf, strlen(leaf));
    if (old && cJSON_ReplaceItemViaPointer(parent, old, value)) return 0;
    snprintf(err, errlen, "%s: no element %s in that list (it has %d)", path,
             leaf, cJSON_GetArraySize(parent));
  }
  cJSON_Delete(value);
  return -1;
}

int exp_path_set(cJSON *root, const char *path, cJSON *value, char *err,
                 size_t errlen) {
  if (!valid_path(path)) {
    snprintf(err, errlen, "\"%s\" is not a dotted path such as cluster.nodes", path);
    cJSON_Delete(value);
    return -1;
  }
  cJSON *parent = root;
  const char *seg = path, *dot;
  while ((dot = strchr(seg, '.'))) {
    size_t len = (size_t)(dot - seg);
    cJSON *child = step(parent, seg, len);
    if (!child && cJSON_IsObject(parent)) {
      char *name = strndup(seg, len);
      child = name ? cJSON_AddObjectToObject(parent, name) : NULL;
      free(name);
      if (!child) {
        snprintf(err, errlen, "%s: out of memory", path);
        cJSON_Delete(value);
        return -1;
      }
    }
    if (!cJSON_IsObject(child) && !cJSON_IsArray(child)) {
      if (child)
        snprintf(err, errlen, "%s: %.*s is neither an object nor a list", path,
                 (int)(dot - path), path);
      else
        snprintf(err, errlen, "%s: no element %.*s in that list (it has %d)", path, (int)len,
                 seg, cJSON_GetArraySize(parent));
      cJSON_Delete(value);
      return -1;
    }
    parent = child;
    seg = dot + 1;
  }
  return set_child(parent, seg, value, path, err, errlen);
}
