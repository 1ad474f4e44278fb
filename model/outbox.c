/*
 * The outbox of one call into the core. While a call holds stripe locks it
 * only records what to send and whom to wake; ps__ctx_finish encodes and sends the
 * messages and fires the wake-ups after every key lock is released, so the
 * backend's callbacks never run under a core lock. To keep a node's messages
 * in the order it decided them across threads, a call decides and appends
 * its encoded messages to the node's send queue under the order lock
 * (internal.h, call_ctx); one thread at a time then sends the queue in order,
 * without the lock (a simulated actor that yields inside env.send must hold
 * no lock another actor on the same OS thread may take).
 */
#include "model/internal.h"

#include <stdlib.h>
#include <string.h>

void ps__ctx_init(call_ctx *c, ps_node *node, double now) {
  pthread_mutex_lock(&node->order_lock);
  *c = (call_ctx){.node = node, .now = now};
}

/* Makes room for one more of the n elements of *arr (capacity *cap, first
 * in the context's inline storage of `inline_cap`): false on no memory. */
static bool ctx_grow(void **arr, size_t n, size_t *cap, void *inline_store, size_t inline_cap,
                     size_t elem) {
  if (n < *cap) return true;
  if (!*arr) {
    *arr = inline_store;
    *cap = inline_cap;
    return true;
  }
  size_t want = *cap * 2;
  void *grown = *arr == inline_store ? malloc(want * elem) : realloc(*arr, want * elem);
  if (!grown) return false;
  if (*arr == inline_store) memcpy(grown, inline_store, n * elem);
  *arr = grown;
  *cap = want;
  return true;
}

static bool same_head(const out_msg *m, uint32_t dst, uint8_t type, uint32_t origin,
                      uint32_t worker, uint64_t request, uint32_t aux, uint16_t flags) {
  return m->dst == dst && m->head.type == type && m->head.origin == origin &&
         m->head.worker == worker && m->head.request == request && m->head.aux == aux &&
         m->head.flags == flags;
}

static uint64_t head_hash(uint32_t dst, uint8_t type, uint32_t origin, uint32_t worker,
                          uint64_t request, uint32_t aux, uint16_t flags) {
  uint64_t h = ps_mix64((uint64_t)dst << 32 | origin);
  h = ps_mix64(h ^ request);
  return ps_mix64(h ^ ((uint64_t)worker << 32 | aux) ^ ((uint64_t)type << 16 | flags) << 8);
}

static size_t head_slot(const call_ctx *c, const out_msg *m) {
  return (size_t)head_hash(m->dst, m->head.type, m->head.origin, m->head.worker,
                           m->head.request, m->head.aux, m->head.flags) &
         (c->index_cap - 1);
}

/* (Re)builds the index with `cap` slots over every message so far: false on
 * no memory (the old index, if any, stays). */
static bool index_rebuild(call_ctx *c, size_t cap) {
  uint32_t *slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  free(c->msg_index);
  c->msg_index = slots;
  c->index_cap = cap;
  for (size_t i = 0; i < c->n_msgs; i++) {
    size_t s = head_slot(c, &c->msgs[i]);
    while (slots[s]) s = (s + 1) & (cap - 1);
    slots[s] = (uint32_t)(i + 1);
  }
  return true;
}

/* The message with this header, or NULL. Headers are unique among a call's
 * messages (one is started only when none matches), so the index and the
 * scan find the same one. */
static out_msg *find_msg(call_ctx *c, uint32_t dst, uint8_t type, uint32_t origin,
                         uint32_t worker, uint64_t request, uint32_t aux, uint16_t flags) {
  if (!c->n_msgs) return NULL;
  /* Newest first: consecutive keys usually go to the same message. */
  out_msg *last = &c->msgs[c->n_msgs - 1];
  if (same_head(last, dst, type, origin, worker, request, aux, flags)) return last;
  if (!c->msg_index) {
    for (size_t i = c->n_msgs - 1; i-- > 0;)
      if (same_head(&c->msgs[i], dst, type, origin, worker, request, aux, flags))
        return &c->msgs[i];
    return NULL;
  }
  size_t mask = c->index_cap - 1;
  for (size_t s = head_hash(dst, type, origin, worker, request, aux, flags) & mask;
       c->msg_index[s]; s = (s + 1) & mask) {
    out_msg *m = &c->msgs[c->msg_index[s] - 1];
    if (same_head(m, dst, type, origin, worker, request, aux, flags)) return m;
  }
  return NULL;
}

static out_msg *find_or_add_flags(call_ctx *c, uint32_t dst, uint8_t type, uint32_t origin,
                                  uint32_t worker, uint64_t request, uint32_t aux,
                                  uint16_t flags) {
  out_msg *found = find_msg(c, dst, type, origin, worker, request, aux, flags);
  if (found) return found;
  if (c->n_msgs >= UINT32_MAX - 1) return NULL;
  if (!ctx_grow((void **)&c->msgs, c->n_msgs, &c->cap_msgs, c->inline_msgs, CTX_INLINE_MSGS,
                sizeof *c->msgs))
    return NULL;
  /* Index once the scan grows long; keep it at most half full. */
  if (c->n_msgs + 1 > CTX_SCAN_MSGS && (c->n_msgs + 1) * 2 > c->index_cap &&
      !index_rebuild(c, c->index_cap ? c->index_cap * 2 : 4 * CTX_SCAN_MSGS))
    return NULL;
  out_msg *m = &c->msgs[c->n_msgs++];
  memset(m, 0, sizeof *m);
  ps_node *n = c->node;
  if (n->n_spares) { /* a sent message's arrays, with their capacity */
    const out_spare *sp = &n->spares[--n->n_spares];
    m->keys = sp->keys;
    m->pos = sp->pos;
    m->values = sp->values;
    m->key_cap = sp->key_cap;
    m->value_cap = sp->value_cap;
  }
  m->dst = dst;
  m->head.type = type;
  m->head.src = c->node->id;
  m->head.origin = origin;
  m->head.worker = worker;
  m->head.request = request;
  m->head.aux = aux;
  m->head.flags = flags;
  if (c->msg_index) {
    size_t s = head_slot(c, m);
    while (c->msg_index[s]) s = (s + 1) & (c->index_cap - 1);
    c->msg_index[s] = (uint32_t)c->n_msgs;
  }
  return m;
}

static bool reserve(void **p, uint32_t *cap, uint64_t need, size_t elem) {
  if (need <= *cap) return true;
  uint64_t cap2 = *cap ? *cap : 8;
  while (cap2 < need) cap2 *= 2;
  if (cap2 > UINT32_MAX) return false;
  void *q = realloc(*p, cap2 * elem);
  if (!q) return false;
  *p = q;
  *cap = (uint32_t)cap2;
  return true;
}

static out_msg *find_or_add(call_ctx *c, uint32_t dst, uint8_t type, uint32_t origin,
                            uint32_t worker, uint64_t request, uint32_t aux) {
  return find_or_add_flags(c, dst, type, origin, worker, request, aux, 0);
}

/* Appends key k (and its values) to m. */
static void add_key(call_ctx *c, out_msg *m, ps_key k, uint32_t pos, const float *vals,
                    uint32_t len);

void ps__ctx_add(call_ctx *c, uint32_t dst, uint8_t type, uint32_t origin, uint32_t worker,
                 uint64_t request, uint32_t aux, ps_key k, uint32_t pos, const float *vals,
                 uint32_t len) {
  out_msg *m = find_or_add(c, dst, type, origin, worker, request, aux);
  if (!m) {
    if (!c->error) c->error = PS_ERR_NOMEM;
    return;
  }
  add_key(c, m, k, pos, vals, len);
}

void ps__ctx_add_all(call_ctx *c, uint8_t type, ps_key k, const float *vals, uint32_t len) {
  ps__ctx_add_all_made(c, type, 0, 0, k, vals, len);
}

void ps__ctx_add_all_empty(call_ctx *c, uint8_t type, uint64_t request, uint32_t aux) {
  if (!find_or_add(c, ALL_OTHERS, type, c->node->id, 0, request, aux) && !c->error)
    c->error = PS_ERR_NOMEM;
}

void ps__ctx_add_all_made(call_ctx *c, uint8_t type, uint64_t request, uint32_t aux, ps_key k,
                          const float *vals, uint32_t len) {
  out_msg *m = find_or_add(c, ALL_OTHERS, type, c->node->id, 0, request, aux);
  if (!m) {
    if (!c->error) c->error = PS_ERR_NOMEM;
    return;
  }
  add_key(c, m, k, 0, vals, len);
}

void ps__ctx_forward(call_ctx *c, uint32_t dst, const pending_op *op, ps_key k, const float *vals) {
  if (op->hops >= PS_MAX_HOPS) {
    stat_add(&c->node->stats.hop_drops, 1);
    c->error = PS_ERR_HOPS;
    return;
  }
  out_msg *m = find_or_add_flags(c, dst, op->type, op->origin, op->worker, op->request,
                                 op->subscribe, (uint16_t)(op->hops + 1));
  if (!m) {
    if (!c->error) c->error = PS_ERR_NOMEM;
    return;
  }
  add_key(c, m, k, op->pos, vals, vals ? op->len : 0);
}

static void add_key(call_ctx *c, out_msg *m, ps_key k, uint32_t pos, const float *vals,
                    uint32_t len) {
  uint32_t n = m->head.key_count, kc = m->key_cap;
  if (n == kc) {
    uint32_t pc = kc;
    if (!reserve((void **)&m->keys, &kc, (uint64_t)n + 1, sizeof *m->keys) ||
        !reserve((void **)&m->pos, &pc, (uint64_t)n + 1, sizeof *m->pos))
      goto oom;
    m->key_cap = kc < pc ? kc : pc;
  }
  if (vals && len) {
    uint64_t need = (uint64_t)m->head.value_floats + len;
    if (!reserve((void **)&m->values, &m->value_cap, need, sizeof *m->values)) goto oom;
    memcpy(m->values + m->head.value_floats, vals, (size_t)len * sizeof *vals);
    m->head.value_floats = (uint32_t)need;
  }
  m->keys[n] = k;
  m->pos[n] = pos;
  m->head.key_count = n + 1;
  return;
oom:
  if (!c->error) c->error = PS_ERR_NOMEM;
}

void ps__ctx_add_words(call_ctx *c, uint32_t dst, uint8_t type, uint64_t request,
                       const uint64_t *words, size_t n_words, const float *floats,
                       size_t n_floats) {
  out_msg *m = find_or_add(c, dst, type, c->node->id, 0, request, 0);
  if (!m || m->head.key_count || m->head.value_floats) { /* one per call and kind */
    if (!c->error) c->error = m ? PS_ERR_INVAL : PS_ERR_NOMEM;
    return;
  }
  for (size_t i = 0; i < n_words; i++) add_key(c, m, words[i], 0, NULL, 0);
  if (!n_floats) return;
  if (!reserve((void **)&m->values, &m->value_cap, n_floats, sizeof *m->values)) {
    if (!c->error) c->error = PS_ERR_NOMEM;
    return;
  }
  memcpy(m->values, floats, n_floats * sizeof *floats);
  m->head.value_floats = (uint32_t)n_floats;
}

void ps__ctx_add_empty(call_ctx *c, uint32_t dst, uint8_t type, uint64_t request, uint32_t aux) {
  if (!find_or_add(c, dst, type, c->node->id, 0, request, aux) && !c->error)
    c->error = PS_ERR_NOMEM;
}

void ps__ctx_wake(call_ctx *c, uint32_t worker, ps_ticket t) {
  if (!ctx_grow((void **)&c->wakes, c->n_wakes, &c->cap_wakes, c->inline_wakes,
                CTX_INLINE_WAKES, sizeof *c->wakes)) {
    c->error = PS_ERR_NOMEM;
    return;
  }
  c->wakes[c->n_wakes++] = (wakeup){worker, t};
}

static bool outq_append(ps_node *n, queued_msg q) {
  if (n->outq_len == n->outq_cap) {
    size_t cap = n->outq_cap ? n->outq_cap * 2 : 64;
    queued_msg *grown = realloc(n->outq, cap * sizeof *grown);
    if (!grown) return false;
    n->outq = grown;
    n->outq_cap = cap;
  }
  n->outq[n->outq_len++] = q;
  return true;
}

/* Queues buf for dst as the channel's next number, and seals it once
 * queued (order lock held): PS_OK, PS_ERR_NOMEM, or PS_ERR_LIMIT when the
 * channel has used all its numbers (a number is never given twice: GMAC's
 * nonce, model/codec.c). */
static int enqueue_to(ps_node *n, uint32_t dst, uint8_t *buf, size_t len) {
  if (n->send_seq[dst] == UINT32_MAX) return PS_ERR_LIMIT;
  uint32_t seq = n->send_seq[dst] + 1;
  ps_msg_put_dst_seq(buf, dst, seq);
  if (!outq_append(n, (queued_msg){dst, buf, len, NULL, 1})) return PS_ERR_NOMEM;
  ps_msg_put_sealed(buf, len, &n->sealer);
  n->send_seq[dst] = seq;
  return PS_OK;
}

/* Whether every channel to the others, and the shared numbers, have a
 * number left. */
static bool numbers_left(const ps_node *n) {
  for (uint32_t dst = 0; dst < n->layout.num_nodes; dst++)
    if (dst != n->id && n->send_seq[dst] == UINT32_MAX) return false;
  return n->shared_sent != UINT32_MAX;
}

/* Queues a ps__ctx_add_all message, encoded in buf, for every other node,
 * numbered on each channel in node order: whole, for env.send_shared (see
 * queued_msg), as the node's next shared message, sealed once for all; or
 * as a copy per node, the last node taking buf itself. enqueue_to's codes. */
static int enqueue_all(ps_node *n, uint8_t *buf, size_t len) {
  uint32_t count = n->layout.num_nodes - 1;
  if (!numbers_left(n)) return PS_ERR_LIMIT;
  if (!n->env.send_shared) {
    uint32_t last = n->id == count ? count - 1 : count;
    for (uint32_t dst = 0; dst < last; dst++) {
      if (dst == n->id) continue;
      uint8_t *copy = malloc(len);
      if (!copy) return PS_ERR_NOMEM;
      memcpy(copy, buf, len);
      int rc = enqueue_to(n, dst, copy, len);
      if (rc != PS_OK) {
        free(copy);
        return rc;
      }
    }
    return enqueue_to(n, last, buf, len);
  }
  uint32_t *shared = malloc(2 * (size_t)count * sizeof *shared);
  ps_msg_put_dst_seq(buf, PS_DST_ALL, n->shared_sent + 1);
  if (!shared || !outq_append(n, (queued_msg){ALL_OTHERS, buf, len, shared, count})) {
    free(shared);
    return PS_ERR_NOMEM;
  }
  ps_msg_put_sealed(buf, len, &n->sealer);
  n->shared_sent++;
  for (uint32_t dst = 0, i = 0; dst < n->layout.num_nodes; dst++) {
    if (dst == n->id) continue;
    shared[i] = dst;
    shared[count + i++] = ++n->send_seq[dst];
  }
  return PS_OK;
}

/* Encodes m into the node's send queue (order lock held). */
static void enqueue_one(call_ctx *c, out_msg *m) {
  ps_node *n = c->node;
  bool all = m->dst == ALL_OTHERS;
  if (all && n->layout.num_nodes < 2) return; /* nobody else */
  size_t len = ps_msg_encoded_len(m->head.key_count, m->head.value_floats);
  uint8_t *buf = malloc(len);
  m->head.keys = (const uint8_t *)m->keys;
  m->head.pos = (const uint8_t *)m->pos;
  m->head.values = (const uint8_t *)m->values;
  m->head.seq = 0;
  int rc = !buf || ps_msg_encode(&m->head, buf, len) < 0 ? PS_ERR_NOMEM
           : all ? enqueue_all(n, buf, len) : enqueue_to(n, m->dst, buf, len);
  if (rc == PS_OK) return;
  free(buf);
  if (!c->error) c->error = rc;
}

/* Hands one queued message to the backend (no lock held). */
static void send_queued(ps_node *n, queued_msg q) {
  stat_add(&n->stats.messages_sent, q.count);
  stat_add(&n->stats.bytes_sent, (uint64_t)q.len * q.count);
  if (!q.shared) {
    n->env.send(n->env.ctx, q.dst, q.buf, q.len);
    return;
  }
  n->env.send_shared(n->env.ctx, q.shared, q.shared + q.count, q.count, q.buf, q.len);
  free(q.shared);
}

/* Sends the queue in order, outside the lock; one thread at a time drains,
 * and a thread that finds a drainer at work leaves its messages to it. Enter
 * and leave with the order lock held. */
static void drain_queue(ps_node *n) {
  if (n->draining) return;
  n->draining = true;
  while (n->outq_head < n->outq_len) {
    queued_msg q = n->outq[n->outq_head++];
    if (n->outq_head == n->outq_len) n->outq_head = n->outq_len = 0;
    pthread_mutex_unlock(&n->order_lock);
    send_queued(n, q);
    pthread_mutex_lock(&n->order_lock);
  }
  n->draining = false;
}

/* Done with m's arrays: kept for the node's next message (order lock held)
 * unless the node keeps enough already or they are large. */
static void release_arrays(ps_node *n, out_msg *m) {
  if (n->n_spares < OUT_SPARES && m->key_cap <= OUT_SPARE_MAX_KEYS &&
      m->value_cap <= OUT_SPARE_MAX_FLOATS && (m->keys || m->values)) {
    n->spares[n->n_spares++] =
        (out_spare){m->keys, m->pos, m->values, m->key_cap, m->value_cap};
    return;
  }
  free(m->keys);
  free(m->pos);
  free(m->values);
}

void ps__ctx_finish(call_ctx *c) {
  ps_node *n = c->node;
  for (size_t i = 0; i < c->n_msgs; i++) {
    enqueue_one(c, &c->msgs[i]);
    release_arrays(n, &c->msgs[i]);
  }
  if (c->msgs != c->inline_msgs) free(c->msgs);
  free(c->msg_index);
  c->msg_index = NULL;
  c->index_cap = 0;
  drain_queue(n);
  pthread_mutex_unlock(&n->order_lock);
  for (size_t i = 0; i < c->n_wakes; i++)
    if (n->env.wake) n->env.wake(n->env.ctx, c->wakes[i].worker, c->wakes[i].ticket);
  if (c->wakes != c->inline_wakes) free(c->wakes);
  c->msgs = NULL;
  c->wakes = NULL;
  c->n_msgs = c->n_wakes = c->cap_msgs = c->cap_wakes = 0;
}
