/*
 * model/ internals: the structures the core's files share. Nothing outside
 * model/ includes this (tests of the core's internals excepted).
 * Functions one file of model/ defines for the others are named ps__ (as
 * libuv's uv__), apart from the public ps_ of ps.h and testing.h; inline
 * helpers here and a file's static functions keep plain names.
 *
 * Per key, a node keeps at most one entry in its striped key store. The entry
 * holds what this node knows of the key:
 *   - its local state: OWNED (value here), INCOMING (a transfer to this node
 *     is under way; operations queue until it lands), REPLICA (a copy kept in
 *     sync with the owner's; see replica.c), REPLICA_ARRIVING, or ABSENT;
 *   - on the key's home node only, the directory: the current owner.
 * A home key without an entry is owned by its home with an all-zero value
 * (entries are created lazily, so memory grows with the keys touched).
 */
#ifndef PSLAB_MODEL_INTERNAL_H
#define PSLAB_MODEL_INTERNAL_H

#include "model/ps.h"
#include "model/testing.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* A node's sealing key, ready for use: the run's algorithm and its key
 * (for GMAC, libsodium's expanded AES key and GHASH powers, made once). */
typedef struct {
  ps_seal alg;
  uint8_t siphash_key[16];
  _Alignas(16) uint8_t gcm_state[512]; /* a crypto_aead_aes256gcm_state */
} ps_sealer;

/* Makes s from the run's secret for algorithm alg: PS_OK, or PS_ERR_INVAL
 * for an unknown algorithm or GMAC on a CPU without it. */
int ps_sealer_init(ps_sealer *s, ps_seal alg, const uint8_t secret[PS_SECRET_LEN]);
/* Wipes s (it held the secret). */
void ps_sealer_clear(ps_sealer *s);
/* The seal of the encoded message buf[0..len) (len >= PS_WIRE_HEADER_LEN)
 * under s (the wire format in ps.h says what it covers); whether the seal
 * it carries is that one; writing it into buf's seal field. */
uint64_t ps_msg_seal(const uint8_t *buf, size_t len, const ps_sealer *s);
bool ps_msg_seal_ok(const uint8_t *buf, size_t len, const ps_sealer *s);
void ps_msg_put_sealed(uint8_t *buf, size_t len, const ps_sealer *s);

/* ------------------------------------------------------------ key store */

enum {
  KEY_ABSENT = 0,
  KEY_OWNED = 1,
  KEY_INCOMING = 2,         /* a transfer to this node is under way */
  KEY_REPLICA = 3,          /* a copy; pushes also accumulate in delta */
  KEY_REPLICA_ARRIVING = 4, /* a copy whose first value is on its way */
};

/* What bounded consistency keeps about one key beside its entry (clock.c),
 * made when first needed: on a node that reads it, its cached value and the
 * bookkeeping that keeps a node's own writes in what it reads; on its owner,
 * under ESSP, the nodes that cache it. */
typedef struct {
  float *cache;            /* a copy of a key neither owned nor replicated here */
  int64_t stamp;           /* the copy holds every write of clocks < stamp */
  int64_t last_push_clock; /* this node's latest write of the key: its worker's
                              clock then (-1: none) ... */
  uint64_t last_push_seq;  /* ... and its number among the node's writes */
  uint32_t inflight;       /* this node's writes sent and not yet acknowledged */
  uint32_t *subs;          /* owner, ESSP: nodes that cache the key */
  uint32_t n_subs, cap_subs;
  bool dirty;              /* owner, ESSP: written since its last REFRESH */
} key_bounded;

/* An operation waiting for a key in transfer, applied in order on arrival. */
typedef struct pending_op {
  struct pending_op *next;
  uint8_t type;        /* PS_MSG_PULL, PUSH, SET, SYNC, or LOCALIZE (a waiter) */
  bool via_message;    /* arrived as a message: answer with one */
  bool subscribe;      /* PULL under ESSP: the origin caches the value (aux 1) */
  uint8_t hops;        /* forwards so far */
  uint32_t origin;     /* node of the issuing worker */
  uint32_t worker;
  uint64_t request;    /* ticket on origin (0: nobody waits) */
  uint32_t pos;        /* float offset in the requester's buffer */
  uint32_t len;        /* value floats in vals (PUSH, SET) */
  float vals[];
} pending_op;

/* On a key's home: the nodes that intend the key, by node, each with the
 * intents it started and has not stopped (> 0). Made at the first start. */
typedef struct intent_set {
  uint32_t n, cap;
  struct {
    uint32_t node, count;
  } at[];
} intent_set;

typedef struct {
  ps_key key;
  uint8_t used;
  uint8_t state;        /* KEY_* at this node */
  uint8_t forward;      /* INCOMING: hand on to forward_to once landed */
  uint8_t rerequested;  /* forward set, and this node asked for it again */
  uint32_t owner;       /* directory, on the home node only */
  uint32_t forward_to;
  uint8_t sync_pending; /* REPLICA: a SYNC is unanswered ... */
  uint32_t sync_seq;    /* ... the latest one's number (see replica.c) */
  uint8_t mirror;       /* OWNED, all-reduce: pushes also gather in delta */
  uint8_t drop_on_arrival; /* REPLICA_ARRIVING: dropped before its value came */
  uint16_t last_by;     /* shared accesses counted: the thread that touched it last (0:
                           none yet; 1 + a worker's index; 1 + the workers
                           for the node's own reading thread) */
  struct intent_set *intents; /* on the home: who intends it (intent.c), or NULL */
  float *value;         /* OWNED, REPLICA: value_len floats; NULL means all zero */
  float *delta;         /* REPLICA: pushes since the last sync; NULL means zero */
  /* REPLICA: the time (writer's node time) at which the newest delta from
   * another node applied here was made (a DELTA's round; the owner's
   * SYNC_REPLY); 0 until one came (replica.c). */
  double fresh_at;
  pending_op *queue_head, *queue_tail;
  key_bounded *kb;      /* bounded consistency's, or NULL (clock.c) */
} key_entry;

/* One stripe: an open-addressing table under its own mutex. Stripes start
 * on cache lines of their own (PS_CACHE_LINE): threads working on keys of
 * different stripes never write one line. */
#define PS_CACHE_LINE 64
typedef struct {
  _Alignas(PS_CACHE_LINE) pthread_mutex_t lock;
  key_entry *slots;
  size_t cap;   /* power of two, or 0 */
  size_t used;
} store_stripe;

typedef struct {
  store_stripe *stripes;
  uint32_t num_stripes; /* power of two */
} key_store;

int ps__store_init(key_store *s, uint32_t stripes);
void ps__store_destroy(key_store *s);
static inline store_stripe *store_stripe_of(key_store *s, ps_key k) {
  return &s->stripes[(ps_mix64(k) >> 40) & (s->num_stripes - 1)];
}
/* Where k's probe starts in st's table (cap > 0). */
static inline size_t stripe_slot_of(const store_stripe *st, ps_key k) {
  return (size_t)ps_mix64(k ^ 0x9e3779b97f4a7c15ULL) & (st->cap - 1);
}
/* With the stripe's lock held: the entry of k, or NULL. Inline: every
 * access looks its key up. */
static inline key_entry *stripe_find(store_stripe *st, ps_key k) {
  if (st->cap == 0) return NULL;
  for (size_t i = stripe_slot_of(st, k);; i = (i + 1) & (st->cap - 1)) {
    key_entry *e = &st->slots[i];
    if (!e->used) return NULL;
    if (e->key == k) return e;
  }
}
/* With the lock held: the entry of k, created (zeroed but for key) if absent;
 * NULL on no memory. Pointers to entries die at the next insert or delete. */
key_entry *ps__stripe_get(store_stripe *st, ps_key k, bool *created);
/* With the lock held: removes k's entry (frees nothing it points to). */
void ps__stripe_remove(store_stripe *st, ps_key k);
/* Calls fn on every entry of the store, each stripe's under its lock; fn
 * must not insert or remove entries. */
void ps__store_each(key_store *s, void (*fn)(key_entry *e, void *arg), void *arg);

/* --------------------------------------------------------------- outbox */

/* Messages being built during one call into the core, grouped by destination
 * and header; sent when the call has released every lock. */
typedef struct {
  ps_msg head;           /* type, origin, worker, aux, request; counts */
  uint32_t dst;
  ps_key *keys;
  uint32_t *pos;
  float *values;
  uint32_t key_cap, value_cap;
} out_msg;

typedef struct {
  uint32_t worker;
  ps_ticket ticket;
} wakeup;

/* A sent message's key, position and value arrays, kept by its node for the
 * next message a call starts (outbox.c): past the first calls, building a
 * message reallocates nothing. At most OUT_SPARES are kept, none whose
 * arrays hold more than OUT_SPARE_MAX_KEYS keys or OUT_SPARE_MAX_FLOATS
 * floats (those are freed). */
typedef struct {
  ps_key *keys;
  uint32_t *pos;
  float *values;
  uint32_t key_cap, value_cap;
} out_spare;

#define OUT_SPARES 64
#define OUT_SPARE_MAX_KEYS 4096
#define OUT_SPARE_MAX_FLOATS 65536

/* One call into the core that may send: ps__ctx_init takes the node's order
 * lock; ps__ctx_finish appends the call's messages to the node's send queue,
 * sends the queue in order (outbox.c) and releases the lock. A call decides
 * its messages under key locks but sends them after releasing those; holding
 * the order lock from the first decision to the enqueue keeps a node's
 * messages in the order it decided them, whichever threads decide. No
 * callback runs under it. Lock order: order lock, then one stripe lock, then
 * a worker's ticket lock or the replica lock. */
typedef struct {
  uint32_t dst;
  uint8_t *buf;
  size_t len;
  /* A message for every other node (dst ALL_OTHERS), encoded and sealed
   * once as a shared message: those nodes, then each one's number, `count`
   * of each (NULL for one destination). */
  uint32_t *shared;
  uint32_t count;
} queued_msg;
/* The destination of a ps__ctx_add_all message: every node but this one. */
#define ALL_OTHERS UINT32_MAX

/* A call's first messages and wake-ups live in the context itself (most
 * calls make one or two of each): no allocation for them. A context is
 * never copied once it holds one. */
#define CTX_INLINE_MSGS 2
#define CTX_INLINE_WAKES 2
/* A call with more messages than this finds the one for a key through an
 * index by header (outbox.c) instead of a scan: a replica sync round of an
 * all-reduce writes to every other node, each key to each of them. */
#define CTX_SCAN_MSGS 8


typedef struct {
  ps_node *node;
  double now;
  out_msg *msgs;         /* inline_msgs, or malloc'd once they are too few */
  size_t n_msgs, cap_msgs;
  /* Past CTX_SCAN_MSGS messages: an open-addressing table of 1 + the index
   * in msgs of each message, by a hash of its header (0: empty slot); msgs
   * keeps the order the messages were started in, which is the order sent. */
  uint32_t *msg_index;
  size_t index_cap;      /* slots, a power of two, or 0 */
  wakeup *wakes;         /* likewise */
  size_t n_wakes, cap_wakes;
  int error;             /* first allocation failure */
  bool made_read;        /* made_clock holds the node's clock, read once per */
  int64_t made_clock;    /* call for replica messages (replica.c) */
  uint64_t served_keys, served_floats; /* operations from messages applied here */
  out_msg inline_msgs[CTX_INLINE_MSGS];
  wakeup inline_wakes[CTX_INLINE_WAKES];
} call_ctx;

/* Takes the node's order lock and starts an empty context. */
void ps__ctx_init(call_ctx *c, ps_node *node, double now);
/* Queues and sends every built message, releases the order lock, fires the
 * wake-ups and frees the context. */
void ps__ctx_finish(call_ctx *c);
/* Appends one key (and its value floats, if any) to the message to dst with
 * this header, starting a new message when none matches. */
void ps__ctx_add(call_ctx *c, uint32_t dst, uint8_t type, uint32_t origin,
                 uint32_t worker, uint64_t request, uint32_t aux, ps_key k,
                 uint32_t pos, const float *vals, uint32_t len);
/* Passes op on key k (its values, if any) to dst, one hop further; an
 * operation already forwarded PS_MAX_HOPS times is dropped, counted, and
 * the call's error set to PS_ERR_HOPS. */
void ps__ctx_forward(call_ctx *c, uint32_t dst, const pending_op *op, ps_key k, const float *vals);
/* Appends key k and its values to the message of this type from this node
 * to every other node: one message to each, all with the same keys, sent in
 * node order at the place of the call's messages where the first such key
 * was added, exactly as a ps__ctx_add per key and node would send them. Its keys
 * and values are kept once, not once per node. */
void ps__ctx_add_all(call_ctx *c, uint8_t type, ps_key k, const float *vals, uint32_t len);
/* A replica message's making, for its header (replica.c): the call's time
 * in nanoseconds (request) and the node's clock, read once per call (aux:
 * informative; staleness counts the reader's steps, not the sender's). */
uint64_t ps__made_ns(const call_ctx *c);
uint32_t ps__made_clock(call_ctx *c);
/* A message of this type, with no keys, to every other node. */
void ps__ctx_add_all_empty(call_ctx *c, uint8_t type, uint64_t request, uint32_t aux);
/* Appends like ps__ctx_add_all, the header's request and aux set (a DELTA's
 * making time and clock, replica.c). */
void ps__ctx_add_all_made(call_ctx *c, uint8_t type, uint64_t request, uint32_t aux, ps_key k,
                          const float *vals, uint32_t len);
void ps__ctx_wake(call_ctx *c, uint32_t worker, ps_ticket t);

/* -------------------------------------------------------------- workers */

/* A key a ticket waits for a reply about: where it goes in the caller's
 * buffer, and whether a reply took it already. */
typedef struct {
  ps_key key;
  uint32_t pos;
  uint8_t answered;
} awaited_key;

/* Operations of a few remote keys (most) keep their awaited keys in the
 * ticket itself: no allocation per remote operation. */
#define TICKET_INLINE_KEYS 4

typedef struct {
  ps_ticket id;
  uint64_t pending;  /* keys still outstanding, plus one while being issued */
  float *out;        /* pull: the caller's buffer */
  size_t out_len;
  int64_t stamp;     /* a bounded pull: the run's clock when issued (-1: none) */
  uint64_t issue_seq; /* ... and the node's write count then */
  int64_t write_clock; /* with the clock service, a write: its worker's clock
                          (-1: none); the node says no later clock until it
                          completes */
  /* The keys a reply must come for (sent in messages): by position in the
   * caller's buffer, ascending; each taken once. In `inline_keys` when
   * there are at most TICKET_INLINE_KEYS, else in `heap_keys` (client.c,
   * awaited_of: slots move, so nothing points into one). */
  uint32_t n_wait;
  uint8_t wait_type;  /* the replies' type: PULL_REPLY or WRITE_ACK */
  double issued_at;    /* when its messages were sent (response times) */
  awaited_key *heap_keys;
  awaited_key inline_keys[TICKET_INLINE_KEYS];
} ticket_slot;

/* A key -> server map (route_hints.c). */
typedef struct {
  ps_key key;
  uint32_t server;
  uint8_t used;
} route_entry;

typedef struct {
  route_entry *e;
  size_t cap, len; /* cap a power of two, or 0 */
} route_map;

int ps__route_put(route_map *m, ps_key k, uint32_t server);
bool ps__route_get(const route_map *m, ps_key k, uint32_t *server);
void ps__route_free(route_map *m);

/* What a node took from one sending node's DELTAs: when (its time) the
 * newest was sent; state 0: none yet, or idle (MADE_IDLE), 1: sending, 2:
 * its last came (MADE_FINAL). */
typedef struct {
  double at;
  uint8_t state;
} writer_cut;
/* A DELTA's aux when it is its sender's last (ps_node_finish), or, with no
 * keys, says its sender's round found nothing to send (idle until its next). */
#define MADE_FINAL UINT32_MAX
#define MADE_IDLE (UINT32_MAX - 1)

/* A worker's steps in time (replica.c), for the staleness of replica reads
 * in the reader's own steps: the times (ns) of its last STEP_LOG_LEN clock
 * advances (fine), and of every STEP_LOG_STRIDE-th advance, the last
 * STEP_LOG_LEN of them (coarse). Advance i (from 1) is at fine[(i - 1) %
 * STEP_LOG_LEN], advance STEP_LOG_STRIDE * j at coarse[(j - 1) %
 * STEP_LOG_LEN]. Written by the worker's thread only, read by any: a reader
 * racing a wrap of the ring may count a step off, never more. */
#define STEP_LOG_LEN 1024
#define STEP_LOG_STRIDE 64
typedef struct {
  _Atomic uint64_t n, first_ns; /* advances logged; the first one's time */
  _Atomic uint64_t fine[STEP_LOG_LEN], coarse[STEP_LOG_LEN];
} step_log;

/* Ages of replica reads. */
typedef struct {
  _Atomic uint64_t reads, sum_ns, max_ns, sum_steps, max_steps;
  _Atomic uint64_t hist[PS_STALENESS_BUCKETS], steps_hist[PS_STALENESS_BUCKETS];
} staleness_counters;

/* A worker's intents of one clock, for SPARSE (clock.c). */
typedef struct {
  int64_t clock;
  ps_key *keys;
  size_t n, cap;
} intent_slot;

/* Workers start on cache lines of their own (node.c allocates them aligned):
 * the fast path writes only its worker's line and its keys' stripes. */
struct ps_worker {
  _Alignas(PS_CACHE_LINE) ps_node *node;
  uint32_t index;
  _Atomic int64_t clock;
  pthread_mutex_t lock;   /* guards the ticket table */
  ticket_slot *tickets;
  size_t n_tickets, cap_tickets;
  ps_ticket next_ticket;  /* ids start at 1 */
  /* Scratch of the issuing thread (a handle is used by one thread). */
  uint32_t *scratch_pos;   /* each key's float offset in the caller's buffer */
  uint32_t *scratch_defer; /* keys that need messages */
  size_t scratch_cap;
  /* Bounded consistency (clock.c); under the node's clock lock but cons,
   * which only the worker's own thread writes. */
  ps_consistency cons;
  _Atomic int64_t tick;    /* its clock in ticks (clk.known's unit) */
  bool waiting;            /* a ps_clock_wait is pending: */
  int64_t wait_tick;       /* ... for this tick */
  ps_ticket wait_ticket;
  bool wait_sparse;        /* ... or, SPARSE, for its step's keys: */
  ps_key *wait_keys;       /* sorted, distinct */
  size_t n_wait_keys, cap_wait_keys;
  intent_slot *intents;    /* SPARSE: intents of clocks c - 1 .. c + lookahead */
  uint32_t n_intents;
  /* Route hints (route_hints.c, settings.route_hints): the servers it sends keys
   * to (its issuing thread's), and those learnt from replies since, taken
   * in when it has nothing outstanding (under lock). */
  route_map routes, learnt;
  /* Key accesses this worker issued, served from local memory or needing a
   * message: per worker, so that workers of one node do not share a counter
   * (ps_node_get_stats sums them). */
  _Alignas(PS_CACHE_LINE) _Atomic uint64_t local_accesses;
  _Atomic uint64_t remote_accesses;
  _Atomic uint64_t shared_accesses, shared_floats; /* ps_node_count_shared */
  staleness_counters staleness; /* its reads of replicas served inline */
  /* Its clock advances in time, once its node has held a replica (NULL
   * before): allocated by its own thread, read by any. */
  _Atomic(step_log *) steps;
};

/* A reply of `server` answered worker w for key k (route hints). */
void ps__routes_learn(ps_worker *w, ps_key k, uint32_t server);
/* Takes in what w learnt, if it has no operation outstanding. */
void ps__routes_adopt(ps_worker *w);

/* Opens a ticket with `keys` outstanding plus the issuing guard. */
int ps__ticket_open_bounded(ps_worker *w, uint64_t keys, float *out, size_t out_len,
                            int64_t stamp, uint64_t issue_seq, int64_t write_clock, ps_ticket *id);
/* Notes, once per ticket, that keys[idx[j]] (at w->scratch_pos[idx[j]] of
 * the caller's buffer, ascending) travel in messages and must each come
 * back in one reply of type reply (PULL_REPLY or WRITE_ACK); now: when they
 * are sent (response times). PS_OK, PS_ERR_NOMEM or PS_ERR_PROTOCOL (no
 * such ticket, or noted already). */
int ps__ticket_expect(ps_worker *w, ps_ticket id, uint8_t reply, const ps_key *keys,
                      const uint32_t *idx, size_t n, double now);
/* Takes, of the keys of reply m (PULL_REPLY or WRITE_ACK), those its
 * ticket waits for at their positions and has no answer for yet, each once:
 * took[i] (m->key_count of them) says which. Returns how many were taken.
 * Key by key, not all or none: a reply carries every key one node answers
 * for one request, so a stray key a forged request slipped in beside a
 * real one must not cost the real one its answer. *issued_at: when the
 * request was sent (0: no such ticket). */
uint32_t ps__ticket_take_reply(ps_worker *w, const ps_msg *m, uint8_t *took, double *issued_at);
/* A bounded pull's stamp and write count (false: no such ticket). */
bool ps__ticket_stamp(ps_worker *w, ps_ticket id, int64_t *stamp, uint64_t *issue_seq);
int ps__ticket_open(ps_worker *w, uint64_t keys, float *out, size_t out_len,
                    ps_ticket *id);
/* Drops `n` outstanding keys; when the count reaches 0 the ticket completes
 * and, unless `silent`, a wake-up is queued on c. Returns true if it did.
 * With `copy`, first copies len floats to the ticket's out + pos (a pull
 * result); PS_ERR_PROTOCOL if the ticket is unknown or the span is outside
 * its buffer (nothing is changed then). */
int ps__ticket_progress(ps_worker *w, call_ctx *c, ps_ticket id, uint64_t n,
                        const float *copy, uint32_t pos, uint32_t len, bool silent);
/* Copies a pull result into the ticket's buffer without progress. */
int ps__ticket_fill(ps_worker *w, ps_ticket id, uint32_t pos, const float *vals,
                    uint32_t len);

/* ----------------------------------------------------------------- node */

typedef struct {
  _Atomic uint64_t messages_sent, bytes_sent,
      messages_received, forwards, relocations, queued, bad_messages, replica_syncs,
      sync_rounds,
      duplicates, out_of_sequence, hop_drops, bad_seals;
  _Atomic uint64_t shared_handled, shared_handled_floats; /* ps_node_count_shared */
} node_counters;

/* Bounded consistency's counters. */
typedef struct {
  _Atomic uint64_t cache_reads, cache_misses, reads, sum, max, clock_messages, refreshes;
  _Atomic uint64_t hist[PS_CLOCK_BUCKETS];
} bounded_counters;

/* The clock service (clock.c), under clock_lock: taken after the order
 * lock, never with a stripe lock held; a worker's ticket lock may be taken
 * under it. */
typedef struct {
  pthread_mutex_t lock;
  /* Clocks are said in ticks: clock c is tick 2c while a node's workers
   * may still read in it, 2c + 1 once all of them said their reads of c
   * are done (ps_end_reads, BSP); PS_CLOCK_DONE is tick INT64_MAX. */
  int64_t *known;       /* per node: the tick it said last */
  ps_key **keys;        /* SPARSE, per node: keys its workers intend ... */
  size_t *n_keys;
  bool *keys_known;     /* ... once it said any */
  int64_t said;         /* the tick this node said last */
  _Atomic int64_t min;  /* the smallest of known (a tick) */
  _Atomic uint64_t push_seq; /* numbers this node's writes (bounded) */
  int64_t *marks;       /* config.clock_marks (owned), ascending */
  size_t n_marks;
  pthread_mutex_t dirty_lock; /* ESSP: owned keys written since their refresh; */
  ps_key *dirty;              /* taken under a stripe lock, never before one */
  size_t n_dirty, cap_dirty;
} clock_service;

/* Response times of one server's replies, on a client (server_load.c). */
typedef struct {
  _Atomic uint64_t count, keys, sum_ns, max_ns;
  _Atomic uint64_t hist[PS_RT_BUCKETS];
} rt_counters;

/* A node's load as a server, and as a client the response times by server
 * (server_load.c). lock: a leaf, taken under the order lock at most. */
typedef struct {
  pthread_mutex_t lock;
  uint64_t keys, floats, handled, queue_sum, queue_max, wakeups;
  uint64_t queue_hist[PS_QUEUE_BUCKETS];
  double busy_s;
  uint64_t series[PS_SERIES_MAX]; /* keys served per bucket of bucket_s */
  uint32_t n_series;
  double bucket_s;
  pthread_mutex_t rt_lock;        /* making an rt entry */
  _Atomic(rt_counters *) *rt;     /* per node: its replies to this one, or NULL */
} node_load;

int ps__load_init(ps_node *n);
void ps__load_destroy(ps_node *n);
/* At now, this node served `keys` operations of `floats` floats. */
void ps__load_note_served(ps_node *n, double now, uint64_t keys, uint64_t floats);
/* A reply from server answered `keys` keys rt_s after the request left. */
void ps__load_note_reply(ps_node *n, uint32_t server, double rt_s, uint32_t keys);

struct ps_node {
  uint32_t id;
  ps_layout layout;
  ps_env env;
  ps_policy_settings settings;
  const ps_policy_ops *policy;
  void *policy_state;
  double policy_next_timer;
  key_store store;
  ps_worker *workers;
  uint32_t num_workers;
  _Atomic bool count_shared;  /* ps_node_count_shared */
  _Atomic uint16_t reader_by; /* last_by of the thread handling messages */
  /* What every access reads is above, and (but the timer's due time)
   * written only while the node is made; what threads write as they go
   * starts here, on a line of its own (node.c allocates the node aligned). */
  _Alignas(PS_CACHE_LINE) node_counters stats;
  pthread_mutex_t order_lock; /* see call_ctx */
  uint32_t *send_seq;         /* per destination: the last number sent (order lock) */
  _Atomic uint32_t *recv_seq; /* per source: the last number taken */
  uint32_t shared_sent;       /* the last number of a shared message sent (order lock) */
  _Atomic uint32_t *recv_shared; /* per source: that of the last shared message taken */
  queued_msg *outq;           /* encoded, waiting to be sent: under order_lock */
  size_t outq_head, outq_len, outq_cap;
  out_spare spares[OUT_SPARES]; /* sent messages' arrays, for reuse (order lock) */
  uint32_t n_spares;
  bool draining;              /* a thread is sending the queue */
  _Atomic int64_t clock; /* the highest clock of its workers */
  _Atomic uint32_t sync_seq; /* numbers this node's SYNCs */
  /* All-reduce staleness (replica.c): per sending node, the newest DELTA
   * taken from it (order lock), and the oldest of those of the nodes still
   * sending, which every replica here holds every push before. */
  writer_cut *cuts;
  double cut_min_at;          /* the oldest sending cut, as last published (order lock) */
  bool delta_sent;            /* the last all-reduce round sent a DELTA (order lock) */
  _Atomic uint64_t fresh_ns;
  _Atomic bool replicas_seen; /* a replica was ever listed here: workers log their steps */
  /* Keys replicated here, for sync rounds; under replica_lock, which is taken
   * after a stripe lock, never before one. */
  pthread_mutex_t replica_lock;
  ps_key *replica_keys;  /* replicas, and with all-reduce mirrored owned keys */
  size_t n_replicas, cap_replicas;
  ps_sync_mode replica_mode;
  bool testing_double_count; /* model/testing.h: a deliberate bug, for tests */
  const ps_key *init_hot_keys; /* the config's, during the policy's init */
  size_t init_num_hot_keys;
  staleness_counters staleness; /* replica reads served from a queue (ps__replica_serve);
                                   those served inline count in their worker's */
  ps_scale_step *scale;     /* config.scale (owned), ... */
  size_t n_scale, next_scale; /* ... the step the timer applies next */
  _Atomic uint32_t serving; /* servers [0, serving) serve now */
  bool has_clock;           /* config.clock_service */
  ps_sealer sealer; /* config.secret and config.seal: the key of every seal */
  clock_service clk;
  bounded_counters bounded;
  node_load load;
};

/* Whether this node's workers follow route hints: asked for, and on a node
 * that holds no keys (a worker-only node), whose own state never gives a
 * key a route of its own (route_hints.c). */
static inline bool node_routes(const ps_node *n) {
  return n->settings.route_hints && !ps_layout_is_server(&n->layout, n->id);
}

/* dst[i] += src[i] for i < n: element by element, so the sums are the very
 * bits a scalar loop gives; four floats at a time where the compiler offers
 * vectors (GCC's -O2 leaves the plain loop scalar, and a push of 100 floats
 * then spends most of its time adding). */
static inline void floats_add(float *dst, const float *src, uint32_t n) {
  uint32_t i = 0;
#if defined(__GNUC__)
  typedef float v4f __attribute__((vector_size(16)));
  for (; i + 4 <= n; i += 4) {
    v4f a, b;
    memcpy(&a, dst + i, sizeof a);
    memcpy(&b, src + i, sizeof b);
    a += b;
    memcpy(dst + i, &a, sizeof a);
  }
#endif
  for (; i < n; i++) dst[i] += src[i];
}

/* The bucket of a histogram of n buckets that holds its q-quantile (0..1):
 * the first non-empty one whose running count reaches q of the total, the
 * last bucket if none does (q > 1); -1 when the histogram is empty. */
static inline int hist_quantile_bucket(const uint64_t *hist, unsigned n, double q) {
  uint64_t total = 0;
  for (unsigned i = 0; i < n; i++) total += hist[i];
  if (!total) return -1;
  double want = q * (double)total, seen = 0;
  for (unsigned i = 0; i < n; i++) {
    seen += (double)hist[i];
    if (seen >= want && hist[i]) return (int)i;
  }
  return (int)n - 1;
}

static inline void stat_add(_Atomic uint64_t *c, uint64_t n) {
  atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* Where to send an operation on key k that is not here: the home, or, on the
 * home itself, the owner its directory names. */
static inline uint32_t route_of(const ps_node *n, const key_entry *e, ps_key k) {
  uint32_t home = ps_layout_home(&n->layout, k);
  return home == n->id ? e->owner : home;
}

/* Looks up (creating lazily) k's entry with its stripe locked; a new entry on
 * the home is OWNED by it. NULL on no memory (then nothing stays locked). */
key_entry *ps__node_lock_entry(ps_node *n, ps_key k, store_stripe **st);
/* The same for an access by worker w's call (counted shared as w's). */
key_entry *ps__worker_lock_entry(ps_worker *w, ps_key k, store_stripe **st);

/* Serves one read or write of key k at this node, with the entry locked:
 * applies it if owned, queues it if in transfer, forwards it otherwise.
 * Results go to the ticket (local) or into a reply (remote). */
void ps__serve_op(call_ctx *c, key_entry *e, ps_key k, const pending_op *op,
                  const float *vals);
/* Applies a read (into out; out NULL: only makes sure a value exists) or a
 * write (from in) of type PULL, PUSH or SET to an owned entry's value of len
 * floats. PS_OK or PS_ERR_NOMEM. */
int ps__value_apply(key_entry *e, uint32_t len, uint8_t type, const float *in, float *out);
/* Delivers the result of one applied operation to whoever issued it. */
void ps__deliver_result(call_ctx *c, const pending_op *op, ps_key k,
                        const float *value, uint32_t len);

/* Relocation (relocation.c). With the entry locked: */
/* Move k's directory entry to new_owner (this node is k's home). */
void ps__directory_move(call_ctx *c, key_entry *e, ps_key k, uint32_t new_owner);
/* Give k, which this node owns or is receiving, to new_owner. */
void ps__handover(call_ctx *c, key_entry **e, store_stripe *st, ps_key k,
                  uint32_t new_owner);
/* Start receiving k here for a local localize; queues a waiter. */
void ps__localize_key(call_ctx *c, key_entry *e, ps_key k, const pending_op *waiter);
int ps__handle_localize(call_ctx *c, const ps_msg *m);
/* Moves (move.c): a MOVE asks this server to localize its keys. */
int ps__handle_move(call_ctx *c, const ps_msg *m);
/* Whether this node is a server that serves now (scaling). */
static inline bool node_serves(const ps_node *n) {
  return n->id < atomic_load_explicit(&n->serving, memory_order_relaxed);
}
/* With k's entry locked, on a node that no longer serves: asks k's home to
 * take the key (a MOVE to the home). */
void ps__move_home(call_ctx *c, ps_key k);
/* Applies scaling steps due at now (on_timer); a server that stops serving
 * hands its keys on. */
void ps__scale_due(ps_node *n, double now);
/* When the next scaling step is due (INFINITY: none). */
double ps__scale_next(const ps_node *n);
int ps__handle_handover(call_ctx *c, const ps_msg *m);
int ps__handle_transfer(call_ctx *c, const ps_msg *m);

/* Replicas (replica.c). With the entry locked: */
/* A pull (into out) or push (of vals) of worker w on a replica, from local
 * memory; sends nothing. A pull counts its staleness in w's counters: call
 * it on w's thread. PS_OK or PS_ERR_NOMEM. */
int ps__replica_apply_local(ps_worker *w, key_entry *e, ps_key k, uint8_t type, const float *vals,
                            float *out, double now);
/* Serves a queued read or write of this node's worker on a replica; the
 * result goes to its ticket. A set also goes to the owner. */
void ps__replica_serve(call_ctx *c, key_entry *e, ps_key k, const pending_op *op,
                       const float *vals);
/* Drops a replica: its delta goes to the owner as a push; e becomes ABSENT. */
void ps__replica_drop(call_ctx *c, key_entry *e, ps_key k);
/* Logs a clock advance of w at now (its own thread), once its node has held
 * a replica: what staleness in the reader's steps counts. */
void ps__replica_log_step(ps_worker *w, double now);
int ps__handle_sync_reply(call_ctx *c, const ps_msg *m);
int ps__handle_delta(call_ctx *c, const ps_msg *m);
void ps__replica_list_remove(ps_node *n, ps_key k);

/* Intents (intent.c). */
int ps__handle_intent(call_ctx *c, const ps_msg *m);
/* An INTENT_REPLY: hands the counts to the policy's on_intenders. Called
 * with no lock held (the hook may call back into the core). */
int ps__handle_intent_reply(ps_node *n, const ps_msg *m, double now);
/* Checks every key lies in a table: PS_OK or PS_ERR_KEY_RANGE/INVAL/LIMIT. */
int ps__check_op_keys(const ps_node *n, const ps_key *keys, size_t count);
/* Starts moving keys[count] here (ps_localize's body); a waiter of worker
 * with ticket id (0: none) is queued on every key not owned here yet, and
 * *here counts the keys owned already. */
int ps__localize_keys(ps_node *n, uint32_t worker, ps_ticket id, const ps_key *keys,
                      size_t count, double now, uint64_t *here);
/* Starts replicas of keys[count] here (ps_replicate's body), likewise. */
int ps__replicate_keys(ps_node *n, uint32_t worker, ps_ticket id, const ps_key *keys,
                       size_t count, double now, uint64_t *here);

/* Applies the operations queued on e, now that its value is here. */
void ps__entry_drain_queue(call_ctx *c, key_entry *e, ps_key k);
/* Drops an entry that no longer says anything (not owned, not in transfer,
 * not a directory entry). With the stripe locked; e dies here. */
void ps__entry_release(ps_node *n, store_stripe *st, key_entry *e, ps_key k);

/* Bounded consistency (clock.c). */
int ps__clock_init(ps_node *n, const int64_t *marks, size_t n_marks);
void ps__clock_destroy(ps_node *n);
void ps__key_bounded_free(key_bounded *kb);
/* With the entry locked: e's bounded state, made when absent (NULL: no memory). */
key_bounded *ps__entry_bounded(key_entry *e);
/* With the entry locked, for worker w's read of a key neither owned nor
 * replicated here: serves it from the cache into out if the copy is fresh
 * enough for w (true), else counts a miss (false). */
bool ps__cache_read(ps_worker *w, key_entry *e, ps_key k, float *out);
/* With the entry locked: worker w writes vals (type PUSH or SET) to k here;
 * by_message: the write is sent to the owner. */
void ps__bounded_note_write(ps_worker *w, key_entry *e, ps_key k, uint8_t type,
                            const float *vals, bool by_message);
/* With the entry locked: a read of a replica under a bounded model. */
void ps__bounded_note_replica_read(ps_worker *w);
/* With the entry locked, on the owner: k was written (ESSP refresh) or
 * read by a subscriber (op->subscribe). */
void ps__bounded_owner_written(ps_node *n, key_entry *e, ps_key k);
void ps__bounded_subscribe(key_entry *e, uint32_t node);
/* With the entry locked: k leaves this node (its subscribers are dropped). */
void ps__bounded_on_leave(key_entry *e);
/* With the entry locked: the value of k in PULL_REPLY m (at float offset)
 * arrived for a bounded pull stamped `stamp`, issued at the node's write
 * count issue_seq. */
void ps__bounded_fill_from(ps_node *n, key_entry *e, ps_key k, const ps_msg *m, uint32_t offset,
                           int64_t stamp, uint64_t issue_seq);
/* With the entry locked: a write of this node was acknowledged. */
void ps__bounded_acked(key_entry *e);
int ps__handle_clock(call_ctx *c, const ps_msg *m);
/* Inside a call: says the node's clock if it moved on (a worker advanced,
 * or the last write of an earlier clock completed). */
void ps__clock_check(call_ctx *c);
int ps__handle_refresh(call_ctx *c, const ps_msg *m);
/* Whether any worker of this node reads under a bounded model (cheap). */
static inline bool node_bounded(const ps_node *n) { return n->has_clock; }
/* Adds a message of words (as keys) and floats of its own (a POLICY): one
 * such message per call, destination and request. */
void ps__ctx_add_words(call_ctx *c, uint32_t dst, uint8_t type, uint64_t request,
                       const uint64_t *words, size_t n_words, const float *floats, size_t n_floats);
/* Hands a POLICY message to the policy's on_message, with no lock held. */
int ps__handle_policy_message(ps_node *n, const ps_msg *m, double now);
/* Starts a message without keys (a CLOCK that names none). */
void ps__ctx_add_empty(call_ctx *c, uint32_t dst, uint8_t type, uint64_t request, uint32_t aux);
/* SPARSE: worker w intends keys[n] in clocks [start, end). */
void ps__clock_note_intent(ps_worker *w, const ps_key *keys, size_t n, int64_t start,
                           int64_t end);
/* Hands on every all-reduce delta (replicas' and mirrored owned keys') now:
 * before a CLOCK. */
void ps__replica_flush_allreduce(call_ctx *c);

/* Calls fn for key i of m, in order, with its entry locked (made if
 * absent) and its values (len floats; NULL for a message without values).
 * Stops at the first error fn returns (or PS_ERR_NOMEM) and returns it. */
typedef int (*msg_key_fn)(call_ctx *c, const ps_msg *m, uint32_t i, key_entry *e, ps_key k,
                          const float *vals, uint32_t len);
int ps__msg_each_key(call_ctx *c, const ps_msg *m, msg_key_fn fn);

/* Queues op (and its values) on a key in transfer. */
void ps__queue_op(call_ctx *c, key_entry *e, const pending_op *op, const float *vals);

#endif
