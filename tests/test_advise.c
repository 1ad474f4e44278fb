/*
 * `pslab advise` (experiments/advise/): successive halving driven by a
 * made-up evaluator (the budget is respected, a best candidate better by
 * more than the noise is never dropped, the order of evaluation is
 * recorded; the same with evaluations in parallel); bad input (an empty candidate set, a budget too small for one
 * round, a spec that no candidate fits, a wrong --metric), each an error
 * naming the field; the prefix of a run; and the whole command on a spec
 * whose winner is known by construction (range partitioning that matches
 * the data's clustering exactly), picked deterministically, with a
 * winner.json that `pslab run` takes as it is.
 */
#include "tests/unit.h"

#include "experiments/advise/advise.h"
#include "experiments/experiment.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ a made-up evaluator */

typedef struct {
  const double *truth; /* each candidate's true value */
  double noise;        /* relative: each estimate within truth * (1 +- noise) */
  double cost;         /* wall seconds of a whole run */
  size_t calls;
} fake;

static int fake_eval(void *ctx, size_t cand, double fraction, double timeout_s, adv_score *out,
                     char *err, size_t errlen) {
  (void)timeout_s;
  (void)err;
  (void)errlen;
  fake *f = ctx;
  f->calls++;
  /* A fixed pseudo-random draw in [-1, 1] per candidate and prefix. */
  uint64_t h = (cand + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(fraction * 1e6) * 0xBF58476D1CE4E5B9ull;
  h ^= h >> 31;
  double u = (double)(h % 2001) / 1000.0 - 1.0;
  *out = (adv_score){.value = f->truth[cand] * (1 + f->noise * u), .fraction = fraction,
                     .cost_s = f->cost * fraction};
  return 0;
}

#define N_FAKE 20
#define BEST 7

static void fake_truth(double *truth) {
  for (size_t i = 0; i < N_FAKE; i++) truth[i] = 1.0 + 0.05 * (double)i;
  truth[BEST] = 0.8; /* better than every other by more than twice the noise */
}

static void test_halving_keeps_the_best(void) {
  double truth[N_FAKE];
  fake_truth(truth);
  fake f = {truth, 0.05, 1.0, 0};
  adv_search s = {.n = N_FAKE, .budget_s = 1000, .eval = fake_eval, .ctx = &f};
  adv_result r;
  char err[512];
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT_EQUAL(r.order[0], BEST);
  CU_ASSERT_EQUAL(r.round[BEST], (int)r.rounds - 1); /* never dropped */
  /* The order of evaluation: round 1 takes the candidates in order, and
   * every record says its round and candidate. */
  size_t i = 0;
  for (const cJSON *e = r.evaluations->child; e && i < N_FAKE; e = e->next, i++) {
    CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "round")), 0);
    CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "candidate")), (double)i);
  }
  CU_ASSERT_EQUAL((size_t)cJSON_GetArraySize(r.evaluations), f.calls);
  /* 20 -> 10 -> 5 -> 3 -> 2, the last round the whole run; or the best
   * led by more than the estimates moved before that. */
  CU_ASSERT(r.rounds == 5 || unit_contains(r.stop, "leads"));
  CU_ASSERT(r.rounds < 5 || r.last[BEST].fraction == 1.0);
  adv_result_free(&r);
}

static void test_halving_respects_the_budget(void) {
  /* Candidates alike, so none leads and only the budget can end it early.
   * Rounds cost 20/16, 10/8, 5/4, ... of a 1 s run: 1.25 s each. */
  double truth[N_FAKE];
  for (size_t i = 0; i < N_FAKE; i++) truth[i] = 1.0;
  fake f = {truth, 0, 1.0, 0};
  adv_search s = {.n = N_FAKE, .budget_s = 3.0, .eval = fake_eval, .ctx = &f};
  adv_result r;
  char err[512];
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT(r.spent_s <= s.budget_s);
  CU_ASSERT_EQUAL(r.rounds, 2);
  /* Round 3 costs at least round 2's candidates' last costs, 0.625 s,
   * which the 0.5 s left cannot pay. */
  CU_ASSERT(unit_contains(r.stop, "budget: round 3 would take more than 0.625 s"));
  adv_result_free(&r);
  /* 0.95 s left after round 1 pays for round 2's least (0.625 s) but not
   * for what its first evaluation predicts: 1.25 s. */
  s.budget_s = 2.2;
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT(r.spent_s <= s.budget_s);
  CU_ASSERT_EQUAL(r.rounds, 1);
  CU_ASSERT(unit_contains(r.stop, "budget: round 2 would take about 1.25 s"));
  /* Its table says the first's estimate is from one prefix only. */
  adv_candidates cands = {0};
  adv_candidate items[N_FAKE];
  char labels[N_FAKE][8];
  for (size_t i = 0; i < N_FAKE; i++) {
    snprintf(labels[i], sizeof labels[i], "c%zu", i);
    items[i] = (adv_candidate){labels[i], NULL, "test", false, false};
  }
  cands.items = items;
  cands.count = N_FAKE;
  adv_report rp = {.cands = &cands, .res = &r, .metric = {.name = "time_s"}, .error = 0.28,
                   .budget_s = s.budget_s};
  double margin;
  cJSON *ranking = adv_ranking(&rp, &margin);
  char *table = NULL;
  size_t len;
  FILE *t = open_memstream(&table, &len);
  adv_print(t, &rp, ranking, margin);
  fclose(t);
  CU_ASSERT(unit_contains(table, "note: the first's estimate comes from one prefix (6.25% of"));
  CU_ASSERT(unit_contains(table, "warning: the margin is smaller than the simulator's"));
  free(table);
  cJSON_Delete(ranking);
  adv_result_free(&r);
}

/* fake_eval with every candidate but BEST five times as dear, and a
 * timeout: an evaluation that would take longer fails when it passes. */
static int timed_eval(void *ctx, size_t cand, double fraction, double timeout_s,
                      adv_score *out, char *err, size_t errlen) {
  int rc = fake_eval(ctx, cand, fraction, timeout_s, out, err, errlen);
  if (cand != BEST) out->cost_s *= 5;
  if (out->cost_s > timeout_s) {
    out->cost_s = timeout_s;
    snprintf(err, errlen, "timed out");
    return -1;
  }
  return rc;
}

static void test_halving_bad_input(void) {
  double truth[N_FAKE];
  fake_truth(truth);
  fake f = {truth, 0.05, 1.0, 0};
  adv_result r;
  char err[512];
  adv_search empty = {.n = 0, .budget_s = 10, .eval = fake_eval, .ctx = &f};
  CU_ASSERT_EQUAL(adv_halving(&empty, &r, err, sizeof err), -1);
  CU_ASSERT(unit_contains(err, "candidates: the candidate set is empty"));
  adv_result_free(&r);
  /* One round is 20 candidates at 1/16 of a 1 s run: 1.25 s. */
  adv_search small = {.n = N_FAKE, .budget_s = 1.0, .eval = fake_eval, .ctx = &f};
  CU_ASSERT_EQUAL(adv_halving(&small, &r, err, sizeof err), -1);
  CU_ASSERT(unit_contains(err, "--budget: 1 s cannot pay for one round"));
  CU_ASSERT(unit_contains(err, "about 1.25 s"));
  adv_result_free(&r);
  adv_search none = {.n = N_FAKE, .budget_s = 0, .eval = fake_eval, .ctx = &f};
  CU_ASSERT_EQUAL(adv_halving(&none, &r, err, sizeof err), -1);
  CU_ASSERT(unit_contains(err, "--budget"));
  adv_result_free(&r);
  /* The first candidate takes most of the budget, the second runs out of
   * it: no round to rank, refused (not one candidate ranked alone). */
  adv_search out = {.n = N_FAKE, .budget_s = 0.5, .eval = timed_eval, .ctx = &f};
  CU_ASSERT_EQUAL(adv_halving(&out, &r, err, sizeof err), -1);
  CU_ASSERT(unit_contains(err, "--budget: 0.5 s cannot pay for one round: 2 of its 20"));
  adv_result_free(&r);
}

/* A made-up evaluator whose candidate 0 costs ten times the others. */
static int dear_first_eval(void *ctx, size_t cand, double fraction, double timeout_s,
                           adv_score *out, char *err, size_t errlen) {
  int rc = fake_eval(ctx, cand, fraction, timeout_s, out, err, errlen);
  if (cand == 0) out->cost_s *= 10;
  return rc;
}

static void test_halving_dear_first_candidate(void) {
  /* Round 1 at 1/16 of a 1 s run: candidate 0 takes 0.625 s, the 19
   * others 0.0625 s each, 1.81 s in all. A budget of 3 s pays for it,
   * though the first candidate alone predicts 12.5 s; one of 1.5 s does
   * not, which the first three evaluations show (0.75 s, and the median
   * 0.0625 s for each of the 17 left). */
  double truth[N_FAKE];
  fake_truth(truth);
  fake f = {truth, 0.05, 1.0, 0};
  adv_search s = {.n = N_FAKE, .budget_s = 3.0, .eval = dear_first_eval, .ctx = &f};
  adv_result r;
  char err[512];
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT(r.rounds >= 1);
  CU_ASSERT(r.spent_s <= s.budget_s);
  adv_result_free(&r);
  s.budget_s = 1.5;
  f.calls = 0;
  CU_ASSERT_EQUAL(adv_halving(&s, &r, err, sizeof err), -1);
  CU_ASSERT(unit_contains(err, "the first 3 candidates on 0.0625 of the run took 0.75 s, "
                               "so a round of 20 candidates needs about 1.81 s"));
  CU_ASSERT_EQUAL(f.calls, 3);
  adv_result_free(&r);
}

/* fake_eval, ten times as dear on prefixes longer than 1/32. */
static int dear_long_eval(void *ctx, size_t cand, double fraction, double timeout_s,
                          adv_score *out, char *err, size_t errlen) {
  int rc = fake_eval(ctx, cand, fraction, timeout_s, out, err, errlen);
  if (fraction > 1.0 / 32) out->cost_s *= 10;
  return rc;
}

static void test_halving_shorter_first_round(void) {
  /* Round 1 at 1/16 of a 1 s run would cost 1.25 s, which a budget of 1 s
   * cannot pay. Its first three candidates run first on 1/32, the shortest
   * prefix the evaluator makes (0.09375 s): the round costs 0.625 s there,
   * which the budget pays for, and 1.25 s on 1/16, which it does not; so
   * it goes on on 1/32 from the fourth, nothing run twice. */
  double truth[N_FAKE];
  fake_truth(truth);
  fake f = {truth, 0.05, 1.0, 0};
  adv_search s = {.n = N_FAKE, .budget_s = 1.0, .eval = fake_eval, .ctx = &f,
                  .min_fraction = 1.0 / 32};
  adv_result r;
  char err[512];
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT_EQUAL(r.rounds, 1);
  CU_ASSERT_EQUAL(r.last[BEST].fraction, 1.0 / 32);
  /* Round 1's twenty, and round 2's first, which shows it too dear. */
  CU_ASSERT_EQUAL(f.calls, N_FAKE + 1);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(r.evaluations), N_FAKE + 1);
  CU_ASSERT(fabs(r.spent_s - (0.625 + 0.0625)) < 1e-9);
  CU_ASSERT_EQUAL(r.order[0], BEST);
  adv_result_free(&r);
  /* A budget of 2 s pays for 1/16 as they predict it: the round runs there
   * from the first (three evaluations on 1/32, then twenty on 1/16, and
   * round 2's first). */
  s.budget_s = 2.0;
  f.calls = 0;
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT_EQUAL(f.calls, 3 + N_FAKE + 1);
  CU_ASSERT_EQUAL(r.last[0].fraction, 1.0 / 16);
  size_t at = 0; /* the three on 1/32 are marked as run again */
  for (const cJSON *e = r.evaluations->child; e; e = e->next, at++)
    CU_ASSERT_EQUAL(cJSON_IsTrue(cJSON_GetObjectItem(e, "superseded")), at < 3);
  adv_result_free(&r);
  s.budget_s = 1.0;
  s.min_fraction = 1.0 / 16; /* no shorter prefix than the first */
  CU_ASSERT_EQUAL(adv_halving(&s, &r, err, sizeof err), -1);
  CU_ASSERT(unit_contains(err, "cannot pay for one round"));
  adv_result_free(&r);
  /* Dearer than predicted on 1/16 (ten times): refused there, the round
   * is tried again on a shorter prefix; unless its first candidate already
   * ran on its shortest, where a shorter try would run it again on the
   * same prefix. */
  s.eval = dear_long_eval;
  s.budget_s = 3.0;
  s.min_fraction = 1.0 / 32;
  f.calls = 0;
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT(f.calls >= 3 + 3 + N_FAKE); /* 1/32, 1/16 (refused), 1/32 */
  CU_ASSERT_EQUAL(r.last[BEST].fraction, 1.0 / 32);
  adv_result_free(&r);
  double floors[N_FAKE];
  for (size_t i = 0; i < N_FAKE; i++) floors[i] = i == 0 ? 1.0 / 16 : 1.0 / 32;
  s.floors = floors;
  f.calls = 0;
  CU_ASSERT_EQUAL(adv_halving(&s, &r, err, sizeof err), -1);
  CU_ASSERT(unit_contains(err, "cannot pay for one round"));
  CU_ASSERT_EQUAL(f.calls, 3 + 3);
  adv_result_free(&r);
}

/* A made-up screening evaluator: a tenth of fake_eval's cost, and the
 * order of candidates 0 and 1 the other way round (so that the second
 * round's pairs show the disagreement). */
static int screen_eval(void *ctx, size_t cand, double fraction, double timeout_s,
                       adv_score *out, char *err, size_t errlen) {
  int rc = fake_eval(ctx, cand < 2 ? 1 - cand : cand, fraction, timeout_s, out, err, errlen);
  out->cost_s /= 10;
  out->value *= 2; /* the model's bias: own / screen = 0.5 */
  return rc;
}

/* screen_eval at fake_eval's own cost. */
static int same_cost_screen_eval(void *ctx, size_t cand, double fraction, double timeout_s,
                                 adv_score *out, char *err, size_t errlen) {
  int rc = screen_eval(ctx, cand, fraction, timeout_s, out, err, errlen);
  out->cost_s *= 10;
  return rc;
}

static void test_halving_screens(void) {
  /* 20 candidates: round 1 screens all on 1/16 of the run (the prefix
   * without screening); round 2 simulates its better half again on the same
   * prefix with the search's own evaluator; then 5 on 1/8, 3 on 1/4, 2 on
   * 1/2 and on the whole. */
  double truth[N_FAKE];
  fake_truth(truth);
  truth[0] = 0.81; /* 0 and 1 both pass the screening, in the other order */
  truth[1] = 0.82;
  fake f = {truth, 0, 1.0, 0};
  adv_search s = {.n = N_FAKE, .budget_s = 1000, .eval = fake_eval, .ctx = &f,
                  .screen = screen_eval, .screen_name = "cheap", .own_name = "own"};
  adv_result r;
  char err[512];
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT(r.screened);
  /* Without noise the first leads by more than its estimate moves once two
   * prefixes under the same evaluator measure it: round 3 may end it. */
  CU_ASSERT(r.rounds >= 3);
  CU_ASSERT(r.rounds == 6 || unit_contains(r.stop, "leads"));
  CU_ASSERT(r.rounds < 6 || r.last[BEST].fraction == 1.0);
  CU_ASSERT_EQUAL(r.order[0], BEST);
  size_t n[6] = {0}, promoted = 0;
  for (const cJSON *e = r.evaluations->child; e; e = e->next) {
    int k = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(e, "round"));
    double fr = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "fraction"));
    const char *model = cJSON_GetStringValue(cJSON_GetObjectItem(e, "model"));
    bool screen = cJSON_IsTrue(cJSON_GetObjectItem(e, "screen"));
    CU_ASSERT_FATAL(k >= 0 && k < 6);
    n[k]++;
    CU_ASSERT_STRING_EQUAL(model, k == 0 ? "cheap" : "own");
    CU_ASSERT_EQUAL(screen, k == 0);
    static const double fractions[6] = {0.0625, 0.0625, 0.125, 0.25, 0.5, 1};
    CU_ASSERT_EQUAL(fr, fractions[k]);
    if (k == 1) promoted++;
  }
  CU_ASSERT_EQUAL(n[0], N_FAKE);
  CU_ASSERT_EQUAL(n[1], N_FAKE / 2);
  CU_ASSERT_EQUAL(n[2], 5);
  CU_ASSERT(r.rounds < 6 || n[5] == 2);
  /* The screening's order of the 10 promoted held for every pair but
   * (0, 1); the own values are half the screening's. */
  CU_ASSERT_EQUAL(r.screen_pairs, promoted * (promoted - 1) / 2);
  CU_ASSERT_EQUAL(r.screen_agree, r.screen_pairs - 1);
  CU_ASSERT(fabs(r.screen_ratio - 0.5) < 1e-12);
  adv_result_free(&r);
  /* A budget that pays for the screening (20 x 1/16 x 0.1 s) and for 4 of
   * the 10 it keeps on the same prefix (0.0625 s each): round 2 simulates
   * the best-screened 4 (the first, and 3 more that the rest pays for),
   * which rank before the others. */
  s.budget_s = 0.125 + 0.0625 + 3 * 0.0625 + 0.01;
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT(r.rounds >= 2);
  CU_ASSERT(r.spent_s <= s.budget_s);
  size_t again = 0;
  for (const cJSON *e = r.evaluations->child; e; e = e->next)
    again += cJSON_GetNumberValue(cJSON_GetObjectItem(e, "round")) == 1;
  CU_ASSERT_EQUAL(again, 4);
  CU_ASSERT_EQUAL(r.screen_pairs, 6);
  for (size_t i = 0; i < 4; i++) CU_ASSERT_EQUAL(r.round[r.order[i]], 1);
  CU_ASSERT_EQUAL(r.round[r.order[4]], 0);
  adv_result_free(&r);
  /* A screening as dear as the search's own: what is left after it (0.2 s)
   * pays for 3 of the 10 it keeps (0.0625 s each), not for all (0.625 s):
   * round 2 runs those. */
  s.screen = same_cost_screen_eval;
  s.budget_s = N_FAKE * 0.0625 + 0.2;
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  again = 0;
  for (const cJSON *e = r.evaluations->child; e; e = e->next)
    again += cJSON_GetNumberValue(cJSON_GetObjectItem(e, "round")) == 1;
  CU_ASSERT_EQUAL(again, 3);
  adv_result_free(&r);
  s.screen = screen_eval;
  s.budget_s = 1000;
  /* Too few candidates to screen (the first prefix would be the whole
   * run): the search's own evaluator only. */
  s.n = 4;
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT(!r.screened);
  for (const cJSON *e = r.evaluations->child; e; e = e->next)
    CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(e, "model")), "own");
  adv_result_free(&r);
}

/* fake_eval, with candidates from 3 on three times as dear. */
static int dearer_later_eval(void *ctx, size_t cand, double fraction, double timeout_s,
                             adv_score *out, char *err, size_t errlen) {
  int rc = fake_eval(ctx, cand, fraction, timeout_s, out, err, errlen);
  if (cand >= 3) out->cost_s *= 3;
  return rc;
}

static void test_halving_partial_first_round(void) {
  /* The first three evaluations (1/16 of a 1 s run: 0.0625 s each) predict
   * a round of 1.25 s, which 2 s pay for; the others cost 0.1875 s each, so
   * the round cannot end within the budget. It runs while the budget pays
   * for another evaluation at their mean so far: after 12 (1.875 s spent,
   * 0.156 s on average) it stops, its twelve ranked, the other eight not
   * simulated. */
  double truth[N_FAKE];
  fake_truth(truth);
  fake f = {truth, 0.05, 1.0, 0};
  adv_search s = {.n = N_FAKE, .budget_s = 2.0, .eval = dearer_later_eval, .ctx = &f,
                  .min_fraction = 0};
  adv_result r;
  char err[512];
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT_EQUAL(r.rounds, 1);
  CU_ASSERT(r.spent_s <= s.budget_s);
  CU_ASSERT(unit_contains(r.stop, "ended after 12 of its 20 candidates"));
  CU_ASSERT_EQUAL(cJSON_GetArraySize(r.evaluations), 12);
  CU_ASSERT(fabs(r.spent_s - 1.875) < 1e-9);
  CU_ASSERT_EQUAL(r.order[0], BEST);
  for (size_t c = 0; c < N_FAKE; c++) CU_ASSERT_EQUAL(r.round[c], c < 12 ? 0 : -1);
  adv_result_free(&r);
}

static void test_halving_partial_second_round(void) {
  /* The screening (20 x 0.00625 s) keeps 10; BEST, simulated again first
   * (0.0625 s), predicts the others at 0.0625 s each, and the budget left
   * pays for 6 of them; but they cost 0.3125 s: the second takes 0.3125 s,
   * the third runs out of budget. The round keeps BEST's and the second's
   * estimates; the third and the others keep their screening's. */
  double truth[N_FAKE];
  fake_truth(truth);
  fake f = {truth, 0, 1.0, 0};
  adv_search s = {.n = N_FAKE, .budget_s = 0.125 + 0.0625 + 0.3125 + 0.1, .eval = timed_eval,
                  .ctx = &f, .screen = screen_eval};
  adv_result r;
  char err[512];
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT_EQUAL(r.rounds, 2);
  CU_ASSERT(unit_contains(r.stop, "ran out during round 2"));
  CU_ASSERT_EQUAL(r.order[0], BEST);
  size_t again = 0, screened_only = 0;
  for (size_t c = 0; c < N_FAKE; c++) {
    again += r.round[c] == 1;
    screened_only += r.round[c] == 0;
  }
  CU_ASSERT_EQUAL(again, 2);
  CU_ASSERT_EQUAL(screened_only, N_FAKE - 2);
  CU_ASSERT_EQUAL(r.round[r.order[0]], 1);
  CU_ASSERT_EQUAL(r.round[r.order[1]], 1);
  adv_result_free(&r);
}

/* A made-up evaluator that fails on candidate 3. */
static int failing_eval(void *ctx, size_t cand, double fraction, double timeout_s,
                        adv_score *out, char *err, size_t errlen) {
  if (cand == 3) {
    snprintf(err, errlen, "made-up failure of %zu", cand);
    *out = (adv_score){.cost_s = 0.01};
    return -1;
  }
  int rc = fake_eval(ctx, cand, fraction, timeout_s, out, err, errlen);
  out->detail = cJSON_CreateObject();
  cJSON_AddNumberToObject(out->detail, "time_s", out->value / 3);
  return rc;
}

/* Each evaluation record's round, candidate, value, metrics and error. */
static char *evaluations_of(const adv_result *r) {
  exp_buf b = {0};
  for (const cJSON *e = r->evaluations->child; e; e = e->next) {
    char *m = cJSON_PrintUnformatted(cJSON_GetObjectItem(e, "metrics"));
    const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(e, "error"));
    exp_buf_printf(&b, "%g %g %.17g %s %s\n",
                   cJSON_GetNumberValue(cJSON_GetObjectItem(e, "round")),
                   cJSON_GetNumberValue(cJSON_GetObjectItem(e, "candidate")),
                   cJSON_GetNumberValue(cJSON_GetObjectItem(e, "value")), m ? m : "-",
                   why ? why : "-");
    free(m);
  }
  return exp_buf_take(&b);
}

static void test_halving_jobs(void) {
  /* Evaluated 2 or 3 at a time in forked processes: the same evaluations,
   * recorded in the same order with the same values (exactly), metrics and
   * errors, and the same ranking as one at a time; each wave charged its
   * longest evaluation, so less of the budget. */
  double truth[N_FAKE];
  fake_truth(truth);
  fake f = {truth, 0.05, 1.0, 0};
  adv_search s = {.n = N_FAKE, .budget_s = 1000, .eval = failing_eval, .ctx = &f};
  adv_result one, many;
  char err[512];
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &one, err, sizeof err), 0);
  char *e1 = evaluations_of(&one);
  CU_ASSERT(unit_contains(e1, "made-up failure of 3"));
  for (size_t jobs = 2; jobs <= 3; jobs++) {
    s.jobs = jobs;
    CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &many, err, sizeof err), 0);
    char *e2 = evaluations_of(&many);
    CU_ASSERT_STRING_EQUAL(e1, e2);
    CU_ASSERT_EQUAL(many.rounds, one.rounds);
    CU_ASSERT_EQUAL(memcmp(many.order, one.order, N_FAKE * sizeof *one.order), 0);
    CU_ASSERT_EQUAL(many.order[0], BEST);
    CU_ASSERT(many.spent_s < one.spent_s);
    CU_ASSERT(many.spent_s >= one.spent_s / (double)jobs - 1e-9);
    free(e2);
    adv_result_free(&many);
  }
  /* Round 1 at 1/16 of a 1 s run, in 10 waves of 2: 0.625 s, which 0.5 s
   * cannot pay; one at a time, it would take 1.25 s. */
  s.jobs = 2;
  s.budget_s = 0.5;
  s.eval = fake_eval;
  CU_ASSERT_EQUAL(adv_halving(&s, &many, err, sizeof err), -1);
  CU_ASSERT(unit_contains(err, "20 candidates, 2 at a time, needs about 0.625 s"));
  adv_result_free(&many);
  s.budget_s = 1.0; /* pays for it with 2 at a time, not with 1 */
  CU_ASSERT_EQUAL(adv_halving(&s, &many, err, sizeof err), 0);
  CU_ASSERT(many.spent_s <= s.budget_s);
  adv_result_free(&many);
  free(e1);
  adv_result_free(&one);
}

/* ---------------------------------------------------------- the candidates */

static void test_candidate_set(void) {
  /* The spec's sweep over policy gives candidates; over workload.skew it
   * does not (the spec's skew is kept); a policy written with its defaults
   * is the same candidate as one without them. */
  cJSON *spec = unit_json(
      "{'name': 'c', 'seed': 3, 'cluster': {'nodes': 4, 'workers_per_node': 2}, "
      "'workload': {'type': 'zipf', 'keys': 4000, 'skew': 0.5, 'steps_per_worker': 200}, "
      "'policy': {'type': 'static'}, 'sweep': {'workload.skew': [0, 1], 'policy': "
      "[{'type': 'relocate', 'partition': 'hash', 'lookahead': 100}, {'type': 'adaptive'}]}}");
  adv_candidates c;
  exp_errors e;
  exp_errors_init(&e);
  CU_ASSERT_EQUAL_FATAL(adv_candidates_build(spec, "c.json", ".", NULL, &c, &e), 0);
  size_t from_spec = 0, relocate100 = 0, replicate = 0;
  for (size_t i = 0; i < c.count; i++) {
    const cJSON *p = cJSON_GetObjectItem(c.items[i].spec, "policy");
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(p, "type"));
    CU_ASSERT_EQUAL(cJSON_GetNumberValue(exp_path_get(c.items[i].spec, "workload.skew")), 0.5);
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(c.items[i].spec, "sweep"));
    if (strcmp(c.items[i].origin, "spec") == 0) from_spec++;
    if (strcmp(type, "relocate") == 0 &&
        cJSON_GetNumberValue(cJSON_GetObjectItem(p, "lookahead")) == 100 &&
        cJSON_GetNumberValue(exp_path_get(c.items[i].spec, "cluster.workers_per_node")) == 2)
      relocate100++;
    if (strcmp(type, "replicate") == 0) replicate++;
  }
  CU_ASSERT_EQUAL(from_spec, 2);
  CU_ASSERT_EQUAL(relocate100, 1);
  CU_ASSERT(replicate >= 3); /* hot-key counts x 3 sync rates */
  CU_ASSERT_EQUAL(e.count, 0);
  adv_candidates_free(&c);
  exp_errors_free(&e);
  cJSON_Delete(spec);
}

static void test_hot_key_counts(void) {
  /* Skewed accesses need fewer hot keys for the same share than uniform. */
  cJSON *skewed = unit_json("{'type': 'zipf', 'keys': 100000, 'skew': 1.2, "
                            "'steps_per_worker': 1000}");
  cJSON *uniform = unit_json("{'type': 'zipf', 'keys': 100000, 'skew': 0, "
                             "'steps_per_worker': 1000}");
  uint64_t s[3], u[3];
  size_t ns = adv_hot_key_counts(skewed, 4, 1, NULL, s);
  size_t nu = adv_hot_key_counts(uniform, 4, 1, NULL, u);
  CU_ASSERT_EQUAL_FATAL(ns, 3);
  CU_ASSERT_FATAL(nu >= 1);
  CU_ASSERT(s[0] < s[1] && s[1] < s[2]);
  CU_ASSERT(s[0] * 10 < u[0]);
  cJSON_Delete(skewed);
  cJSON_Delete(uniform);
}

/* ------------------------------------------------------------ the prefix */

static void test_prefix(void) {
  cJSON *spec = unit_json("{'workload': {'type': 'zipf', 'steps_per_worker': 1000}}");
  double got;
  cJSON *cut = adv_prefix(spec, 0.25, &got);
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(exp_path_get(cut, "workload.steps_per_worker")), 250);
  CU_ASSERT_EQUAL(got, 0.25);
  cJSON_Delete(cut);
  cut = adv_prefix(spec, 0.001, &got); /* never below EXP_ADVISE_MIN_STEPS */
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(exp_path_get(cut, "workload.steps_per_worker")),
                  EXP_ADVISE_MIN_STEPS);
  CU_ASSERT_EQUAL(got, EXP_ADVISE_MIN_STEPS / 1000.0);
  cJSON_Delete(cut);
  /* The shortest prefix of a set: its candidate with the most steps'. */
  adv_candidate two[2] = {{"a", spec, "test", false, false},
                          {"b", unit_json("{'workload': {'steps_per_worker': 500}}"), "test", false,
                           false}};
  adv_candidates set = {.items = two, .count = 2};
  CU_ASSERT_EQUAL(adv_min_fraction(&set), EXP_ADVISE_MIN_STEPS / 1000.0);
  cJSON_Delete(two[1].spec);
  cJSON_Delete(spec);
  spec = unit_json("{'workload': {'type': 'mf', 'epochs': 8}}");
  cut = adv_prefix(spec, 0.25, &got);
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(exp_path_get(cut, "workload.epochs")), 2);
  CU_ASSERT_EQUAL(got, 0.25);
  cJSON_Delete(cut);
  cut = adv_prefix(spec, 0.01, &got); /* an mf's shortest: one epoch */
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(exp_path_get(cut, "workload.epochs")), 1);
  CU_ASSERT_EQUAL(got, 0.125);
  cJSON_Delete(cut);
  cJSON_Delete(spec);
  /* mf, kge, w2v: the steps per worker of stop_after (candidates.c gives
   * each the whole run's) cut, below one epoch too; short of the first
   * epoch's end, without math or target. 800 steps in 8 epochs. */
  spec = unit_json("{'workload': {'type': 'mf', 'epochs': 8, 'stop_after': '800 steps', "
                   "'target_quality': 0.8}}");
  cut = adv_prefix(spec, 1.0 / 16, &got);
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(exp_path_get(cut, "workload.stop_after")),
                         "50 steps");
  CU_ASSERT_EQUAL(got, 50.0 / 800);
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(exp_path_get(cut, "workload.math")), "none");
  CU_ASSERT_PTR_NULL(exp_path_get(cut, "workload.target_quality"));
  cJSON_Delete(cut);
  cut = adv_prefix(spec, 0.25, &got); /* two epochs: evaluated, with math */
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(exp_path_get(cut, "workload.stop_after")),
                         "200 steps");
  CU_ASSERT_EQUAL(got, 0.25);
  CU_ASSERT_PTR_NULL(exp_path_get(cut, "workload.math"));
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(exp_path_get(cut, "workload.target_quality")), 0.8);
  cJSON_Delete(cut);
  cut = adv_prefix(spec, 0.001, &got); /* never below EXP_ADVISE_MIN_STEPS */
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(exp_path_get(cut, "workload.stop_after")),
                         "10 steps");
  CU_ASSERT_EQUAL(got, EXP_ADVISE_MIN_STEPS / 800.0);
  cJSON_Delete(cut);
  cJSON_Delete(spec);
  /* A dnn without math: below one epoch, one epoch of fewer examples. 16
   * workers, 16384 examples of batch 32: 32 steps an epoch, 128 in all. */
  spec = unit_json("{'cluster': {'nodes': 24, 'worker_nodes': 16, 'workers_per_node': 1}, "
                   "'workload': {'type': 'dnn', 'batch': 32, 'examples': 16384, "
                   "'epochs': 4, 'math': 'none'}}");
  cut = adv_prefix(spec, 1.0 / 8, &got);
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(exp_path_get(cut, "workload.epochs")), 1);
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(exp_path_get(cut, "workload.examples")), 16 * 32 * 16);
  CU_ASSERT_EQUAL(got, 16.0 / 128);
  cJSON_Delete(cut);
  cut = adv_prefix(spec, 0.001, &got); /* never below EXP_ADVISE_MIN_STEPS */
  CU_ASSERT_EQUAL(got, EXP_ADVISE_MIN_STEPS / 128.0);
  cJSON_Delete(cut);
  cut = adv_prefix(spec, 0.5, &got); /* whole epochs where they do */
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(exp_path_get(cut, "workload.epochs")), 2);
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(exp_path_get(cut, "workload.examples")), 16384);
  cJSON_Delete(cut);
  cJSON_Delete(spec);
  /* With real math, fewer examples would be other data: whole epochs only. */
  spec = unit_json("{'workload': {'type': 'dnn', 'examples': 16384, 'epochs': 4}}");
  cut = adv_prefix(spec, 1.0 / 8, &got);
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(exp_path_get(cut, "workload.examples")), 16384);
  CU_ASSERT_EQUAL(got, 0.25);
  cJSON_Delete(cut);
  cJSON_Delete(spec);
}

/* ------------------------------------------------------------- the command */

/* Every access of a worker falls in its own node's block of keys
 * (locality 1), so range partitioning serves every access locally: nothing
 * can beat it but more of the same (more workers per node). */
#define KNOWN                                                                           \
  "{'name': 'known', 'seed': 3, 'cluster': {'nodes': 4, 'workers_per_node': 1, "     \
  "'network': {'bandwidth': '1Gbps', 'latency': '100us'}}, "                          \
  "'workload': {'type': 'zipf', 'keys': 4000, 'skew': 0.5, 'value_length': 10, "      \
  "'reads_per_step': 5, 'writes_per_step': 5, 'steps_per_worker': 200, "              \
  "'locality': 1.0}, 'policy': {'type': 'static'}}"

/* Writes text (single-quoted JSON) as dir/name; returns the path. */
static char *put_json(const char *dir, const char *name, const char *text) {
  cJSON *j = unit_json(text);
  char *s = cJSON_Print(j);
  unit_write(dir, name, s);
  free(s);
  cJSON_Delete(j);
  char *path = malloc(strlen(dir) + strlen(name) + 2);
  sprintf(path, "%s/%s", dir, name);
  return path;
}

/* Runs exp_advise; its log (caller frees) in *log. */
static uint32_t advise_jobs; /* --jobs of the next advise (0: the cores) */
static const char *advise_screen; /* --screen of the next advise (NULL: the default) */

static int advise_confirm(const char *spec, const char *out, double budget,
                          const char *cands, const char *metric, uint32_t confirm,
                          char **log) {
  size_t len;
  FILE *f = open_memstream(log, &len);
  FILE *sink = fopen("/dev/null", "w");
  exp_advise_options o;
  exp_advise_options_default(&o);
  o.out_dir = out;
  o.budget_s = budget;
  o.candidates = cands;
  o.metric = metric;
  o.confirm = confirm;
  o.jobs = advise_jobs;
  o.screen = advise_screen;
  o.quiet = true;
  o.gnuplot = "/nonexistent/gnuplot";
  o.out = sink;
  o.log = f;
  int rc = exp_advise(spec, NULL, 0, &o);
  fclose(f);
  fclose(sink);
  return rc;
}

static int advise(const char *spec, const char *out, double budget, const char *cands,
                  const char *metric, char **log) {
  return advise_confirm(spec, out, budget, cands, metric, 0, log);
}

/* The rank records of DIR/advise.jsonl, as one string of labels and values. */
static char *ranking_of(const char *dir) {
  char *text = unit_slurp(dir, "advise.jsonl");
  exp_buf b = {0};
  for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
    cJSON *r = cJSON_Parse(line);
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(r, "kind"));
    if (kind && strcmp(kind, "rank") == 0)
      exp_buf_printf(&b, "%s=%.17g\n", cJSON_GetStringValue(cJSON_GetObjectItem(r, "label")),
                     cJSON_GetNumberValue(cJSON_GetObjectItem(r, "value")));
    cJSON_Delete(r);
  }
  free(text);
  return exp_buf_take(&b);
}

/* The records of kind `kind` in DIR/advise.jsonl (caller deletes). */
static cJSON *records_of_kind(const char *dir, const char *kind) {
  char *text = unit_slurp(dir, "advise.jsonl");
  cJSON *list = cJSON_CreateArray();
  for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
    cJSON *r = cJSON_Parse(line);
    const char *k = cJSON_GetStringValue(cJSON_GetObjectItem(r, "kind"));
    if (k && strcmp(k, kind) == 0) cJSON_AddItemToArray(list, r);
    else cJSON_Delete(r);
  }
  free(text);
  return list;
}

/* The search in dir screened its first round under latency_bandwidth, and
 * simulated the better half again on the same prefix under the spec's
 * CM02, which the winner's estimate comes from. */
static void check_screening(const char *dir) {
  cJSON *sum = records_of_kind(dir, "advise"), *evals = records_of_kind(dir, "evaluation");
  cJSON *ranks = records_of_kind(dir, "rank");
  const cJSON *s = cJSON_GetArrayItem(sum, 0);
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(s, "model")), "CM02");
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(s, "screen_model")),
                         "latency_bandwidth");
  size_t again = 0, moved = 0;
  for (const cJSON *e = evals->child; e; e = e->next) {
    int k = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(e, "round"));
    const char *model = cJSON_GetStringValue(cJSON_GetObjectItem(e, "model"));
    CU_ASSERT_STRING_EQUAL(model, k == 0 ? "latency_bandwidth" : "CM02");
    CU_ASSERT_EQUAL(cJSON_IsTrue(cJSON_GetObjectItem(e, "screen")), k == 0);
    if (k != 1) continue;
    double c = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "candidate"));
    for (const cJSON *f = evals->child; f; f = f->next) /* its screening, same prefix */
      if (cJSON_GetNumberValue(cJSON_GetObjectItem(f, "round")) == 0 &&
          cJSON_GetNumberValue(cJSON_GetObjectItem(f, "candidate")) == c &&
          cJSON_GetNumberValue(cJSON_GetObjectItem(f, "prefix")) ==
              cJSON_GetNumberValue(cJSON_GetObjectItem(e, "prefix"))) {
        again++;
        moved += cJSON_GetNumberValue(cJSON_GetObjectItem(f, "value")) !=
                 cJSON_GetNumberValue(cJSON_GetObjectItem(e, "value"));
      }
  }
  CU_ASSERT(again >= 2);
  CU_ASSERT(moved >= 1); /* simulated again, not copied */
  CU_ASSERT(cJSON_GetNumberValue(cJSON_GetObjectItem(s, "screen_pairs")) ==
            again * (again - 1) / 2);
  const cJSON *first = cJSON_GetArrayItem(ranks, 0);
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(first, "model")), "CM02");
  CU_ASSERT(!cJSON_IsTrue(cJSON_GetObjectItem(first, "screen")));
  cJSON_Delete(sum);
  cJSON_Delete(evals);
  cJSON_Delete(ranks);
}

static void test_known_winner(void) {
  char *dir = unit_temp_dir(), *log = NULL;
  char *spec = put_json(dir, "known.json", KNOWN);
  char out1[512], out2[512];
  snprintf(out1, sizeof out1, "%s/a1", dir);
  snprintf(out2, sizeof out2, "%s/a2", dir);
  advise_jobs = 2;
  int rc = advise(spec, out1, 600, NULL, NULL, &log);
  if (rc != EXP_EXIT_PLOTS) fprintf(stderr, "\n%s\n", log);
  CU_ASSERT_EQUAL(rc, EXP_EXIT_PLOTS); /* no gnuplot here: every file but the drawing */
  free(log);
  char *w = unit_slurp(out1, "winner.json");
  cJSON *winner = w ? cJSON_Parse(w) : NULL;
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(exp_path_get(winner, "policy.type")), "static");
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(exp_path_get(winner, "policy.partition")),
                         "range");
  check_screening(out1);
  /* The same seed, the same search, whatever the jobs. */
  advise_jobs = 1;
  advise(spec, out2, 600, NULL, NULL, &log);
  advise_jobs = 0;
  free(log);
  char *r1 = ranking_of(out1), *r2 = ranking_of(out2);
  CU_ASSERT_PTR_NOT_NULL(r1);
  CU_ASSERT_STRING_EQUAL(r1, r2);
  /* winner.json is a spec `pslab run` takes as it is. */
  char *wpath = malloc(strlen(out1) + 16);
  sprintf(wpath, "%s/winner.json", out1);
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = exp_spec_load(wpath, NULL, 0, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  exp_runner_options o;
  exp_runner_options_default(&o);
  char run_dir[600];
  snprintf(run_dir, sizeof run_dir, "%s/run", dir);
  o.out_dir = run_dir;
  o.quiet = true;
  o.gnuplot = "/nonexistent/gnuplot";
  o.out = o.log = fopen("/dev/null", "w");
  CU_ASSERT_EQUAL(exp_run_experiment(s, &o), EXP_EXIT_OK);
  fclose(o.out);
  exp_spec_free(s);
  exp_errors_free(&e);
  free(wpath);
  free(r1);
  free(r2);
  cJSON_Delete(winner);
  free(w);
  free(spec);
  unit_remove_tree(dir);
  free(dir);
}

static void test_screen_own(void) {
  /* --screen own: every round under the spec's model. */
  char *dir = unit_temp_dir(), *log = NULL;
  char *spec = put_json(dir, "known.json", KNOWN);
  char out[512];
  snprintf(out, sizeof out, "%s/a", dir);
  advise_screen = "own";
  CU_ASSERT_EQUAL(advise(spec, out, 600, NULL, NULL, &log), EXP_EXIT_PLOTS);
  advise_screen = NULL;
  free(log);
  cJSON *sum = records_of_kind(out, "advise"), *evals = records_of_kind(out, "evaluation");
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(cJSON_GetArrayItem(sum, 0), "screen_model"));
  CU_ASSERT(cJSON_GetArraySize(evals) > 0);
  for (const cJSON *e = evals->child; e; e = e->next) {
    CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(e, "model")), "CM02");
    CU_ASSERT(!cJSON_IsTrue(cJSON_GetObjectItem(e, "screen")));
  }
  cJSON_Delete(sum);
  cJSON_Delete(evals);
  free(spec);
  unit_remove_tree(dir);
  free(dir);
}

static void test_trace_steps(void) {
  /* A trace that runs its longest sequence gets that count as
   * steps_per_worker, so that a prefix can cut it: worker 0 records 3
   * clocks, worker 1 one. */
  char *dir = unit_temp_dir();
  unit_write(dir, "t.trace", "pslab-trace 1\ntable 0 100 4\nworkers 2\n"
                             "0 0 read 1 2\n0 1 read 3\n0 2 write 4\n1 0 read 5\n");
  cJSON *spec = unit_json("{'name': 'tr', 'cluster': {'nodes': 2, 'workers_per_node': 1}, "
                          "'workload': {'type': 'trace', 'file': 't.trace'}, "
                          "'policy': {'type': 'static'}}");
  adv_candidates c;
  exp_errors e;
  exp_errors_init(&e);
  CU_ASSERT_EQUAL_FATAL(adv_candidates_build(spec, "tr.json", dir, NULL, &c, &e), 0);
  CU_ASSERT(c.count > 1);
  for (size_t i = 0; i < c.count; i++)
    CU_ASSERT_EQUAL(
        cJSON_GetNumberValue(exp_path_get(c.items[i].spec, "workload.steps_per_worker")), 3);
  adv_candidates_free(&c);
  exp_errors_free(&e);
  cJSON_Delete(spec);
  unit_remove_tree(dir);
  free(dir);
}

/* Which candidates trade quality: all but static or relocate with the
 * spec's consistency, nodes and workers per node. */
static void test_trades_quality(void) {
  cJSON *spec = unit_json("{'cluster': {'nodes': 2, 'workers_per_node': 2}, "
                          "'policy': {'type': 'static'}}");
  static const struct {
    const char *cand;
    bool trades;
  } cases[] = {
      {"{'cluster': {'nodes': 2, 'workers_per_node': 2}, 'policy': {'type': 'static', "
       "'partition': 'range'}}", false},
      {"{'cluster': {'nodes': 2, 'workers_per_node': 2}, 'policy': {'type': 'relocate', "
       "'lookahead': 10}}", false},
      {"{'cluster': {'nodes': 2, 'workers_per_node': 4}, 'policy': {'type': 'static'}}", true},
      {"{'cluster': {'nodes': 2, 'workers_per_node': 2}, 'policy': {'type': 'static'}, "
       "'consistency': {'model': 'ssp', 'staleness': 4}}", true},
      {"{'cluster': {'nodes': 2, 'workers_per_node': 2}, 'policy': {'type': 'replicate', "
       "'hot_keys': 10}}", true},
      {"{'cluster': {'nodes': 2, 'workers_per_node': 2}, 'policy': {'type': 'nups', "
       "'hot_keys': 10, 'sampling': {'scheme': 'local'}}}", true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cJSON *c = unit_json(cases[i].cand);
    CU_ASSERT_EQUAL(adv_trades_quality(c, spec), cases[i].trades);
    cJSON_Delete(c);
  }
  cJSON_Delete(spec);
}

/* An mf spec is searched below one epoch: every candidate gets its steps
 * per worker as stop_after, and a prefix runs the share asked of them
 * (10 steps of a worker's 90: 40 steps of its 4 workers). Ranked by time
 * to quality on that prefix, which reaches no target: the candidate that
 * trades no quality is assumed to reach it by the run's end (its estimate
 * the whole run's time), and the one that trades it (staleness) is a
 * bound, ranked after it, never by its time alone. */
static void test_sub_epoch_prefix(void) {
  char *dir = unit_temp_dir();
  cJSON *spec = unit_json(
      "{'name': 'mfs', 'seed': 3, 'cluster': {'nodes': 2, 'workers_per_node': 2}, "
      "'workload': {'type': 'mf', 'rows': 300, 'cols': 200, 'nnz': 12000, 'rank': 5, "
      "'lr': 0.05, 'batch': 30, 'epochs': 3, 'target_quality': 0.01}, "
      "'policy': {'type': 'static'}}");
  unit_write(dir, "c.json", "[{\"type\": \"static\"}, {\"policy\": {\"type\": "
             "\"static\"}, \"consistency\": {\"model\": \"ssp\", \"staleness\": 4}}]");
  char cands[600];
  snprintf(cands, sizeof cands, "%s/c.json", dir);
  adv_candidates c;
  exp_errors e;
  exp_errors_init(&e);
  CU_ASSERT_EQUAL_FATAL(adv_candidates_build(spec, "mfs.json", dir, cands, &c, &e), 0);
  CU_ASSERT_EQUAL_FATAL(c.count, 2);
  for (size_t i = 0; i < 2; i++) /* 10800 training ratings over 4 workers, batch 30 */
    CU_ASSERT_STRING_EQUAL(
        cJSON_GetStringValue(exp_path_get(c.items[i].spec, "workload.stop_after")), "270 steps");
  CU_ASSERT_FALSE(c.items[0].trades_quality);
  CU_ASSERT_TRUE(c.items[1].trades_quality);
  adv_sim_ctx x = {&c, "mfs.json", dir,
                   {.name = "time_to_quality_s", .to_quality = true, .target = 0.01}, NULL};
  adv_score keeps = {0}, trades = {0};
  char err[512];
  CU_ASSERT_EQUAL_FATAL(adv_sim_eval(&x, 0, 10.0 / 270, 60, &keeps, err, sizeof err), 0);
  CU_ASSERT_EQUAL_FATAL(adv_sim_eval(&x, 1, 10.0 / 270, 60, &trades, err, sizeof err), 0);
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(keeps.detail, "steps")), 40);
  CU_ASSERT_EQUAL(keeps.fraction, 10.0 / 270);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(keeps.detail, "quality")); /* without math */
  CU_ASSERT(keeps.assumed && !keeps.bound);
  /* the whole run's time, scaled, and from the prefix's second half beside it */
  double t = cJSON_GetNumberValue(cJSON_GetObjectItem(keeps.detail, "time_s"));
  double half = cJSON_GetNumberValue(cJSON_GetObjectItem(keeps.detail, "half_time_s"));
  double last = cJSON_GetNumberValue(cJSON_GetObjectItem(keeps.detail, "last_step_s"));
  CU_ASSERT(half > 0 && last > half && t >= last);
  CU_ASSERT_EQUAL(keeps.est, ADV_EST_SCALED);
  CU_ASSERT_DOUBLE_EQUAL(keeps.value, t * 27, 1e-12 * t);
  CU_ASSERT_DOUBLE_EQUAL(keeps.half, t + (last - half) * 26 * 2, 1e-12 * t);
  CU_ASSERT(trades.bound && !trades.assumed);
  CU_ASSERT(adv_score_better(&keeps, &trades));
  trades.value = keeps.value / 10; /* however fast */
  CU_ASSERT(adv_score_better(&keeps, &trades));
  cJSON_Delete(keeps.detail);
  cJSON_Delete(trades.detail);
  adv_candidates_free(&c);
  exp_errors_free(&e);
  cJSON_Delete(spec);
  unit_remove_tree(dir);
  free(dir);
}

static void test_quality_ranks_by_time_to_quality(void) {
  /* Matrix factorization measures a quality, and staleness trades it for
   * speed: ranked by time to quality, the target the static run's final
   * quality. */
  char *dir = unit_temp_dir(), *log = NULL;
  char *spec = put_json(dir, "mf.json",
      "{'name': 'mfq', 'seed': 3, 'cluster': {'nodes': 2, 'workers_per_node': 2}, "
      "'workload': {'type': 'mf', 'rows': 300, 'cols': 200, 'nnz': 12000, 'rank': 5, "
      "'lr': 0.05, 'epochs': 4, 'math': 'real'}, 'policy': {'type': 'static'}}");
  unit_write(dir, "c.json", "[{\"type\": \"static\"}, {\"policy\": {\"type\": "
             "\"static\"}, \"consistency\": {\"model\": \"ssp\", \"staleness\": 4}}]");
  char cands[600], out[600];
  snprintf(cands, sizeof cands, "%s/c.json", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  int rc = advise(spec, out, 300, cands, "time_s", &log);
  CU_ASSERT_EQUAL(rc, EXP_EXIT_PLOTS);
  CU_ASSERT(unit_contains(log, "--metric time_s not used"));
  char *jsonl = unit_slurp(out, "advise.jsonl");
  CU_ASSERT(unit_contains(jsonl, "\"metric\":\"time_to_quality_s\""));
  CU_ASSERT(unit_contains(jsonl, "\"target_from\":\"the best final quality of the static"));
  CU_ASSERT(unit_contains(jsonl, "\"label\":\"static, ssp staleness=4\""));
  CU_ASSERT(unit_contains(jsonl, "\"stop_after\":\"")); /* the candidates' */
  free(jsonl);
  char *winner = unit_slurp(out, "winner.json"); /* the spec's run, as given */
  CU_ASSERT_PTR_NOT_NULL(winner);
  CU_ASSERT(winner && !unit_contains(winner, "stop_after"));
  free(winner);
  free(log);
  free(spec);
  unit_remove_tree(dir);
  free(dir);
}

static void test_fidelity_error(void) {
  /* --fidelity: the median |error| of time_s over a validation's points is
   * the error the margin is held to; a directory without them is refused. */
  char *dir = unit_temp_dir(), *log = NULL;
  char *spec = put_json(dir, "known.json", KNOWN);
  unit_write(dir, "validate.jsonl",
             "{\"kind\":\"point\",\"metric\":\"time_s\",\"error\":0.1}\n"
             "{\"kind\":\"point\",\"metric\":\"time_s\",\"error\":-0.2}\n"
             "{\"kind\":\"point\",\"metric\":\"bytes\",\"error\":0.9}\n"
             "{\"kind\":\"run\",\"metric\":\"time_s\",\"error\":0.9}\n"
             "{\"kind\":\"point\",\"metric\":\"time_s\",\"error\":0.3}\n");
  char out[600];
  snprintf(out, sizeof out, "%s/out", dir);
  size_t len;
  FILE *f = open_memstream(&log, &len), *sink = fopen("/dev/null", "w");
  exp_advise_options o;
  exp_advise_options_default(&o);
  o.out_dir = out;
  o.budget_s = 600;
  o.fidelity = dir;
  o.quiet = true;
  o.gnuplot = "/nonexistent/gnuplot";
  o.out = sink;
  o.log = f;
  CU_ASSERT_EQUAL(exp_advise(spec, NULL, 0, &o), EXP_EXIT_PLOTS);
  char *jsonl = unit_slurp(out, "advise.jsonl");
  CU_ASSERT(unit_contains(jsonl, "\"error\":0.2,"));
  CU_ASSERT(unit_contains(jsonl, "median |error| of time_s over 3 sweep points"));
  free(jsonl);
  o.fidelity = out; /* no validate.jsonl there */
  CU_ASSERT_EQUAL(exp_advise(spec, NULL, 0, &o), EXP_EXIT_FAILED);
  fclose(f);
  fclose(sink);
  CU_ASSERT(unit_contains(log, "--fidelity: "));
  CU_ASSERT(unit_contains(log, "with time_s point records, found none"));
  free(log);
  free(spec);
  unit_remove_tree(dir);
  free(dir);
}

static void test_confirm_on_the_real_backend(void) {
  /* The top two run on the real backend; without a profile the comparison
   * says it is uncalibrated. Whether the order held is the machine's to
   * say, not this test's. */
  char *dir = unit_temp_dir(), *log = NULL;
  char *spec = put_json(dir, "tiny.json",
      "{'name': 'tinyc', 'seed': 3, 'cluster': {'nodes': 2, 'workers_per_node': 1}, "
      "'workload': {'type': 'zipf', 'keys': 1000, 'steps_per_worker': 40, 'locality': 1.0}, "
      "'policy': {'type': 'static'}}");
  unit_write(dir, "c.json", "[{\"type\": \"static\", \"partition\": \"hash\"}, "
             "{\"type\": \"static\", \"partition\": \"range\"}]");
  char cands[600], out[600];
  snprintf(cands, sizeof cands, "%s/c.json", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  int rc = advise_confirm(spec, out, 300, cands, NULL, 2, &log);
  if (rc != EXP_EXIT_PLOTS) fprintf(stderr, "\n%s\n", log);
  CU_ASSERT_EQUAL(rc, EXP_EXIT_PLOTS);
  char *jsonl = unit_slurp(out, "advise.jsonl");
  CU_ASSERT(unit_contains(jsonl, "\"kind\":\"confirm\""));
  CU_ASSERT(unit_contains(jsonl, "\"calibrated\":false"));
  CU_ASSERT(unit_contains(jsonl, "uncalibrated"));
  CU_ASSERT(unit_exists(out, "confirm/1/runs.jsonl"));
  CU_ASSERT(unit_exists(out, "confirm/2/runs.jsonl"));
  free(jsonl);
  free(log);
  free(spec);
  unit_remove_tree(dir);
  free(dir);
}

static void expect_advise_error(const char *spec_text, const char *cands_text, double budget,
                                const char *metric, const char *want) {
  char *dir = unit_temp_dir(), *log = NULL;
  char *spec = put_json(dir, "s.json", spec_text);
  char *cands = NULL;
  if (cands_text) {
    unit_write(dir, "c.json", cands_text);
    cands = malloc(strlen(dir) + 8);
    sprintf(cands, "%s/c.json", dir);
  }
  int rc = advise(spec, dir, budget, cands, metric, &log);
  CU_ASSERT_EQUAL(rc, EXP_EXIT_FAILED);
  if (!unit_contains(log, want)) fprintf(stderr, "\nexpected: %s\ngot: %s\n", want, log);
  CU_ASSERT(unit_contains(log, want));
  CU_ASSERT_FALSE(unit_exists(dir, "winner.json"));
  free(log);
  free(cands);
  free(spec);
  unit_remove_tree(dir);
  free(dir);
}

static void test_bad_input(void) {
  expect_advise_error(KNOWN, "[]", 60, NULL, "c.json: expected a non-empty list of candidates");
  expect_advise_error(KNOWN, "[{\"policy\": {\"type\": \"static\"}, "
                      "\"cluster.nodes.x\": 3}]", 60, NULL, "c.json: [0].cluster.nodes.x");
  expect_advise_error(KNOWN, NULL, 0.001, NULL, "--budget: 0.001 s cannot pay for one round");
  expect_advise_error(KNOWN, NULL, 60, "speed", "--metric: expected time_s");
  advise_screen = "fast";
  expect_advise_error(KNOWN, NULL, 60, NULL, "--screen: expected a network model");
  advise_screen = NULL;
  /* A quality to reach and no target: the static runs that would set one
   * cannot finish within the budget. */
  expect_advise_error(
      "{'name': 'mfq', 'cluster': {'nodes': 2, 'workers_per_node': 2}, "
      "'workload': {'type': 'mf', 'rows': 300, 'cols': 200, 'nnz': 12000, 'rank': 5, "
      "'epochs': 4, 'math': 'real'}, 'policy': {'type': 'static'}}",
      "[{\"type\": \"static\"}]", 0.001, NULL, "workload.target_quality: not given");
  /* Workers on nodes that are not servers: no policy that places keys at
   * their workers fits, and these candidates are all such. */
  expect_advise_error(
      "{'name': 'roles', 'cluster': {'nodes': 2, 'servers': 1, 'worker_nodes': 1}, "
      "'workload': {'type': 'zipf', 'keys': 100, 'steps_per_worker': 100}, "
      "'policy': {'type': 'static'}}",
      "[{\"type\": \"relocate\"}, {\"type\": \"nups\", \"hot_keys\": 10}]", 60, NULL,
      "policy: no candidate applies to this workload and cluster");
  expect_advise_error(
      "{'name': 'st', 'cluster': {'nodes': 2, 'workers_per_node': 2}, "
      "'workload': {'type': 'zipf', 'keys': 100, 'steps_per_worker': 100}, "
      "'policy': {'type': 'static'}, 'stages': [{'workers': 2, 'steps': 100}]}",
      NULL, 60, NULL, "stages: advise does not search multi-stage runs");
}

/* ------------------------------------- a prefix's time, from its second half */

/* The metrics of a prefix of `steps` steps per worker (2 workers) of a run
 * that pays `start` once, then `pace` a step, then PACED_END to go quiet,
 * with half_time_s and last_step_s when `half`. */
#define PACED_END 1e-3
static cJSON *paced_metrics(double start, double pace, double steps, bool half) {
  cJSON *m = cJSON_CreateObject();
  cJSON_AddNumberToObject(m, "time_s", start + pace * steps + PACED_END);
  if (half) cJSON_AddNumberToObject(m, "half_time_s", start + pace * steps / 2);
  if (half) cJSON_AddNumberToObject(m, "last_step_s", start + pace * steps);
  cJSON_AddNumberToObject(m, "steps", 2 * steps);
  cJSON_AddNumberToObject(m, "bytes", 1000 + 10 * steps);
  return m;
}

/* A made-up simulator: candidate c pays start[c] once and pace[c] a step
 * over 500 steps per worker; a prefix is at least 10 steps. */
typedef struct {
  const double *start, *pace;
  bool half; /* the runs report half_time_s */
} paced;

static int paced_eval(void *ctx, size_t cand, double fraction, double timeout_s, adv_score *out,
                      char *err, size_t errlen) {
  (void)timeout_s;
  const paced *p = ctx;
  double steps = fmin(500, fmax(10, ceil(500 * fraction)));
  cJSON *m = paced_metrics(p->start[cand], p->pace[cand], steps, p->half);
  adv_metric mt = {.name = "time_s"};
  *out = (adv_score){0};
  int rc = adv_score_of(&mt, false, m, steps / 500, 2, out, err, errlen);
  out->cost_s = fraction;
  cJSON_Delete(m);
  return rc;
}

/* Six candidates: the first pays 100 ms once and 0.1 ms a step (151 ms
 * whole, with the millisecond to go quiet), the others nothing once and
 * 0.32 to 0.55 ms a step (161 to 276 ms); a budget that pays for one
 * round (on 0.25 of the run: 125 steps). */
static const double paced_start[6] = {0.1, 0, 0, 0, 0, 0};
static const double paced_pace[6] = {1e-4, 3.2e-4, 3.5e-4, 4e-4, 5e-4, 5.5e-4};

/* The evaluation record of candidate c in r (the last). */
static const cJSON *record_of(const adv_result *r, size_t c) {
  const cJSON *found = NULL;
  for (const cJSON *e = r->evaluations->child; e; e = e->next)
    if (cJSON_GetNumberValue(cJSON_GetObjectItem(e, "candidate")) == (double)c) found = e;
  return found;
}

static char *printed(const adv_result *r, size_t n);

static void test_second_half_beside_scaling(void) {
  /* 16 steps of 500: the prefix's time over its share ranks, though it
   * counts the first candidate's start-up (and both ends) 31 times more
   * and ranks it after one of 0.5 ms a step; its second half's estimate,
   * the whole runs' times exactly here, is kept beside it. */
  adv_metric mt = {.name = "time_s"};
  double got = 16.0 / 500;
  adv_score a = {0}, b = {0};
  cJSON *ma = paced_metrics(0.1, 1e-4, 16, true), *mb = paced_metrics(0, 5e-4, 16, true);
  char err[256];
  CU_ASSERT_EQUAL(adv_score_of(&mt, false, ma, got, 2, &a, err, sizeof err), 0);
  CU_ASSERT_EQUAL(adv_score_of(&mt, false, mb, got, 2, &b, err, sizeof err), 0);
  CU_ASSERT_EQUAL(a.value, a.raw / got); /* scaled: 3.2 s against 281 ms */
  CU_ASSERT_EQUAL(b.value, b.raw / got);
  CU_ASSERT_EQUAL(a.est, ADV_EST_SCALED);
  CU_ASSERT_DOUBLE_EQUAL(a.half, 0.151, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(b.half, 0.251, 1e-12);
  CU_ASSERT(adv_score_better(&b, &a));
  /* The whole run is its own value; bytes are scaled, with no second half. */
  CU_ASSERT_EQUAL(adv_score_of(&mt, false, ma, 1, 2, &a, err, sizeof err), 0);
  CU_ASSERT_EQUAL(a.value, 0.1 + 1e-4 * 16 + PACED_END);
  CU_ASSERT_EQUAL(a.est, ADV_EST_EXACT);
  adv_metric bytes = {.name = "bytes"};
  CU_ASSERT_EQUAL(adv_score_of(&bytes, false, ma, 0.5, 2, &a, err, sizeof err), 0);
  CU_ASSERT_EQUAL(a.value, (1000 + 160) / 0.5);
  CU_ASSERT_EQUAL(a.est, ADV_EST_SCALED);
  CU_ASSERT_EQUAL(a.half, 0);
  CU_ASSERT_EQUAL(a.why, ADV_SCALED_METRIC);
  /* Time to quality, not reached, of a candidate that trades none: the
   * whole run's time, scaled too, the second half beside it. */
  adv_metric ttq = {.name = "time_to_quality_s", .to_quality = true, .target = 0.5};
  CU_ASSERT_EQUAL(adv_score_of(&ttq, false, ma, got, 2, &a, err, sizeof err), 0);
  CU_ASSERT(a.assumed);
  CU_ASSERT_EQUAL(a.value, a.raw / got);
  CU_ASSERT_DOUBLE_EQUAL(a.half, 0.151, 1e-12);
  cJSON_Delete(ma);
  cJSON_Delete(mb);
  /* The search, stopped by the budget after its first round (125 steps),
   * ranks by scaling: the first candidate (454 ms scaled) after the second
   * (164 ms); its record keeps the second half's 151 ms beside. */
  paced p = {paced_start, paced_pace, true};
  adv_search s = {.n = 6, .budget_s = 2, .eval = paced_eval, .ctx = &p};
  adv_result r;
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT_EQUAL(r.rounds, 1);
  CU_ASSERT_EQUAL(r.order[0], 1);
  CU_ASSERT_EQUAL(r.order[5], 0);
  CU_ASSERT_DOUBLE_EQUAL(r.last[0].value, 0.1135 / 0.25, 1e-12);
  const cJSON *rec = record_of(&r, 0);
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(rec, "estimate")), "scaled");
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(rec, "second_half")), 0.151,
                         1e-12);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(rec, "no_second_half"));
  adv_result_free(&r);
}

static void test_one_prefix_error_from_second_half(void) {
  /* One round: no estimate moved between rounds, so each candidate's
   * extrapolation error is the gap between its scaled and second-half
   * estimates over the scaled one, and its interval carries it. */
  paced p = {paced_start, paced_pace, true};
  adv_search s = {.n = 6, .budget_s = 2, .eval = paced_eval, .ctx = &p};
  adv_result r;
  char err[256];
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT_EQUAL_FATAL(r.rounds, 1);
  for (size_t c = 0; c < 6; c++) {
    const adv_score *sc = &r.last[c];
    CU_ASSERT(sc->half > 0 && r.from_gap[c]);
    CU_ASSERT_EQUAL(r.spread[c], fabs(sc->value - sc->half) / sc->value);
  }
  /* the first: 454 ms scaled, 151 ms from its second half */
  CU_ASSERT_DOUBLE_EQUAL(r.spread[0], (0.1135 / 0.25 - 0.151) / (0.1135 / 0.25), 1e-12);
  char *out = printed(&r, 6);
  CU_ASSERT(unit_contains(out, "\"error_from\":\"second half\""));
  CU_ASSERT(unit_contains(out, "its extrapolation error, "));
  CU_ASSERT(!unit_contains(out, "not measured"));
  free(out);
  adv_result_free(&r);
}

/* Every prefix's estimate 1 + c / 10, scaled, with the second half's *ctx
 * beside it (0: none), its own value 0.5 (a start-up) plus 2 a run. */
static int kind_eval(void *ctx, size_t cand, double fraction, double timeout_s, adv_score *out,
                     char *err, size_t errlen) {
  (void)timeout_s;
  (void)err;
  (void)errlen;
  *out = (adv_score){.value = 1 + (double)cand / 10, .raw = 0.5 + 2 * fraction,
                     .fraction = fraction, .cost_s = fraction, .est = ADV_EST_SCALED,
                     .half = *(const double *)ctx, .why = *(const double *)ctx > 0 ? 0 : 2};
  return 0;
}

static void test_two_prefixes_over_second_half(void) {
  /* Two rounds (on 0.25 and 0.5 of the run; the budget ends the search
   * there): a scaled time is replaced by the two prefixes' (0.5 + 2 x 1 =
   * 2.5), a second half beside it or not, and the error is the estimates'
   * change between the rounds, not the gap to the second half. */
  adv_search s = {.n = 6, .budget_s = 3.5, .eval = kind_eval, .ctx = (double[]){0}};
  adv_result r;
  char err[256];
  for (int half = 0; half < 2; half++) {
    *(double *)s.ctx = half ? 1.5 : 0;
    CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
    CU_ASSERT_EQUAL(r.rounds, 2);
    CU_ASSERT_DOUBLE_EQUAL(r.last[0].value, 2.5, 1e-12);
    CU_ASSERT_EQUAL(r.last[0].est, ADV_EST_TWO);
    CU_ASSERT_EQUAL(r.last[0].half, half ? 1.5 : 0);
    CU_ASSERT_FALSE(r.from_gap[0]);
    CU_ASSERT_DOUBLE_EQUAL(r.spread[0], 1.5 / 2.5, 1e-12);
    adv_result_free(&r);
  }
}

/* The table and its notes, for a search's result over made-up labels. */
static char *printed(const adv_result *r, size_t n) {
  adv_candidate items[6] = {{0}};
  char labels[6][16];
  for (size_t i = 0; i < n; i++) {
    snprintf(labels[i], sizeof labels[i], "c%zu", i);
    items[i].label = labels[i];
  }
  adv_candidates cands = {.items = items, .count = n, .cap = n};
  adv_report rp = {.cands = &cands, .res = r, .metric = {.name = "time_s"}, .target = NAN,
                   .error = 0.28, .budget_s = 2};
  snprintf(rp.error_from, sizeof rp.error_from, "made up");
  double margin;
  cJSON *ranking = adv_ranking(&rp, &margin);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  adv_print(f, &rp, ranking, margin);
  fclose(f);
  char *rt = cJSON_PrintUnformatted(ranking);
  cJSON_Delete(ranking);
  size_t total = len + strlen(rt) + 2;
  char *out = malloc(total);
  snprintf(out, total, "%s\n%s", buf, rt);
  free(buf);
  free(rt);
  return out;
}

static void test_no_stop_on_the_screening(void) {
  /* A first candidate ten times faster than the rest leads them by more
   * than the gaps to their second halves after the screening already; the
   * search goes on to simulate the screening's best under its own
   * evaluator, and may stop there. */
  static const double start[6] = {0}, pace[6] = {1e-4, 1e-3, 1.1e-3, 1.2e-3, 1.3e-3, 1.4e-3};
  paced p = {start, pace, true};
  adv_search s = {.n = 6, .budget_s = 1000, .eval = paced_eval, .ctx = &p,
                  .screen = paced_eval, .screen_name = "cheap", .own_name = "own"};
  adv_result r;
  char err[256];
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT_FATAL(r.screened);
  CU_ASSERT(isfinite(r.spread[0]) && r.from_gap[0]);
  CU_ASSERT_EQUAL(r.order[0], 0);
  CU_ASSERT_EQUAL(r.rounds, 2);
  CU_ASSERT_STRING_EQUAL(r.stop, "after round 2, the first leads the others by more than the "
                                 "estimates' errors");
  adv_result_free(&r);
}

static void test_no_second_half(void) {
  /* Without half_time_s and last_step_s, with fewer than 4 steps per
   * worker, or with a second half that took no time, there is no
   * second-half estimate beside the scaled one, and the score says why. */
  adv_metric mt = {.name = "time_s"};
  char err[256];
  adv_score a = {0};
  cJSON *m = paced_metrics(0.1, 1e-4, 16, false);
  CU_ASSERT_EQUAL(adv_score_of(&mt, false, m, 0.032, 2, &a, err, sizeof err), 0);
  CU_ASSERT_EQUAL(a.est, ADV_EST_SCALED);
  CU_ASSERT_EQUAL(a.why, ADV_SCALED_NO_HALF);
  CU_ASSERT_EQUAL(a.half, 0);
  CU_ASSERT_EQUAL(a.value, (0.1 + 1e-4 * 16 + PACED_END) / 0.032);
  cJSON_Delete(m);
  m = paced_metrics(0.1, 1e-4, 3, true);
  CU_ASSERT_EQUAL(adv_score_of(&mt, false, m, 0.006, 2, &a, err, sizeof err), 0);
  CU_ASSERT_EQUAL(a.why, ADV_SCALED_SHORT);
  CU_ASSERT_EQUAL(a.half, 0);
  CU_ASSERT(unit_contains(adv_scaled_why(a.why), "fewer than 4 steps"));
  cJSON_Delete(m);
  adv_extrapolate(0.2, 0.15, 0.15, 0.1, 16, &a);
  CU_ASSERT_EQUAL(a.why, ADV_SCALED_FLAT);
  CU_ASSERT_EQUAL(a.half, 0);
  CU_ASSERT_EQUAL(a.value, 0.2 / 0.1);
  adv_extrapolate(0.2, 0.1, NAN, 0.1, 16, &a); /* half_time_s alone */
  CU_ASSERT_EQUAL(a.why, ADV_SCALED_NO_HALF);
  /* A search of one round then leaves the extrapolation error not
   * measured, as with one prefix before, and its records and table say
   * why. */
  paced p = {paced_start, paced_pace, false};
  adv_search s = {.n = 6, .budget_s = 2, .eval = paced_eval, .ctx = &p};
  adv_result r;
  CU_ASSERT_EQUAL_FATAL(adv_halving(&s, &r, err, sizeof err), 0);
  CU_ASSERT_EQUAL(r.order[0], 1);
  for (size_t c = 0; c < 6; c++) CU_ASSERT(isnan(r.spread[c]) && !r.from_gap[c]);
  CU_ASSERT_STRING_EQUAL(
      cJSON_GetStringValue(cJSON_GetObjectItem(record_of(&r, 0), "no_second_half")),
      "the run reported no half_time_s or last_step_s");
  char *out = printed(&r, 6);
  CU_ASSERT(unit_contains(out, "note: the first's estimate comes from one prefix (25% of the "
                               "run): how far it is from the whole run's is not measured"));
  CU_ASSERT(unit_contains(out, "note: 6 of the 6 estimates come from one prefix without a "
                               "second-half estimate"));
  CU_ASSERT(unit_contains(out, "6: the run reported no half_time_s or last_step_s\n"));
  CU_ASSERT(unit_contains(out, "\"error_from\":\"not measured\""));
  CU_ASSERT(!unit_contains(out, "extrapolation_error"));
  free(out);
  adv_result_free(&r);
}

PSLAB_SUITE("advise",
            {"halving keeps the best", test_halving_keeps_the_best},
            {"halving respects the budget", test_halving_respects_the_budget},
            {"halving bad input", test_halving_bad_input},
            {"halving with jobs", test_halving_jobs},
            {"halving shortens a first round too dear", test_halving_shorter_first_round},
            {"halving with a dear first candidate", test_halving_dear_first_candidate},
            {"halving screens with a cheaper evaluator", test_halving_screens},
            {"halving keeps a first round the budget ended", test_halving_partial_first_round},
            {"halving keeps a second round the budget ended", test_halving_partial_second_round},
            {"scaling ranks, the second half beside it", test_second_half_beside_scaling},
            {"one prefix's error from its second half", test_one_prefix_error_from_second_half},
            {"no second half: the error not measured", test_no_second_half},
            {"no stop on the screening's estimates", test_no_stop_on_the_screening},
            {"two prefixes replace a scaled time", test_two_prefixes_over_second_half},
            {"prefix", test_prefix},
            {"candidate set", test_candidate_set},
            {"hot-key counts", test_hot_key_counts},
            {"known winner", test_known_winner},
            {"--screen own", test_screen_own},
            {"a trace's steps", test_trace_steps},
            {"which candidates trade quality", test_trades_quality},
            {"an mf spec cut below one epoch", test_sub_epoch_prefix},
            {"quality ranks by time to quality", test_quality_ranks_by_time_to_quality},
            {"--fidelity's error", test_fidelity_error},
            {"confirm on the real backend", test_confirm_on_the_real_backend},
            {"bad input", test_bad_input})
