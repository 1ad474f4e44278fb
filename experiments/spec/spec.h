/*
 * experiments/spec/: what the files of the spec room share: the checks
 * that word a spec's problems (field_checks.c), a cluster profile laid
 * under the spec's cluster (cluster.c) and a JSON file read for it
 * (spec_load.c). Everything else spec/ offers, loading a spec, its runs,
 * its plots list, JSON paths, units, shards, is the door's (experiment.h).
 *
 * Not a door: only the files of experiments/ (and their tests) include it.
 * It includes common/; spec_load.c also includes backends/backends.h, to
 * check the spec's cluster against the backend that reads it.
 */
#ifndef PSLAB_EXPERIMENTS_SPEC_H
#define PSLAB_EXPERIMENTS_SPEC_H

#include "experiments/common/common.h"

/* Integers in specs stay exact as JSON numbers (doubles). */
#define EXP_INT_MAX 9007199254740991.0 /* 2^53 - 1 */

/* ------------------------------------------- wording (field_checks.c) */

/* Adds "<path>: expected <what>, found <found described>". */
void exp_expect(exp_errors *e, const char *path, const char *what,
                const cJSON *found);
/* Each key of obj must be in known (NULL-terminated) and appear once. */
void exp_check_keys(exp_errors *e, const cJSON *obj, const char *path,
                    const char *const *known);

/* Member checks: key of obj (at path). Each returns true when the member is
 * valid, or absent and not required; otherwise adds a message and returns
 * false. *out is written only when the member is present and valid. */
bool exp_get_int(exp_errors *e, const cJSON *obj, const char *path,
                 const char *key, double min, double max, bool required,
                 double *out);
bool exp_get_number(exp_errors *e, const cJSON *obj, const char *path,
                    const char *key, double min, bool min_exclusive,
                    bool required, double *out);
bool exp_get_string(exp_errors *e, const cJSON *obj, const char *path,
                    const char *key, bool required, const char **out);
bool exp_get_bool(exp_errors *e, const cJSON *obj, const char *path,
                  const char *key, bool *out);
bool exp_get_choice(exp_errors *e, const cJSON *obj, const char *path,
                    const char *key, const char *const *choices,
                    const char **out);
bool exp_get_object(exp_errors *e, const cJSON *obj, const char *path,
                    const char *key, bool required, const cJSON **out);

typedef enum {
  EXP_QTY_FLOPS,     /* flop/s, > 0 */
  EXP_QTY_BANDWIDTH, /* bytes/s, > 0 */
  EXP_QTY_DURATION   /* seconds, >= 0 */
} exp_quantity;
/* A string with a unit (units.c), or a number in the base unit (flop/s,
 * bytes/s, seconds). A field whose name does not say its unit refuses a
 * number a person wrote before it gets here (exp_unit_fields); a number
 * there is a calibration profile's figure. */
bool exp_get_quantity(exp_errors *e, const cJSON *obj, const char *path,
                      const char *key, exp_quantity q, double *out);
/* What a quantity of kind q looks like with its unit, for messages:
 * "a duration with its unit, such as \"50us\", \"2ms\", \"1.5s\"". */
const char *exp_quantity_forms(exp_quantity q);

/* Messages in errs that say they found the text of a --set value that is
 * not JSON (taken as a string) get a hint: the value as JSON, its bare
 * words quoted (set_hints.c). */
void exp_set_hints(exp_errors *errs, const char *const *sets, size_t n_sets);

/* A cluster field (dotted path below "cluster") that takes a quantity and
 * whose name does not say its unit: a bare number is refused there
 * (cluster.c). Fields named with their unit (cost.per_message_s, from_s,
 * timeout_s) take numbers in that unit. */
typedef struct {
  const char *path;
  exp_quantity q;
} exp_unit_field;
const exp_unit_field *exp_unit_fields(size_t *count);

/* ------------------------------------------------- files (cluster.c, ...) */

/* Replaces spec's "cluster" by itself over the fields of its "profile" file
 * (a relative path taken from base_dir), keeping "profile" to say which;
 * nothing without a profile. A problem adds a message to errs; the names of
 * the fields only the profile gave are added to profile_keys (may be NULL).
 * A profile whose cost.step_s was measured for another workload than the
 * spec's (`pslab calibrate --workload`: its calibration.step.workload), the
 * spec giving no step_s of its own, is said in warnings (may be NULL), as
 * are step figures measured under a --set cluster... change the spec's
 * cluster does not make (calibration.step.sets). */
void exp_cluster_include_profile(struct cJSON *spec, const char *base_dir, exp_errors *errs,
                                 exp_errors *profile_keys, exp_errors *warnings);
/* A JSON file, parsed; NULL with "<path>: <reason>" or "<path>:L:C: invalid
 * JSON ..." added to errs (spec_load.c). */
struct cJSON *exp_json_load(const char *path, exp_errors *errs);
/* The value of a --set PATH=VALUE, as --set reads it: JSON when the whole
 * text parses (numbers, true, objects, "quoted"), else the text as a string
 * (caller frees; NULL when out of memory) (spec_load.c). */
struct cJSON *exp_set_value(const char *text);

#endif
