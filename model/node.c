/*
 * A node of the parameter server: its lifecycle, the dispatch of incoming
 * messages, and the server side of reads and writes.
 *
 * Every read or write of a key, whether a local worker issued it or it came in
 * a message, goes through ps__serve_op: applied if the key is here, queued if it is
 * on its way here, forwarded otherwise (by the home to the owner its directory
 * names, by anyone else to the home). Routing through the home keeps each
 * origin's operations on a key in issue order: channels are FIFO per pair of
 * nodes, and the home sends a key's HANDOVER after every operation it
 * forwarded to the old owner before.
 */
#include "model/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ settings */

void ps_policy_settings_default(ps_policy_settings *s) {
  s->partition = PS_PARTITION_HASH;
  s->fast_local_access = true;
  s->lookahead = 0;
  s->hot_keys = 0;
  s->owner_replicas = false;
  s->keys_at_workers = false;
  s->route_hints = false;
}

void ps_node_config_default(ps_node_config *c) {
  memset(c, 0, sizeof *c);
  c->workers = 1;
  c->stripes = 64;
  c->layout.partition = PS_PARTITION_HASH;
  ps_policy_settings_default(&c->settings);
}

/* ----------------------------------------------------------- lifecycle */

static int workers_init(ps_node *n, uint32_t count) {
  if (count == 0) return PS_OK; /* a server-only node */
  n->workers = aligned_alloc(PS_CACHE_LINE, count * sizeof *n->workers);
  if (!n->workers) return PS_ERR_NOMEM;
  memset(n->workers, 0, count * sizeof *n->workers);
  n->num_workers = count;
  for (uint32_t i = 0; i < count; i++) {
    ps_worker *w = &n->workers[i];
    w->node = n;
    w->index = i;
    w->next_ticket = 1;
    atomic_init(&w->clock, 0);
    atomic_init(&w->tick, 0);
    pthread_mutex_init(&w->lock, NULL);
  }
  return PS_OK;
}

/* A schedule in time order, each step within [homes, servers]. */
static bool scale_ok(const ps_node_config *c) {
  for (size_t i = 0; i < c->num_scale; i++) {
    const ps_scale_step *s = &c->scale[i];
    if (!(s->at_s >= -INFINITY) || (i && s->at_s < c->scale[i - 1].at_s) ||
        s->servers < ps_layout_homes(&c->layout) || s->servers > ps_layout_servers(&c->layout))
      return false;
  }
  return !c->num_scale || c->scale;
}

/* Whether the config holds a secret (all zeros is none; a node alone
 * receives no message and needs none) and a seal this CPU makes. */
static bool secret_ok(const ps_node_config *c) {
  uint8_t any = 0;
  for (size_t i = 0; i < PS_SECRET_LEN; i++) any |= c->secret[i];
  return (any || c->layout.num_nodes < 2) &&
         (c->seal == PS_SEAL_SIPHASH || (c->seal == PS_SEAL_GMAC && ps_seal_gmac_available()));
}

ps_node *ps_node_new(const ps_node_config *c) {
  if (!c || ps_layout_check(&c->layout) != PS_OK || c->id >= c->layout.num_nodes ||
      (c->workers == 0) == ps_layout_runs_workers(&c->layout, c->id) || !c->env.send ||
      !scale_ok(c) || !secret_ok(c))
    return NULL;
  ps_node *n = aligned_alloc(PS_CACHE_LINE, sizeof *n);
  if (!n) return NULL;
  memset(n, 0, sizeof *n);
  n->id = c->id;
  n->layout = c->layout;
  n->env = c->env;
  n->settings = c->settings;
  n->policy = c->policy;
  n->policy_next_timer = INFINITY;
  n->send_seq = calloc(c->layout.num_nodes, sizeof *n->send_seq);
  n->recv_seq = calloc(c->layout.num_nodes, sizeof *n->recv_seq);
  n->recv_shared = calloc(c->layout.num_nodes, sizeof *n->recv_shared);
  n->cuts = calloc(c->layout.num_nodes, sizeof *n->cuts);
  if (!n->send_seq || !n->recv_seq || !n->recv_shared || !n->cuts) {
    free(n->cuts);
    free(n->send_seq);
    free((void *)n->recv_seq);
    free((void *)n->recv_shared);
    free(n);
    return NULL;
  }
  pthread_mutex_init(&n->replica_lock, NULL);
  pthread_mutex_init(&n->order_lock, NULL);
  atomic_init(&n->serving, ps_layout_servers(&c->layout));
  if (c->num_scale && !(n->scale = malloc(c->num_scale * sizeof *n->scale))) goto fail;
  if (c->num_scale) memcpy(n->scale, c->scale, c->num_scale * sizeof *n->scale);
  n->n_scale = c->num_scale;
  while (n->next_scale < n->n_scale && n->scale[n->next_scale].at_s <= 0) /* from the start */
    atomic_store(&n->serving, n->scale[n->next_scale++].servers);
  atomic_init(&n->clock, 0);
  atomic_init(&n->sync_seq, 0);
  if (ps__store_init(&n->store, c->stripes ? c->stripes : 64) != PS_OK ||
      workers_init(n, c->workers) != PS_OK)
    goto fail;
  n->has_clock = c->clock_service;
  atomic_init(&n->count_shared, false);
  ps_node_set_reader(n, c->workers); /* its own thread, until told */
  if (ps_sealer_init(&n->sealer, c->seal, c->secret) != PS_OK) goto fail;
  if (n->has_clock && ps__clock_init(n, c->clock_marks, c->num_clock_marks) != PS_OK) goto fail;
  if (ps__load_init(n) != PS_OK) goto fail;
  n->init_hot_keys = c->hot_keys;
  n->init_num_hot_keys = c->hot_keys ? c->num_hot_keys : 0;
  int init_rc = n->policy && n->policy->init
                    ? n->policy->init(n, c->policy_json, &n->policy_state)
                    : PS_OK;
  n->init_hot_keys = NULL;
  n->init_num_hot_keys = 0;
  if (init_rc != PS_OK) goto fail;
  if (n->policy && n->policy->on_timer) n->policy_next_timer = 0;
  return n;
fail:
  n->policy = NULL; /* init failed: nothing to free */
  ps_node_free(n);
  return NULL;
}

void ps_node_free(ps_node *n) {
  if (!n) return;
  if (n->policy && n->policy->free) n->policy->free(n->policy_state);
  if (n->has_clock) ps__clock_destroy(n);
  if (n->load.rt) ps__load_destroy(n);
  ps__store_destroy(&n->store);
  for (uint32_t i = 0; n->workers && i < n->num_workers; i++) {
    pthread_mutex_destroy(&n->workers[i].lock);
    for (size_t t = 0; t < n->workers[i].n_tickets; t++) /* still pending */
      free(n->workers[i].tickets[t].heap_keys);
    free(n->workers[i].tickets);
    ps__route_free(&n->workers[i].routes);
    ps__route_free(&n->workers[i].learnt);
    free(n->workers[i].scratch_pos);
    free(n->workers[i].scratch_defer);
    free(atomic_load(&n->workers[i].steps));
  }
  free(n->workers);
  free(n->scale);
  free(n->replica_keys);
  free(n->send_seq);
  free(n->cuts);
  free((void *)n->recv_seq);
  free((void *)n->recv_shared);
  for (size_t i = n->outq_head; i < n->outq_len; i++) {
    free(n->outq[i].buf);
    free(n->outq[i].shared);
  }
  free(n->outq);
  for (uint32_t i = 0; i < n->n_spares; i++) {
    free(n->spares[i].keys);
    free(n->spares[i].pos);
    free(n->spares[i].values);
  }
  pthread_mutex_destroy(&n->replica_lock);
  pthread_mutex_destroy(&n->order_lock);
  ps_sealer_clear(&n->sealer);
  free(n);
}

const ps_key *ps_node_hot_keys(const ps_node *n, size_t *count) {
  *count = n->init_num_hot_keys;
  return n->init_hot_keys;
}

uint32_t ps_node_id(const ps_node *n) { return n->id; }
const ps_layout *ps_node_layout(const ps_node *n) { return &n->layout; }

ps_worker *ps_node_worker(ps_node *n, uint32_t i) {
  return i < n->num_workers ? &n->workers[i] : NULL;
}

void ps_node_get_stats(const ps_node *n, ps_node_stats *o) {
  const node_counters *s = &n->stats;
  o->local_accesses = o->remote_accesses = 0;
  for (uint32_t i = 0; i < n->num_workers; i++) {
    o->local_accesses += atomic_load(&n->workers[i].local_accesses);
    o->remote_accesses += atomic_load(&n->workers[i].remote_accesses);
  }
  ps_shared_counts sh;
  ps_node_shared_counts(n, &sh);
  o->shared_accesses = sh.accesses;
  o->shared_floats = sh.floats;
  o->shared_handled = sh.handled;
  o->shared_handled_floats = sh.handled_floats;
  o->messages_sent = atomic_load(&s->messages_sent);
  o->bytes_sent = atomic_load(&s->bytes_sent);
  o->messages_received = atomic_load(&s->messages_received);
  o->forwards = atomic_load(&s->forwards);
  o->relocations = atomic_load(&s->relocations);
  o->queued = atomic_load(&s->queued);
  o->bad_messages = atomic_load(&s->bad_messages);
  o->replica_syncs = atomic_load(&s->replica_syncs);
  o->sync_rounds = atomic_load(&s->sync_rounds);
  o->duplicates = atomic_load(&s->duplicates);
  o->out_of_sequence = atomic_load(&s->out_of_sequence);
  o->hop_drops = atomic_load(&s->hop_drops);
  o->bad_seals = atomic_load(&s->bad_seals);
  /* Replica reads: the node's (served from a queue) and each worker's. */
  uint64_t sum_ns = 0, max_ns = 0;
  o->replica_reads = o->staleness_sum_steps = o->staleness_max_steps = 0;
  memset(o->staleness_hist, 0, sizeof o->staleness_hist);
  memset(o->staleness_steps_hist, 0, sizeof o->staleness_steps_hist);
  for (uint32_t w = 0; w <= n->num_workers; w++) {
    const staleness_counters *a = w < n->num_workers ? &n->workers[w].staleness : &n->staleness;
    o->replica_reads += atomic_load(&a->reads);
    sum_ns += atomic_load(&a->sum_ns);
    uint64_t m = atomic_load(&a->max_ns);
    if (m > max_ns) max_ns = m;
    o->staleness_sum_steps += atomic_load(&a->sum_steps);
    m = atomic_load(&a->max_steps);
    if (m > o->staleness_max_steps) o->staleness_max_steps = m;
    for (unsigned i = 0; i < PS_STALENESS_BUCKETS; i++) {
      o->staleness_hist[i] += atomic_load(&a->hist[i]);
      o->staleness_steps_hist[i] += atomic_load(&a->steps_hist[i]);
    }
  }
  o->staleness_sum_s = (double)sum_ns * 1e-9;
  o->staleness_max_s = (double)max_ns * 1e-9;
  const bounded_counters *b = &n->bounded;
  o->cache_reads = atomic_load(&b->cache_reads);
  o->cache_misses = atomic_load(&b->cache_misses);
  o->bounded_reads = atomic_load(&b->reads);
  o->bounded_staleness_sum = atomic_load(&b->sum);
  o->bounded_staleness_max = atomic_load(&b->max);
  for (unsigned i = 0; i < PS_CLOCK_BUCKETS; i++)
    o->bounded_staleness_hist[i] = atomic_load(&b->hist[i]);
  o->clock_messages = atomic_load(&b->clock_messages);
  o->refreshes = atomic_load(&b->refreshes);
}

void ps_node_stats_add(ps_node_stats *sum, const ps_node_stats *s) {
  sum->local_accesses += s->local_accesses;
  sum->remote_accesses += s->remote_accesses;
  sum->shared_accesses += s->shared_accesses;
  sum->shared_floats += s->shared_floats;
  sum->shared_handled += s->shared_handled;
  sum->shared_handled_floats += s->shared_handled_floats;
  sum->messages_sent += s->messages_sent;
  sum->bytes_sent += s->bytes_sent;
  sum->messages_received += s->messages_received;
  sum->forwards += s->forwards;
  sum->relocations += s->relocations;
  sum->queued += s->queued;
  sum->bad_messages += s->bad_messages;
  sum->replica_syncs += s->replica_syncs;
  sum->sync_rounds += s->sync_rounds;
  sum->duplicates += s->duplicates;
  sum->out_of_sequence += s->out_of_sequence;
  sum->hop_drops += s->hop_drops;
  sum->bad_seals += s->bad_seals;
  sum->replica_reads += s->replica_reads;
  sum->staleness_sum_s += s->staleness_sum_s;
  if (s->staleness_max_s > sum->staleness_max_s) sum->staleness_max_s = s->staleness_max_s;
  sum->staleness_sum_steps += s->staleness_sum_steps;
  if (s->staleness_max_steps > sum->staleness_max_steps)
    sum->staleness_max_steps = s->staleness_max_steps;
  for (unsigned i = 0; i < PS_STALENESS_BUCKETS; i++) {
    sum->staleness_hist[i] += s->staleness_hist[i];
    sum->staleness_steps_hist[i] += s->staleness_steps_hist[i];
  }
  sum->cache_reads += s->cache_reads;
  sum->cache_misses += s->cache_misses;
  sum->bounded_reads += s->bounded_reads;
  sum->bounded_staleness_sum += s->bounded_staleness_sum;
  if (s->bounded_staleness_max > sum->bounded_staleness_max)
    sum->bounded_staleness_max = s->bounded_staleness_max;
  for (unsigned i = 0; i < PS_CLOCK_BUCKETS; i++)
    sum->bounded_staleness_hist[i] += s->bounded_staleness_hist[i];
  sum->clock_messages += s->clock_messages;
  sum->refreshes += s->refreshes;
}

/* --------------------------------------------------------------- timers */

double ps_node_next_timer(const ps_node *n) {
  return fmin(n->policy_next_timer, ps__scale_next(n));
}

void ps_node_on_timer(ps_node *n, double now) {
  ps__scale_due(n, now); /* first: the policy then sees who serves */
  if (!n->policy || !n->policy->on_timer || now < n->policy_next_timer) return;
  n->policy_next_timer = n->policy->on_timer(n->policy_state, now);
}

uint32_t ps_node_serving(const ps_node *n) { return atomic_load(&n->serving); }

/* ---------------------------------------------------------- key entries */

/* Counting shared accesses: e (key k) touched by thread `by`; one that another thread
 * touched last counts in *count and its floats in *floats. The counters are
 * a worker's own, or the node's (atomic adds: one reader at a time, but
 * the stats may be read meanwhile). */
static void note_touch(ps_node *n, key_entry *e, ps_key k, uint16_t by, _Atomic uint64_t *count,
                       _Atomic uint64_t *floats) {
  if (e->last_by && e->last_by != by) {
    stat_add(count, 1);
    stat_add(floats, ps_layout_value_len(&n->layout, k));
  }
  e->last_by = by;
}

static inline key_entry *lock_entry(ps_node *n, ps_key k, store_stripe **st) {
  *st = store_stripe_of(&n->store, k);
  pthread_mutex_lock(&(*st)->lock);
  key_entry *found = stripe_find(*st, k); /* most keys were seen before */
  if (found) return found;
  bool created;
  key_entry *e = ps__stripe_get(*st, k, &created);
  if (!e) {
    pthread_mutex_unlock(&(*st)->lock);
    return NULL;
  }
  if (created && ps_layout_home(&n->layout, k) == n->id) {
    e->state = KEY_OWNED;
    e->owner = n->id;
  }
  return e;
}

key_entry *ps__node_lock_entry(ps_node *n, ps_key k, store_stripe **st) {
  key_entry *e = lock_entry(n, k, st);
  if (e && atomic_load_explicit(&n->count_shared, memory_order_relaxed))
    note_touch(n, e, k, atomic_load_explicit(&n->reader_by, memory_order_relaxed),
               &n->stats.shared_handled, &n->stats.shared_handled_floats);
  return e;
}

key_entry *ps__worker_lock_entry(ps_worker *w, ps_key k, store_stripe **st) {
  ps_node *n = w->node;
  key_entry *e = lock_entry(n, k, st);
  if (e && atomic_load_explicit(&n->count_shared, memory_order_relaxed))
    note_touch(n, e, k, (uint16_t)(1 + w->index), &w->shared_accesses, &w->shared_floats);
  return e;
}

int ps_node_count_shared(ps_node *n, bool on) {
  /* last_by names a thread in 16 bits: 1 + a worker, 1 + the workers. */
  bool fits = n->num_workers < UINT16_MAX - 1;
  atomic_store(&n->count_shared, on && fits);
  return on && !fits ? PS_ERR_INVAL : PS_OK;
}

void ps_node_shared_counts(const ps_node *n, ps_shared_counts *o) {
  *o = (ps_shared_counts){.handled = atomic_load(&n->stats.shared_handled),
                          .handled_floats = atomic_load(&n->stats.shared_handled_floats)};
  for (uint32_t i = 0; i < n->num_workers; i++) {
    o->accesses += atomic_load(&n->workers[i].shared_accesses);
    o->floats += atomic_load(&n->workers[i].shared_floats);
  }
}

void ps_node_set_reader(ps_node *n, uint32_t thread) {
  uint32_t by = thread < n->num_workers ? thread + 1 : n->num_workers + 1;
  atomic_store_explicit(&n->reader_by, (uint16_t)by, memory_order_relaxed);
}

/* Copies k's value into out if this node holds it in `state` (a home key
 * without an entry counts as owned, all zero). */
static int read_value(ps_node *n, ps_key k, float *out, uint8_t state) {
  uint32_t len = ps_layout_value_len(&n->layout, k);
  if (!len) return PS_ERR_KEY_RANGE;
  store_stripe *st = store_stripe_of(&n->store, k);
  pthread_mutex_lock(&st->lock);
  key_entry *e = stripe_find(st, k);
  bool held = e ? e->state == state
                : state == KEY_OWNED && ps_layout_home(&n->layout, k) == n->id;
  if (held && e && e->value) memcpy(out, e->value, len * sizeof *out);
  else if (held) memset(out, 0, len * sizeof *out);
  pthread_mutex_unlock(&st->lock);
  return held ? PS_OK : PS_ERR_NOT_OWNER;
}

int ps_node_read_owned(ps_node *n, ps_key k, float *out) {
  return read_value(n, k, out, KEY_OWNED);
}

int ps_node_read_replica(ps_node *n, ps_key k, float *out) {
  return read_value(n, k, out, KEY_REPLICA);
}

typedef struct {
  const ps_layout *layout;
  uint32_t id;
  double sum;
  uint64_t moving, owned, homed_entries;
} owned_tally;

static void tally_entry(key_entry *e, void *arg) {
  owned_tally *t = arg;
  t->moving += e->state == KEY_INCOMING;
  t->owned += e->state == KEY_OWNED;
  t->homed_entries += ps_layout_home(t->layout, e->key) == t->id;
  if (e->state != KEY_OWNED || !e->value) return;
  uint32_t len = ps_layout_value_len(t->layout, e->key);
  for (uint32_t j = 0; j < len; j++) t->sum += e->value[j];
}

static owned_tally tally_owned(ps_node *n) {
  owned_tally t = {.layout = &n->layout, .id = n->id};
  ps__store_each(&n->store, tally_entry, &t);
  return t;
}

void ps_node_owned_sum(ps_node *n, double *sum, uint64_t *in_transfer) {
  owned_tally t = tally_owned(n);
  *sum = t.sum;
  *in_transfer = t.moving;
}

typedef struct {
  const ps_layout *layout;
  void (*fn)(void *ctx, ps_key k, const float *value, uint32_t len);
  void *ctx;
} owned_visit;

static void visit_entry(key_entry *e, void *arg) {
  owned_visit *v = arg;
  if (e->state == KEY_OWNED && e->value)
    v->fn(v->ctx, e->key, e->value, ps_layout_value_len(v->layout, e->key));
}

void ps_node_owned_each(ps_node *n, void (*fn)(void *ctx, ps_key k, const float *value,
                                               uint32_t len),
                        void *ctx) {
  owned_visit v = {&n->layout, fn, ctx};
  ps__store_each(&n->store, visit_entry, &v);
}

uint64_t ps_node_owned_keys(ps_node *n, const uint64_t *homed) {
  if (!ps_layout_is_server(&n->layout, n->id)) return 0;
  owned_tally t = tally_owned(n);
  uint64_t home = n->id < ps_layout_homes(&n->layout) ? homed[n->id] : 0;
  return t.owned + (home - t.homed_entries); /* a home key without an entry is owned */
}

uint32_t ps_node_next_seq(ps_node *n, uint32_t src) {
  return src < n->layout.num_nodes ? atomic_load(&n->recv_seq[src]) + 1 : 0;
}

uint32_t ps_node_next_shared(ps_node *n, uint32_t src) {
  return src < n->layout.num_nodes ? atomic_load(&n->recv_shared[src]) + 1 : 0;
}

uint32_t ps_node_claim_seq(ps_node *n, uint32_t dst) {
  if (dst >= n->layout.num_nodes) return 0;
  pthread_mutex_lock(&n->order_lock);
  uint32_t seq = ++n->send_seq[dst];
  pthread_mutex_unlock(&n->order_lock);
  return seq;
}

void ps_node_set_sent(ps_node *n, uint32_t dst, uint32_t seq) {
  if (dst >= n->layout.num_nodes) return;
  pthread_mutex_lock(&n->order_lock);
  n->send_seq[dst] = seq;
  pthread_mutex_unlock(&n->order_lock);
}

int64_t ps_node_directory_owner(ps_node *n, ps_key k) {
  if (!ps_layout_value_len(&n->layout, k) || ps_layout_home(&n->layout, k) != n->id)
    return -1;
  store_stripe *st = store_stripe_of(&n->store, k);
  pthread_mutex_lock(&st->lock);
  key_entry *e = stripe_find(st, k);
  int64_t owner = e ? (int64_t)e->owner : (int64_t)n->id;
  pthread_mutex_unlock(&st->lock);
  return owner;
}

/* ------------------------------------------------------ serving an op */

void ps__deliver_result(call_ctx *c, const pending_op *op, ps_key k, const float *value,
                        uint32_t len) {
  ps_node *n = c->node;
  bool is_pull = op->type == PS_MSG_PULL;
  if (op->type == PS_MSG_SYNC) { /* a replica always wants its fresh value */
    ps__ctx_add(c, op->origin, PS_MSG_SYNC_REPLY, op->origin, 0, ps__made_ns(c),
                ps__made_clock(c), k, op->pos, value, len);
    return;
  }
  if (!op->request) return; /* nobody waits (a replica's flushed delta) */
  if (op->origin == n->id && !op->via_message) {
    ps__ticket_progress(&n->workers[op->worker], c, op->request, 1, is_pull ? value : NULL,
                        op->pos, len, false);
    return;
  }
  uint8_t type = is_pull ? PS_MSG_PULL_REPLY : PS_MSG_WRITE_ACK;
  ps__ctx_add(c, op->origin, type, op->origin, op->worker, op->request, 0, k, op->pos,
              is_pull ? value : NULL, is_pull ? len : 0);
}

int ps__value_apply(key_entry *e, uint32_t len, uint8_t type, const float *in, float *out) {
  if (e->mirror && type != PS_MSG_PULL) { /* all-reduce: replicas need it too */
    if (type == PS_MSG_SET) return PS_ERR_INVAL;
    if (!e->delta && !(e->delta = calloc(len, sizeof *e->delta))) return PS_ERR_NOMEM;
    floats_add(e->delta, in, len);
  }
  if (!e->value) {
    if (type == PS_MSG_PULL && out) { /* never written: zeros, no allocation */
      memset(out, 0, len * sizeof *out);
      return PS_OK;
    }
    e->value = calloc(len, sizeof *e->value);
    if (!e->value) return PS_ERR_NOMEM;
  }
  if (type == PS_MSG_PULL) {
    if (out) memcpy(out, e->value, len * sizeof *out);
  } else if (type == PS_MSG_PUSH || type == PS_MSG_SYNC) {
    floats_add(e->value, in, len);
  } else {
    memcpy(e->value, in, len * sizeof *in);
  }
  return PS_OK;
}

/* Applies op to an owned key's value and answers it. */
static void apply_op(call_ctx *c, key_entry *e, ps_key k, const pending_op *op,
                     const float *vals) {
  uint32_t len = ps_layout_value_len(&c->node->layout, k);
  int rc = ps__value_apply(e, len, op->type, vals, NULL);
  if (rc != PS_OK) {
    c->error = rc;
    return;
  }
  if (op->via_message) { /* served for a request that came in a message */
    c->served_keys++;
    c->served_floats += len;
  }
  if (op->type == PS_MSG_PULL && op->subscribe && op->origin != c->node->id)
    ps__bounded_subscribe(e, op->origin); /* ESSP: refresh its copy at clock ends */
  else if (op->type != PS_MSG_PULL && e->kb)
    ps__bounded_owner_written(c->node, e, k);
  bool with_value = op->type == PS_MSG_PULL || op->type == PS_MSG_SYNC;
  ps__deliver_result(c, op, k, with_value ? e->value : NULL, len);
}

void ps__entry_drain_queue(call_ctx *c, key_entry *e, ps_key k) {
  ps_node *n = c->node;
  pending_op *q = e->queue_head;
  e->queue_head = e->queue_tail = NULL;
  while (q) {
    pending_op *next = q->next;
    if (q->type == PS_MSG_LOCALIZE)
      ps__ticket_progress(&n->workers[q->worker], c, q->request, 1, NULL, 0, 0, false);
    else
      ps__serve_op(c, e, k, q, q->len ? q->vals : NULL);
    free(q);
    q = next;
  }
}

void ps__queue_op(call_ctx *c, key_entry *e, const pending_op *op, const float *vals) {
  uint32_t len = vals ? op->len : 0; /* PUSH, SET, and a replica's SYNC */
  pending_op *q = malloc(sizeof *q + (size_t)len * sizeof(float));
  if (!q) {
    c->error = PS_ERR_NOMEM;
    return;
  }
  *q = *op;
  q->next = NULL;
  q->len = len;
  if (len) memcpy(q->vals, vals, (size_t)len * sizeof(float));
  if (e->queue_tail) e->queue_tail->next = q;
  else e->queue_head = q;
  e->queue_tail = q;
  stat_add(&c->node->stats.queued, 1);
}

void ps__serve_op(call_ctx *c, key_entry *e, ps_key k, const pending_op *op,
                  const float *vals) {
  ps_node *n = c->node;
  bool own_worker = !op->via_message;
  if (e->state == KEY_OWNED) {
    apply_op(c, e, k, op, vals);
  } else if (e->state == KEY_INCOMING || (e->state == KEY_REPLICA_ARRIVING && own_worker)) {
    ps__queue_op(c, e, op, vals);
  } else if (e->state == KEY_REPLICA && own_worker) {
    ps__replica_serve(c, e, k, op, vals);
  } else { /* a replica serves only its own node: the rest goes to the owner */
    /* Not here: pass it on, keeping the original requester. */
    uint32_t dst = route_of(n, e, k);
    ps__ctx_forward(c, dst, op, k, vals);
    if (op->via_message) stat_add(&n->stats.forwards, 1);
  }
}

/* ------------------------------------------------------ message handlers */

/* Checks the keys of m are valid and, for types with values, that the values
 * add up to the keys' value lengths. */
static int check_keys(const ps_node *n, const ps_msg *m) {
  uint64_t floats = 0;
  for (uint32_t i = 0; i < m->key_count; i++) {
    uint32_t len = ps_layout_value_len(&n->layout, ps_msg_key(m, i));
    if (!len) return PS_ERR_KEY_RANGE;
    floats += len;
  }
  if (m->values && floats != m->value_floats) return PS_ERR_VALUE_LEN;
  return PS_OK;
}

int ps__msg_each_key(call_ctx *c, const ps_msg *m, msg_key_fn fn) {
  ps_node *n = c->node;
  uint32_t offset = 0, max_len = 0;
  for (uint32_t i = 0; i < m->key_count; i++) {
    uint32_t len = ps_layout_value_len(&n->layout, ps_msg_key(m, i));
    if (len > max_len) max_len = len;
  }
  float *vals = m->values ? malloc((size_t)max_len * sizeof *vals + 1) : NULL;
  if (m->values && !vals) return PS_ERR_NOMEM;
  int rc = PS_OK;
  for (uint32_t i = 0; i < m->key_count && rc == PS_OK; i++) {
    ps_key k = ps_msg_key(m, i);
    uint32_t len = ps_layout_value_len(&n->layout, k);
    if (vals) {
      ps_msg_values(m, offset, vals, len);
      offset += len;
    }
    store_stripe *st;
    key_entry *e = ps__node_lock_entry(n, k, &st);
    if (!e) {
      rc = PS_ERR_NOMEM;
      break;
    }
    rc = fn(c, m, i, e, k, vals, len);
    pthread_mutex_unlock(&st->lock);
  }
  free(vals);
  return rc;
}

/* PULL, PUSH, SET arriving at this node (at the owner, home, or in transit). */
static int serve_request_key(call_ctx *c, const ps_msg *m, uint32_t i, key_entry *e, ps_key k,
                             const float *vals, uint32_t len) {
  pending_op op = {.type = m->type, .via_message = true, .origin = m->origin,
                   .worker = m->worker, .request = m->request,
                   .subscribe = c->node->has_clock && m->type == PS_MSG_PULL && m->aux == 1,
                   .hops = (uint8_t)(m->flags & 0xff),
                   .pos = ps_msg_pos(m, i), .len = vals ? len : 0};
  ps__serve_op(c, e, k, &op, vals);
  return PS_OK;
}

static int handle_request(call_ctx *c, const ps_msg *m) {
  return ps__msg_each_key(c, m, serve_request_key);
}

static int reply_taken(call_ctx *c, ps_worker *w, const ps_msg *m, uint8_t *took);

/* PULL_REPLY and WRITE_ACK, for a ticket of one of this node's workers. */
static int handle_reply(call_ctx *c, const ps_msg *m) {
  ps_node *n = c->node;
  if (m->origin != n->id || m->worker >= n->num_workers) return PS_ERR_PEER;
  ps_worker *w = &n->workers[m->worker];
  uint8_t took_small[64];
  uint8_t *took = m->key_count <= 64 ? took_small : malloc(m->key_count);
  if (!took) return PS_ERR_NOMEM;
  int rc = reply_taken(c, w, m, took);
  if (took != took_small) free(took);
  return rc;
}

/* handle_reply's keys that took a waiting place (took[i]): the rest are
 * refused, the message then counted as bad, without holding the others
 * back. */
static int reply_taken(call_ctx *c, ps_worker *w, const ps_msg *m, uint8_t *took) {
  ps_node *n = c->node;
  double issued_at;
  /* only what is awaited, each once */
  uint32_t taken = ps__ticket_take_reply(w, m, took, &issued_at);
  int refused = taken < m->key_count ? PS_ERR_PROTOCOL : PS_OK;
  if (!taken) return refused;
  ps__load_note_reply(n, m->src, c->now - issued_at, taken);
  if (node_routes(n)) /* where these keys are: their route */
    for (uint32_t i = 0; i < m->key_count; i++)
      if (took[i]) ps__routes_learn(w, ps_msg_key(m, i), m->src);
  int64_t stamp = -1;
  uint64_t issue_seq = 0;
  if (n->has_clock && !ps__ticket_stamp(w, m->request, &stamp, &issue_seq)) return PS_ERR_PROTOCOL;
  if (n->has_clock) { /* the node's copies learn what came back */
    uint32_t offset = 0;
    for (uint32_t i = 0; i < m->key_count; i++) {
      ps_key k = ps_msg_key(m, i);
      uint32_t len = ps_layout_value_len(&n->layout, k);
      if (took[i] && (m->type == PS_MSG_WRITE_ACK || stamp >= 0)) {
        store_stripe *st;
        key_entry *e = ps__node_lock_entry(n, k, &st);
        if (!e) return PS_ERR_NOMEM;
        if (m->type == PS_MSG_WRITE_ACK) ps__bounded_acked(e);
        else ps__bounded_fill_from(n, e, k, m, offset, stamp, issue_seq);
        pthread_mutex_unlock(&st->lock);
      }
      offset += len;
    }
  }
  if (m->type == PS_MSG_PULL_REPLY) {
    /* Copy every value first; the ticket completes only after all landed. */
    uint32_t offset = 0;
    for (uint32_t i = 0; i < m->key_count; i++) {
      uint32_t len = ps_layout_value_len(&n->layout, ps_msg_key(m, i));
      if (!took[i]) {
        offset += len;
        continue;
      }
      float tmp[256];
      float *vals = len <= 256 ? tmp : malloc((size_t)len * sizeof *vals);
      if (!vals) return PS_ERR_NOMEM;
      ps_msg_values(m, offset, vals, len);
      int rc = ps__ticket_fill(w, m->request, ps_msg_pos(m, i), vals, len);
      if (vals != tmp) free(vals);
      if (rc != PS_OK) return rc;
      offset += len;
    }
  }
  int rc = ps__ticket_progress(w, c, m->request, taken, NULL, 0, 0, false);
  return rc != PS_OK ? rc : refused;
}

/* Takes number seq on src's channel: exactly the next one. A number at or
 * below the last taken is a duplicate or a replay; one further on is forged,
 * or a message before it was lost (channels are FIFO and reliable): refused
 * either way, so an outsider's message cannot take the numbers of the real
 * ones. */
static int take_seq(ps_node *n, uint32_t src, uint32_t seq) {
  uint32_t last = atomic_load(&n->recv_seq[src]);
  do {
    if (seq <= last) {
      stat_add(&n->stats.duplicates, 1);
      return PS_ERR_DUPLICATE;
    }
    if (seq != last + 1) {
      stat_add(&n->stats.out_of_sequence, 1);
      return PS_ERR_SEQUENCE;
    }
  } while (!atomic_compare_exchange_weak(&n->recv_seq[src], &last, seq));
  return PS_OK;
}

/* Checks that shared message number `shared` of src is the next one,
 * without taking it: a copy of one taken before, under whatever channel
 * number, is refused before it can take that number. */
static int peek_shared(ps_node *n, uint32_t src, uint32_t shared) {
  uint32_t last = atomic_load(&n->recv_shared[src]);
  if (shared <= last) {
    stat_add(&n->stats.duplicates, 1);
    return PS_ERR_DUPLICATE;
  }
  if (shared != last + 1) {
    stat_add(&n->stats.out_of_sequence, 1);
    return PS_ERR_SEQUENCE;
  }
  return PS_OK;
}

/* Decodes a message from src into *m and checks it: numbered by its
 * encoding (`numbered` false), or, sent through env.send_shared, by the
 * backend (seq; its encoded number is its number among src's shared
 * messages). Its seal is checked before its numbers: a message not made
 * with the run's secret is refused without touching the channel, so it
 * cannot take a real message's number. An authentic message takes its
 * number whatever else is wrong with it: refused, it does not stop the
 * channel. PS_OK, ps_msg_decode's errors, PS_ERR_PEER, PS_ERR_SEAL,
 * PS_ERR_DUPLICATE, PS_ERR_SEQUENCE, PS_ERR_PROTOCOL, PS_ERR_KEY_RANGE or
 * PS_ERR_VALUE_LEN. */
static int admit_msg(ps_node *n, uint32_t src, bool numbered, uint32_t seq, const uint8_t *buf,
                     size_t len, ps_msg *m) {
  int rc = ps_msg_decode(buf, len, m);
  if (rc != PS_OK) return rc;
  if (src >= n->layout.num_nodes || m->src != src || m->dst != (numbered ? PS_DST_ALL : n->id))
    return PS_ERR_PEER;
  if (!ps_msg_seal_ok(buf, len, &n->sealer)) {
    stat_add(&n->stats.bad_seals, 1);
    return PS_ERR_SEAL;
  }
  uint32_t shared = m->seq;
  if (numbered) {
    if ((rc = peek_shared(n, src, shared)) != PS_OK) return rc;
    m->seq = seq;
  }
  if ((rc = take_seq(n, src, m->seq)) != PS_OK) return rc;
  if (numbered) atomic_store(&n->recv_shared[src], shared); /* src's channel is in order */
  if (m->origin >= n->layout.num_nodes) return PS_ERR_PEER;
  return m->type != PS_MSG_POLICY ? check_keys(n, m) : PS_OK; /* a POLICY's words are its own */
}

/* Hands an admitted message (but a policy's) to the handler of its type,
 * inside call c. */
static int dispatch_msg(call_ctx *c, const ps_msg *m) {
  switch (m->type) {
  case PS_MSG_PULL:
  case PS_MSG_PUSH:
  case PS_MSG_SET:
  case PS_MSG_SYNC: return handle_request(c, m);
  case PS_MSG_SYNC_REPLY: return ps__handle_sync_reply(c, m);
  case PS_MSG_DELTA: return ps__handle_delta(c, m);
  case PS_MSG_PULL_REPLY:
  case PS_MSG_WRITE_ACK: return handle_reply(c, m);
  case PS_MSG_LOCALIZE: return ps__handle_localize(c, m);
  case PS_MSG_HANDOVER: return ps__handle_handover(c, m);
  case PS_MSG_TRANSFER: return ps__handle_transfer(c, m);
  case PS_MSG_INTENT: return ps__handle_intent(c, m);
  case PS_MSG_CLOCK: return ps__handle_clock(c, m);
  case PS_MSG_REFRESH: return ps__handle_refresh(c, m);
  case PS_MSG_MOVE: return ps__handle_move(c, m);
  default: return PS_ERR_TYPE;
  }
}

/* A message from src (see admit_msg for `numbered` and seq). */
static int recv_msg(ps_node *n, uint32_t src, bool numbered, uint32_t seq, const uint8_t *buf,
                    size_t len, double now) {
  ps_msg m;
  int rc = admit_msg(n, src, numbered, seq, buf, len, &m);
  if (rc != PS_OK) {
    stat_add(&n->stats.bad_messages, 1);
    return rc;
  }
  stat_add(&n->stats.messages_received, 1);
  if (m.type == PS_MSG_INTENT_REPLY || m.type == PS_MSG_POLICY) { /* to the policy, outside
                                                                   the order lock */
    rc = m.type == PS_MSG_POLICY ? ps__handle_policy_message(n, &m, now)
                                 : ps__handle_intent_reply(n, &m, now);
    if (rc != PS_OK) stat_add(&n->stats.bad_messages, 1);
    return rc;
  }
  call_ctx c;
  ps__ctx_init(&c, n, now);
  rc = dispatch_msg(&c, &m);
  if (n->has_clock) ps__clock_check(&c); /* a write may have completed */
  uint64_t served_keys = c.served_keys, served_floats = c.served_floats;
  ps__ctx_finish(&c);
  if (served_keys) ps__load_note_served(n, now, served_keys, served_floats);
  if (rc == PS_OK && c.error) rc = c.error;
  if (rc != PS_OK) stat_add(&n->stats.bad_messages, 1);
  return rc;
}

int ps_node_recv(ps_node *n, uint32_t src, const uint8_t *buf, size_t len, double now) {
  return recv_msg(n, src, false, 0, buf, len, now);
}

int ps_node_recv_numbered(ps_node *n, uint32_t src, uint32_t seq, const uint8_t *buf,
                          size_t len, double now) {
  return recv_msg(n, src, true, seq, buf, len, now);
}
