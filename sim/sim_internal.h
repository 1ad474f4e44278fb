/*
 * sim/ internal: the state of one simulated run, shared by its actors.
 *
 * A run holds one sim_node per simulated node (its ps_node, host, inbox and
 * timer) and one sim_worker per worker. Actors are SimGrid coroutines in one
 * OS thread: code between two SimGrid calls runs without interruption, which
 * is what makes the unlocked counters and lists here safe. Six kinds of
 * actor:
 *
 *   receiver (daemon) CM02, LV08: waits on its node's pair mailboxes and
 *                    queues messages as they arrive (inbox.c);
 *   server (daemon)  takes arrived messages in arrival order, charges the
 *                    cost model (wake-up, handling), calls ps_node_recv;
 *   io (daemon)      with placement and an I/O cost: works off the I/O
 *                    thread's CPU on the node's machine (io_thread.c);
 *   timer  (daemon)  sleeps until ps_node_next_timer, runs ps_node_on_timer;
 *   worker           runs wl_drive with a SimGrid-backed driver env;
 *   straggler (daemon) one per straggler with phases: changes its host's
 *                    speed and its link's bandwidth at the boundaries.
 *
 * Every actor's SimGrid data but a straggler's is its sim_outbox (the sends
 * it has started), whose owner is the sim_node or sim_worker it works for.
 *
 * The run ends when every worker is done and no message is in flight (the
 * last worker waits for that); SimGrid then kills the daemons, which are all
 * blocked on their inbox or condition at that point.
 */
#ifndef PSLAB_SIM_SIM_INTERNAL_H
#define PSLAB_SIM_SIM_INTERNAL_H

#include "sim/sim.h"
#include "model/ps.h"
#include "run/run.h"

#include <simgrid/forward.h>
#include <stdbool.h>

typedef struct sim_state sim_state;
typedef struct sim_worker sim_worker;
typedef struct sim_outbox sim_outbox;
typedef struct sim_envelope sim_envelope;
typedef struct sim_shared_buf sim_shared_buf;
typedef struct sim_envelope_chunk sim_envelope_chunk;
typedef struct sim_straggler_actor sim_straggler_actor;

/* Progress is reported every 1/SIM_PROGRESS_STEPS of all steps. */
#define SIM_PROGRESS_STEPS 50

/* ------------------------------------------------------------- messages */

/* A message in flight: the core's encoded buffer, its length and sender,
 * and the SimGrid send that carries it (messages.c says why the sender keeps
 * it). Envelopes come from a pool, so a message allocates nothing but the
 * buffer the core already made. */
struct sim_envelope {
  sim_envelope *prev, *next; /* in the outbox's outstanding list, or free */
  /* In its destination's arrived queue (inbox.c), then on its outbox's
   * delivered stack. */
  sim_envelope *next_delivered;
  sim_outbox *outbox;        /* the sending actor's */
  sg_comm_t comm;            /* NULL once the sender has waited for it */
  uint8_t *buf;
  size_t len;
  uint32_t src;
  uint32_t dst;              /* its destination, while its node's I/O actor holds it */
  uint8_t state;             /* ENVELOPE_* in messages.c */
  /* A buffer of env.send_shared, which several envelopes carry, and this
   * one's number on its channel (NULL, 0: buf is the envelope's own). */
  sim_shared_buf *shared;
  uint32_t seq;
};

/* A buffer env.send_shared handed over for several nodes: freed when the
 * last envelope that carries it is done with it. */
struct sim_shared_buf {
  uint8_t *buf;
  uint32_t refs;
};

/* Done with e's buffer (taken from e before e is recycled). */
void sim_buf_release(uint8_t *buf, sim_shared_buf *shared);

/* A working actor as a thread of its machine, under the run-queue model
 * (cores.c). */
typedef struct sim_thread {
  double vruntime;   /* CPU seconds it ran, raised when it comes back from sleep */
  double slice_used; /* of the slice it runs in now */
  bool holding;      /* it holds a core: it ran and has not blocked since */
  uint32_t machine;
  uint64_t seq;      /* its place among equals in the run queue */
  sg_sem_t turn;     /* it waits here for its turn (made when first needed) */
  /* Wake-up preemption (cores.c): the actor that last executed as this
   * thread and whether it executes now (only such a thread is preempted:
   * its execution is suspended with its actor), whether it was preempted
   * and waits in the queue to be resumed, since when it waits there, and
   * its place in the queue's heap (SIZE_MAX: not queued). */
  sg_actor_t actor;
  bool executing, preempted;
  double queued_at;
  size_t heap_at;
  /* Its execution under way: since when it runs (again), and what of it
   * was already counted as run when it was preempted. */
  double exec_since, credited;
  /* What the node's report says of it (run_thread_sched): the turns it got
   * on a core, the seconds it ran and those it waited in the run queue. */
  double turns, ran_s, wait_s;
  /* A worker's, taken as its steps end: the seconds it slept over them. */
  double blocked_s;
} sim_thread;

/* One machine's cores under the run-queue model. */
typedef struct {
  uint32_t free;       /* cores no thread holds */
  sim_thread **heap;   /* the run queue: least vruntime, then seq, first */
  size_t count, cap;
  sim_thread **running; /* the threads that hold a core (n_running of them) */
  uint32_t n_running;
  double min_vruntime; /* of the threads running and waiting; never moves back */
  uint64_t seq;
} sim_cores;

/* The sends one actor has started and not yet waited for. */
struct sim_outbox {
  sim_state *run;
  void *owner;               /* the sim_node or sim_worker this actor serves */
  sim_envelope *outstanding; /* doubly linked */
  sim_envelope *delivered;   /* received at their destination: wait for them */
  double send_debt;          /* cost.send_per_message_s of sends not yet paid */
  const struct sim_node *node; /* the node the actor runs on (its costs' pace) */
  sim_thread thread;           /* the actor as a thread of its machine */
  /* The thread it works as now, when not its own: a node's server reads
   * messages as the worker that waits for them (server.c). */
  sim_thread *as;
};

/* ---------------------------------------------------------------- nodes */

/* latency_bandwidth: what a sender knows of its route to one node. */
typedef struct {
  double *sent_by;    /* when the route's first link has sent out what it was
                         given: that link's (latency_bandwidth.c), or own_sent_by */
  double own_sent_by; /* the pair's, when its first link shares nothing */
  /* When the route's last link (the receiver's down link) has delivered
   * what it was given: that link's; NULL for a route of one link or a last
   * link that shares nothing. */
  double *recv_by;
  sg_link_t last;     /* that link */
  double latency, bandwidth; /* the route's, as of route_epoch */
  double last_bandwidth;     /* the last link's, as of route_epoch */
  uint64_t epoch;     /* 0: not looked up yet */
} sim_pair;

/* latency_bandwidth: a message on its way, in its destination's heap: when
 * it arrives, and a run-wide send number that breaks ties (the heap orders
 * by these without touching the envelopes). */
typedef struct {
  double arrive;
  uint64_t seq;
  sim_envelope *e;
} sim_arrival;

/* latency_bandwidth: a node's messages on their way to it, by arrival. */
typedef struct {
  sim_arrival *heap;      /* min-heap on (arrive, seq) */
  size_t count, cap;
  sg_cond_t cond;         /* the server waits here, its mutex held for life */
  sg_mutex_t mutex;
  bool waiting;           /* the server waits: a sender may have to notify */
  double wake_at;         /* when it wakes by itself (INFINITY: never) */
  sim_pair *pairs;        /* this node as a sender, by destination; lazily */
} sim_arrivals;

/* CM02, LV08 (inbox.c): one sending node's messages to a node. Until the
 * pair opens they travel through the node's hello mailbox; once it has, through
 * a mailbox of their own that the node's receiver always listens on. */
typedef struct {
  sg_mailbox_t mbox;     /* made when the pair opens */
  void *payload;         /* where the receiver's get on mbox puts the envelope */
  uint32_t hello;        /* sent through hello and not yet arrived */
  bool open;             /* the pair's sends go to mbox (the receiver is its
                            permanent receiver: transfers start when sent) */
  bool listening;        /* the receiver has a get on mbox (once hello is 0) */
} sim_inpair;

/* CM02, LV08: a node's incoming messages (inbox.c). Its receiver actor
 * waits for all of them at once and queues them as they arrive; its server
 * takes them from that queue. */
typedef struct {
  sg_mailbox_t hello;    /* pairs not open yet; the receiver is its permanent receiver */
  void *hello_payload;
  sim_inpair *pairs;     /* by sending node; NULL until the first message */
  sg_comm_t *comms;      /* the receiver's gets: [0] on hello, then one per open pair */
  uint32_t *from;        /* comms[i]'s sending node (i >= 1) */
  size_t count, cap;
  sim_envelope *arrived, *arrived_tail; /* in arrival order (next_delivered) */
  uint32_t arrived_count;
  sg_cond_t cond;        /* the server waits here, its mutex held for life */
  sg_mutex_t mutex;
  bool server_waiting;
} sim_inbox;

/* A node's I/O thread (io_thread.c): with placement, the work that
 * cost.io_per_message_s owes on its machine's cores, done by an actor of
 * its own in batches. */
typedef struct {
  double owed;           /* seconds of a core not yet worked off */
  uint64_t pending;      /* messages whose work is owed */
  bool started, waiting; /* its actor exists; it waits for work */
  uint64_t wakeups;      /* batches it slept before (the node's report) */
  double cpu_s;          /* seconds of core it worked off (the node's report) */
  uint32_t *touched;     /* per peer, the batch that last served its connection */
  uint32_t *event_at;    /* per peer, the batch whose message on the path paid its event */
  uint32_t batch;        /* the batch now gathering (from 1; 0: never) */
  uint64_t touches;      /* peers the batch gathering serves */
  /* Messages on their way through it, for the batch gathering, in the order
   * they came: arrived from another node, to be read and handed to the
   * server (io_read on the path), and sent to another node, to be put on
   * their way (io_send on the path). */
  sim_envelope *queue, *queue_tail;
  sg_cond_t cond;
  sg_mutex_t mutex;
} sim_io;

typedef struct sim_node {
  sim_state *run;
  uint32_t id;
  ps_node *core;
  const sim_straggler *slow; /* its straggler's phases, or NULL (stragglers.c) */
  sg_host_t host;
  sim_inbox inbox;        /* CM02, LV08: SimGrid carries the messages */
  sim_arrivals arrivals;  /* latency_bandwidth: latency_bandwidth.c carries them */
  sim_worker *workers;    /* this node's workers (NULL on a server-only node) */
  uint32_t num_workers;   /* workers_per_node, or 0 on a server-only node */
  sim_outbox server_out, timer_out, receiver_out, io_out;
  sim_io io;
  uint32_t machine;       /* the machine it runs on (placement) */
  /* The timer actor (started when a timer is first due). */
  bool timer_started;
  bool timer_busy;        /* inside ps_node_on_timer */
  double timer_armed;     /* the due time it sleeps toward (INFINITY: none) */
  sg_cond_t timer_cond;
  sg_mutex_t timer_mutex;
  uint64_t local_charged; /* local accesses already charged to a worker */
  /* Shared accesses (cost.shared_*) already charged: the workers', and the
   * handling thread's, each as keys and floats. */
  uint64_t shared_charged, shared_floats_charged;
  uint64_t handled_charged, handled_floats_charged;
  uint32_t workers_running; /* of this node: at 0 its replicas hand on deltas */
  bool server_busy;       /* its server has taken a message and not asked for the next */
} sim_node;

struct sim_worker {
  sim_node *node;
  run_worker rw;          /* handle, stream, sampler, status, driver stats */
  sim_outbox out;
  sg_cond_t done_cond;    /* signalled by wake */
  sg_mutex_t mutex;       /* held by the worker for its whole life */
  bool waiting;           /* blocked in wait: wake must notify */
  bool finished;
  int64_t clock_seen;     /* steps already counted for progress */
  double wait_since;      /* when its present wait began */
  ps_ticket wait_ticket;  /* what it waits for (the watchdog's message) */
  /* Run-queue model: its ticket is done, but the server still reads as its
   * thread; it goes on when the server is done with that message. */
  bool lead_wait;
};

struct sim_state {
  const run_setup *setup;
  sim_cost cost;
  /* Placement (cluster.machines): costs are work on the machine's cores, at
   * core_speed flop/s a second; without it, a sleep of their own core. */
  bool shared_cores;
  bool io_read_on_path; /* cluster.machines.io_read_on_path, with placement */
  bool io_send_on_path; /* cluster.machines.io_send_on_path, with io_read_on_path */
  /* The fraction of its work on a message after which an I/O actor hands
   * it on (io_thread.c): 1, or with io_send_on_path what the calibrated
   * loopback latency gives (sim.h). */
  double io_handoff;
  double core_speed;
  uint32_t workers_per_node;
  sim_node *nodes;
  uint32_t num_nodes;
  /* Per node: the CPU seconds its actors spent (sim_note_cpu), for its
   * report. A pointer, so that actors holding a const run can add to it. */
  double *cpu_s;
  /* Placement: per machine, the actors executing on its cores right now
   * (sim_execute), and the cores each machine has: a server that wakes
   * when they are all busy waits cost.wakeup_wait_s for one (server.c). */
  uint32_t *executing;
  uint32_t machine_cores;
  /* Run-queue model (cores.c): per machine; NULL under the shared model or
   * without placement. slice: cluster.machines.slice. */
  sim_cores *cores;
  uint32_t n_cores;
  double slice;
  /* cluster.machines.preempt, preempt_wait_s, preempt_per_thread_s. */
  bool preempt;
  double preempt_wait_s, preempt_per_thread_s;
  sim_worker *workers;
  uint32_t num_workers;
  /* Envelope pool. */
  sim_envelope *free_envelopes;
  sim_envelope_chunk *chunks;
  bool send_failed;          /* a message could not be sent: run invalid */
  /* latency_bandwidth (latency_bandwidth.c): messages bypass SimGrid's network. */
  bool direct;
  uint64_t sends;            /* messages sent so far (tie-break order) */
  uint64_t route_epoch;      /* bumped when a link's bandwidth changes */
  struct sim_link_queue *link_queues; /* every link's that a route starts on */
  /* Stragglers with phases: one actor's state per machine (stragglers.c;
   * unused entries zero), or NULL. Freed in teardown. */
  sim_straggler_actor *slow_actors;
  /* Termination. */
  uint64_t in_flight;        /* messages sent and not yet handled */
  uint32_t workers_running;
  uint32_t timers_busy;
  bool stopping;             /* quiescent: nothing will happen any more */
  double quiet_time;         /* simulated time it became so */
  sg_cond_t quiet_cond;
  sg_mutex_t quiet_mutex;
  /* Progress. */
  uint64_t steps_total, steps_done, next_report;
  /* The deadline of the waits (worker.c's watchdog): the run fails once no
   * step was done anywhere for timeout_s since progress_at while a worker
   * waits; `stuck` then says which worker waited for what. */
  double timeout_s, progress_at;
  char stuck[384];
  void (*progress)(void *ctx, double sim_time_s, double fraction);
  void *progress_ctx;
};

/* run.c: starts an actor on host running entry(0, NULL), with `out` as its
 * data. */
void sim_actor_spawn(const char *name, sg_host_t host, void (*entry)(int, char **),
                     sim_outbox *out);
/* The calling actor, on node n, spends `seconds` of a core's time on a cost
 * of the cost model: work on its machine's shared cores with placement, else
 * a sleep, stretched through the phases of n's straggler if it has some. */
void sim_spend(const sim_state *run, const sim_node *n, double seconds);
/* Whether cost.shared_* charge anything (the cores then count them). */
static inline bool sim_counts_shared(const sim_cost *c) {
  return c->shared_per_key_s > 0 || c->shared_per_byte_s > 0;
}
/* What `keys` shared accesses of `floats` value floats in all cost. */
static inline double sim_shared_cost(const sim_cost *c, uint64_t keys, uint64_t floats) {
  return c->shared_per_key_s * (double)keys + c->shared_per_byte_s * 4.0 * (double)floats;
}
/* The calling actor, on node n, executes `flops` on its host; with
 * placement counted among the actors executing on n's machine meanwhile. */
void sim_execute(const sim_state *run, const sim_node *n, double flops);
/* With placement: whether every core of n's machine is executing. */
bool sim_machine_busy(const sim_state *run, const sim_node *n);
/* Counts `seconds` of a core's time (at host_speed) that an actor of node n
 * spent, toward the node's cpu_s: sim_spend does for every cost it charges,
 * a worker for its flops. Costs charged otherwise must call it too. */
void sim_note_cpu(const sim_state *run, const sim_node *n, double seconds);

/* cores.c: the run-queue model of a machine's cores. */
bool sim_run_queue(const sim_state *run);
int sim_cores_init(sim_state *run, uint32_t machines);
void sim_cores_free(sim_state *run);
/* Thread t, of an actor of a node on `machine`, runs `seconds` of a core:
 * on the core it holds, else on one it waits for in the run queue; it
 * keeps the core afterwards, until it blocks. The calling actor executes. */
void sim_cpu_run(const sim_state *run, sim_thread *t, uint32_t machine, double seconds);
/* Before a wait: t gives up the core it holds (nothing without one, or
 * outside the run-queue model). */
void sim_cpu_block(const sim_state *run, sim_thread *t);
/* Before a wait on cond (mutex held) that a notifier ends by clearing
 * *waiting, which the caller set: t gives its core up, then the caller waits
 * until notified or timeout_s has passed (INFINITY: none), unless *waiting
 * went false meanwhile. Giving a core to a queued thread is a simcall (a
 * semaphore's release), where the calling actor yields and other actors run:
 * a notify then finds nobody waiting on cond and is lost, and with *waiting
 * cleared no notifier would come again. */
void sim_cpu_block_wait(const sim_state *run, sim_thread *t, const bool *waiting,
                        sg_cond_t cond, sg_mutex_t mutex, double timeout_s);
/* The calling actor's thread now (its own, or the one it works as). */
sim_thread *sim_self_thread(void);
void sim_cpu_block_self(const sim_state *run);

/* messages.c */
void sim_outbox_init(sim_outbox *out, sim_state *run, void *owner);
/* The env a node's core sends and wakes through. */
void sim_node_env(sim_node *n, ps_env *env);
/* The next message that has arrived at n, in arrival order (FIFO per
 * sending node); blocks until one has. *slept: whether none had when it was
 * called (the server slept and woke for it). */
sim_envelope *sim_receive(sim_node *n, bool *slept);
/* How many messages have arrived at n and wait to be taken. */
uint32_t sim_arrived_waiting(const sim_node *n);
/* Done with a received envelope (its buffer was taken). */
void sim_received(sim_envelope *e);
/* Waits for the sends of the calling actor that have been delivered, and
 * pays the sending cost of the messages it sent since it last did. */
void sim_outbox_reap(sim_outbox *out);
/* Waits for every send of the calling actor (before it exits). */
void sim_outbox_drain(sim_outbox *out);
/* After the run: drops what daemons never waited for; frees the pool. */
void sim_messages_free(sim_state *run);

/* latency_bandwidth.c: the latency_bandwidth network model. */
int sim_arrivals_init(sim_node *n);
/* Queues e (from node src, e->len bytes) for node dst. 0, or -1 when out of
 * memory (the caller then owns e and its buffer). */
int sim_deliver_direct(sim_state *run, sim_node *src, uint32_t dst, sim_envelope *e);
/* The server's receive: blocks until the next message has arrived;
 * *slept as sim_receive says. */
sim_envelope *sim_arrivals_next(sim_node *n, bool *slept);
/* Messages in n's heap whose arrival time has come. */
uint32_t sim_arrivals_waiting(const sim_node *n);
/* After the run: frees what never arrived (buffers) and n's state; the
 * envelopes themselves belong to the pool. */
void sim_arrivals_free(sim_node *n);
/* A link's bandwidth changed: routes are looked up again. */
void sim_routes_changed(sim_state *run);
/* After the run: frees the links' queues. */
void sim_link_queues_free(sim_state *run);

/* inbox.c: CM02 and LV08's inboxes. 0, or -1 on no memory. */
int sim_inbox_init(sim_node *n);
/* Starts n's receiver actor: before any actor that sends. */
void sim_inbox_spawn(sim_node *n);
/* Puts e (from node src, its buffer's length as the simulated size) on its
 * way to node dst. 0, or -1 on no memory (the caller then owns e). */
int sim_inbox_send(sim_state *run, uint32_t src, uint32_t dst, sim_envelope *e);
sim_envelope *sim_inbox_next(sim_node *n, bool *slept);
/* After the run: frees n's inbox (its envelopes belong to the pool and to
 * their senders' outboxes). */
void sim_inbox_free(sim_node *n);

/* io_thread.c: n's I/O thread owes a message's work, sent to or read from
 * `peer` over its connection (nothing without placement). */
void sim_io_owe(sim_node *n, uint32_t peer);
/* io_thread.c: e has arrived at n from another node: n's I/O thread reads it
 * and then hands it to the server (sim_inbox_deliver) once the batch that
 * reads it is done. False (nothing done) where n has no I/O actor. */
bool sim_io_read(sim_node *n, sim_envelope *e);
/* io_thread.c: e, sent by an actor of n to another node (e->dst), goes on its
 * way once n's I/O thread has sent it (sim_put), with io_send on the path.
 * Called from inside the core: it only notifies. */
void sim_io_send(sim_node *n, sim_envelope *e);
/* messages.c: n's I/O actor puts e on its way to e->dst (its comm is the I/O
 * actor's); if it cannot, e is dropped and the run marked invalid. */
void sim_put(sim_node *n, sim_envelope *e);
/* inbox.c: e is read: queued for n's server, which is woken if it sleeps. */
void sim_inbox_deliver(sim_node *n, sim_envelope *e);
/* Starts n's I/O actor where it will have work: with placement and a cost.
 * 0, or -1 out of memory. */
int sim_io_spawn(sim_node *n);
void sim_io_free(sim_node *n);

/* server.c: the server and timer actors, the end of the run. */
void sim_server_main(sim_node *n);
/* Re-arms n's timer actor if the core's next timer moved earlier. */
void sim_node_poke_timer(sim_node *n);
/* Marks the run stopping if every worker is done and nothing is in flight. */
void sim_check_quiet(sim_state *run);

/* worker.c: the worker actor and its driver env. */
void sim_worker_main(sim_worker *w);
/* worker.c: whether the node's server is handling a message as w's thread
 * (w waits and reads the node's messages itself: server.c). */
bool sim_worker_reading(const sim_worker *w);
/* worker.c: starts the daemon that fails a run whose waits passed their
 * deadline (timeout_s without a step done). */
void sim_watchdog_spawn(sim_state *run, sg_host_t host);

/* stragglers.c: one daemon actor per straggler with phases, which sets its
 * host's pstate and its link's bandwidth at every phase boundary. Spawn
 * after the servers and before the workers (a phase from 0 then holds
 * before any work starts). 0, or -1 with a message (a link not found). */
int sim_stragglers_spawn(sim_state *run, const sim_cluster *c, char *err, size_t errlen);

#endif
