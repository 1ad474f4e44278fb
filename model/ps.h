/*
 * pslab core: the one door of model/.
 *
 * A sans-I/O parameter-server core. It holds parameters (float vectors keyed by
 * uint64_t) and runs the management protocols, but never opens a socket, reads
 * a clock, starts a thread or seeds a random source. A backend drives it:
 *
 *   bytes in       ps_node_recv(node, src, buf, len)
 *   bytes out      env.send(ctx, dst, buf, len): the core hands over a malloc'd
 *                  buffer; the backend owns it and frees it with free()
 *                  (optionally env.send_shared: one buffer, several nodes)
 *   time in        every call that can start a timer takes `now` (seconds)
 *   completions    an operation that cannot finish locally returns PS_PENDING
 *                  and a ticket; env.wake(ctx, worker, ticket) fires when it
 *                  completes, and ps_worker_done() tells whether it has
 *
 * One ps_node per node, no globals: a simulator holds hundreds in one process.
 * Includes nothing of the project. Policies plug in through ps_policy_ops.
 *
 * Arranged by audience, each part under its banner:
 *   shared           status codes, keys and layouts, messages: every reader
 *   driving a node   what a backend calls and provides (sim/, real/, a third)
 *   worker operations  what a worker's loop calls on its handle (workloads/)
 *   for policies     the hook table and the mechanisms hooks call (policies/)
 *   inspection       counters and read-only views (run/'s reports)
 * Every int-returning function names the codes it can return. What only the
 * core's tests use is in model/testing.h, the core's own in model/internal.h.
 *
 * Driving a node: the whole contract a backend keeps (sim/ and real/ keep
 * it; reading this header is meant to be enough to write a third).
 *
 *   create    ps_node_new with a ps_node_config (run/'s run_node_config fills
 *             everything but env) and the backend's env {send, wake, and
 *             optionally send_shared}.
 *   threads   Any threads may call ps_node_recv, the worker operations and
 *             the node-level mechanisms concurrently: the core guards its
 *             state with striped mutexes and sends a node's messages in the
 *             order it decided them. A ps_worker handle is used by one
 *             thread at a time. ps_node_on_timer and ps_node_next_timer
 *             belong to one thread at a time (the backend's timer owner).
 *             env.send and env.wake run on whichever thread is inside the
 *             core, hold no core lock, and must not call back into the core.
 *   bytes in  Every message for this node goes through ps_node_recv (or,
 *             sent through env.send_shared, ps_node_recv_numbered) with its
 *             sender, in the order the sender sent it: channels are FIFO per
 *             ordered pair of nodes (relocation and replicas rely on it). A
 *             message that fails to decode or validate is counted
 *             (bad_messages), dropped, and its error returned.
 *   time      `now` is the backend's clock in seconds and never goes back
 *             (simulated time, or wall time since the run started).
 *   timers    A new node whose policy has a timer hook is due at 0 (and one
 *             with a scaling schedule at its first step). The due
 *             time moves only when ps_node_on_timer runs: when
 *             ps_node_next_timer(node) <= now, call ps_node_on_timer(node,
 *             now), then ask ps_node_next_timer again (INFINITY: nothing due)
 *             and sleep until then. Asking more often is harmless (sim/ asks
 *             after every call into the node; real/ after every message and
 *             at least once a second). A core change that let other calls
 *             move the due time would change this contract: backends would
 *             then have to ask after every call.
 *   tickets   An operation that returns PS_PENDING completes later:
 *             env.wake(worker, ticket) fires (on any thread inside the core)
 *             and ps_worker_done turns true; the backend's wait blocks on its
 *             own condition until then, checking ps_worker_done first (a wake
 *             may come before the wait). A pending pull's output buffer must
 *             stay valid until its ticket is done.
 *   the end   When every worker of a node is done, call ps_node_finish(node,
 *             now) once: replicas hand their pending deltas on. The core
 *             cannot see other nodes, so the backend detects quiescence
 *             itself: every node finished and no message in flight anywhere
 *             (sim/: messages sent minus messages handled reaches zero; real/:
 *             rounds of per-node sent and received counts through rank 0
 *             until two rounds agree and balance). Timers would keep a run
 *             alive for ever (replica syncs send on every tick, and once a
 *             sync's round trip outlasts the sync period one is always in
 *             flight): once every node has finished, the backend stops
 *             running them and then drains what is in flight (both
 *             backends). Only then do the values
 *             (ps_node_owned_sum) and counters (ps_node_get_stats) hold the
 *             run's final state.
 *   policy    The policy's ops and JSON go in ps_node_config with the hot
 *             keys (the workload's hottest keys, hottest first, the same list
 *             on every node, wl_hot_keys); its init reads them during
 *             ps_node_new only.
 *   sampling  Sampling schemes (policies/policy.h, ps_sampler) are a layer
 *             over one worker's operations, one per worker, used by that
 *             worker's thread; the core knows nothing of them.
 */
#ifndef PSLAB_MODEL_PS_H
#define PSLAB_MODEL_PS_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===========================================================================
 * Shared: status codes, keys and layouts, messages
 *
 * What every audience below speaks: codes, keys, how the key space is laid
 * out on nodes, and the messages nodes exchange.
 * =========================================================================== */

/* ---------------------------------------------------------------- errors */

/* One list gives codes and texts (as libuv's UV_ERRNO_MAP). */
#define PS_ERRNO_MAP(X)                                                     \
  X(PS_ERR_NOMEM, -1, "out of memory")                                      \
  X(PS_ERR_INVAL, -2, "invalid argument")                                   \
  X(PS_ERR_TRUNCATED, -3, "message truncated")                              \
  X(PS_ERR_OVERSIZED, -4, "message longer than its header says")            \
  X(PS_ERR_MAGIC, -5, "not a pslab message (bad magic)")                    \
  X(PS_ERR_VERSION, -6, "unsupported wire version")                         \
  X(PS_ERR_TYPE, -7, "unknown message type")                                \
  X(PS_ERR_KEY_RANGE, -8, "key outside every table")                        \
  X(PS_ERR_VALUE_LEN, -9, "value length does not match the key's table")   \
  X(PS_ERR_PEER, -10, "message names a node or worker that does not exist") \
  X(PS_ERR_PROTOCOL, -11, "message not valid in the key's current state")   \
  X(PS_ERR_NOT_OWNER, -12, "key is not owned by this node")                 \
  X(PS_ERR_UNKNOWN_POLICY, -13, "unknown policy")                           \
  X(PS_ERR_LIMIT, -14, "too many keys in one operation")                   \
  X(PS_ERR_MALFORMED, -15, "message header inconsistent with its body")      \
  X(PS_ERR_DUPLICATE, -16, "message received before (a duplicate or a replay)") \
  X(PS_ERR_HOPS, -17, "operation forwarded too often (a forwarding loop)")  \
  X(PS_ERR_SEQUENCE, -18, "message out of sequence (one before it never came)") \
  X(PS_ERR_SEAL, -19, "message with a wrong seal (not sent by a node of this run)")

typedef enum {
  PS_OK = 0,
  PS_PENDING = 1, /* not an error: the operation completes later (ticket) */
#define PS_ERRNO_ENUM(name, code, text) name = code,
  PS_ERRNO_MAP(PS_ERRNO_ENUM)
#undef PS_ERRNO_ENUM
} ps_status;

/* Text for a status code; never NULL. */
const char *ps_strerror(int status);
/* For "did you mean" in the messages of every layer that reads named
 * fields: whether `name` is within 2 edits (insertions, deletions,
 * substitutions) of `known`, and then how many in *d; names over 40
 * characters are never near. */
bool ps_near_name(const char *name, const char *known, size_t *d);
/* ------------------------------------------------------------- hashing */

/* A 64-bit mixer (splitmix64's finalizer): hashing keys, deriving seeds. */
static inline uint64_t ps_mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/* One step of splitmix64: a small seeded generator for callers (the core
 * itself draws nothing). */
static inline uint64_t ps_splitmix64(uint64_t *state) {
  return ps_mix64(*state += 0x9e3779b97f4a7c15ULL);
}

/* ------------------------------------------------------- keys and tables */

typedef uint64_t ps_key;
typedef uint64_t ps_ticket;

/* A contiguous key range whose values all have `value_len` floats. */
typedef struct {
  ps_key first;
  uint64_t count;
  uint32_t value_len;
} ps_table;

#define PS_MAX_TABLES 16
#define PS_MAX_OP_KEYS (1u << 24) /* keys in one operation or message */

typedef enum { PS_PARTITION_HASH = 0, PS_PARTITION_RANGE = 1 } ps_partition;

/* The key space and how it is homed on nodes. Copied by value everywhere.
 *
 * Roles (PS-Lite's layout): nodes [0, servers) are servers, which hold keys
 * (homes, owners, replicas); nodes [num_nodes - worker nodes, num_nodes) run
 * workers. A node may be both; every node is at least one. The counts' 0
 * means every node: the co-located layout, where every node is both (the
 * default, and what a zeroed layout says). Keys are homed on servers
 * [0, homes) (0: every server); servers past them hold keys only when a
 * policy moves keys there (servers that join when scaling out). */
typedef struct {
  uint32_t num_tables;
  ps_table tables[PS_MAX_TABLES]; /* sorted by first, disjoint */
  uint32_t num_nodes;
  ps_partition partition;
  uint32_t num_servers;      /* 0: num_nodes */
  uint32_t num_worker_nodes; /* 0: num_nodes */
  uint32_t num_homes;        /* 0: the servers */
} ps_layout;

/* Checks tables are non-empty, sorted, disjoint, and the roles (counts at
 * most num_nodes, homes at most the servers, every node a server or a worker
 * node); PS_OK or PS_ERR_INVAL. */
int ps_layout_check(const ps_layout *l);
/* The roles, counts resolved (0 means every node, or every server). */
uint32_t ps_layout_servers(const ps_layout *l);
uint32_t ps_layout_worker_nodes(const ps_layout *l);
uint32_t ps_layout_homes(const ps_layout *l);
/* Whether node is a server (holds keys) / runs workers. */
bool ps_layout_is_server(const ps_layout *l, uint32_t node);
bool ps_layout_runs_workers(const ps_layout *l, uint32_t node);
/* The first node that runs workers: worker node i is node first + i. */
uint32_t ps_layout_first_worker_node(const ps_layout *l);
/* Total keys over all tables. */
uint64_t ps_layout_num_keys(const ps_layout *l);
/* Value length of key k, or 0 if k is in no table. */
uint32_t ps_layout_value_len(const ps_layout *l, ps_key k);
/* Home node of key k (keeps k's owner in its directory). k must be valid. */
uint32_t ps_layout_home(const ps_layout *l, ps_key k);
/* The i-th key of the key space (0 <= i < num_keys), in table order. */
ps_key ps_layout_key_at(const ps_layout *l, uint64_t i);
/* Counts the keys homed on each home node in one pass over the key space:
 * counts[h] for h < ps_layout_homes(l), which the caller sizes. */
void ps_layout_homed_counts(const ps_layout *l, uint64_t *counts);

/* One step of a run's scaling schedule (cluster.scale): from time at_s on,
 * servers [0, servers) serve; the others hand their keys on and take none.
 * Steps are in time order; before the first, every server serves. */
typedef struct {
  double at_s;
  uint32_t servers;
} ps_scale_step;

/* ------------------------------------------------------------ handles */

typedef struct ps_node ps_node;     /* one node: ps_node_new */
typedef struct ps_worker ps_worker; /* one worker of a node: ps_node_worker */
typedef struct ps_policy_ops ps_policy_ops; /* a policy's hooks ("for policies") */
struct cJSON;

/* ---------------------------------------------------------- wire format */

/* Little-endian fixed header followed by a body:
 *   keys[key_count] (u64), pos[key_count] (u32), values[value_floats] (f32).
 * Every message is sealed: its header's seal field holds a keyed MAC
 * (8 bytes, under the run's secret, ps_node_config.secret; the run's
 * algorithm, ps_node_config.seal: GMAC or SipHash-2-4) of everything after
 * that field: the rest of the header (version, type,
 * flags, sender, destination, number, origin, worker, request, aux, counts)
 * and the whole body. The magic before it is a constant the decoder checks.
 * A receiver checks the seal before anything else and refuses a message
 * whose seal does not match (PS_ERR_SEAL, counted in bad_seals) without
 * touching its channel: without the secret, nobody makes a message a core
 * takes, and a failed try costs the forger that message. A message names
 * its destination (dst) and its number on the (src, dst) channel (seq, from
 * 1, given by the sending core): a receiver takes exactly the next number,
 * so a duplicated or replayed message is refused, and a lost one stops its
 * channel (the run then fails rather than lose a value silently); a copy is
 * no good on another channel or number.
 *
 * Shared messages (env.send_shared: one buffer for several nodes) name
 * PS_DST_ALL as their destination and carry, as seq, their number among the
 * sender's shared messages (from 1, in the order sent): the seal covers that
 * number and the whole buffer as sent, the same for every destination, but
 * not the number the backend gives the message on each channel. A receiver
 * takes a shared message only as the next of its sender's shared messages,
 * so a copy of one (under any channel number) is never applied twice. (A
 * copy handed to a node before the real one, by someone who read the buffer
 * on its way to another node, is taken in its place, once, under the
 * channel number it comes with; if that number was a message's still on
 * its way, the channel then stops: the run fails, and no value is applied
 * twice or made up. CURVE keeps the buffers from being read.)
 *
 * The low byte of flags counts how often the operation was forwarded
 * (hops); its high byte is 0. `pos` is the requester's float offset of each
 * key in its buffer, echoed back in replies. Messages without values have
 * value_floats == 0. */
#define PS_WIRE_MAGIC 0x424c5350u /* "PSLB" */
#define PS_WIRE_VERSION 3
#define PS_WIRE_HEADER_LEN 64
/* Bytes of the run's secret: an AES-256 key for GMAC; SipHash-2-4 uses its
 * first 16. One run uses one of the two algorithms, never both. */
#define PS_SECRET_LEN 32
#define PS_DST_ALL UINT32_MAX  /* the destination of a shared message */
#define PS_MAX_HOPS 64 /* forwards of one operation; more is a loop: dropped */

/* The algorithm of a run's seals (ps_node_config.seal), the same on every
 * node: a message sealed under the other one is refused like a forgery.
 * Both give an 8-byte seal, so neither changes a message's length. */
typedef enum {
  PS_SEAL_SIPHASH = 0, /* SipHash-2-4 (libsodium's crypto_shorthash): any CPU */
  PS_SEAL_GMAC,        /* AES-256-GCM's tag over the message, truncated to 8
                          bytes: faster per byte, needs AES-NI and PCLMUL */
  PS_SEAL_END
} ps_seal;

/* Whether this CPU runs GMAC seals (libsodium's AES-256-GCM: AES-NI and
 * PCLMUL on x86-64). */
bool ps_seal_gmac_available(void);
/* "siphash", "gmac"; "?" when unknown. */
const char *ps_seal_name(ps_seal s);

typedef enum {
  PS_MSG_PULL = 1,      /* origin -> home/owner: read keys */
  PS_MSG_PULL_REPLY,    /* owner -> origin: values */
  PS_MSG_PUSH,          /* origin -> home/owner: add values */
  PS_MSG_SET,           /* origin -> home/owner: overwrite values */
  PS_MSG_WRITE_ACK,     /* owner -> origin: push/set applied */
  PS_MSG_LOCALIZE,      /* requester -> home: move keys to me */
  PS_MSG_HANDOVER,      /* home -> owner: give keys to `aux` */
  PS_MSG_TRANSFER,      /* old owner -> new owner: keys and values */
  PS_MSG_SYNC,          /* replica -> home/owner: deltas in, fresh values back */
  PS_MSG_SYNC_REPLY,    /* owner -> replica: fresh values; request is the
                           owner's time (ns) and aux its clock when sent */
  PS_MSG_DELTA,         /* replica -> every other node: deltas (all-reduce);
                           request and aux: the sender's time (ns) and clock,
                           aux UINT32_MAX in its last (ps_node_finish; with no
                           keys when nothing was left); with no keys and aux
                           UINT32_MAX - 1: a round found nothing */
  PS_MSG_INTENT,        /* node -> home: pos[i] 1 starts, 0 stops its intent on
                           keys[i]; request carries the sender's clock, echoed */
  PS_MSG_INTENT_REPLY,  /* home -> node (START only): pos[i] is the number of
                           nodes intending keys[i] now, the sender included */
  PS_MSG_CLOCK,         /* node -> every node: its clock (request), then, for
                           SPARSE, keys: the hash set of its intents */
  PS_MSG_REFRESH,       /* owner -> caching node (ESSP): fresh values; request
                           is the run's clock they hold every write before */
  PS_MSG_MOVE,          /* policy's node -> destination server: localize these
                           keys yourself (ps_node_move) */
  PS_MSG_POLICY,        /* a node's policy -> another's (ps_node_send_policy):
                           request is the policy's kind; keys and values are
                           the policy's own words and floats, any counts */
  PS_MSG_TYPE_END
} ps_msg_type;

/* A decoded message: header fields, and the body as views into the buffer it
 * was decoded from (unaligned: read them with the accessors below). */
typedef struct {
  uint8_t type;
  uint16_t flags;      /* low byte: hops; high byte: 0 */
  uint32_t src;        /* sender of this hop */
  uint32_t dst;        /* its destination, or PS_DST_ALL (shared) */
  uint32_t origin;     /* node whose worker issued the request */
  uint32_t worker;     /* that worker, on origin */
  uint32_t aux;        /* per type: HANDOVER's new owner */
  uint64_t request;    /* the origin worker's ticket */
  uint32_t key_count;
  uint32_t value_floats;
  uint32_t seq;        /* number on its (src, dst) channel, from 1; of a
                          shared message, among src's shared messages */
  const uint8_t *keys; /* key_count * 8 bytes */
  const uint8_t *pos;  /* key_count * 4 bytes */
  const uint8_t *values; /* value_floats * 4 bytes, or NULL */
} ps_msg;

/* Body length for a message with these counts. */
size_t ps_msg_encoded_len(uint32_t key_count, uint32_t value_floats);
/* Decodes buf[0..len) into *m. Checks magic, version, type, every length and
 * that values are present exactly for types that carry them. Never reads
 * outside buf. Returns PS_OK, PS_ERR_INVAL (buf or m NULL) or
 * PS_ERR_{TRUNCATED,OVERSIZED,MAGIC,VERSION,TYPE,LIMIT,MALFORMED}. *m views
 * buf: keep buf alive while using it. */
int ps_msg_decode(const uint8_t *buf, size_t len, ps_msg *m);
/* Key i of the body (i < key_count). */
ps_key ps_msg_key(const ps_msg *m, uint32_t i);
/* Copies n floats starting at float index `from` of the body's values. */
void ps_msg_values(const ps_msg *m, uint32_t from, float *out, uint32_t n);

/* ===========================================================================
 * Driving a node (backends)
 *
 * What a backend provides (ps_env) and calls, under the contract at the top
 * of this file: it makes a node from a config (run/'s run_node_config fills all
 * but env), hands it every message and its timer, gives its workers' handles
 * to the worker loops, waits on their tickets, ends the node's part of the run
 * and reads its outcome through "Inspection".
 * =========================================================================== */

/* ----------------------------------------------------- backend callbacks */

typedef struct {
  void *ctx;
  /* Takes ownership of buf (malloc'd; free() it). Must not re-enter the core.
   * A node's messages are sent in the order it decided them by whichever of
   * its threads is draining its send queue: not necessarily the thread (or
   * simulated actor) whose call produced the message. No core lock is held. */
  void (*send)(void *ctx, uint32_t dst, uint8_t *buf, size_t len);
  /* A ticket of `worker` on this node completed. May be called from any thread
   * that is inside the core (the receiver, or a worker). */
  void (*wake)(void *ctx, uint32_t worker, ps_ticket ticket);
  /* Optional (NULL: the core sends each destination its own copy through
   * send). One message for several nodes: an all-reduce's DELTA goes to
   * every other node, and at n nodes n - 1 copies of each node's round
   * would be in flight at once. buf (malloc'd, len bytes) goes to dst[i] as
   * number seq[i] of the channel to it, for i in [0, count), each in its
   * place among the node's sends like a send of its own; it is sealed for
   * every destination alike (the wire format says what the seal covers), so
   * each receiver hands it to ps_node_recv_numbered with seq[i].
   * The backend owns buf and frees it with free() once no destination needs
   * it; dst and seq are valid during the call only. Same rules as send. */
  void (*send_shared)(void *ctx, const uint32_t *dst, const uint32_t *seq, size_t count,
                      uint8_t *buf, size_t len);
} ps_env;

/* ------------------------------------------------------ settings, config */

/* The most steps ahead a driver may signal intents: every policy's
 * "lookahead" is at most this, and the worker loop refuses more (a step's
 * keys must live until its intent is acted on, so the step stream keeps
 * lookahead + 2 steps). */
#define PS_MAX_LOOKAHEAD 4000

/* Core-level knobs of a node, which its policy sets from its JSON object
 * (ps_policy_ops.configure) and the backend passes on in
 * ps_node_config.settings; the run layer reads them too. */
typedef struct {
  ps_partition partition;   /* where keys are homed (default hash) */
  bool fast_local_access;   /* local keys read from memory (default true) */
  uint32_t lookahead;       /* steps ahead the driver signals intents (0: off;
                               at most PS_MAX_LOOKAHEAD) */
  uint32_t hot_keys;        /* how many of the workload's hottest keys the
                               policy wants in ps_node_config (0: none) */
  /* The policy keeps replicas synced through their owners (PS_SYNC_OWNER):
   * their reads cannot be bounded in clocks, so bounded consistency refuses
   * it (the run layer says so). */
  bool owner_replicas;
  /* The policy puts keys (owned, or replicas) on the nodes of the workers
   * that use them: meaningful only when those nodes are servers, so the run
   * layer refuses it with worker-only nodes (layout roles). */
  bool keys_at_workers;
  /* Route hints: a worker sends its operations on a key its node does not
   * hold to the server that answered its last one on the key, not to the
   * key's home (model/route_hints.c says why the order of its operations holds).
   * For policies that move keys between servers (psld): the home, and its
   * forwarding, leave the path. Workers of worker-only nodes only (layout
   * roles; a server's own state is a route of its own). Off: every such
   * operation passes the home. */
  bool route_hints;
  /* Keys every node replicates from the start, at most (0: none;
   * PS_ALL_KEYS: every key): for the run's memory estimate. */
  uint64_t replicas_per_node;
} ps_policy_settings;
#define PS_ALL_KEYS UINT64_MAX

void ps_policy_settings_default(ps_policy_settings *s);

/* ------------------------------------------------------------------ node */

typedef struct {
  uint32_t id;              /* this node, 0 <= id < layout.num_nodes */
  uint32_t workers;         /* worker handles on this node: >= 1 on a node
                               that runs workers (layout roles), 0 on one
                               that does not */
  ps_layout layout;
  ps_env env;
  const ps_policy_ops *policy; /* NULL: no hooks (static behaviour) */
  const struct cJSON *policy_json;
  ps_policy_settings settings;
  uint32_t stripes;         /* lock stripes, power of two (default 64) */
  const ps_key *hot_keys;   /* the workload's hottest keys, hottest first */
  size_t num_hot_keys;      /* (settings.hot_keys of them, or fewer) */
  /* Nodes tell each other their clocks (see "clocks, consistency"): needed
   * by bounded consistency and ps_clock_wait; off, clocks stay local and no
   * CLOCK message is ever sent. */
  bool clock_service;
  /* The clocks workers jump to with ps_set_clock (a run's stage ends),
   * ascending (copied; none: workers only advance). A node refuses a CLOCK
   * that says a clock further ahead of its own than its workers' consistency
   * lets another node get (see "clocks, consistency"), unless it is the
   * first of these after its own clock (or PS_CLOCK_DONE). */
  const int64_t *clock_marks;
  size_t num_clock_marks;
  /* Scaling servers in and out (ps_scale_step; copied; none: every server
   * serves throughout): steps in time order, each serving count within
   * [homes, servers] of the layout. A step due at or before 0 applies from
   * the start; the others when ps_node_on_timer reaches them (a timer). A
   * server that stops serving hands every key it holds to the key's home
   * (moves); one that serves again holds keys only when moved there. */
  const ps_scale_step *scale;
  size_t num_scale;
  /* The key of every message's seal (see the wire format): the same for
   * every node of a run, random per run, and known to nobody outside it.
   * The backend makes it and hands it to every node (the core reads no
   * randomness); all zeros (the default) is no secret: ps_node_new refuses
   * it on a layout of several nodes. */
  uint8_t secret[PS_SECRET_LEN];
  /* The algorithm of the seals (default SipHash): the same for every node
   * of a run, chosen by the backend (run_seal_choose); ps_node_new refuses
   * GMAC on a CPU without it. It changes no simulated figure: both seals
   * are 8 bytes. */
  ps_seal seal;
} ps_node_config;

/* Fills defaults: 1 worker, 64 stripes, no policy, default settings. */
void ps_node_config_default(ps_node_config *c);

/* Creates a node; the config is copied (policy_json and hot_keys are only
 * read by the policy's init, during this call). NULL on bad config (among
 * them no secret with several nodes, or a seal this CPU cannot make) or no
 * memory. */
ps_node *ps_node_new(const ps_node_config *c);
void ps_node_free(ps_node *node);

/* Handles one message from node src. buf stays the caller's. Returns PS_OK,
 * or the message's error (it is then dropped and counted in bad_messages):
 * what ps_msg_decode refuses (PS_ERR_TRUNCATED, OVERSIZED, MAGIC, VERSION,
 * TYPE, LIMIT, MALFORMED); PS_ERR_PEER (a sender, origin or worker that does
 * not fit, or a destination other than this node), PS_ERR_SEAL (checked
 * first: nothing is taken), PS_ERR_DUPLICATE or PS_ERR_SEQUENCE (its
 * number), PS_ERR_KEY_RANGE or PS_ERR_VALUE_LEN (its keys), PS_ERR_PROTOCOL (not
 * valid in the key's state, or a policy message its policy cannot take),
 * PS_ERR_HOPS (an operation forwarded too often), PS_ERR_INVAL (a set on a
 * key kept by all-reduce: see ps_node_add_initial_replicas) or
 * PS_ERR_NOMEM. */
int ps_node_recv(ps_node *node, uint32_t src, const uint8_t *buf, size_t len,
                 double now);
/* The same for a message the sender handed to env.send_shared: seq is its
 * number on src's channel (what send_shared gave for this destination); its
 * destination is PS_DST_ALL (else PS_ERR_PEER) and its encoded number must
 * be the next of src's shared messages (else PS_ERR_DUPLICATE or
 * PS_ERR_SEQUENCE, the channel untouched). The codes of ps_node_recv. */
int ps_node_recv_numbered(ps_node *node, uint32_t src, uint32_t seq, const uint8_t *buf,
                          size_t len, double now);
/* From now on (on) or no longer, count the key accesses that find their key
 * last touched by another thread of this node (ps_node_stats.shared_*: the
 * node's workers, and the thread that handles messages,
 * ps_node_set_reader). Counting writes each accessed key's entry, so a
 * real run leaves it off (the default): it is for the simulator, which
 * charges such an access the cost of the key's cache lines coming from
 * another core, and for pslab calibrate, which measures that cost. */
/* PS_OK, or PS_ERR_INVAL (nothing counted) on a node of 65,534 workers or
 * more, whose threads the count cannot name. */
int ps_node_count_shared(ps_node *node, bool on);
/* Who handles the messages and timers that follow, for counting shared
 * accesses (ps_node_count_shared): worker `thread` of this node (a worker that
 * waits for a reply and reads the node's messages meanwhile), or, for any
 * number >= its workers, a thread of the node's own (the default). One
 * reader at a time: the simulator sets it as it chooses who reads. */
void ps_node_set_reader(ps_node *node, uint32_t thread);
/* The shared accesses counted so far: ps_node_stats' shared_* fields,
 * without the rest of the stats (for a caller that asks after every
 * message). */
typedef struct {
  uint64_t accesses, floats;         /* by the node's workers */
  uint64_t handled, handled_floats;  /* by the thread handling messages */
} ps_shared_counts;
void ps_node_shared_counts(const ps_node *node, ps_shared_counts *out);

/* Earliest time periodic work is due (INFINITY: none). It moves only in
 * ps_node_on_timer (see "timers" above); the timer owner's thread. */
double ps_node_next_timer(const ps_node *node);
/* Runs the periodic work due at `now` (nothing when none is due); the timer
 * owner's thread. Ask ps_node_next_timer afterwards. */
void ps_node_on_timer(ps_node *node, double now);

/* Call when every worker of this node is done: replicas hand on their pending
 * deltas (to the owner as pushes; with all-reduce, mirrored owned keys to
 * every node), so that once messages quiesce the owners' values hold every
 * push; with all-reduce and nothing left to send after a round that sent, an
 * empty last DELTA says this node is done (replica staleness). Replicas
 * stay. */
void ps_node_finish(ps_node *node, double now);

/* ----------------------------------------------------- workers, tickets */

/* Worker handle i (0 <= i < config.workers), owned by the node. A handle is
 * used by one thread at a time. */
ps_worker *ps_node_worker(ps_node *node, uint32_t i);
/* Whether ticket t of this worker has completed (see "tickets" above).
 * Thread-safe. */
bool ps_worker_done(ps_worker *w, ps_ticket t);
/* Tickets of this worker not yet completed. Thread-safe. */
size_t ps_worker_pending(ps_worker *w);

/* What a pending ticket waits for, for a backend's error messages: `op` is
 * "PULL" or "PUSH" for an operation that waits for replies about keys, with
 * `key` the first key no reply has come for yet and `home` that key's home
 * node (where its request went, unless route hints sent it to the owner
 * directly); "WAIT" for a wait on clocks or on reads, with has_key false. */
typedef struct {
  const char *op; /* a static string */
  bool has_key;
  ps_key key;
  uint32_t home;
} ps_ticket_info;
/* Fills *out for ticket t of w, a snapshot. Thread-safe. PS_OK, or
 * PS_ERR_INVAL when t is not pending (completed, or never issued). */
int ps_worker_ticket_info(ps_worker *w, ps_ticket t, ps_ticket_info *out);

/* --------------------------------------------------------- load reports */

/* The backend reports one message handled: it took busy_s (the backend's
 * time: simulated, or wall), and `waiting` more messages for this node were
 * waiting behind it, as far as the backend can tell. Any thread. */
void ps_node_note_handling(ps_node *node, double busy_s, uint32_t waiting);
/* The backend reports that the thread handling this node's messages had
 * found nothing waiting and slept, and woke for a message (once per wake-up,
 * however many messages it then finds): handled / wakeups is the messages
 * handled per wake-up. Any thread. */
void ps_node_note_wakeup(ps_node *node);

/* ===========================================================================
 * Worker operations
 *
 * What a worker's loop (workloads/' driver) calls on its handle: reads and
 * writes, moves, intents, clocks and consistency. A handle is used by one
 * thread at a time; a pending operation completes through its ticket
 * (ps_worker_done, env.wake).
 * =========================================================================== */

/* The node of a handle, and its index there (0 <= index < config.workers). */
ps_node *ps_worker_node(ps_worker *w);
uint32_t ps_worker_index(const ps_worker *w);

/* -------------------------------------------------------- reads, writes
 *
 * All operations: keys[n] (n <= PS_MAX_OP_KEYS, valid keys, duplicates
 * allowed), `now` for timers. Return PS_OK when complete on return,
 * PS_PENDING with *ticket set when parts travel, or a negative ps_status:
 * PS_ERR_LIMIT (more than PS_MAX_OP_KEYS keys, or values), PS_ERR_INVAL (keys
 * NULL with n > 0, and per operation below), PS_ERR_KEY_RANGE (a key in no
 * table; then nothing was done) or PS_ERR_NOMEM.
 * keys (and vals) are read during the call only; the core never keeps them.
 * Operations of one worker on one key take effect in issue order, and a
 * worker reads its own writes, also while the key moves.
 * Cost: a pull, push or set (ps_set, model/testing.h) whose keys are all
 * served from this node's memory (owned here, a replica, or under a bounded
 * model a cached copy fresh enough) takes one lock per key: no ticket, no node-wide lock (but
 * ESSP's list of written keys on their owner), and once the values exist
 * no allocation; *ticket is then left untouched. */

/* Reads values into out (keys' value lengths, concatenated in key order,
 * out_len floats at least). out must stay valid until the ticket completes.
 * PS_OK, PS_PENDING, PS_ERR_LIMIT, PS_ERR_INVAL (out_len too short, out or
 * ticket NULL), PS_ERR_KEY_RANGE or PS_ERR_NOMEM. */
int ps_pull(ps_worker *w, const ps_key *keys, size_t n, float *out,
            size_t out_len, ps_ticket *ticket, double now);
/* Adds vals (concatenated as for pull) to the keys. vals is copied. PS_OK,
 * PS_PENDING, PS_ERR_LIMIT, PS_ERR_INVAL (vals_len short of the keys' total
 * length, vals or ticket NULL), PS_ERR_VALUE_LEN (vals_len over it),
 * PS_ERR_KEY_RANGE or PS_ERR_NOMEM. */
int ps_push(ps_worker *w, const ps_key *keys, size_t n, const float *vals,
            size_t vals_len, ps_ticket *ticket, double now);
/* Moves ownership of the keys to this node (Lapse). ticket may be NULL: then
 * nobody is told when they arrive. A replica kept by all-reduce stays a
 * replica (such keys never move); one synced through the owner is dropped
 * and its key moves here. PS_OK, PS_PENDING, PS_ERR_LIMIT, PS_ERR_INVAL (on
 * a node that is not a server, layout roles: it holds no keys; so for every
 * replica call), PS_ERR_KEY_RANGE or PS_ERR_NOMEM. */
int ps_localize(ps_worker *w, const ps_key *keys, size_t n, ps_ticket *ticket,
                double now);
/* Signals that this worker will use keys in clocks [clock_start, clock_end);
 * the policy decides what that means. Never pending. PS_OK, PS_ERR_LIMIT,
 * PS_ERR_INVAL (clock_end < clock_start, or keys NULL with n > 0) or
 * PS_ERR_KEY_RANGE. */
int ps_intent(ps_worker *w, const ps_key *keys, size_t n, int64_t clock_start,
              int64_t clock_end, double now);
/* Moves the worker's clock on by one, a step taken at now; returns the new
 * clock. The staleness of its replica reads is counted in these steps (the
 * ones it took since what it read was complete; ps_set_clock's jumps are no
 * steps). With the clock service (ps_node_config.clock_service), a worker
 * under a bounded model must have no write outstanding when it calls this
 * (the driver waits for its push): a node tells the others its clock only
 * once every write of the clocks before is applied. */
int64_t ps_advance_clock(ps_worker *w, double now);
int64_t ps_worker_clock(const ps_worker *w);

/* -------------------------------------------------- clocks, consistency
 *
 * The clock service (ps_node_config.clock_service): when the smallest clock
 * of a node's workers moves on, the node first hands its replicas' deltas
 * on (all-reduce) and then tells every other node (a CLOCK message; FIFO
 * channels put it behind those deltas). So every node knows each node's
 * clock, and the run's: the smallest of them (ps_node_min_clock). When a
 * node says clock m, every write its workers issued in clocks < m has been
 * applied where it belongs.
 *
 * Consistency (per worker, ps_worker_set_consistency): ASYNC reads what the
 * owner holds. SSP with staleness s (BSP: s = 0): a worker at clock c
 * waits (ps_clock_wait(c - s)) until every worker of the run has ended
 * clock c - s - 1, so any value it then reads holds every write of clocks
 * <= c - s - 1; and a key that is neither owned here nor replicated is read
 * from the node's cache when the cached value holds every write of clocks
 * <= c - s - 1 (its stamp, the run's clock when it was fetched, is >= c - s),
 * and fetched from the owner otherwise (which fills the cache). The node's
 * own pushes go into its cached values too (a worker reads its writes).
 * ESSP: as SSP, and an owner sends the fresh values of the keys a node
 * caches to it whenever the run's clock moves on (Petuum's eager push), so
 * reads seldom fetch. SPARSE (FlexPS's SparseSSP): as SSP, but a worker
 * also goes on past the bound when none of the keys of its step can be
 * written by the nodes that hold it back; a node tells, with each CLOCK,
 * the keys its workers said (ps_intent) they will use in the next
 * `lookahead` clocks, as a hash set: a worker under SPARSE must signal its
 * intents (lookahead >= 1).
 *
 * What a CLOCK may say. The gates above let a worker get at most
 * `staleness + 1` clocks (SPARSE: `staleness + lookahead + 1`) past the
 * clock every other node has said, and a stage's barrier only as far as the
 * stage's end (ps_node_config.clock_marks). A node therefore refuses a CLOCK
 * (PS_ERR_PROTOCOL, counted in bad_messages, nothing changed) that says a
 * clock beyond both its own said clock plus that lead (its workers'
 * largest; no bound while one of them is ASYNC, or once it said
 * PS_CLOCK_DONE) and the first mark after its own clock. PS_CLOCK_DONE
 * itself is always taken: a node may leave at any clock. (A worker under a
 * bounded model that ends clocks without waiting at its gate gets further:
 * its node's CLOCKs are then refused until the others catch up.) */
#define PS_CLOCK_DONE INT64_MAX /* a worker that has left: it holds nobody back */

typedef enum {
  PS_CONSISTENCY_ASYNC = 0,
  PS_CONSISTENCY_SSP = 1,
  PS_CONSISTENCY_ESSP = 2,
  PS_CONSISTENCY_SPARSE = 3,
} ps_consistency_model;

typedef struct {
  ps_consistency_model model;
  uint32_t staleness; /* s: clocks a worker may run ahead (SSP, ESSP, SPARSE) */
  uint32_t lookahead; /* SPARSE: clocks ahead the worker signals its intents
                         (its driver's lookahead); a node's CLOCK m covers
                         the writes its workers intend before m + lookahead */
} ps_consistency;

/* Name of a model ("async", "ssp", "essp", "sparse"), "?" when unknown. */
const char *ps_consistency_name(ps_consistency_model m);
/* Sets the consistency of w's later operations. PS_OK, PS_ERR_INVAL (an
 * unknown model, a bounded model on a node without the clock service, or
 * SPARSE with a lookahead of 0 or over PS_MAX_LOOKAHEAD) or PS_ERR_NOMEM. */
int ps_worker_set_consistency(ps_worker *w, ps_consistency c);
/* Moves w's clock forward to `clock` (>= its clock; PS_CLOCK_DONE: the
 * worker leaves the run's clock for good), as ps_advance_clock does one
 * step. PS_OK, PS_ERR_INVAL (backwards) or PS_ERR_NOMEM (telling the
 * others, with the clock service). */
int ps_set_clock(ps_worker *w, int64_t clock, double now);
/* Whether every worker of the run has reached `clock` (the run's clock >=
 * clock): PS_OK; or PS_PENDING with *ticket, completed when it has. With
 * SPARSE consistency, keys[n] are the keys of the worker's next step, and
 * it may also go on when no node that holds it back intends to use them
 * before `clock` (keys may be NULL: then only the clock counts). PS_ERR_INVAL
 * without the clock service, with ticket NULL, with keys NULL and n > 0, or
 * while a wait of w is pending; PS_ERR_NOMEM. */
int ps_clock_wait(ps_worker *w, int64_t clock, const ps_key *keys, size_t n,
                  ps_ticket *ticket, double now);
/* The run's clock as this node knows it: the smallest clock any node has
 * said (PS_CLOCK_DONE once all have left). Without the clock service: the
 * highest clock of this node's workers. */
int64_t ps_node_min_clock(ps_node *node);
/* BSP's second barrier: w says it has done every read of its clock c
 * (ps_end_reads), and ps_reads_wait completes once every worker of the run
 * has (PS_OK, or PS_PENDING with *ticket). A worker that waits for it
 * before writing makes every read of clock c see exactly the writes of
 * clocks < c: each clock a snapshot, as a sequential run of the clocks'
 * steps on the same values would read. ps_end_reads: PS_OK, PS_ERR_INVAL
 * without the clock service (or for a worker that has left) or PS_ERR_NOMEM;
 * ps_reads_wait: PS_OK, PS_PENDING, PS_ERR_INVAL (without the clock service,
 * ticket NULL, or a wait pending) or PS_ERR_NOMEM. */
int ps_end_reads(ps_worker *w, double now);
int ps_reads_wait(ps_worker *w, ps_ticket *ticket, double now);

/* Where key k is, seen from w's node: served from local memory (owned, or a
 * replica), on its way here, or elsewhere. A snapshot: it may change at any
 * time. Returns a ps_key_locality, or PS_ERR_KEY_RANGE for a key in no
 * table. */
typedef enum {
  PS_KEY_REMOTE = 0,
  PS_KEY_LOCAL = 1,
  PS_KEY_ARRIVING = 2,
  PS_KEY_REPLICA = 3, /* ps_node_key_locality only */
} ps_key_locality;
int ps_worker_key_locality(ps_worker *w, ps_key k);

/* ===========================================================================
 * For policies
 *
 * A policy (policies/) is a table of hooks the core calls at its decision
 * points, with the JSON it was given; its hooks act through the node-level
 * mechanisms below (and, from on_intent, the worker operations).
 * =========================================================================== */

/* A management policy: a table of hooks the core calls at its decision points.
 * One instance (state) per node. Every hook but name and init may be NULL. */
struct ps_policy_ops {
  const char *name;
  /* Parses the policy's JSON object (may be NULL: defaults) into *settings and
   * checks it. On error returns PS_ERR_INVAL with a message in err naming the
   * field, what was expected and what was found; PS_OK otherwise. */
  int (*configure)(const struct cJSON *json, ps_policy_settings *settings,
                   char *err, size_t errlen);
  /* Creates this node's instance; *state is passed to every later hook.
   * PS_OK, or an error (PS_ERR_NOMEM, or what a mechanism it called
   * returned): ps_node_new then fails. */
  int (*init)(ps_node *node, const struct cJSON *json, void **state);
  /* A worker said it will use keys in clocks [clock_start, clock_end). */
  void (*on_intent)(void *state, ps_worker *w, const ps_key *keys, size_t n,
                    int64_t clock_start, int64_t clock_end, double now);
  /* Periodic work; returns the next time it wants to run (INFINITY: none). */
  double (*on_timer)(void *state, double now);
  /* A worker of this node finished a step: ps_advance_clock moved its clock
   * to `clock`. Runs on the worker's thread with no core lock held: it may
   * call the ps_node_* mechanisms below (sync rounds counted in steps). */
  void (*on_step)(void *state, ps_worker *w, int64_t clock, double now);
  /* The homes answered this node's ps_node_announce_intent(start): counts[i]
   * nodes, this one included, intend keys[i] now; this node announced them
   * at sent_at (its own clock). Runs on the receiving thread with no core
   * lock held: it may call the ps_node_* mechanisms below. */
  void (*on_intenders)(void *state, const ps_key *keys, const uint32_t *counts, size_t n,
                       double sent_at, double now);
  /* Another node's instance of this policy sent this one a message
   * (ps_node_send_policy): its kind, its words (ps_msg_key(m, i), i <
   * m->key_count) and floats (ps_msg_values, m->value_floats of them). Runs
   * on the receiving thread with no core lock held, as on_intenders. A node
   * whose policy has no such hook refuses the message (PS_ERR_PROTOCOL).
   * Returns PS_OK, or an error for a message it refuses (counted in
   * bad_messages). */
  int (*on_message)(void *state, uint32_t src, uint64_t kind, const ps_msg *m, double now);
  void (*free)(void *state);
};

/* During a policy's init: the config's hot keys (*n of them); NULL after. */
const ps_key *ps_node_hot_keys(const ps_node *node, size_t *n);
/* The node's id and layout, as its config gave them. */
uint32_t ps_node_id(const ps_node *node);
const ps_layout *ps_node_layout(const ps_node *node);

/* Servers serving now, as this node knows: servers [0, this) (the scaling
 * schedule's, each step applied by ps_node_on_timer). Any thread. */
uint32_t ps_node_serving(const ps_node *node);

/* ------------------------------------------------------------- replicas */

/* How replica deltas reach the other copies in a sync round. */
typedef enum {
  PS_SYNC_OWNER = 0,     /* delta to the owner, fresh value back (any placement) */
  PS_SYNC_ALLREDUCE = 1, /* delta to every other node; for keys that do not
                            move and are replicated on every node but the owner */
} ps_sync_mode;

/* Makes this node hold replicas of keys[n] from the start: their values are
 * zero, as every value is before the first operation, so no message is
 * needed. Call before any operation (a policy's init). Keys this node owns
 * stay owned (with all-reduce, their pushes are then also sent to the
 * replicas; a `set` on such keys is refused with PS_ERR_INVAL, since
 * all-reduce merges additive updates only). PS_OK, PS_ERR_INVAL (on a node
 * that is not a server), PS_ERR_KEY_RANGE or PS_ERR_NOMEM. */
int ps_node_add_initial_replicas(ps_node *node, const ps_key *keys, size_t n,
                                 ps_sync_mode mode);
/* One sync round: every replica on this node sends its accumulated delta
 * (skipping, in all-reduce, deltas whose L2 norm is below threshold; they
 * keep accumulating), and with PS_SYNC_OWNER asks for the fresh value. A
 * replica whose previous SYNC is still unanswered waits for the next round.
 * Returns the number of replica keys synced. */
uint64_t ps_node_sync_replicas(ps_node *node, ps_sync_mode mode, double threshold,
                               double now);

/* ---------------------------------------------------------- mechanisms */

/* Node-level forms of the worker operations, for a policy's hooks (on a
 * timer, or on a reply, where no worker handle is at hand). Any thread; never
 * pending; nobody is told when they complete. Keys must be valid. Each
 * returns PS_OK, PS_ERR_LIMIT (more than PS_MAX_OP_KEYS keys), PS_ERR_INVAL
 * (keys NULL with n > 0, and as said below), PS_ERR_KEY_RANGE (a key in no
 * table; then nothing was done) or PS_ERR_NOMEM. */

/* As ps_localize without a ticket (PS_ERR_INVAL on a node that is not a
 * server). */
int ps_node_localize(ps_node *node, const ps_key *keys, size_t n, double now);
/* Creates replicas of keys[n] on this node at run time (keys owned here or
 * already replicated are left alone); their value arrives from the owner,
 * and operations on them wait for it. PS_ERR_INVAL on a node that is not a
 * server. */
int ps_node_replicate(ps_node *node, const ps_key *keys, size_t n, double now);
/* Drops this node's replicas of keys[n]; their unsent deltas go to the
 * owner as pushes. A replica whose value has not arrived yet is dropped when
 * it arrives (after the operations waiting for it); replicating it before
 * then keeps it. Keys without a replica here are left alone. */
int ps_node_drop_replicas(ps_node *node, const ps_key *keys, size_t n, double now);
/* Tells the keys' homes that this node starts intending to use start[n_start]
 * and stops intending to use stop[n_stop] (one message per home for both). A
 * home counts the nodes that started and have not stopped, and answers a
 * start with that count (policy hook on_intenders). A node must alternate
 * start and stop per key, starting first: the home keeps each node's open
 * intents apart, and refuses (bad_messages) a stop of a node with none open
 * on the key. The codes above. */
int ps_node_announce_intent(ps_node *node, const ps_key *start, size_t n_start,
                            const ps_key *stop, size_t n_stop, double now);
/* Moves keys[n] to server dest on a policy's decision (PSLD), not only to
 * a requester: dest localizes them itself (a MOVE message asks it; none when
 * dest is this node), through the home as ps_localize does, so every
 * TRANSFER is asked for by its receiver and the guarantees are localize's:
 * no update lost or doubled, operations on a key in transfer queue and apply
 * in order on arrival. At most four messages (MOVE, LOCALIZE, HANDOVER,
 * TRANSFER). Any thread; never pending; nobody is told when the keys arrive
 * (the home's directory says where they are going). Keys dest owns or is
 * receiving already are left alone; as with concurrent localizes, the key
 * ends at the last destination its home saw.
 * PS_OK, PS_ERR_INVAL (dest is not a server, or no longer serves: scaling),
 * PS_ERR_KEY_RANGE, PS_ERR_LIMIT or PS_ERR_NOMEM. */
int ps_node_move(ps_node *node, const ps_key *keys, size_t n, uint32_t dest, double now);
/* Sends node dst's instance of this node's policy a message (its hook
 * on_message): a kind of the policy's own, words[n_words] and
 * floats[n_floats] (copied; at most PS_MAX_OP_KEYS of each). dst may be this
 * node (the message still travels). Policy-to-policy messages travel in
 * order with the rest on the pair's channel. Any thread; PS_OK,
 * PS_ERR_INVAL (dst not a node, or words or floats NULL with a count),
 * PS_ERR_LIMIT or PS_ERR_NOMEM. */
int ps_node_send_policy(ps_node *node, uint32_t dst, uint64_t kind, const uint64_t *words,
                        size_t n_words, const float *floats, size_t n_floats, double now);
/* As ps_worker_key_locality, for the node; PS_KEY_REPLICA tells a replica
 * (which ps_worker_key_locality reports as PS_KEY_LOCAL). A ps_key_locality,
 * or PS_ERR_KEY_RANGE. */
int ps_node_key_locality(ps_node *node, ps_key k);

/* ===========================================================================
 * Inspection (read-only)
 *
 * Counters, load and the values a quiet run ends with, for the run's reports
 * (run/) and a policy that weighs load (psld). Any thread; nothing here
 * changes a node.
 * =========================================================================== */

/* ------------------------------------------------------------- counters */

#define PS_STALENESS_BUCKETS 48
#define PS_CLOCK_BUCKETS 17 /* staleness or gaps of 0..15 clocks, and 16 or more */

/* Counters of one node since creation. */
typedef struct {
  uint64_t local_accesses;   /* key accesses served from this node's memory */
  uint64_t remote_accesses;  /* key accesses that needed a message */
  /* While counted (ps_node_count_shared): key accesses that found their key last touched by
   * another thread of the node, and the value floats of those keys, made
   * by the node's workers' calls and by the thread handling messages. */
  uint64_t shared_accesses, shared_floats;
  uint64_t shared_handled, shared_handled_floats;
  uint64_t messages_sent;
  uint64_t bytes_sent;
  uint64_t messages_received;
  uint64_t forwards;         /* keys passed on by a home or former owner */
  uint64_t relocations;      /* keys that arrived here by TRANSFER */
  uint64_t queued;           /* operations queued on a key in transfer */
  uint64_t bad_messages;     /* dropped: failed to decode or validate */
  uint64_t duplicates;       /* ... of them: numbered as one received before */
  uint64_t out_of_sequence;  /* ... numbered past the next one: refused (one was lost,
                                or it is forged), and so is the rest of the channel */
  uint64_t hop_drops;        /* operations dropped after PS_MAX_HOPS forwards */
  uint64_t bad_seals;        /* ... of them: refused for their seal (not made
                                with this run's secret) */
  uint64_t replica_syncs;    /* replica keys sent in sync rounds (SYNC, DELTA) */
  uint64_t sync_rounds;      /* ps_node_sync_replicas calls: the policy's rounds */
  /* Staleness of reads served by replicas: the age of what the copy has
   * not seen, from when the newest delta from another node it applied was
   * made (replica.c), in seconds and in the reading worker's steps past the
   * writer's clock then. hist[i] counts reads aged in [2^(i-1), 2^i)
   * microseconds (hist[0]: < 1); steps_hist[i] in [2^(i-1), 2^i) steps
   * (steps_hist[0]: 0 steps). */
  uint64_t replica_reads;
  double staleness_sum_s, staleness_max_s;
  uint64_t staleness_sum_steps, staleness_max_steps;
  uint64_t staleness_hist[PS_STALENESS_BUCKETS];
  uint64_t staleness_steps_hist[PS_STALENESS_BUCKETS];
  /* Bounded consistency: reads of keys neither owned here nor replicated
   * that the cache served (cache_reads) or that were fetched because the
   * cache had none fresh enough (cache_misses); and for every read served
   * from a copy (cache or replica) under a bounded model, its staleness in
   * clocks: the reader's clock minus the clock the copy holds every write
   * before (hist[i]: i clocks; the last bucket: that many or more). */
  uint64_t cache_reads, cache_misses;
  uint64_t bounded_reads, bounded_staleness_sum, bounded_staleness_max;
  uint64_t bounded_staleness_hist[PS_CLOCK_BUCKETS];
  uint64_t clock_messages;  /* CLOCK messages sent */
  uint64_t refreshes;       /* keys sent in REFRESH messages (ESSP) */
} ps_node_stats;

/* The q-quantile (0..1) of read ages in seconds, from a histogram as above
 * (upper bucket bounds; 0 when empty). */
double ps_staleness_quantile(const uint64_t hist[PS_STALENESS_BUCKETS], double q);
/* The same of read staleness in steps (the bucket's largest count). */
double ps_staleness_steps_quantile(const uint64_t hist[PS_STALENESS_BUCKETS], double q);

/* Copies the node's counters into *out. */
void ps_node_get_stats(const ps_node *node, ps_node_stats *out);
/* Adds s into sum, field by field (maxima as maxima): a cluster's totals. */
void ps_node_stats_add(ps_node_stats *sum, const ps_node_stats *s);

/* ------------------------------------------------------- server load
 *
 * What a node sees of servers' load: as a server, what it served (counted
 * by the core) and how long handling took and how many messages waited
 * (as its backend reports them: ps_node_note_handling); as a client, the response times of its
 * requests by the server that answered them. A policy (psld) reads them;
 * the run layer reports them per server. */

/* Response times in buckets of half an octave: hist[0] counts replies
 * faster than 1 us, hist[i] those in [2^((i-1)/2), 2^(i/2)) us, the last
 * one everything slower. */
#define PS_RT_BUCKETS 64
/* Buckets of keys served over time: at most this many, each bucket_s wide
 * (1 ms at first, doubled, pairs merged, when a run outgrows them). */
#define PS_SERIES_MAX 256
#define PS_SERIES_FIRST_BUCKET_S 1e-3
/* Messages waiting behind a handled one: hist[i] counts i waiting for
 * i < PS_QUEUE_EXACT, hist[PS_QUEUE_EXACT + k] counts from
 * PS_QUEUE_EXACT 2^k to PS_QUEUE_EXACT 2^(k+1) - 1 (every uint32_t fits). */
#define PS_QUEUE_EXACT 16
#define PS_QUEUE_BUCKETS (PS_QUEUE_EXACT + 28)

typedef struct {
  uint64_t keys;      /* key operations served here for requests that came in
                         messages (applied by the owner; local workers' direct
                         accesses are local_accesses) */
  uint64_t floats;    /* their floats */
  uint64_t handled;   /* messages the backend reported handling ... */
  double busy_s;      /* ... the time it reported they took, */
  uint64_t queue_sum; /* ... the messages it saw waiting behind each, summed, */
  uint64_t queue_max; /* ... and the most, */
  uint64_t queue_hist[PS_QUEUE_BUCKETS]; /* ... and how often each count (above) */
  uint64_t wakeups;   /* times its handling thread slept and woke (ps_node_note_wakeup) */
} ps_server_load;

typedef struct {
  uint64_t count;     /* replies (PULL_REPLY, WRITE_ACK) */
  uint64_t keys;      /* keys they answered */
  double sum_s, max_s;
  uint64_t hist[PS_RT_BUCKETS];
} ps_rt_stats;

/* This node's load as a server since it was created. */
void ps_node_server_load(ps_node *node, ps_server_load *out);
/* Keys served over time: out[i] (i < the return value, at most cap and
 * PS_SERIES_MAX) counts the keys served in [i, i + 1) * *bucket_s. */
size_t ps_node_served_series(ps_node *node, uint64_t *out, size_t cap, double *bucket_s);
/* Response times of this node's requests that `server` answered (request
 * sent -> reply handled, at this node's clock). PS_OK, or PS_ERR_INVAL when
 * server is not a node (*out zeroed when it answered none). */
int ps_node_response_times(ps_node *node, uint32_t server, ps_rt_stats *out);
/* Adds s into sum (maxima as maxima). */
void ps_rt_stats_add(ps_rt_stats *sum, const ps_rt_stats *s);
/* The q-quantile (0..1) of response times in seconds from hist (a bucket's
 * upper bound; 0 when empty). */
double ps_rt_quantile(const uint64_t hist[PS_RT_BUCKETS], double q);
/* The q-quantile (0..1) of messages waiting, from a queue histogram as
 * above: the count itself below PS_QUEUE_EXACT, else the largest count of
 * its bucket (0 when empty). */
double ps_queue_quantile(const uint64_t hist[PS_QUEUE_BUCKETS], double q);

/* --------------------------------------------------------------- values */

/* Sums every float of every value this node owns (keys never written count
 * as zero) in one pass over its store; *in_transfer counts keys still on
 * their way here. For conservation checks once a run is quiet. */
void ps_node_owned_sum(ps_node *node, double *sum, uint64_t *in_transfer);
/* Calls fn for every key this node owns that holds a value, with the value
 * as stored (initial values are the workload's, never stored); a key it
 * owns without one (never written) holds zeros. In one pass over its store,
 * under each stripe's lock (fn must not call into the node). Once a run is
 * quiet the owners' values are the trained parameters. */
void ps_node_owned_each(ps_node *node,
                        void (*fn)(void *ctx, ps_key k, const float *value, uint32_t len),
                        void *ctx);
/* Keys this node owns (a home's keys it never gave away count, though they
 * have no entry), in one pass over its store; homed: the keys homed on each
 * home of the node's layout (ps_layout_homed_counts), which a caller holding
 * many nodes of one layout counts once for all. Once a run is quiet, the
 * servers' counts sum to the layout's keys exactly when every key is on
 * exactly one server. */
uint64_t ps_node_owned_keys(ps_node *node, const uint64_t *homed);

/* Visits every key in this node's replica list once a run is quiet: its
 * replicas (owned false) and, with all-reduce, the owned keys it mirrors to
 * replicas elsewhere (owned true), with the value (NULL: never written, all
 * zeros) and its length. fn runs under the key's lock and must not call
 * into the core. For the replica check (run/): with all-reduce every
 * replica must then equal its owner's value, up to float rounding. */
typedef void (*ps_copy_fn)(void *ctx, ps_key k, const float *value, uint32_t len, bool owned);
void ps_node_each_replicated(ps_node *node, ps_copy_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif