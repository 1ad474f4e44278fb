/*
 * The list of policies, looked up by name, and the shared parsing of the
 * fields every policy object may carry.
 */
#include "policies/policy.h"
#include "policies/common.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

static const ps_policy_ops *const all_policies[] = {
    &ps_policy_static,
    &ps_policy_relocate,
    &ps_policy_replicate,
    &ps_policy_nups,
    &ps_policy_adaptive,
    &ps_policy_psld,
};
#define NUM_POLICIES (sizeof all_policies / sizeof all_policies[0])

const ps_policy_ops *ps_policy_find(const char *name) {
  for (size_t i = 0; name && i < NUM_POLICIES; i++)
    if (strcmp(all_policies[i]->name, name) == 0) return all_policies[i];
  return NULL;
}

const char *const *ps_policy_names(void) {
  static const char *names[NUM_POLICIES + 1];
  for (size_t i = 0; i < NUM_POLICIES; i++) names[i] = all_policies[i]->name;
  names[NUM_POLICIES] = NULL;
  return names;
}

int ps_policy_configure(const cJSON *json, const ps_policy_ops **ops,
                        ps_policy_settings *settings, char *err, size_t errlen) {
  if (ops) *ops = NULL;
  if (!cJSON_IsObject(json)) {
    snprintf(err, errlen, "expected an object, found %s", policy_json_kind(json));
    return PS_ERR_INVAL;
  }
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(json, "type");
  if (!cJSON_IsString(type)) {
    snprintf(err, errlen, "type: expected a string (one of %s), found %s",
             policy_name_list(), type ? policy_json_kind(type) : "nothing");
    return PS_ERR_INVAL;
  }
  const ps_policy_ops *p = ps_policy_find(type->valuestring);
  if (!p) {
    snprintf(err, errlen, "type: expected one of %s, found \"%s\"", policy_name_list(),
             type->valuestring);
    return PS_ERR_UNKNOWN_POLICY;
  }
  ps_policy_settings_default(settings);
  /* "sampling" belongs to every policy: checked here, hidden from theirs. */
  const cJSON *sampling = cJSON_GetObjectItemCaseSensitive(json, "sampling");
  cJSON *own = sampling ? cJSON_Duplicate(json, true) : NULL;
  if (sampling && !own) {
    snprintf(err, errlen, "out of memory");
    return PS_ERR_NOMEM;
  }
  if (own) cJSON_DeleteItemFromObjectCaseSensitive(own, "sampling");
  int rc = p->configure(own ? own : json, settings, err, errlen);
  cJSON_Delete(own);
  if (rc == PS_OK && sampling) {
    char sub[200];
    if ((rc = ps_sampling_configure(sampling, sub, sizeof sub)) != PS_OK)
      snprintf(err, errlen, "sampling%s%s", sub[0] == 'e' ? ": " : ".", sub);
  }
  if (rc == PS_OK && ops) *ops = p;
  return rc;
}

const cJSON *ps_policy_sampling(const cJSON *json) {
  return cJSON_GetObjectItemCaseSensitive(json, "sampling");
}

/* ---------------------------------------------------------- shared fields */

const char *policy_name_list(void) {
  static char buf[256];
  size_t off = 0;
  buf[0] = 0;
  for (size_t i = 0; i < NUM_POLICIES && off < sizeof buf; i++)
    off += (size_t)snprintf(buf + off, sizeof buf - off, "%s\"%s\"", i ? ", " : "",
                            all_policies[i]->name);
  return buf;
}

const char *policy_json_kind(const cJSON *j) {
  if (!j) return "nothing";
  if (cJSON_IsObject(j)) return "an object";
  if (cJSON_IsArray(j)) return "a list";
  if (cJSON_IsString(j)) return "a string";
  if (cJSON_IsBool(j)) return "a boolean";
  if (cJSON_IsNumber(j)) return "a number";
  if (cJSON_IsNull(j)) return "null";
  return "something else";
}

int policy_check_fields(const cJSON *json, const char *const *known, char *err,
                        size_t errlen) {
  /* NULL (model/ps.h: configure's defaults) has no fields to check. */
  for (const cJSON *f = json ? json->child : NULL; f; f = f->next) {
    bool found = false;
    for (size_t i = 0; known[i] && !found; i++) found = strcmp(f->string, known[i]) == 0;
    if (found) continue;
    size_t off = (size_t)snprintf(err, errlen, "%s: unknown field; expected one of", f->string);
    for (size_t i = 0; known[i] && off < errlen; i++)
      off += (size_t)snprintf(err + off, errlen - off, "%s %s", i ? "," : "", known[i]);
    return PS_ERR_INVAL;
  }
  return PS_OK;
}

int policy_get_bool(const cJSON *json, const char *field, bool *out, char *err,
                    size_t errlen) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(json, field);
  if (!j) return PS_OK;
  if (!cJSON_IsBool(j)) {
    snprintf(err, errlen, "%s: expected true or false, found %s", field, policy_json_kind(j));
    return PS_ERR_INVAL;
  }
  *out = cJSON_IsTrue(j);
  return PS_OK;
}

int policy_get_uint(const cJSON *json, const char *field, uint32_t min, uint32_t max,
                    uint32_t *out, char *err, size_t errlen) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(json, field);
  if (!j) return PS_OK;
  double v = cJSON_IsNumber(j) ? j->valuedouble : -1;
  if (!cJSON_IsNumber(j) || v != (double)(int64_t)v || v < min || v > max) {
    char found[64];
    if (cJSON_IsNumber(j)) snprintf(found, sizeof found, "%g", v);
    else snprintf(found, sizeof found, "%s", policy_json_kind(j));
    snprintf(err, errlen, "%s: expected an integer in [%u, %u], found %s", field, min, max,
             found);
    return PS_ERR_INVAL;
  }
  *out = (uint32_t)v;
  return PS_OK;
}

int policy_get_number(const cJSON *json, const char *field, double min, bool min_ok,
                      double max, double *out, char *err, size_t errlen) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(json, field);
  if (!j) return PS_OK;
  double v = cJSON_IsNumber(j) ? j->valuedouble : 0;
  if (!cJSON_IsNumber(j) || v > max || v < min || (v == min && !min_ok)) {
    char found[64];
    if (cJSON_IsNumber(j)) snprintf(found, sizeof found, "%g", v);
    else snprintf(found, sizeof found, "%s", policy_json_kind(j));
    snprintf(err, errlen, "%s: expected a number %s %g, found %s", field, min_ok ? ">=" : ">",
             min, found);
    return PS_ERR_INVAL;
  }
  *out = v;
  return PS_OK;
}

int policy_get_partition(const cJSON *json, ps_partition *out, char *err, size_t errlen) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(json, "partition");
  if (!j) return PS_OK;
  if (cJSON_IsString(j) && strcmp(j->valuestring, "hash") == 0) *out = PS_PARTITION_HASH;
  else if (cJSON_IsString(j) && strcmp(j->valuestring, "range") == 0) *out = PS_PARTITION_RANGE;
  else {
    if (cJSON_IsString(j))
      snprintf(err, errlen, "partition: expected \"hash\" or \"range\", found \"%s\"",
               j->valuestring);
    else
      snprintf(err, errlen, "partition: expected \"hash\" or \"range\", found %s",
               policy_json_kind(j));
    return PS_ERR_INVAL;
  }
  return PS_OK;
}
