/*
 * workloads/ internals: what the folder's files share, behind the one door
 * (workload.h). Nothing outside workloads/ includes this, tests excepted.
 *
 * A workload type (zipf, later mf, kge, w2v, trace) is a wl_type table;
 * workload.c looks it up by the JSON "type" and dispatches through it. The
 * step storage every stream needs (a ring of the last `keep` steps' key
 * arrays) is written once, in workload.c: a type's next_step fills the slot it
 * is handed. Also here: JSON validation helpers with the one message format
 * (json.c) and the Zipf sampler with its rank-to-key permutation
 * (zipf_dist.c), which the key-skewed generators reuse.
 */
#ifndef PSLAB_WORKLOADS_INTERNAL_H
#define PSLAB_WORKLOADS_INTERNAL_H

#include "workloads/workload.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

/* ------------------------------------------------------- workload types */

/* What a type tells the dispatcher about a workload it created. */
typedef struct {
  uint64_t steps_per_worker;
  uint64_t steps_per_epoch;
  size_t max_step_keys; /* keys one step's arrays may hold (slot size) */
  bool samples;         /* steps draw samples */
} wl_info;

typedef struct wl_type {
  const char *name;
  /* Parses and checks json (an object); NULL with a message in err. */
  void *(*create)(const struct cJSON *json, uint32_t num_nodes, wl_info *info,
                  char *err, size_t errlen);
  void (*free)(void *impl);
  void (*tables)(const void *impl, ps_layout *layout);
  /* NULL on no memory or a node out of range. */
  void *(*stream_new)(const void *impl, uint32_t node, uint32_t worker_rank,
                      uint64_t seed);
  void (*stream_free)(void *stream);
  /* Draws the next step with its keys in slot (max_step_keys keys). */
  bool (*next_step)(void *stream, ps_key *slot, wl_step *out);
  /* The sample distribution (see wl_sample_distribution); NULL when the
   * type never samples. */
  int (*sample_distribution)(const void *impl, ps_key *first, uint64_t *count,
                             double **weights);
} wl_type;

extern const wl_type wl_type_zipf;

struct wl_workload {
  const wl_type *type;
  void *impl;
  wl_info info;
  uint32_t num_nodes;
};

struct wl_stream {
  const wl_type *type;
  void *impl;
  const wl_workload *wl;
  size_t keep;      /* steps whose arrays stay valid */
  size_t slots;     /* min(keep, steps_per_worker): ring length */
  size_t slot_keys; /* keys per slot (at least 1) */
  ps_key *ring;     /* slots * slot_keys, allocated on first need */
  uint64_t drawn;   /* steps drawn so far */
};

/* The generator of one worker's stream: mt19937 seeded from (seed,
 * worker_rank), so callers may pass the run's seed to every worker. NULL on
 * no memory. Touches no global state (no gsl_rng_env_setup). */
gsl_rng *wl_rng_new(uint64_t seed, uint32_t worker_rank);

/* ------------------------------------------------------ JSON validation */

/* Largest integer a JSON number holds exactly; the bound of "an integer >= n". */
#define WLJ_INT_MAX 9007199254740992.0 /* 2^53 */

/* Writes "<field>: expected <expected>, found <what found is>" into err;
 * found NULL means the field is missing ("found nothing"). */
void wlj_error(char *err, size_t errlen, const char *field,
               const char *expected, const struct cJSON *found);
/* Describes a JSON value for a message: 3, "text", true, null, an array... */
void wlj_describe(const struct cJSON *v, char *buf, size_t len);
/* Checks json is an object whose fields are all in known (NULL-terminated),
 * each present once. false with a message in err. */
bool wlj_check_fields(const struct cJSON *json, const char *const *known,
                      char *err, size_t errlen);
/* Reads an integer field in [min, max]; def NULL makes it required. */
bool wlj_uint(const struct cJSON *json, const char *field, uint64_t min,
              uint64_t max, const uint64_t *def, uint64_t *out, char *err,
              size_t errlen);
/* Reads a number field in [min, max] (max may be INFINITY), default def. */
bool wlj_number(const struct cJSON *json, const char *field, double min,
                double max, double def, double *out, char *err,
                size_t errlen);

/* ------------------------------------------------- Zipf over an index range */

/* A fixed pseudo-random permutation of [0, n): a 4-round unbalanced Feistel
 * network on the smallest power-of-two domain holding n, walked in cycles
 * until the image falls inside [0, n) (fewer than 2 passes through the network
 * on average). O(1) memory; keyed by a constant, never by a run's seed. */
#define WL_PERM_ROUNDS 4
typedef struct {
  uint64_t n;
  unsigned left_bits, right_bits;
  uint64_t round_key[WL_PERM_ROUNDS];
} wl_perm;

void wl_perm_init(wl_perm *p, uint64_t n);
/* The image of x (x < n), in [0, n). */
uint64_t wl_perm_apply(const wl_perm *p, uint64_t x);

/* Zipf over [0, size): rank r has probability proportional to 1/(r+1)^skew
 * and is placed at index perm(r). skew 0 is uniform and builds no table. */
typedef struct {
  uint64_t size;
  double skew;
  gsl_ran_discrete_t *alias; /* Walker alias table; NULL when uniform */
  wl_perm perm;
} wl_zipf;

/* Builds the sampler in O(size) time and 16 bytes per rank (size must be in
 * [1, 2^32 - 1]). PS_OK or PS_ERR_NOMEM (then *z holds nothing to free). */
int wl_zipf_init(wl_zipf *z, uint64_t size, double skew);
void wl_zipf_free(wl_zipf *z);
/* Draws an index in [0, size); reads z only, so threads may share it. */
uint64_t wl_zipf_draw(const wl_zipf *z, gsl_rng *rng);

#endif
