/*
 * NuPS's sampling management (policies/sampling*.c) on in-memory clusters:
 * configuration and its messages, the alias table's frequencies, each
 * scheme's conformity (naive matches its distribution, local is biased on a
 * skewed placement and says so), the pool's reuse factor and postponing,
 * preloc's keys being local by pull time, and correct values on every pull.
 */
#include "model/testing.h"
#include "policies/policy.h"
#include "tests/harness.h"
#include "tests/unit.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIRST 100 /* the table's first key */
#define LEN 3     /* floats per value */

/* ------------------------------------------------------------- helpers */

static harness *make(uint32_t nodes, uint32_t workers, uint64_t keys, uint64_t seed) {
  harness_config c;
  harness_config_default(&c);
  c.nodes = nodes;
  c.workers = workers;
  c.layout.tables[0] = (ps_table){FIRST, keys, LEN};
  c.seed = seed;
  return harness_new(&c);
}

/* Sets every key's value to (key, key, key), from node 0, and delivers. */
static void fill_values(harness *h, uint64_t keys) {
  ps_key *k = malloc(keys * sizeof *k);
  float *v = malloc(keys * LEN * sizeof *v);
  CU_ASSERT_PTR_NOT_NULL_FATAL(k);
  CU_ASSERT_PTR_NOT_NULL_FATAL(v);
  for (uint64_t i = 0; i < keys; i++) {
    k[i] = FIRST + i;
    for (int j = 0; j < LEN; j++) v[i * LEN + j] = (float)k[i];
  }
  ps_ticket t = 0;
  ps_worker *w = harness_worker(h, 0, 0);
  int rc = ps_set(w, k, keys, v, keys * LEN, &t, 0);
  CU_ASSERT(rc == PS_OK || rc == PS_PENDING);
  if (rc == PS_PENDING) CU_ASSERT_TRUE(harness_wait(h, w, t));
  harness_drain(h);
  free(k);
  free(v);
}

static bool values_match(const ps_key *keys, const float *vals, size_t n) {
  for (size_t i = 0; i < n; i++)
    for (int j = 0; j < LEN; j++)
      if (vals[i * LEN + j] != (float)keys[i]) return false;
  return true;
}

static ps_sampler *sampler(const char *json, ps_worker *w, const ps_sample_dist *d,
                           uint64_t seed) {
  cJSON *j = cJSON_Parse(json);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  ps_sampler *s = ps_sampler_new(j, w, d, seed);
  cJSON_Delete(j);
  return s;
}

/* Pearson's statistic of counts[k] against probabilities p[k] over n draws. */
static double chi_square(const uint64_t *counts, const double *p, size_t k, uint64_t n) {
  double chi = 0;
  for (size_t i = 0; i < k; i++) {
    double e = p[i] * (double)n;
    if (e > 0) chi += ((double)counts[i] - e) * ((double)counts[i] - e) / e;
  }
  return chi;
}

/* A generous bound: the mean plus eight standard deviations. */
static double chi_bound(size_t k) { return (double)(k - 1) + 8 * sqrt(2.0 * (double)(k - 1)); }

/* Runs `steps` steps of n samples with s on w: prepares one step ahead,
 * delivers everything in flight if `deliver`, pulls, waits, checks values
 * and counts keys (counts[key - FIRST]), local ones at pull in *local. */
typedef struct {
  uint64_t local, immediate, bad_values;
} run_result;

static run_result run(harness *h, ps_worker *w, ps_sampler *s, int steps, size_t n,
                      bool deliver, uint64_t *counts) {
  run_result r = {0, 0, 0};
  ps_key keys[64];
  float vals[64 * LEN];
  uint64_t next;
  CU_ASSERT_FATAL(n <= 64);
  CU_ASSERT_EQUAL_FATAL(ps_sample_prepare(s, n, &next, 0), PS_OK);
  for (int i = 0; i < steps; i++) {
    uint64_t handle = next;
    CU_ASSERT_EQUAL_FATAL(ps_sample_prepare(s, n, &next, 0), PS_OK);
    if (deliver) harness_drain(h);
    ps_ticket t = 0;
    int rc = ps_sample_pull(s, handle, keys, n, vals, sizeof vals / sizeof *vals, &t, 0);
    CU_ASSERT_FATAL(rc == PS_OK || rc == PS_PENDING);
    for (size_t k = 0; k < n; k++) {
      r.local += ps_worker_key_locality(w, keys[k]) == PS_KEY_LOCAL;
      if (counts) counts[keys[k] - FIRST]++;
    }
    if (rc == PS_OK) r.immediate++;
    else CU_ASSERT_TRUE_FATAL(harness_wait(h, w, t));
    r.bad_values += !values_match(keys, vals, n);
  }
  return r;
}

/* ------------------------------------------------------- configuration */

static int configure(const char *text, char *err) {
  cJSON *j = cJSON_Parse(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  err[0] = 0;
  int rc = ps_sampling_configure(j, err, 256);
  cJSON_Delete(j);
  return rc;
}

static void test_configure_good(void) {
  char err[256];
  CU_ASSERT_EQUAL(configure("{\"scheme\":\"naive\"}", err), PS_OK);
  CU_ASSERT_EQUAL(configure("{\"scheme\":\"preloc\"}", err), PS_OK);
  CU_ASSERT_EQUAL(configure("{\"scheme\":\"local\"}", err), PS_OK);
  CU_ASSERT_EQUAL(configure("{\"scheme\":\"pool\"}", err), PS_OK);
  CU_ASSERT_EQUAL(configure("{\"scheme\":\"pool\",\"group_size\":1,\"reuse\":64,"
                            "\"postpone\":false}", err), PS_OK);
}

static void test_configure_bad(void) {
  static const struct {
    const char *json, *message;
  } cases[] = {
      {"[]", "expected an object, found a list"},
      {"{}", "scheme: expected one of \"naive\", \"preloc\", \"pool\", \"local\", found nothing"},
      {"{\"scheme\":\"onlylocal\"}", "scheme: expected one of \"naive\", \"preloc\", \"pool\", "
                                     "\"local\", found \"onlylocal\""},
      {"{\"scheme\":3}", "scheme: expected one of"},
      {"{\"scheme\":\"naive\",\"reuse\":4}",
       "reuse: expected nothing (only scheme \"pool\" takes it), found a number"},
      {"{\"scheme\":\"local\",\"postpone\":true}",
       "postpone: expected nothing (only scheme \"pool\" takes it), found a boolean"},
      {"{\"scheme\":\"preloc\",\"group_size\":250}", "group_size: expected nothing"},
      {"{\"scheme\":\"pool\",\"group_size\":0}",
       "group_size: expected an integer in [1, 1048576], found 0"},
      {"{\"scheme\":\"pool\",\"reuse\":2.5}", "reuse: expected an integer in [1, 1048576], found 2.5"},
      {"{\"scheme\":\"pool\",\"reuse\":\"16\"}", "reuse: expected an integer in [1, 1048576], found a string"},
      {"{\"scheme\":\"pool\",\"postpone\":1}", "postpone: expected true or false, found a number"},
      {"{\"scheme\":\"pool\",\"pool_size\":1}", "pool_size: unknown field; expected one of"},
  };
  char err[256];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CU_ASSERT_EQUAL(configure(cases[i].json, err), PS_ERR_INVAL);
    if (!strstr(err, cases[i].message)) {
      fprintf(stderr, "\n%s: got \"%s\"\n", cases[i].json, err);
      CU_FAIL("message does not match");
    }
  }
  CU_ASSERT_EQUAL(ps_sampling_configure(NULL, err, sizeof err), PS_OK); /* defaults */
  cJSON *list = cJSON_Parse("[]");
  CU_ASSERT_EQUAL(ps_sampling_configure(list, err, sizeof err), PS_ERR_INVAL);
  CU_ASSERT_STRING_EQUAL(err, "expected an object, found a list");
  cJSON_Delete(list);
}

/* --------------------------------------------------------- distributions */

static void test_alias_table_matches_weights(void) {
  enum { K = 12, N = 200000 };
  double w[K], p[K];
  uint64_t counts[K] = {0}, rng = 7;
  for (int i = 0; i < K; i++) w[i] = (double)(i % 5) * 3 + 0.5 * i; /* w[0] = 0 */
  ps_sample_dist *d = ps_sample_dist_new(1000, K, w);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  double sum = 0;
  for (int i = 0; i < K; i++) sum += w[i];
  for (int i = 0; i < K; i++) {
    p[i] = ps_sample_dist_prob(d, 1000 + (ps_key)i);
    CU_ASSERT_DOUBLE_EQUAL(p[i], w[i] / sum, 1e-12);
  }
  CU_ASSERT_EQUAL(ps_sample_dist_prob(d, 999), 0.0);
  CU_ASSERT_EQUAL(ps_sample_dist_prob(d, 1000 + K), 0.0);
  for (int i = 0; i < N; i++) {
    ps_key k = ps_sample_dist_draw(d, &rng);
    CU_ASSERT_FATAL(k >= 1000 && k < 1000 + K);
    counts[k - 1000]++;
  }
  CU_ASSERT_EQUAL(counts[0], 0); /* weight 0 is never drawn */
  CU_ASSERT(chi_square(counts, p, K, N) < chi_bound(K - 1)); /* K - 1 keys weigh */
  ps_sample_dist_free(d);
}

static void test_uniform_when_no_weights(void) {
  enum { K = 40, N = 100000 };
  double p[K];
  uint64_t counts[K] = {0}, rng = 9;
  ps_sample_dist *d = ps_sample_dist_new(5, K, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  for (int i = 0; i < K; i++) p[i] = ps_sample_dist_prob(d, 5 + (ps_key)i);
  CU_ASSERT_DOUBLE_EQUAL(p[17], 1.0 / K, 1e-15);
  for (int i = 0; i < N; i++) counts[ps_sample_dist_draw(d, &rng) - 5]++;
  CU_ASSERT(chi_square(counts, p, K, N) < chi_bound(K));
  ps_sample_dist_free(d);
}

static void test_bad_distributions_rejected(void) {
  double neg[3] = {1, -1, 2}, zero[3] = {0, 0, 0}, nan3[3] = {1, NAN, 1};
  double inf3[3] = {1, INFINITY, 1};
  CU_ASSERT_PTR_NULL(ps_sample_dist_new(0, 0, NULL));
  CU_ASSERT_PTR_NULL(ps_sample_dist_new(UINT64_MAX - 2, 3, NULL)); /* holds UINT64_MAX */
  CU_ASSERT_PTR_NULL(ps_sample_dist_new(0, 3, neg));
  CU_ASSERT_PTR_NULL(ps_sample_dist_new(0, 3, zero));
  CU_ASSERT_PTR_NULL(ps_sample_dist_new(0, 3, nan3));
  CU_ASSERT_PTR_NULL(ps_sample_dist_new(0, 3, inf3));
  ps_sample_dist *d = ps_sample_dist_new(UINT64_MAX - 3, 3, NULL);
  CU_ASSERT_PTR_NOT_NULL(d);
  ps_sample_dist_free(d);
  ps_sample_dist_free(NULL);
}

/* ------------------------------------------------------------- schemes */

/* Weights of a skewed placement: keys homed at node 0 weigh 1, the others
 * `heavy`, so most of the mass lives away from node 0. */
static ps_sample_dist *skewed_dist(harness *h, uint64_t keys, double heavy) {
  double *w = malloc(keys * sizeof *w);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  const ps_layout *l = ps_node_layout(harness_node(h, 0));
  for (uint64_t i = 0; i < keys; i++) w[i] = ps_layout_home(l, FIRST + i) == 0 ? 1.0 : heavy;
  ps_sample_dist *d = ps_sample_dist_new(FIRST, keys, w);
  free(w);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  return d;
}

static void test_naive_matches_its_distribution(void) {
  enum { K = 64, STEPS = 500, N = 40 };
  harness *h = make(4, 1, K, 11);
  fill_values(h, K);
  ps_sample_dist *d = skewed_dist(h, K, 3.0);
  ps_worker *w = harness_worker(h, 0, 0);
  ps_sampler *s = sampler("{\"scheme\":\"naive\"}", w, d, 42);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  uint64_t counts[K] = {0};
  run_result r = run(h, w, s, STEPS, N, false, counts);
  CU_ASSERT_EQUAL(r.bad_values, 0);
  CU_ASSERT(r.immediate < STEPS); /* reads go wherever keys live */
  double p[K];
  for (int i = 0; i < K; i++) p[i] = ps_sample_dist_prob(d, FIRST + (ps_key)i);
  CU_ASSERT(chi_square(counts, p, K, STEPS * N) < chi_bound(K));
  ps_sample_stats st;
  ps_sampler_stats(s, &st);
  CU_ASSERT_EQUAL(st.samples, STEPS * N);
  CU_ASSERT_EQUAL(st.draws, STEPS * N);
  CU_ASSERT_EQUAL(st.postponed, 0);
  CU_ASSERT_DOUBLE_EQUAL(st.reuse_factor, 1.0, 1e-12);
  CU_ASSERT(st.tv_distance < sqrt((double)K / (STEPS * N))); /* the noise floor */
  CU_ASSERT(st.tv_distance > 0);
  ps_sampler_free(s);
  ps_sample_dist_free(d);
  harness_free(h);
}

/* local draws only node 0's keys, which hold 1/61 of the mass: its distance
 * is near 1, naive's on the same setting near its noise floor. */
static void test_local_is_biased_on_skewed_placement(void) {
  enum { K = 400, STEPS = 200, N = 50 };
  harness *h = make(4, 2, K, 12);
  fill_values(h, K);
  ps_sample_dist *d = skewed_dist(h, K, 20.0);
  ps_worker *wl = harness_worker(h, 0, 0), *wn = harness_worker(h, 0, 1);
  ps_sampler *local = sampler("{\"scheme\":\"local\"}", wl, d, 1);
  ps_sampler *naive = sampler("{\"scheme\":\"naive\"}", wn, d, 2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(local);
  CU_ASSERT_PTR_NOT_NULL_FATAL(naive);
  run_result rl = run(h, wl, local, STEPS, N, false, NULL);
  run_result rn = run(h, wn, naive, STEPS, N, false, NULL);
  CU_ASSERT_EQUAL(rl.bad_values + rn.bad_values, 0);
  /* local reads remotely only before it has seen a local key (in its first
   * step, where LOCAL_TRIES misses are likely at 1/61 local mass) ... */
  CU_ASSERT(rl.local > STEPS * N - N);
  CU_ASSERT(rl.immediate >= STEPS - 1);
  CU_ASSERT(rn.local < STEPS * N / 4); /* ... naive mostly does */
  ps_sample_stats sl, sn;
  ps_sampler_stats(local, &sl);
  ps_sampler_stats(naive, &sn);
  CU_ASSERT(sl.tv_distance > 0.9);
  CU_ASSERT(sn.tv_distance < sqrt((double)K / (STEPS * N)));
  CU_ASSERT(sl.tv_distance > 10 * sn.tv_distance);
  CU_ASSERT(sl.draws > sl.samples); /* rejected draws count as draws */
  ps_sampler_free(local);
  ps_sampler_free(naive);
  ps_sample_dist_free(d);
  harness_free(h);
}

/* Pools drained in order: the reuse factor is the configured reuse, and with
 * every pool arrived before its use, each sample is local and read from
 * memory. */
static void check_pool_reuse(const char *json, uint32_t reuse, uint32_t group, size_t n,
                             int steps) {
  enum { K = 1000 };
  harness *h = make(4, 1, K, 13);
  fill_values(h, K);
  ps_sample_dist *d = skewed_dist(h, K, 4.0);
  ps_worker *w = harness_worker(h, 1, 0);
  ps_sampler *s = sampler(json, w, d, 3);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  run_result r = run(h, w, s, steps, n, true, NULL);
  CU_ASSERT_EQUAL(r.bad_values, 0);
  CU_ASSERT_EQUAL(r.local, (uint64_t)steps * n);
  CU_ASSERT_EQUAL(r.immediate, (uint64_t)steps);
  ps_sample_stats st;
  ps_sampler_stats(s, &st);
  CU_ASSERT_EQUAL(st.samples, (uint64_t)steps * n);
  CU_ASSERT_DOUBLE_EQUAL(st.reuse_factor, (double)reuse, 0.01 * reuse);
  CU_ASSERT_EQUAL(st.postponed, 0); /* everything had arrived */
  /* Pools are drawn ahead: the ones used plus at most two spares. */
  CU_ASSERT(st.draws * reuse >= st.samples);
  CU_ASSERT(st.draws * reuse <= st.samples + 2 * (uint64_t)group * reuse + n * reuse);
  ps_sampler_free(s);
  ps_sample_dist_free(d);
  harness_free(h);
}

static void test_pool_reuse_factor_is_configured_reuse(void) {
  /* Defaults: pools of 250 keys, 16 uses each; 10 pools in 800 steps of 50. */
  check_pool_reuse("{\"scheme\":\"pool\"}", 16, 250, 50, 800);
  check_pool_reuse("{\"scheme\":\"pool\",\"group_size\":8,\"reuse\":4}", 4, 8, 8, 400);
  check_pool_reuse("{\"scheme\":\"pool\",\"group_size\":30,\"reuse\":1}", 1, 30, 7, 300);
}

/* Nothing is delivered, so only keys homed at node 0 are local: with
 * postpone the pool hands those out first; without, it reads remote ones. */
static void check_pool_postpone(bool postpone, uint64_t *local, uint64_t *postponed) {
  enum { K = 256, SAMPLES = 16 };
  harness *h = make(2, 1, K, 14);
  fill_values(h, K);
  ps_sample_dist *d = ps_sample_dist_new(FIRST, K, NULL);
  ps_worker *w = harness_worker(h, 0, 0);
  ps_sampler *s = sampler(postpone ? "{\"scheme\":\"pool\",\"group_size\":32,\"reuse\":2}"
                                   : "{\"scheme\":\"pool\",\"group_size\":32,\"reuse\":2,"
                                     "\"postpone\":false}", w, d, 5);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  uint64_t handles[SAMPLES];
  for (int i = 0; i < SAMPLES; i++)
    CU_ASSERT_EQUAL_FATAL(ps_sample_prepare(s, 1, &handles[i], 0), PS_OK);
  *local = 0;
  for (int i = 0; i < SAMPLES; i++) {
    ps_key k;
    float v[LEN];
    ps_ticket t = 0;
    int rc = ps_sample_pull(s, handles[i], &k, 1, v, LEN, &t, 0);
    CU_ASSERT_FATAL(rc == PS_OK || rc == PS_PENDING);
    bool is_local = ps_worker_key_locality(w, k) == PS_KEY_LOCAL;
    *local += is_local;
    CU_ASSERT_EQUAL(rc == PS_OK, is_local);
    if (rc == PS_PENDING) CU_ASSERT_TRUE(harness_wait(h, w, t));
    CU_ASSERT_TRUE(values_match(&k, v, 1));
  }
  ps_sample_stats st;
  ps_sampler_stats(s, &st);
  *postponed = st.postponed;
  ps_sampler_free(s);
  ps_sample_dist_free(d);
  harness_free(h);
}

static void test_pool_postpones_keys_not_yet_local(void) {
  uint64_t local, postponed;
  check_pool_postpone(true, &local, &postponed);
  CU_ASSERT_EQUAL(local, 16); /* two pools of 32 hold far more than 8 local keys */
  CU_ASSERT(postponed > 0);
  check_pool_postpone(false, &local, &postponed);
  CU_ASSERT(local < 16);
  CU_ASSERT_EQUAL(postponed, 0);
}

static void test_preloc_keys_are_local_at_pull(void) {
  enum { K = 100, N = 20, STEPS = 50 };
  harness *h = make(4, 1, K, 15);
  fill_values(h, K);
  ps_sample_dist *d = skewed_dist(h, K, 2.0);
  ps_worker *w = harness_worker(h, 2, 0);
  ps_sampler *s = sampler("{\"scheme\":\"preloc\"}", w, d, 6);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  uint64_t handle;
  CU_ASSERT_EQUAL(ps_sample_prepare(s, N, &handle, 0), PS_OK);
  CU_ASSERT(harness_in_flight(h) > 0); /* the localizes are on their way */
  harness_drain(h);
  ps_key keys[N];
  float vals[N * LEN];
  ps_ticket t = 0;
  uint64_t before = harness_delivered(h);
  CU_ASSERT_EQUAL(ps_sample_pull(s, handle, keys, N, vals, N * LEN, &t, 0), PS_OK);
  CU_ASSERT_EQUAL(harness_in_flight(h), 0);
  CU_ASSERT_EQUAL(harness_delivered(h), before);
  for (int i = 0; i < N; i++) CU_ASSERT_EQUAL(ps_worker_key_locality(w, keys[i]), PS_KEY_LOCAL);
  CU_ASSERT_TRUE(values_match(keys, vals, N));
  /* Over many steps, one ahead: all local, and conformity stays exact. */
  run_result r = run(h, w, s, STEPS, N, true, NULL);
  CU_ASSERT_EQUAL(r.local, STEPS * N);
  CU_ASSERT_EQUAL(r.immediate, STEPS);
  CU_ASSERT_EQUAL(r.bad_values, 0);
  ps_sample_stats st;
  ps_sampler_stats(s, &st);
  CU_ASSERT_EQUAL(st.samples, (STEPS + 1) * N);
  CU_ASSERT_DOUBLE_EQUAL(st.reuse_factor, 1.0, 1e-12);
  CU_ASSERT(st.tv_distance < sqrt((double)K / st.samples));
  CU_ASSERT_EQUAL(harness_recv_errors(h), 0);
  ps_sampler_free(s);
  ps_sample_dist_free(d);
  harness_free(h);
}

/* ------------------------------------------------------------- misuse */

static void test_handles_and_bad_arguments(void) {
  enum { K = 64 };
  harness *h = make(2, 1, K, 16);
  fill_values(h, K);
  ps_worker *w = harness_worker(h, 0, 0);
  ps_sample_dist *d = ps_sample_dist_new(FIRST, K, NULL);
  ps_sample_dist *wide = ps_sample_dist_new(FIRST, K + 1, NULL); /* past the table */
  CU_ASSERT_PTR_NULL(sampler("{\"scheme\":\"naive\"}", w, wide, 1));
  CU_ASSERT_PTR_NULL(sampler("{\"scheme\":\"naive\",\"reuse\":2}", w, d, 1));
  ps_sampler *s = sampler("{\"scheme\":\"preloc\"}", w, d, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  uint64_t h1, h2;
  CU_ASSERT_EQUAL(ps_sample_prepare(s, 0, &h1, 0), PS_ERR_INVAL);
  CU_ASSERT_EQUAL(ps_sample_prepare(s, 4, &h1, 0), PS_OK);
  CU_ASSERT_EQUAL(ps_sample_prepare(s, 2, &h2, 0), PS_OK);
  CU_ASSERT_NOT_EQUAL(h1, h2);
  harness_drain(h);
  ps_key keys[4];
  float vals[4 * LEN];
  ps_ticket t;
  CU_ASSERT_EQUAL(ps_sample_pull(s, h2 + 1, keys, 2, vals, 2 * LEN, &t, 0), PS_ERR_INVAL);
  CU_ASSERT_EQUAL(ps_sample_pull(s, h2, keys, 3, vals, 3 * LEN, &t, 0), PS_ERR_INVAL);
  CU_ASSERT_EQUAL(ps_sample_pull(s, h2, keys, 2, vals, 2 * LEN - 1, &t, 0), PS_ERR_INVAL);
  /* Still prepared after the refusals, and pulled out of order. */
  CU_ASSERT_EQUAL(ps_sample_pull(s, h2, keys, 2, vals, 2 * LEN, &t, 0), PS_OK);
  CU_ASSERT_TRUE(values_match(keys, vals, 2));
  CU_ASSERT_EQUAL(ps_sample_pull(s, h2, keys, 2, vals, 2 * LEN, &t, 0), PS_ERR_INVAL);
  CU_ASSERT_EQUAL(ps_sample_pull(s, h1, keys, 4, vals, 4 * LEN, &t, 0), PS_OK);
  CU_ASSERT_TRUE(values_match(keys, vals, 4));
  ps_sample_stats st;
  ps_sampler_stats(s, &st);
  CU_ASSERT_EQUAL(st.samples, 6);
  /* Freeing with samples still prepared frees them too (ASan checks). */
  CU_ASSERT_EQUAL(ps_sample_prepare(s, 3, &h1, 0), PS_OK);
  ps_sampler_free(s);
  ps_sampler_free(NULL);
  ps_sample_dist_free(wide);
  ps_sample_dist_free(d);
  harness_free(h);
}

PSLAB_SUITE("sampling",
            {"configure: good objects", test_configure_good},
            {"configure: bad objects and their messages", test_configure_bad},
            {"alias table matches its weights", test_alias_table_matches_weights},
            {"uniform when no weights", test_uniform_when_no_weights},
            {"bad distributions rejected", test_bad_distributions_rejected},
            {"naive matches its distribution", test_naive_matches_its_distribution},
            {"local is biased on a skewed placement", test_local_is_biased_on_skewed_placement},
            {"pool: reuse factor is the configured reuse",
             test_pool_reuse_factor_is_configured_reuse},
            {"pool: postpones keys not yet local", test_pool_postpones_keys_not_yet_local},
            {"preloc: keys are local at pull", test_preloc_keys_are_local_at_pull},
            {"handles and bad arguments", test_handles_and_bad_arguments})
