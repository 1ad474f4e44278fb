/*
 * real/: the socket backend. The same core, policies and workloads as sim/,
 * run as real processes (one per node) that talk over TCP through ZeroMQ.
 *
 * A node is one process: a receiver thread on a ZeroMQ ROUTER socket feeds
 * every incoming message to ps_node_recv; outgoing messages leave on one
 * DEALER socket per peer; worker threads call the client operations directly
 * (a local key is read from the process's memory, never through a message)
 * and block on a condition while they wait for a ticket.
 *
 * Two levels:
 *   real_node_*   one started node: rendezvous through rank 0, the core, the
 *                 receiver thread, collectives (barrier, quiescence, gather),
 *                 a clean shutdown. Tests and benches drive it directly.
 *   real_run_*    one experiment run on top of it, through the run layer
 *                 (run/: setup, the shared worker loop, the metrics):
 *                 real_run_node is one node (mpirun, srun, `pslab node`),
 *                 real_run_local forks every node of a run on this machine.
 *
 * Failure is an error, never a hang: a peer that does not arrive, dies or
 * stops answering fails the node within the cluster's timeout_s, with a
 * message naming the peer's rank. Nothing here keeps global state.
 */
#ifndef PSLAB_REAL_REAL_H
#define PSLAB_REAL_REAL_H

#include "model/ps.h"
#include "run/run.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;

/* ------------------------------------------------------------- cluster */

typedef enum {
  REAL_COMPUTE_SPIN = 0, /* compute(flops) keeps the worker's core busy */
  REAL_COMPUTE_SLEEP = 1 /* ... sleeps instead (oversubscribed machines) */
} real_compute;

#define REAL_HOST_MAX 256
#define REAL_PATH_MAX 4096

/* Who may send messages into a run (docs/real-clusters.md, "Authenticated clusters"). */
typedef enum {
  REAL_AUTH_AUTO = 0, /* CURVE unless every node binds loopback (127.0.0.0/8) */
  REAL_AUTH_CURVE,    /* CURVE always, loopback too */
  REAL_AUTH_NONE,     /* plain ZeroMQ: refused unless the bind is loopback */
  REAL_AUTH_INSECURE  /* plain ZeroMQ on any bind: the user said so */
} real_auth;

/* The cluster's one CURVE keypair, Z85 text (40 characters and a NUL). Every
 * node is the server of its ROUTER and a client on its DEALERs with it: a
 * peer is admitted when it proves it holds the secret half. */
#define REAL_Z85_KEY_LEN 41
typedef struct {
  char public_key[REAL_Z85_KEY_LEN];
  char secret_key[REAL_Z85_KEY_LEN];
  bool set;
} real_curve_key;

/* A slow node, emulated (cluster.stragglers; real/throttle.c says how): in
 * its phases (run/run.h; the run's wall-clock time from the start barrier)
 * its workers' compute is stretched by the speed factor, every data message
 * it sends to or receives from another node is delayed as the slowed link
 * would delay it, and its server's handling of each message is stretched
 * too. */
typedef struct {
  uint32_t node;
  const run_phase *phases; /* borrowed; sorted, disjoint; n_phases >= 1 */
  size_t n_phases;
} real_straggler;

/* What the real backend reads from the spec's "cluster" object. */
typedef struct {
  char bind[64];                 /* IPv4 address servers bind, or "*" (all) */
  char coordinator[REAL_HOST_MAX]; /* rank 0's "HOST:PORT", or "" */
  uint32_t base_port;            /* 0: the OS picks; else rank r binds
                                    base_port + r (rank 0: the coordinator's
                                    port when one is given) */
  double timeout_s;              /* start-up, failure detection, a worker's
                                    wait without progress (real_node_wait),
                                    shutdown */
  real_compute compute;
  real_auth auth;
  /* The key file every node reads when key is not set ("" : none). */
  char key_file[REAL_PATH_MAX];
  /* The keypair in memory (real_run_local makes one for its nodes). */
  real_curve_key key;
  /* Stragglers (borrowed; at most one per node) and the bandwidth in
   * bytes/s their bandwidth factors slow: the simulated link's, as the
   * spec's cluster.network.bandwidth gives it. */
  const real_straggler *stragglers;
  size_t n_stragglers;
  double bandwidth;
} real_cluster;

/* Defaults: bind 127.0.0.1, no coordinator, ports from the OS, 30 s, spin,
 * auth auto, no key, no stragglers, 10 Gbps. */
void real_cluster_default(real_cluster *c);

/* ---------------------------------------------------------------- auth */

/* Whether bind is an IPv4 loopback address (127.0.0.0/8). */
bool real_bind_is_loopback(const char *bind);
/* The spec's name of a (auto, curve, none, insecure). */
const char *real_auth_name(real_auth a);
/* Whether the nodes of c use CURVE: 1 yes, 0 no, -1 with a message when
 * c asks for "none" on a bind beyond loopback (use "insecure" for that). */
int real_auth_uses_curve(const real_cluster *c, char *err, size_t errlen);
/* A fresh keypair (libsodium through ZeroMQ). 0, or -1 with a message
 * (ZeroMQ built without CURVE). */
int real_curve_keygen(real_curve_key *out, char *err, size_t errlen);
/* Writes k to a new file at path, mode 0600 (an existing file is refused,
 * so a key in use is never overwritten). 0, or -1 with a message. */
int real_key_file_write(const char *path, const real_curve_key *k, char *err,
                        size_t errlen);
/* Reads the keypair of path. Refuses a file that is not a regular file of
 * this user, that group or others may read or write (mode & 077), or whose
 * public key does not match its secret one. 0, or -1 with a message. */
int real_key_file_read(const char *path, real_curve_key *out, char *err, size_t errlen);
/* Overwrites a key in memory. */
void real_curve_key_wipe(real_curve_key *k);

/* Rank and size of this process, from the first pair of environment
 * variables set among PSLAB_RANK/PSLAB_SIZE, OMPI_COMM_WORLD_RANK/
 * OMPI_COMM_WORLD_SIZE, PMI_RANK/PMI_SIZE, SLURM_PROCID/SLURM_NTASKS.
 * 0, or -1 with a message in err (none set, not numbers, rank >= size). */
int real_rank_from_env(uint32_t *rank, uint32_t *size, char *err, size_t errlen);

/* Splits "HOST:PORT" (HOST may be [v6]) into host (hostlen bytes) and
 * port; 0, or -1 with a message in err. */
int real_split_host_port(const char *s, char *host, size_t hostlen, uint32_t *port,
                         char *err, size_t errlen);

/* ----------------------------------------------------------------- node */

typedef struct real_node real_node;

typedef struct {
  /* The core's config: its id is this node's rank, layout.num_nodes the
   * number of nodes (run_node_config fills it for a run). Its env is the
   * node's own: whatever is there is replaced. Its secret is rank 0's (the
   * others take rank 0's from the rendezvous); its seal is replaced by the
   * one rank 0 chooses there (run_seal_choose, over every node's CPU). */
  ps_node_config core;
  const real_cluster *cluster;   /* borrowed for the node's life */
  /* Rank 0's "HOST:PORT" (NULL: cluster->coordinator). Rank 0 binds its
   * port; port 0 there lets the OS pick, which only a launcher that tells
   * the others (listening) can use. */
  const char *coordinator;
  /* A file through which rank 0 tells the others its address instead: rank
   * 0 writes "run <run> HOST:PORT" there, the others wait for it. Or NULL. */
  const char *coordinator_file;
  uint32_t run;                  /* nodes of different runs never meet */
  /* Rank 0: called once its ROUTER is bound, with the address the others
   * must use ("HOST:PORT"), before waiting for them. May be NULL. */
  void (*listening)(void *ctx, const char *host_port);
  void *listening_ctx;
} real_node_config;

/* Binds, meets every other node through rank 0, connects to each, starts the
 * receiver thread and passes the start barrier (every link is up). NULL with
 * a message in err: a peer that never arrived or cannot be reached (named by
 * rank), an address in use, a bad config. */
real_node *real_node_start(const real_node_config *c, char *err, size_t errlen);
/* Stops the receiver thread and frees everything; works on a failed node
 * (then nothing more is sent). Call after every worker thread is done. */
void real_node_free(real_node *n);

/* The node's core. Any thread may call into it (the core keeps its own
 * order: model/ps.h); never from inside env.send. */
ps_node *real_node_core(real_node *n);
uint32_t real_node_rank(const real_node *n);
/* Whether the node's connections use CURVE (authenticated, encrypted). */
bool real_node_secure(const real_node *n);
/* Wall-clock seconds since this node left the start barrier; 0 before it
 * (a message that arrives early). Never goes back. Any thread. */
double real_node_now(const real_node *n);

/* Blocks until ticket t of w completes (PS_OK) or the node fails
 * (PS_ERR_PEER). Thread-safe; one worker handle per thread.
 *
 * Never without a deadline: a wait during which the node shows no progress
 * for the cluster's timeout_s fails the node, and through it the run (every
 * node is told), with an error naming the node, the worker and what it
 * waited for. Progress is the run moving as this node sees it: a data
 * message it handled, or a ticket of any of its workers completed; each
 * restarts the timeout_s. So a wait that is merely long (a BSP or stage
 * barrier held by a straggler, whose steps send clocks and values) lasts as
 * long as the run moves, and one whose answer never comes (lost, or refused
 * as a forgery took its place) ends timeout_s after the run around it went
 * quiet, as a silent peer does (the liveness check, receiver.c). timeout_s
 * must therefore exceed the longest time a node may go without a message
 * while its workers wait: in practice the slowest worker's longest step. */
int real_node_wait(real_node *n, ps_worker *w, ps_ticket t);

/* Whether the node has failed, and why (err may be NULL). */
bool real_node_failed(real_node *n, char *err, size_t errlen);

/* Decides, at rank 0, what a collective answers from every node's
 * contribution (in[r], len[r] for rank r). Returns a malloc'd reply of
 * *out_len bytes (NULL with *out_len 0: an empty reply). */
typedef void *(*real_decide_fn)(void *ctx, uint32_t size, const void *const *in,
                                const size_t *len, size_t *out_len);

/* One collective: every node contributes in[0..len); rank 0 waits for all,
 * calls decide (NULL: empty reply) and sends its reply to every node, which
 * returns it in *out (malloc'd, *out_len bytes; out may be NULL). Every node
 * must call it the same number of times. timeout_s bounds the wait (INFINITY:
 * none; failures are still detected). phase names it in error messages.
 * PS_OK, or PS_ERR_PEER with the node failed. */
int real_node_collective(real_node *n, const char *phase, const void *in,
                         size_t len, double timeout_s, real_decide_fn decide,
                         void *ctx, void **out, size_t *out_len);
/* A collective with nothing to say. */
int real_node_barrier(real_node *n, const char *phase, double timeout_s);
/* Stops running the core's timers on this node (before quiescing: timers
 * could keep sending forever). */
void real_node_stop_timers(real_node *n);
/* Waits until no message is in flight anywhere: collectives of per-node
 * sent and received counts until two rounds agree and balance. Call on every
 * node once no worker issues operations any more. PS_OK or PS_ERR_PEER. */
int real_node_quiesce(real_node *n);
/* The clean end: every node says it is closing, rank 0 confirms, then the
 * sockets close after delivering what they hold. PS_OK or PS_ERR_PEER. */
int real_node_finish(real_node *n);

/* Sends len bytes of buf (taken: freed with free()) to node dst through
 * the transport, as the core's env.send does. For tests and benches. */
void real_node_send(real_node *n, uint32_t dst, uint8_t *buf, size_t len);

typedef struct {
  uint64_t sent, received;     /* data messages (received: but those refused for
                                  their seal, which no node sent) */
  uint64_t dropped;            /* received, failed to decode or validate */
  uint64_t stray;              /* frames from an unknown sender, dropped */
  uint64_t refused;            /* connections refused by authentication */
  /* The straggler emulation (throttle.c): data messages whose handling,
   * sending or receiving it delayed, and the seconds it added in all
   * (those sleeps, and the workers' stretched compute). */
  uint64_t throttled;
  double throttle_s;
} real_node_stats;

void real_node_get_stats(real_node *n, real_node_stats *out);

/* ------------------------------------------------------------------ run */

typedef struct {
  /* What the run is made of (run/run.h), its shape included (nodes,
   * workers_per_node, servers, worker_nodes, scale). A trace is written by
   * each worker of each node on its node's file system; the caller merges
   * the parts. Of run.memory only `limit` is the caller's: bytes of memory
   * the node's machine has for the run (0: no check); a run estimated to
   * need more is refused before it starts. */
  run_args run;
  double host_speed;             /* flop/s of one worker's core */
  const real_cluster *cluster;
  uint32_t run_number;           /* the run's number in its experiment */
  /* Whether the memory estimate counts every node of the run (they share
   * this machine, as real_run_local's forked nodes do) or this node's own. */
  bool memory_all_nodes;
  /* real_run_node only (real_run_local sets them for its nodes): */
  uint32_t rank;
  const char *coordinator;       /* NULL: cluster->coordinator */
  const char *coordinator_file;  /* or NULL */
  void (*listening)(void *ctx, const char *host_port);
  /* Called on every node once the run has started (after the start barrier). */
  void (*started)(void *ctx);
  void *hook_ctx;
  /* Rank 0 (or the launcher): wall seconds and the fraction of rank 0's
   * steps done, now and then. May be NULL. */
  void (*progress)(void *ctx, double wall_s, double fraction);
  void *progress_ctx;
  /* real_run_local: with pin_cores > 0 (cluster.machines.pin), node i's
   * threads run on the cores pin_machine[i] * pin_cores to
   * (pin_machine[i] + 1) * pin_cores - 1 of those this process may use (in
   * order): the simulator's machines, pin_machines of them, laid out on this
   * one. Refused when they need more cores than there are. 0: where the
   * kernel puts them. */
  const uint32_t *pin_machine;
  uint32_t pin_machines, pin_cores;
} real_run_args;

/* Runs this process's node of one run. On rank 0, returns the run's metrics
 * (run_metrics of every node's report, time_s being the wall-clock time from
 * the start barrier to the end barrier);
 * on other ranks an empty object. NULL with a message in err on failure
 * (a peer that died is named by rank). Caller frees. */
struct cJSON *real_run_node(const real_run_args *a, char *err, size_t errlen);

/* Runs every node of one run on this machine: prepares rank 0 (the run's
 * setup, with the memory estimate of all its nodes against run.memory.limit)
 * and checks that the user's process limit and the pids cgroups leave room
 * for every node's process and threads, refusing the run before any fork
 * otherwise; then forks nodes 1.. (which wait for rank 0's address), runs
 * rank 0 in this process on a free port of cluster->bind, and waits for the
 * others: after a clean end, those that do not exit within timeout_s (and a
 * margin) are killed; after a failure, those left after half a second. So
 * a run with a node stopped ends within timeout_s + 1 s, no process left.
 * Returns rank 0's metrics, or NULL with a message. Call from a process
 * without ZeroMQ contexts or threads (it forks). */
struct cJSON *real_run_local(const real_run_args *a, char *err, size_t errlen);

/* ---------------------------------------------------------------- probe */

/* Two nodes on loopback for measuring what operations cost on this machine
 * (pslab calibrate): this process is node 0, whose workers the calling
 * thread (and threads the probe starts, for several clients) drive; node 1
 * is a forked child, whose main thread drives its one worker when traffic
 * goes both ways. Values are REAL_PROBE_LENGTHS floats long; up to
 * REAL_PROBE_MAX_KEYS keys per pull, REAL_PROBE_MAX_WINDOW pulls outstanding per thread,
 * REAL_PROBE_MAX_CLIENTS threads pulling on node 0. */
#define REAL_PROBE_LENGTHS 1, 16, 64, 256, 1024, 4096
#define REAL_PROBE_MAX_KEYS 256
#define REAL_PROBE_MAX_WINDOW 64
#define REAL_PROBE_MAX_CLIENTS 4
#define REAL_PROBE_MAX_SPINNERS 64
typedef struct real_probe real_probe;

/* A batch: `count` pulls per pulling thread of `keys` keys of `floats`
 * floats each, homed at node 1 (local: at node 0, served from memory), each
 * thread keeping up to `window` outstanding (0 counts as 1); `clients`
 * threads of node 0 pull (0 counts as 1); with both_ways node 1 pulls as
 * many keys homed at node 0 the same way meanwhile (one thread). */
typedef struct {
  uint32_t keys, floats, count, window, clients;
  bool local, both_ways;
  /* Threads of node 0's process that spin for the whole batch, so that the
   * machine's cores are busy when a message comes (up to
   * REAL_PROBE_MAX_SPINNERS): a thread woken for it must wait for a core, as
   * in a run whose workers compute. Their CPU is not counted in the
   * sample. */
  uint32_t spinners;
  /* Local only: each pull is followed by a push of zeros to the same keys
   * (every key written, its value unchanged), as a training step reads and
   * writes its keys; each pull draws its `keys` keys at random from a pool
   * of a few times as many, every thread its own draws, so that threads
   * touch keys one after the other and now and then at once. */
  bool push;
  /* Node 0's core counts its shared accesses through the batch
   * (ps_node_count_shared: keys its threads found last touched by another
   * of them), into the sample's shared_accesses. Counting writes each key's
   * entry: a batch that counts is not one that times. */
  bool count_shared;
} real_probe_batch;

/* What one node's threads spent over a batch. */
typedef struct {
  double process_cpu_s;  /* every thread of the node's process */
  double receiver_cpu_s; /* its receiver thread */
  double issue_cpu_s;    /* the threads that pulled (node 1: both ways only) */
  double send_cpu_s;     /* ... of which inside the calls that issued them */
  /* Times the threads that read its ROUTER (the receiver, a waiting puller)
   * slept and woke: the core's count (ps_node_note_wakeup) when the backend
   * reports wake-ups, else those threads' voluntary context switches. */
  double wakeups;
  /* Times ZeroMQ's I/O thread slept and woke (its voluntary context
   * switches; 0 where the thread is not found by its name). */
  double io_wakeups;
  /* Key accesses of its threads that found the key last touched by
   * another of them (count_shared batches; else 0). */
  double shared_accesses;
} real_probe_node;

/* Totals over a batch. */
typedef struct {
  double wall_s;       /* wall-clock time (both ways: until both nodes are done) */
  double cpu_s;        /* CPU time of both node processes, every thread */
  double thread_cpu_s; /* CPU time of node 0's threads that pulled */
  real_probe_node node[2];
} real_probe_sample;

/* Starts both nodes (cluster NULL: real_cluster_default). Call from a
 * process without ZeroMQ contexts or threads (it forks). With pin, node 1
 * runs on the second core this process may use and node 0, this process,
 * on the first until real_probe_free gives its cores back (the threads the
 * probe starts meanwhile with it): a core per node. NULL with a message in
 * err (pin needs two cores). */
real_probe *real_probe_start(const real_cluster *cluster, bool pin, char *err,
                             size_t errlen);
/* Runs batch b. 0, or -1 with a message (a length not in
 * REAL_PROBE_LENGTHS, a window or client count over the limits, a failed
 * node). */
int real_probe_run(real_probe *p, const real_probe_batch *b, real_probe_sample *out, char *err,
                   size_t errlen);
/* `count` pulls, one at a time, from the calling thread, of keys homed at
 * node 1 (remote) or node 0 (local): real_probe_run's simplest batches. */
int real_probe_remote(real_probe *p, uint32_t keys, uint32_t floats, uint32_t count,
                      real_probe_sample *out, char *err, size_t errlen);
int real_probe_local(real_probe *p, uint32_t keys, uint32_t floats, uint32_t count,
                     real_probe_sample *out, char *err, size_t errlen);
/* real_probe_preempt (below) while p runs: on the cores this process had
 * before a pinned probe (pin) took all but one, which the calling thread gets
 * back for the measurement and gives up again after; the probe's nodes stay
 * where they are, idle meanwhile. 0, or -1 with a message. */
int real_probe_preempt_beside(real_probe *p, uint32_t spinners, uint32_t wakes, double *wait_s,
                              double *preempted, char *err, size_t errlen);
/* Stops both nodes and frees p (NULL: nothing). 0 when both ended cleanly. */
int real_probe_free(real_probe *p);
/* How long this thread takes, in wall-clock seconds into *wall_s, to add
 * the initial values of `floats` pulled floats as real math does before
 * its arithmetic (wl_add_initial of a small matrix factorization, 64-float
 * values). 0, or -1 with a message. */
int real_probe_initial(double floats, double *wall_s, char *err, size_t errlen);
/* The scheduler's slice on this machine: `threads` threads spin for
 * `seconds` (more threads than cores, so that each core has a queue), and
 * *slice_s is the time they ran over the turns they got (the kernel's
 * per-thread schedstat). 0, or -1 with a message (no schedstat). */
int real_probe_slice(uint32_t threads, double seconds, double *slice_s, char *err,
                     size_t errlen);
/* How long a woken thread waits for a core that `spinners` spinning threads
 * hold (real/preempt_probe.c): a thread woken `wakes` times from another
 * core, on the spinners' core, into *wait_s (its mean run delay a turn),
 * and the spinners' involuntary switches per wake-up into *preempted.
 * Needs two cores of the process's affinity. 0, or -1 with a message. */
int real_probe_preempt(uint32_t spinners, uint32_t wakes, double *wait_s, double *preempted,
                       char *err, size_t errlen);

#endif
