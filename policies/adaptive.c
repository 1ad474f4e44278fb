/*
 * adaptive: AdaPM's idea. Workers say which keys they will use in which
 * clock window (the driver's intents, `lookahead` steps ahead); the policy
 * decides per key, with no tuning:
 *
 *   - when: an intent is acted on once its start is near, within the time
 *     acting takes (3 round trips of an intent announcement, measured) at the
 *     worker's clock rate (measured): earlier would move keys away from nodes
 *     still using them, later would leave the worker waiting;
 *   - what: the node announces the key to its home (ps_node_announce_intent),
 *     which answers how many nodes intend it now. Alone, the node relocates
 *     the key here; with others, it takes a replica, synced through the owner
 *     `syncs_per_sec` times a second (25) so that the owner may keep moving;
 *   - until: when the node's last intent on a key has ended (each worker's
 *     clock passed its window), the node tells the home and drops its replica.
 *     Relocated keys stay where they are.
 *
 * Optional overrides: `window_clocks` (act that many clocks ahead instead of
 * the estimate), `syncs_per_sec` (the first sync round one interval in), or
 * `syncs_per_step` (sync rounds every that many steps of each of the node's
 * workers; intents are still acted on syncs_per_sec times a second).
 */
#include "policies/common.h"
#include "policies/keymap.h"
#include "policies/policy.h"
#include "policies/replication.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#define ADAPTIVE_DEFAULT_LOOKAHEAD 50
#define ADAPTIVE_DEFAULT_SYNCS 25.0
#define ACT_ROUND_TRIPS 3.0 /* announce + reply, then up to 3 hops of relocation */
#define EWMA 0.2

/* Array a (n used of *cap, elem bytes each) with room for one more,
 * doubling; NULL on no memory (a is then unchanged). */
static void *room_for_one(void *a, size_t n, size_t *cap, size_t elem) {
  if (n < *cap) return a;
  size_t c = *cap ? *cap * 2 : 64;
  void *p = realloc(a, c * elem);
  if (p) *cap = c;
  return p;
}

/* ------------------------------------------------------- a min-heap */

typedef struct {
  int64_t clock; /* pending: the window's start; active: its end */
  int64_t end;
  ps_key key;
} intent_item;

typedef struct {
  intent_item *a;
  size_t n, cap;
} heap;

static int heap_push(heap *h, intent_item it) {
  intent_item *a = room_for_one(h->a, h->n, &h->cap, sizeof *a);
  if (!a) return PS_ERR_NOMEM;
  h->a = a;
  size_t i = h->n++;
  while (i > 0 && h->a[(i - 1) / 2].clock > it.clock) {
    h->a[i] = h->a[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->a[i] = it;
  return PS_OK;
}

static intent_item heap_pop(heap *h) {
  intent_item top = h->a[0], last = h->a[--h->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && h->a[c + 1].clock < h->a[c].clock) c++;
    if (h->a[c].clock >= last.clock) break;
    h->a[i] = h->a[c];
    i = c;
  }
  if (h->n) h->a[i] = last;
  return top;
}

/* ---------------------------------------------------- a list of keys */

typedef struct {
  ps_key *k;
  size_t n, cap;
} keylist;

static void keylist_add(keylist *l, ps_key k) {
  /* On no memory the action is lost: that costs locality or a count at a
   * home (which only steers decisions), never correctness. */
  ps_key *p = room_for_one(l->k, l->n, &l->cap, sizeof *p);
  if (!p) return;
  l->k = p;
  l->k[l->n++] = k;
}

/* What one call decided, done after the policy's lock is released (a
 * simulated actor may yield inside the core's sends). */
typedef struct {
  keylist start, stop, drop, localize, replicate;
} actions;

/* ------------------------------------------------------------ state */

typedef struct {
  heap pending; /* intents not acted on yet, by start clock */
  heap active;  /* intents acted on, by end clock */
  int64_t last_clock;
  double last_time;
  double rate; /* clocks per second (0: not measured yet) */
} worker_state;

typedef struct {
  ps_node *node;
  double syncs_per_sec;
  bool timer_started;      /* the timer's first call (at 0) runs no sync round */
  step_rounds steps;       /* syncs_per_step: sync rounds by steps instead */
  int64_t window_override; /* -1: estimate */
  pthread_mutex_t lock;
  keymap live;             /* key -> intents of this node on it (> 0) */
  worker_state *workers;
  uint32_t num_workers;
  double rtt; /* announcement round trip (0: not measured yet) */
} adaptive_state;

typedef struct {
  int partition;
  uint32_t lookahead;
  double syncs_per_sec;
  uint32_t syncs_per_step; /* 0: sync rounds by time */
  uint32_t window_clocks; /* UINT32_MAX: estimate */
} adaptive_knobs;

const policy_field policy_adaptive_fields[] = {
    POLICY_FIELD_PARTITION(adaptive_knobs),
    POLICY_FIELD_LOOKAHEAD(adaptive_knobs, ADAPTIVE_DEFAULT_LOOKAHEAD),
    {.name = "syncs_per_sec", .type = FIELD_NUMBER,
     .offset = offsetof(adaptive_knobs, syncs_per_sec), .def = ADAPTIVE_DEFAULT_SYNCS,
     .min = 0, .max = 1e6,
     .meaning = "sync rounds a second of the replicas it takes (through the owner); "
                "also how often it acts on intents"},
    {.name = "syncs_per_step", .type = FIELD_INT,
     .offset = offsetof(adaptive_knobs, syncs_per_step), .def = 0, .min = 0, .max = 100000000,
     .default_text = "by time: syncs_per_sec",
     .meaning = "instead: a sync round each time this node's workers have done this many "
                "steps each since the last (intents are still acted on syncs_per_sec times "
                "a second)"},
    {.name = "window_clocks", .type = FIELD_INT,
     .offset = offsetof(adaptive_knobs, window_clocks), .def = UINT32_MAX, .min = 0,
     .max = 1000000, .default_text = "estimated",
     .meaning = "act on an intent this many clocks before its start, instead of the "
                "estimate from the measured clock rate and round trip"},
    {0},
};

static int adaptive_configure(const struct cJSON *json, ps_policy_settings *s, char *err,
                              size_t errlen) {
  adaptive_knobs k;
  int rc = policy_read_fields(json, policy_adaptive_fields, FIELDS_CONFIGURE, &k, err,
                              errlen);
  if (rc != PS_OK) return rc;
  s->partition = (ps_partition)k.partition;
  s->lookahead = k.lookahead;
  s->keys_at_workers = true;   /* relocates or replicates to the intending node */
  s->fast_local_access = true; /* relocation needs it (see relocate) */
  s->owner_replicas = true;    /* its replicas sync through the owner */
  return PS_OK;
}

static void adaptive_free(void *state) {
  adaptive_state *s = state;
  if (!s) return;
  for (uint32_t i = 0; i < s->num_workers; i++) {
    free(s->workers[i].pending.a);
    free(s->workers[i].active.a);
  }
  free(s->workers);
  keymap_free(&s->live);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

static int adaptive_init(ps_node *node, const struct cJSON *json, void **state) {
  adaptive_state *s = calloc(1, sizeof *s);
  if (!s) return PS_ERR_NOMEM;
  s->node = node;
  adaptive_knobs k;
  char err[256];
  if (policy_read_fields(json, policy_adaptive_fields, FIELDS_INIT, &k, err, sizeof err) !=
      PS_OK) {
    free(s);
    return PS_ERR_INVAL;
  }
  s->syncs_per_sec = k.syncs_per_sec;
  s->window_override = k.window_clocks == UINT32_MAX ? -1 : (int64_t)k.window_clocks;
  while (ps_node_worker(node, s->num_workers)) s->num_workers++;
  step_rounds_init(&s->steps, node, k.syncs_per_step);
  s->workers = calloc(s->num_workers, sizeof *s->workers);
  pthread_mutex_init(&s->lock, NULL);
  if (!s->workers) {
    adaptive_free(s);
    return PS_ERR_NOMEM;
  }
  *state = s;
  return PS_OK;
}

/* ------------------------------------------------------- decisions */

/* How many clocks ahead of worker i an intent is acted on. */
static int64_t window_clocks(const adaptive_state *s, uint32_t i) {
  if (s->window_override >= 0) return s->window_override;
  double rate = s->workers[i].rate;
  if (rate <= 0 || s->rtt <= 0) return INT64_MAX / 4; /* nothing measured: act now */
  return (int64_t)ceil(rate * ACT_ROUND_TRIPS * s->rtt);
}

/* With the lock: moves due intents to active (announcing keys that become
 * intended here) and ends the ones whose window has passed (announcing and
 * dropping keys no longer intended here). */
static void process(adaptive_state *s, actions *act) {
  for (uint32_t i = 0; i < s->num_workers; i++) {
    worker_state *ws = &s->workers[i];
    int64_t clock = ps_worker_clock(ps_node_worker(s->node, i));
    int64_t due = clock + window_clocks(s, i);
    while (ws->pending.n && ws->pending.a[0].clock <= due) {
      intent_item it = heap_pop(&ws->pending);
      if (it.end <= clock) continue; /* over before it was acted on */
      uint64_t *live = keymap_slot(&s->live, it.key);
      if (!live) continue;
      if ((*live)++ == 0) keylist_add(&act->start, it.key);
      it.clock = it.end;
      if (heap_push(&ws->active, it) != PS_OK) --*live; /* never ends: forget it */
    }
    while (ws->active.n && ws->active.a[0].clock <= clock) {
      intent_item it = heap_pop(&ws->active);
      uint64_t *live = keymap_find(&s->live, it.key);
      if (!live || --*live > 0) continue;
      keymap_remove(&s->live, it.key);
      keylist_add(&act->stop, it.key);
      keylist_add(&act->drop, it.key);
    }
  }
}

/* Without the lock: what process and the reply handler decided. */
static void act_on(adaptive_state *s, actions *a, double now) {
  ps_node *n = s->node;
  if (a->drop.n) ps_node_drop_replicas(n, a->drop.k, a->drop.n, now);
  ps_node_announce_intent(n, a->start.k, a->start.n, a->stop.k, a->stop.n, now);
  if (a->localize.n) ps_node_localize(n, a->localize.k, a->localize.n, now);
  if (a->replicate.n) ps_node_replicate(n, a->replicate.k, a->replicate.n, now);
  free(a->drop.k), free(a->stop.k), free(a->start.k), free(a->localize.k),
      free(a->replicate.k);
}

static void adaptive_on_intent(void *state, ps_worker *w, const ps_key *keys, size_t n,
                               int64_t clock_start, int64_t clock_end, double now) {
  adaptive_state *s = state;
  uint32_t i = ps_worker_index(w);
  int64_t clock = ps_worker_clock(w);
  actions act = {0};
  pthread_mutex_lock(&s->lock);
  worker_state *ws = &s->workers[i];
  if (clock > ws->last_clock && now > ws->last_time) { /* the clock rate */
    double r = (double)(clock - ws->last_clock) / (now - ws->last_time);
    ws->rate = ws->rate > 0 ? (1 - EWMA) * ws->rate + EWMA * r : r;
  }
  if (clock != ws->last_clock || ws->last_time == 0) {
    ws->last_clock = clock;
    ws->last_time = now;
  }
  if (clock_end > clock_start)
    for (size_t j = 0; j < n; j++)
      heap_push(&ws->pending, (intent_item){clock_start, clock_end, keys[j]});
  process(s, &act);
  pthread_mutex_unlock(&s->lock);
  act_on(s, &act, now);
}

static void adaptive_on_intenders(void *state, const ps_key *keys, const uint32_t *counts,
                                  size_t n, double sent_at, double now) {
  adaptive_state *s = state;
  actions act = {0};
  pthread_mutex_lock(&s->lock);
  if (now >= sent_at) {
    double r = now - sent_at;
    s->rtt = s->rtt > 0 ? (1 - EWMA) * s->rtt + EWMA * r : r;
  }
  for (size_t j = 0; j < n; j++) {
    if (!keymap_find(&s->live, keys[j])) continue; /* no longer intended here */
    int where = ps_node_key_locality(s->node, keys[j]);
    if (counts[j] <= 1 && (where == PS_KEY_REMOTE || where == PS_KEY_REPLICA))
      keylist_add(&act.localize, keys[j]); /* alone: move it here */
    else if (counts[j] > 1 && where == PS_KEY_REMOTE)
      keylist_add(&act.replicate, keys[j]); /* shared: a copy here */
  }
  pthread_mutex_unlock(&s->lock);
  act_on(s, &act, now);
}

static double adaptive_on_timer(void *state, double now) {
  adaptive_state *s = state;
  /* The first call comes at 0, with nothing to sync: the first round is
   * one interval in. */
  if (s->timer_started && !s->steps.on) ps_node_sync_replicas(s->node, PS_SYNC_OWNER, 0, now);
  s->timer_started = true;
  actions act = {0};
  pthread_mutex_lock(&s->lock);
  process(s, &act);
  pthread_mutex_unlock(&s->lock);
  act_on(s, &act, now);
  return now + 1.0 / s->syncs_per_sec;
}

static void adaptive_on_step(void *state, ps_worker *w, int64_t clock, double now) {
  (void)w, (void)clock;
  adaptive_state *s = state;
  if (step_rounds_due(&s->steps)) ps_node_sync_replicas(s->node, PS_SYNC_OWNER, 0, now);
}

const ps_policy_ops ps_policy_adaptive = {
    .name = "adaptive",
    .configure = adaptive_configure,
    .init = adaptive_init,
    .on_intent = adaptive_on_intent,
    .on_timer = adaptive_on_timer,
    .on_step = adaptive_on_step,
    .on_intenders = adaptive_on_intenders,
    .free = adaptive_free,
};
