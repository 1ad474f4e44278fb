/*
 * Moving keys between servers on a policy's decision (PSLD), not only to
 * the node that asks for them.
 *
 *   policy's node --MOVE--> destination --LOCALIZE--> home --HANDOVER-->
 *   old owner --TRANSFER--> destination
 *
 * A move is a localize the destination starts itself: the MOVE only asks it
 * to. So every TRANSFER still goes to the node that asked its home for the
 * key (relocation.c), the home's directory orders concurrent moves and
 * localizes of a key (the last one it sees wins), and operations on a key
 * in transfer queue at the destination and apply in order on arrival:
 * relocation's guarantees, unchanged, for moves.
 *
 * Scaling. A server that stops serving (a step of the node's scaling
 * schedule, applied by its timer) asks the home of every key it owns to
 * take it (MOVEs to the homes, which never stop serving), hands on the keys
 * still coming to it as they land, and ignores MOVEs from then on; so once
 * messages quiesce it holds no key.
 */
#include "model/internal.h"

#include <math.h>
#include <stdlib.h>

/* With the entry locked: starts moving k here unless it is here already or
 * on its way (a replica kept by all-reduce stays: such keys never move). */
static void move_here(call_ctx *c, key_entry *e, ps_key k) {
  bool stays = e->state == KEY_OWNED || e->state == KEY_INCOMING ||
               e->state == KEY_REPLICA_ARRIVING ||
               (e->state == KEY_REPLICA && c->node->replica_mode == PS_SYNC_ALLREDUCE);
  pending_op none = {.type = PS_MSG_LOCALIZE, .origin = c->node->id}; /* nobody waits */
  if (!stays) ps__localize_key(c, e, k, &none);
}

int ps__handle_move(call_ctx *c, const ps_msg *m) {
  ps_node *n = c->node;
  if (!ps_layout_is_server(&n->layout, n->id)) return PS_ERR_PROTOCOL;
  if (!node_serves(n)) return PS_OK; /* it left: the keys stay where they are */
  for (uint32_t i = 0; i < m->key_count; i++) {
    ps_key k = ps_msg_key(m, i);
    store_stripe *st;
    key_entry *e = ps__node_lock_entry(n, k, &st);
    if (!e) return PS_ERR_NOMEM;
    move_here(c, e, k);
    pthread_mutex_unlock(&st->lock);
  }
  return PS_OK;
}

int ps_node_move(ps_node *node, const ps_key *keys, size_t n, uint32_t dest, double now) {
  int rc = ps__check_op_keys(node, keys, n);
  if (rc != PS_OK) return rc;
  if (dest >= node->layout.num_nodes || !ps_layout_is_server(&node->layout, dest) ||
      dest >= ps_node_serving(node))
    return PS_ERR_INVAL;
  call_ctx c;
  ps__ctx_init(&c, node, now);
  for (size_t i = 0; i < n && !c.error; i++) {
    if (dest != node->id) {
      ps__ctx_add(&c, dest, PS_MSG_MOVE, node->id, 0, 0, 0, keys[i], 0, NULL, 0);
      continue;
    }
    store_stripe *st;
    key_entry *e = ps__node_lock_entry(node, keys[i], &st);
    if (!e) {
      c.error = PS_ERR_NOMEM;
      break;
    }
    move_here(&c, e, keys[i]);
    pthread_mutex_unlock(&st->lock);
  }
  ps__ctx_finish(&c);
  return c.error;
}

/* ------------------------------------------------------------- scaling */

void ps__move_home(call_ctx *c, ps_key k) {
  ps__ctx_add(c, ps_layout_home(&c->node->layout, k), PS_MSG_MOVE, c->node->id, 0, 0, 0, k, 0,
              NULL, 0);
}

static void leave_entry(key_entry *e, void *arg) {
  call_ctx *c = arg;
  if (e->state == KEY_OWNED && !c->error) ps__move_home(c, e->key);
}

/* This server stopped serving: every key it owns goes to its home. Keys
 * still coming here go when they land (relocation.c, land). */
static void scale_leave(ps_node *n, double now) {
  call_ctx c;
  ps__ctx_init(&c, n, now);
  ps__store_each(&n->store, leave_entry, &c);
  ps__ctx_finish(&c);
}

void ps__scale_due(ps_node *n, double now) {
  while (n->next_scale < n->n_scale && n->scale[n->next_scale].at_s <= now) {
    bool served = node_serves(n);
    atomic_store(&n->serving, n->scale[n->next_scale++].servers);
    if (served && !node_serves(n)) scale_leave(n, now);
  }
}

double ps__scale_next(const ps_node *n) {
  return n->next_scale < n->n_scale ? n->scale[n->next_scale].at_s : INFINITY;
}
