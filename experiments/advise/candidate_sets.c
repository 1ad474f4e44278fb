/*
 * pslab's own candidates (docs/advise.md, "The candidates"): every policy
 * with its main settings over ranges that span what the policies'
 * documentation and the shipped specs use, and no more than a search can
 * afford (some 40 to 60 candidates):
 *   static    partition hash and range;
 *   relocate  lookahead 1, 10, 100, 1000 (below the steps per worker);
 *   replicate hot_keys from the measured skew (the hottest keys serving 50%,
 *             80%, 95% of accesses) x syncs_per_step 1, 10, 100;
 *   nups      the same hot_keys x lookahead 10, 100 (syncs_per_step 10);
 *   adaptive  lookahead 10, 50, 200;
 *   psld      window_s 0.02, 0.05, 0.2; with servers apart from workers,
 *             also twice the servers (within the nodes);
 *   workers per node halved and doubled (the total steps kept) for static
 *             hash, static range and relocate lookahead 100;
 *   with a workload that measures quality, SSP with staleness 1, 4, 16 on
 *             static hash, static range and relocate lookahead 10 (a
 *             quality traded for speed, which time to quality judges).
 * The spec's checks decide which of them apply (adv_candidate_add).
 */
#include "experiments/advise/advise.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

/* A candidate: the base with the policy in JSON text (printf-style), and
 * the cluster's workers per node and servers (0: the spec's), consistency
 * (NULL: the spec's). */
static void add(adv_candidates *c, const adv_build *b, double wpn, double servers,
                const char *consistency, const char *fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  cJSON *cand = cJSON_Duplicate(b->base, true);
  cJSON_AddItemToObject(cand, "policy", cJSON_Parse(text));
  char err[256];
  if (wpn > 0) {
    exp_path_set(cand, "cluster.workers_per_node", cJSON_CreateNumber(wpn), err, sizeof err);
    if (b->steps > 0) /* the same steps in all */
      exp_path_set(cand, "workload.steps_per_worker",
                   cJSON_CreateNumber(fmax(1, round(b->steps * b->workers_per_node / wpn))),
                   err, sizeof err);
  }
  if (servers > 0)
    exp_path_set(cand, "cluster.servers", cJSON_CreateNumber(servers), err, sizeof err);
  if (consistency) {
    cJSON_DeleteItemFromObjectCaseSensitive(cand, "consistency");
    cJSON_AddItemToObject(cand, "consistency", cJSON_Parse(consistency));
  }
  exp_buf label = {0};
  adv_choice_label(cand, b, &label);
  char *l = exp_buf_take(&label);
  adv_candidate_add(c, b, cand, l ? l : "?", "pslab");
  free(l);
}

/* Whether a look-ahead is worth trying: below the steps per worker. */
static bool fits(const adv_build *b, int lookahead) {
  return b->steps <= 0 || lookahead < b->steps;
}

static void add_moving(adv_candidates *c, const adv_build *b) {
  static const int relocate_la[] = {1, 10, 100, 1000};
  for (size_t i = 0; i < 4; i++)
    if (fits(b, relocate_la[i]))
      add(c, b, 0, 0, NULL, "{\"type\":\"relocate\",\"lookahead\":%d}", relocate_la[i]);
  static const int adaptive_la[] = {10, 50, 200};
  for (size_t i = 0; i < 3; i++)
    if (fits(b, adaptive_la[i]))
      add(c, b, 0, 0, NULL, "{\"type\":\"adaptive\",\"lookahead\":%d}", adaptive_la[i]);
  static const double windows[] = {0.02, 0.05, 0.2};
  for (size_t i = 0; i < 3; i++) {
    add(c, b, 0, 0, NULL, "{\"type\":\"psld\",\"window_s\":%g}", windows[i]);
    if (b->servers > 0 && b->servers < b->nodes)
      add(c, b, 0, fmin(b->nodes, 2 * b->servers), NULL,
          "{\"type\":\"psld\",\"window_s\":%g}", windows[i]);
  }
}

static void add_replicating(adv_candidates *c, const adv_build *b) {
  const cJSON *wl = cJSON_GetObjectItemCaseSensitive(b->spec, "workload");
  uint64_t hot[3];
  size_t n = adv_hot_key_counts(wl, (uint32_t)b->nodes, (uint32_t)b->workers_per_node,
                                b->base_dir, hot);
  static const int syncs[] = {1, 10, 100};
  for (size_t h = 0; h < n; h++) {
    for (size_t s = 0; s < 3; s++)
      add(c, b, 0, 0, NULL, "{\"type\":\"replicate\",\"hot_keys\":%llu,\"syncs_per_step\":%d}",
          (unsigned long long)hot[h], syncs[s]);
    for (int la = 10; la <= 100; la *= 10)
      if (fits(b, la))
        add(c, b, 0, 0, NULL, "{\"type\":\"nups\",\"hot_keys\":%llu,\"lookahead\":%d,"
            "\"syncs_per_step\":10}", (unsigned long long)hot[h], la);
  }
}

/* Workers per node halved and doubled, and SSP where quality is measured,
 * on the plain policies. */
static void add_variants(adv_candidates *c, const adv_build *b) {
  static const char *const plain[] = {"{\"type\":\"static\",\"partition\":\"hash\"}",
                                      "{\"type\":\"static\",\"partition\":\"range\"}",
                                      "{\"type\":\"relocate\",\"lookahead\":100}"};
  double w = b->workers_per_node;
  for (size_t p = 0; p < 3; p++) {
    if (w >= 2) add(c, b, floor(w / 2), 0, NULL, "%s", plain[p]);
    if (w <= 512) add(c, b, 2 * w, 0, NULL, "%s", plain[p]);
  }
  if (!b->quality) return;
  static const char *const ssp[] = {"{\"model\":\"ssp\",\"staleness\":1}",
                                    "{\"model\":\"ssp\",\"staleness\":4}",
                                    "{\"model\":\"ssp\",\"staleness\":16}"};
  for (size_t p = 0; p < 3; p++)
    for (size_t s = 0; s < 3; s++)
      add(c, b, 0, 0, ssp[s], "%s",
          p < 2 ? plain[p] : "{\"type\":\"relocate\",\"lookahead\":10}");
}

void adv_add_pslab_set(adv_candidates *c, const adv_build *b) {
  add(c, b, 0, 0, NULL, "{\"type\":\"static\",\"partition\":\"hash\"}");
  add(c, b, 0, 0, NULL, "{\"type\":\"static\",\"partition\":\"range\"}");
  add_moving(c, b);
  add_replicating(c, b);
  add_variants(c, b);
}
