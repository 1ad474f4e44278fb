/*
 * policies/: management policies, one file each, looked up by name.
 *
 * A policy is a ps_policy_ops table (declared by the core in model/ps.h). This
 * door lists the tables and configures core settings from a policy's JSON
 * object, so the experiments layer never needs to know which policies exist.
 */
#ifndef PSLAB_POLICIES_POLICY_H
#define PSLAB_POLICIES_POLICY_H

#include "model/ps.h"

struct cJSON;

/* The policy named `name`, or NULL. */
const ps_policy_ops *ps_policy_find(const char *name);
/* Names of all policies, NULL-terminated (for help texts and errors). */
const char *const *ps_policy_names(void);

/* Looks up json's "type" and runs its configure hook. On error returns a
 * negative ps_status and writes a message to err: the field (relative to the
 * policy object), what was expected and what was found. *ops may be NULL. */
int ps_policy_configure(const struct cJSON *json, const ps_policy_ops **ops,
                        ps_policy_settings *settings, char *err, size_t errlen);

extern const ps_policy_ops ps_policy_static;
extern const ps_policy_ops ps_policy_relocate;

#endif
