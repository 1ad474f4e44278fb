/*
 * The in-memory cluster of tests/harness.h. env.send appends to the queue of
 * the (src, dst) pair; delivery takes the head of a random non-empty queue,
 * so messages between two nodes stay in order while everything else
 * interleaves as the seed says. With shared sends, env.send_shared appends
 * a copy of its buffer to each destination's queue with the number it was
 * given, handed over with ps_node_recv_numbered.
 */
#include "model/testing.h"
#include "tests/harness.h"

#include <stdlib.h>
#include <string.h>

typedef struct msg {
  struct msg *next;
  uint8_t *buf;
  size_t len;
  uint32_t seq; /* a shared message's number on its channel (0: not shared) */
} msg;

typedef struct {
  msg *head, *tail;
  uint64_t count;
} channel;

typedef struct {
  harness *h;
  uint32_t id;
} endpoint;

struct harness {
  uint32_t n;
  ps_node **nodes;
  endpoint *ends;
  channel *chans; /* n * n, index src * n + dst */
  uint64_t rng;
  double now;
  uint64_t in_flight, delivered, errors;
  uint64_t by_type[PS_MSG_TYPE_END];
};

void harness_config_default(harness_config *c) {
  memset(c, 0, sizeof *c);
  c->nodes = 2;
  c->workers = 1;
  c->layout.num_tables = 1;
  c->layout.tables[0] = (ps_table){0, 64, 4};
  c->layout.partition = PS_PARTITION_HASH;
  ps_policy_settings_default(&c->settings);
  c->seed = 1;
}

uint64_t harness_rand(harness *h) { return ps_splitmix64(&h->rng); }

const uint8_t *harness_secret(void) {
  static const uint8_t secret[PS_SECRET_LEN] = "the harness's secret, 32 bytes!";
  return secret;
}

static ps_seal seal_in_use = PS_SEAL_SIPHASH;

void harness_use_seal(ps_seal s) { seal_in_use = s; }
ps_seal harness_seal(void) { return seal_in_use; }

long harness_encode(const ps_msg *m, uint32_t dst, uint8_t *buf, size_t len) {
  ps_msg to = *m;
  to.dst = dst;
  long n = ps_msg_encode(&to, buf, len);
  if (n > 0) ps_msg_put_seal(buf, (size_t)n, harness_secret(), seal_in_use);
  return n;
}

static void enqueue(endpoint *e, uint32_t dst, uint8_t *buf, size_t len, uint32_t seq) {
  harness *h = e->h;
  msg *m = malloc(sizeof *m);
  if (!m || dst >= h->n) abort(); /* a test harness may stop here */
  *m = (msg){NULL, buf, len, seq};
  channel *c = &h->chans[e->id * h->n + dst];
  if (c->tail) c->tail->next = m;
  else c->head = m;
  c->tail = m;
  c->count++;
  h->in_flight++;
}

static void on_send(void *ctx, uint32_t dst, uint8_t *buf, size_t len) {
  enqueue(ctx, dst, buf, len, 0);
}

static void on_send_shared(void *ctx, const uint32_t *dst, const uint32_t *seq, size_t count,
                           uint8_t *buf, size_t len) {
  for (size_t i = 0; i < count; i++) {
    uint8_t *copy = malloc(len);
    if (!copy) abort();
    memcpy(copy, buf, len);
    enqueue(ctx, dst[i], copy, len, seq[i]);
  }
  free(buf);
}

void harness_inject(harness *h, uint32_t src, uint32_t dst, uint8_t *buf, size_t len) {
  enqueue(&h->ends[src], dst, buf, len, 0);
}

bool harness_peek(harness *h, uint32_t src, uint32_t dst, uint8_t **buf, size_t *len,
                  uint32_t *seq) {
  msg *m = h->chans[(size_t)src * h->n + dst].head;
  if (!m || !(*buf = malloc(m->len))) return false;
  memcpy(*buf, m->buf, m->len);
  *len = m->len;
  *seq = m->seq;
  return true;
}

harness *harness_new(const harness_config *c) {
  harness *h = calloc(1, sizeof *h);
  h->n = c->nodes;
  h->rng = c->seed;
  h->nodes = calloc(c->nodes, sizeof *h->nodes);
  h->ends = calloc(c->nodes, sizeof *h->ends);
  h->chans = calloc((size_t)c->nodes * c->nodes, sizeof *h->chans);
  for (uint32_t i = 0; i < c->nodes; i++) {
    h->ends[i] = (endpoint){h, i};
    ps_node_config nc;
    ps_node_config_default(&nc);
    nc.id = i;
    nc.layout = c->layout;
    nc.layout.num_nodes = c->nodes;
    /* Nodes that run no workers (layout roles) have none. */
    nc.workers = ps_layout_runs_workers(&nc.layout, i) ? c->workers : 0;
    nc.layout.partition = c->settings.partition;
    nc.env = (ps_env){.ctx = &h->ends[i], .send = on_send, .wake = NULL,
                      .send_shared = c->shared_sends ? on_send_shared : NULL};
    nc.policy = c->policy;
    nc.policy_json = c->policy_json;
    nc.hot_keys = c->hot_keys;
    nc.num_hot_keys = c->num_hot_keys;
    nc.settings = c->settings;
    nc.stripes = 8;
    nc.clock_service = c->clock_service;
    nc.clock_marks = c->clock_marks;
    nc.num_clock_marks = c->num_clock_marks;
    nc.scale = c->scale;
    nc.num_scale = c->num_scale;
    memcpy(nc.secret, harness_secret(), PS_SECRET_LEN);
    if (c->wrong_secret >> i & 1) nc.secret[0] ^= 1; /* not the run's */
    nc.seal = c->other_seal >> i & 1 ? (seal_in_use == PS_SEAL_GMAC ? PS_SEAL_SIPHASH
                                                                    : PS_SEAL_GMAC)
                                     : seal_in_use;
    h->nodes[i] = ps_node_new(&nc);
    if (!h->nodes[i]) abort();
  }
  return h;
}

void harness_free(harness *h) {
  if (!h) return;
  for (size_t i = 0; i < (size_t)h->n * h->n; i++) {
    for (msg *m = h->chans[i].head, *next; m; m = next) {
      next = m->next;
      free(m->buf);
      free(m);
    }
  }
  for (uint32_t i = 0; i < h->n; i++) ps_node_free(h->nodes[i]);
  free(h->nodes);
  free(h->ends);
  free(h->chans);
  free(h);
}

ps_node *harness_node(harness *h, uint32_t node) { return h->nodes[node]; }
ps_worker *harness_worker(harness *h, uint32_t node, uint32_t worker) {
  return ps_node_worker(h->nodes[node], worker);
}

/* Takes the head of channel i and hands it to its destination. */
static void deliver_channel(harness *h, size_t i) {
  channel *c = &h->chans[i];
  msg *m = c->head;
  c->head = m->next;
  if (!c->head) c->tail = NULL;
  c->count--;
  h->in_flight--;
  h->delivered++;
  ps_msg decoded;
  if (ps_msg_decode(m->buf, m->len, &decoded) == PS_OK) h->by_type[decoded.type]++;
  uint32_t src = (uint32_t)(i / h->n), dst = (uint32_t)(i % h->n);
  int rc = m->seq ? ps_node_recv_numbered(h->nodes[dst], src, m->seq, m->buf, m->len, h->now)
                 : ps_node_recv(h->nodes[dst], src, m->buf, m->len, h->now);
  if (rc != PS_OK) h->errors++;
  free(m->buf);
  free(m);
}

bool harness_deliver_one(harness *h) {
  if (!h->in_flight) return false;
  size_t total = (size_t)h->n * h->n, start = harness_rand(h) % total;
  for (size_t j = 0; j < total; j++) {
    size_t i = (start + j) % total;
    if (h->chans[i].head) {
      deliver_channel(h, i);
      return true;
    }
  }
  return false;
}

bool harness_deliver_from(harness *h, uint32_t src, uint32_t dst) {
  size_t i = (size_t)src * h->n + dst;
  if (!h->chans[i].head) return false;
  deliver_channel(h, i);
  return true;
}

uint64_t harness_drain(harness *h) {
  uint64_t n = 0;
  while (harness_deliver_one(h)) n++;
  return n;
}

bool harness_wait(harness *h, ps_worker *w, ps_ticket t) {
  while (!ps_worker_done(w, t))
    if (!harness_deliver_one(h)) return false;
  return true;
}

void harness_set_now(harness *h, double now) { h->now = now; }

uint64_t harness_in_flight(const harness *h) { return h->in_flight; }
uint64_t harness_delivered(const harness *h) { return h->delivered; }
uint64_t harness_delivered_type(const harness *h, int type) {
  return type > 0 && type < PS_MSG_TYPE_END ? h->by_type[type] : 0;
}
uint64_t harness_recv_errors(const harness *h) { return h->errors; }

uint32_t harness_owner(harness *h, ps_key k) {
  ps_node *home = h->nodes[ps_layout_home(ps_node_layout(h->nodes[0]), k)];
  return (uint32_t)ps_node_directory_owner(home, k);
}
