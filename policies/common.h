/*
 * What the policy files share to read their JSON objects: each policy (and
 * the sampling object every policy may carry) declares its fields as a table
 * of policy_field, and one reader (policies/fields.c) checks an object
 * against the table and fills the policy's knobs, defaults first. The same
 * tables print the field reference of the docs (ps_policy_fields_print).
 * Messages follow the project's form: "<field>: expected <what>, found <what>".
 */
#ifndef PSLAB_POLICIES_COMMON_H
#define PSLAB_POLICIES_COMMON_H

#include "model/ps.h"

#include <stddef.h>

struct cJSON;

const char *policy_name_list(void);
const char *policy_json_kind(const struct cJSON *j);

/* ---------------------------------------------------------------- fields */

/* A field's type, and how its value is stored in the knobs struct. */
typedef enum {
  FIELD_INT,          /* uint32_t: an integer in [min, max] */
  FIELD_COUNT_OR_ALL, /* uint32_t: an integer in [min, max], or "all" (FIELD_ALL) */
  FIELD_NUMBER,       /* double: a number in [min, max], min excluded unless min_ok */
  FIELD_SHARE,        /* double: a number in [min, 1], min excluded unless min_ok */
  FIELD_BOOL,         /* bool */
  FIELD_ENUM,         /* int: the code of one of values */
} policy_field_type;

#define FIELD_ALL UINT32_MAX

/* One value of an enum field: its name in JSON and its code in the knobs. */
typedef struct {
  const char *name;
  int code;
} policy_enum_value;

typedef struct {
  const char *name;
  policy_field_type type;
  size_t offset;   /* of the value in the policy's knobs struct (offsetof) */
  double def;      /* the default (bool: 0 or 1; enum: the code; FIELD_ALL) */
  double min, max; /* numeric types; for a number, max >= 1e300 means none */
  bool min_ok;     /* a number may equal min */
  const policy_enum_value *values; /* enum: ended by a NULL name */
  /* Set for a default the value does not tell: what absent means. */
  const char *default_text;
  /* A value of the type this policy refuses, written as in JSON ("false",
   * "\"all\""), and why; checked after every field is read. */
  const char *refused, *why;
  /* Only when the enum field named when_field has the value when_value. */
  const char *when_field, *when_value;
  bool required; /* must be in the object (an absent object: the default) */
  const char *meaning; /* one line for the docs */
} policy_field;
/* Tables end with an entry of NULL name: {0}. */

/* What object a table is read from, and so which fields beside the table's
 * it may carry. */
typedef enum {
  FIELDS_PLAIN,     /* none: every other field is refused (sampling) */
  FIELDS_CONFIGURE, /* a policy object at configure: "type" too, listed first
                       when another field is refused */
  FIELDS_INIT,      /* a policy object at init, which configure checked: the
                       fields not in the table pass (every policy's "type"
                       and "sampling") */
} policy_fields_mode;

/* Reads json (NULL: an object with no fields, so every default) into knobs
 * by the table: refuses a field not in it (as mode says), reads each field
 * in table order, its default when absent, then checks shares' upper bound
 * and refused values. PS_OK, or PS_ERR_INVAL with the message in err. */
int policy_read_fields(const struct cJSON *json, const policy_field *fields,
                       policy_fields_mode mode, void *knobs, char *err, size_t errlen);

/* The i-th table (the policies' in registry order, then sampling's) and its
 * name; NULL past the last. */
const policy_field *policy_field_table(size_t i, const char **name);

extern const policy_enum_value policy_partition_values[];
extern const policy_field policy_static_fields[], policy_relocate_fields[],
    policy_replicate_fields[], policy_nups_fields[], policy_adaptive_fields[],
    policy_psld_fields[], policy_sampling_fields[];

/* Fields of several policies: T is the knobs struct, with members partition
 * (int), fast_local_access (bool) and lookahead (uint32_t) as used. */
#define POLICY_FIELD_PARTITION(T)                                                        \
  {.name = "partition", .type = FIELD_ENUM, .offset = offsetof(T, partition),          \
   .def = PS_PARTITION_HASH, .values = policy_partition_values,                         \
   .meaning = "where keys are homed: servers by a hash of the key, or in ranges of keys"}
#define POLICY_FIELD_FAST_LOCAL_ACCESS(T, refused_, why_)                                \
  {.name = "fast_local_access", .type = FIELD_BOOL,                                     \
   .offset = offsetof(T, fast_local_access), .def = 1, .refused = refused_, .why = why_, \
   .meaning = "a worker reaches its own node's keys in memory; false: by messages to "  \
              "its node's server, as in PS-Lite"}
#define POLICY_FIELD_LOOKAHEAD(T, def_)                                                  \
  {.name = "lookahead", .type = FIELD_INT, .offset = offsetof(T, lookahead), .def = def_, \
   .min = 1, .max = PS_MAX_LOOKAHEAD,                                                   \
   .meaning = "steps ahead the driver signals each step's keys as an intent"}

#endif
