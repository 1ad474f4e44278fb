/*
 * The distributions samples are drawn from: a contiguous key range, uniform
 * or weighted (e.g. unigram^0.75 for word2vec's negative samples). Weighted
 * draws use an alias table (Walker's method, built with Vose's worklists):
 * O(count) to build, once per distribution, then O(1) per draw with two
 * random numbers. The object is read-only after construction, so every
 * sampler of a run shares one.
 */
#include "policies/sampling_internal.h"

#include <math.h>
#include <stdlib.h>

/* A double in [0, 1) from 53 random bits. */
static double unit_double(uint64_t *rng) {
  return (double)(ps_splitmix64(rng) >> 11) * 0x1.0p-53;
}

/* Vose's construction: columns scaled to mean 1; each small column is topped
 * up from a large one, which then shrinks, until every column is full. */
static int alias_build(ps_sample_dist *d) {
  uint32_t n = (uint32_t)d->count;
  uint32_t *small = malloc(n * sizeof *small), *large = malloc(n * sizeof *large);
  double *q = malloc(n * sizeof *q);
  if (!small || !large || !q) {
    free(small), free(large), free(q);
    return PS_ERR_NOMEM;
  }
  uint32_t ns = 0, nl = 0;
  for (uint32_t i = 0; i < n; i++) {
    d->alias[i] = i; /* columns left full never consult it; keep it valid */
    q[i] = d->prob[i] * n;
    if (q[i] < 1.0) small[ns++] = i;
    else large[nl++] = i;
  }
  while (ns > 0 && nl > 0) {
    uint32_t s = small[--ns], l = large[--nl];
    d->accept[s] = q[s];
    d->alias[s] = l;
    q[l] = (q[l] + q[s]) - 1.0;
    if (q[l] < 1.0) small[ns++] = l;
    else large[nl++] = l;
  }
  /* What is left is full up to rounding error. */
  while (nl > 0) d->accept[large[--nl]] = 1.0;
  while (ns > 0) d->accept[small[--ns]] = 1.0;
  free(small), free(large), free(q);
  return PS_OK;
}

/* Normalizes weights into d->prob; PS_ERR_INVAL unless all are finite and
 * non-negative with a positive finite sum. */
static int normalize(ps_sample_dist *d, const double *weights) {
  double sum = 0;
  for (uint64_t i = 0; i < d->count; i++) {
    if (!isfinite(weights[i]) || weights[i] < 0) return PS_ERR_INVAL;
    sum += weights[i];
  }
  if (!(sum > 0) || !isfinite(sum)) return PS_ERR_INVAL;
  for (uint64_t i = 0; i < d->count; i++) d->prob[i] = weights[i] / sum;
  return PS_OK;
}

ps_sample_dist *ps_sample_dist_new(ps_key first, uint64_t count, const double *weights) {
  /* UINT64_MAX stays outside every support: the samplers' maps use it. */
  if (count == 0 || count > UINT64_MAX - first) return NULL;
  if (weights && count > UINT32_MAX) return NULL;
  ps_sample_dist *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->first = first;
  d->count = count;
  if (!weights) return d;
  d->prob = malloc(count * sizeof *d->prob);
  d->accept = malloc(count * sizeof *d->accept);
  d->alias = malloc(count * sizeof *d->alias);
  if (!d->prob || !d->accept || !d->alias || normalize(d, weights) != PS_OK ||
      alias_build(d) != PS_OK) {
    ps_sample_dist_free(d);
    return NULL;
  }
  return d;
}

void ps_sample_dist_free(ps_sample_dist *d) {
  if (!d) return;
  free(d->prob);
  free(d->accept);
  free(d->alias);
  free(d);
}

/* The modulo's bias is below count / 2^64: invisible at any count we hold. */
ps_key ps_sample_dist_draw(const ps_sample_dist *d, uint64_t *rng) {
  uint64_t i = ps_splitmix64(rng) % d->count;
  if (d->prob && unit_double(rng) >= d->accept[i]) i = d->alias[i];
  return d->first + i;
}

double ps_sample_dist_prob(const ps_sample_dist *d, ps_key k) {
  if (k < d->first || k - d->first >= d->count) return 0.0;
  return d->prob ? d->prob[k - d->first] : 1.0 / (double)d->count;
}
