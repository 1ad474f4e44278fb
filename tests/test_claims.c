/*
 * What a message may claim, on in-memory clusters: messages that a node of
 * the run could send (numbered as the claimed sender's next on its channel
 * to the receiver, and delivered in order with its own), but that claim
 * more than any node of the run can say.
 *
 * A CLOCK that jumps its sender's clock past what the gates let a node get
 * ahead is refused and counted, and a BSP worker still waits for, and then
 * reads, the write of the slowest; the sender's real CLOCKs are taken after
 * it; a jump to a stage's end (the nodes' clock marks) is taken, one past
 * it is not. A psld report naming a far window counts for the coordinator's
 * next, and the coordinator goes on deciding moves. A stop of a key's intent from a node
 * that has none open on it (forged, or a duplicate) is refused, and the
 * intents of the other nodes stay.
 */
#include "model/testing.h"
#include "policies/policy.h"
#include "tests/harness.h"
#include "tests/unit.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

enum { LEN = 4 };

/* Puts m at the end of the (src, dst) channel, numbered as src's next
 * message to dst and sealed under the run's secret: as a node holding the
 * run's secrets could send it. */
static void forge(harness *h, uint32_t src, uint32_t dst, ps_msg m) {
  m.src = src;
  m.seq = ps_node_claim_seq(harness_node(h, src), dst);
  size_t len = ps_msg_encoded_len(m.key_count, m.value_floats);
  uint8_t *buf = malloc(len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
  CU_ASSERT_EQUAL_FATAL(harness_encode(&m, dst, buf, len), (long)len);
  harness_inject(h, src, dst, buf, len);
}

/* A CLOCK from src to dst saying `tick` (clock c is tick 2c). */
static void forge_clock(harness *h, uint32_t src, uint32_t dst, int64_t tick) {
  forge(h, src, dst, (ps_msg){.type = PS_MSG_CLOCK, .origin = src, .request = (uint64_t)tick});
}

static uint64_t bad_messages(harness *h, uint32_t node) {
  ps_node_stats s;
  ps_node_get_stats(harness_node(h, node), &s);
  return s.bad_messages;
}

static ps_key key_homed_at(harness *h, uint32_t node) {
  ps_key k = 0;
  while (ps_layout_home(ps_node_layout(harness_node(h, 0)), k) != node) k++;
  return k;
}

static harness *make_clocked(uint32_t nodes, const int64_t *marks, size_t n_marks) {
  harness_config c;
  harness_config_default(&c);
  c.nodes = nodes;
  c.clock_service = true;
  c.clock_marks = marks;
  c.num_clock_marks = n_marks;
  harness *h = harness_new(&c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  return h;
}

/* ----------------------------------------------------------------- CLOCK */

/* BSP, two nodes of one worker: node 1 "says" clock 1000, then clock 2,
 * while its worker is at clock 0. Worker a, at clock 1, must wait for b's
 * clock 0 to end and then read b's write of it. */
static void test_clock_jump_is_refused(void) {
  harness *h = make_clocked(2, NULL, 0);
  ps_worker *a = harness_worker(h, 0, 0), *b = harness_worker(h, 1, 0);
  ps_consistency bsp = {PS_CONSISTENCY_SSP, 0, 0};
  CU_ASSERT_FATAL(ps_worker_set_consistency(a, bsp) == PS_OK);
  CU_ASSERT_FATAL(ps_worker_set_consistency(b, bsp) == PS_OK);
  forge_clock(h, 1, 0, 2000);
  forge_clock(h, 1, 0, 4); /* two clocks ahead: one more than BSP lets a node get */
  harness_drain(h);
  CU_ASSERT_EQUAL(bad_messages(h, 0), 2);
  CU_ASSERT_EQUAL(ps_node_min_clock(harness_node(h, 0)), 0);
  ps_advance_clock(a, 0);
  ps_ticket ta, tb;
  CU_ASSERT_EQUAL(ps_clock_wait(a, 1, NULL, 0, &ta, 0), PS_PENDING);
  harness_drain(h);
  CU_ASSERT_FALSE(ps_worker_done(a, ta)); /* b is still at clock 0 */
  ps_key k = key_homed_at(h, 0);
  float one[LEN] = {1, 1, 1, 1}, out[LEN] = {0};
  int rc = ps_push(b, &k, 1, one, LEN, &tb, 0);
  CU_ASSERT_TRUE(rc == PS_OK || (rc == PS_PENDING && harness_wait(h, b, tb)));
  ps_advance_clock(b, 0);
  harness_drain(h);
  CU_ASSERT_TRUE(ps_worker_done(a, ta)); /* b's real CLOCK was taken */
  CU_ASSERT_EQUAL(ps_node_min_clock(harness_node(h, 0)), 1);
  rc = ps_pull(a, &k, 1, out, LEN, &ta, 0);
  CU_ASSERT_TRUE(rc == PS_OK || (rc == PS_PENDING && harness_wait(h, a, ta)));
  CU_ASSERT_EQUAL(memcmp(out, one, sizeof out), 0); /* the write of clock 0 is there */
  float owned[LEN];
  CU_ASSERT_EQUAL(ps_node_read_owned(harness_node(h, 0), k, owned), PS_OK);
  CU_ASSERT_EQUAL(memcmp(owned, one, sizeof owned), 0); /* applied once */
  CU_ASSERT_EQUAL(harness_recv_errors(h), 2);           /* the forged ones only */
  harness_free(h);
}

/* Stage ends (clock marks 4 and 9): a node's jump to the next stage's end
 * is taken, one to the stage after it is not; leaving (PS_CLOCK_DONE) is. */
static void test_clock_jump_to_a_mark(void) {
  int64_t marks[2] = {4, 9};
  harness *h = make_clocked(2, marks, 2);
  ps_worker *a = harness_worker(h, 0, 0), *b = harness_worker(h, 1, 0);
  ps_consistency ssp = {PS_CONSISTENCY_SSP, 1, 0};
  CU_ASSERT_FATAL(ps_worker_set_consistency(a, ssp) == PS_OK);
  CU_ASSERT_FATAL(ps_worker_set_consistency(b, ssp) == PS_OK);
  forge_clock(h, 1, 0, 18); /* the second stage's end, before the first's */
  harness_drain(h);
  CU_ASSERT_EQUAL(bad_messages(h, 0), 1);
  CU_ASSERT_EQUAL(ps_set_clock(b, 4, 0), PS_OK); /* b's barrier of the first stage */
  harness_drain(h);
  CU_ASSERT_EQUAL(bad_messages(h, 0), 1);
  CU_ASSERT_EQUAL(ps_set_clock(a, 4, 0), PS_OK);
  harness_drain(h);
  CU_ASSERT_EQUAL(ps_node_min_clock(harness_node(h, 0)), 4);
  CU_ASSERT_EQUAL(ps_node_min_clock(harness_node(h, 1)), 4);
  CU_ASSERT_EQUAL(ps_set_clock(b, PS_CLOCK_DONE, 0), PS_OK);
  harness_drain(h);
  CU_ASSERT_EQUAL(harness_recv_errors(h), 1);
  harness_free(h);
}

/* ------------------------------------------------------------------ psld */

enum { PSLD_REPORT = 1 }; /* psld's kind of message (policies/psld.c) */

/* A psld report from src to the coordinator (node 0) naming window win. */
static void forge_report(harness *h, uint32_t src, uint64_t win) {
  uint8_t words[16], busy[4];
  uint64_t w[2] = {win, 1000};
  float f = 0.5f;
  memcpy(words, w, sizeof words);
  memcpy(busy, &f, sizeof busy);
  uint8_t pos[8] = {0};
  forge(h, src, 0, (ps_msg){.type = PS_MSG_POLICY, .origin = src, .request = PSLD_REPORT,
                            .key_count = 2, .value_floats = 1, .keys = words, .pos = pos,
                            .values = busy});
}

/* Two servers; node 1's worker reads keys homed on node 0 every window, so
 * node 0 serves all the load and psld moves blocks to node 1. Reports for
 * windows 2^62 and 2 (at window 0) are taken as reports of window 1, the
 * coordinator's next, and do not stop it. */
static void test_psld_far_window_is_bounded(void) {
  cJSON *json = cJSON_Parse("{\"type\":\"psld\",\"window_s\":0.1,\"explore\":0}");
  CU_ASSERT_PTR_NOT_NULL_FATAL(json);
  harness_config c;
  harness_config_default(&c);
  c.policy = &ps_policy_psld;
  c.policy_json = json;
  char err[256];
  CU_ASSERT_FATAL(ps_policy_psld.configure(json, &c.settings, err, sizeof err) == PS_OK);
  harness *h = harness_new(&c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  forge_report(h, 1, 1ull << 62);
  forge_report(h, 1, 2);
  harness_drain(h);
  CU_ASSERT_EQUAL(bad_messages(h, 0), 0);
  ps_worker *w = harness_worker(h, 1, 0);
  ps_key keys[8];
  keys[0] = key_homed_at(h, 0);
  for (int i = 1; i < 8; i++) {
    keys[i] = keys[i - 1] + 1;
    while (ps_layout_home(ps_node_layout(harness_node(h, 0)), keys[i]) != 0) keys[i]++;
  }
  float out[8 * LEN];
  for (int win = 1; win <= 6; win++) {
    double now = 0.1 * win;
    harness_set_now(h, now);
    ps_ticket t;
    int rc = ps_pull(w, keys, 8, out, 8 * LEN, &t, now);
    CU_ASSERT_TRUE(rc == PS_OK || (rc == PS_PENDING && harness_wait(h, w, t)));
    for (uint32_t n = 0; n < 2; n++) ps_node_on_timer(harness_node(h, n), now);
    harness_drain(h);
  }
  CU_ASSERT(harness_delivered_type(h, PS_MSG_MOVE) > 0); /* it still rebalances */
  CU_ASSERT_EQUAL(harness_recv_errors(h), 0);
  harness_free(h);
  cJSON_Delete(json);
}

/* --------------------------------------------------------------- intents */

/* The counts the homes answered each node's starts with (last one). */
static uint32_t answered[4];

static int counts_init(ps_node *node, const cJSON *json, void **state) {
  (void)json;
  *state = &answered[ps_node_id(node)];
  return PS_OK;
}

static void counts_on_intenders(void *state, const ps_key *keys, const uint32_t *counts,
                                size_t n, double sent_at, double now) {
  (void)keys, (void)sent_at, (void)now;
  if (n) *(uint32_t *)state = counts[n - 1];
}

static const ps_policy_ops counts_policy = {
    .name = "counts", .init = counts_init, .on_intenders = counts_on_intenders};

/* An INTENT from src to k's home stopping (pos 0) or starting (pos 1) k. */
static void forge_intent(harness *h, uint32_t src, ps_key k, uint8_t start) {
  uint8_t kb[8], pb[4] = {start, 0, 0, 0};
  memcpy(kb, &k, sizeof kb);
  uint32_t home = ps_layout_home(ps_node_layout(harness_node(h, 0)), k);
  forge(h, src, home, (ps_msg){.type = PS_MSG_INTENT, .origin = src, .key_count = 1,
                               .keys = kb, .pos = pb});
}

/* Node 1 intends k (homed on node 0). A stop "from" node 2, which intends
 * nothing, and later a second stop of node 2's one intent are refused:
 * node 1's intent is still counted when node 2 starts again. */
static void test_intent_stops_are_per_node(void) {
  memset(answered, 0, sizeof answered);
  harness_config c;
  harness_config_default(&c);
  c.nodes = 3;
  c.policy = &counts_policy;
  harness *h = harness_new(&c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  ps_key k = key_homed_at(h, 0);
  ps_node *n1 = harness_node(h, 1), *n2 = harness_node(h, 2);
  CU_ASSERT_EQUAL(ps_node_announce_intent(n1, &k, 1, NULL, 0, 0), PS_OK);
  harness_drain(h);
  CU_ASSERT_EQUAL(answered[1], 1);
  forge_intent(h, 2, k, 0); /* node 2 has no intent on k */
  harness_drain(h);
  CU_ASSERT_EQUAL(bad_messages(h, 0), 1);
  CU_ASSERT_EQUAL(ps_node_announce_intent(n2, &k, 1, NULL, 0, 0), PS_OK);
  harness_drain(h);
  CU_ASSERT_EQUAL(answered[2], 2); /* node 1 and node 2 */
  CU_ASSERT_EQUAL(ps_node_announce_intent(n2, NULL, 0, &k, 1, 0), PS_OK);
  forge_intent(h, 2, k, 0); /* the stop, duplicated */
  harness_drain(h);
  CU_ASSERT_EQUAL(bad_messages(h, 0), 2);
  CU_ASSERT_EQUAL(ps_node_announce_intent(n2, &k, 1, NULL, 0, 0), PS_OK);
  harness_drain(h);
  CU_ASSERT_EQUAL(answered[2], 2); /* node 1's intent stayed */
  /* Node 1's own stop ends its intent: node 2 is then alone. */
  CU_ASSERT_EQUAL(ps_node_announce_intent(n1, NULL, 0, &k, 1, 0), PS_OK);
  CU_ASSERT_EQUAL(ps_node_announce_intent(n2, &k, 1, &k, 1, 0), PS_OK);
  harness_drain(h);
  CU_ASSERT_EQUAL(answered[2], 1);
  CU_ASSERT_EQUAL(harness_recv_errors(h), 2);
  harness_free(h);
}

PSLAB_SUITE("claims", {"a CLOCK jump is refused; BSP reads what it must", test_clock_jump_is_refused},
            {"a CLOCK may jump to the next stage's end, not past it", test_clock_jump_to_a_mark},
            {"a psld report for a far window counts for the next; moves go on",
             test_psld_far_window_is_bounded},
            {"intent stops end only their sender's own intents", test_intent_stops_are_per_node})
