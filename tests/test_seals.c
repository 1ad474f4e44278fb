/*
 * Seals (the wire format in model/ps.h): every message carries a keyed MAC
 * under the run's secret, checked before the message takes a number. Here
 * messages are forged, raced and replayed the way anyone who can reach a
 * node could: numbered correctly on their channel, ahead of the real ones,
 * with and without the secret. None may lose, double or forge a value, and
 * every real operation still completes. Every case runs under both seals
 * (GMAC where this CPU makes it, and SipHash).
 */
#include "model/testing.h"
#include "tests/harness.h"
#include "tests/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static harness *make(uint32_t nodes, uint64_t seed, bool shared, uint32_t wrong_secret) {
  harness_config c;
  harness_config_default(&c);
  c.nodes = nodes;
  c.layout.tables[0] = (ps_table){100, 32, 4};
  c.seed = seed;
  c.shared_sends = shared;
  c.wrong_secret = wrong_secret;
  return harness_new(&c);
}

/* A key of the table whose home is `home`. */
static ps_key key_homed_at(harness *h, uint32_t home) {
  const ps_layout *l = ps_node_layout(harness_node(h, 0));
  for (ps_key k = 100;; k++)
    if (ps_layout_home(l, k) == home) return k;
}

/* An outsider's message of one key to node dst as if from src, numbered as
 * dst takes next from src (the number the real message behind it needs),
 * without the run's seal; ps_node_recv's result. */
static int forge(harness *h, uint32_t src, uint32_t dst, uint8_t type, ps_key k,
                 uint64_t request, const float *vals, uint32_t n_vals) {
  uint8_t buf[256];
  uint32_t pos = 0;
  ps_msg m = {.type = type, .src = src, .dst = dst, .origin = dst, .request = request,
              .key_count = 1, .value_floats = n_vals, .keys = (const uint8_t *)&k,
              .pos = (const uint8_t *)&pos, .values = (const uint8_t *)vals,
              .seq = ps_node_next_seq(harness_node(h, dst), src)};
  long len = ps_msg_encode(&m, buf, sizeof buf);
  CU_ASSERT_FATAL(len > 0);
  return ps_node_recv(harness_node(h, dst), src, buf, (size_t)len, 0);
}

static uint64_t bad_seals(harness *h, uint32_t node) {
  ps_node_stats s;
  ps_node_get_stats(harness_node(h, node), &s);
  return s.bad_seals;
}

static float owned_value(harness *h, uint32_t node, ps_key k) {
  float v[4] = {0};
  CU_ASSERT_EQUAL(ps_node_read_owned(harness_node(h, node), k, v), PS_OK);
  return v[0];
}

/* The number race, PUSH: a forged PUSH numbered as the owner takes next
 * from the pusher's node reaches it ahead of the real one. It is refused
 * for its seal without taking the number, so the real PUSH lands, its ticket
 * completes, and the value is the real one's. (Checked before the seal, the
 * number went to the forgery and the real PUSH was refused as a duplicate.) */
static void test_number_race_push(void) {
  harness *h = make(2, 1, false, 0);
  ps_key k = key_homed_at(h, 0);
  float ones[4] = {1, 1, 1, 1}, forged[4] = {99, 99, 99, 99};
  ps_worker *w = harness_worker(h, 1, 0);
  ps_ticket t;
  CU_ASSERT_EQUAL(ps_push(w, &k, 1, ones, 4, &t, 0), PS_PENDING);
  uint32_t next = ps_node_next_seq(harness_node(h, 0), 1);
  CU_ASSERT_EQUAL(forge(h, 1, 0, PS_MSG_PUSH, k, t, forged, 4), PS_ERR_SEAL);
  CU_ASSERT_EQUAL(ps_node_next_seq(harness_node(h, 0), 1), next); /* nothing taken */
  CU_ASSERT_TRUE(harness_wait(h, w, t));
  CU_ASSERT_EQUAL(owned_value(h, 0, k), 1.0f);
  CU_ASSERT_EQUAL(bad_seals(h, 0), 1);
  CU_ASSERT_EQUAL(harness_recv_errors(h), 0);
  harness_free(h);
}

/* The number race, TRANSFER: node 2 asks for a key node 1 owns; node 1's
 * TRANSFER is on its way when a forged TRANSFER, numbered as node 2 takes
 * next from node 1, arrives first. The forgery is refused, the real one
 * lands: the key moves with its value, the localize completes, nothing is
 * left in transfer. */
static void test_number_race_transfer(void) {
  harness *h = make(3, 7, false, 0);
  ps_key k = key_homed_at(h, 0);
  float threes[4] = {3, 3, 3, 3}, forged[4] = {99, 99, 99, 99};
  ps_ticket t;
  ps_worker *w1 = harness_worker(h, 1, 0), *w2 = harness_worker(h, 2, 0);
  CU_ASSERT_EQUAL(ps_localize(w1, &k, 1, &t, 0), PS_PENDING);
  CU_ASSERT_TRUE(harness_wait(h, w1, t));
  CU_ASSERT_EQUAL(ps_push(w1, &k, 1, threes, 4, &t, 0), PS_OK);
  CU_ASSERT_EQUAL(ps_localize(w2, &k, 1, &t, 0), PS_PENDING);
  CU_ASSERT_TRUE(harness_deliver_from(h, 2, 0)); /* LOCALIZE at the home */
  CU_ASSERT_TRUE(harness_deliver_from(h, 0, 1)); /* HANDOVER at the owner */
  CU_ASSERT_EQUAL(harness_in_flight(h), 1);      /* TRANSFER 1 -> 2 */
  CU_ASSERT_EQUAL(forge(h, 1, 2, PS_MSG_TRANSFER, k, 0, forged, 4), PS_ERR_SEAL);
  CU_ASSERT_TRUE(harness_wait(h, w2, t));
  CU_ASSERT_EQUAL(owned_value(h, 2, k), 3.0f);
  double sum = 0;
  for (uint32_t n = 0; n < 3; n++) {
    double s;
    uint64_t moving;
    ps_node_owned_sum(harness_node(h, n), &s, &moving);
    CU_ASSERT_EQUAL(moving, 0);
    sum += s;
  }
  CU_ASSERT_DOUBLE_EQUAL(sum, 12.0, 1e-9);
  CU_ASSERT_EQUAL(harness_recv_errors(h), 0);
  harness_free(h);
}

/* Replies: a forged PULL_REPLY for a real pending pull, and a forged
 * WRITE_ACK for a real pending push, each numbered as the real reply will
 * be, are refused; the tickets wait for and complete with the real ones. */
static void test_forged_replies_refused(void) {
  harness *h = make(2, 3, false, 0);
  ps_key k = key_homed_at(h, 1);
  float fours[4] = {4, 4, 4, 4}, forged[4] = {9, 9, 9, 9}, out[4] = {0};
  ps_worker *w = harness_worker(h, 0, 0);
  ps_ticket push, pull;
  CU_ASSERT_EQUAL(ps_push(w, &k, 1, fours, 4, &push, 0), PS_PENDING);
  CU_ASSERT_EQUAL(forge(h, 1, 0, PS_MSG_WRITE_ACK, k, push, NULL, 0), PS_ERR_SEAL);
  CU_ASSERT_FALSE(ps_worker_done(w, push));
  CU_ASSERT_TRUE(harness_wait(h, w, push));
  CU_ASSERT_EQUAL(owned_value(h, 1, k), 4.0f); /* acknowledged once applied */
  CU_ASSERT_EQUAL(ps_pull(w, &k, 1, out, 4, &pull, 0), PS_PENDING);
  CU_ASSERT_EQUAL(forge(h, 1, 0, PS_MSG_PULL_REPLY, k, pull, forged, 4), PS_ERR_SEAL);
  CU_ASSERT_FALSE(ps_worker_done(w, pull));
  CU_ASSERT_TRUE(harness_wait(h, w, pull));
  CU_ASSERT_EQUAL(out[0], 4.0f);
  CU_ASSERT_EQUAL(bad_seals(h, 0), 2);
  CU_ASSERT_EQUAL(harness_recv_errors(h), 0);
  harness_free(h);
}

/* Additions at the owner: a forged PUSH and a forged DELTA (to a key kept
 * by all-reduce, which takes DELTAs) add nothing. */
static void test_forged_additions_refused(void) {
  harness *h = make(2, 4, false, 0);
  ps_key k = key_homed_at(h, 0);
  for (uint32_t n = 0; n < 2; n++)
    CU_ASSERT_EQUAL(ps_node_add_initial_replicas(harness_node(h, n), &k, 1, PS_SYNC_ALLREDUCE),
                    PS_OK);
  float ones[4] = {1, 1, 1, 1};
  CU_ASSERT_EQUAL(forge(h, 1, 0, PS_MSG_PUSH, k, 1, ones, 4), PS_ERR_SEAL);
  CU_ASSERT_EQUAL(forge(h, 1, 0, PS_MSG_DELTA, k, 0, ones, 4), PS_ERR_SEAL);
  CU_ASSERT_EQUAL(forge(h, 1, 0, PS_MSG_SET, k, 1, ones, 4), PS_ERR_SEAL);
  harness_drain(h);
  CU_ASSERT_EQUAL(owned_value(h, 0, k), 0.0f);
  CU_ASSERT_EQUAL(bad_seals(h, 0), 3);
  harness_free(h);
}

/* A real PUSH replayed: the same bytes again are a duplicate; renumbered as
 * the next on the channel (its seal then no longer matches) they are
 * refused for the seal. Applied once either way. */
static void test_replayed_push_applied_once(void) {
  harness *h = make(2, 5, false, 0);
  ps_key k = key_homed_at(h, 0);
  float twos[4] = {2, 2, 2, 2};
  ps_worker *w = harness_worker(h, 1, 0);
  ps_ticket t;
  CU_ASSERT_EQUAL(ps_push(w, &k, 1, twos, 4, &t, 0), PS_PENDING);
  uint8_t *copy;
  size_t len;
  uint32_t shared_seq;
  CU_ASSERT_FATAL(harness_peek(h, 1, 0, &copy, &len, &shared_seq));
  CU_ASSERT_TRUE(harness_wait(h, w, t));
  ps_node *n0 = harness_node(h, 0);
  CU_ASSERT_EQUAL(ps_node_recv(n0, 1, copy, len, 0), PS_ERR_DUPLICATE);
  ps_msg_put_dst_seq(copy, 0, ps_node_next_seq(n0, 1));
  CU_ASSERT_EQUAL(ps_node_recv(n0, 1, copy, len, 0), PS_ERR_SEAL);
  CU_ASSERT_EQUAL(owned_value(h, 0, k), 2.0f);
  free(copy);
  harness_free(h);
}

/* A shared all-reduce DELTA (env.send_shared: one buffer, numbered per
 * channel by the backend) replayed to a node that took it, under the same
 * channel number or the next one: refused without taking the number, so
 * the sender's next real message there still lands; every copy ends with
 * the push once. */
static void test_replayed_shared_delta_applied_once(void) {
  harness *h = make(3, 6, true, 0);
  ps_key k = key_homed_at(h, 0);
  for (uint32_t n = 0; n < 3; n++)
    CU_ASSERT_EQUAL(ps_node_add_initial_replicas(harness_node(h, n), &k, 1, PS_SYNC_ALLREDUCE),
                    PS_OK);
  float ones[4] = {1, 1, 1, 1};
  ps_ticket t;
  CU_ASSERT_EQUAL(ps_push(harness_worker(h, 1, 0), &k, 1, ones, 4, &t, 0), PS_OK);
  CU_ASSERT_EQUAL(ps_node_sync_replicas(harness_node(h, 1), PS_SYNC_ALLREDUCE, 0, 0), 1);
  uint8_t *copy;
  size_t len;
  uint32_t seq;
  CU_ASSERT_FATAL(harness_peek(h, 1, 2, &copy, &len, &seq));
  CU_ASSERT_NOT_EQUAL(seq, 0); /* a shared one */
  CU_ASSERT_TRUE(harness_deliver_from(h, 1, 2));
  ps_node *n2 = harness_node(h, 2);
  CU_ASSERT_EQUAL(ps_node_recv_numbered(n2, 1, seq, copy, len, 0), PS_ERR_DUPLICATE);
  CU_ASSERT_EQUAL(ps_node_recv_numbered(n2, 1, seq + 1, copy, len, 0), PS_ERR_DUPLICATE);
  CU_ASSERT_EQUAL(ps_node_next_seq(n2, 1), seq + 1);
  /* Node 0 has not had it yet: a copy ahead of the real one is the real
   * one's content, taken once; the real one is then a duplicate. */
  CU_ASSERT_EQUAL(ps_node_recv_numbered(harness_node(h, 0), 1, seq, copy, len, 0), PS_OK);
  harness_drain(h);
  CU_ASSERT_EQUAL(owned_value(h, 0, k), 1.0f);
  float v[4];
  for (uint32_t n = 1; n < 3; n++) {
    CU_ASSERT_EQUAL(ps_node_read_replica(harness_node(h, n), k, v), PS_OK);
    CU_ASSERT_EQUAL(v[0], 1.0f);
  }
  /* The channel from 1 goes on: the next round lands everywhere. */
  CU_ASSERT_EQUAL(ps_push(harness_worker(h, 1, 0), &k, 1, ones, 4, &t, 0), PS_OK);
  CU_ASSERT_EQUAL(ps_node_sync_replicas(harness_node(h, 1), PS_SYNC_ALLREDUCE, 0, 0), 1);
  harness_drain(h);
  CU_ASSERT_EQUAL(owned_value(h, 0, k), 2.0f);
  CU_ASSERT_EQUAL(ps_node_read_replica(n2, k, v), PS_OK);
  CU_ASSERT_EQUAL(v[0], 2.0f);
  free(copy);
  harness_free(h);
}

/* A node whose secret is not the run's (node 2): every message it sends is
 * refused and counted, none takes a number, and nothing it pushes reaches a
 * value; its operations never complete, while the others' run as usual. */
static void test_wrong_secret_node_refused(void) {
  harness *h = make(3, 8, false, 1u << 2);
  ps_key k = key_homed_at(h, 0);
  float ones[4] = {1, 1, 1, 1}, out[4];
  ps_ticket t;
  ps_worker *stranger = harness_worker(h, 2, 0), *w1 = harness_worker(h, 1, 0);
  CU_ASSERT_EQUAL(ps_push(stranger, &k, 1, ones, 4, &t, 0), PS_PENDING);
  ps_ticket pull;
  CU_ASSERT_EQUAL(ps_pull(stranger, &k, 1, out, 4, &pull, 0), PS_PENDING);
  ps_ticket loc;
  CU_ASSERT_EQUAL(ps_localize(stranger, &k, 1, &loc, 0), PS_PENDING);
  harness_drain(h);
  CU_ASSERT_FALSE(ps_worker_done(stranger, t));
  CU_ASSERT_EQUAL(bad_seals(h, 0), 3);
  CU_ASSERT_EQUAL(ps_node_next_seq(harness_node(h, 0), 2), 1);
  CU_ASSERT_EQUAL(harness_owner(h, k), 0);
  CU_ASSERT_EQUAL(ps_push(w1, &k, 1, ones, 4, &t, 0), PS_PENDING);
  CU_ASSERT_TRUE(harness_wait(h, w1, t));
  CU_ASSERT_EQUAL(owned_value(h, 0, k), 1.0f);
  harness_free(h);
}

/* Every byte the seal covers counts: a member's message with any one byte
 * after the magic changed is refused (for its seal, or earlier by the
 * decoder) without taking a number, and the unchanged one is then taken. */
static void test_seal_covers_every_byte(void) {
  harness *h = make(2, 9, false, 0);
  ps_key k = key_homed_at(h, 0);
  float ones[4] = {1, 1, 1, 1};
  uint32_t pos = 0;
  ps_node *n0 = harness_node(h, 0);
  ps_msg m = {.type = PS_MSG_PUSH, .src = 1, .origin = 1, .key_count = 1, .value_floats = 4,
              .keys = (const uint8_t *)&k, .pos = (const uint8_t *)&pos,
              .values = (const uint8_t *)ones, .seq = ps_node_next_seq(n0, 1)};
  uint8_t buf[256];
  size_t len = (size_t)harness_encode(&m, 0, buf, sizeof buf);
  for (size_t i = 4; i < len; i++) {
    buf[i] ^= 0x10;
    int rc = ps_node_recv(n0, 1, buf, len, 0);
    CU_ASSERT(rc != PS_OK && rc != PS_ERR_DUPLICATE && rc != PS_ERR_SEQUENCE);
    buf[i] ^= 0x10;
  }
  CU_ASSERT_EQUAL(ps_node_next_seq(n0, 1), m.seq);
  CU_ASSERT_EQUAL(ps_node_recv(n0, 1, buf, len, 0), PS_OK);
  CU_ASSERT_EQUAL(owned_value(h, 0, k), 1.0f);
  harness_free(h);
}

/* Every message type, forged by an outsider and numbered as the receiver
 * takes next: refused for its seal, counted, its number left to the real
 * message; the channel then goes on with a real PUSH. */
static void test_every_type_forged_is_refused(void) {
  harness *h = make(2, 10, false, 0);
  ps_key k = key_homed_at(h, 0);
  float vals[4] = {5, 5, 5, 5};
  ps_node *n0 = harness_node(h, 0);
  uint32_t seq = ps_node_next_seq(n0, 1);
  uint64_t forged = 0;
  for (int type = 1; type < PS_MSG_TYPE_END; type++) {
    bool values = ps_msg_type_has_values(type);
    int rc = forge(h, 1, 0, (uint8_t)type, k, 1, values ? vals : NULL, values ? 4 : 0);
    if (rc != PS_ERR_SEAL)
      fprintf(stderr, "\n  a forged %s: %s\n", ps_msg_type_name(type), ps_strerror(rc));
    CU_ASSERT_EQUAL(rc, PS_ERR_SEAL);
    forged++;
  }
  CU_ASSERT_EQUAL(bad_seals(h, 0), forged);
  CU_ASSERT_EQUAL(ps_node_next_seq(n0, 1), seq);
  ps_ticket t;
  float ones[4] = {1, 1, 1, 1};
  ps_worker *w = harness_worker(h, 1, 0);
  CU_ASSERT_EQUAL(ps_push(w, &k, 1, ones, 4, &t, 0), PS_PENDING);
  CU_ASSERT_TRUE(harness_wait(h, w, t));
  CU_ASSERT_EQUAL(owned_value(h, 0, k), 1.0f);
  CU_ASSERT_EQUAL(harness_recv_errors(h), 0);
  harness_free(h);
}

static void drop(void *ctx, uint32_t dst, uint8_t *buf, size_t len) {
  (void)ctx, (void)dst, (void)len;
  free(buf);
}

/* A config of node 0 of two, one table of 8 keys, that sends nowhere. */
static void two_node_config(ps_node_config *c) {
  ps_node_config_default(c);
  c->layout.num_tables = 1;
  c->layout.tables[0] = (ps_table){0, 8, 1};
  c->layout.num_nodes = 2;
  c->env.send = drop;
}

/* A node of several needs a secret: the core has no default one. A node
 * alone receives nothing and needs none. */
static void test_node_needs_a_secret(void) {
  ps_node_config c;
  two_node_config(&c);
  c.seal = harness_seal();
  CU_ASSERT_PTR_NULL(ps_node_new(&c));
  memcpy(c.secret, harness_secret(), PS_SECRET_LEN);
  ps_node *n = ps_node_new(&c);
  CU_ASSERT_PTR_NOT_NULL(n);
  ps_node_free(n);
  memset(c.secret, 0, PS_SECRET_LEN);
  c.layout.num_nodes = 1;
  n = ps_node_new(&c);
  CU_ASSERT_PTR_NOT_NULL(n);
  ps_node_free(n);
}

/* A node that seals with the other algorithm (node 2; same secret): like a
 * stranger, every message it sends is refused and counted, none takes a
 * number or reaches a value, and the others run as usual. */
static void test_other_seal_node_refused(void) {
  harness_config c;
  harness_config_default(&c);
  c.nodes = 3;
  c.layout.tables[0] = (ps_table){100, 32, 4};
  c.seed = 11;
  c.other_seal = 1u << 2;
  harness *h = harness_new(&c);
  ps_key k = key_homed_at(h, 0);
  float ones[4] = {1, 1, 1, 1}, out[4];
  ps_ticket t, pull;
  ps_worker *other = harness_worker(h, 2, 0), *w1 = harness_worker(h, 1, 0);
  CU_ASSERT_EQUAL(ps_push(other, &k, 1, ones, 4, &t, 0), PS_PENDING);
  CU_ASSERT_EQUAL(ps_pull(other, &k, 1, out, 4, &pull, 0), PS_PENDING);
  harness_drain(h);
  CU_ASSERT_FALSE(ps_worker_done(other, t));
  CU_ASSERT_FALSE(ps_worker_done(other, pull));
  CU_ASSERT_EQUAL(bad_seals(h, 0), 2);
  CU_ASSERT_EQUAL(ps_node_next_seq(harness_node(h, 0), 2), 1);
  CU_ASSERT_EQUAL(owned_value(h, 0, k), 0.0f);
  CU_ASSERT_EQUAL(ps_push(w1, &k, 1, ones, 4, &t, 0), PS_PENDING);
  CU_ASSERT_TRUE(harness_wait(h, w1, t));
  CU_ASSERT_EQUAL(owned_value(h, 0, k), 1.0f);
  harness_free(h);
}

/* The two seals of one message under one secret differ (so a run under
 * GMAC really seals with it), and a GMAC seal depends on the key's second
 * half, which SipHash never reads. */
static void test_seals_differ(void) {
  if (!ps_seal_gmac_available()) return;
  ps_key k = 100;
  uint32_t pos = 0;
  ps_msg m = {.type = PS_MSG_PULL, .src = 1, .dst = 0, .seq = 1, .origin = 1, .key_count = 1,
              .keys = (const uint8_t *)&k, .pos = (const uint8_t *)&pos};
  uint8_t a[128], b[128], c[128];
  long len = ps_msg_encode(&m, a, sizeof a);
  CU_ASSERT_FATAL(len > 0);
  memcpy(b, a, (size_t)len);
  memcpy(c, a, (size_t)len);
  uint8_t other[PS_SECRET_LEN];
  memcpy(other, harness_secret(), PS_SECRET_LEN);
  other[PS_SECRET_LEN - 1] ^= 1;
  ps_msg_put_seal(a, (size_t)len, harness_secret(), PS_SEAL_SIPHASH);
  ps_msg_put_seal(b, (size_t)len, harness_secret(), PS_SEAL_GMAC);
  ps_msg_put_seal(c, (size_t)len, other, PS_SEAL_GMAC);
  CU_ASSERT_NOT_EQUAL(memcmp(a + 4, b + 4, 8), 0);
  CU_ASSERT_NOT_EQUAL(memcmp(b + 4, c + 4, 8), 0);
}

/* A channel never gives a number twice (GMAC's nonce is src, dst and the
 * number): a node whose channel to node 1 has used its last number refuses
 * to send there (PS_ERR_LIMIT) and sends nothing; its other channels go on. */
static void test_channel_numbers_never_wrap(void) {
  harness *h = make(3, 12, false, 0);
  ps_key k1 = key_homed_at(h, 1), k2 = key_homed_at(h, 2);
  float ones[4] = {1, 1, 1, 1};
  ps_worker *w = harness_worker(h, 0, 0);
  ps_ticket t;
  ps_node_set_sent(harness_node(h, 0), 1, UINT32_MAX);
  CU_ASSERT_EQUAL(ps_push(w, &k1, 1, ones, 4, &t, 0), PS_ERR_LIMIT);
  CU_ASSERT_EQUAL(harness_in_flight(h), 0);
  CU_ASSERT_EQUAL(ps_push(w, &k2, 1, ones, 4, &t, 0), PS_PENDING);
  CU_ASSERT_TRUE(harness_wait(h, w, t));
  CU_ASSERT_EQUAL(owned_value(h, 2, k2), 1.0f);
  harness_free(h);
}

/* A node is made only with a seal this CPU makes. */
static void test_node_needs_a_seal_it_makes(void) {
  ps_node_config c;
  two_node_config(&c);
  memcpy(c.secret, harness_secret(), PS_SECRET_LEN);
  c.seal = PS_SEAL_END;
  CU_ASSERT_PTR_NULL(ps_node_new(&c));
  c.seal = PS_SEAL_GMAC;
  ps_node *n = ps_node_new(&c);
  CU_ASSERT_EQUAL(n != NULL, ps_seal_gmac_available());
  ps_node_free(n);
}

/* Runs fn under seal s (GMAC skipped, and said so, where this CPU has
 * none), then goes back to SipHash. */
static void under(ps_seal s, void (*fn)(void)) {
  if (s == PS_SEAL_GMAC && !ps_seal_gmac_available()) {
    fprintf(stderr, "(this CPU makes no GMAC seals: skipped) ");
    return;
  }
  harness_use_seal(s);
  fn();
  harness_use_seal(PS_SEAL_SIPHASH);
}

#define UNDER_BOTH(fn)                                         \
  static void fn##_siphash(void) { under(PS_SEAL_SIPHASH, fn); } \
  static void fn##_gmac(void) { under(PS_SEAL_GMAC, fn); }
#define BOTH(name, fn) {name " (siphash)", fn##_siphash}, {name " (gmac)", fn##_gmac}

UNDER_BOTH(test_number_race_push)
UNDER_BOTH(test_number_race_transfer)
UNDER_BOTH(test_forged_replies_refused)
UNDER_BOTH(test_forged_additions_refused)
UNDER_BOTH(test_replayed_push_applied_once)
UNDER_BOTH(test_replayed_shared_delta_applied_once)
UNDER_BOTH(test_wrong_secret_node_refused)
UNDER_BOTH(test_seal_covers_every_byte)
UNDER_BOTH(test_every_type_forged_is_refused)
UNDER_BOTH(test_node_needs_a_secret)
UNDER_BOTH(test_other_seal_node_refused)
UNDER_BOTH(test_channel_numbers_never_wrap)

PSLAB_SUITE("seals", BOTH("the number race: a forged PUSH ahead of the real one",
                          test_number_race_push),
            BOTH("the number race: a forged TRANSFER ahead of the real one",
                 test_number_race_transfer),
            BOTH("forged replies are refused, the real ones complete",
                 test_forged_replies_refused),
            BOTH("forged additions at the owner add nothing", test_forged_additions_refused),
            BOTH("a replayed PUSH is applied once", test_replayed_push_applied_once),
            BOTH("a replayed shared DELTA is applied once",
                 test_replayed_shared_delta_applied_once),
            BOTH("a node without the run's secret is refused", test_wrong_secret_node_refused),
            BOTH("the seal covers every byte after the magic", test_seal_covers_every_byte),
            BOTH("every message type, forged, is refused", test_every_type_forged_is_refused),
            BOTH("a node needs a secret", test_node_needs_a_secret),
            BOTH("a node sealing with the other algorithm is refused",
                 test_other_seal_node_refused),
            BOTH("a channel's numbers never wrap", test_channel_numbers_never_wrap),
            {"the two seals differ, GMAC's uses the whole secret", test_seals_differ},
            {"a node needs a seal its CPU makes", test_node_needs_a_seal_it_makes})
