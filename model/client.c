/*
 * The client side: operations a worker issues on its node, and the tickets
 * that track the ones that travel.
 *
 * A ticket counts the keys still outstanding plus one guard held while the
 * operation is being issued, so a reply racing in on the receiver thread can
 * never complete a ticket the worker has not finished issuing. An operation
 * whose every key is served from local memory (the fast path, issue_access)
 * opens no ticket at all; one that opens a ticket but is served whole before
 * it returns never shows it.
 */
#include "model/internal.h"

#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- tickets */

static ticket_slot *ticket_find(ps_worker *w, ps_ticket id) {
  for (size_t i = 0; i < w->n_tickets; i++)
    if (w->tickets[i].id == id) return &w->tickets[i];
  return NULL;
}

int ps__ticket_open(ps_worker *w, uint64_t keys, float *out, size_t out_len,
                    ps_ticket *id) {
  return ps__ticket_open_bounded(w, keys, out, out_len, -1, 0, -1, id);
}

int ps__ticket_open_bounded(ps_worker *w, uint64_t keys, float *out, size_t out_len,
                            int64_t stamp, uint64_t issue_seq, int64_t write_clock, ps_ticket *id) {
  pthread_mutex_lock(&w->lock);
  if (w->n_tickets == w->cap_tickets) {
    size_t cap = w->cap_tickets ? w->cap_tickets * 2 : 8;
    ticket_slot *t = realloc(w->tickets, cap * sizeof *t);
    if (!t) {
      pthread_mutex_unlock(&w->lock);
      return PS_ERR_NOMEM;
    }
    w->tickets = t;
    w->cap_tickets = cap;
  }
  *id = w->next_ticket++;
  w->tickets[w->n_tickets++] =
      (ticket_slot){.id = *id, .pending = keys + 1, .out = out, .out_len = out_len,
                    .stamp = stamp, .issue_seq = issue_seq, .write_clock = write_clock};
  pthread_mutex_unlock(&w->lock);
  return PS_OK;
}

/* The keys t waits for (n_wait of them). */
static awaited_key *awaited_of(ticket_slot *t) {
  return t->n_wait <= TICKET_INLINE_KEYS ? t->inline_keys : t->heap_keys;
}

int ps__ticket_expect(ps_worker *w, ps_ticket id, uint8_t reply, const ps_key *keys,
                      const uint32_t *idx, size_t n, double now) {
  if (n == 0) return PS_OK;
  pthread_mutex_lock(&w->lock);
  ticket_slot *t = ticket_find(w, id);
  int rc = t && !t->n_wait ? PS_OK : PS_ERR_PROTOCOL; /* once, at issue */
  if (t) t->issued_at = now;
  if (rc == PS_OK && n > TICKET_INLINE_KEYS &&
      !(t->heap_keys = malloc(n * sizeof *t->heap_keys)))
    rc = PS_ERR_NOMEM;
  if (rc == PS_OK) {
    t->n_wait = (uint32_t)n;
    awaited_key *a = awaited_of(t);
    for (size_t j = 0; j < n; j++)
      a[j] = (awaited_key){.key = keys[idx[j]], .pos = w->scratch_pos[idx[j]]};
  }
  if (rc == PS_OK) t->wait_type = reply;
  pthread_mutex_unlock(&w->lock);
  return rc;
}

/* The index of position pos among the awaited keys a[n], or -1. */
static long wait_index(const awaited_key *a, uint32_t n, uint32_t pos) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (a[mid].pos < pos) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && a[lo].pos == pos ? (long)lo : -1;
}

uint32_t ps__ticket_take_reply(ps_worker *w, const ps_msg *m, uint8_t *took, double *issued_at) {
  pthread_mutex_lock(&w->lock);
  ticket_slot *t = ticket_find(w, m->request);
  bool kind = t && t->wait_type == m->type; /* a pull's reply to a pull */
  awaited_key *a = kind ? awaited_of(t) : NULL;
  uint32_t taken = 0;
  *issued_at = t ? t->issued_at : 0;
  for (uint32_t i = 0; i < m->key_count; i++) {
    long at = kind ? wait_index(a, t->n_wait, ps_msg_pos(m, i)) : -1;
    took[i] = at >= 0 && !a[at].answered && a[at].key == ps_msg_key(m, i);
    if (took[i]) a[at].answered = 1;
    taken += took[i];
  }
  pthread_mutex_unlock(&w->lock);
  return taken;
}

bool ps__ticket_stamp(ps_worker *w, ps_ticket id, int64_t *stamp, uint64_t *issue_seq) {
  pthread_mutex_lock(&w->lock);
  ticket_slot *t = ticket_find(w, id);
  if (t) {
    *stamp = t->stamp;
    *issue_seq = t->issue_seq;
  }
  pthread_mutex_unlock(&w->lock);
  return t != NULL;
}

static bool span_ok(const ticket_slot *t, uint32_t pos, uint32_t len) {
  return t->out && (uint64_t)pos + len <= t->out_len;
}

int ps__ticket_fill(ps_worker *w, ps_ticket id, uint32_t pos, const float *vals,
                    uint32_t len) {
  pthread_mutex_lock(&w->lock);
  ticket_slot *t = ticket_find(w, id);
  int rc = t && span_ok(t, pos, len) ? PS_OK : PS_ERR_PROTOCOL;
  if (rc == PS_OK) memcpy(t->out + pos, vals, (size_t)len * sizeof *vals);
  pthread_mutex_unlock(&w->lock);
  return rc;
}

int ps__ticket_progress(ps_worker *w, call_ctx *c, ps_ticket id, uint64_t n,
                        const float *copy, uint32_t pos, uint32_t len, bool silent) {
  pthread_mutex_lock(&w->lock);
  ticket_slot *t = ticket_find(w, id);
  if (!t || n > t->pending || (copy && !span_ok(t, pos, len))) {
    pthread_mutex_unlock(&w->lock);
    return PS_ERR_PROTOCOL;
  }
  if (copy) memcpy(t->out + pos, copy, (size_t)len * sizeof *copy);
  t->pending -= n;
  bool done = t->pending == 0;
  if (done) {
    free(t->heap_keys);
    *t = w->tickets[--w->n_tickets];
  }
  pthread_mutex_unlock(&w->lock);
  if (done && !silent) ps__ctx_wake(c, w->index, id);
  return PS_OK;
}

bool ps_worker_done(ps_worker *w, ps_ticket t) {
  pthread_mutex_lock(&w->lock);
  bool done = t < w->next_ticket && !ticket_find(w, t);
  pthread_mutex_unlock(&w->lock);
  return done;
}

size_t ps_worker_pending(ps_worker *w) {
  pthread_mutex_lock(&w->lock);
  size_t n = w->n_tickets;
  pthread_mutex_unlock(&w->lock);
  return n;
}

int ps_worker_ticket_info(ps_worker *w, ps_ticket id, ps_ticket_info *out) {
  pthread_mutex_lock(&w->lock);
  ticket_slot *t = ticket_find(w, id);
  if (t) {
    *out = (ps_ticket_info){.op = "WAIT", .home = UINT32_MAX};
    awaited_key *a = t->n_wait ? awaited_of(t) : NULL;
    for (uint32_t i = 0; a && i < t->n_wait && !out->has_key; i++) {
      if (a[i].answered) continue;
      out->op = t->wait_type == PS_MSG_PULL_REPLY ? "PULL" : "PUSH";
      out->has_key = true;
      out->key = a[i].key;
      out->home = ps_layout_home(&w->node->layout, a[i].key);
    }
  }
  pthread_mutex_unlock(&w->lock);
  return t ? PS_OK : PS_ERR_INVAL;
}

ps_node *ps_worker_node(ps_worker *w) { return w->node; }
uint32_t ps_worker_index(const ps_worker *w) { return w->index; }
int64_t ps_worker_clock(const ps_worker *w) { return atomic_load(&w->clock); }

/* ----------------------------------------------------------- arguments */

/* Checks keys and computes each key's float offset into the caller's buffer
 * (in w's scratch); the total goes to *floats. */
static int plan_offsets(ps_worker *w, const ps_key *keys, size_t n, uint64_t *floats) {
  if (n > PS_MAX_OP_KEYS || (n && !keys)) return n > PS_MAX_OP_KEYS ? PS_ERR_LIMIT : PS_ERR_INVAL;
  if (n > w->scratch_cap) {
    uint32_t *p = realloc(w->scratch_pos, n * sizeof *p);
    if (!p) return PS_ERR_NOMEM;
    w->scratch_pos = p;
    uint32_t *d = realloc(w->scratch_defer, n * sizeof *d);
    if (!d) return PS_ERR_NOMEM;
    w->scratch_defer = d;
    w->scratch_cap = n;
  }
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t len = ps_layout_value_len(&w->node->layout, keys[i]);
    if (!len) return PS_ERR_KEY_RANGE;
    if (total > UINT32_MAX - len) return PS_ERR_LIMIT;
    w->scratch_pos[i] = (uint32_t)total;
    total += len;
  }
  *floats = total;
  return PS_OK;
}

/* ----------------------------------------------------- reads and writes */

/* Serves one key of an access (len floats at pos of buf) from local memory,
 * if fast local access can: an owned key, or a replica (but a set on a
 * replica must reach the owner), or under a bounded model a read of a cached
 * copy fresh enough. With the entry locked; sends nothing. Returns whether it
 * did. */
static bool serve_inline(ps_worker *w, key_entry *e, ps_key k, uint8_t type, float *buf,
                         uint32_t pos, uint32_t len, double now, int *err) {
  ps_node *node = w->node;
  if (!node->settings.fast_local_access) return false;
  const float *vals = type == PS_MSG_PULL ? NULL : buf + pos;
  float *out = type == PS_MSG_PULL ? buf + pos : NULL;
  bool bounded = w->cons.model != PS_CONSISTENCY_ASYNC;
  int rc;
  if (e->state == KEY_OWNED) {
    rc = ps__value_apply(e, len, type, vals, out);
    if (rc == PS_OK && bounded && type != PS_MSG_PULL && e->kb) {
      ps__bounded_note_write(w, e, k, type, vals, false);
      ps__bounded_owner_written(node, e, k);
    }
  } else if (e->state == KEY_REPLICA && type != PS_MSG_SET) {
    rc = ps__replica_apply_local(w, e, k, type, vals, out, now);
    if (bounded && type == PS_MSG_PULL) ps__bounded_note_replica_read(w);
    else if (bounded && e->kb) ps__bounded_note_write(w, e, k, type, vals, false);
  } else if (bounded && type == PS_MSG_PULL && e->state == KEY_ABSENT) {
    return ps__cache_read(w, e, k, out);
  } else {
    return false;
  }
  if (rc != PS_OK) *err = rc;
  return true;
}

/* Counts key accesses of w, on w's own cache line (workers of one node never
 * write a line another worker writes). A load and a store, not an atomic
 * add: only the thread using the handle writes it (ps.h: a handle is used by
 * one thread at a time), and an atomic add would be a full barrier, waiting
 * for the pulled values to be stored, a third of a local pull's time. */
static void count_accesses(_Atomic uint64_t *counter, uint64_t n) {
  uint64_t was = atomic_load_explicit(counter, memory_order_relaxed);
  atomic_store_explicit(counter, was + n, memory_order_relaxed);
}

/* The slow path's first pass: serves what local memory can of keys[first..n)
 * (the lengths at w's scratch offsets into buf), with no lock but each key's,
 * and lists the others, in order, at w->scratch_defer[0..*deferred). Adds
 * the keys it served to *local. PS_OK or the first error. */
static int serve_local_pass(ps_worker *w, uint8_t type, const ps_key *keys, size_t n,
                            size_t first, float *buf, double now, uint64_t *local,
                            size_t *deferred) {
  ps_node *node = w->node;
  uint64_t served = 0;
  size_t left = 0;
  int err = PS_OK;
  for (size_t i = first; i < n && err == PS_OK; i++) {
    uint32_t len = ps_layout_value_len(&node->layout, keys[i]);
    store_stripe *st;
    key_entry *e = ps__worker_lock_entry(w, keys[i], &st);
    if (!e) {
      err = PS_ERR_NOMEM;
      break;
    }
    if (serve_inline(w, e, keys[i], type, buf, w->scratch_pos[i], len, now, &err)) served++;
    else w->scratch_defer[left++] = (uint32_t)i;
    pthread_mutex_unlock(&st->lock);
  }
  *local += served;
  *deferred = left;
  return err;
}

/* Sends op on key k (entry e locked), which is neither served from local
 * memory nor owned here: bounded consistency notes the write or the miss,
 * then the operation goes straight to the server that answered last (route
 * hints) or through ps__serve_op (queued on a key in transfer, else to the
 * home or the owner its directory names). A key owned elsewhere keeps no
 * entry here once its operation left, unless the entry still says something
 * (ps__entry_release): a node's table then holds its own keys, not every key
 * it touched. Returns whether the key was sent away (not here at all), so
 * that its answer comes in a message. */
static bool send_away(ps_worker *w, call_ctx *c, store_stripe *st, key_entry *e, ps_key k,
                      const pending_op *op, const float *vals) {
  ps_node *node = w->node;
  bool bounded = w->cons.model != PS_CONSISTENCY_ASYNC;
  if (bounded && op->type != PS_MSG_PULL && (e->kb || e->state == KEY_ABSENT))
    ps__bounded_note_write(w, e, k, op->type, vals, e->state == KEY_ABSENT);
  else if (bounded && e->state == KEY_ABSENT)
    stat_add(&node->bounded.cache_misses, 1);
  bool absent = e->state == KEY_ABSENT;
  uint32_t hint;
  if (absent && node_routes(node) && ps__route_get(&w->routes, k, &hint))
    ps__ctx_forward(c, hint, op, k, vals);
  else
    ps__serve_op(c, e, k, op, vals);
  ps__entry_release(node, st, e, k);
  return absent;
}

/* The slow path's second pass, in one call under the node's order lock (see
 * ps__ctx_init): the keys the first pass left (w->scratch_defer[0..deferred))
 * of ticket id, each served from local memory if it arrived meanwhile, else
 * sent (a key owned here too: as PS-Lite, it goes through this node's
 * server). The keys whose answers come in messages are noted on the ticket
 * in one go before any is sent. Adds to *local and *remote; PS_OK or the
 * call's error. */
static int send_deferred(ps_worker *w, uint8_t type, const ps_key *keys, size_t deferred,
                         float *buf, ps_ticket id, double now, uint64_t *local,
                         uint64_t *remote) {
  ps_node *node = w->node;
  size_t sent = 0; /* answered in messages, compacted behind the loop's reads */
  call_ctx c;
  ps__ctx_init(&c, node, now);
  for (size_t d = 0; d < deferred; d++) {
    size_t i = w->scratch_defer[d];
    ps_key k = keys[i];
    uint32_t len = ps_layout_value_len(&node->layout, k), pos = w->scratch_pos[i];
    const float *vals = type == PS_MSG_PULL ? NULL : buf + pos;
    pending_op op = {.type = type, .origin = node->id, .worker = w->index,
                     .request = id, .pos = pos, .len = vals ? len : 0,
                     .subscribe = type == PS_MSG_PULL &&
                                  w->cons.model == PS_CONSISTENCY_ESSP};
    store_stripe *st;
    key_entry *e = ps__worker_lock_entry(w, k, &st);
    if (!e) {
      c.error = PS_ERR_NOMEM;
      break;
    }
    if (serve_inline(w, e, k, type, buf, pos, len, now, &c.error)) { /* arrived meanwhile */
      (*local)++;
    } else if (e->state == KEY_OWNED) {
      ps__ctx_add(&c, node->id, type, node->id, w->index, id, 0, k, pos, vals, op.len);
      w->scratch_defer[sent++] = (uint32_t)i;
      (*remote)++;
    } else {
      if (send_away(w, &c, st, e, k, &op, vals)) w->scratch_defer[sent++] = (uint32_t)i;
      (*remote)++;
    }
    pthread_mutex_unlock(&st->lock);
  }
  uint8_t reply = type == PS_MSG_PULL ? PS_MSG_PULL_REPLY : PS_MSG_WRITE_ACK;
  if (!c.error && ps__ticket_expect(w, id, reply, keys, w->scratch_defer, sent, now) != PS_OK)
    c.error = PS_ERR_NOMEM;
  ps__ctx_finish(&c);
  return c.error;
}

/* The slow path of an access whose keys from `first` on need more than local
 * memory (the keys before it were served already): a ticket, then
 * everything local memory can serve (serve_local_pass); then, under the
 * node's order lock, the keys that need messages (send_deferred). Returns as
 * ps_pull. */
static int issue_with_ticket(ps_worker *w, uint8_t type, const ps_key *keys, size_t n,
                             size_t first, float *buf, size_t buf_len, ps_ticket *ticket,
                             int64_t stamp, uint64_t seq, double now) {
  ps_node *node = w->node;
  uint64_t floats;
  ps_ticket id;
  if (node_routes(node)) ps__routes_adopt(w); /* before its ticket opens */
  int64_t write_clock = node->has_clock && type != PS_MSG_PULL ? ps_worker_clock(w) : -1;
  int rc = plan_offsets(w, keys, n, &floats);
  if (rc == PS_OK)
    rc = ps__ticket_open_bounded(w, n, type == PS_MSG_PULL ? buf : NULL, buf_len, stamp, seq,
                                 write_clock, &id);
  if (rc != PS_OK) {
    count_accesses(&w->local_accesses, first);
    return rc;
  }
  uint64_t local = first, remote = 0;
  size_t deferred = 0;
  int err = serve_local_pass(w, type, keys, n, first, buf, now, &local, &deferred);
  if (deferred && err == PS_OK)
    err = send_deferred(w, type, keys, deferred, buf, id, now, &local, &remote);
  count_accesses(&w->local_accesses, local);
  count_accesses(&w->remote_accesses, remote);
  /* Drop the issuing guard and the keys served here: silent (no call
   * context needed), since the caller learns it from rc. */
  ps__ticket_progress(w, NULL, id, local + 1, NULL, 0, 0, true);
  if (err) return err;
  if (ps_worker_done(w, id)) return PS_OK;
  *ticket = id;
  return PS_PENDING;
}

/* Issues a pull, push or set of keys[n]; buf is the output (pull) or input.
 *
 * The fast path: keys are served from local memory in issue order, each
 * under its own stripe lock and nothing else: no ticket, no node-wide lock,
 * no message. A key's state is read and its value used under one hold of its
 * stripe lock, so a key handed over (or arriving) between two keys of the
 * call is never used here after it left. The first key local memory cannot
 * serve hands the rest of the call to the slow path (issue_with_ticket),
 * which behaves as if the keys before it had been served by it. */
static int issue_access(ps_worker *w, uint8_t type, const ps_key *keys, size_t n,
                        float *buf, size_t buf_len, ps_ticket *ticket, double now) {
  ps_node *node = w->node;
  if (n > PS_MAX_OP_KEYS) return PS_ERR_LIMIT;
  if (n && !keys) return PS_ERR_INVAL;
  uint64_t floats = 0;
  uint32_t lens[16]; /* the first keys' value lengths, not looked up twice */
  for (size_t i = 0; i < n; i++) { /* every key checked before any is served */
    uint32_t len = ps_layout_value_len(&node->layout, keys[i]);
    if (!len) return PS_ERR_KEY_RANGE;
    if (i < 16) lens[i] = len;
    floats += len;
  }
  if (floats > UINT32_MAX) return PS_ERR_LIMIT;
  if (buf_len < floats || (floats && !buf) || !ticket) return PS_ERR_INVAL;
  if (type != PS_MSG_PULL && buf_len != floats) return PS_ERR_VALUE_LEN;
  /* A bounded pull's values hold every write of clocks < the run's clock now. */
  bool bounded = w->cons.model != PS_CONSISTENCY_ASYNC;
  int64_t stamp = bounded && type == PS_MSG_PULL ? ps_node_min_clock(node) : -1;
  uint64_t seq = stamp >= 0 ? atomic_load(&node->clk.push_seq) : 0;
  size_t i = 0;
  uint32_t pos = 0;
  int err = PS_OK;
  if (node->settings.fast_local_access) {
    for (; i < n; i++) {
      uint32_t len = i < 16 ? lens[i] : ps_layout_value_len(&node->layout, keys[i]);
      store_stripe *st;
      key_entry *e = ps__worker_lock_entry(w, keys[i], &st);
      if (!e) {
        err = PS_ERR_NOMEM;
        break;
      }
      bool served = serve_inline(w, e, keys[i], type, buf, pos, len, now, &err);
      pthread_mutex_unlock(&st->lock);
      if (!served) break;
      pos += len;
      if (err) {
        i++; /* served, and counted, as the slow path counts it */
        break;
      }
    }
  }
  if (i == n || err) {
    count_accesses(&w->local_accesses, i);
    return err;
  }
  return issue_with_ticket(w, type, keys, n, i, buf, buf_len, ticket, stamp, seq, now);
}

int ps_pull(ps_worker *w, const ps_key *keys, size_t n, float *out, size_t out_len,
            ps_ticket *ticket, double now) {
  return issue_access(w, PS_MSG_PULL, keys, n, out, out_len, ticket, now);
}

int ps_push(ps_worker *w, const ps_key *keys, size_t n, const float *vals,
            size_t vals_len, ps_ticket *ticket, double now) {
  return issue_access(w, PS_MSG_PUSH, keys, n, (float *)vals, vals_len, ticket, now);
}

int ps_set(ps_worker *w, const ps_key *keys, size_t n, const float *vals,
           size_t vals_len, ps_ticket *ticket, double now) {
  return issue_access(w, PS_MSG_SET, keys, n, (float *)vals, vals_len, ticket, now);
}

/* ----------------------------------------------------- localize, intent */

int ps__check_op_keys(const ps_node *n, const ps_key *keys, size_t count) {
  if (count > PS_MAX_OP_KEYS) return PS_ERR_LIMIT;
  if (count && !keys) return PS_ERR_INVAL;
  for (size_t i = 0; i < count; i++)
    if (!ps_layout_value_len(&n->layout, keys[i])) return PS_ERR_KEY_RANGE;
  return PS_OK;
}

int ps__localize_keys(ps_node *node, uint32_t worker, ps_ticket id, const ps_key *keys,
                      size_t count, double now, uint64_t *here) {
  *here = 0;
  if (!ps_layout_is_server(&node->layout, node->id)) return PS_ERR_INVAL; /* no store */
  call_ctx c;
  ps__ctx_init(&c, node, now);
  for (size_t i = 0; i < count; i++) {
    pending_op waiter = {.type = PS_MSG_LOCALIZE, .origin = node->id, .worker = worker,
                         .request = id};
    store_stripe *st;
    key_entry *e = ps__node_lock_entry(node, keys[i], &st);
    if (!e) {
      c.error = PS_ERR_NOMEM;
      break;
    }
    /* All-reduce replicas never move (DELTAs go to every node, and the owner
     * mirrors its pushes): the replica already serves this node. */
    bool stays = e->state == KEY_REPLICA && node->replica_mode == PS_SYNC_ALLREDUCE;
    if (e->state == KEY_OWNED || stays) ++*here;
    else ps__localize_key(&c, e, keys[i], &waiter);
    pthread_mutex_unlock(&st->lock);
  }
  ps__ctx_finish(&c);
  return c.error;
}

/* Opens a ticket for an operation on keys[n] that `start` begins, and turns
 * its outcome into PS_OK (every key here) or PS_PENDING with *ticket; with no
 * ticket asked for, nobody waits. */
static int with_ticket(ps_worker *w, const ps_key *keys, size_t n, ps_ticket *ticket,
                       double now,
                       int (*start)(ps_node *, uint32_t, ps_ticket, const ps_key *, size_t,
                                    double, uint64_t *)) {
  int rc = ps__check_op_keys(w->node, keys, n);
  if (rc != PS_OK) return rc;
  uint64_t here;
  if (!ticket) return start(w->node, w->index, 0, keys, n, now, &here);
  ps_ticket id;
  if ((rc = ps__ticket_open(w, n, NULL, 0, &id)) != PS_OK) return rc;
  rc = start(w->node, w->index, id, keys, n, now, &here);
  call_ctx none = {.node = w->node, .now = now};
  ps__ticket_progress(w, &none, id, here + 1, NULL, 0, 0, true);
  if (rc != PS_OK) return rc;
  if (ps_worker_done(w, id)) return PS_OK;
  *ticket = id;
  return PS_PENDING;
}

int ps_localize(ps_worker *w, const ps_key *keys, size_t n, ps_ticket *ticket,
                double now) {
  return with_ticket(w, keys, n, ticket, now, ps__localize_keys);
}

int ps_replicate(ps_worker *w, const ps_key *keys, size_t n, ps_ticket *ticket, double now) {
  return with_ticket(w, keys, n, ticket, now, ps__replicate_keys);
}

int ps_node_localize(ps_node *node, const ps_key *keys, size_t n, double now) {
  int rc = ps__check_op_keys(node, keys, n);
  uint64_t here;
  return rc != PS_OK ? rc : ps__localize_keys(node, 0, 0, keys, n, now, &here);
}

int ps_node_replicate(ps_node *node, const ps_key *keys, size_t n, double now) {
  int rc = ps__check_op_keys(node, keys, n);
  uint64_t here;
  return rc != PS_OK ? rc : ps__replicate_keys(node, 0, 0, keys, n, now, &here);
}

int ps_node_key_locality(ps_node *n, ps_key k) {
  if (!ps_layout_value_len(&n->layout, k)) return PS_ERR_KEY_RANGE;
  store_stripe *st = store_stripe_of(&n->store, k);
  pthread_mutex_lock(&st->lock);
  key_entry *e = stripe_find(st, k);
  int where = !e ? (ps_layout_home(&n->layout, k) == n->id ? PS_KEY_LOCAL : PS_KEY_REMOTE)
              : e->state == KEY_OWNED    ? PS_KEY_LOCAL
              : e->state == KEY_REPLICA  ? PS_KEY_REPLICA
              : e->state == KEY_INCOMING || e->state == KEY_REPLICA_ARRIVING
                  ? PS_KEY_ARRIVING
                  : PS_KEY_REMOTE;
  pthread_mutex_unlock(&st->lock);
  return where;
}

int ps_worker_key_locality(ps_worker *w, ps_key k) {
  int where = ps_node_key_locality(w->node, k);
  return where == PS_KEY_REPLICA ? PS_KEY_LOCAL : where;
}

int ps_intent(ps_worker *w, const ps_key *keys, size_t n, int64_t clock_start,
              int64_t clock_end, double now) {
  ps_node *node = w->node;
  if (clock_end < clock_start) return PS_ERR_INVAL;
  int rc = ps__check_op_keys(node, keys, n);
  if (rc != PS_OK) return rc;
  if (node->has_clock) ps__clock_note_intent(w, keys, n, clock_start, clock_end);
  if (node->policy && node->policy->on_intent)
    node->policy->on_intent(node->policy_state, w, keys, n, clock_start, clock_end, now);
  return PS_OK;
}
