/*
 * The outbox of one call into the core. While a call holds stripe locks it
 * only records what to send and whom to wake; ctx_finish encodes and sends the
 * messages and fires the wake-ups after every lock is released, so the
 * backend's callbacks never run under a core lock.
 */
#include "model/internal.h"

#include <stdlib.h>
#include <string.h>

void ctx_init(call_ctx *c, ps_node *node, double now) {
  memset(c, 0, sizeof *c);
  c->node = node;
  c->now = now;
}

static bool same_head(const out_msg *m, uint32_t dst, uint8_t type, uint32_t origin,
                      uint32_t worker, uint64_t request, uint32_t aux) {
  return m->dst == dst && m->head.type == type && m->head.origin == origin &&
         m->head.worker == worker && m->head.request == request && m->head.aux == aux;
}

static out_msg *find_or_add(call_ctx *c, uint32_t dst, uint8_t type, uint32_t origin,
                            uint32_t worker, uint64_t request, uint32_t aux) {
  /* Newest first: consecutive keys usually go to the same message. */
  for (size_t i = c->n_msgs; i-- > 0;)
    if (same_head(&c->msgs[i], dst, type, origin, worker, request, aux)) return &c->msgs[i];
  if (c->n_msgs == c->cap_msgs) {
    size_t cap = c->cap_msgs ? c->cap_msgs * 2 : 8;
    out_msg *m = realloc(c->msgs, cap * sizeof *m);
    if (!m) return NULL;
    c->msgs = m;
    c->cap_msgs = cap;
  }
  out_msg *m = &c->msgs[c->n_msgs++];
  memset(m, 0, sizeof *m);
  m->dst = dst;
  m->head.type = type;
  m->head.src = c->node->id;
  m->head.origin = origin;
  m->head.worker = worker;
  m->head.request = request;
  m->head.aux = aux;
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

void ctx_add(call_ctx *c, uint32_t dst, uint8_t type, uint32_t origin, uint32_t worker,
             uint64_t request, uint32_t aux, ps_key k, uint32_t pos, const float *vals,
             uint32_t len) {
  out_msg *m = find_or_add(c, dst, type, origin, worker, request, aux);
  if (!m) goto oom;
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

void ctx_wake(call_ctx *c, uint32_t worker, ps_ticket t) {
  if (c->n_wakes == c->cap_wakes) {
    size_t cap = c->cap_wakes ? c->cap_wakes * 2 : 4;
    wakeup *w = realloc(c->wakes, cap * sizeof *w);
    if (!w) {
      c->error = PS_ERR_NOMEM;
      return;
    }
    c->wakes = w;
    c->cap_wakes = cap;
  }
  c->wakes[c->n_wakes++] = (wakeup){worker, t};
}

static void send_one(ps_node *n, out_msg *m) {
  size_t len = ps_msg_encoded_len(m->head.key_count, m->head.value_floats);
  uint8_t *buf = malloc(len);
  if (!buf) return;
  m->head.keys = (const uint8_t *)m->keys;
  m->head.pos = (const uint8_t *)m->pos;
  m->head.values = (const uint8_t *)m->values;
  if (ps_msg_encode(&m->head, buf, len) < 0) {
    free(buf);
    return;
  }
  stat_add(&n->stats.messages_sent, 1);
  stat_add(&n->stats.bytes_sent, len);
  n->env.send(n->env.ctx, m->dst, buf, len);
}

void ctx_finish(call_ctx *c) {
  ps_node *n = c->node;
  for (size_t i = 0; i < c->n_msgs; i++) {
    send_one(n, &c->msgs[i]);
    free(c->msgs[i].keys);
    free(c->msgs[i].pos);
    free(c->msgs[i].values);
  }
  free(c->msgs);
  for (size_t i = 0; i < c->n_wakes; i++)
    if (n->env.wake) n->env.wake(n->env.ctx, c->wakes[i].worker, c->wakes[i].ticket);
  free(c->wakes);
  c->msgs = NULL;
  c->wakes = NULL;
  c->n_msgs = c->n_wakes = 0;
}
