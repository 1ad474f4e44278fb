/*
 * The adaptive policy (policies/adaptive.c) and the core's intent registry
 * (model/intent.c) on in-memory clusters: a key intended by one node moves
 * there; by three, they get replicas; once the intents end the replicas are
 * gone and the home counts nobody; intents are acted on inside a window
 * estimated from the clock rate and the announcement round trip; and under
 * random intents every pull reads the puller's writes and every copy ends
 * equal to the pushes.
 */
#include "model/testing.h"
#include "policies/policy.h"
#include "tests/harness.h"
#include "tests/unit.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

enum { LEN = 4 };

static cJSON *json_of(const char *text) {
  cJSON *j = cJSON_Parse(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  return j;
}

static harness *make(uint32_t nodes, uint32_t workers, const cJSON *json, uint64_t seed) {
  harness_config c;
  harness_config_default(&c);
  c.nodes = nodes;
  c.workers = workers;
  c.layout.tables[0] = (ps_table){0, 64, LEN};
  c.policy = &ps_policy_adaptive;
  c.policy_json = json;
  c.seed = seed;
  harness *h = harness_new(&c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  return h;
}

/* A key whose home is node 0. */
static ps_key homed_on_0(harness *h) {
  ps_key k = 0;
  while (ps_layout_home(ps_node_layout(harness_node(h, 0)), k) != 0) k++;
  return k;
}

static void timers(harness *h, uint32_t nodes, double now) {
  harness_set_now(h, now);
  for (uint32_t n = 0; n < nodes; n++) ps_node_on_timer(harness_node(h, n), now);
  harness_drain(h);
}

static void advance(ps_worker *w, int64_t to) {
  while (ps_worker_clock(w) < to) ps_advance_clock(w, 0);
}

static void test_alone_relocates(void) {
  cJSON *json = json_of("{\"type\":\"adaptive\"}");
  harness *h = make(4, 1, json, 1);
  ps_key k = homed_on_0(h);
  CU_ASSERT_EQUAL(ps_intent(harness_worker(h, 2, 0), &k, 1, 1, 3, 0), PS_OK);
  harness_drain(h);
  CU_ASSERT_EQUAL(harness_owner(h, k), 2u);
  CU_ASSERT_EQUAL(ps_node_key_locality(harness_node(h, 2), k), PS_KEY_LOCAL);
  CU_ASSERT_EQUAL(ps_node_replica_count(harness_node(h, 2)), 0);
  CU_ASSERT_EQUAL(harness_delivered_type(h, PS_MSG_INTENT), 1);
  CU_ASSERT_EQUAL(harness_delivered_type(h, PS_MSG_INTENT_REPLY), 1);
  CU_ASSERT_EQUAL(harness_recv_errors(h), 0);
  harness_free(h);
  cJSON_Delete(json);
}

/* Three nodes intend one key: the first the home hears of moves it, the other
 * two replicate it; their pushes converge through the owner; when the
 * intents end the replicas go, and a later lone intender gets the key. */
static void test_shared_replicates_then_expires(void) {
  cJSON *json = json_of("{\"type\":\"adaptive\",\"syncs_per_sec\":10}");
  for (uint64_t seed = 1; seed <= 8; seed++) {
    harness *h = make(4, 1, json, seed);
    ps_key k = homed_on_0(h);
    for (uint32_t n = 1; n <= 3; n++)
      CU_ASSERT_EQUAL(ps_intent(harness_worker(h, n, 0), &k, 1, 1, 3, 0), PS_OK);
    harness_drain(h);
    uint32_t owner = harness_owner(h, k), replicas = 0;
    CU_ASSERT(owner >= 1 && owner <= 3);
    for (uint32_t n = 1; n <= 3; n++) {
      int where = ps_node_key_locality(harness_node(h, n), k);
      CU_ASSERT_EQUAL(where, n == owner ? PS_KEY_LOCAL : PS_KEY_REPLICA);
      replicas += where == PS_KEY_REPLICA;
    }
    CU_ASSERT_EQUAL(replicas, 2);
    float one[LEN] = {1, 0, 0, 0}, v[LEN];
    for (uint32_t n = 1; n <= 3; n++) {
      ps_ticket t;
      CU_ASSERT_EQUAL(ps_push(harness_worker(h, n, 0), &k, 1, one, LEN, &t, 0), PS_OK);
    }
    for (int r = 1; r <= 3; r++) timers(h, 4, r); /* deltas in, fresh values out */
    for (uint32_t n = 1; n <= 3; n++) {
      int rc = n == owner ? ps_node_read_owned(harness_node(h, n), k, v)
                          : ps_node_read_replica(harness_node(h, n), k, v);
      CU_ASSERT_EQUAL(rc, PS_OK);
      CU_ASSERT_EQUAL(v[0], 3.0f);
    }
    for (uint32_t n = 1; n <= 3; n++) advance(harness_worker(h, n, 0), 3);
    timers(h, 4, 10);
    for (uint32_t n = 0; n < 4; n++) CU_ASSERT_EQUAL(ps_node_replica_count(harness_node(h, n)), 0);
    CU_ASSERT_EQUAL(harness_owner(h, k), owner); /* relocated keys stay */
    CU_ASSERT_EQUAL(ps_node_read_owned(harness_node(h, owner), k, v), PS_OK);
    CU_ASSERT_EQUAL(v[0], 3.0f);
    /* Every node said it stopped: a new intender is alone, and moves it. */
    uint32_t next = owner == 1 ? 2 : 1;
    CU_ASSERT_EQUAL(ps_intent(harness_worker(h, next, 0), &k, 1, 4, 6, 10), PS_OK);
    harness_drain(h);
    CU_ASSERT_EQUAL(harness_owner(h, k), next);
    CU_ASSERT_EQUAL(harness_recv_errors(h), 0);
    harness_free(h);
  }
  cJSON_Delete(json);
}

/* With window_clocks 2, an intent for clock 10 waits until the worker is at
 * clock 8. */
static void test_window_override(void) {
  cJSON *json = json_of("{\"type\":\"adaptive\",\"window_clocks\":2}");
  harness *h = make(2, 1, json, 1);
  ps_key k = homed_on_0(h);
  ps_worker *w = harness_worker(h, 1, 0);
  CU_ASSERT_EQUAL(ps_intent(w, &k, 1, 10, 11, 0), PS_OK);
  CU_ASSERT_EQUAL(harness_in_flight(h), 0);
  advance(w, 7);
  CU_ASSERT_EQUAL(ps_intent(w, NULL, 0, 7, 7, 0), PS_OK);
  CU_ASSERT_EQUAL(harness_in_flight(h), 0);
  advance(w, 8);
  CU_ASSERT_EQUAL(ps_intent(w, NULL, 0, 8, 8, 0), PS_OK);
  CU_ASSERT_EQUAL(harness_in_flight(h), 1);
  harness_drain(h);
  CU_ASSERT_EQUAL(harness_owner(h, k), 1u);
  harness_free(h);
  cJSON_Delete(json);
}

/* Measured: a round trip of 1 ms and 1000 clocks per second make a window of
 * about 3 clocks (3 round trips). Before anything is measured, intents are
 * acted on at once. */
static void test_window_estimate(void) {
  cJSON *json = json_of("{\"type\":\"adaptive\"}");
  harness *h = make(2, 1, json, 1);
  ps_key a = homed_on_0(h), b = a + 1;
  while (ps_layout_home(ps_node_layout(harness_node(h, 0)), b) != 0) b++;
  ps_worker *w = harness_worker(h, 1, 0);
  CU_ASSERT_EQUAL(ps_intent(w, &a, 1, 1000, 1001, 0), PS_OK); /* far ahead, yet sent */
  CU_ASSERT_EQUAL(harness_in_flight(h), 1);
  harness_set_now(h, 0.001);
  harness_drain(h); /* the reply lands 1 ms later */
  advance(w, 10);
  CU_ASSERT_EQUAL(ps_intent(w, &b, 1, 20, 21, 0.010), PS_OK); /* 1000 clocks/s */
  CU_ASSERT_EQUAL(harness_in_flight(h), 0);
  advance(w, 15);
  CU_ASSERT_EQUAL(ps_intent(w, NULL, 0, 15, 15, 0.015), PS_OK);
  CU_ASSERT_EQUAL(harness_in_flight(h), 0);
  advance(w, 17);
  CU_ASSERT_EQUAL(ps_intent(w, NULL, 0, 17, 17, 0.017), PS_OK);
  CU_ASSERT_EQUAL(harness_in_flight(h), 1);
  harness_drain(h);
  CU_ASSERT_EQUAL(harness_owner(h, b), 1u);
  harness_free(h);
  cJSON_Delete(json);
}

/* Workers of 2-6 nodes signal intents a few clocks ahead on a few keys (so
 * they overlap: keys relocate, get replicated, dropped), push +1 to their own
 * component, pull and check they read their writes; timers and deliveries
 * interleave at random. Once everything ends and syncs quiesce, every owner
 * and every remaining replica holds exactly the pushes. */
static uint64_t run_random(uint64_t seed) {
  uint32_t nodes = 2 + (uint32_t)(seed % 5), workers = 1 + (uint32_t)(seed % 2);
  uint32_t total = nodes * workers, keys = 10, len = total;
  cJSON *json = json_of("{\"type\":\"adaptive\",\"syncs_per_sec\":20}");
  harness_config c;
  harness_config_default(&c);
  c.nodes = nodes;
  c.workers = workers;
  c.layout.tables[0] = (ps_table){0, keys, len};
  c.policy = &ps_policy_adaptive;
  c.policy_json = json;
  c.seed = seed;
  harness *h = harness_new(&c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  uint64_t *pushed = calloc((size_t)keys * total, sizeof *pushed);
  float *vals = calloc(len, sizeof *vals), *out = calloc(len, sizeof *out);
  double now = 0;
  for (int step = 0; step < 3000; step++) {
    now += 0.001;
    harness_set_now(h, now);
    uint32_t g = (uint32_t)(harness_rand(h) % total);
    ps_worker *w = harness_worker(h, g / workers, g % workers);
    ps_key k = harness_rand(h) % keys;
    int64_t clock = ps_worker_clock(w);
    uint64_t r = harness_rand(h) % 20;
    ps_ticket t;
    if (r < 6) {
      int64_t at = clock + (int64_t)(harness_rand(h) % 4);
      CU_ASSERT_EQUAL(ps_intent(w, &k, 1, at, at + 1 + (int64_t)(harness_rand(h) % 3), now),
                      PS_OK);
    } else if (r < 12) {
      memset(vals, 0, len * sizeof *vals);
      vals[g] = 1;
      pushed[k * total + g]++;
      int rc = ps_push(w, &k, 1, vals, len, &t, now);
      CU_ASSERT(rc == PS_OK || rc == PS_PENDING);
    } else if (r < 16) {
      int rc = ps_pull(w, &k, 1, out, len, &t, now);
      CU_ASSERT(rc == PS_OK || rc == PS_PENDING);
      if (rc == PS_PENDING) CU_ASSERT_TRUE(harness_wait(h, w, t));
      CU_ASSERT(out[g] == (float)pushed[k * total + g]);
    } else if (r < 18) {
      ps_advance_clock(w, 0);
    } else {
      ps_node_on_timer(harness_node(h, (uint32_t)(harness_rand(h) % nodes)), now);
    }
    for (uint64_t d = harness_rand(h) % 4; d > 0; d--) harness_deliver_one(h);
  }
  /* The end: every intent over, deltas handed on, sync rounds until quiet. */
  for (uint32_t n = 0; n < nodes; n++)
    for (uint32_t i = 0; i < workers; i++) advance(harness_worker(h, n, i), 1 << 20);
  harness_drain(h);
  for (int round = 0; round < 4; round++) timers(h, nodes, 100.0 + round);
  for (uint32_t n = 0; n < nodes; n++) ps_node_finish(harness_node(h, n), 200);
  for (int round = 0; round < 3; round++) timers(h, nodes, 300.0 + round);
  float *v = calloc(len, sizeof *v);
  for (ps_key k = 0; k < keys; k++) {
    uint32_t owner = harness_owner(h, k);
    CU_ASSERT_EQUAL_FATAL(ps_node_read_owned(harness_node(h, owner), k, v), PS_OK);
    for (uint32_t g = 0; g < total; g++) CU_ASSERT_EQUAL(v[g], (float)pushed[k * total + g]);
    for (uint32_t n = 0; n < nodes; n++) /* intents are over: no replica is left */
      CU_ASSERT_NOT_EQUAL(ps_node_key_locality(harness_node(h, n), k), PS_KEY_REPLICA);
  }
  uint64_t relocations = 0, syncs = 0;
  for (uint32_t n = 0; n < nodes; n++) {
    ps_node_stats s;
    ps_node_get_stats(harness_node(h, n), &s);
    relocations += s.relocations;
    syncs += s.replica_syncs;
  }
  CU_ASSERT(relocations > 0);
  CU_ASSERT_EQUAL(harness_recv_errors(h), 0);
  free(v);
  free(vals);
  free(out);
  free(pushed);
  harness_free(h);
  cJSON_Delete(json);
  return syncs;
}

static void test_random_read_your_writes_and_convergence(void) {
  uint64_t syncs = 0;
  /* PSLAB_SEEDS=n runs n seeds instead of 20 (for hunting rare failures). */
  uint64_t seeds = getenv("PSLAB_SEEDS") ? strtoull(getenv("PSLAB_SEEDS"), NULL, 10) : 20;
  for (uint64_t seed = 1; seed <= seeds; seed++) syncs += run_random(seed);
  CU_ASSERT(syncs > 0); /* replicas were made, not only relocations */
}

/* The registry alone: the home counts starts minus stops per node, answers
 * starts, and refuses intents for keys it is not home of. */
static void test_registry_counts(void) {
  harness *h = make(3, 1, NULL, 1);
  ps_key k = homed_on_0(h);
  ps_node *n1 = harness_node(h, 1), *n2 = harness_node(h, 2);
  CU_ASSERT_EQUAL(ps_node_announce_intent(n1, &k, 1, NULL, 0, 0), PS_OK);
  CU_ASSERT_EQUAL(ps_node_announce_intent(n2, &k, 1, NULL, 0, 0), PS_OK);
  CU_ASSERT_EQUAL(ps_node_announce_intent(n1, NULL, 0, &k, 1, 0), PS_OK);
  harness_drain(h);
  CU_ASSERT_EQUAL(harness_delivered_type(h, PS_MSG_INTENT_REPLY), 2); /* starts only */
  /* Node 2 stops and starts again in one message: its reply counts 1. */
  CU_ASSERT_EQUAL(ps_node_announce_intent(n2, &k, 1, &k, 1, 0), PS_OK);
  CU_ASSERT_EQUAL(harness_in_flight(h), 1);
  harness_drain(h);
  CU_ASSERT_EQUAL(harness_delivered_type(h, PS_MSG_INTENT_REPLY), 3);
  ps_key bad = UINT64_MAX;
  CU_ASSERT_EQUAL(ps_node_announce_intent(n1, &bad, 1, NULL, 0, 0), PS_ERR_KEY_RANGE);
  /* A forged INTENT to a node that is not the key's home is refused. */
  uint8_t buf[128];
  uint8_t kb[8], pb[4] = {1, 0, 0, 0};
  memcpy(kb, &k, 8);
  ps_msg m = {.type = PS_MSG_INTENT, .src = 2, .origin = 2, .key_count = 1, .keys = kb,
              .pos = pb, .seq = ps_node_next_seq(harness_node(h, 1), 2)};
  long n = harness_encode(&m, 1, buf, sizeof buf);
  CU_ASSERT(n > 0);
  CU_ASSERT_EQUAL(ps_node_recv(harness_node(h, 1), 2, buf, (size_t)n, 0), PS_ERR_PROTOCOL);
  pb[0] = 7; /* neither start nor stop */
  m.seq = ps_node_next_seq(harness_node(h, 0), 2);
  n = harness_encode(&m, 0, buf, sizeof buf);
  CU_ASSERT_EQUAL(ps_node_recv(harness_node(h, 0), 2, buf, (size_t)n, 0), PS_ERR_PROTOCOL);
  harness_free(h);
}

PSLAB_SUITE("adaptive", {"a key intended by one node moves there", test_alone_relocates},
            {"a key intended by three is replicated, and dropped when intents end",
             test_shared_replicates_then_expires},
            {"window_clocks overrides when intents are acted on", test_window_override},
            {"the window follows the clock rate and round trip", test_window_estimate},
            {"random intents: read-your-writes and convergence",
             test_random_read_your_writes_and_convergence},
            {"the home's registry counts and checks", test_registry_counts})
