/*
 * The intent registry: which nodes intend to use a key, kept by its home.
 *
 * A node announces when it starts and when it stops intending to use keys
 * (ps_node_announce_intent, on a policy's decision); the home counts, per
 * key, the nodes that started and have not stopped, and answers every start
 * with the count. What a count means (relocate here when alone, replicate
 * when not) is the policy's business: the home only counts. Counting
 * needs no more than per-pair FIFO channels: a node's start and stop of a key
 * reach its home in the order it sent them.
 *
 * The home keeps, per key, which nodes intend it and how many intents each
 * has open (a small array sorted by node, made at the key's first start):
 * a stop only ends an intent its own sender started, and a stop with none
 * open is refused, so no message, forged or duplicated, ends another
 * node's intents.
 */
#include "model/internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t time_bits(double t) {
  uint64_t u;
  memcpy(&u, &t, sizeof u);
  return u;
}

static double bits_time(uint64_t u) {
  double t;
  memcpy(&t, &u, sizeof t);
  return t;
}

int ps_node_announce_intent(ps_node *node, const ps_key *start, size_t n_start,
                            const ps_key *stop, size_t n_stop, double now) {
  int rc = ps__check_op_keys(node, start, n_start);
  if (rc == PS_OK) rc = ps__check_op_keys(node, stop, n_stop);
  if (rc != PS_OK || n_start + n_stop == 0) return rc;
  call_ctx c;
  ps__ctx_init(&c, node, now);
  /* Every announcement travels, also to this node as home: one path. Stops
   * first: a key stopped and started again in one call nets to no change. */
  for (size_t i = 0; i < n_stop; i++)
    ps__ctx_add(&c, ps_layout_home(&node->layout, stop[i]), PS_MSG_INTENT, node->id, 0,
                time_bits(now), 0, stop[i], 0, NULL, 0);
  for (size_t i = 0; i < n_start; i++)
    ps__ctx_add(&c, ps_layout_home(&node->layout, start[i]), PS_MSG_INTENT, node->id, 0,
                time_bits(now), 0, start[i], 1, NULL, 0);
  ps__ctx_finish(&c);
  return c.error;
}

/* The index of node's entry in set (which may be NULL), or where it would go. */
static uint32_t intent_find(const intent_set *set, uint32_t node) {
  uint32_t lo = 0, hi = set ? set->n : 0;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (set->at[mid].node < node) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* With e locked: node starts an intent on e's key. PS_OK or PS_ERR_NOMEM. */
static int intent_start(key_entry *e, uint32_t node) {
  intent_set *set = e->intents;
  uint32_t i = intent_find(set, node);
  if (set && i < set->n && set->at[i].node == node) {
    if (set->at[i].count < UINT32_MAX) set->at[i].count++;
    return PS_OK;
  }
  if (!set || set->n == set->cap) {
    uint32_t cap = set ? set->cap * 2 : 2;
    intent_set *grown = realloc(set, sizeof *set + cap * sizeof set->at[0]);
    if (!grown) return PS_ERR_NOMEM;
    if (!set) grown->n = 0;
    grown->cap = cap;
    e->intents = set = grown;
  }
  memmove(&set->at[i + 1], &set->at[i], (set->n - i) * sizeof set->at[0]);
  set->at[i].node = node;
  set->at[i].count = 1;
  set->n++;
  return PS_OK;
}

/* With e locked: node stops one of its intents on e's key; false when it
 * has none open. */
static bool intent_stop(key_entry *e, uint32_t node) {
  intent_set *set = e->intents;
  uint32_t i = intent_find(set, node);
  if (!set || i == set->n || set->at[i].node != node) return false;
  if (--set->at[i].count == 0) {
    memmove(&set->at[i], &set->at[i + 1], (set->n - i - 1) * sizeof set->at[0]);
    if (--set->n == 0) {
      free(set);
      e->intents = NULL;
    }
  }
  return true;
}

/* Keys in order: a stop without an open intent of its sender is refused
 * (PS_ERR_PROTOCOL, once all keys are done) and changes nothing. */
int ps__handle_intent(call_ctx *c, const ps_msg *m) {
  ps_node *n = c->node;
  for (uint32_t i = 0; i < m->key_count; i++)
    if (ps_layout_home(&n->layout, ps_msg_key(m, i)) != n->id || ps_msg_pos(m, i) > 1)
      return PS_ERR_PROTOCOL;
  int rc = PS_OK;
  for (uint32_t i = 0; i < m->key_count; i++) {
    ps_key k = ps_msg_key(m, i);
    bool start = ps_msg_pos(m, i) == 1;
    store_stripe *st;
    key_entry *e = ps__node_lock_entry(n, k, &st);
    if (!e) return PS_ERR_NOMEM;
    int done = start ? intent_start(e, m->src) : intent_stop(e, m->src) ? PS_OK : PS_ERR_PROTOCOL;
    uint32_t count = e->intents ? e->intents->n : 0;
    pthread_mutex_unlock(&st->lock);
    if (done == PS_ERR_NOMEM) return done;
    if (done != PS_OK) rc = done;
    else if (start)
      ps__ctx_add(c, m->src, PS_MSG_INTENT_REPLY, m->src, 0, m->request, 0, k, count, NULL, 0);
  }
  return rc;
}

int ps__handle_intent_reply(ps_node *n, const ps_msg *m, double now) {
  if (m->origin != n->id) return PS_ERR_PEER;
  if (!n->policy || !n->policy->on_intenders || m->key_count == 0) return PS_OK;
  ps_key *keys = malloc((size_t)m->key_count * sizeof *keys);
  uint32_t *counts = malloc((size_t)m->key_count * sizeof *counts);
  if (!keys || !counts) {
    free(keys), free(counts);
    return PS_ERR_NOMEM;
  }
  for (uint32_t i = 0; i < m->key_count; i++) {
    keys[i] = ps_msg_key(m, i);
    counts[i] = ps_msg_pos(m, i);
  }
  n->policy->on_intenders(n->policy_state, keys, counts, m->key_count,
                          bits_time(m->request), now);
  free(keys), free(counts);
  return PS_OK;
}
