/*
 * A straggler's time line: which factor holds at a time, and how long work
 * takes through the phases (run/run.h, "stragglers"). Both backends use it:
 * the simulator for a server's handling costs, which are sleeps rather than
 * executions on a host, the real backend for its emulation of a slow node.
 */
#include "run/run.h"

#include <math.h>

double run_phase_factor(const run_phase *p, size_t n, double t, bool bandwidth) {
  for (size_t i = 0; i < n; i++)
    if (t >= p[i].from_s && t < p[i].until_s)
      return bandwidth ? p[i].bandwidth_factor : p[i].speed_factor;
  return 1.0;
}

/* The first boundary (a phase's start or end) after t; INFINITY if none. */
static double next_boundary(const run_phase *p, size_t n, double t) {
  for (size_t i = 0; i < n; i++) {
    if (p[i].from_s > t) return p[i].from_s;
    if (p[i].until_s > t) return p[i].until_s;
  }
  return INFINITY;
}

double run_phase_stretch(const run_phase *p, size_t n, double t0, double work_s) {
  if (!(work_s > 0)) return 0;
  double t = t0, left = work_s;
  for (;;) {
    double f = run_phase_factor(p, n, t, false);
    double end = next_boundary(p, n, t);
    double can = (end - t) * f; /* work done before the factor changes */
    if (isinf(end) || can >= left) return t + left / f - t0;
    left -= can;
    t = end;
  }
}
