/*
 * Helpers the policy files share to read their JSON objects. Messages follow
 * the project's form: "<field>: expected <what>, found <what>". Absent fields
 * leave *out untouched (the caller set the default).
 */
#ifndef PSLAB_POLICIES_COMMON_H
#define PSLAB_POLICIES_COMMON_H

#include "model/ps.h"

struct cJSON;

const char *policy_name_list(void);
const char *policy_json_kind(const struct cJSON *j);
/* known: NULL-terminated list of the fields the policy understands. Every
 * helper here takes json == NULL as an object with no fields: a policy's
 * configure(NULL) gets its defaults (model/ps.h). */
int policy_check_fields(const struct cJSON *json, const char *const *known, char *err,
                        size_t errlen);
int policy_get_bool(const struct cJSON *json, const char *field, bool *out, char *err,
                    size_t errlen);
int policy_get_uint(const struct cJSON *json, const char *field, uint32_t min,
                    uint32_t max, uint32_t *out, char *err, size_t errlen);
/* A number in [min, max] (min excluded unless min_ok). */
int policy_get_number(const struct cJSON *json, const char *field, double min, bool min_ok,
                      double max, double *out, char *err, size_t errlen);
int policy_get_partition(const struct cJSON *json, ps_partition *out, char *err,
                         size_t errlen);

#endif
