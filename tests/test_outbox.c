/*
 * The outbox of a call (model/outbox.c): keys added under one header go to
 * one message, messages leave in the order they were started, and the index
 * a call builds once it has many messages finds the same message the scan
 * would. Checked against a plain list of headers scanned in full.
 */
#include "model/internal.h"
#include "tests/harness.h"
#include "tests/unit.h"

#include <stdlib.h>
#include <string.h>

enum { NODES = 300, MAX_SENT = 20000 };

typedef struct {
  uint32_t dst;
  uint8_t *buf;
  size_t len;
} sent_msg;

typedef struct {
  sent_msg msgs[MAX_SENT];
  size_t n;
  size_t shared_calls; /* env.send_shared calls */
} sent_log;

static void record_send(void *ctx, uint32_t dst, uint8_t *buf, size_t len) {
  sent_log *log = ctx;
  if (log->n < MAX_SENT) log->msgs[log->n++] = (sent_msg){dst, buf, len};
  else free(buf);
}

/* What a message should hold: its header and, in order, its keys. */
typedef struct {
  uint32_t dst;
  uint8_t type;
  uint32_t worker, aux;
  uint64_t request;
  uint16_t flags;
  ps_key *keys;
  size_t n_keys, cap_keys;
} expected_msg;

/* Logs a shared message as the copies a backend without send_shared gets:
 * numbered for each destination. It is addressed to every node and
 * numbered among its sender's shared messages. */
static void record_shared(void *ctx, const uint32_t *dst, const uint32_t *seq, size_t count,
                          uint8_t *buf, size_t len) {
  sent_log *log = ctx;
  ps_msg m;
  CU_ASSERT_EQUAL(ps_msg_decode(buf, len, &m), PS_OK);
  CU_ASSERT_EQUAL(m.dst, PS_DST_ALL);
  CU_ASSERT_EQUAL(m.seq, log->shared_calls + 1);
  for (size_t i = 0; i < count; i++) {
    uint8_t *copy = malloc(len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
    memcpy(copy, buf, len);
    ps_msg_put_dst_seq(copy, dst[i], seq[i]);
    ps_msg_put_seal(copy, len, harness_secret(), harness_seal());
    record_send(ctx, dst[i], copy, len);
  }
  free(buf);
  log->shared_calls++;
}

static ps_node *make_node_shared(sent_log *log, bool shared) {
  ps_node_config nc;
  ps_node_config_default(&nc);
  nc.id = 0;
  nc.layout.num_nodes = NODES;
  nc.layout.num_tables = 1;
  nc.layout.tables[0] = (ps_table){0, 1u << 20, 2};
  nc.env = (ps_env){.ctx = log, .send = record_send, .send_shared = shared ? record_shared : NULL};
  memcpy(nc.secret, harness_secret(), PS_SECRET_LEN);
  return ps_node_new(&nc);
}

static ps_node *make_node(sent_log *log) { return make_node_shared(log, false); }

static uint64_t next_rand(uint64_t *x) {
  *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
  return *x >> 33;
}

/* One call of `adds` keys over `dsts` destinations and a few headers each. */
static void check_call(uint64_t seed, size_t adds, uint32_t dsts) {
  sent_log *log = calloc(1, sizeof *log);
  ps_node *node = make_node(log);
  CU_ASSERT_PTR_NOT_NULL_FATAL(node);
  expected_msg *want = calloc(adds, sizeof *want);
  size_t n_want = 0;
  uint64_t x = seed;
  call_ctx c;
  ps__ctx_init(&c, node, 0);
  for (size_t i = 0; i < adds; i++) {
    expected_msg h = {.dst = 1 + (uint32_t)(next_rand(&x) % dsts)};
    static const uint8_t types[] = {PS_MSG_PULL, PS_MSG_PUSH, PS_MSG_DELTA};
    h.type = types[next_rand(&x) % 3];
    h.request = next_rand(&x) % 3;
    h.aux = (uint32_t)(next_rand(&x) % 2);
    bool forward = next_rand(&x) % 4 == 0;
    h.flags = forward ? (uint16_t)(1 + next_rand(&x) % 2) : 0;
    h.worker = forward ? 0 : (uint32_t)(next_rand(&x) % 2);
    ps_key k = (ps_key)i;
    float vals[2] = {(float)i, -(float)i};
    bool has_vals = h.type != PS_MSG_PULL;
    if (forward) { /* aux is the op's subscribe flag, flags its hops */
      pending_op op = {.type = h.type, .hops = (uint8_t)(h.flags - 1), .origin = 0,
                       .worker = 0, .request = h.request, .subscribe = h.aux, .len = 2};
      ps__ctx_forward(&c, h.dst, &op, k, has_vals ? vals : NULL);
    } else {
      ps__ctx_add(&c, h.dst, h.type, 0, h.worker, h.request, h.aux, k, 0, has_vals ? vals : NULL,
                  has_vals ? 2 : 0);
    }
    size_t j = 0; /* the reference: a full scan, first match */
    while (j < n_want &&
           !(want[j].dst == h.dst && want[j].type == h.type && want[j].worker == h.worker &&
             want[j].request == h.request && want[j].aux == h.aux && want[j].flags == h.flags))
      j++;
    if (j == n_want) want[n_want++] = h;
    expected_msg *w = &want[j];
    if (w->n_keys == w->cap_keys) {
      w->cap_keys = w->cap_keys ? 2 * w->cap_keys : 4;
      w->keys = realloc(w->keys, w->cap_keys * sizeof *w->keys);
    }
    w->keys[w->n_keys++] = k;
  }
  CU_ASSERT_EQUAL(c.error, 0);
  ps__ctx_finish(&c);
  CU_ASSERT_EQUAL_FATAL(log->n, n_want);
  for (size_t i = 0; i < log->n; i++) {
    ps_msg m;
    CU_ASSERT_EQUAL_FATAL(ps_msg_decode(log->msgs[i].buf, log->msgs[i].len, &m), PS_OK);
    const expected_msg *w = &want[i];
    CU_ASSERT_EQUAL(log->msgs[i].dst, w->dst);
    CU_ASSERT_EQUAL(m.type, w->type);
    CU_ASSERT_EQUAL(m.worker, w->worker);
    CU_ASSERT_EQUAL(m.request, w->request);
    CU_ASSERT_EQUAL(m.aux, w->aux);
    CU_ASSERT_EQUAL(m.flags, w->flags);
    CU_ASSERT_EQUAL_FATAL(m.key_count, w->n_keys);
    CU_ASSERT_EQUAL(m.value_floats, w->type == PS_MSG_PULL ? 0 : 2 * w->n_keys);
    for (uint32_t j = 0; j < m.key_count; j++) {
      CU_ASSERT_EQUAL(ps_msg_key(&m, j), w->keys[j]);
      if (m.value_floats) {
        float v[2];
        ps_msg_values(&m, 2 * j, v, 2);
        CU_ASSERT_EQUAL(v[0], (float)w->keys[j]);
        CU_ASSERT_EQUAL(v[1], -(float)w->keys[j]);
      }
    }
    free(log->msgs[i].buf);
  }
  for (size_t i = 0; i < n_want; i++) free(want[i].keys);
  free(want);
  ps_node_free(node);
  free(log);
}

/* Few messages: the scan alone. */
static void test_outbox_few_messages(void) {
  for (uint64_t seed = 1; seed <= 50; seed++) check_call(seed, 40, 1);
}

/* Many: the index, grown several times, with keys of one message far apart
 * and messages to one destination under several headers. */
static void test_outbox_many_messages(void) {
  check_call(7, 20000, NODES - 1);
  check_call(8, 3000, 40);
  check_call(9, 200, 3);
}

/* An all-reduce round's shape: every key to every other node, in turn. */
static void test_outbox_broadcast_order(void) {
  sent_log *log = calloc(1, sizeof *log);
  ps_node *node = make_node(log);
  CU_ASSERT_PTR_NOT_NULL_FATAL(node);
  call_ctx c;
  ps__ctx_init(&c, node, 0);
  float vals[2] = {1, 2};
  for (ps_key k = 0; k < 10; k++)
    for (uint32_t dst = NODES - 1; dst >= 1; dst--)
      ps__ctx_add(&c, dst, PS_MSG_DELTA, 0, 0, 0, 0, k, 0, vals, 2);
  ps__ctx_finish(&c);
  CU_ASSERT_EQUAL_FATAL(log->n, NODES - 1);
  for (size_t i = 0; i < log->n; i++) {
    ps_msg m;
    CU_ASSERT_EQUAL_FATAL(ps_msg_decode(log->msgs[i].buf, log->msgs[i].len, &m), PS_OK);
    CU_ASSERT_EQUAL(log->msgs[i].dst, NODES - 1 - i); /* first started, first sent */
    CU_ASSERT_EQUAL(m.key_count, 10);
    for (uint32_t j = 0; j < m.key_count; j++) CU_ASSERT_EQUAL(ps_msg_key(&m, j), j);
    free(log->msgs[i].buf);
  }
  ps_node_free(node);
  free(log);
}

/* The same call on a fresh node: once with a ps__ctx_add per key and node, once
 * with ps__ctx_add_all; other messages before, between and after. */
static void broadcast_call(ps_node *node, bool all) {
  call_ctx c;
  ps__ctx_init(&c, node, 0);
  float vals[2] = {1, 2};
  ps__ctx_add(&c, 5, PS_MSG_PUSH, 0, 0, 0, 0, 1000, 0, vals, 2);
  for (ps_key k = 0; k < 20; k++) {
    vals[0] = (float)k;
    if (all) ps__ctx_add_all(&c, PS_MSG_DELTA, k, vals, 2);
    for (uint32_t dst = 0; !all && dst < NODES; dst++)
      if (dst != 0) ps__ctx_add(&c, dst, PS_MSG_DELTA, 0, 0, 0, 0, k, 0, vals, 2);
    if (k == 3) ps__ctx_add(&c, 7, PS_MSG_PULL, 0, 1, 9, 0, 2000, 0, NULL, 0);
    if (k % 5 == 0) ps__ctx_add(&c, 5, PS_MSG_PUSH, 0, 0, 0, 0, 1000 + k, 0, vals, 2);
  }
  ps__ctx_finish(&c);
}

/* Two rounds of broadcast_call, once with a ps__ctx_add per key and node and
 * once with ps__ctx_add_all (`shared`: through env.send_shared): the same
 * messages, byte for byte, numbers included. */
static void check_add_all_as_each(bool shared) {
  sent_log *each = calloc(1, sizeof *each), *all = calloc(1, sizeof *all);
  ps_node *a = make_node(each), *b = make_node_shared(all, shared);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  for (int round = 0; round < 2; round++) {
    broadcast_call(a, false);
    broadcast_call(b, true);
  }
  CU_ASSERT_EQUAL_FATAL(each->n, 2 * (NODES + 1)); /* a PUSH, NODES - 1 DELTAs, a PULL */
  CU_ASSERT_EQUAL_FATAL(all->n, each->n);
  CU_ASSERT_EQUAL(all->shared_calls, shared ? 2 : 0); /* one per round */
  for (size_t i = 0; i < each->n; i++) {
    CU_ASSERT_EQUAL(all->msgs[i].dst, each->msgs[i].dst);
    CU_ASSERT_EQUAL_FATAL(all->msgs[i].len, each->msgs[i].len);
    CU_ASSERT(memcmp(all->msgs[i].buf, each->msgs[i].buf, each->msgs[i].len) == 0);
    free(all->msgs[i].buf);
    free(each->msgs[i].buf);
  }
  ps_node_stats sa, sb;
  ps_node_get_stats(a, &sa);
  ps_node_get_stats(b, &sb);
  CU_ASSERT_EQUAL(sb.messages_sent, sa.messages_sent);
  CU_ASSERT_EQUAL(sb.bytes_sent, sa.bytes_sent);
  ps_node_free(a);
  ps_node_free(b);
  free(each);
  free(all);
}

static void test_outbox_add_all_as_each(void) { check_add_all_as_each(false); }
static void test_outbox_add_all_shared(void) { check_add_all_as_each(true); }

PSLAB_SUITE("outbox", {"few messages: as a full scan", test_outbox_few_messages},
            {"many messages: the index finds what a full scan does",
             test_outbox_many_messages},
            {"an all-reduce round: one message per node, in first-started order",
             test_outbox_broadcast_order},
            {"ps__ctx_add_all sends what a ps__ctx_add per node does", test_outbox_add_all_as_each},
            {"ps__ctx_add_all through env.send_shared: the same messages, one buffer",
             test_outbox_add_all_shared})
