/*
 * Replicas: copies of a key on nodes other than its owner, for keys so hot
 * that relocating them would only bounce them between nodes (NuPS).
 *
 * A replica serves its node's reads and pushes from local memory; pushes also
 * accumulate in a delta. Sync rounds (ps_node_sync_replicas, run by a
 * policy's timer) bring the copies together, in one of two ways:
 *
 *   owner      the replica sends SYNC(delta) towards the owner, routed like
 *              any operation (home, forwarding, queueing while the owner's
 *              copy is in transfer); the owner adds the delta and answers
 *              SYNC_REPLY(fresh value); the replica becomes fresh + the delta
 *              it gathered meanwhile. Works for any placement.
 *   all-reduce the replica sends DELTA(delta) to every other node, which adds
 *              it to its replica or, on the owner, to the value. Meant for
 *              keys that stay put and are replicated on every node.
 *
 * Either way every push is applied once to the owner's value and once to
 * every replica, so once pushes stop and rounds quiesce, all copies are equal
 * to the sum of all pushes. A worker reads its own pushes at once (they are
 * in its node's replica); a `set` on a replica sends the pending delta and
 * then the set to the owner, in that order, so the owner ends with the set.
 *
 * Reads served by replicas record their staleness, the age of what the copy
 * has not seen yet: every DELTA and SYNC_REPLY says when it was made, as the
 * sending node's time (request, in nanoseconds); a replica keeps the time a
 * copy holds every push before (fresh_at). A read at time t is stale by
 * t - fresh_at seconds (0 if negative) and by the steps the reading worker
 * itself took since then: its clock advances at times >= fresh_at, from its
 * log of them (step_log; an advance at the very time counts, so that zero-
 * time steps are not lost). So the sync interval, the message's latency and
 * its queueing all count, in time and in the reader's steps, whatever pace
 * the other nodes' workers keep. The log holds the last STEP_LOG_LEN steps
 * exactly and STEP_LOG_STRIDE-step marks of the STEP_LOG_LEN before: an
 * older fresh_at counts to within STEP_LOG_STRIDE steps (never more than
 * taken), one older still as at least the marks' span (or every step, when
 * it precedes the first).
 *   through the owner  the owner's answer: the copy holds the owner's value
 *              then (per key).
 *   all-reduce a round sends every delta its node gathered, so a DELTA
 *              from node s sent at t says every push of s's before t is
 *              here, for every key (channels keep their order); the node
 *              keeps the oldest of these over the nodes that have sent any
 *              and not yet their last (ps_node_finish's DELTAs say so, an
 *              empty one when its node has nothing left to send).
 *              A round with nothing to send after one that sent sends an
 *              empty DELTA (MADE_IDLE): its node is not waited for until its
 *              next DELTA (what it pushes meanwhile counts from that one's
 *              time, an understatement of at most an interval).
 * Before anything came, from the run's start (0): every step the reader took;
 * once every sender sent its last, nothing is missing (0).
 */
#include "model/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- the list */

static int replica_list_add(ps_node *n, ps_key k) {
  pthread_mutex_lock(&n->replica_lock);
  int rc = PS_OK;
  if (n->n_replicas == n->cap_replicas) {
    size_t cap = n->cap_replicas ? n->cap_replicas * 2 : 64;
    ps_key *keys = realloc(n->replica_keys, cap * sizeof *keys);
    if (keys) {
      n->replica_keys = keys;
      n->cap_replicas = cap;
    } else {
      rc = PS_ERR_NOMEM;
    }
  }
  if (rc == PS_OK) n->replica_keys[n->n_replicas++] = k;
  pthread_mutex_unlock(&n->replica_lock);
  atomic_store_explicit(&n->replicas_seen, true, memory_order_relaxed);
  return rc;
}

void ps__replica_list_remove(ps_node *n, ps_key k) {
  pthread_mutex_lock(&n->replica_lock);
  for (size_t i = 0; i < n->n_replicas; i++) {
    if (n->replica_keys[i] != k) continue;
    n->replica_keys[i] = n->replica_keys[--n->n_replicas];
    break;
  }
  pthread_mutex_unlock(&n->replica_lock);
}

size_t ps_node_replica_count(ps_node *n) {
  pthread_mutex_lock(&n->replica_lock);
  size_t count = n->n_replicas;
  pthread_mutex_unlock(&n->replica_lock);
  return count;
}

/* ---------------------------------------------------------- staleness */

static void atomic_max_u64(_Atomic uint64_t *a, uint64_t v) {
  uint64_t old = atomic_load_explicit(a, memory_order_relaxed);
  while (v > old && !atomic_compare_exchange_weak(a, &old, v)) {
  }
}

static unsigned age_bucket(double age_s) {
  double us = age_s * 1e6;
  if (us < 1) return 0;
  unsigned b = (unsigned)floor(log2(us)) + 1;
  return b < PS_STALENESS_BUCKETS ? b : PS_STALENESS_BUCKETS - 1;
}

/* Adds v to a counter: with an atomic add, or, when only the calling
 * thread ever writes it (`own`: a worker's own counters), with a load and a
 * store, which unlike the add is no barrier. */
static void count_add(_Atomic uint64_t *c, uint64_t v, bool own) {
  if (own) atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
                                 memory_order_relaxed);
  else atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

static void count_max(_Atomic uint64_t *c, uint64_t v, bool own) {
  if (!own) atomic_max_u64(c, v);
  else if (v > atomic_load_explicit(c, memory_order_relaxed))
    atomic_store_explicit(c, v, memory_order_relaxed);
}

static unsigned steps_bucket(uint64_t steps) {
  unsigned b = 0;
  while (steps && b < PS_STALENESS_BUCKETS - 1) steps >>= 1, b++;
  return b;
}

static uint64_t ring_at(const _Atomic uint64_t *ring, uint64_t x) {
  return atomic_load_explicit(&ring[(x - 1) % STEP_LOG_LEN], memory_order_relaxed);
}

/* The smallest x in [lo, hi] whose time in ring (x at ring_at) is >= t, or
 * hi + 1; times grow with x, lo >= 1. */
static uint64_t first_from(const _Atomic uint64_t *ring, uint64_t lo, uint64_t hi, uint64_t t) {
  while (lo <= hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (ring_at(ring, mid) >= t) hi = mid - 1;
    else lo = mid + 1;
  }
  return lo;
}

/* w's clock advances at times >= t ns (see the top). */
static uint64_t steps_since(const ps_worker *w, uint64_t t) {
  const step_log *l = atomic_load_explicit(&w->steps, memory_order_acquire);
  uint64_t n = l ? atomic_load_explicit(&l->n, memory_order_acquire) : 0;
  if (n == 0) return 0;
  uint64_t lo = n > STEP_LOG_LEN ? n - STEP_LOG_LEN + 1 : 1;
  if (lo == 1 || ring_at(l->fine, lo) < t) return n + 1 - first_from(l->fine, lo, n, t);
  if (atomic_load_explicit(&l->first_ns, memory_order_relaxed) >= t) return n;
  /* advance lo is at or after t, so is mark jn (STEP_LOG_STRIDE * jn >= lo) */
  uint64_t jn = n / STEP_LOG_STRIDE, jlo = jn > STEP_LOG_LEN ? jn - STEP_LOG_LEN + 1 : 1;
  return n + 1 - STEP_LOG_STRIDE * first_from(l->coarse, jlo, jn, t);
}

void ps__replica_log_step(ps_worker *w, double now) {
  step_log *l = atomic_load_explicit(&w->steps, memory_order_relaxed);
  if (!l) {
    if (!atomic_load_explicit(&w->node->replicas_seen, memory_order_relaxed)) return;
    if (!(l = calloc(1, sizeof *l))) return; /* then its reads count no steps */
    atomic_store_explicit(&w->steps, l, memory_order_release);
  }
  uint64_t n = atomic_load_explicit(&l->n, memory_order_relaxed) + 1;
  uint64_t ns = now > 0 ? (uint64_t)llround(now * 1e9) : 0;
  atomic_store_explicit(&l->fine[(n - 1) % STEP_LOG_LEN], ns, memory_order_relaxed);
  if (n % STEP_LOG_STRIDE == 0)
    atomic_store_explicit(&l->coarse[(n / STEP_LOG_STRIDE - 1) % STEP_LOG_LEN], ns,
                          memory_order_relaxed);
  if (n == 1) atomic_store_explicit(&l->first_ns, ns, memory_order_relaxed);
  atomic_store_explicit(&l->n, n, memory_order_release);
}

/* A read of replica e by worker reader at now, into s (`own`: the reading
 * worker's counters, on its thread). */
static void record_read(staleness_counters *s, bool own, ps_node *n, const ps_worker *reader,
                        const key_entry *e, double now) {
  uint64_t fresh_ns = e->fresh_at > 0 ? (uint64_t)llround(e->fresh_at * 1e9) : 0;
  if (n->replica_mode == PS_SYNC_ALLREDUCE)
    fresh_ns = atomic_load_explicit(&n->fresh_ns, memory_order_relaxed);
  double fresh_at = fresh_ns == UINT64_MAX ? INFINITY : (double)fresh_ns * 1e-9;
  double age = now > fresh_at ? now - fresh_at : 0;
  uint64_t steps = fresh_ns == UINT64_MAX ? 0 : steps_since(reader, fresh_ns);
  uint64_t ns = (uint64_t)llround(age * 1e9);
  count_add(&s->reads, 1, own);
  count_add(&s->sum_ns, ns, own);
  count_add(&s->sum_steps, steps, own);
  count_add(&s->hist[age_bucket(age)], 1, own);
  count_add(&s->steps_hist[steps_bucket(steps)], 1, own);
  count_max(&s->max_ns, ns, own);
  count_max(&s->max_steps, steps, own);
}

double ps_staleness_quantile(const uint64_t hist[PS_STALENESS_BUCKETS], double q) {
  int b = hist_quantile_bucket(hist, PS_STALENESS_BUCKETS, q);
  return b < 0 ? 0 : ldexp(1e-6, b); /* the bucket's upper bound */
}

double ps_staleness_steps_quantile(const uint64_t hist[PS_STALENESS_BUCKETS], double q) {
  int b = hist_quantile_bucket(hist, PS_STALENESS_BUCKETS, q);
  return b <= 0 ? 0 : ldexp(1, b) - 1; /* the bucket's largest count */
}

uint64_t ps__made_ns(const call_ctx *c) {
  return c->now > 0 ? (uint64_t)llround(c->now * 1e9) : 0;
}

uint32_t ps__made_clock(call_ctx *c) {
  if (!c->made_read) {
    c->made_clock = atomic_load_explicit(&c->node->clock, memory_order_relaxed);
    c->made_read = true;
  }
  return c->made_clock < 0 ? 0 : c->made_clock >= MADE_FINAL ? MADE_FINAL - 1
                                                               : (uint32_t)c->made_clock;
}

/* All-reduce: takes in DELTA m's sender's cut, and publishes the oldest of
 * the nodes still sending (order lock held). */
static void take_cut(ps_node *n, const ps_msg *m) {
  if (m->origin >= n->layout.num_nodes || m->origin == n->id) return;
  writer_cut *w = &n->cuts[m->origin];
  writer_cut old = *w;
  if (m->aux == MADE_FINAL) {
    w->state = 2;
  } else if (m->aux == MADE_IDLE && !m->key_count) {
    if (w->state == 1) w->state = 0;
  } else if (w->state != 2) {
    w->state = 1;
    w->at = fmax(w->at, (double)m->request * 1e-9);
  }
  /* A sending node's cut only grows: the oldest moves only when the node
   * that held it moved, or a node began or stopped sending. Else nothing to
   * rescan (a scan per DELTA would cost every node's count per message). */
  if (old.state == 1 && w->state == 1 && old.at > n->cut_min_at) return;
  double at = INFINITY;
  bool any = false;
  for (uint32_t i = 0; i < n->layout.num_nodes; i++) {
    if (n->cuts[i].state != 1) continue;
    any = true;
    at = fmin(at, n->cuts[i].at);
  }
  n->cut_min_at = at;
  atomic_store_explicit(&n->fresh_ns, any ? (uint64_t)llround(at * 1e9) : UINT64_MAX,
                        memory_order_relaxed);
}

/* Takes in when the delta or value m brings was made, if newer. */
static void take_made(key_entry *e, const ps_msg *m) {
  double at = (double)m->request * 1e-9;
  if (at > e->fresh_at) e->fresh_at = at;
}

/* ------------------------------------------------------------ serving */

static bool add_into(float **dst, uint32_t len, const float *vals) {
  if (!*dst && !(*dst = calloc(len, sizeof **dst))) return false;
  floats_add(*dst, vals, len);
  return true;
}

/* Sends a replica's delta to the owner as a push nobody waits for. */
static void flush_delta(call_ctx *c, key_entry *e, ps_key k, uint32_t len) {
  if (!e->delta) return;
  ps__ctx_add(c, route_of(c->node, e, k), PS_MSG_PUSH, c->node->id, 0, 0, 0, k, 0, e->delta, len);
  free(e->delta);
  e->delta = NULL;
}

int ps__replica_apply_local(ps_worker *w, key_entry *e, ps_key k, uint8_t type, const float *vals,
                            float *out, double now) {
  uint32_t len = ps_layout_value_len(&w->node->layout, k);
  if (type == PS_MSG_PULL) {
    record_read(&w->staleness, true, w->node, w, e, now);
    if (e->value) memcpy(out, e->value, len * sizeof *out);
    else memset(out, 0, len * sizeof *out);
    return PS_OK;
  }
  return add_into(&e->value, len, vals) && add_into(&e->delta, len, vals) ? PS_OK
                                                                          : PS_ERR_NOMEM;
}

void ps__replica_serve(call_ctx *c, key_entry *e, ps_key k, const pending_op *op,
                       const float *vals) {
  ps_node *n = c->node;
  uint32_t len = ps_layout_value_len(&n->layout, k);
  ps_worker *w = &n->workers[op->worker];
  if (op->type == PS_MSG_PULL) { /* on any thread: the node's counters */
    record_read(&n->staleness, false, n, w, e, c->now);
    if (!e->value && !(e->value = calloc(len, sizeof *e->value))) goto oom;
    ps__deliver_result(c, op, k, e->value, len);
    return;
  }
  if (op->type == PS_MSG_PUSH) {
    if (ps__replica_apply_local(w, e, k, op->type, vals, NULL, c->now) != PS_OK) goto oom;
  } else { /* SET: what was pushed before goes first, then the set */
    if (n->replica_mode == PS_SYNC_ALLREDUCE) {
      c->error = PS_ERR_INVAL; /* all-reduce merges additive updates only */
      return;
    }
    flush_delta(c, e, k, len);
    ps__ctx_add(c, route_of(n, e, k), PS_MSG_SET, n->id, 0, 0, 0, k, 0, vals, len);
    if (!e->value && !(e->value = malloc(len * sizeof *e->value))) goto oom;
    memcpy(e->value, vals, len * sizeof *vals);
  }
  ps__deliver_result(c, op, k, NULL, 0);
  return;
oom:
  c->error = PS_ERR_NOMEM;
}

void ps__replica_drop(call_ctx *c, key_entry *e, ps_key k) {
  flush_delta(c, e, k, ps_layout_value_len(&c->node->layout, k));
  free(e->value);
  e->value = NULL;
  e->state = KEY_ABSENT;
  e->sync_pending = 0;
  ps__replica_list_remove(c->node, k);
}

/* ------------------------------------------------------ creating them */

int ps_node_add_initial_replicas(ps_node *n, const ps_key *keys, size_t n_keys,
                                 ps_sync_mode mode) {
  if (!ps_layout_is_server(&n->layout, n->id)) return PS_ERR_INVAL; /* no store */
  n->replica_mode = mode;
  for (size_t i = 0; i < n_keys; i++)
    if (!ps_layout_value_len(&n->layout, keys[i])) return PS_ERR_KEY_RANGE;
  for (size_t i = 0; i < n_keys; i++) {
    store_stripe *st;
    key_entry *e = ps__node_lock_entry(n, keys[i], &st);
    if (!e) return PS_ERR_NOMEM;
    int rc = PS_OK;
    if (e->state == KEY_ABSENT) {
      e->state = KEY_REPLICA;
      rc = replica_list_add(n, keys[i]);
    } else if (e->state == KEY_OWNED && mode == PS_SYNC_ALLREDUCE && !e->mirror) {
      e->mirror = 1; /* the owner's own pushes must reach the replicas too */
      rc = replica_list_add(n, keys[i]);
    }
    pthread_mutex_unlock(&st->lock);
    if (rc != PS_OK) return rc;
  }
  return PS_OK;
}

/* Asks the owner for k's value (a SYNC with a zero delta). */
/* A SYNC carries a number, unique on its node, that its reply echoes (in
 * pos): a replica takes only the reply to its latest SYNC. A reply to a SYNC
 * of a replica since dropped (and perhaps made again) is stale. */
static uint32_t next_sync_seq(ps_node *n) {
  uint32_t s = atomic_fetch_add_explicit(&n->sync_seq, 1, memory_order_relaxed) + 1;
  return s ? s : atomic_fetch_add_explicit(&n->sync_seq, 1, memory_order_relaxed) + 1;
}

/* Sends e's delta to every other node (all-reduce), and forgets it. */
static void broadcast_delta(call_ctx *c, key_entry *e, ps_key k, uint32_t len, bool last) {
  ps__ctx_add_all_made(c, PS_MSG_DELTA, ps__made_ns(c), last ? MADE_FINAL : ps__made_clock(c), k,
                       e->delta, len);
  if (c->node->testing_double_count && e->state == KEY_REPLICA && e->value)
    floats_add(e->value, e->delta, len);
  free(e->delta);
  e->delta = NULL;
}

static void request_value(call_ctx *c, key_entry *e, ps_key k) {
  uint32_t len = ps_layout_value_len(&c->node->layout, k);
  float zeros[64] = {0};
  float *z = len <= 64 ? zeros : calloc(len, sizeof *z);
  if (!z) {
    c->error = PS_ERR_NOMEM;
    return;
  }
  e->sync_seq = next_sync_seq(c->node);
  ps__ctx_add(c, route_of(c->node, e, k), PS_MSG_SYNC, c->node->id, 0, 0, 0, k, e->sync_seq, z,
              len);
  if (z != zeros) free(z);
  e->sync_pending = 1;
}

int ps__replicate_keys(ps_node *node, uint32_t worker, ps_ticket id, const ps_key *keys,
                       size_t count, double now, uint64_t *here) {
  *here = 0;
  if (!ps_layout_is_server(&node->layout, node->id)) return PS_ERR_INVAL; /* no store */
  call_ctx c;
  ps__ctx_init(&c, node, now);
  for (size_t i = 0; i < count; i++) {
    store_stripe *st;
    key_entry *e = ps__node_lock_entry(node, keys[i], &st);
    if (!e) {
      c.error = PS_ERR_NOMEM;
      break;
    }
    e->drop_on_arrival = 0; /* wanted again */
    if (e->state == KEY_ABSENT) {
      e->state = KEY_REPLICA_ARRIVING;
      if (replica_list_add(node, keys[i]) != PS_OK) c.error = PS_ERR_NOMEM;
      request_value(&c, e, keys[i]);
    }
    if (e->state == KEY_REPLICA_ARRIVING && id) {
      pending_op waiter = {.type = PS_MSG_LOCALIZE, .origin = node->id, .worker = worker,
                           .request = id};
      ps__queue_op(&c, e, &waiter, NULL);
    } else if (e->state != KEY_REPLICA_ARRIVING) {
      ++*here;
    }
    pthread_mutex_unlock(&st->lock);
  }
  ps__ctx_finish(&c);
  return c.error;
}

int ps_drop_replicas(ps_worker *w, const ps_key *keys, size_t n, double now) {
  return ps_node_drop_replicas(w->node, keys, n, now);
}

int ps_node_drop_replicas(ps_node *node, const ps_key *keys, size_t n, double now) {
  int rc = ps__check_op_keys(node, keys, n);
  if (rc != PS_OK) return rc;
  call_ctx c;
  ps__ctx_init(&c, node, now);
  for (size_t i = 0; i < n; i++) {
    store_stripe *st = store_stripe_of(&node->store, keys[i]);
    pthread_mutex_lock(&st->lock);
    key_entry *e = stripe_find(st, keys[i]);
    if (e && e->state == KEY_REPLICA) {
      ps__replica_drop(&c, e, keys[i]);
      ps__entry_release(node, st, e, keys[i]);
    } else if (e && e->state == KEY_REPLICA_ARRIVING) {
      e->drop_on_arrival = 1; /* its waiters are served first */
    }
    pthread_mutex_unlock(&st->lock);
  }
  ps__ctx_finish(&c);
  return c.error ? c.error : PS_OK;
}

/* ---------------------------------------------------------- sync rounds */

static double l2_norm(const float *v, uint32_t len) {
  double s = 0;
  for (uint32_t i = 0; v && i < len; i++) s += (double)v[i] * v[i];
  return sqrt(s);
}

/* One replica's part of a round; returns whether it synced. */
static bool sync_one(call_ctx *c, key_entry *e, ps_key k, ps_sync_mode mode, double threshold,
                     const float *zeros) {
  ps_node *n = c->node;
  uint32_t len = ps_layout_value_len(&n->layout, k);
  bool send_delta = e->delta && l2_norm(e->delta, len) >= threshold;
  if (mode == PS_SYNC_OWNER) {
    if (e->sync_pending || e->state != KEY_REPLICA) return false;
    e->sync_seq = next_sync_seq(n);
    ps__ctx_add(c, route_of(n, e, k), PS_MSG_SYNC, n->id, 0, 0, 0, k, e->sync_seq,
                send_delta ? e->delta : zeros, len);
    e->sync_pending = 1;
    if (send_delta) {
      free(e->delta);
      e->delta = NULL;
    }
  } else {
    if (!send_delta) return false;
    broadcast_delta(c, e, k, len, false);
  }
  return true;
}

uint64_t ps_node_sync_replicas(ps_node *n, ps_sync_mode mode, double threshold, double now) {
  pthread_mutex_lock(&n->replica_lock);
  size_t count = n->n_replicas;
  ps_key *keys = count ? malloc(count * sizeof *keys) : NULL;
  if (keys) memcpy(keys, n->replica_keys, count * sizeof *keys);
  pthread_mutex_unlock(&n->replica_lock);
  if (!keys) return 0;
  uint32_t max_len = 0;
  for (uint32_t t = 0; t < n->layout.num_tables; t++)
    if (n->layout.tables[t].value_len > max_len) max_len = n->layout.tables[t].value_len;
  float *zeros = calloc(max_len, sizeof *zeros);
  call_ctx c;
  ps__ctx_init(&c, n, now);
  uint64_t synced = 0;
  for (size_t i = 0; zeros && i < count; i++) {
    store_stripe *st = store_stripe_of(&n->store, keys[i]);
    pthread_mutex_lock(&st->lock);
    key_entry *e = stripe_find(st, keys[i]);
    if (e && (e->state == KEY_REPLICA || (e->state == KEY_OWNED && e->mirror)))
      synced += sync_one(&c, e, keys[i], mode, threshold, zeros);
    pthread_mutex_unlock(&st->lock);
  }
  if (mode == PS_SYNC_ALLREDUCE && zeros) { /* an idle round says so, once */
    if (!synced && n->delta_sent) ps__ctx_add_all_empty(&c, PS_MSG_DELTA, ps__made_ns(&c), MADE_IDLE);
    n->delta_sent = synced > 0;
  }
  ps__ctx_finish(&c);
  stat_add(&n->stats.replica_syncs, synced);
  stat_add(&n->stats.sync_rounds, 1);
  free(zeros);
  free(keys);
  return synced;
}

void ps_node_finish(ps_node *n, double now) {
  pthread_mutex_lock(&n->replica_lock);
  size_t count = n->n_replicas;
  ps_key *keys = count ? malloc(count * sizeof *keys) : NULL;
  if (keys) memcpy(keys, n->replica_keys, count * sizeof *keys);
  pthread_mutex_unlock(&n->replica_lock);
  if (!keys) return;
  call_ctx c;
  ps__ctx_init(&c, n, now);
  bool sent = false;
  for (size_t i = 0; i < count; i++) {
    store_stripe *st = store_stripe_of(&n->store, keys[i]);
    pthread_mutex_lock(&st->lock);
    key_entry *e = stripe_find(st, keys[i]);
    uint32_t len = ps_layout_value_len(&n->layout, keys[i]);
    /* All-reduce: to every copy (a push to the owner would come back
     * through its mirror to this replica too); through the owner: to it. */
    bool allreduce = n->replica_mode == PS_SYNC_ALLREDUCE;
    bool mine = e && e->delta && (e->state == KEY_REPLICA || (e->state == KEY_OWNED && e->mirror));
    if (mine && allreduce) {
      broadcast_delta(&c, e, keys[i], len, true);
      sent = true;
    } else if (e && e->state == KEY_REPLICA && !allreduce) {
      flush_delta(&c, e, keys[i], len);
    }
    pthread_mutex_unlock(&st->lock);
  }
  /* All-reduce: the others wait for this node while its last round sent a
   * DELTA; with nothing left to send it says it is done all the same, or
   * they would count its reads as ever staler until the run ends. */
  if (n->replica_mode == PS_SYNC_ALLREDUCE && !sent && n->delta_sent)
    ps__ctx_add_all_empty(&c, PS_MSG_DELTA, ps__made_ns(&c), MADE_FINAL);
  ps__ctx_finish(&c);
  free(keys);
}

void ps__replica_flush_allreduce(call_ctx *c) {
  ps_node *n = c->node;
  if (n->replica_mode != PS_SYNC_ALLREDUCE) return;
  pthread_mutex_lock(&n->replica_lock);
  size_t count = n->n_replicas;
  ps_key *keys = count ? malloc(count * sizeof *keys) : NULL;
  if (keys) memcpy(keys, n->replica_keys, count * sizeof *keys);
  pthread_mutex_unlock(&n->replica_lock);
  if (count && !keys) {
    c->error = PS_ERR_NOMEM;
    return;
  }
  uint64_t synced = 0;
  for (size_t i = 0; i < count; i++) {
    store_stripe *st = store_stripe_of(&n->store, keys[i]);
    pthread_mutex_lock(&st->lock);
    key_entry *e = stripe_find(st, keys[i]);
    if (e && e->delta && (e->state == KEY_REPLICA || (e->state == KEY_OWNED && e->mirror))) {
      broadcast_delta(c, e, keys[i], ps_layout_value_len(&n->layout, keys[i]), false);
      synced++;
    }
    pthread_mutex_unlock(&st->lock);
  }
  if (synced) n->delta_sent = true;
  stat_add(&n->stats.replica_syncs, synced);
  free(keys);
}

/* ------------------------------------------------------------ handlers */

int ps__handle_sync_reply(call_ctx *c, const ps_msg *m) {
  ps_node *n = c->node;
  if (m->origin != n->id) return PS_ERR_PEER;
  uint32_t offset = 0;
  for (uint32_t i = 0; i < m->key_count; i++) {
    ps_key k = ps_msg_key(m, i);
    uint32_t len = ps_layout_value_len(&n->layout, k);
    store_stripe *st = store_stripe_of(&n->store, k);
    pthread_mutex_lock(&st->lock);
    key_entry *e = stripe_find(st, k);
    bool live = e && (e->state == KEY_REPLICA || e->state == KEY_REPLICA_ARRIVING) &&
                e->sync_pending && ps_msg_pos(m, i) == e->sync_seq; /* else stale */
    if (live && !e->value && !(e->value = malloc(len * sizeof *e->value))) {
      pthread_mutex_unlock(&st->lock);
      return PS_ERR_NOMEM;
    }
    if (live) { /* fresh value, plus what was pushed here since the SYNC left */
      ps_msg_values(m, offset, e->value, len);
      for (uint32_t j = 0; e->delta && j < len; j++) e->value[j] += e->delta[j];
      e->sync_pending = 0;
      take_made(e, m);
      if (e->state == KEY_REPLICA_ARRIVING) {
        e->state = KEY_REPLICA;
        ps__entry_drain_queue(c, e, k);
        if (e->drop_on_arrival) {
          e->drop_on_arrival = 0;
          ps__replica_drop(c, e, k);
          ps__entry_release(n, st, e, k);
        }
      }
    } /* else dropped meanwhile (its delta reached the owner already), or the
       * answer to a SYNC sent before a drop: stale */
    pthread_mutex_unlock(&st->lock);
    offset += len;
  }
  return PS_OK;
}

/* A DELTA's key: added to the copy here. All-reduce keeps a copy of its
 * keys on every node, and they never move, so a DELTA for a key this node
 * holds no copy of is not one of the run's: refused (it would otherwise add
 * to a value some other way, or be counted twice). */
static int delta_key(call_ctx *c, const ps_msg *m, uint32_t i, key_entry *e, ps_key k,
                     const float *vals, uint32_t len) {
  (void)c, (void)m, (void)i, (void)k;
  if (e->state == KEY_REPLICA || e->state == KEY_OWNED)
    return add_into(&e->value, len, vals) ? PS_OK : PS_ERR_NOMEM;
  return PS_ERR_PROTOCOL;
}

/* Every key is checked before any is added: a DELTA is taken whole or not. */
static int delta_check(call_ctx *c, const ps_msg *m, uint32_t i, key_entry *e, ps_key k,
                       const float *vals, uint32_t len) {
  (void)c, (void)m, (void)i, (void)k, (void)vals, (void)len;
  return e->state == KEY_REPLICA || e->state == KEY_OWNED ? PS_OK : PS_ERR_PROTOCOL;
}

int ps__handle_delta(call_ctx *c, const ps_msg *m) {
  int rc = ps__msg_each_key(c, m, delta_check);
  if (rc == PS_OK) rc = ps__msg_each_key(c, m, delta_key);
  if (rc == PS_OK) take_cut(c->node, m);
  return rc;
}

/* ------------------------------------------------------------ inspection */

void ps_node_testing_double_count(ps_node *n, bool on) { n->testing_double_count = on; }

void ps_node_each_replicated(ps_node *n, ps_copy_fn fn, void *ctx) {
  pthread_mutex_lock(&n->replica_lock);
  size_t count = n->n_replicas;
  ps_key *keys = count ? malloc(count * sizeof *keys) : NULL;
  if (keys) memcpy(keys, n->replica_keys, count * sizeof *keys);
  pthread_mutex_unlock(&n->replica_lock);
  for (size_t i = 0; keys && i < count; i++) {
    store_stripe *st = store_stripe_of(&n->store, keys[i]);
    pthread_mutex_lock(&st->lock);
    key_entry *e = stripe_find(st, keys[i]);
    uint32_t len = ps_layout_value_len(&n->layout, keys[i]);
    if (e && e->state == KEY_REPLICA) fn(ctx, keys[i], e->value, len, false);
    else if (e && e->state == KEY_OWNED && e->mirror) fn(ctx, keys[i], e->value, len, true);
    pthread_mutex_unlock(&st->lock);
  }
  free(keys);
}
