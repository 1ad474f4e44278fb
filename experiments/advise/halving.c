/*
 * Successive halving under a budget of wall time (Jamieson and Talwalkar's
 * scheme, as Hyperband runs it once): every candidate is evaluated on a
 * short prefix of the run, the better half (rounded up, at least two) goes
 * on to a prefix twice as long, and so on; the last round is the whole run.
 * The first prefix is chosen so that the whole run is reached with two
 * candidates left. The search ends early when the next round's cost
 * exceeds what is left of the budget (checked before it starts against
 * the least it can cost, its candidates' last costs; and after its first
 * evaluation against a prediction: every evaluation's fixed cost, a child
 * and the run's setup, fitted to that candidate's two costs, plus each
 * candidate's part that grows with the prefix), or when the leader is
 * ahead of every other survivor by more than both estimates'
 * extrapolation errors (the
 * relative change of each estimate between its last two rounds: an
 * estimate that still moves as the prefix doubles is not trusted further
 * than it moved). The evaluator is a callback, so that tests can drive the
 * search with made-up values and costs.
 *
 * With jobs > 1 a round's candidates are evaluated in waves of that many,
 * each in a forked process of its own that sends its score back through a
 * pipe (its value exactly, as "%a" text), all of a wave at once: a wave
 * costs the wall time of its longest evaluation, and the budget is charged
 * that. Evaluations are recorded in the round's order whatever the order
 * they end in, so that for a seed the search and its ranking are the same
 * with any jobs, unless the budget cuts it short.
 *
 * A first round that its first waves show the budget cannot pay for is
 * tried again on a prefix half as long, down to the shortest the
 * evaluator makes (min_fraction), before the search gives up: a prefix's
 * cost is mostly its steps, now that an evaluation's fixed part is small.
 *
 * With a screening evaluator (the simulator under a cheaper network model),
 * the first round is that evaluator's, and the second re-evaluates the
 * better half on the same prefix with the search's own; the prefixes double
 * from there. The second round's pairs measure how well the screening
 * ordered the candidates it promoted (adv_result.screen_agree).
 */
#include "experiments/advise/advise.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

bool adv_score_better(const adv_score *a, const adv_score *b) {
  if (a->bound != b->bound) return !a->bound;
  if (a->bound && a->behind != b->behind) return a->behind < b->behind;
  return a->value < b->value;
}

void adv_result_free(adv_result *r) {
  cJSON_Delete(r->evaluations);
  free(r->order);
  free(r->last);
  free(r->spread);
  free(r->from_gap);
  free(r->round);
  *r = (adv_result){0};
}

/* Rounds of n candidates: one, then one per halving down to two. */
static size_t rounds_for(size_t n) {
  size_t h = 0;
  for (size_t m = n; m > 2; m = (m + 1) / 2) h++;
  return h + 1;
}

/* Sorts idx[0..m) by the scores sc[idx] (insertion sort: stable, and a
 * search has at most a few hundred candidates). */
static void sort_by(size_t *idx, size_t m, const adv_score *sc) {
  for (size_t i = 1; i < m; i++) {
    size_t v = idx[i], j = i;
    while (j > 0 && adv_score_better(&sc[v], &sc[idx[j - 1]])) {
      idx[j] = idx[j - 1];
      j--;
    }
    idx[j] = v;
  }
}

static void record(adv_result *r, size_t round, size_t cand, double fraction,
                   const char *model, bool screen, const adv_score *sc, const char *error) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "round", (double)round);
  cJSON_AddNumberToObject(o, "candidate", (double)cand);
  cJSON_AddNumberToObject(o, "fraction", fraction);
  if (model) cJSON_AddStringToObject(o, "model", model);
  cJSON_AddBoolToObject(o, "screen", screen);
  if (error) {
    cJSON_AddStringToObject(o, "error", error);
  } else {
    cJSON_AddNumberToObject(o, "prefix", sc->fraction);
    cJSON_AddNumberToObject(o, "value", sc->value);
    cJSON_AddBoolToObject(o, "bound", sc->bound);
    if (sc->assumed) cJSON_AddBoolToObject(o, "assumed", true);
    if (sc->bound) cJSON_AddNumberToObject(o, "behind", sc->behind);
    if (adv_est_name(sc->est)) cJSON_AddStringToObject(o, "estimate", adv_est_name(sc->est));
    adv_half_record(o, sc);
    if (sc->detail) cJSON_AddItemToObject(o, "metrics", cJSON_Duplicate(sc->detail, true));
  }
  cJSON_AddNumberToObject(o, "cost_s", sc ? sc->cost_s : 0);
  cJSON_AddItemToArray(r->evaluations, o);
}

/* The state of a search between rounds. */
typedef struct {
  const adv_search *s;
  adv_result *r;
  size_t *cur, m;   /* the candidates of this round */
  adv_score *now;   /* this round's scores, by candidate */
  bool *ok;         /* evaluated this round */
  double *wave_cost; /* the first round's waves' costs */
  bool too_dear;     /* the first round was refused on its predicted cost */
  double need;       /* what it was predicted to cost */
  double before;     /* what was spent before this round's try */
  bool judged;       /* this try of the first round was predicted to fit */
  double got;       /* the prefix this try's first evaluation really had */
  double last_f;    /* the last round's fraction (0: none yet) */
  bool screened;    /* the first round screens (adv_search.screen) */
  adv_eval_fn fn;   /* this round's evaluator */
} search;

/* Evaluations at a time: the search's jobs, at least 1. */
static size_t jobs_of(const adv_search *s) {
  return s->jobs > ADV_JOBS_MAX ? ADV_JOBS_MAX : s->jobs > 1 ? s->jobs : 1;
}

/* The least the next round (k) can cost: its candidates' last costs (a
 * longer prefix costs no less), the longest of each wave; of its first two
 * only after the screening (that round keeps as many as the budget pays
 * for). 0 before the first round. */
static double least_cost(const search *st, size_t k) {
  double sum = 0, wave = 0;
  size_t j = jobs_of(st->s), m = st->screened && k == 1 && st->m > 2 ? 2 : st->m;
  for (size_t i = 0; st->last_f > 0 && i < m; i++) {
    wave = fmax(wave, st->r->last[st->cur[i]].cost_s);
    if ((i + 1) % j == 0 || i + 1 == m) {
      sum += wave;
      wave = 0;
    }
  }
  return sum;
}

/* After the first wave of a round at f (its first candidate's cost c2,
 * that candidate's last c1): the rest of the round's cost, each candidate
 * from the `from`th on at its last cost with the part that grows with the
 * prefix scaled, the fixed part (what every evaluation pays: a child, the
 * run's setup) fitted to the first one's two costs and taken as every
 * candidate's; shared among the jobs. */
static double rest_cost(const search *st, size_t from, double f, double c1, double c2) {
  if (!(f > st->last_f)) { /* the same prefix with the search's own evaluator */
    double sum = 0, ratio = c1 > 0 ? c2 / c1 : 1;
    for (size_t i = from; i < st->m; i++) sum += st->r->last[st->cur[i]].cost_s * ratio;
    return sum / (double)jobs_of(st->s);
  }
  double b = fmax(0, (c2 - c1) / (f - st->last_f)), a = fmax(0, c1 - b * st->last_f);
  double sum = 0;
  for (size_t i = from; i < st->m; i++) {
    double last = st->r->last[st->cur[i]].cost_s;
    double fixed = fmin(a, last);
    sum += fixed + (last - fixed) * f / st->last_f;
  }
  return sum / (double)jobs_of(st->s);
}

/* The round that simulates the screening's better half again, too dear
 * for the budget left after its first wave of n (which cost c2 against
 * its screening's c1): it keeps the best-screened candidates that the
 * budget pays for (each at its screening's cost times c2 / c1), at least
 * two in all. What the rest of the round is then predicted to cost. */
static double fewer_promoted(search *st, size_t n, double c1, double c2) {
  double left = st->s->budget_s - st->r->spent_s, ratio = c1 > 0 ? c2 / c1 : 1, sum = 0;
  size_t j = jobs_of(st->s), keep = n;
  while (keep < st->m) {
    double next = sum + st->r->last[st->cur[keep]].cost_s * ratio / (double)j;
    if (next > left && keep >= 2) break;
    sum = next;
    keep++;
  }
  if (keep < st->m && st->s->log)
    fprintf(st->s->log, "pslab advise: round 2 simulates the best %zu of the %zu candidates "
            "the screening kept: the budget pays for no more\n", keep, st->m);
  st->m = keep;
  return sum;
}

/* One evaluation's outcome. */
typedef struct {
  adv_score sc;
  bool ok;
  char why[512];
} outcome;

/* Evaluates candidate c here with fn. */
static void eval_here(const adv_search *s, adv_eval_fn fn, size_t c, double f,
                      double timeout_s, outcome *o) {
  *o = (outcome){.ok = false};
  o->ok = fn(s->ctx, c, f, timeout_s, &o->sc, o->why, sizeof o->why) == 0;
}

/* Starts evaluating candidate c in a forked process, which writes its
 * outcome to *fd: a line "ok value bound assumed behind fraction raw cost_s
 * est half why"
 * (numbers as "%a", exact), then the metrics as JSON or the error. Its
 * pid, or -1. */
static pid_t eval_forked(const adv_search *s, adv_eval_fn fn, size_t c, double f,
                         double timeout_s, int *fd) {
  int p[2];
  if (pipe(p) != 0) return -1;
  fflush(NULL); /* or the child's copies of stdio buffers may be written twice */
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    outcome o;
    eval_here(s, fn, c, f, timeout_s, &o);
    char *detail = o.ok && o.sc.detail ? cJSON_PrintUnformatted(o.sc.detail) : NULL;
    dprintf(p[1], "%d %a %d %d %a %a %a %a %d %a %d\n%s", o.ok, o.sc.value, o.sc.bound,
            o.sc.assumed, o.sc.behind, o.sc.fraction, o.sc.raw, o.sc.cost_s, o.sc.est,
            o.sc.half, o.sc.why, o.ok ? (detail ? detail : "") : o.why);
    _exit(0);
  }
  close(p[1]);
  if (pid < 0) close(p[0]);
  else *fd = p[0];
  return pid;
}

/* Reads the outcome eval_forked's process pid writes to fd, and reaps it. */
static void eval_collect(pid_t pid, int fd, outcome *o) {
  exp_buf b = {0};
  char chunk[4096];
  for (ssize_t got; (got = read(fd, chunk, sizeof chunk)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    exp_buf_add(&b, chunk, (size_t)got);
  }
  close(fd);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) continue;
  *o = (outcome){.ok = false};
  int ok = 0, bound = 0, assumed = 0, used = 0;
  const char *text = b.failed ? NULL : b.data;
  if (!text || sscanf(text, "%d %la %d %d %la %la %la %la %d %la %d\n%n", &ok, &o->sc.value,
                      &bound, &assumed, &o->sc.behind, &o->sc.fraction, &o->sc.raw,
                      &o->sc.cost_s, &o->sc.est, &o->sc.half, &o->sc.why, &used) < 11 ||
      used == 0) {
    snprintf(o->why, sizeof o->why, "the evaluation's process ended without a result");
  } else if (ok) {
    o->ok = true;
    o->sc.bound = bound != 0;
    o->sc.assumed = assumed != 0;
    o->sc.detail = text[used] ? cJSON_Parse(text + used) : NULL;
  } else {
    snprintf(o->why, sizeof o->why, "%s", text + used);
  }
  exp_buf_free(&b);
}

/* Evaluates cands[0..n) at f, each within timeout_s, into out: here when
 * the search runs one at a time, else all at once in forked processes. */
static void eval_wave(const adv_search *s, adv_eval_fn fn, const size_t *cands, size_t n,
                      double f, double timeout_s, outcome *out) {
  if (jobs_of(s) == 1) {
    for (size_t w = 0; w < n; w++) eval_here(s, fn, cands[w], f, timeout_s, &out[w]);
    return;
  }
  pid_t pid[ADV_JOBS_MAX];
  int fd[ADV_JOBS_MAX];
  for (size_t w = 0; w < n; w++) pid[w] = eval_forked(s, fn, cands[w], f, timeout_s, &fd[w]);
  for (size_t w = 0; w < n; w++) {
    if (pid[w] > 0) {
      eval_collect(pid[w], fd[w], &out[w]);
    } else {
      out[w] = (outcome){.ok = false};
      snprintf(out[w].why, sizeof out[w].why, "cannot fork a process for the evaluation");
    }
  }
}

/* The first round's cost, predicted after its first `done` waves of
 * `waves`: theirs, and for each wave left the median of the first
 * FIRST_WAVES (the first judgement) or, later, the mean of all so far; NaN
 * (no prediction yet) before FIRST_WAVES waves, so that one candidate
 * dearer than most does not refuse a round that the others let fit. */
#define FIRST_WAVES 3
static double first_round_cost(const search *st, size_t done, size_t waves) {
  if (done < FIRST_WAVES && done < waves) return NAN;
  double sorted[FIRST_WAVES], spent = 0;
  size_t m = 0;
  for (size_t w = 0; w < done; w++) {
    spent += st->wave_cost[w];
    if (w < FIRST_WAVES) sorted[m++] = st->wave_cost[w];
  }
  if (done > FIRST_WAVES) /* past the first judgement: the mean of all so far */
    return spent + spent / (double)done * (double)(waves - done);
  for (size_t a = 1; a < m; a++) /* the first FIRST_WAVES, sorted */
    for (size_t b = a; b > 0 && sorted[b] < sorted[b - 1]; b--) {
      double t = sorted[b];
      sorted[b] = sorted[b - 1];
      sorted[b - 1] = t;
    }
  return spent + sorted[m / 2] * (double)(waves - done);
}

/* After the wave of n candidates from cur[i] of the first round (cost
 * wave): whether the round goes on (1), ends where it is because it grew
 * dearer than first predicted (2: r->stop says so), or is refused (-1 with
 * a message: its first waves show the budget cannot pay for it). */
static int first_round_goes_on(search *st, size_t i, size_t n, double wave, const outcome *o,
                               char *err, size_t errlen) {
  const adv_search *s = st->s;
  adv_result *r = st->r;
  size_t c = st->cur[i], j = jobs_of(s), waves = (st->m + j - 1) / j;
  st->wave_cost[i / j] = wave;
  double need = first_round_cost(st, i / j + 1, waves);
  double avail = s->budget_s - st->before;
  double next = (r->spent_s - st->before) / (double)(i / j + 1); /* a wave, on average */
  if (st->judged && i + n < st->m && r->spent_s + next > s->budget_s) {
    /* Predicted to fit at first, dearer as it went: it runs while the
     * budget pays for another wave, and what it evaluated stands (a
     * shorter try now would find little budget left). */
    snprintf(r->stop, sizeof r->stop, "the budget: round 1 would take about %.3g s of the "
             "%.3g s left, and ended after %zu of its %zu candidates", need, avail, i + n,
             st->m);
    return 2;
  }
  if (isfinite(need) && !st->judged && need <= avail) st->judged = true;
  if (st->ok[c] && need > avail && !st->judged) {
    char at_once[64] = "", first[64] = "the first candidate";
    if (j > 1) snprintf(at_once, sizeof at_once, ", %zu at a time,", j);
    if (i + n > 1) snprintf(first, sizeof first, "the first %zu candidates", i + n);
    snprintf(err, errlen, "--budget: %.3g s cannot pay for one round: %s on %.3g of the run "
             "took %.3g s, so a round of %zu candidates%s needs about %.3g s", avail,
             first, o[0].sc.fraction, r->spent_s - st->before, st->m, at_once, need);
    st->too_dear = true;
    st->need = need;
    return -1;
  }
  return 1;
}

/* The share of the run candidate c's prefix at f is, as far as the search
 * knows (its shortest, when it is longer). */
static double prefix_of(const adv_search *s, size_t c, double f) {
  return s->floors ? fmax(f, s->floors[c]) : f;
}

/* Records the wave of n candidates from cur[i] of round k (their outcomes
 * o) and charges its cost, its longest evaluation. 1 the round goes on;
 * 0 the budget ended it (a timeout); 2 the first wave showed that the rest
 * would exceed the budget (r->stop says so); -1 with a message: the first
 * wave shows that the budget cannot pay for one round. */
static int wave_done(search *st, size_t k, size_t i, size_t n, double f, double left,
                     outcome *o, char *err, size_t errlen) {
  const adv_search *s = st->s;
  adv_result *r = st->r;
  double wave = 0;
  bool failed = false;
  for (size_t w = 0; w < n; w++) {
    size_t c = st->cur[i + w];
    st->ok[c] = o[w].ok;
    failed |= !o[w].ok;
    wave = fmax(wave, o[w].sc.cost_s);
    bool screen = st->screened && k == 0;
    record(r, k, c, f, screen ? s->screen_name : s->own_name, screen,
           o[w].ok ? &o[w].sc : NULL, o[w].ok ? NULL : o[w].why);
    cJSON_Delete(o[w].sc.detail);
    o[w].sc.detail = NULL;
    st->now[c] = o[w].sc;
  }
  r->spent_s += wave;
  size_t c = st->cur[i];
  if (k == 0 && i == 0) st->got = o[0].sc.fraction;
  if (!st->ok[c] && r->spent_s >= s->budget_s && k == 0 && i == 0) {
    snprintf(err, errlen, "--budget: %.3g s cannot pay for one round: the first candidate "
             "on %.3g of the run did not finish within it (%s)", s->budget_s,
             prefix_of(s, c, f), o[0].why);
    return -1;
  }
  if (failed && r->spent_s >= s->budget_s && k == 0 && !st->judged) {
    /* Out of budget before its first waves showed that it fits. */
    snprintf(err, errlen, "--budget: %.3g s cannot pay for one round: %zu of its %zu "
             "candidates on %.3g of the run took it all", s->budget_s, i + n, st->m,
             prefix_of(s, st->cur[0], f));
    return -1;
  }
  if (failed && r->spent_s >= s->budget_s) return 0;
  if (k > 0 && i == 0 && st->ok[c]) {
    double rest = rest_cost(st, n, f, r->last[c].cost_s, o[0].sc.cost_s);
    if (rest > s->budget_s - r->spent_s && st->screened && k == 1)
      rest = fewer_promoted(st, n, r->last[c].cost_s, o[0].sc.cost_s);
    if (rest > s->budget_s - r->spent_s) {
      snprintf(r->stop, sizeof r->stop, "the budget: round %zu would take about %.3g s, "
               "%.3g s were left", k + 1, wave + rest, left);
      return 2;
    }
  }
  if (k == 0) return first_round_goes_on(st, i, n, wave, o, err, errlen);
  return 1;
}

/* Evaluates round k's candidates from cur[from] on (the first round goes
 * on where it paused) at fraction f, in waves of the search's jobs, at most
 * `waves` of them (0: all): this round's scores in st->now and st->ok.
 * What wave_done says of the last wave run, or 3: `waves` ran. */
static int run_round(search *st, size_t k, double f, size_t from, size_t waves, char *err,
                     size_t errlen) {
  size_t j = jobs_of(st->s);
  outcome *o = calloc(j, sizeof *o);
  if (!o) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  int rc = 1;
  if (from == 0) {
    st->before = st->r->spent_s;
    st->judged = false;
  }
  for (size_t i = from; i < st->m; i++) st->ok[st->cur[i]] = false;
  for (size_t i = from; rc == 1 && i < st->m; i += j) {
    if (waves && i >= from + waves * j) {
      rc = 3;
      break;
    }
    double left = st->s->budget_s - st->r->spent_s;
    if (left <= 0) {
      rc = 0;
      break;
    }
    size_t n = st->m - i < j ? st->m - i : j;
    eval_wave(st->s, st->fn, st->cur + i, n, f, left, o);
    rc = wave_done(st, k, i, n, f, left, o, err, errlen);
  }
  free(o);
  return rc;
}

/* The estimate of the whole run from two prefixes: the second's value
 * plus the rest of the run at the rate between the two, which leaves out
 * what every run pays once (start-up, first placement) and the value over
 * the share would count again for the rest. */
static void two_point(const adv_score *old, adv_score *sc) {
  if (old->bound || sc->bound || !(old->raw > 0) || !(sc->raw > 0) || sc->fraction >= 1 ||
      !(sc->fraction > old->fraction))
    return;
  double rate = (sc->raw - old->raw) / (sc->fraction - old->fraction);
  double est = sc->raw + rate * (1 - sc->fraction);
  if (rate > 0 && est > 0) {
    sc->value = est;
    sc->est = ADV_EST_TWO;
    sc->why = 0;
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* How the screening (each candidate's score in r->last) and the search's
 * own evaluator (in st->now) order the candidates both evaluated on the
 * same prefix: the pairs, those ordered alike, and the median ratio of
 * their values, own over screening. */
static void screen_agreement(search *st) {
  adv_result *r = st->r;
  size_t both = 0, *idx = calloc(st->m, sizeof *idx);
  double *ratio = calloc(st->m, sizeof *ratio);
  size_t nr = 0;
  for (size_t i = 0; idx && ratio && i < st->m; i++) {
    size_t c = st->cur[i];
    if (!st->ok[c]) continue;
    idx[both++] = c;
    const adv_score *a = &r->last[c], *b = &st->now[c];
    if (!a->bound && !b->bound && a->value > 0) ratio[nr++] = b->value / a->value;
  }
  for (size_t i = 0; i < both; i++)
    for (size_t j = i + 1; j < both; j++) {
      size_t a = idx[i], b = idx[j];
      r->screen_pairs++;
      r->screen_agree += adv_score_better(&r->last[a], &r->last[b]) ==
                         adv_score_better(&st->now[a], &st->now[b]);
    }
  if (nr) {
    qsort(ratio, nr, sizeof *ratio, cmp_double);
    r->screen_ratio = nr % 2 ? ratio[nr / 2] : (ratio[nr / 2 - 1] + ratio[nr / 2]) / 2;
  }
  free(idx);
  free(ratio);
}

/* Keeps this round's successful scores: the round, the spread between
 * the last two estimates (none from the round that re-evaluates the
 * screening's: its estimate and the screening's differ by the model, not
 * the prefix), else, with one prefix, the gap between its scaled and
 * second-half estimates, else none; drops the failed; sorts cur best
 * first. */
static void commit(search *st, size_t k) {
  adv_result *r = st->r;
  bool promoted = st->screened && k == 1;
  if (promoted) screen_agreement(st);
  size_t kept = 0;
  for (size_t i = 0; i < st->m; i++) {
    size_t c = st->cur[i];
    if (!st->ok[c]) {
      r->round[c] = -1;
      continue;
    }
    const adv_score *old = &r->last[c];
    adv_score *sc = &st->now[c];
    if (k > 0) two_point(old, sc);
    r->from_gap[c] = false;
    if (sc->fraction >= 1) r->spread[c] = 0;
    else if (!promoted && k > 0 && !old->bound && !sc->bound && sc->value > 0)
      r->spread[c] = fabs(sc->value - old->value) / sc->value;
    else if (!sc->bound && sc->half > 0 && sc->value > 0) {
      r->spread[c] = fabs(sc->value - sc->half) / sc->value;
      r->from_gap[c] = true;
    } else r->spread[c] = NAN;
    r->last[c] = *sc;
    r->round[c] = (int)k;
    st->cur[kept++] = c;
  }
  st->m = kept;
  sort_by(st->cur, st->m, r->last);
}

/* Whether cur[0] is ahead of every other survivor by more than both
 * estimates' errors, and no survivor short of the target may reach it
 * on a longer prefix. */
static bool leads(const search *st) {
  const adv_result *r = st->r;
  if (st->m < 2) return false;
  size_t a = st->cur[0];
  double ea = r->spread[a];
  if (r->last[a].bound || !isfinite(ea)) return false;
  for (size_t i = 1; i < st->m; i++) {
    size_t b = st->cur[i];
    double eb = r->spread[b];
    if (r->last[b].bound && r->last[b].fraction < 1) return false; /* may reach it yet */
    if (r->last[b].bound) continue;
    if (!isfinite(eb) || !(r->last[a].value * (1 + ea) < r->last[b].value * (1 - eb)))
      return false;
  }
  return true;
}

/* The final order: by the last round reached (later first), then score;
 * the failed last. */
static void final_order(adv_result *r, size_t n) {
  size_t m = 0;
  for (int k = (int)r->rounds - 1; k >= 0; k--) {
    size_t from = m;
    for (size_t c = 0; c < n; c++)
      if (r->round[c] == k) r->order[m++] = c;
    sort_by(r->order + from, m - from, r->last);
  }
  for (size_t c = 0; c < n; c++)
    if (r->round[c] < 0) r->order[m++] = c;
}

static bool result_alloc(adv_result *r, size_t n) {
  *r = (adv_result){.n = n, .evaluations = cJSON_CreateArray(), .screen_ratio = NAN};
  r->order = calloc(n, sizeof *r->order);
  r->last = calloc(n, sizeof *r->last);
  r->spread = calloc(n, sizeof *r->spread);
  r->from_gap = calloc(n, sizeof *r->from_gap);
  r->round = calloc(n, sizeof *r->round);
  if (!r->evaluations || !r->order || !r->last || !r->spread || !r->from_gap ||
      !r->round)
    return false;
  for (size_t c = 0; c < n; c++) {
    r->round[c] = -1;
    r->spread[c] = NAN;
  }
  return true;
}

/* Whether the first round, refused on its predicted cost at *f, may be
 * tried again on a shorter prefix (half as long, or shorter in the ratio
 * of what is left of the budget to the predicted cost; not below the
 * shortest the evaluator makes): then *f is that prefix, and the log says
 * so. A prefix's cost has a part that does not shrink with it, so the
 * ratio is a guess that errs short of the cost. */
static bool shorter_first(search *st, double *f, const char *why) {
  const adv_search *s = st->s;
  double left = s->budget_s - st->r->spent_s;
  double g = fmax(s->min_fraction, fmin(*f / 2, *f * left / st->need));
  /* Its first candidate at its shortest already: a shorter try would run
   * it on the same prefix again. */
  bool floor = s->floors && !(st->got > s->floors[st->cur[0]]);
  if (!st->too_dear || !(s->min_fraction > 0) || !(g < *f) ||
      st->r->spent_s >= s->budget_s || floor)
    return false;
  st->too_dear = false;
  if (s->log)
    fprintf(s->log, "pslab advise: %s; the first round again on %.3g of the run\n", why, g);
  *f = g;
  return true;
}

/* Keeps what round k, ended by the budget, evaluated when it is the first
 * (the candidates it did not reach are left unranked, as failed ones are)
 * or the one that simulates the screening's best again (those it did not
 * reach keep their screening). A later round's evaluations are dropped:
 * its candidates' last round stands. */
static void partial_round(search *st, size_t k) {
  if (k == 1 && st->screened) {
    size_t kept = 0;
    for (size_t i = 0; i < st->m; i++)
      if (st->ok[st->cur[i]]) st->cur[kept++] = st->cur[i];
    st->m = kept;
  } else if (k > 0) {
    return;
  }
  commit(st, k);
  if (st->m > 0) st->r->rounds = k + 1;
}

/* The longest prefix from f down (halving; above p) that the round can be
 * paid for on, as the first `probed` candidates' evaluations on p predict:
 * each one's cost scaled by the longer prefix (which overestimates it: part
 * of it does not grow), their median for every wave. p when none. */
static double longest_paid(const search *st, double f, double p, size_t probed) {
  double cost[FIRST_WAVES * ADV_JOBS_MAX];
  size_t j = jobs_of(st->s), waves = (st->m + j - 1) / j;
  double left = st->s->budget_s - st->r->spent_s;
  for (double g = f; g > p; g /= 2) {
    size_t n = 0;
    for (size_t i = 0; i < probed && n < sizeof cost / sizeof cost[0]; i++) {
      const adv_score *sc = &st->now[st->cur[i]];
      if (st->ok[st->cur[i]] && sc->fraction > 0)
        cost[n++] = sc->cost_s * fmax(1, g / sc->fraction);
    }
    if (!n) return p;
    qsort(cost, n, sizeof *cost, cmp_double);
    if (cost[n / 2] * (double)waves <= left) return g;
  }
  return p;
}

/* The first round, on *f (set to the prefix it ran on). When the evaluator
 * makes shorter prefixes, its first waves run on the shortest first: if
 * the round cannot be paid for even there, it is refused at that cost;
 * else it runs on the longest prefix up to *f that they show the budget
 * pays for (going on from them when that is the shortest). A round refused
 * on a prefix is tried again on a shorter one (shorter_first). */
static int first_round(search *st, double *f, char *err, size_t errlen) {
  const adv_search *s = st->s;
  double p = s->min_fraction;
  int rc;
  if (p > 0 && *f > p) {
    rc = run_round(st, 0, p, 0, FIRST_WAVES, err, errlen);
    if (rc != 3) {
      *f = p;
      return rc;
    }
    size_t probed = FIRST_WAVES * jobs_of(s);
    double g = longest_paid(st, *f, p, probed);
    if (!(g > p)) {
      *f = p;
      return run_round(st, 0, p, probed, 0, err, errlen);
    }
    if (s->log)
      fprintf(s->log, "pslab advise: the first round on %.3g of the run (its first %zu "
              "candidates on %.3g show what it costs)\n", g, probed, p);
    /* Their records stay, marked: the round runs them again on g. */
    for (cJSON *e = st->r->evaluations->child; e; e = e->next)
      cJSON_AddBoolToObject(e, "superseded", true);
    *f = g;
  }
  rc = run_round(st, 0, *f, 0, 0, err, errlen);
  while (rc < 0 && shorter_first(st, f, err)) rc = run_round(st, 0, *f, 0, 0, err, errlen);
  return rc;
}

/* What round k evaluates with, by name (NULL: not named). */
static const char *round_model(const search *st, size_t k) {
  return st->screened && k == 0 ? st->s->screen_name : st->s->own_name;
}

/* Rounds until the whole run, the budget or a clear leader ends them. */
static int rounds_loop(search *st, char *err, size_t errlen) {
  const adv_search *s = st->s;
  adv_result *r = st->r;
  size_t rounds = rounds_for(s->n);
  double first = s->first_fraction > 0 ? s->first_fraction : ldexp(1.0, -(int)(rounds - 1));
  st->screened = s->screen && rounds >= 3;
  r->screened = st->screened;
  if (st->screened) rounds++; /* the second is on the first's prefix */
  for (size_t k = 0; st->m > 0; k++) {
    st->fn = st->screened && k == 0 ? s->screen : s->eval;
    int doublings = (int)k - (st->screened && k > 0 ? 1 : 0);
    double f = k + 1 >= rounds ? 1.0 : fmin(1.0, first * ldexp(1.0, doublings));
    double least = least_cost(st, k);
    if (k > 0 && least > s->budget_s - r->spent_s) {
      snprintf(r->stop, sizeof r->stop, "the budget: round %zu would take more than %.3g s, "
               "%.3g s were left", k + 1, least, s->budget_s - r->spent_s);
      return 0;
    }
    int rc = k == 0 ? first_round(st, &f, err, errlen) : run_round(st, k, f, 0, 0, err, errlen);
    if (k == 0) first = f;
    if (rc < 0) return -1;
    if (rc == 0) {
      snprintf(r->stop, sizeof r->stop, "the budget ran out during round %zu", k + 1);
      partial_round(st, k);
      return 0;
    }
    if (rc == 2) {
      partial_round(st, k);
      return 0;
    }
    commit(st, k);
    r->rounds = k + 1;
    if (s->log)
      fprintf(s->log, "pslab advise: round %zu: %zu candidates on %.3g of the run%s%s%s, "
              "%.3g s spent of %.3g s\n", k + 1, st->m, f, round_model(st, k) ? " under " : "",
              round_model(st, k) ? round_model(st, k) : "",
              st->screened && k == 0 ? " (screening)" : "", r->spent_s, s->budget_s);
    if (f >= 1) {
      snprintf(r->stop, sizeof r->stop, "the whole run was simulated (round %zu)", k + 1);
      return 0;
    }
    /* not on the screening's model: the spec's own re-evaluates it */
    /* not on the screening's model: the spec's own re-evaluates it */
    if (!(st->screened && k == 0) && leads(st)) {
      snprintf(r->stop, sizeof r->stop, "after round %zu, the first leads the others by more "
               "than the estimates' errors", k + 1);
      return 0;
    }
    size_t keep = (st->m + 1) / 2;
    st->m = keep < 2 && st->m >= 2 ? 2 : keep;
    st->last_f = f;
  }
  return 0;
}

int adv_halving(const adv_search *s, adv_result *r, char *err, size_t errlen) {
  *r = (adv_result){0};
  if (s->n == 0) {
    snprintf(err, errlen, "candidates: the candidate set is empty");
    return -1;
  }
  if (!(s->budget_s > 0) || !isfinite(s->budget_s)) {
    snprintf(err, errlen, "--budget: expected a number of seconds greater than 0");
    return -1;
  }
  search st = {.s = s, .r = r, .m = s->n};
  st.cur = calloc(s->n, sizeof *st.cur);
  st.now = calloc(s->n, sizeof *st.now);
  st.ok = calloc(s->n, sizeof *st.ok);
  st.wave_cost = calloc(s->n, sizeof *st.wave_cost);
  int rc = -1;
  if (!st.cur || !st.now || !st.ok || !st.wave_cost || !result_alloc(r, s->n)) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  for (size_t c = 0; c < s->n; c++) st.cur[c] = c;
  if ((rc = rounds_loop(&st, err, errlen)) != 0) goto out;
  final_order(r, s->n);
  if (r->rounds == 0 || r->round[r->order[0]] < 0) {
    snprintf(err, errlen, "every candidate failed (%s); advise.jsonl has each one's error",
             r->stop);
    rc = -1;
  }
out:
  free(st.cur);
  free(st.now);
  free(st.ok);
  free(st.wave_cost);
  return rc;
}
