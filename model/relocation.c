/*
 * Relocation, as in Lapse: localize(keys) moves ownership to the caller's node.
 *
 *   requester --LOCALIZE--> home --HANDOVER--> old owner --TRANSFER--> requester
 *
 * At most three messages (fewer when the requester or the old owner is the
 * home). The home updates its directory when the LOCALIZE arrives, so every
 * operation it forwards afterwards goes to the new owner, which queues them
 * until the TRANSFER lands; operations it forwarded before reach the old owner
 * ahead of the HANDOVER (FIFO channels) and travel inside the value.
 *
 * A HANDOVER may reach a node whose own TRANSFER has not landed yet (two
 * requesters in quick succession): the node remembers where to pass the key
 * on, applies what it queued when the value lands, and passes it on. Such a
 * node does not ask for the key again while it waits, so an entry has at most
 * one pending hand-on, and a chain of requests ends at the last requester.
 *
 * Like every message, LOCALIZE, HANDOVER and TRANSFER are sealed by their
 * sender (model/outbox.c) and refused without the run's seal before they
 * take a number (ps_node_recv): a made-up one never moves a value, nor
 * takes the place of a real one.
 */
#include "model/internal.h"

#include <stdlib.h>
#include <string.h>

void ps__entry_release(ps_node *n, store_stripe *st, key_entry *e, ps_key k) {
  if (e->state == KEY_ABSENT && !e->queue_head && !e->kb &&
      ps_layout_home(&n->layout, k) != n->id)
    ps__stripe_remove(st, k);
}

/* Sends k's value to new_owner and forgets it here. */
static void send_value(call_ctx *c, key_entry *e, ps_key k, uint32_t new_owner) {
  uint32_t len = ps_layout_value_len(&c->node->layout, k);
  float zeros[64];
  const float *v = e->value;
  float *tmp = NULL;
  if (!v) {
    v = len <= 64 ? zeros : (tmp = calloc(len, sizeof *tmp));
    if (len <= 64) memset(zeros, 0, sizeof zeros);
    if (!v) {
      c->error = PS_ERR_NOMEM;
      return;
    }
  }
  ps__ctx_add(c, new_owner, PS_MSG_TRANSFER, c->node->id, 0, 0, 0, k, 0, v, len);
  free(tmp);
  ps__bounded_on_leave(e);
  free(e->value);
  e->value = NULL;
  e->state = KEY_ABSENT;
}

void ps__handover(call_ctx *c, key_entry **ep, store_stripe *st, ps_key k,
                  uint32_t new_owner) {
  key_entry *e = *ep;
  if (e->state == KEY_INCOMING) {
    e->forward = 1;
    e->forward_to = new_owner;
    return;
  }
  send_value(c, e, k, new_owner);
  if (st) {
    ps__entry_release(c->node, st, e, k);
    *ep = NULL;
  }
}

void ps__directory_move(call_ctx *c, key_entry *e, ps_key k, uint32_t new_owner) {
  uint32_t old = e->owner;
  e->owner = new_owner;
  if (old == c->node->id)
    ps__handover(c, &e, NULL, k, new_owner); /* the home keeps its entry */
  else
    ps__ctx_add(c, old, PS_MSG_HANDOVER, c->node->id, 0, 0, new_owner, k, 0, NULL, 0);
}

void ps__localize_key(call_ctx *c, key_entry *e, ps_key k, const pending_op *waiter) {
  ps_node *n = c->node;
  if (e->state == KEY_REPLICA) ps__replica_drop(c, e, k); /* its delta goes first */
  if (e->state == KEY_ABSENT) {
    e->state = KEY_INCOMING;
    uint32_t home = ps_layout_home(&n->layout, k);
    if (home == n->id)
      ps__directory_move(c, e, k, n->id);
    else
      ps__ctx_add(c, home, PS_MSG_LOCALIZE, n->id, 0, 0, 0, k, 0, NULL, 0);
  }
  /* INCOMING (or a replica's first value): on its way; just wait for it. */
  if (waiter->request) ps__queue_op(c, e, waiter, NULL);
}

/* ------------------------------------------------------------ handlers */

int ps__handle_localize(call_ctx *c, const ps_msg *m) {
  ps_node *n = c->node;
  uint32_t requester = m->src;
  if (requester == n->id) return PS_ERR_PROTOCOL;
  for (uint32_t i = 0; i < m->key_count; i++)
    if (ps_layout_home(&n->layout, ps_msg_key(m, i)) != n->id) return PS_ERR_PROTOCOL;
  int rc = PS_OK;
  for (uint32_t i = 0; i < m->key_count; i++) {
    ps_key k = ps_msg_key(m, i);
    store_stripe *st;
    key_entry *e = ps__node_lock_entry(n, k, &st);
    if (!e) return PS_ERR_NOMEM;
    if (e->owner == requester) rc = PS_ERR_PROTOCOL; /* it asked twice: ignore */
    else ps__directory_move(c, e, k, requester);
    pthread_mutex_unlock(&st->lock);
  }
  return rc;
}

/* Whether a node may be told to hand a key on: it owns the key, or receives
 * it and has not been told already. */
static bool entry_can_hand_on(const key_entry *e) {
  return e->state == KEY_OWNED || (e->state == KEY_INCOMING && !e->forward);
}

/* The same for k, before any entry changes; creates no entry (a home key
 * without one is owned by its home). */
static bool may_hand_on(ps_node *n, ps_key k) {
  store_stripe *st = store_stripe_of(&n->store, k);
  pthread_mutex_lock(&st->lock);
  key_entry *e = stripe_find(st, k);
  bool ok = e ? entry_can_hand_on(e) : ps_layout_home(&n->layout, k) == n->id;
  pthread_mutex_unlock(&st->lock);
  return ok;
}

int ps__handle_handover(call_ctx *c, const ps_msg *m) {
  ps_node *n = c->node;
  uint32_t new_owner = m->aux;
  if (new_owner >= n->layout.num_nodes || new_owner == n->id) return PS_ERR_PEER;
  for (uint32_t i = 0; i < m->key_count; i++) {
    ps_key k = ps_msg_key(m, i);
    if (ps_layout_home(&n->layout, k) != m->src || !may_hand_on(n, k))
      return PS_ERR_PROTOCOL;
  }
  int rc = PS_OK;
  for (uint32_t i = 0; i < m->key_count; i++) {
    ps_key k = ps_msg_key(m, i);
    store_stripe *st;
    key_entry *e = ps__node_lock_entry(n, k, &st);
    if (!e) return PS_ERR_NOMEM;
    if (entry_can_hand_on(e))
      ps__handover(c, &e, st, k, new_owner);
    else /* the same key twice in one message */
      rc = PS_ERR_PROTOCOL;
    if (e) ps__entry_release(n, st, e, k);
    pthread_mutex_unlock(&st->lock);
  }
  return rc;
}

/* The value of k landed: own it, apply what waited, pass it on if told to. */
static void land(call_ctx *c, store_stripe *st, key_entry *e, ps_key k, float *value) {
  ps_node *n = c->node;
  free(e->value);
  e->value = value;
  e->state = KEY_OWNED;
  stat_add(&n->stats.relocations, 1);
  ps__entry_drain_queue(c, e, k);
  if (e->forward) {
    e->forward = 0;
    send_value(c, e, k, e->forward_to);
    ps__entry_release(n, st, e, k);
  } else if (!node_serves(n)) { /* it stopped serving (scaling): on to the home */
    ps__move_home(c, k);
  }
}

/* Whether this node takes a TRANSFER of k: it is receiving k, or holds no
 * copy of it (a transfer it did not ask for: kept, never dropped, for the
 * home's directory names this node when the home sent it here). */
static bool takes_transfer(ps_node *n, const key_entry *e, ps_key k) {
  if (!e) return ps_layout_home(&n->layout, k) != n->id; /* a home without one owns */
  return e->state == KEY_INCOMING || (e->state == KEY_ABSENT && !e->queue_head);
}

int ps__handle_transfer(call_ctx *c, const ps_msg *m) {
  ps_node *n = c->node;
  for (uint32_t i = 0; i < m->key_count; i++) {
    ps_key k = ps_msg_key(m, i);
    store_stripe *st = store_stripe_of(&n->store, k);
    pthread_mutex_lock(&st->lock);
    bool ok = takes_transfer(n, stripe_find(st, k), k);
    pthread_mutex_unlock(&st->lock);
    if (!ok) return PS_ERR_PROTOCOL;
  }
  uint32_t offset = 0;
  int rc = PS_OK;
  for (uint32_t i = 0; i < m->key_count; i++) {
    ps_key k = ps_msg_key(m, i);
    uint32_t len = ps_layout_value_len(&n->layout, k);
    float *value = malloc((size_t)len * sizeof *value);
    if (!value) return PS_ERR_NOMEM;
    ps_msg_values(m, offset, value, len);
    offset += len;
    store_stripe *st;
    key_entry *e = ps__node_lock_entry(n, k, &st);
    if (!e) {
      free(value);
      return PS_ERR_NOMEM;
    }
    if (e->state == KEY_INCOMING || e->state == KEY_ABSENT) {
      land(c, st, e, k, value);
    } else { /* the same key twice in one message */
      free(value);
      rc = PS_ERR_PROTOCOL;
    }
    pthread_mutex_unlock(&st->lock);
  }
  return rc;
}
