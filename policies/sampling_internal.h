/*
 * What the sampling files share (policies/sampling*.c), private to policies/:
 * the sampler's state, a small key -> count hash map for conformity
 * bookkeeping, and the pool scheme's entry points.
 */
#ifndef PSLAB_POLICIES_SAMPLING_INTERNAL_H
#define PSLAB_POLICIES_SAMPLING_INTERNAL_H

#include "policies/keymap.h"
#include "policies/policy.h"

/* ------------------------------------------------------- distribution */

struct ps_sample_dist {
  ps_key first;
  uint64_t count;
  double *prob;    /* normalized weights (NULL: uniform) */
  double *accept;  /* alias table: keep column i with this probability ... */
  uint32_t *alias; /* ... else take alias[i] */
};

/* ------------------------------------------------------------ sampler */

typedef enum { SCHEME_NAIVE, SCHEME_PRELOC, SCHEME_POOL, SCHEME_LOCAL } sampling_scheme;

typedef struct {
  int scheme; /* a sampling_scheme */
  uint32_t group_size, reuse;
  bool postpone;
} sampling_config;

/* Parses json into *c (defaults first); PS_OK or PS_ERR_INVAL with err. */
int sampling_parse(const struct cJSON *json, sampling_config *c, char *err, size_t errlen);

/* Samples prepared and not yet pulled. keys holds preloc's draws (else NULL). */
typedef struct {
  uint64_t handle;
  size_t n;
  ps_key *keys;
} sampling_prepared;

/* A pool: group_size keys drawn together and localized together. */
typedef struct sampling_group {
  struct sampling_group *next;
  uint32_t live;      /* keys[0..live) still have uses left */
  ps_key *keys;
  uint32_t *uses;     /* uses left, per key */
} sampling_group;

struct ps_sampler {
  sampling_config cfg;
  ps_worker *w;
  const ps_sample_dist *d;
  uint32_t value_len;  /* of every key of d (one table) */
  uint64_t rng;
  uint64_t next_handle;
  sampling_prepared *prep;
  size_t nprep, capprep;
  /* pool: groups oldest first; uses they hold, and uses promised to prepares */
  sampling_group *groups, *last_group;
  uint64_t pool_uses, pool_reserved;
  /* local: keys seen local, to fall back on */
  keymap local_seen;
  ps_key *local_keys;
  size_t nlocal, caplocal;
  /* conformity */
  keymap counts;
  uint64_t samples, draws, postponed, distinct_used;
};

/* Records that key k was handed out; first_use says it is a fresh draw's
 * first use (for the reuse factor). PS_OK or PS_ERR_NOMEM. */
int sampling_count(ps_sampler *s, ps_key k, bool first_use);

/* pool (sampling_pool.c): promises n uses, drawing and localizing new pools
 * so that one full pool stays spare beyond the promises. */
int pool_reserve(ps_sampler *s, size_t n, double now);
/* Takes n promised uses into keys[n]; counts them. */
int pool_take(ps_sampler *s, ps_key *keys, size_t n);
void pool_free_groups(ps_sampler *s);

#endif
