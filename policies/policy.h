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

#include <stdbool.h>
#include <stdio.h>

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
/* Every policy object may carry "sampling" (see ps_sampling_configure),
 * checked by ps_policy_configure: the sampling management of workloads that
 * sample. Returns it, or NULL (then: naive). */
const struct cJSON *ps_policy_sampling(const struct cJSON *policy_json);

/* Prints every policy's fields, then the sampling object's (field, type,
 * default, range, meaning), made from the tables the policies read their
 * objects by: as Markdown, a heading and a table each (docs/policies.md
 * carries it; tests/test_policies.c checks it is the same), or as plain
 * text, a line per field and its meaning under it (`pslab policies`). */
void ps_policy_fields_print(FILE *out, bool markdown);

extern const ps_policy_ops ps_policy_static;
extern const ps_policy_ops ps_policy_relocate;
extern const ps_policy_ops ps_policy_replicate;
extern const ps_policy_ops ps_policy_nups;
extern const ps_policy_ops ps_policy_adaptive;
extern const ps_policy_ops ps_policy_psld;

/* -------------------------------------------------------------- sampling */

/* NuPS's sampling management (policies/sampling*.c), a layer over a worker's
 * client operations: a workload asks for n samples of a distribution a step
 * ahead (prepare) and reads them later (pull); the scheme decides when keys
 * are drawn and where they are read. The core knows nothing of it. */

/* The distribution a workload draws samples from: keys first..first+count-1,
 * with weights (not normalized; count of them, finite, >= 0, some > 0; at most
 * UINT32_MAX of them) or uniform when weights is NULL. Weights are copied
 * into an alias table (O(1) draws). Shared read-only by every sampler of a
 * run; free it after them. NULL on bad input or no memory. */
typedef struct ps_sample_dist ps_sample_dist;
ps_sample_dist *ps_sample_dist_new(ps_key first, uint64_t count, const double *weights);
void ps_sample_dist_free(ps_sample_dist *d);
/* Draws one key; *rng is the caller's splitmix64 state. */
ps_key ps_sample_dist_draw(const ps_sample_dist *d, uint64_t *rng);
/* Probability of key k (0 outside the support). */
double ps_sample_dist_prob(const ps_sample_dist *d, ps_key k);

/* Defaults as in NuPS. */
#define PS_SAMPLING_DEFAULT_GROUP_SIZE 250
#define PS_SAMPLING_DEFAULT_REUSE 16

/* Validates a sampling object (NULL: the defaults) {"scheme": "naive"|"preloc"|"pool"|"local",
 * "group_size": int>=1 (250), "reuse": int>=1 (16), "postpone": bool (true)};
 * group_size, reuse and postpone belong to "pool" only and are errors with
 * other schemes. PS_OK, or PS_ERR_INVAL with "<field>: expected <what>, found
 * <what>" in err. */
int ps_sampling_configure(const struct cJSON *json, char *err, size_t errlen);
/* The scheme's name if a (valid) sampling object localizes the keys it
 * samples to the worker's node ("preloc", "pool"): meaningful only where
 * that node is a server, as a policy's keys_at_workers; NULL for "naive" and
 * "local" (they read sampled keys where they are) or an invalid object. */
const char *ps_sampling_localizing_scheme(const struct cJSON *json);

/* One per worker, used by one thread. */
typedef struct ps_sampler ps_sampler;
/* A sampler of distribution d for worker w, configured by json (see
 * ps_sampling_configure; NULL: naive), its draws seeded by seed. d and w must outlive it;
 * json is read during the call only. d's keys must lie in one table of w's
 * layout. NULL on bad configuration or no memory. */
ps_sampler *ps_sampler_new(const struct cJSON *json, ps_worker *w, const ps_sample_dist *d,
                           uint64_t seed);
/* Frees the sampler and its prepared but unpulled samples (their localizes go
 * on regardless). */
void ps_sampler_free(ps_sampler *s);
/* Prepares n samples (1 <= n <= PS_MAX_OP_KEYS) for a later pull, a step
 * ahead of time; *handle names them. preloc draws now and localizes (no
 * ticket); pool may start localizing its next pool; naive and local draw at
 * pull time. PS_OK, PS_ERR_INVAL, PS_ERR_NOMEM or an error of ps_localize. */
int ps_sample_prepare(ps_sampler *s, size_t n, uint64_t *handle, double now);
/* Draws (if not yet) and pulls the prepared samples: keys_out[n] gets the
 * keys, vals_out their values (value lengths concatenated; vals_len floats at
 * least n * the table's value length). n must be the prepared n. Returns as
 * ps_pull: PS_OK, PS_PENDING with *ticket (vals_out must stay valid until it
 * completes), or an error: PS_ERR_INVAL for an unknown handle, a wrong n or
 * too small a buffer (the handle then stays prepared). */
int ps_sample_pull(ps_sampler *s, uint64_t handle, ps_key *keys_out, size_t n,
                   float *vals_out, size_t vals_len, ps_ticket *ticket, double now);

typedef struct {
  uint64_t samples;      /* samples handed out */
  uint64_t draws;        /* fresh draws from the distribution (local: rejected
                          * ones too; pool: whole pools, drawn ahead) */
  uint64_t postponed;    /* pool: uses put off because the key was not local */
  double reuse_factor;   /* samples / distinct draws used (1 = no reuse; local:
                          * above 1 by its fallbacks to keys seen before) */
  double tv_distance;    /* 0.5 * sum |p_hat - p| over the support, between the
                          * samples handed out and d; even a perfect sampler
                          * shows ~0.4 * sqrt(K / samples) over K keys (while
                          * samples >> K), so compare schemes at equal counts */
} ps_sample_stats;
void ps_sampler_stats(const ps_sampler *s, ps_sample_stats *out);

/* The sampler behind void * (a ps_sampler *), for callback tables such as
 * workloads' wl_driver_env: ps_sample_prepare, ps_sample_pull, and the
 * conformity of ps_sampler_stats. */
int ps_sampler_prepare_cb(void *sampler, size_t n, uint64_t *handle, double now);
int ps_sampler_pull_cb(void *sampler, uint64_t handle, ps_key *keys, size_t n, float *vals,
                       size_t vals_len, ps_ticket *ticket, double now);
void ps_sampler_stats_cb(void *sampler, double *tv_distance, double *reuse_factor);

#endif
