/*
 * Statistics over the repeats of one sweep point: mean, standard deviation
 * and the half-width of a 95% confidence interval for the mean, from
 * Student's t distribution (GSL), and the combination a metric's table entry
 * asks for (mean, max or sum).
 *
 * Values are accumulated with Welford's update, so a long run of close
 * values (times of repeated runs) loses no digits to cancellation.
 */
#include "experiments/results/results.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

void exp_stats_add(exp_stats *s, double x) {
  s->n++;
  double delta = x - s->mean;
  s->mean += delta / (double)s->n;
  s->m2 += delta * (x - s->mean);
  s->sum += x;
  if (s->n == 1 || x > s->max) s->max = x;
  if (s->n == 1 || x < s->min) s->min = x;
}

double exp_stats_sd(const exp_stats *s) {
  return s->n < 2 ? NAN : sqrt(s->m2 / (double)(s->n - 1));
}

double exp_stats_ci95(const exp_stats *s) {
  if (s->n < 2) return NAN;
  double t = gsl_cdf_tdist_Pinv(0.975, (double)(s->n - 1));
  return t * exp_stats_sd(s) / sqrt((double)s->n);
}

double exp_stats_combined(const exp_stats *s, run_combine how) {
  if (s->n == 0) return NAN;
  switch (how) {
  case RUN_COMBINE_MAX: return s->max;
  case RUN_COMBINE_SUM: return s->sum;
  case RUN_COMBINE_MEAN: break;
  }
  return s->mean;
}
