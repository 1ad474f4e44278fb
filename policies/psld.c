/*
 * psld: elastic load distribution among parameter servers (PSLD, SoCC 2020).
 *
 * A server slowed by compute interference, bandwidth contention or an
 * uneven share of the parameters holds back every synchronous step. PSLD
 * measures the servers, estimates each one's capacity, and moves parameter
 * blocks from overloaded servers to underloaded ones, trading exploitation
 * (most blocks go to the servers believed fastest) against exploration (a
 * share probes the others, so a server that recovers is found again).
 *
 * Here, every node runs an instance; node 0's (always a server, and a home:
 * it never leaves) is the coordinator. Each window (`window_s`, numbered by
 * the time it ends: every node's timer fires at the same multiples of it),
 * once every node's report of the window has come:
 *
 *   measure   every serving server reports to the coordinator, in a POLICY
 *             message (ps_node_send_policy), what it served in the window
 *             (floats, the core's counters) and how long serving took: its
 *             response time to the requests, as its backend measures the
 *             handling of each message (busy time: the simulated handling
 *             cost, or the receiver's wall time);
 *   estimate  the coordinator's capacity estimate of a server is the floats
 *             it serves per busy second, smoothed over windows
 *             (`smoothing`); a server never measured (one that just joined,
 *             or one that has held nothing since the start) is assumed as
 *             fast as the mean of the others;
 *   target    each serving server's share of the window's load is its share
 *             of the capacity, so that at the fixed point every server is as
 *             busy as the others; the load is out of balance when the most
 *             loaded server (load / target) is more than `tolerance` above
 *             the least loaded one;
 *   move      blocks leave the most loaded server, one at a time, while the
 *             load is out of balance: each goes, with probability `explore`,
 *             to a serving server drawn at random (exploration), otherwise
 *             to the least loaded one (exploitation), and only while that
 *             one stays less loaded than the source; a server that
 *             holds no block is probed with one at that rate too. Moves use
 *             the core's mechanism (ps_node_move: the destination localizes
 *             the block's keys, so no update is lost or doubled), bounded by
 *             a token bucket of `budget_Bps` bytes per second (a block's
 *             values and keys on the wire), so migration does not stall
 *             training. After a window with moves the coordinator waits two
 *             windows (the reports that follow still describe the old
 *             placement) before it decides again.
 *
 * Blocks: the keys homed on a server are split into `blocks_per_server`
 * blocks by a hash of the key; a block starts at its home and the
 * coordinator keeps where each block is. A block's load is its server's,
 * shared in proportion to its floats. When a server stops serving
 * (cluster.scale), the core hands its keys to their homes: the coordinator
 * counts its blocks there.
 *
 * The clients' response times (the core measures them too) are in the
 * run's metrics but not used here: under synchronous training every request
 * of a step waits in the same queues, and in pslab's simulations they moved
 * too little with a server's load to tell its capacity. Busy time does not
 * see a slow link (bandwidth contention): such a straggler is not detected.
 *
 * The paper gives no figures for these knobs in the text pslab could
 * consult; the defaults are this implementation's (SPEC.md says so).
 */
#include "policies/policy.h"
#include "policies/common.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PSLD_WINDOW_S 0.05
#define PSLD_EXPLORE 0.1
#define PSLD_BUDGET_BPS 1e8 /* a tenth of a 10 Gbps link */
#define PSLD_BLOCKS 16
#define PSLD_TOLERANCE 0.1
#define PSLD_SMOOTHING 0.5
#define PSLD_COORDINATOR 0
#define PSLD_SETTLE_WINDOWS 2 /* a block moved stays put this long */
#define PSLD_KIND_REPORT 1

typedef struct {
  int partition;
  bool fast_local_access;
  double window_s, explore, budget_Bps, tolerance, smoothing;
  uint32_t blocks;
} psld_knobs;

/* What the coordinator knows of one server. */
typedef struct {
  double floats, busy; /* what it served in the window gathered, and its busy time */
  double cap;          /* floats per busy second, smoothed */
  bool known;          /* cap was measured */
} server_view;

typedef struct {
  psld_knobs k;
  ps_node *node;
  ps_layout layout;
  uint32_t id;
  ps_server_load last; /* this server's counters at its previous report */
  uint64_t rng;
  /* The coordinator's: */
  bool coordinator;
  pthread_mutex_t lock;          /* reports come on the receiving thread */
  uint32_t servers, n_blocks;
  uint32_t *where;               /* block -> server holding it */
  uint64_t *first;               /* block b's keys: keys[first[b] .. first[b + 1]) */
  ps_key *keys;
  double *floats, *bytes;        /* per block */
  double *moved_at;              /* per block: when it last moved */
  server_view *sv;
  double *load, *target, *held;  /* per server: scratch of a decision */
  double tokens, last_decide, most_bytes;
  int64_t quiet_until;           /* no decision before this window (moves settle) */
  int64_t window;                /* the window whose reports are gathered */
  uint32_t reported;             /* nodes whose report of it came */
  int64_t *node_window;          /* per node: the window of its last report */
} psld;

/* ------------------------------------------------------------ configure */

/* fast_local_access must stay true, as under relocate: moves keep a node's
 * order only so. */
const policy_field policy_psld_fields[] = {
    POLICY_FIELD_PARTITION(psld_knobs),
    POLICY_FIELD_FAST_LOCAL_ACCESS(psld_knobs, "false",
                                   "moving keys between servers keeps a worker's operations "
                                   "in order only with direct local access"),
    {.name = "window_s", .type = FIELD_NUMBER, .offset = offsetof(psld_knobs, window_s),
     .def = PSLD_WINDOW_S, .min = 0, .max = 3600,
     .meaning = "seconds between the servers' reports and the coordinator's decisions"},
    {.name = "explore", .type = FIELD_SHARE, .offset = offsetof(psld_knobs, explore),
     .def = PSLD_EXPLORE, .min = 0, .min_ok = true,
     .meaning = "the chance a moved block goes to a random server instead of the least "
                "loaded one (exploration)"},
    {.name = "budget_Bps", .type = FIELD_NUMBER, .offset = offsetof(psld_knobs, budget_Bps),
     .def = PSLD_BUDGET_BPS, .min = 0, .max = 1e15,
     .meaning = "bytes a second that moves may send (a token bucket)"},
    {.name = "blocks_per_server", .type = FIELD_INT, .offset = offsetof(psld_knobs, blocks),
     .def = PSLD_BLOCKS, .min = 1, .max = 1u << 20,
     .meaning = "blocks the keys homed on a server are split into: what moves"},
    {.name = "tolerance", .type = FIELD_NUMBER, .offset = offsetof(psld_knobs, tolerance),
     .def = PSLD_TOLERANCE, .min = 0, .min_ok = true, .max = 100,
     .meaning = "how far above the least loaded server (for its capacity) the most loaded "
                "may be before blocks move"},
    {.name = "smoothing", .type = FIELD_SHARE, .offset = offsetof(psld_knobs, smoothing),
     .def = PSLD_SMOOTHING, .min = 0,
     .meaning = "the weight of the newest window in a server's capacity estimate"},
    {0},
};

static int psld_knobs_read(const struct cJSON *json, policy_fields_mode mode, psld_knobs *k,
                           ps_policy_settings *s, char *err, size_t errlen) {
  int rc = policy_read_fields(json, policy_psld_fields, mode, k, err, errlen);
  if (rc != PS_OK) return rc;
  s->partition = (ps_partition)k->partition;
  s->fast_local_access = k->fast_local_access;
  s->route_hints = true; /* workers reach moved keys where they are, not via their home */
  return PS_OK;
}

static int psld_configure(const struct cJSON *json, ps_policy_settings *s, char *err,
                          size_t errlen) {
  psld_knobs k;
  return psld_knobs_read(json, FIELDS_CONFIGURE, &k, s, err, errlen);
}

/* ----------------------------------------------------------------- blocks */

static uint32_t block_of(const psld *p, ps_key k) {
  uint32_t sub = (uint32_t)((ps_mix64(k ^ 0x5b1d0c4e7a9f3e21ull) >> 16) % p->k.blocks);
  return ps_layout_home(&p->layout, k) * p->k.blocks + sub;
}

static uint32_t block_home(const psld *p, uint32_t b) { return b / p->k.blocks; }

/* The coordinator's block index: every key in its block (counting sort). */
static int blocks_build(psld *p) {
  uint64_t n_keys = ps_layout_num_keys(&p->layout);
  p->n_blocks = ps_layout_homes(&p->layout) * p->k.blocks;
  p->where = calloc(p->n_blocks, sizeof *p->where);
  p->first = calloc((size_t)p->n_blocks + 1, sizeof *p->first);
  p->keys = malloc((n_keys ? n_keys : 1) * sizeof *p->keys);
  p->floats = calloc(p->n_blocks, sizeof *p->floats);
  p->bytes = calloc(p->n_blocks, sizeof *p->bytes);
  p->moved_at = malloc(p->n_blocks * sizeof *p->moved_at);
  if (!p->where || !p->first || !p->keys || !p->floats || !p->bytes || !p->moved_at)
    return PS_ERR_NOMEM;
  for (uint64_t i = 0; i < n_keys; i++) {
    ps_key k = ps_layout_key_at(&p->layout, i);
    uint32_t b = block_of(p, k), len = ps_layout_value_len(&p->layout, k);
    p->first[b + 1]++;
    p->floats[b] += len;
    p->bytes[b] += 4.0 * len + 12; /* a TRANSFER's value and key */
  }
  for (uint32_t b = 0; b < p->n_blocks; b++) {
    p->first[b + 1] += p->first[b];
    p->where[b] = block_home(p, b);
    p->moved_at[b] = -INFINITY;
    if (p->bytes[b] > p->most_bytes) p->most_bytes = p->bytes[b];
  }
  uint64_t *at = malloc((size_t)p->n_blocks * sizeof *at);
  if (!at) return PS_ERR_NOMEM;
  memcpy(at, p->first, (size_t)p->n_blocks * sizeof *at);
  for (uint64_t i = 0; i < n_keys; i++) {
    ps_key k = ps_layout_key_at(&p->layout, i);
    p->keys[at[block_of(p, k)]++] = k;
  }
  free(at);
  return PS_OK;
}

/* ------------------------------------------------------------- lifecycle */

static void psld_free(void *state) {
  psld *p = state;
  if (!p) return;
  if (p->coordinator) pthread_mutex_destroy(&p->lock);
  free(p->where);
  free(p->first);
  free(p->keys);
  free(p->floats);
  free(p->bytes);
  free(p->moved_at);
  free(p->sv);
  free(p->load);
  free(p->target);
  free(p->held);
  free(p->node_window);
  free(p);
}

static int psld_init(ps_node *node, const struct cJSON *json, void **state) {
  psld *p = calloc(1, sizeof *p);
  if (!p) return PS_ERR_NOMEM;
  ps_policy_settings s;
  ps_policy_settings_default(&s);
  char err[256];
  if (psld_knobs_read(json, FIELDS_INIT, &p->k, &s, err, sizeof err) != PS_OK) {
    free(p);
    return PS_ERR_INVAL;
  }
  p->node = node;
  p->layout = *ps_node_layout(node);
  p->id = ps_node_id(node);
  p->rng = ps_mix64(0x9e3779b97f4a7c15ull ^ p->id);
  p->coordinator = p->id == PSLD_COORDINATOR;
  p->servers = ps_layout_servers(&p->layout);
  *state = p;
  if (!p->coordinator) return PS_OK;
  pthread_mutex_init(&p->lock, NULL);
  p->sv = calloc(p->servers, sizeof *p->sv);
  p->load = calloc(p->servers, sizeof *p->load);
  p->target = calloc(p->servers, sizeof *p->target);
  p->held = calloc(p->servers, sizeof *p->held);
  p->node_window = malloc(p->layout.num_nodes * sizeof *p->node_window);
  for (uint32_t i = 0; p->node_window && i < p->layout.num_nodes; i++) p->node_window[i] = -1;
  int rc = p->sv && p->load && p->target && p->held && p->node_window ? blocks_build(p)
                                                                      : PS_ERR_NOMEM;
  if (rc != PS_OK) psld_free(p);
  return rc;
}

/* -------------------------------------------------------------- measure */

static void decide(psld *p, double now);

/* A report of window `win` from server `from`: floats served, busy time.
 * A report of a later window starts gathering that one (what came of the
 * one before is dropped); a late one is dropped. The last report of a
 * window (every serving server's) decides it. */
static void note_report(psld *p, uint32_t from, int64_t win, double floats, double busy,
                        double now) {
  uint32_t serving = ps_node_serving(p->node);
  pthread_mutex_lock(&p->lock);
  if (win > p->window) {
    p->window = win;
    p->reported = 0;
    for (uint32_t s = 0; s < p->servers; s++) p->sv[s].floats = p->sv[s].busy = 0;
  }
  if (win == p->window && from < serving && p->node_window[from] < win) {
    p->node_window[from] = win;
    p->sv[from].floats = floats;
    p->sv[from].busy = busy;
    if (++p->reported == serving) decide(p, now);
  }
  pthread_mutex_unlock(&p->lock);
}

/* A serving server's report of the window ending now. */
static void report(psld *p, double now) {
  ps_server_load l;
  ps_node_server_load(p->node, &l);
  int64_t win = llround(now / p->k.window_s);
  uint64_t floats = l.floats - p->last.floats;
  double busy = l.busy_s - p->last.busy_s;
  p->last = l;
  if (p->coordinator) {
    note_report(p, p->id, win, (double)floats, busy, now);
    return;
  }
  uint64_t words[2] = {(uint64_t)win, floats};
  float f = (float)busy;
  ps_node_send_policy(p->node, PSLD_COORDINATOR, PSLD_KIND_REPORT, words, 2, &f, 1, now);
}

/* A report names the window its sender's timer ended: by the coordinator's
 * clock, the current window or, the sender's clock a little ahead, a later
 * one. Nodes' clocks start when the start barrier's release reaches them, so
 * on a loaded machine or across a network one may run ahead of the
 * coordinator's by more than a short window. A report naming a window past
 * the coordinator's next is taken as a report of the next: taken as it is,
 * a report of a far window (2^62) would make every real report late, and no
 * window would be decided again; refused, a sender whose clock runs ahead
 * would be refused for ever. A late one is dropped (note_report), as reports
 * of a window delayed on the way may be. */
static int psld_on_message(void *state, uint32_t src, uint64_t kind, const ps_msg *m,
                           double now) {
  psld *p = state;
  if (!p->coordinator || kind != PSLD_KIND_REPORT || m->key_count != 2 ||
      m->value_floats != 1 || ps_msg_key(m, 0) > INT64_MAX)
    return PS_ERR_PROTOCOL; /* not ours to read: a report goes to the coordinator */
  int64_t win = (int64_t)ps_msg_key(m, 0), next = llround(now / p->k.window_s) + 1;
  if (win > next) win = next;
  float busy;
  ps_msg_values(m, 0, &busy, 1);
  note_report(p, src, win, (double)ps_msg_key(m, 1), busy, now);
  return PS_OK;
}

/* --------------------------------------------------------------- decide */

static double uniform(psld *p) { return (double)(ps_splitmix64(&p->rng) >> 11) * 0x1p-53; }

/* Capacity estimates from the window's reports; false when nothing was
 * served. */
static bool estimate(psld *p, uint32_t serving) {
  double sum = 0;
  uint32_t known = 0;
  for (uint32_t s = 0; s < serving; s++) {
    server_view *v = &p->sv[s];
    p->load[s] = v->floats;
    if (v->floats > 0 && v->busy > 0) {
      double sample = v->floats / v->busy;
      v->cap = v->known ? (1 - p->k.smoothing) * v->cap + p->k.smoothing * sample : sample;
      v->known = true;
    }
    if (v->known) {
      sum += v->cap;
      known++;
    }
  }
  double mean = known ? sum / known : 1; /* never measured: as fast as the others */
  double caps = 0, total = 0;
  for (uint32_t s = 0; s < serving; s++) {
    caps += p->sv[s].known ? p->sv[s].cap : mean;
    total += p->load[s];
  }
  for (uint32_t s = 0; s < serving; s++)
    p->target[s] = total * (p->sv[s].known ? p->sv[s].cap : mean) / caps;
  return total > 0;
}

/* The block of `from` to move: the heaviest whose load fits the excess,
 * else the lightest; none moved in the last windows. UINT32_MAX: none. */
static uint32_t pick_block(const psld *p, uint32_t from, double excess, double now) {
  uint32_t fit = UINT32_MAX, light = UINT32_MAX;
  for (uint32_t b = 0; b < p->n_blocks; b++) {
    if (p->where[b] != from || p->floats[b] <= 0 ||
        now - p->moved_at[b] < PSLD_SETTLE_WINDOWS * p->k.window_s)
      continue;
    double lb = p->held[from] > 0 ? p->load[from] * p->floats[b] / p->held[from] : 0;
    if (lb <= excess && (fit == UINT32_MAX || p->floats[b] > p->floats[fit])) fit = b;
    if (light == UINT32_MAX || p->floats[b] < p->floats[light]) light = b;
  }
  return fit != UINT32_MAX ? fit : light;
}

/* Moves block b from `from` to `to` (the core's mechanism). */
static void move_block(psld *p, uint32_t b, uint32_t from, uint32_t to, double now) {
  double lb = p->held[from] > 0 ? p->load[from] * p->floats[b] / p->held[from] : 0;
  ps_node_move(p->node, p->keys + p->first[b], (size_t)(p->first[b + 1] - p->first[b]), to, now);
  p->where[b] = to;
  p->moved_at[b] = now;
  p->load[from] -= lb;
  p->load[to] += lb;
  p->held[from] -= p->floats[b];
  p->held[to] += p->floats[b];
  p->tokens -= p->bytes[b];
}

/* A serving server other than `not`, drawn at random. */
static uint32_t random_server(psld *p, uint32_t serving, uint32_t not) {
  uint32_t s = (uint32_t)(uniform(p) * (serving - 1));
  return s >= not ? s + 1 : s;
}

/* With the lock held: the decision of the window just gathered. */
static void decide(psld *p, double now) {
  uint32_t serving = ps_node_serving(p->node);
  for (uint32_t b = 0; b < p->n_blocks; b++) /* a server that left gave its keys home */
    if (p->where[b] >= serving) p->where[b] = block_home(p, b);
  double dt = now - p->last_decide;
  p->last_decide = now;
  double cap_tokens = fmax(4 * p->k.budget_Bps * p->k.window_s, p->most_bytes);
  p->tokens = fmin(p->tokens + p->k.budget_Bps * dt, cap_tokens);
  if (serving < 2 || !estimate(p, serving) || p->window < p->quiet_until) return;
  double tokens_before = p->tokens;
  for (uint32_t s = 0; s < serving; s++) p->held[s] = 0;
  for (uint32_t b = 0; b < p->n_blocks; b++) p->held[p->where[b]] += p->floats[b];
  /* Exploration's probe: a server holding nothing gets a block now and then,
   * so its capacity is measured (again). */
  for (uint32_t s = 0; s < serving; s++) {
    if (p->held[s] > 0 || uniform(p) >= p->k.explore) continue;
    uint32_t from = 0;
    for (uint32_t t = 1; t < serving; t++)
      if (p->load[t] > p->load[from]) from = t;
    uint32_t b = from != s ? pick_block(p, from, 0, now) : UINT32_MAX;
    if (b != UINT32_MAX && p->tokens >= p->bytes[b]) move_block(p, b, from, s, now);
  }
  for (uint32_t moves = 0; moves < p->n_blocks; moves++) {
    /* The most and the least loaded, for their capacity. */
    uint32_t from = UINT32_MAX, least = 0;
    for (uint32_t s = 0; s < serving; s++) {
      if (p->load[s] / p->target[s] < p->load[least] / p->target[least]) least = s;
      if (p->held[s] > 0 &&
          (from == UINT32_MAX || p->load[s] / p->target[s] > p->load[from] / p->target[from]))
        from = s;
    }
    if (from == UINT32_MAX || from == least ||
        p->load[from] / p->target[from] <= (1 + p->k.tolerance) * p->load[least] / p->target[least])
      break; /* in balance */
    uint32_t b = pick_block(p, from, p->load[from] - p->target[from], now);
    if (b == UINT32_MAX || p->tokens < p->bytes[b]) break; /* settling, or over budget */
    uint32_t to = least;
    if (uniform(p) < p->k.explore) {
      to = random_server(p, serving, from);
    } else {
      /* Not when it would only move the problem: load per capacity no
       * better there than here. */
      double lb = p->load[from] * p->floats[b] / p->held[from];
      if ((p->load[to] + lb) / p->target[to] >= p->load[from] / p->target[from]) break;
    }
    move_block(p, b, from, to, now);
  }
  if (p->tokens < tokens_before) /* moves: let the reports catch up */
    p->quiet_until = p->window + PSLD_SETTLE_WINDOWS + 1;
}

static double psld_on_timer(void *state, double now) {
  psld *p = state;
  if (ps_layout_is_server(&p->layout, p->id) && p->id < ps_node_serving(p->node))
    report(p, now);
  return now + p->k.window_s;
}

const ps_policy_ops ps_policy_psld = {
    .name = "psld",
    .configure = psld_configure,
    .init = psld_init,
    .on_timer = psld_on_timer,
    .on_message = psld_on_message,
    .free = psld_free,
};
