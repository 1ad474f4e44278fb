/*
 * Zipf over an index range, and the permutation that places ranks.
 *
 * Rank r in [0, n) has probability proportional to 1/(r+1)^skew. Drawing uses
 * GSL's Walker alias table (gsl_ran_discrete_preproc, O(n) to build, O(1) per
 * draw), built once and then only read, so every worker of a run shares it.
 * Ranks are placed by a fixed pseudo-random permutation so the hot keys are
 * spread over the key space (and over the nodes, whatever the partitioning),
 * yet are the same keys in every run: the permutation is keyed by a constant,
 * not by the run's seed. It is a Feistel network with cycle walking, which
 * needs no table: a permutation of 10M keys costs no memory at all.
 */
#include "workloads/internal.h"

#include <math.h>
#include <stdlib.h>

/* ------------------------------------------------------------ permutation */

/* Keys the permutation; changing it moves every hot key (and golden results). */
#define WL_PERM_CONSTANT 0x70736c61625a6970ULL /* "pslabZip" */

static uint64_t low_mask(unsigned bits) {
  return bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
}

void wl_perm_init(wl_perm *p, uint64_t n) {
  unsigned bits = 0;
  while (bits < 64 && (n - 1) >> bits) bits++; /* bit length of n - 1 */
  p->n = n;
  p->left_bits = (bits + 1) / 2;
  p->right_bits = bits / 2;
  for (unsigned i = 0; i < WL_PERM_ROUNDS; i++)
    p->round_key[i] = ps_mix64(WL_PERM_CONSTANT + i);
}

/* One pass of the network: a bijection on [0, 2^bits). Round i maps the
 * halves (l, r) to (r, l ^ F_i(r)); the widths swap each round and are back
 * after an even number of rounds. */
static uint64_t feistel(const wl_perm *p, uint64_t x) {
  unsigned lb = p->left_bits, rb = p->right_bits;
  uint64_t l = x >> rb, r = x & low_mask(rb);
  for (unsigned i = 0; i < WL_PERM_ROUNDS; i++) {
    uint64_t f = ps_mix64(r ^ p->round_key[i]) & low_mask(lb);
    uint64_t new_r = l ^ f;
    l = r;
    r = new_r;
    unsigned t = lb;
    lb = rb;
    rb = t;
  }
  return (l << rb) | r;
}

uint64_t wl_perm_apply(const wl_perm *p, uint64_t x) {
  if (p->n <= 1) return x;
  /* Cycle walking: x's cycle under the network holds x itself, so the walk
   * ends, and the result is a bijection on [0, n). */
  do
    x = feistel(p, x);
  while (x >= p->n);
  return x;
}

/* ------------------------------------------------------------ sampler */

int wl_zipf_init(wl_zipf *z, uint64_t size, double skew) {
  z->size = size;
  z->skew = skew;
  z->alias = NULL;
  wl_perm_init(&z->perm, size);
  if (skew == 0 || size == 1) return PS_OK; /* uniform: no table */
  double *weight = malloc(size * sizeof *weight);
  if (!weight) return PS_ERR_NOMEM;
  for (uint64_t r = 0; r < size; r++)
    weight[r] = exp(-skew * log1p((double)r)); /* (r+1)^-skew; GSL normalizes */
  z->alias = gsl_ran_discrete_preproc(size, weight);
  free(weight);
  return z->alias ? PS_OK : PS_ERR_NOMEM;
}

void wl_zipf_free(wl_zipf *z) {
  if (z->alias) gsl_ran_discrete_free(z->alias);
  z->alias = NULL;
}

uint64_t wl_zipf_draw(const wl_zipf *z, gsl_rng *rng) {
  if (!z->alias) /* uniform: any placement of ranks is the same draw */
    return z->size == 1 ? 0 : gsl_rng_uniform_int(rng, z->size);
  return wl_perm_apply(&z->perm, gsl_ran_discrete(rng, z->alias));
}

/* --------------------------------------------------------- generators */

gsl_rng *wl_rng_new(uint64_t seed, uint32_t worker_rank) {
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  if (!rng) return NULL;
  /* mt19937 takes 32 bits of seed: fold a mix of both inputs into them. */
  uint64_t s = ps_mix64(seed ^ ps_mix64(0x776f726b6572ULL + worker_rank));
  gsl_rng_set(rng, (unsigned long)((s ^ (s >> 32)) & 0xffffffffUL));
  return rng;
}
