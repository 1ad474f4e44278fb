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

int ps__handle_intent(call_ctx *c, const ps_msg *m) {
  ps_node *n = c->node;
  for (uint32_t i = 0; i < m->key_count; i++)
    if (ps_layout_home(&n->layout, ps_msg_key(m, i)) != n->id || ps_msg_pos(m, i) > 1)
      return PS_ERR_PROTOCOL;
  for (uint32_t i = 0; i < m->key_count; i++) {
    ps_key k = ps_msg_key(m, i);
    bool start = ps_msg_pos(m, i) == 1;
    store_stripe *st;
    key_entry *e = ps__node_lock_entry(n, k, &st);
    if (!e) return PS_ERR_NOMEM;
    if (start && e->intenders < n->layout.num_nodes) e->intenders++;
    else if (!start && e->intenders > 0) e->intenders--;
    uint32_t count = e->intenders;
    pthread_mutex_unlock(&st->lock);
    if (start)
      ps__ctx_add(c, m->src, PS_MSG_INTENT_REPLY, m->src, 0, m->request, 0, k, count, NULL, 0);
  }
  return PS_OK;
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
