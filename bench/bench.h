/*
 * What every benchmark shares: a clock, figures measured in interleaved
 * rounds, and the lines they print.
 *
 * A benchmark measures a figure of pslab and its yardstick (the same work
 * done without pslab) side by side: round after round, one then the other,
 * so that a machine whose speed drifts (other processes, frequency) moves
 * both alike. Each round gives one value of each and their ratio; a figure
 * is the median over the rounds, with the smallest and largest value as its
 * spread, and the ratio is the median of the rounds' ratios (pairwise).
 *
 * Lines a script can read, one per figure:
 *
 *   NAME: VALUE UNIT [MIN..MAX, R rounds]
 *   NAME: VALUE UNIT [MIN..MAX, R rounds] (ratio RATIO [RMIN..RMAX] against YARDSTICK)
 *   goal NAME: RATIO <= GOAL: met|missed        (or >=)
 *
 * NAME and YARDSTICK name figures printed on their own lines; NAME holds no
 * colon. A regular expression for the second form:
 *   ^([^:]+): (\S+) (\S+) \[(\S+)\.\.(\S+), (\d+) rounds\] \(ratio (\S+) \[(\S+)\.\.(\S+)\] against (.+)\)$
 */
#ifndef PSLAB_BENCH_H
#define PSLAB_BENCH_H

#include "run/run.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_MAX_ROUNDS 64

static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The calling thread's CPU time in seconds: time it ran, not time it waited
 * for a core (on a shared machine, wall time per operation grows with
 * other processes' load; CPU time much less). */
static inline double bench_cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One figure: a value per round. */
typedef struct {
  const char *name, *unit;
  double v[BENCH_MAX_ROUNDS];
  int n;
} bench_fig;

static inline void bench_add(bench_fig *f, double v) {
  if (f->n < BENCH_MAX_ROUNDS) f->v[f->n++] = v;
}

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median, smallest and largest of v[n] (n >= 1). */
static inline double bench_median(const double *v, int n, double *lo, double *hi) {
  double s[BENCH_MAX_ROUNDS];
  memcpy(s, v, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, bench_cmp_double);
  if (lo) *lo = s[0];
  if (hi) *hi = s[n - 1];
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* A value with 4 significant digits, without an exponent below 1e9. */
static inline const char *bench_num(char *buf, size_t len, double v) {
  if (v >= 1e4 && v < 1e9) snprintf(buf, len, "%.0f", v);
  else snprintf(buf, len, "%.4g", v);
  return buf;
}

/* Prints f's line (no ratio). */
static inline void bench_print(const bench_fig *f) {
  char a[32], b[32], c[32];
  double lo, hi, med = bench_median(f->v, f->n, &lo, &hi);
  printf("%s: %s %s [%s..%s, %d rounds]\n", f->name, bench_num(a, sizeof a, med), f->unit,
         bench_num(b, sizeof b, lo), bench_num(c, sizeof c, hi), f->n);
}

/* Prints a's line with the median of the per-round ratios a / b (inverse:
 * b / a, for rates where more is better) against yardstick b; returns that
 * median. Both must have the same rounds. */
static inline double bench_print_ratio(const bench_fig *a, const bench_fig *b, bool inverse) {
  double r[BENCH_MAX_ROUNDS];
  int n = a->n < b->n ? a->n : b->n;
  for (int i = 0; i < n; i++) r[i] = inverse ? b->v[i] / a->v[i] : a->v[i] / b->v[i];
  char x[32], y[32], z[32];
  double lo, hi, med = bench_median(a->v, a->n, &lo, &hi);
  double rlo, rhi, ratio = bench_median(r, n, &rlo, &rhi);
  printf("%s: %s %s [%s..%s, %d rounds] (ratio %.3g [%.3g..%.3g] against %s)\n", a->name,
         bench_num(x, sizeof x, med), a->unit, bench_num(y, sizeof y, lo),
         bench_num(z, sizeof z, hi), a->n, ratio, rlo, rhi, b->name);
  return ratio;
}

/* Prints whether a ratio met its goal (at most `goal`, or at least it). */
static inline void bench_goal(const char *name, double ratio, const char *op, double goal) {
  bool met = op[0] == '<' ? ratio <= goal : ratio >= goal;
  printf("goal %s: %.3g %s %g: %s\n", name, ratio, op, goal, met ? "met" : "missed");
}

/* Runs fn(ctx, out) in a child process that dies with this one, and copies
 * its out_len bytes of figures back: each simulated case starts with a
 * fresh engine and memory. 0, or -1 when the child failed. */
static inline int bench_in_child(int (*fn)(void *ctx, void *out), void *ctx, void *out,
                                 size_t out_len) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  fflush(stdout);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    run_die_with_parent(parent); /* never outlive the bench */
    close(fds[0]);
    void *mine = calloc(1, out_len);
    int rc = mine ? fn(ctx, mine) : -1;
    ssize_t n = rc == 0 ? write(fds[1], mine, out_len) : -1;
    _exit(n == (ssize_t)out_len ? 0 : 1);
  }
  close(fds[1]);
  ssize_t n = read(fds[0], out, out_len);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return n == (ssize_t)out_len && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

#endif
