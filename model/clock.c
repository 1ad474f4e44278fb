/*
 * Clocks and bounded consistency: the clock service, the clock gate, the
 * node's cache of remote values, and ESSP's refreshes.
 *
 * The promise a CLOCK carries. A node says clock m (to every other node)
 * once the smallest clock of its workers reaches m. A worker under a bounded
 * model ends a clock only when its writes are acknowledged (the driver waits
 * for its push), and writes to replicas kept by all-reduce are handed on
 * (DELTA) before the CLOCK, on the same FIFO channels. So when any node
 * knows the run's clock is m, every write of clocks < m has been applied
 * where it belongs: at the key's owner (and moved with the key since), and
 * in every all-reduce copy that learned m.
 *
 * The gate. A worker at clock c under staleness s may start its step once
 * the run's clock is >= c - s. Everything it then fetches holds every write
 * of clocks <= c - s - 1; a copy stamped with the run's clock when it was
 * fetched (or refreshed) holds every write of clocks < stamp, so it may be
 * read when stamp >= c - s.
 *
 * The node's own writes. A worker reads its writes: a write goes into the
 * node's cached copy as well as to the owner. A value arriving from the owner
 * replaces the copy only when it cannot miss one of the node's writes: none
 * is unacknowledged, and either every write was issued before the pull
 * (reply) or was made in a clock < the value's stamp (REFRESH).
 *
 * SPARSE. With its CLOCK m a node also sends the keys its workers intend to
 * use in clocks [m, m + lookahead): the writes it may still make (or still
 * have on their way) before m + lookahead; when it cannot tell them all, it
 * sends none, and holds back whoever waits for it. A worker whose target clock t is not reached may go on
 * when every node that holds it back (said < t) has said its keys, t - 1 <
 * said + lookahead, and none of those keys is one of the step's.
 *
 * What a CLOCK may say. Past its gate, a worker at clock c knows every node
 * said c - s (SPARSE: c - s - lookahead), so no node says a clock more than
 * that lead + 1 ahead of what this node said, but at a stage's barrier
 * (its end, a clock mark) and when it leaves (PS_CLOCK_DONE). A CLOCK that
 * says more is refused, and changes nothing.
 */
#include "model/internal.h"

#include <stdlib.h>
#include <string.h>

const char *ps_consistency_name(ps_consistency_model m) {
  switch (m) {
  case PS_CONSISTENCY_ASYNC: return "async";
  case PS_CONSISTENCY_SSP: return "ssp";
  case PS_CONSISTENCY_ESSP: return "essp";
  case PS_CONSISTENCY_SPARSE: return "sparse";
  }
  return "?";
}

/* ------------------------------------------------------------ lifecycle */

int ps__clock_init(ps_node *n, const int64_t *marks, size_t n_marks) {
  clock_service *k = &n->clk;
  uint32_t nodes = n->layout.num_nodes;
  for (size_t i = 0; i < n_marks; i++)
    if (!marks || marks[i] < 0 || (i && marks[i] <= marks[i - 1])) return PS_ERR_INVAL;
  if (n_marks && !(k->marks = malloc(n_marks * sizeof *k->marks))) return PS_ERR_NOMEM;
  if (n_marks) memcpy(k->marks, marks, n_marks * sizeof *marks);
  k->n_marks = n_marks;
  pthread_mutex_init(&k->lock, NULL);
  pthread_mutex_init(&k->dirty_lock, NULL);
  atomic_init(&k->min, 0);
  atomic_init(&k->push_seq, 0);
  k->known = calloc(nodes, sizeof *k->known);
  k->keys = calloc(nodes, sizeof *k->keys);
  k->n_keys = calloc(nodes, sizeof *k->n_keys);
  k->keys_known = calloc(nodes, sizeof *k->keys_known);
  if (!k->known || !k->keys || !k->n_keys || !k->keys_known) return PS_ERR_NOMEM;
  /* Nodes that run no workers hold nobody back: done from the start, and
   * such a node never says a clock (it has none to say). */
  for (uint32_t j = 0; j < nodes; j++)
    if (!ps_layout_runs_workers(&n->layout, j)) k->known[j] = INT64_MAX;
  if (n->num_workers == 0) k->said = INT64_MAX;
  int64_t min = INT64_MAX;
  for (uint32_t j = 0; j < nodes; j++)
    if (k->known[j] < min) min = k->known[j];
  atomic_store(&k->min, min);
  return PS_OK;
}

void ps__clock_destroy(ps_node *n) {
  clock_service *k = &n->clk;
  for (uint32_t j = 0; k->keys && j < n->layout.num_nodes; j++) free(k->keys[j]);
  free(k->keys);
  free(k->n_keys);
  free(k->keys_known);
  free(k->known);
  free(k->marks);
  free(k->dirty);
  pthread_mutex_destroy(&k->lock);
  pthread_mutex_destroy(&k->dirty_lock);
  for (uint32_t i = 0; n->workers && i < n->num_workers; i++) {
    ps_worker *w = &n->workers[i];
    for (uint32_t s = 0; s < w->n_intents; s++) free(w->intents[s].keys);
    free(w->intents);
    free(w->wait_keys);
  }
}

void ps__key_bounded_free(key_bounded *kb) {
  if (!kb) return;
  free(kb->cache);
  free(kb->subs);
  free(kb);
}

key_bounded *ps__entry_bounded(key_entry *e) {
  if (!e->kb && (e->kb = calloc(1, sizeof *e->kb))) e->kb->last_push_clock = -1;
  return e->kb;
}

/* ---------------------------------------------------------------- ticks */

static int64_t tick_of(int64_t clock) {
  return clock == PS_CLOCK_DONE || clock > INT64_MAX / 2 ? INT64_MAX : 2 * clock;
}

/* The clock of a tick: the clock every write before which is applied. */
static int64_t clock_of(int64_t tick) { return tick == INT64_MAX ? PS_CLOCK_DONE : tick / 2; }

/* The run's clock as this node knows it. */
static int64_t run_clock(const ps_node *n) { return clock_of(atomic_load(&n->clk.min)); }

/* ------------------------------------------------------------- counters */

static void atomic_max(_Atomic uint64_t *a, uint64_t v) {
  uint64_t old = atomic_load_explicit(a, memory_order_relaxed);
  while (v > old && !atomic_compare_exchange_weak(a, &old, v)) {
  }
}

/* A read served from a copy `age` clocks behind the reader. */
static void count_read(ps_node *n, int64_t age) {
  uint64_t a = age > 0 ? (uint64_t)age : 0;
  stat_add(&n->bounded.reads, 1);
  stat_add(&n->bounded.sum, a);
  atomic_max(&n->bounded.max, a);
  stat_add(&n->bounded.hist[a < PS_CLOCK_BUCKETS - 1 ? a : PS_CLOCK_BUCKETS - 1], 1);
}

/* --------------------------------------------------------------- cache */

/* The oldest stamp w may read at its clock. */
static int64_t fresh_enough(const ps_worker *w) {
  int64_t c = atomic_load(&w->clock);
  return c - (int64_t)w->cons.staleness;
}

bool ps__cache_read(ps_worker *w, key_entry *e, ps_key k, float *out) {
  ps_node *n = w->node;
  key_bounded *kb = e->kb;
  if (kb && kb->cache && kb->stamp >= fresh_enough(w)) {
    memcpy(out, kb->cache, ps_layout_value_len(&n->layout, k) * sizeof *out);
    stat_add(&n->bounded.cache_reads, 1);
    count_read(n, atomic_load(&w->clock) - kb->stamp);
    return true;
  }
  return false; /* the miss is counted when the read is sent */
}

void ps__bounded_note_write(ps_worker *w, key_entry *e, ps_key k, uint8_t type,
                            const float *vals, bool by_message) {
  ps_node *n = w->node;
  key_bounded *kb = ps__entry_bounded(e);
  if (!kb) return; /* no memory: the cache is only an optimisation, but then */
  kb->last_push_clock = atomic_load(&w->clock);
  kb->last_push_seq = atomic_fetch_add(&n->clk.push_seq, 1) + 1;
  if (by_message) kb->inflight++;
  if (!kb->cache) return;
  uint32_t len = ps_layout_value_len(&n->layout, k);
  if (e->state != KEY_ABSENT) { /* owned or replicated here: the copy is dead */
    free(kb->cache);
    kb->cache = NULL;
  } else if (type == PS_MSG_SET) {
    memcpy(kb->cache, vals, len * sizeof *vals);
  } else {
    for (uint32_t i = 0; i < len; i++) kb->cache[i] += vals[i];
  }
}

void ps__bounded_note_replica_read(ps_worker *w) {
  count_read(w->node, atomic_load(&w->clock) - run_clock(w->node));
}

void ps__bounded_acked(key_entry *e) {
  if (e->kb && e->kb->inflight) e->kb->inflight--;
}

/* Stores a copy of k (len floats) stamped `stamp`, unless a fresher one is
 * there. */
static void cache_store(ps_node *n, key_bounded *kb, ps_key k, const float *vals,
                        int64_t stamp) {
  uint32_t len = ps_layout_value_len(&n->layout, k);
  if (kb->cache && kb->stamp > stamp) return;
  if (!kb->cache && !(kb->cache = malloc(len * sizeof *kb->cache))) return;
  memcpy(kb->cache, vals, len * sizeof *vals);
  kb->stamp = stamp;
}

void ps__bounded_fill_from(ps_node *n, key_entry *e, ps_key k, const ps_msg *m, uint32_t offset,
                           int64_t stamp, uint64_t issue_seq) {
  if (e->state != KEY_ABSENT) return;
  key_bounded *kb = ps__entry_bounded(e);
  if (!kb || kb->inflight != 0 || kb->last_push_seq > issue_seq) return;
  if (kb->cache && kb->stamp > stamp) return;
  uint32_t len = ps_layout_value_len(&n->layout, k);
  if (!kb->cache && !(kb->cache = malloc(len * sizeof *kb->cache))) return;
  ps_msg_values(m, offset, kb->cache, len);
  kb->stamp = stamp;
}

/* A REFRESH's key: the fresh value replaces the copy unless it could miss
 * one of this node's writes (request: its stamp). */
static int refresh_key(call_ctx *c, const ps_msg *m, uint32_t i, key_entry *e, ps_key k,
                       const float *vals, uint32_t len) {
  (void)i;
  (void)len;
  int64_t stamp = (int64_t)m->request;
  key_bounded *kb = e->state == KEY_ABSENT ? ps__entry_bounded(e) : NULL;
  if (kb && kb->inflight == 0 && kb->last_push_clock < stamp)
    cache_store(c->node, kb, k, vals, stamp);
  return PS_OK;
}

int ps__handle_refresh(call_ctx *c, const ps_msg *m) {
  if (!c->node->has_clock || m->request > (uint64_t)INT64_MAX) return PS_ERR_PROTOCOL;
  return ps__msg_each_key(c, m, refresh_key);
}

/* ------------------------------------------------------- ESSP, the owner */

void ps__bounded_subscribe(key_entry *e, uint32_t node) {
  key_bounded *kb = ps__entry_bounded(e);
  if (!kb) return;
  for (uint32_t i = 0; i < kb->n_subs; i++)
    if (kb->subs[i] == node) return;
  if (kb->n_subs == kb->cap_subs) {
    uint32_t cap = kb->cap_subs ? kb->cap_subs * 2 : 4;
    uint32_t *s = realloc(kb->subs, cap * sizeof *s);
    if (!s) return;
    kb->subs = s;
    kb->cap_subs = cap;
  }
  kb->subs[kb->n_subs++] = node;
}

void ps__bounded_owner_written(ps_node *n, key_entry *e, ps_key k) {
  key_bounded *kb = e->kb;
  if (!kb || !kb->n_subs || kb->dirty) return;
  clock_service *clk = &n->clk;
  pthread_mutex_lock(&clk->dirty_lock);
  if (clk->n_dirty == clk->cap_dirty) {
    size_t cap = clk->cap_dirty ? clk->cap_dirty * 2 : 64;
    ps_key *d = realloc(clk->dirty, cap * sizeof *d);
    if (d) {
      clk->dirty = d;
      clk->cap_dirty = cap;
    }
  }
  if (clk->n_dirty < clk->cap_dirty) {
    clk->dirty[clk->n_dirty++] = k;
    kb->dirty = true;
  }
  pthread_mutex_unlock(&clk->dirty_lock);
}

void ps__bounded_on_leave(key_entry *e) {
  if (!e->kb) return;
  free(e->kb->subs);
  e->kb->subs = NULL;
  e->kb->n_subs = e->kb->cap_subs = 0;
  e->kb->dirty = false;
}

/* The run's clock moved on to `min`: the values of owned keys written since
 * their last refresh go to the nodes that cache them. */
static void refresh_dirty(call_ctx *c, int64_t min) {
  ps_node *n = c->node;
  clock_service *clk = &n->clk;
  pthread_mutex_lock(&clk->dirty_lock);
  ps_key *keys = clk->dirty;
  size_t count = clk->n_dirty;
  clk->dirty = NULL;
  clk->n_dirty = clk->cap_dirty = 0;
  pthread_mutex_unlock(&clk->dirty_lock);
  uint64_t sent = 0;
  for (size_t i = 0; i < count; i++) {
    store_stripe *st = store_stripe_of(&n->store, keys[i]);
    pthread_mutex_lock(&st->lock);
    key_entry *e = stripe_find(st, keys[i]);
    if (e && e->kb && e->kb->dirty) {
      e->kb->dirty = false;
      uint32_t len = ps_layout_value_len(&n->layout, keys[i]);
      if (e->state == KEY_OWNED && e->value) {
        for (uint32_t s = 0; s < e->kb->n_subs; s++)
          ps__ctx_add(c, e->kb->subs[s], PS_MSG_REFRESH, n->id, 0, (uint64_t)min, 0, keys[i], 0,
                      e->value, len);
        sent += e->kb->n_subs;
      }
    }
    pthread_mutex_unlock(&st->lock);
  }
  free(keys);
  stat_add(&n->bounded.refreshes, sent);
}

/* ------------------------------------------------------------ the gate */

static bool key_in(const ps_key *sorted, size_t n, ps_key k) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (sorted[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && sorted[lo] == k;
}

/* Under the clock lock: whether waiting worker w may go on. */
static bool gate_open(const ps_node *n, const ps_worker *w) {
  const clock_service *clk = &n->clk;
  if (atomic_load(&clk->min) >= w->wait_tick) return true;
  if (!w->wait_sparse) return false;
  int64_t clock = clock_of(w->wait_tick);
  for (uint32_t j = 0; j < n->layout.num_nodes; j++) {
    if (clk->known[j] >= w->wait_tick) continue;
    int64_t said = clock_of(clk->known[j]);
    if (!clk->keys_known[j] || clock - 1 >= said + (int64_t)w->cons.lookahead) return false;
    for (size_t i = 0; i < w->n_wait_keys; i++)
      if (key_in(clk->keys[j], clk->n_keys[j], w->wait_keys[i])) return false;
  }
  return true;
}

/* Under the clock lock: the smallest clock said, and the waiters it (or a
 * node's new keys) lets go, released into *go (room for every worker). */
static size_t clock_update(ps_node *n, ps_worker **go) {
  clock_service *clk = &n->clk;
  int64_t min = INT64_MAX;
  for (uint32_t j = 0; j < n->layout.num_nodes; j++)
    if (clk->known[j] < min) min = clk->known[j];
  atomic_store(&clk->min, min);
  size_t count = 0;
  for (uint32_t i = 0; i < n->num_workers; i++) {
    ps_worker *w = &n->workers[i];
    if (w->waiting && gate_open(n, w)) {
      w->waiting = false;
      go[count++] = w;
    }
  }
  return count;
}

static void release(call_ctx *c, ps_worker **go, size_t count) {
  for (size_t i = 0; i < count; i++)
    ps__ticket_progress(go[i], c, go[i]->wait_ticket, 1, NULL, 0, 0, false);
}

/* Waits until the run's tick reaches `tick` (see ps_clock_wait). */
static int wait_tick(ps_worker *w, int64_t tick, const ps_key *keys, size_t n,
                     ps_ticket *ticket) {
  ps_node *node = w->node;
  if (!node->has_clock || !ticket || (n && !keys) || w->waiting) return PS_ERR_INVAL;
  if (atomic_load(&node->clk.min) >= tick) return PS_OK; /* it never goes back */
  bool sparse = w->cons.model == PS_CONSISTENCY_SPARSE && keys;
  if (sparse && n > w->cap_wait_keys) {
    ps_key *k = realloc(w->wait_keys, n * sizeof *k);
    if (!k) return PS_ERR_NOMEM;
    w->wait_keys = k;
    w->cap_wait_keys = n;
  }
  size_t unique = 0;
  if (sparse) { /* sorted, without duplicates (binary searches later) */
    memcpy(w->wait_keys, keys, n * sizeof *keys);
    for (size_t i = 1; i < n; i++) { /* insertion sort: a step has few keys */
      ps_key k = w->wait_keys[i];
      size_t j = i;
      while (j > 0 && w->wait_keys[j - 1] > k) {
        w->wait_keys[j] = w->wait_keys[j - 1];
        j--;
      }
      w->wait_keys[j] = k;
    }
    for (size_t i = 0; i < n; i++)
      if (i == 0 || w->wait_keys[i] != w->wait_keys[unique - 1])
        w->wait_keys[unique++] = w->wait_keys[i];
  }
  ps_ticket id;
  int rc = ps__ticket_open(w, 0, NULL, 0, &id);
  if (rc != PS_OK) return rc;
  pthread_mutex_lock(&node->clk.lock);
  w->wait_tick = tick;
  w->wait_sparse = sparse;
  w->n_wait_keys = unique;
  bool open = gate_open(node, w);
  if (!open) {
    w->waiting = true;
    w->wait_ticket = id;
  }
  pthread_mutex_unlock(&node->clk.lock);
  if (open) {
    call_ctx none = {.node = node};
    ps__ticket_progress(w, &none, id, 1, NULL, 0, 0, true);
    return PS_OK;
  }
  *ticket = id;
  return PS_PENDING;
}

int ps_clock_wait(ps_worker *w, int64_t clock, const ps_key *keys, size_t n,
                  ps_ticket *ticket, double now) {
  (void)now;
  return wait_tick(w, clock <= 0 ? 0 : tick_of(clock), keys, n, ticket);
}

int ps_reads_wait(ps_worker *w, ps_ticket *ticket, double now) {
  (void)now;
  return wait_tick(w, tick_of(atomic_load(&w->clock)) + 1, NULL, 0, ticket);
}

int64_t ps_node_min_clock(ps_node *node) {
  return node->has_clock ? run_clock(node) : atomic_load(&node->clock);
}

/* -------------------------------------------------------------- intents */

int ps_worker_set_consistency(ps_worker *w, ps_consistency c) {
  ps_node *n = w->node;
  if (c.model > PS_CONSISTENCY_SPARSE) return PS_ERR_INVAL;
  if (c.model != PS_CONSISTENCY_ASYNC && !n->has_clock) return PS_ERR_INVAL;
  if (c.model == PS_CONSISTENCY_SPARSE && (c.lookahead == 0 || c.lookahead > PS_MAX_LOOKAHEAD))
    return PS_ERR_INVAL;
  if (!n->has_clock) { /* async: nothing else to set */
    w->cons = c;
    return PS_OK;
  }
  pthread_mutex_lock(&n->clk.lock);
  int rc = PS_OK;
  /* Clocks c - 1 .. c + lookahead: the one before may still have a write
   * on its way (the driver has at most one). */
  uint32_t slots = c.model == PS_CONSISTENCY_SPARSE ? c.lookahead + 2 : 0;
  if (slots > w->n_intents) {
    intent_slot *s = realloc(w->intents, slots * sizeof *s);
    if (s) {
      for (uint32_t i = w->n_intents; i < slots; i++) s[i] = (intent_slot){.clock = -1};
      w->intents = s;
      w->n_intents = slots;
    } else {
      rc = PS_ERR_NOMEM;
    }
  }
  if (rc == PS_OK) {
    for (uint32_t i = 0; i < w->n_intents; i++) w->intents[i].clock = -1;
    w->cons = c;
  }
  pthread_mutex_unlock(&n->clk.lock);
  return rc;
}

void ps__clock_note_intent(ps_worker *w, const ps_key *keys, size_t n, int64_t start,
                           int64_t end) {
  if (w->cons.model != PS_CONSISTENCY_SPARSE || !w->n_intents) return;
  ps_node *node = w->node;
  pthread_mutex_lock(&node->clk.lock);
  int64_t last = end < start + (int64_t)w->n_intents ? end : start + (int64_t)w->n_intents;
  for (int64_t t = start < 0 ? 0 : start; t < last; t++) {
    intent_slot *s = &w->intents[t % w->n_intents];
    if (s->clock != t) {
      s->clock = t;
      s->n = 0;
    }
    if (s->n + n > s->cap) {
      size_t cap = s->cap ? s->cap : 16;
      while (cap < s->n + n) cap *= 2;
      ps_key *k = realloc(s->keys, cap * sizeof *k);
      if (!k) {
        s->clock = -2; /* lost: this clock's intents can no longer be told */
        continue;
      }
      s->keys = k;
      s->cap = cap;
    }
    memcpy(s->keys + s->n, keys, n * sizeof *keys);
    s->n += n;
  }
  pthread_mutex_unlock(&node->clk.lock);
}

static int cmp_key(const void *a, const void *b) {
  ps_key x = *(const ps_key *)a, y = *(const ps_key *)b;
  return x < y ? -1 : x > y;
}

/* Under the clock lock: the keys this node's workers intend in clocks
 * [their clock, said + lookahead), sorted and distinct, into the node's own
 * slot. False when some are unknown (a worker's intents were lost). */
static bool own_intents(ps_node *n, int64_t said_tick) {
  int64_t said = clock_of(said_tick);
  clock_service *clk = &n->clk;
  size_t total = 0;
  for (uint32_t i = 0; i < n->num_workers; i++) {
    const ps_worker *w = &n->workers[i];
    for (uint32_t s = 0; s < w->n_intents; s++) total += w->intents[s].n;
  }
  ps_key *keys = malloc((total ? total : 1) * sizeof *keys);
  if (!keys) return false;
  size_t count = 0;
  bool complete = true;
  for (uint32_t i = 0; i < n->num_workers; i++) {
    const ps_worker *w = &n->workers[i];
    if (atomic_load(&w->clock) == PS_CLOCK_DONE || w->cons.model != PS_CONSISTENCY_SPARSE)
      continue;
    /* From the clock said: a write of it may still be on its way. */
    int64_t until = said + (int64_t)w->cons.lookahead;
    for (int64_t t = said; t < until; t++) {
      const intent_slot *s = &w->intents[t % w->n_intents];
      if (s->clock == -2 || s->clock > t) complete = false; /* lost, or overwritten */
      if (s->clock != t) continue;
      memcpy(keys + count, s->keys, s->n * sizeof *keys);
      count += s->n;
    }
  }
  qsort(keys, count, sizeof *keys, cmp_key);
  size_t unique = 0;
  for (size_t i = 0; i < count; i++)
    if (i == 0 || keys[i] != keys[unique - 1]) keys[unique++] = keys[i];
  free(clk->keys[n->id]);
  clk->keys[n->id] = keys;
  clk->n_keys[n->id] = unique;
  clk->keys_known[n->id] = complete;
  return complete;
}

/* ------------------------------------------------------- saying a clock */

/* The tick worker w lets its node say: its own, but not past the clock of
 * a write of it still outstanding (its reads of that clock are done). */
static int64_t sayable_tick(ps_worker *w) {
  int64_t t = atomic_load(&w->tick);
  pthread_mutex_lock(&w->lock);
  for (size_t i = 0; i < w->n_tickets; i++) {
    int64_t wc = w->tickets[i].write_clock;
    if (wc >= 0 && 2 * wc + 1 < t) t = 2 * wc + 1;
  }
  pthread_mutex_unlock(&w->lock);
  return t;
}

/* Inside a call (order lock held): after a worker's clock moved or a write
 * completed, says the node's clock to every node if it moved on, and lets
 * waiters go. */
static void clock_moved(call_ctx *c) {
  ps_node *n = c->node;
  clock_service *clk = &n->clk;
  ps_worker *go_buf[64];
  ps_worker **go = n->num_workers <= 64 ? go_buf : malloc(n->num_workers * sizeof *go);
  if (!go) {
    c->error = PS_ERR_NOMEM;
    return;
  }
  pthread_mutex_lock(&clk->lock);
  int64_t m = INT64_MAX;
  bool sparse = false;
  for (uint32_t i = 0; i < n->num_workers; i++) {
    int64_t wc = sayable_tick(&n->workers[i]);
    if (wc < m) m = wc;
    sparse |= n->workers[i].cons.model == PS_CONSISTENCY_SPARSE;
  }
  if (m <= clk->said) {
    pthread_mutex_unlock(&clk->lock);
    if (go != go_buf) free(go);
    return;
  }
  int64_t old_min = atomic_load(&clk->min);
  clk->said = m;
  clk->known[n->id] = m;
  bool with_keys = sparse && own_intents(n, m);
  size_t n_keys = with_keys ? clk->n_keys[n->id] : 0;
  ps_key *keys = NULL;
  if (n_keys && (keys = malloc(n_keys * sizeof *keys)))
    memcpy(keys, clk->keys[n->id], n_keys * sizeof *keys);
  if (n_keys && !keys) with_keys = false, n_keys = 0;
  size_t count = clock_update(n, go);
  int64_t min = atomic_load(&clk->min);
  pthread_mutex_unlock(&clk->lock);
  /* Writes of the clocks before go first: FIFO channels put them ahead. (A
   * tick that only says reads are done has no writes behind it.) */
  ps__replica_flush_allreduce(c);
  for (uint32_t j = 0; j < n->layout.num_nodes; j++) {
    if (j == n->id) continue;
    /* aux 1: the keys follow (SPARSE); a CLOCK without says nothing of them */
    if (with_keys && n_keys)
      for (size_t i = 0; i < n_keys; i++)
        ps__ctx_add(c, j, PS_MSG_CLOCK, n->id, 0, (uint64_t)m, 1, keys[i], 0, NULL, 0);
    else ps__ctx_add_empty(c, j, PS_MSG_CLOCK, (uint64_t)m, with_keys ? 1 : 0);
    stat_add(&n->bounded.clock_messages, 1);
  }
  free(keys);
  release(c, go, count);
  if (go != go_buf) free(go);
  if (clock_of(min) > clock_of(old_min)) refresh_dirty(c, clock_of(min));
}

void ps__clock_check(call_ctx *c) { clock_moved(c); }

/* Under the clock lock: the largest tick another node may say, as far as
 * this node can tell (see "what a CLOCK may say" in ps.h): its own said
 * clock plus its workers' lead, or the first mark after its own clock. */
static int64_t sayable_limit(const ps_node *n) {
  const clock_service *clk = &n->clk;
  if (clk->said == INT64_MAX) return INT64_MAX;
  int64_t own = clock_of(clk->said), lead = 0;
  for (uint32_t i = 0; i < n->num_workers; i++) {
    const ps_consistency *cons = &n->workers[i].cons;
    if (cons->model == PS_CONSISTENCY_ASYNC) return INT64_MAX;
    int64_t l = (int64_t)cons->staleness + 1 +
                (cons->model == PS_CONSISTENCY_SPARSE ? (int64_t)cons->lookahead : 0);
    if (l > lead) lead = l;
  }
  int64_t limit = own + lead;
  for (size_t i = 0; i < clk->n_marks; i++)
    if (clk->marks[i] > own) {
      if (clk->marks[i] > limit) limit = clk->marks[i];
      break;
    }
  return tick_of(limit);
}

int ps__handle_clock(call_ctx *c, const ps_msg *m) {
  ps_node *n = c->node;
  if (!n->has_clock || m->src == n->id || m->request > (uint64_t)INT64_MAX)
    return PS_ERR_PROTOCOL;
  clock_service *clk = &n->clk;
  int64_t said = (int64_t)m->request;
  ps_key *keys = NULL;
  if (m->aux == 1 && m->key_count) {
    if (!(keys = malloc((size_t)m->key_count * sizeof *keys))) return PS_ERR_NOMEM;
    for (uint32_t i = 0; i < m->key_count; i++) keys[i] = ps_msg_key(m, i);
    qsort(keys, m->key_count, sizeof *keys, cmp_key);
  }
  ps_worker *go_buf[64];
  ps_worker **go = n->num_workers <= 64 ? go_buf : malloc(n->num_workers * sizeof *go);
  if (!go) {
    free(keys);
    return PS_ERR_NOMEM;
  }
  pthread_mutex_lock(&clk->lock);
  /* Clocks only move on, and no further than a node can get ahead. */
  if (said <= clk->known[m->src] || (said != INT64_MAX && said > sayable_limit(n))) {
    pthread_mutex_unlock(&clk->lock);
    free(keys);
    if (go != go_buf) free(go);
    return PS_ERR_PROTOCOL;
  }
  int64_t old_min = atomic_load(&clk->min);
  clk->known[m->src] = said;
  free(clk->keys[m->src]);
  clk->keys[m->src] = keys;
  clk->n_keys[m->src] = keys ? m->key_count : 0;
  clk->keys_known[m->src] = m->aux == 1;
  size_t count = clock_update(n, go);
  int64_t min = atomic_load(&clk->min);
  pthread_mutex_unlock(&clk->lock);
  release(c, go, count);
  if (go != go_buf) free(go);
  if (clock_of(min) > clock_of(old_min)) refresh_dirty(c, clock_of(min));
  return PS_OK;
}

/* Moves w to `clock` and `tick` (tick_of(clock), or one more: reads done). */
static int move_to(ps_worker *w, int64_t clock, int64_t tick, double now) {
  ps_node *n = w->node;
  atomic_store(&w->clock, clock);
  if (clock != PS_CLOCK_DONE) {
    int64_t top = atomic_load_explicit(&n->clock, memory_order_relaxed);
    while (clock > top && !atomic_compare_exchange_weak(&n->clock, &top, clock)) {
    }
  }
  if (!n->has_clock) return PS_OK;
  call_ctx c;
  ps__ctx_init(&c, n, now);
  atomic_store(&w->tick, tick);
  clock_moved(&c);
  ps__ctx_finish(&c);
  return c.error ? c.error : PS_OK;
}

int ps_set_clock(ps_worker *w, int64_t clock, double now) {
  int64_t old = atomic_load(&w->clock);
  if (clock < old) return PS_ERR_INVAL;
  return clock == old ? PS_OK : move_to(w, clock, tick_of(clock), now);
}

int ps_end_reads(ps_worker *w, double now) {
  int64_t c = atomic_load(&w->clock);
  if (!w->node->has_clock || c == PS_CLOCK_DONE) return PS_ERR_INVAL;
  if (atomic_load(&w->tick) > tick_of(c)) return PS_OK;
  return move_to(w, c, tick_of(c) + 1, now);
}

int64_t ps_advance_clock(ps_worker *w, double now) {
  int64_t c = atomic_load(&w->clock) + 1;
  ps_set_clock(w, c, now);
  ps__replica_log_step(w, now);
  ps_node *n = w->node;
  if (n->policy && n->policy->on_step) n->policy->on_step(n->policy_state, w, c, now);
  return c;
}
