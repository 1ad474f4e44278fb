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
#include <pthread.h>
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

/* The alias tables wl_keep_tables keeps: built once per size and skew,
 * then shared read-only by every sampler of this process and of the
 * children it forks, and never freed. A few are plenty (a run's whole key
 * space and its two block sizes); past them tables are built as usual. */
#define KEPT_MAX 8
typedef struct {
  uint64_t size;
  double skew;
  gsl_ran_discrete_t *alias;
} kept_table;
static kept_table kept[KEPT_MAX];
static size_t n_kept;
static bool keeping;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

void wl_keep_tables(bool keep) {
  pthread_mutex_lock(&kept_lock);
  keeping = keep;
  for (size_t i = 0; !keep && i < n_kept; i++) gsl_ran_discrete_free(kept[i].alias);
  if (!keep) n_kept = 0;
  pthread_mutex_unlock(&kept_lock);
  wl_keep_workloads(keep);
}

static gsl_ran_discrete_t *build_alias(uint64_t size, double skew) {
  double *weight = malloc(size * sizeof *weight);
  if (!weight) return NULL;
  for (uint64_t r = 0; r < size; r++)
    weight[r] = exp(-skew * log1p((double)r)); /* (r+1)^-skew; GSL normalizes */
  gsl_ran_discrete_t *alias = gsl_ran_discrete_preproc(size, weight);
  free(weight);
  return alias;
}

/* The kept table of size and skew, built and kept when there is room;
 * NULL when not keeping (or no room, or no memory). */
static gsl_ran_discrete_t *kept_alias(uint64_t size, double skew) {
  gsl_ran_discrete_t *alias = NULL;
  pthread_mutex_lock(&kept_lock);
  for (size_t i = 0; keeping && !alias && i < n_kept; i++)
    if (kept[i].size == size && kept[i].skew == skew) alias = kept[i].alias;
  if (keeping && !alias && n_kept < KEPT_MAX && (alias = build_alias(size, skew)))
    kept[n_kept++] = (kept_table){size, skew, alias};
  pthread_mutex_unlock(&kept_lock);
  return alias;
}

int wl_zipf_init(wl_zipf *z, uint64_t size, double skew) {
  z->size = size;
  z->skew = skew;
  z->alias = NULL;
  z->kept = false;
  wl_perm_init(&z->perm, size);
  if (skew == 0 || size == 1) return PS_OK; /* uniform: no table */
  z->alias = kept_alias(size, skew);
  z->kept = z->alias != NULL;
  if (!z->alias) z->alias = build_alias(size, skew);
  return z->alias ? PS_OK : PS_ERR_NOMEM;
}

void wl_zipf_free(wl_zipf *z) {
  if (z->alias && !z->kept) gsl_ran_discrete_free(z->alias);
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
