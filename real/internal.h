/*
 * real/ internals: the state of one node process and the pieces its files
 * share. Not a door: only the files of real/ and its tests include it.
 *
 * Threads of a node and what each may touch:
 *   main      rendezvous (before the receiver starts), collectives, shutdown;
 *   receiver  the reader of the ROUTER unless a worker leads (below), the
 *             only reader of the monitor sockets; calls ps_node_recv and
 *             ps_node_on_timer;
 *   workers   client operations on the core; a worker that waits for a
 *             ticket either sleeps on its waiter or, when the ROUTER was
 *             handed to it, reads it and calls ps_node_recv itself until its
 *             ticket is done (leader.c): one reader at a time.
 * Workers and the receiver call into the core concurrently: the core keeps
 * each node's messages in the order it decided them (its order lock,
 * model/internal.h, call_ctx). The receiver feeds the core under the node's
 * core lock (real_core_enter/leave), which real_fail also takes to mark the
 * node failed: once failed, nothing more is fed to the core. A leading
 * worker feeds the core the same way.
 *
 * Any thread sends, through real_transport_send: one DEALER per peer, each
 * under its own mutex, so the order of sends to a peer is the order in which
 * threads took that mutex, and the peer's TCP connection keeps it (per-pair
 * FIFO, as the core needs). Data messages carry the core's wire magic,
 * control messages REAL_CTL_MAGIC; a frame's sender is its DEALER routing id
 * (rank and run), so a frame from another run or an unknown process is
 * dropped, counted as stray.
 */
#ifndef PSLAB_REAL_INTERNAL_H
#define PSLAB_REAL_INTERNAL_H

#include "real/real.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <zmq.h>

#if defined(__GNUC__)
#define REAL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define REAL_PRINTF(f, a)
#endif

/* ThreadSanitizer annotations. A message a node sends to itself goes through
 * an inproc pipe of libzmq without a copy: the receiver thread reads the
 * very buffer a worker encoded. libzmq's pipes do order the two (atomic
 * hand-over), but libzmq is not instrumented, so TSan cannot see it and
 * reports the core's decoder racing with its encoder. The sender publishes
 * the buffer (REAL_TSAN_RELEASE) before it goes to libzmq and the receiver
 * takes it (REAL_TSAN_ACQUIRE) as it comes out: the happens-before libzmq
 * gives, said where TSan can see it. No-ops in other builds. */
#if defined(__SANITIZE_THREAD__)
#define REAL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define REAL_TSAN 1
#endif
#endif
#ifdef REAL_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define REAL_TSAN_RELEASE(p) __tsan_release(p)
#define REAL_TSAN_ACQUIRE(p) __tsan_acquire(p)
#else
#define REAL_TSAN_RELEASE(p) ((void)(p))
#define REAL_TSAN_ACQUIRE(p) ((void)(p))
#endif

#define REAL_ENDPOINT_MAX 300
#define REAL_ERROR_MAX 512
/* Bad frames logged in full before the log goes quiet (then every 1000th). */
#define REAL_LOG_FIRST 10

/* ------------------------------------------------------- control wire */

/* Control messages: a 28-byte little-endian header (magic, type, 3 zero
 * bytes, sender rank, run, seq, cluster size, payload length), then the
 * payload. */
#define REAL_CTL_MAGIC 0x434c5350u /* "PSLC" */
#define REAL_CTL_HEADER_LEN 28
#define REAL_CTL_MAX_PAYLOAD (64u << 20)

typedef enum {
  REAL_CTL_HELLO = 1, /* node -> rank 0: my endpoint (payload: a string);
                         seq: REAL_HELLO_GMAC when my CPU makes GMAC seals */
  REAL_CTL_BOOK,      /* rank 0 -> node: the run's secret (PS_SECRET_LEN
                         bytes), then every endpoint (size strings); seq:
                         the run's seal (a ps_seal) */
  REAL_CTL_ABORT,     /* a node failed; seq: the rank that failed first */
  REAL_CTL_GATHER,    /* node -> rank 0: a contribution to collective seq */
  REAL_CTL_RELEASE,   /* rank 0 -> node: the answer of collective seq */
  REAL_CTL_PING,      /* node -> node: I am alive (no payload; receiver.c) */
  REAL_CTL_TYPE_END
} real_ctl_type;

/* A HELLO's seq: what the node's CPU can do. */
#define REAL_HELLO_GMAC 1u

typedef struct {
  uint8_t type;
  uint32_t rank, run, seq, size;
  const uint8_t *payload; /* a view into the decoded buffer */
  uint32_t payload_len;
} real_ctl;

/* Encodes m into a malloc'd buffer (*len bytes); NULL on no memory or a
 * payload over REAL_CTL_MAX_PAYLOAD. */
uint8_t *real_ctl_encode(const real_ctl *m, size_t *len);
/* Decodes buf[0..len): PS_OK, or PS_ERR_{TRUNCATED,OVERSIZED,MAGIC,TYPE,
 * MALFORMED} (strings checked: HELLO and ABORT hold no NUL, BOOK holds
 * exactly `size` NUL-terminated strings). Never reads outside buf. */
int real_ctl_decode(const uint8_t *buf, size_t len, real_ctl *m);
/* Whether buf starts with the control magic. */
bool real_ctl_is_control(const uint8_t *buf, size_t len);
/* The i-th string of a BOOK (i < size); NULL if m is not a valid BOOK. */
const char *real_ctl_book_entry(const real_ctl *m, uint32_t i);
/* The run's secret in a BOOK (PS_SECRET_LEN bytes), or NULL. */
const uint8_t *real_ctl_book_secret(const real_ctl *m);

/* A DEALER's routing id: rank and run, 8 bytes little-endian. */
#define REAL_ID_LEN 8
void real_id_encode(uint32_t rank, uint32_t run, uint8_t out[REAL_ID_LEN]);
bool real_id_decode(const uint8_t *id, size_t len, uint32_t *rank, uint32_t *run);

/* ---------------------------------------------------------- addresses */

/* Whether s is "*" or "0.0.0.0": bind every interface. */
bool real_bind_is_wildcard(const char *bind);
/* The host other nodes reach this one at: the bind address, or with a
 * wildcard bind the local address that routes to `toward` (a host name or
 * address; "" or NULL: the address of this machine's host name, unless
 * that is a loopback one; 127.0.0.1 when nothing better is known). */
void real_advertised_host(const char *bind, const char *toward, char *out, size_t n);
/* Rank 0: writes "run <run> <host_port>\n" to path (through a temporary
 * file renamed over it). 0, or -1 with a message. */
int real_coordinator_file_write(const char *path, uint32_t run, const char *host_port,
                                char *err, size_t errlen);
/* Others: waits (polling the file, until timeout_s) for the line of `run`;
 * 0 with host_port filled, or -1 with a message. */
int real_coordinator_file_wait(const char *path, uint32_t run, double timeout_s,
                               char *host_port, size_t n, char *err, size_t errlen);

/* Monotonic seconds. */
double real_clock(void);

/* What rank 0 answers the start barrier with (node.c): the instant it
 * releases it, on its real_clock (CLOCK_MONOTONIC), and the boot that clock
 * belongs to. A node of the same boot reads the same clock (one machine,
 * network namespaces included) and takes that instant as its t0, so that
 * every node's times are of one clock rather than each of its own release,
 * which comes milliseconds later at a node whose core was busy. */
#define REAL_BOOT_ID 40
typedef struct {
  char boot[REAL_BOOT_ID]; /* /proc/sys/kernel/random/boot_id ("": unknown) */
  double t0;
} real_start_clock_msg;
/* Rank 0's answer, now (malloc'd, *len bytes; NULL: no memory). */
void *real_start_clock(size_t *len);
/* A node's t0 from the answer: rank 0's where both read one clock and it
 * is neither in the future nor over a minute back, else now. */
double real_start_t0(const void *reply, size_t len);
/* Names a thread of this process (its comm, cut to 15 characters), so that
 * top, perf and /proc tell a node's threads apart: "pslab-w<i>" a worker,
 * "pslab-recv" the receiver. */
void real_name_thread(pthread_t thread, const char *name);
/* The cores this process may use (its affinity), in order: up to cap of
 * them in out; how many there are, or -1 with a message. */
int real_cores_allowed(int *out, int cap, char *err, size_t errlen);
/* Pins the calling thread, and so the threads it starts from now on, to
 * `count` of the cores this process may use, from the first-th on (counted
 * from 0, in order). 0, or -1 with a message (nothing changed). */
int real_pin_cores(uint32_t first, uint32_t count, char *err, size_t errlen);
/* The thread of this process named `name` (its comm), by /proc/self/task;
 * 0 if none. */
pid_t real_named_thread(const char *name);
/* Voluntary context switches of thread tid of this process: the times it
 * blocked (0 if tid is 0 or unknown). */
double real_thread_switches(pid_t tid);
/* The CPU seconds thread `tid` of this process has run: the kernel's
 * schedstat (nanoseconds), else its utime and stime (clock ticks); 0 for
 * tid 0 or when neither can be read. */
double real_thread_cpu_s(pid_t tid);
/* The kernel's schedstat of thread `tid` of this process (0: the calling
 * thread): seconds it ran, seconds it waited runnable for a core, and the
 * times it was scheduled in, into out[3]; false if it cannot be read. */
bool real_thread_schedstat(pid_t tid, double out[3]);
/* The name libzmq gives its I/O thread. */
#define REAL_ZMQ_IO_THREAD "ZMQbg/IO/0"

/* ---------------------------------------------------------------- node */

typedef struct {
  void *sock;              /* DEALER to this peer (inproc to itself) */
  pthread_mutex_t lock;    /* serializes sends on sock */
  void *monitor;           /* PAIR with sock's events; NULL for itself */
  char endpoint[REAL_ENDPOINT_MAX];
  bool up;                 /* ZMTP handshake done (receiver's view) */
  bool refused;            /* it refused our handshake (rendezvous' view) */
} real_peer;

typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
} real_waiter;

struct real_node {
  uint32_t rank, size, run, workers;
  real_cluster cluster;
  char coordinator[REAL_HOST_MAX]; /* "HOST:PORT" of rank 0 */
  char host[REAL_HOST_MAX];        /* this node's advertised host */
  char endpoint[REAL_ENDPOINT_MAX]; /* tcp://host:port others reach me at */
  void *zctx;
  void *router;
  void *ctl_send, *ctl_recv;       /* main -> receiver: stop */
  real_peer *peers;
  bool peers_made;
  ps_node *core;
  real_waiter *waiters;
  pthread_t receiver;
  bool receiver_running;
  /* The node's clock: real_clock() - t0 from the start release on, 0
   * before it; t0 is rank 0's release where the node reads rank 0's clock
   * (real_start_t0), else its own. t0 is written once, before `started` is
   * set (release), and read only after `started` was seen set (acquire): the
   * receiver thread, which runs before the release, never reads it
   * half-made, and an early message gets time 0, never a time the clock
   * later goes back from. */
  double t0;
  atomic_bool started;
  atomic_bool timers_on;

  /* The core lock: an adaptive mutex (it spins a little before sleeping:
   * the sections it guards are a core call each). A fair ticket lock was
   * measured first: with two threads taking turns it forced a thread switch
   * per operation, 20 times slower. real_fail sets `failed` inside it and
   * the receiver checks it inside it: once failed, the core is never fed
   * again, so a worker that returns from a failed wait owns its buffers. */
  pthread_mutex_t core_mutex;
  atomic_bool failed;
  bool abort_told;

  /* Under lock, signalled on cond: links, collectives, the error. */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  char error[REAL_ERROR_MAX];
  uint32_t links_up;
  bool closing;                    /* disconnects are expected now */
  uint32_t coll_seq;               /* collectives this node has finished */
  /* Rank 0: contributions to collective coll_seq + 1. */
  void **gather_in;
  size_t *gather_len;
  bool *gather_has;
  uint32_t gather_count;
  /* Other ranks: the answer to collective coll_seq + 1. */
  bool released;
  void *release;
  size_t release_len;

  _Atomic uint64_t sent, received, dropped, stray;
  /* Signs that the run moves, for the deadline of a worker's wait
   * (leader.c): data messages handled and tickets completed on this node. */
  _Atomic uint64_t progress;
  _Atomic uint64_t logged;         /* bad frames seen, for log pacing */

  /* Authentication (auth.c): whether CURVE is on, the guard thread that
   * admits or refuses every connection to the ROUTER, and how many it
   * refused (counted under lock, signalled on cond). */
  bool secure;
  struct real_guard *guard;
  /* The key of the core's seals (ps_node_config.secret): rank 0's own,
   * which it sends the others in the book; theirs, taken from it. */
  uint8_t secret[PS_SECRET_LEN];
  /* The run's seal (ps_node_config.seal): rank 0 chooses it at the
   * rendezvous, GMAC only if every node said it can, and sends it with the
   * secret; the others take it from the book. */
  ps_seal seal;
  _Atomic uint64_t refused;

  /* The straggler emulation (throttle.c): this node's straggler, or NULL,
   * messages it delayed and the nanoseconds it added. */
  const real_straggler *slow;
  _Atomic uint64_t throttled, throttle_ns;

  /* Who reads the ROUTER (leader.c): lead is REAL_LEAD_PARKED (nobody: the
   * ROUTER's ZMQ_FD, router_fd, is in epoll_fd, which the receiver sleeps
   * on), REAL_LEAD_RECEIVER or the index of the worker that reads it;
   * changed only under lead_lock, by the one that holds the socket or, when
   * parked, by the one that takes it. lead_wants[i] (under lead_lock):
   * worker i waits and asks for the socket; lead_wanting counts them.
   * nudge_fd (the receiver) and lead_fd (the leading worker) are eventfds in
   * their poll sets. lead_on: workers may lead (the node runs workers and has
   * no straggler). */
  pthread_mutex_t lead_lock;
  _Atomic int32_t lead;
  bool *lead_wants;
  uint32_t lead_wanting;
  bool lead_on;
  int nudge_fd, lead_fd, epoll_fd, router_fd;
  /* By rank: when a frame from it last came (real_clock), written by
   * whoever reads the ROUTER, read by the receiver's liveness check. */
  _Atomic double *heard;
  /* By peer, under lead_lock: a monitor event that fails the node, kept
   * until a read of the ROUTER that began after it (receiver.c), and its
   * number among those kept (events_kept counts them); events_pending:
   * any kept. */
  int *lost_event;
  uint64_t *lost_seq;
  _Atomic uint64_t events_kept;
  atomic_bool events_pending;
  /* The last read of the ROUTER found it empty: its reader (whoever holds
   * it) goes on to wait in zmq_poll, so the next read that finds a data
   * message is a wake-up (ps_node_note_wakeup). Read and written by the
   * ROUTER's holder only. */
  atomic_bool router_idle;
};

#define REAL_LEAD_RECEIVER (-1)
#define REAL_LEAD_PARKED (-2)
#define REAL_LEAD_NONE (-3) /* never the value of lead */

/* node.c */
/* The core lock (see above): not recursive. */
void real_core_enter(real_node *n);
void real_core_leave(real_node *n);
/* Fails n with the formatted reason (the first reason stays) and wakes
 * every waiter. Does not tell the other nodes: real_fail_and_tell does. */
void real_fail(real_node *n, const char *fmt, ...) REAL_PRINTF(2, 3);
/* real_fail, then sends ABORT to rank 0 (rank 0: to every node). */
void real_fail_and_tell(real_node *n, const char *fmt, ...) REAL_PRINTF(2, 3);
/* An ABORT from src about a failure first seen at origin: fails n and, on
 * rank 0, passes it on to every node. */
void real_abort_received(real_node *n, uint32_t src, uint32_t origin, const char *text);
/* Logs one bad frame to stderr, paced (the first few, then every 1000th). */
void real_log_bad(real_node *n, const char *fmt, ...) REAL_PRINTF(2, 3);
/* Waits on n->cond (n->lock held) until `deadline` (real_clock; INFINITY:
 * none); false when the deadline passed. */
bool real_cond_wait_until(real_node *n, double deadline);
/* The CLOCK_MONOTONIC time of `deadline` (real_clock; not INFINITY), for a
 * pthread_cond_timedwait on a condition made with that clock. */
struct timespec real_abs_time(double deadline);

/* transport.c */
/* Context, ROUTER bound per the cluster (port: 0 for any), control pair. */
int real_transport_open(real_node *n, uint32_t port, char *err, size_t errlen);
/* The DEALER (and its monitor) to peer p at endpoint. */
int real_transport_connect(real_node *n, uint32_t p, const char *endpoint, char *err,
                           size_t errlen);
/* Sends buf (taken) to p. Data is dropped once the node failed; control
 * (force) still goes. */
void real_transport_send(real_node *n, uint32_t p, uint8_t *buf, size_t len, bool force);
/* Encodes and sends a control message to p (force: also when failed). */
void real_send_ctl(real_node *n, uint32_t p, uint8_t type, uint32_t seq,
                   const void *payload, size_t len, bool force);
/* Closes every socket and the context; linger_ms for unsent messages. */
void real_transport_close(real_node *n, int linger_ms);
/* Receives one frame from the ROUTER without blocking: 1 with the sender's
 * rank in *src and the message in body (caller closes it), 0 when nothing
 * is waiting. Frames from unknown senders or other runs, and multi-part
 * messages, are dropped (counted as stray, logged) and skipped. */
int real_router_recv(real_node *n, zmq_msg_t *body, uint32_t *src);
/* Reads one monitor event (non-blocking): its number, or -1. */
int real_monitor_event(void *monitor);
/* The env the core sends and wakes through. */
void real_node_env(real_node *n, ps_env *env);

/* auth.c */
/* Decides whether n uses CURVE, loads its key (n->cluster.key_file) and,
 * when it does, makes the ROUTER a CURVE server and starts the guard thread
 * (a ZAP handler and the ROUTER's monitor). Call after the context exists,
 * before the ROUTER binds. 0, or -1 with a message. */
int real_auth_open(real_node *n, char *err, size_t errlen);
/* Makes a DEALER a CURVE client of the cluster's key (nothing when plain). */
void real_auth_client(real_node *n, void *sock);
/* Stops the guard thread; call after every other socket is closed, before
 * the context is terminated (it shuts the context down). */
void real_auth_close(real_node *n);
/* Local launch: gives c a fresh keypair in memory when its nodes will use
 * CURVE and it names no key file. 0, or -1 with a message. */
int real_auth_local_keys(real_cluster *c, char *err, size_t errlen);

/* throttle.c: the straggler emulation. Each is a no-op on a node without a
 * straggler (n->slow NULL, set by real_throttle_init). */
void real_throttle_init(real_node *n);
/* Receiver thread, after the core handled a data message of len bytes from
 * src, which began at node time t0 and took handling_s: sleeps what the
 * phase in force adds (a stretched server, a slowed down link). */
void real_throttle_handled(real_node *n, uint32_t src, double t0, double handling_s,
                           size_t len);
/* Any thread, before a data message of len bytes leaves for dst: sleeps
 * what the slowed up link adds. */
void real_throttle_send(real_node *n, uint32_t dst, size_t len);
/* A worker's compute of `seconds` at full speed, starting now: how long it
 * takes on this node (the stretch counted as added time). */
double real_throttle_compute(real_node *n, double seconds);
/* Seconds the calling thread has slept in the throttle so far (a handling's
 * own time is measured without them). */
double real_throttle_thread_slept(void);

/* run.c: real_run_node in two halves, for the local launcher, which
 * prepares rank 0 before it forks the others. real_run_prepare: the run's
 * setup (a bad spec, or a run its memory estimate refuses, fails here, with
 * a message in err; a and err must outlive the run); real_run_go: the rest,
 * then frees s and returns what real_run_node returns; real_run_discard
 * frees a prepared run that will not go. */
typedef struct node_run node_run;
node_run *real_run_prepare(const real_run_args *a, char *err, size_t errlen);
struct cJSON *real_run_go(node_run *s);
void real_run_discard(node_run *s);

/* process_limit.c: how many more tasks (processes and threads) this
 * process may start before a limit refuses one: the smallest room under
 * the user's process limit (not for root) and the pids cgroups this process
 * is in; UINT64_MAX when none limits it. what: the tightest limit with its
 * numbers ("" when none). */
uint64_t real_task_room(char *what, size_t whatlen);

/* rendezvous.c: meets the other nodes (main thread, before the receiver). */
int real_rendezvous(real_node *n, const real_node_config *c, char *err, size_t errlen);

/* receiver.c */
int real_receiver_start(real_node *n);
void real_receiver_stop(real_node *n);
/* Reads and handles up to a batch of frames from the ROUTER (the caller
 * holds it: leader.c); whether it stopped because the ROUTER was empty.
 * The first read with a data message after one that found the ROUTER empty
 * counts a wake-up of the node's handling thread. */
bool real_drain_router(real_node *n);
/* Reads the ROUTER as real_drain_router does, and once it is empty handles
 * the monitor events kept before the read began, after what their peers
 * sent before they went; whether it is empty. The caller holds it. */
bool real_read_router(real_node *n);
/* The receiver keeps a monitor event that fails the node (peer p) for the
 * next real_read_router; real_events_mark numbers the events kept so far,
 * and real_handle_kept_events handles those up to that number. */
void real_keep_event(real_node *n, uint32_t p, int event);
uint64_t real_events_mark(real_node *n);
void real_handle_kept_events(real_node *n, uint64_t mark);

/* leader.c: who reads the ROUTER. */
/* Makes the lead state (node_alloc, after real_throttle_init); 0 or -1. */
int real_lead_init(real_node *n);
/* Watches the ROUTER's ZMQ_FD (the receiver, as it starts, holding it). */
int real_lead_open(real_node *n);
void real_lead_free(real_node *n);
/* The receiver: takes the ROUTER if it is parked (or holds it already) and
 * hands it to a worker that asked for it; whether the receiver holds it. */
bool real_lead_receiver_take(real_node *n);
/* The receiver, after a read (empty: it found the ROUTER empty): hands the
 * ROUTER to a worker that asked for it, or parks it when empty. */
void real_lead_receiver_done(real_node *n, bool empty);
/* A ticket of `worker` completed: wakes it if it leads (and is not the
 * calling thread). real_lead_wake_any wakes whoever leads (failure). */
void real_lead_wake(real_node *n, uint32_t worker);
void real_lead_wake_any(real_node *n);
/* The end of a wait of `worker` (led: it read the ROUTER; empty: its last
 * read found it empty): it no longer asks for the ROUTER, and if it holds
 * it (led, or handed to it after it last looked), passes it to a worker
 * that asks, parks it when read until empty, or gives it to the receiver,
 * woken to read on. */
void real_lead_release(real_node *n, uint32_t worker, bool led, bool empty);
/* Empties an eventfd. */
void real_fd_clear(int fd);
/* Whether the calling thread is a worker reading the ROUTER. */
extern _Thread_local bool real_leading;
/* Handles a control message from src (receiver thread). */
void real_handle_control(real_node *n, uint32_t src, const real_ctl *m);

#endif
