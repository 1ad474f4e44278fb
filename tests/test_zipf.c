/*
 * The zipf workload and the workload door: field validation and its messages,
 * deterministic streams, the drawn distribution against the Zipf law, node
 * locality, the rank-to-key permutation, per-step deduplication and the
 * lifetime of step arrays; alias tables kept for reuse. Fixed seeds throughout, so every bound below is
 * checked against the same numbers on every run.
 */
#include "tests/unit.h"
#include "workloads/internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

static wl_workload *make(const char *json, uint32_t nodes, char *err,
                         size_t errlen) {
  cJSON *j = cJSON_Parse(json);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  wl_context ctx = {.nodes = nodes, .workers_per_node = 1};
  wl_workload *wl = wl_create(j, &ctx, err, errlen);
  cJSON_Delete(j);
  return wl;
}

static wl_workload *make_ok(const char *json, uint32_t nodes) {
  char err[512] = "";
  wl_workload *wl = make(json, nodes, err, sizeof err);
  if (!wl) fprintf(stderr, "unexpected error: %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(wl);
  return wl;
}

/* Counts how often each key is read over all steps of one stream. */
static void count_reads(const wl_workload *wl, uint32_t node, uint64_t seed,
                        uint64_t *counts, uint64_t num_keys) {
  wl_stream *s = wl_stream_new(wl, node, 0, seed);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  wl_step st;
  memset(counts, 0, num_keys * sizeof *counts);
  while (wl_next_step(s, &st))
    for (size_t i = 0; i < st.n_reads; i++) {
      CU_ASSERT_FATAL(st.reads[i] < num_keys);
      counts[st.reads[i]]++;
    }
  wl_stream_free(s);
}

/* ------------------------------------------------------------ validation */

static void test_validation_messages(void) {
  static const struct {
    const char *json, *message;
  } cases[] = {
      {"{\"type\":\"zipf\",\"steps_per_worker\":10}",
       "keys: expected an integer in [1, 4294967295], found nothing"},
      {"{\"type\":\"zipf\",\"keys\":0,\"steps_per_worker\":10}",
       "keys: expected an integer in [1, 4294967295], found 0"},
      {"{\"type\":\"zipf\",\"keys\":1.5,\"steps_per_worker\":10}",
       "keys: expected an integer in [1, 4294967295], found 1.5"},
      {"{\"type\":\"zipf\",\"keys\":\"10\",\"steps_per_worker\":10}",
       "keys: expected an integer in [1, 4294967295], found \"10\""},
      {"{\"type\":\"zipf\",\"keys\":1e10,\"steps_per_worker\":10}",
       "keys: expected an integer in [1, 4294967295], found 10000000000"},
      {"{\"type\":\"zipf\",\"keys\":10,\"skew\":-1,\"steps_per_worker\":10}",
       "skew: expected a number >= 0, found -1"},
      {"{\"type\":\"zipf\",\"keys\":10,\"value_length\":0,"
       "\"steps_per_worker\":10}",
       "value_length: expected an integer in [1, 4294967295], found 0"},
      {"{\"type\":\"zipf\",\"keys\":10,\"reads_per_step\":-1,"
       "\"steps_per_worker\":10}",
       "reads_per_step: expected an integer in [0, 16777216], found -1"},
      {"{\"type\":\"zipf\",\"keys\":10,\"writes_per_step\":true,"
       "\"steps_per_worker\":10}",
       "writes_per_step: expected an integer in [0, 16777216], found true"},
      {"{\"type\":\"zipf\",\"keys\":10}",
       "steps_per_worker: expected an integer >= 1, found nothing"},
      {"{\"type\":\"zipf\",\"keys\":10,\"steps_per_worker\":null}",
       "steps_per_worker: expected an integer >= 1, found null"},
      {"{\"type\":\"zipf\",\"keys\":10,\"steps_per_worker\":10,\"epochs\":0}",
       "epochs: expected an integer >= 1, found 0"},
      {"{\"type\":\"zipf\",\"keys\":10,\"steps_per_worker\":10,\"epochs\":3}",
       "epochs: expected a divisor of steps_per_worker (10), found 3"},
      {"{\"type\":\"zipf\",\"keys\":10,\"steps_per_worker\":10,"
       "\"flops_per_step\":\"x\"}",
       "flops_per_step: expected a number >= 0, found \"x\""},
      {"{\"type\":\"zipf\",\"keys\":10,\"steps_per_worker\":10,"
       "\"locality\":1.5}",
       "locality: expected a number in [0, 1], found 1.5"},
      {"{\"type\":\"zipf\",\"keys\":10,\"steps_per_worker\":10,"
       "\"locality\":[1]}",
       "locality: expected a number in [0, 1], found an array"},
      {"{\"type\":\"zipf\",\"keys\":10,\"steps_per_worker\":10,\"skw\":2}",
       "skw: expected one of the fields type, keys, skew, value_length, "
       "reads_per_step, writes_per_step, steps_per_worker, epochs, "
       "flops_per_step, locality, samples_per_step, sample_power, found an unknown field"},
      {"{\"type\":\"zipf\",\"keys\":10,\"keys\":20,\"steps_per_worker\":10}",
       "keys: expected one value, found the field twice"},
      {"{\"type\":\"nope\",\"keys\":10}", "type: expected one of \"zipf\", \"mf\", \"kge\", \"w2v\", \"trace\", \"dnn\", "
                                          "found \"nope\""},
      {"{\"keys\":10}", "type: expected one of \"zipf\", \"mf\", \"kge\", \"w2v\", \"trace\", \"dnn\", found nothing"},
      {"{\"type\":3}", "type: expected one of \"zipf\", \"mf\", \"kge\", \"w2v\", \"trace\", \"dnn\", found 3"},
      {"[1,2]", "expected an object, found an array"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char err[512] = "";
    wl_workload *wl = make(cases[i].json, 4, err, sizeof err);
    CU_ASSERT_PTR_NULL(wl);
    wl_free(wl);
    if (!strstr(err, cases[i].message))
      fprintf(stderr, "\ncase %zu: got \"%s\"\n  want \"%s\"\n", i, err,
              cases[i].message);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].message));
  }
}

static void test_no_message_buffer_and_no_nodes(void) {
  /* A NULL message buffer is allowed; a cluster of no nodes is refused. */
  cJSON *j = cJSON_Parse("{\"type\":\"zipf\",\"keys\":0}");
  CU_ASSERT_PTR_NULL(wl_create(j, &(wl_context){.nodes = 4, .workers_per_node = 1}, NULL, 0));
  cJSON_Delete(j);
  char err[256] = "";
  CU_ASSERT_PTR_NULL(make("{\"type\":\"zipf\",\"keys\":10,"
                          "\"steps_per_worker\":10}", 0, err, sizeof err));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "at least one node"));
}

static void test_defaults_and_tables(void) {
  wl_workload *wl = make_ok("{\"type\":\"zipf\",\"keys\":1000,"
                            "\"steps_per_worker\":60,\"epochs\":3}", 2);
  CU_ASSERT_EQUAL(wl_steps_per_worker(wl), 60);
  CU_ASSERT_EQUAL(wl_steps_per_epoch(wl), 20);
  ps_layout l;
  memset(&l, 0, sizeof l);
  wl_tables(wl, &l);
  CU_ASSERT_EQUAL(l.num_tables, 1);
  CU_ASSERT_EQUAL(l.tables[0].first, 0);
  CU_ASSERT_EQUAL(l.tables[0].count, 1000);
  CU_ASSERT_EQUAL(l.tables[0].value_len, 100);
  /* Defaults: 10 reads, 10 writes, no flops. */
  wl_stream *s = wl_stream_new(wl, 1, 3, 7);
  wl_step st;
  uint64_t n = 0, max_reads = 0;
  while (wl_next_step(s, &st)) {
    n++;
    CU_ASSERT(st.n_reads <= 10);
    CU_ASSERT_EQUAL(st.n_writes, st.n_reads); /* writes = reads, 10 <= 10 */
    CU_ASSERT_PTR_EQUAL(st.writes, st.reads);
    CU_ASSERT_EQUAL(st.flops, 0.0);
    if (st.n_reads > max_reads) max_reads = st.n_reads;
  }
  CU_ASSERT_EQUAL(n, 60);
  CU_ASSERT_EQUAL(max_reads, 10);
  CU_ASSERT_FALSE(wl_next_step(s, &st)); /* stays exhausted */
  CU_ASSERT_PTR_NULL(wl_stream_new(wl, 2, 0, 1)); /* node out of range */
  wl_stream_free(s);
  wl_free(wl);
}

/* ------------------------------------------------------------ determinism */

/* Whether two streams give the same steps, key for key. */
static bool same_steps(const wl_workload *wl, uint32_t rank_a, uint64_t seed_a,
                       uint32_t rank_b, uint64_t seed_b) {
  wl_stream *a = wl_stream_new(wl, 0, rank_a, seed_a);
  wl_stream *b = wl_stream_new(wl, 0, rank_b, seed_b);
  CU_ASSERT_FATAL(a && b);
  bool same = true;
  wl_step x, y;
  for (;;) {
    bool more_a = wl_next_step(a, &x), more_b = wl_next_step(b, &y);
    CU_ASSERT_EQUAL(more_a, more_b);
    if (!more_a || !more_b) break;
    if (x.n_reads != y.n_reads || x.n_writes != y.n_writes ||
        memcmp(x.reads, y.reads, x.n_reads * sizeof(ps_key)) != 0 ||
        memcmp(x.writes, y.writes, x.n_writes * sizeof(ps_key)) != 0)
      same = false;
  }
  wl_stream_free(a);
  wl_stream_free(b);
  return same;
}

static void test_determinism(void) {
  wl_workload *wl = make_ok("{\"type\":\"zipf\",\"keys\":100000,\"skew\":0.9,"
                            "\"reads_per_step\":20,\"writes_per_step\":25,"
                            "\"steps_per_worker\":500,\"locality\":0.5}", 4);
  CU_ASSERT_TRUE(same_steps(wl, 5, 42, 5, 42));
  CU_ASSERT_FALSE(same_steps(wl, 5, 42, 5, 43));
  CU_ASSERT_FALSE(same_steps(wl, 5, 42, 6, 42)); /* ranks get own streams */
  /* A second workload built from the same object draws the same keys: the
   * permutation does not depend on anything but the key count. */
  wl_workload *again = make_ok("{\"type\":\"zipf\",\"keys\":100000,"
                               "\"skew\":0.9,\"reads_per_step\":20,"
                               "\"writes_per_step\":25,"
                               "\"steps_per_worker\":500,\"locality\":0.5}", 4);
  wl_stream *a = wl_stream_new(wl, 2, 1, 9), *b = wl_stream_new(again, 2, 1, 9);
  wl_step x, y;
  while (wl_next_step(a, &x)) {
    CU_ASSERT_FATAL(wl_next_step(b, &y));
    CU_ASSERT_EQUAL_FATAL(x.n_writes, y.n_writes);
    CU_ASSERT(memcmp(x.writes, y.writes, x.n_writes * sizeof(ps_key)) == 0);
  }
  wl_stream_free(a);
  wl_stream_free(b);
  wl_free(again);
  wl_free(wl);
}

/* ----------------------------------------------------------- distribution */

#define DIST_KEYS 50
#define DIST_DRAWS 200000

/* Pearson's chi-square of counts (indexed by key) against rank
 * probabilities proportional to 1/(r+1)^skew placed by perm. */
static double chi_square(const uint64_t *counts, double skew) {
  wl_perm perm;
  wl_perm_init(&perm, DIST_KEYS);
  double norm = 0, chi = 0;
  for (int r = 0; r < DIST_KEYS; r++) norm += pow(r + 1, -skew);
  for (int r = 0; r < DIST_KEYS; r++) {
    double expected = DIST_DRAWS * pow(r + 1, -skew) / norm;
    double d = (double)counts[wl_perm_apply(&perm, (uint64_t)r)] - expected;
    chi += d * d / expected;
  }
  return chi;
}

static void draws_for(double skew, uint64_t *counts) {
  char json[256];
  snprintf(json, sizeof json,
           "{\"type\":\"zipf\",\"keys\":%d,\"skew\":%g,\"reads_per_step\":1,"
           "\"writes_per_step\":0,\"steps_per_worker\":%d}",
           DIST_KEYS, skew, DIST_DRAWS);
  wl_workload *wl = make_ok(json, 1);
  count_reads(wl, 0, 2024, counts, DIST_KEYS);
  wl_free(wl);
}

static void test_zipf_law(void) {
  /* 49 degrees of freedom: mean 49, sd 9.9; 120 is 7 sd out. */
  uint64_t counts[DIST_KEYS];
  draws_for(1.0, counts);
  CU_ASSERT(chi_square(counts, 1.0) < 120);
  CU_ASSERT(chi_square(counts, 0.0) > 1000); /* and it is not uniform */
  CU_ASSERT(chi_square(counts, 1.3) > 1000); /* nor a steeper Zipf */
  /* Rank 0 is drawn about 2^skew times as often as rank 1. */
  wl_perm perm;
  wl_perm_init(&perm, DIST_KEYS);
  double ratio = (double)counts[wl_perm_apply(&perm, 0)] /
                 (double)counts[wl_perm_apply(&perm, 1)];
  CU_ASSERT(fabs(ratio - 2.0) < 0.1);

  draws_for(2.0, counts);
  CU_ASSERT(chi_square(counts, 2.0) < 120);
  CU_ASSERT(chi_square(counts, 1.0) > 1000);
}

static void test_skew_zero_is_uniform(void) {
  uint64_t counts[DIST_KEYS];
  draws_for(0.0, counts);
  CU_ASSERT(chi_square(counts, 0.0) < 120);
  CU_ASSERT(chi_square(counts, 0.5) > 1000);
}

static void test_hot_keys_are_spread(void) {
  /* The 10 hottest ranks of 1M keys are not the first keys: the permutation
   * scatters them over the space (and over range partitions). */
  wl_perm perm;
  wl_perm_init(&perm, 1000000);
  uint64_t below_tenth = 0;
  for (uint64_t r = 0; r < 10; r++)
    if (wl_perm_apply(&perm, r) < 100000) below_tenth++;
  CU_ASSERT(below_tenth < 10);
  CU_ASSERT(wl_perm_apply(&perm, 0) != 0 || wl_perm_apply(&perm, 1) != 1);
}

/* ------------------------------------------------------------ permutation */

static void check_bijection(uint64_t n) {
  wl_perm perm;
  wl_perm_init(&perm, n);
  unsigned char *hit = calloc(n, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(hit);
  uint64_t fixed = 0;
  for (uint64_t x = 0; x < n; x++) {
    uint64_t y = wl_perm_apply(&perm, x);
    CU_ASSERT_FATAL(y < n);
    CU_ASSERT_FATAL(!hit[y]);
    hit[y] = 1;
    fixed += y == x;
  }
  if (n >= 64) CU_ASSERT(fixed < n / 4); /* it does move keys */
  free(hit);
}

static void test_permutation_is_bijection(void) {
  for (uint64_t n = 1; n <= 300; n++) check_bijection(n);
  check_bijection(1024);
  check_bijection(1025);
  check_bijection(65537);
}

/* --------------------------------------------------------------- locality */

static void test_locality_one_stays_in_block(void) {
  /* 10 keys on 3 nodes: blocks [0,4), [4,7), [7,10) (two sizes). */
  wl_workload *wl = make_ok("{\"type\":\"zipf\",\"keys\":10,\"skew\":0.5,"
                            "\"reads_per_step\":3,\"steps_per_worker\":2000,"
                            "\"locality\":1}", 3);
  static const uint64_t lo[3] = {0, 4, 7}, hi[3] = {4, 7, 10};
  uint64_t counts[10];
  for (uint32_t node = 0; node < 3; node++) {
    count_reads(wl, node, 11, counts, 10);
    for (uint64_t k = 0; k < 10; k++) {
      bool inside = k >= lo[node] && k < hi[node];
      /* every key of the block is drawn, and no other */
      CU_ASSERT_EQUAL(counts[k] > 0, inside);
    }
  }
  wl_free(wl);
}

static void test_locality_zero_draws_everywhere(void) {
  wl_workload *wl = make_ok("{\"type\":\"zipf\",\"keys\":1000,\"skew\":0.8,"
                            "\"reads_per_step\":5,\"steps_per_worker\":4000,"
                            "\"locality\":0}", 4);
  uint64_t counts[1000], per_block[4] = {0};
  count_reads(wl, 1, 5, counts, 1000);
  for (uint64_t k = 0; k < 1000; k++) per_block[k / 250] += counts[k];
  for (int b = 0; b < 4; b++) CU_ASSERT(per_block[b] > 1000);
  wl_free(wl);
}

static void test_locality_half(void) {
  /* Half the steps stay home; the others land home a quarter of the time
   * at skew 0, so about 5/8 of reads are in node 2's block. */
  wl_workload *wl = make_ok("{\"type\":\"zipf\",\"keys\":1000,\"skew\":0,"
                            "\"reads_per_step\":4,\"steps_per_worker\":20000,"
                            "\"locality\":0.5}", 4);
  uint64_t counts[1000], home = 0, all = 0;
  count_reads(wl, 2, 5, counts, 1000);
  for (uint64_t k = 0; k < 1000; k++) {
    all += counts[k];
    if (k >= 500 && k < 750) home += counts[k];
  }
  CU_ASSERT(fabs((double)home / (double)all - 0.625) < 0.02);
  wl_free(wl);
}

/* With locality 1 every key node n draws is homed on n by range
 * partitioning: a block is the node's range partition. */
static void check_blocks_are_range_partitions(uint64_t keys, uint32_t nodes) {
  char json[256];
  snprintf(json, sizeof json,
           "{\"type\":\"zipf\",\"keys\":%llu,\"skew\":0,"
           "\"reads_per_step\":4,\"steps_per_worker\":%llu,"
           "\"locality\":1}", (unsigned long long)keys,
           (unsigned long long)(keys * 20));
  wl_workload *wl = make_ok(json, nodes);
  ps_layout l;
  memset(&l, 0, sizeof l);
  wl_tables(wl, &l);
  l.num_nodes = nodes;
  l.partition = PS_PARTITION_RANGE;
  uint64_t *counts = malloc(keys * sizeof *counts);
  for (uint32_t n = 0; n < nodes; n++) {
    count_reads(wl, n, 8, counts, keys);
    for (uint64_t k = 0; k < keys; k++)
      CU_ASSERT_EQUAL(counts[k] > 0, ps_layout_home(&l, k) == n);
  }
  free(counts);
  wl_free(wl);
}

static void test_blocks_are_range_partitions(void) {
  check_blocks_are_range_partitions(10, 3);
  check_blocks_are_range_partitions(1000, 7);
  check_blocks_are_range_partitions(999, 8);
}

static void test_more_nodes_than_keys(void) {
  /* 2 keys on 4 nodes: blocks [0,1), [1,1), [1,2), [2,2); nodes 1 and 3
   * have empty blocks and draw everywhere. */
  wl_workload *wl = make_ok("{\"type\":\"zipf\",\"keys\":2,\"skew\":1,"
                            "\"reads_per_step\":1,\"steps_per_worker\":200,"
                            "\"locality\":1}", 4);
  uint64_t counts[2];
  count_reads(wl, 1, 1, counts, 2);
  CU_ASSERT(counts[0] > 0 && counts[1] > 0);
  count_reads(wl, 3, 1, counts, 2);
  CU_ASSERT(counts[0] > 0 && counts[1] > 0);
  count_reads(wl, 2, 1, counts, 2);
  CU_ASSERT_EQUAL(counts[0], 0);
  CU_ASSERT_EQUAL(counts[1], 200);
  wl_free(wl);
}

/* ------------------------------------------------------------- the steps */

static bool distinct(const ps_key *keys, size_t n) {
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (keys[i] == keys[j]) return false;
  return true;
}

static void test_reads_deduplicated_writes_prefix(void) {
  /* Skew 3 on 100 keys: rank 0 has p = 0.83, so most steps draw it twice. */
  wl_workload *wl = make_ok("{\"type\":\"zipf\",\"keys\":100,\"skew\":3,"
                            "\"reads_per_step\":8,\"writes_per_step\":3,"
                            "\"steps_per_worker\":500}", 1);
  wl_stream *s = wl_stream_new(wl, 0, 0, 3);
  wl_step st;
  uint64_t shortened = 0;
  while (wl_next_step(s, &st)) {
    CU_ASSERT(st.n_reads >= 1 && st.n_reads <= 8);
    CU_ASSERT(distinct(st.reads, st.n_reads));
    CU_ASSERT_EQUAL(st.n_writes, st.n_reads < 3 ? st.n_reads : 3);
    CU_ASSERT_PTR_EQUAL(st.writes, st.reads); /* the first reads */
    shortened += st.n_reads < 8;
  }
  CU_ASSERT(shortened > 400);
  wl_stream_free(s);
  wl_free(wl);
}

static void test_writes_beyond_reads(void) {
  wl_workload *wl = make_ok("{\"type\":\"zipf\",\"keys\":100000,\"skew\":0.5,"
                            "\"reads_per_step\":4,\"writes_per_step\":9,"
                            "\"steps_per_worker\":300}", 1);
  wl_stream *s = wl_stream_new(wl, 0, 0, 3);
  wl_step st;
  uint64_t longer = 0;
  while (wl_next_step(s, &st)) {
    CU_ASSERT(st.n_reads <= 4);
    CU_ASSERT(st.n_writes >= st.n_reads && st.n_writes <= 9);
    CU_ASSERT(memcmp(st.writes, st.reads, st.n_reads * sizeof(ps_key)) == 0);
    CU_ASSERT(distinct(st.writes, st.n_writes));
    longer += st.n_writes > st.n_reads;
  }
  CU_ASSERT_EQUAL(longer, 300);
  wl_stream_free(s);
  wl_free(wl);
}

static void test_flops_and_empty_steps(void) {
  wl_workload *wl = make_ok("{\"type\":\"zipf\",\"keys\":5,\"reads_per_step\":0,"
                            "\"writes_per_step\":0,\"flops_per_step\":2.5e6,"
                            "\"steps_per_worker\":3}", 1);
  wl_stream *s = wl_stream_new(wl, 0, 0, 3);
  wl_step st;
  int n = 0;
  while (wl_next_step(s, &st)) {
    n++;
    CU_ASSERT_EQUAL(st.n_reads, 0);
    CU_ASSERT_EQUAL(st.n_writes, 0);
    CU_ASSERT_EQUAL(st.flops, 2.5e6);
  }
  CU_ASSERT_EQUAL(n, 3);
  wl_stream_free(s);
  wl_free(wl);
}

/* ------------------------------------------------------ step array lifetime */

/* Step 0's keys survive `more` further draws on a stream keeping `keep`. */
static bool first_step_survives(const wl_workload *wl, size_t keep,
                                size_t more) {
  wl_stream *s = wl_stream_new(wl, 0, 0, 77);
  if (keep) CU_ASSERT_EQUAL(wl_stream_keep(s, keep), PS_OK);
  wl_step first, st;
  CU_ASSERT_FATAL(wl_next_step(s, &first));
  ps_key copy[10];
  memcpy(copy, first.reads, first.n_reads * sizeof(ps_key));
  for (size_t i = 0; i < more; i++) CU_ASSERT_FATAL(wl_next_step(s, &st));
  bool same = memcmp(copy, first.reads, first.n_reads * sizeof(ps_key)) == 0;
  wl_stream_free(s);
  return same;
}

static void test_step_arrays_stay_valid(void) {
  wl_workload *wl = make_ok("{\"type\":\"zipf\",\"keys\":1000000,\"skew\":0,"
                            "\"reads_per_step\":10,"
                            "\"steps_per_worker\":10000}", 1);
  CU_ASSERT_TRUE(first_step_survives(wl, 0, WL_STEP_KEEP - 1));
  CU_ASSERT_FALSE(first_step_survives(wl, 0, WL_STEP_KEEP));
  CU_ASSERT_TRUE(first_step_survives(wl, 5, 4));
  CU_ASSERT_FALSE(first_step_survives(wl, 5, 5));

  wl_stream *s = wl_stream_new(wl, 0, 0, 1);
  CU_ASSERT_EQUAL(wl_stream_keep(s, 0), PS_ERR_INVAL);
  CU_ASSERT_EQUAL(wl_stream_keep(s, WL_STEP_KEEP + 1), PS_ERR_INVAL);
  CU_ASSERT_EQUAL(wl_stream_keep(s, 8), PS_OK);
  wl_step st;
  CU_ASSERT(wl_next_step(s, &st));
  CU_ASSERT_EQUAL(wl_stream_keep(s, 4), PS_OK); /* 8 already hold */
  CU_ASSERT_EQUAL(wl_stream_keep(s, 9), PS_ERR_INVAL);
  wl_stream_free(s);
  wl_free(wl);
}

/* The estimated hot keys are the ones a fresh stream hits most, and the same
 * every time. */
static void test_hot_keys(void) {
  wl_workload *wl = make_ok("{\"type\":\"zipf\",\"keys\":10000,\"skew\":1.2,"
                            "\"steps_per_worker\":5000}", 2);
  ps_key hot[20], again[20];
  CU_ASSERT_EQUAL_FATAL(wl_hot_keys(wl, 20, hot), 20);
  CU_ASSERT_EQUAL(wl_hot_keys(wl, 20, again), 20);
  CU_ASSERT_EQUAL(memcmp(hot, again, sizeof hot), 0);
  /* Accesses of an independent stream: the hot set takes the lion's share. */
  wl_stream *s = wl_stream_new(wl, 1, 77, 12345);
  uint64_t in_hot = 0, total = 0;
  wl_step st;
  for (int i = 0; i < 3000 && wl_next_step(s, &st); i++) {
    for (size_t j = 0; j < st.n_reads; j++, total++)
      for (int h = 0; h < 20; h++) in_hot += st.reads[j] == hot[h];
  }
  wl_stream_free(s);
  /* Zipf(1.2) over 10k keys: the top 20 ranks carry about 55% of the mass
   * (before deduplication within a step), 20 random keys 0.2%. */
  CU_ASSERT((double)in_hot / (double)total > 0.35);
  wl_free(wl);
}

/* Nothing counted, nothing to sort: the counts may be no array at all (a
 * workload whose sample steps touch no key). UBSan checks the empty case. */
/* Every workload type with held-out evaluation names its measure from the
 * one table of measures, for every way its fields can ask for one; a type
 * without evaluation names none. Results read the measure from a run's
 * config alone (wl_quality_of). */
static void test_every_quality_measure_in_the_table(void) {
  static const char *const asks[] = {"{}", "{'similarity': 's'}", "{'analogy': 'a'}",
                                     "{'quality': 'hits10'}", NULL};
  size_t n_types = 0, named = 0, n;
  const wl_quality *table = wl_quality_measures(&n);
  for (size_t i = 0; i < n; i++) {
    CU_ASSERT_PTR_EQUAL(wl_quality_find(table[i].name), &table[i]);
    CU_ASSERT_TRUE(table[i].label && *table[i].label);
  }
  for (const wl_type *const *t = wl_types; *t; t++, n_types++) {
    CU_ASSERT_EQUAL((*t)->eval != NULL, (*t)->quality_name != NULL);
    bool some = false;
    for (size_t a = 0; (*t)->quality_name && asks[a]; a++) {
      cJSON *j = unit_json(asks[a]);
      const char *name = (*t)->quality_name(j);
      if (name) {
        some = true;
        CU_ASSERT_PTR_NOT_NULL(wl_quality_find(name));
        if (!wl_quality_find(name)) fprintf(stderr, "\n  %s: \"%s\" not in the table\n", (*t)->name, name);
      }
      cJSON_Delete(j);
    }
    CU_ASSERT_EQUAL(some, (*t)->eval != NULL);
    named += some;
  }
  CU_ASSERT_EQUAL(n_types, 6);
  CU_ASSERT_EQUAL(named, 4); /* mf, kge, w2v, dnn */
  static const struct { const char *json, *label; bool higher; } cases[] = {
      {"{'type': 'mf'}", "RMSE", false},
      {"{'type': 'dnn'}", "MSE", false},
      {"{'type': 'kge'}", "filtered MRR", true},
      {"{'type': 'kge', 'quality': 'hits10'}", "filtered Hits@10", true},
      {"{'type': 'kge', 'eval': 'sampled'}", "sampled MRR", true},
      {"{'type': 'kge', 'eval': 'sampled', 'quality': 'hits10'}", "sampled Hits@10", true},
      {"{'type': 'kge', 'eval': 'filtered'}", "filtered MRR", true},
      {"{'type': 'w2v', 'similarity': 'wordnet:synonyms'}", "Spearman's rho", true},
      {"{'type': 'w2v', 'analogy': 'q.txt'}", "analogy accuracy", true},
      {"{'type': 'w2v'}", NULL, false},
      {"{'type': 'mf', 'math': 'none'}", NULL, false},
      {"{'type': 'zipf'}", NULL, false},
      {"{'type': 'nothing'}", NULL, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cJSON *j = unit_json(cases[i].json);
    const wl_quality *q = wl_quality_of(j);
    if (cases[i].label) {
      CU_ASSERT_TRUE(q && strcmp(q->label, cases[i].label) == 0 &&
                     q->higher_better == cases[i].higher);
    } else {
      CU_ASSERT_PTR_NULL(q);
    }
    cJSON_Delete(j);
  }
  CU_ASSERT_PTR_NULL(wl_quality_of(NULL));
}

/* The draws of a sampler, as a checksum. */
static uint64_t draws_of(const wl_zipf *z) {
  gsl_rng *rng = wl_rng_new(5, 0);
  uint64_t sum = 0;
  for (int i = 0; i < 1000; i++) sum = sum * 31 + wl_zipf_draw(z, rng);
  gsl_rng_free(rng);
  return sum;
}

static void test_kept_tables(void) {
  /* Kept, samplers of one size and skew share one table, which freeing a
   * sampler leaves; their draws are those of a table of their own. Not
   * kept (after keeping is turned off), each builds its own again. */
  wl_zipf own, a, b, c;
  CU_ASSERT_EQUAL_FATAL(wl_zipf_init(&own, 5000, 1.1), PS_OK);
  wl_keep_tables(true);
  CU_ASSERT_EQUAL_FATAL(wl_zipf_init(&a, 5000, 1.1), PS_OK);
  CU_ASSERT_EQUAL_FATAL(wl_zipf_init(&c, 5000, 0.9), PS_OK);
  wl_zipf_free(&a);
  CU_ASSERT_EQUAL_FATAL(wl_zipf_init(&b, 5000, 1.1), PS_OK);
  CU_ASSERT_EQUAL_FATAL(wl_zipf_init(&a, 5000, 1.1), PS_OK);
  CU_ASSERT_PTR_EQUAL(a.alias, b.alias);
  CU_ASSERT_PTR_NOT_EQUAL(a.alias, c.alias);
  CU_ASSERT_PTR_NOT_EQUAL(a.alias, own.alias);
  CU_ASSERT_EQUAL(draws_of(&a), draws_of(&own));
  wl_zipf_free(&a);
  wl_zipf_free(&b);
  wl_zipf_free(&c);
  wl_keep_tables(false);
  CU_ASSERT_EQUAL_FATAL(wl_zipf_init(&a, 5000, 1.1), PS_OK);
  CU_ASSERT_EQUAL_FATAL(wl_zipf_init(&b, 5000, 1.1), PS_OK);
  CU_ASSERT_PTR_NOT_EQUAL(a.alias, b.alias);
  CU_ASSERT_EQUAL(draws_of(&b), draws_of(&own));
  wl_zipf_free(&a);
  wl_zipf_free(&b);
  wl_zipf_free(&own);
}

static void test_hottest_of_nothing(void) {
  ps_key out[1] = {7};
  CU_ASSERT_EQUAL(wl_hottest(NULL, 0, 1, out), 0);
  CU_ASSERT_EQUAL(out[0], 7);
}

PSLAB_SUITE("zipf",
            {"hot keys", test_hot_keys},
            {"the hottest of nothing", test_hottest_of_nothing},
            {"kept tables", test_kept_tables},
            {"every quality measure in the table", test_every_quality_measure_in_the_table},
            {"validation messages", test_validation_messages},
            {"no message buffer, no nodes", test_no_message_buffer_and_no_nodes},
            {"defaults and tables", test_defaults_and_tables},
            {"determinism", test_determinism},
            {"zipf law", test_zipf_law},
            {"skew 0 is uniform", test_skew_zero_is_uniform},
            {"hot keys are spread", test_hot_keys_are_spread},
            {"permutation is a bijection", test_permutation_is_bijection},
            {"locality 1 stays in the block", test_locality_one_stays_in_block},
            {"locality 0 draws everywhere", test_locality_zero_draws_everywhere},
            {"locality 0.5", test_locality_half},
            {"blocks are range partitions",
             test_blocks_are_range_partitions},
            {"more nodes than keys", test_more_nodes_than_keys},
            {"reads deduplicated, writes a prefix",
             test_reads_deduplicated_writes_prefix},
            {"writes beyond reads", test_writes_beyond_reads},
            {"flops and empty steps", test_flops_and_empty_steps},
            {"step arrays stay valid", test_step_arrays_stay_valid})
