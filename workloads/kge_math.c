/*
 * The kge models' scores and gradients (tests check them against finite
 * differences).
 *
 * DistMult: s = sum_i h_i r_i t_i (entities and relations: dim reals).
 * ComplEx: s = Re(sum_i h_i r_i conj(t_i)) over dim complex numbers, stored
 *   as dim real parts then dim imaginary parts:
 *   s = sum_i hr rr tr + hi rr ti + hr ri ti - hi ri tr.
 * RESCAL: s = h^T R t, R a dim x dim matrix stored row by row.
 *
 * The loss of one example with label y (1: a true triple, 0: a corrupted
 * one) is the logistic loss -log sigma(s) or -log(1 - sigma(s)), that is
 * softplus(s) - y s, whose derivative in s is sigma(s) - y; L2
 * regularization reg/2 |x|^2 of each embedding the example uses adds reg x
 * to its gradient.
 */
#include "workloads/kge.h"

#include <math.h>

uint32_t kge_entity_len(kge_model m, uint32_t dim) { return m == KGE_COMPLEX ? 2 * dim : dim; }

uint32_t kge_relation_len(kge_model m, uint32_t dim) {
  switch (m) {
  case KGE_COMPLEX: return 2 * dim;
  case KGE_DISTMULT: return dim;
  case KGE_RESCAL: return dim * dim;
  }
  return dim;
}

double kge_score(kge_model m, uint32_t dim, const float *h, const float *r, const float *t) {
  double s = 0;
  switch (m) {
  case KGE_DISTMULT:
    for (uint32_t i = 0; i < dim; i++) s += (double)h[i] * r[i] * t[i];
    break;
  case KGE_COMPLEX: {
    const float *hi = h + dim, *ri = r + dim, *ti = t + dim;
    for (uint32_t i = 0; i < dim; i++)
      s += (double)h[i] * r[i] * t[i] + (double)hi[i] * r[i] * ti[i] +
           (double)h[i] * ri[i] * ti[i] - (double)hi[i] * ri[i] * t[i];
    break;
  }
  case KGE_RESCAL:
    for (uint32_t i = 0; i < dim; i++) {
      double row = 0;
      for (uint32_t j = 0; j < dim; j++) row += (double)r[(size_t)i * dim + j] * t[j];
      s += h[i] * row;
    }
    break;
  }
  return s;
}

void kge_query(kge_model m, uint32_t dim, const float *h, const float *r, double *q) {
  switch (m) {
  case KGE_DISTMULT:
    for (uint32_t i = 0; i < dim; i++) q[i] = (double)h[i] * r[i];
    break;
  case KGE_COMPLEX:
    for (uint32_t i = 0; i < dim; i++) {
      q[i] = (double)h[i] * r[i] - (double)h[dim + i] * r[dim + i];
      q[dim + i] = (double)h[dim + i] * r[i] + (double)h[i] * r[dim + i];
    }
    break;
  case KGE_RESCAL:
    for (uint32_t j = 0; j < dim; j++) q[j] = 0;
    for (uint32_t i = 0; i < dim; i++)
      for (uint32_t j = 0; j < dim; j++) q[j] += (double)h[i] * r[(size_t)i * dim + j];
    break;
  }
}

/* log(1 + e^s) without overflow. */
static double softplus(double s) { return s > 0 ? s + log1p(exp(-s)) : log1p(exp(s)); }

static double sigmoid(double s) {
  if (s >= 0) return 1 / (1 + exp(-s));
  double e = exp(s);
  return e / (1 + e);
}

static void add_reg(double reg, const float *x, uint32_t n, double *g) {
  if (reg == 0) return;
  for (uint32_t i = 0; i < n; i++) g[i] += reg * x[i];
}

double kge_example(kge_model m, uint32_t dim, const float *h, const float *r, const float *t,
                   double y, double reg, double *gh, double *gr, double *gt) {
  double s = kge_score(m, dim, h, r, t);
  double c = sigmoid(s) - y; /* dloss/ds */
  switch (m) {
  case KGE_DISTMULT:
    for (uint32_t i = 0; i < dim; i++) {
      gh[i] += c * r[i] * t[i];
      gr[i] += c * h[i] * t[i];
      gt[i] += c * h[i] * r[i];
    }
    break;
  case KGE_COMPLEX: {
    const float *hi = h + dim, *ri = r + dim, *ti = t + dim;
    for (uint32_t i = 0; i < dim; i++) {
      gh[i] += c * ((double)r[i] * t[i] + (double)ri[i] * ti[i]);
      gh[dim + i] += c * ((double)r[i] * ti[i] - (double)ri[i] * t[i]);
      gr[i] += c * ((double)h[i] * t[i] + (double)hi[i] * ti[i]);
      gr[dim + i] += c * ((double)h[i] * ti[i] - (double)hi[i] * t[i]);
      gt[i] += c * ((double)h[i] * r[i] - (double)hi[i] * ri[i]);
      gt[dim + i] += c * ((double)hi[i] * r[i] + (double)h[i] * ri[i]);
    }
    break;
  }
  case KGE_RESCAL:
    for (uint32_t i = 0; i < dim; i++) {
      const float *row = r + (size_t)i * dim;
      double rt = 0;
      for (uint32_t j = 0; j < dim; j++) {
        rt += (double)row[j] * t[j];
        gt[j] += c * h[i] * row[j];
        gr[(size_t)i * dim + j] += c * h[i] * t[j];
      }
      gh[i] += c * rt;
    }
    break;
  }
  uint32_t el = kge_entity_len(m, dim);
  add_reg(reg, h, el, gh);
  add_reg(reg, r, kge_relation_len(m, dim), gr);
  add_reg(reg, t, el, gt);
  return softplus(s) - y * s;
}

double kge_example_flops(kge_model m, uint32_t dim) {
  double d = dim;
  switch (m) {
  case KGE_DISTMULT: return 3 * d + 9 * d + 6 * d;        /* score, gradient, reg */
  case KGE_COMPLEX: return 16 * d + 36 * d + 12 * d;      /* over dim complex numbers */
  case KGE_RESCAL: return 2 * d * d + 6 * d * d + 2 * (d * d + 2 * d);
  }
  return 0;
}
