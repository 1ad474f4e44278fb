/*
 * The list of policies, looked up by name, with their field tables, and the
 * shared parsing of what every policy object carries: its type and its
 * sampling object.
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

/* all_policies[i]'s fields. */
static const policy_field *const all_fields[NUM_POLICIES] = {
    policy_static_fields, policy_relocate_fields, policy_replicate_fields,
    policy_nups_fields,   policy_adaptive_fields, policy_psld_fields,
};

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

const policy_field *policy_field_table(size_t i, const char **name) {
  if (i < NUM_POLICIES) {
    *name = all_policies[i]->name;
    return all_fields[i];
  }
  *name = "sampling";
  return i == NUM_POLICIES ? policy_sampling_fields : NULL;
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
