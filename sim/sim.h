/*
 * sim/: the SimGrid backend. Runs one experiment run on a simulated cluster
 * and reports its metrics.
 *
 * The cluster arrives typed (experiments/ parses and validates the spec's
 * "cluster" object, units included); workload and policy arrive as their JSON
 * objects, which the run layer (run/) turns into the run's setup: sim/ adds
 * only transport (mailboxes), time (SimGrid's clock) and compute (flops on
 * hosts, the cost model). SimGrid keeps one engine
 * per process, so sim_run runs at most once per process: the experiments
 * runner forks a child per run.
 */
#ifndef PSLAB_SIM_SIM_H
#define PSLAB_SIM_SIM_H

#include "run/run.h"

#include <stddef.h>
#include <stdint.h>

struct cJSON;

/* A slow node. With placement (sim_machines) the factors apply to the node's
 * machine, and a machine has at most one straggler among its nodes.
 *
 * Without phases (n_phases 0) it is slow for the whole run: its host's speed
 * and its link's bandwidth are those of the platform, times the factors
 * (the server's handling costs, a sleep of a core of its own without
 * placement, are not slowed). Specs never give this form: the experiments
 * layer makes every straggler phases (a whole-run one: one phase from 0),
 * so that it slows its server too, as on the real backend. With phases (run/run.h: sorted, disjoint;
 * speed_factor and bandwidth_factor then 1) it is slow only in them: an
 * actor changes the host's speed (a pstate per phase) and the link's
 * bandwidth at each boundary, and its server's handling costs stretch with
 * the speed (run_phase_stretch) as the real backend's throttle does. */
typedef struct {
  uint32_t node;
  double speed_factor;     /* host speed multiplied by this (0 < f) */
  double bandwidth_factor; /* the node's link bandwidth multiplied by this */
  const run_phase *phases; /* borrowed; NULL for a straggler of the whole run */
  size_t n_phases;
} sim_straggler;

/* What the simulated servers and workers pay besides the network and flops:
 * time of a thread's core (a sleep when the thread has a core of its own,
 * work on the machine's cores with placement: sim_machines). */
typedef struct {
  double per_message_s;    /* a server handling one message */
  double per_key_s;        /* ... plus per key in it */
  double per_byte_s;       /* ... plus per byte of it */
  double local_per_key_s;  /* a worker accessing one key in local memory */
  double send_per_message_s; /* the thread that sends a message, per message */
  /* A server that found no message waiting and slept pays this once when
   * the next one comes (a thread wake-up: the reader's and ZeroMQ's I/O
   * thread's), before handling it; messages that were already waiting when
   * it finished the last one pay per_message_s alone. */
  double wakeup_s;
  /* The I/O thread of each end (ZeroMQ's, in the real backend), per message:
   * work on the node's machine alongside its other threads, not on the
   * sending or handling thread's own time, delaying no message. Only with
   * placement: without it every thread has a core of its own, and this
   * changes nothing simulated. */
  double io_per_message_s;
  /* An I/O thread that had nothing to do and slept pays this, as work on
   * its machine beside the others, when the next message's work comes (its
   * wake-up), once for what it then finds: placement only, as
   * io_per_message_s. */
  double io_wakeup_s;
  /* A server that slept and wakes while every core of its machine is busy
   * (placement only) waits this long for a core before it runs: a wait, not
   * work (the core goes on with what it was doing). */
  double wakeup_wait_s;
  /* Real math: a worker adds each pulled value's initial value (a hash of
   * its key and index, computed, not stored) before its math; this per
   * float, as work of the worker's core beside the step's flops. */
  double initial_per_float_s;
  /* A key access that finds the key last touched by another thread of its
   * node (another worker, or the thread handling messages; the core counts
   * them: ps_node_config.count_shared) pays this more, plus
   * shared_per_byte_s per byte of the key's value: its cache lines come
   * from the other thread's core. Charged as local_per_key_s is, to the
   * worker whose calls made them, or to the handling thread after the
   * message (work on its core once the answers left). */
  double shared_per_key_s, shared_per_byte_s;
  /* A worker's own work per step beyond what the figures above and the
   * step's flops charge: the workload's bookkeeping (drawing keys, lists of
   * them, finding a key's slot) and real math slower than its flop count at
   * host_speed. It belongs to a workload: measured as the CPU a real run of
   * it on one node of one worker spends per step beyond what the simulator
   * charges the same run. Charged to the worker as local accesses are. */
  double step_s;
} sim_cost;

typedef enum { SIM_SCHED_RUN_QUEUE, SIM_SCHED_SHARED } sim_scheduler;

/* A thread's slice when a spec gives none: 3 ms, the order of Linux's (its
 * scheduler's base slice times its tick); `pslab calibrate` measures the
 * machine's. */
#define SIM_SLICE_DEFAULT 3e-3
/* sim_cluster.timeout_s by default: the real backend's (real/address.c). */
#define SIM_TIMEOUT_DEFAULT 30

/* Where nodes run. With count 0 (the default) every node has a machine of
 * its own with one core per worker, and its server thread a core of its own
 * besides. With count >= 1, nodes share `count` machines of `cores` cores:
 * every thread a node runs on the real backend (its workers, its server) is
 * an actor competing for its machine's cores, the cost model's figures are
 * work on those cores (seconds of a core at host_speed), and nodes on one
 * machine talk over the machine's loopback link (shared by its flows). */
typedef struct {
  uint32_t count;            /* machines; 0: no placement */
  uint32_t cores;            /* cores of each machine (>= 1 with count) */
  const uint32_t *place;     /* borrowed: node i runs on machine place[i];
                                NULL: in blocks, node i on i * count / nodes */
  double loopback_latency;   /* seconds */
  double loopback_bandwidth; /* bytes/s */
  /* How a machine's cores serve its threads (sim/cores.c): a run queue
   * (the default: a thread runs its bursts at a core's speed and waits its
   * turn for a core, the least run first) or SimGrid's fair sharing
   * (every executing thread at cores / executing of a core). */
  sim_scheduler scheduler;
  /* Run queue: how long a thread runs on while another waits for its core
   * (seconds; `pslab calibrate` measures it; 0: SIM_SLICE_DEFAULT). */
  double slice;
  /* Run queue: whether a woken thread takes a core from a computing one
   * (sim/cores.c), as the kernel's wake-up preemption does, after waiting
   * preempt_wait_s plus preempt_per_thread_s for each thread per core past
   * the first that runs or waits there (`pslab calibrate` measures both);
   * false: it waits until a core is given up. */
  bool preempt;
  double preempt_wait_s, preempt_per_thread_s;
  /* Where a node's I/O thread reads a message from another node (sim/
   * io_thread.c): beside its way (false, the default: the work is charged
   * on the machine's cores and the server may handle the message before
   * it is done) or on it (true: the server gets the message once the I/O
   * actor has read it, so a busy I/O thread delays it). On the path, the
   * loopback link's latency is loopback_latency less one read
   * (cost.io_wakeup_s + cost.io_per_message_s): the calibrated latency is
   * a lone message's, its read included. CM02 and LV08 only. */
  bool io_read_on_path;
  /* Where it sends a message to another node (with io_read_on_path only):
   * beside its way (false, the default: the sender's thread puts it on its
   * way, the work is charged on the machine's cores) or on it (true: the
   * message leaves once the sending node's I/O actor has done its part of
   * the send). With both on the path, an I/O actor passes each message on
   * after the fraction h = min(1, L / (2 P)) of its work, L the
   * loopback_latency and P one pass (cost.io_wakeup_s +
   * cost.io_per_message_s): a lone message's latency as calibrated is its
   * two passes up to their handoffs. The loopback link's latency is then
   * L - 2 h P (0 unless L > 2 P). */
  bool io_send_on_path;
  /* For the real backend (every node on one machine): each machine's nodes
   * run on cores of their own of it (real_run_args.pin_*), so the real run
   * has the layout simulated here. Machines may then outnumber the nodes
   * (a profile of `pslab calibrate --pin` has one per core): those beyond
   * run nothing. Changes nothing simulated. */
  bool pin;
} sim_machines;

/* The network model of sim/latency_bandwidth.c (the others are SimGrid's). */
#define SIM_MODEL_LATENCY_BANDWIDTH "latency_bandwidth"

typedef enum { SIM_TOPOLOGY_STAR = 0, SIM_TOPOLOGY_BACKBONE = 1 } sim_topology;

typedef struct {
  uint32_t nodes;
  uint32_t workers_per_node;
  double host_speed;         /* flop/s */
  double bandwidth;          /* bytes/s of each node's link */
  double latency;            /* seconds of each node's link */
  /* "CM02" or "LV08" (SimGrid's network/model), or "latency_bandwidth":
   * no SimGrid flows, a message takes latency + size / bandwidth of its
   * route, queued behind what was sent earlier over the route's first link
   * (sim/latency_bandwidth.c). */
  char network_model[24];
  sim_topology topology;
  double backbone_bandwidth; /* bytes/s, with SIM_TOPOLOGY_BACKBONE */
  double backbone_latency;   /* seconds, with SIM_TOPOLOGY_BACKBONE */
  sim_straggler *stragglers; /* borrowed; n_stragglers entries */
  size_t n_stragglers;
  const char *platform_file; /* the user's SimGrid XML, or NULL */
  const char *const *hosts;  /* with platform_file: host names, one per node */
  size_t n_hosts;
  sim_cost cost;
  sim_machines machines;
  /* Roles and scaling, read by both backends (run_args, through
   * sim_cluster_shape): servers and worker nodes (0: every node), and the
   * scaling schedule (borrowed). */
  uint32_t servers, worker_nodes;
  const ps_scale_step *scale;
  size_t n_scale;
  /* Simulated seconds without a step done anywhere after which a worker's
   * wait fails the run, naming what it waits for (cluster.timeout_s, as the
   * real backend's waits; 0: SIM_TIMEOUT_DEFAULT). */
  double timeout_s;
} sim_cluster;

/* Defaults: 1 node, 1 worker, 10 Gf, 10 Gbps, 50 us, CM02, star (backbone,
 * when chosen: 40 Gbps, 0 s), and the cost model: a server pays 1 us per
 * message, 50 ns per key and 0.1 ns per byte; a worker pays 20 ns per key it
 * accesses in local memory; sending costs nothing. host_speed is per core:
 * without placement a host has workers_per_node cores. No placement; a
 * machine's loopback, when there is placement: 0 s, 10 GB/s. */
void sim_cluster_default(sim_cluster *c);

/* Checks c: sizes, speeds, network model, topology, stragglers, costs,
 * placement (not platform_file and hosts, which sim_run checks).
 * 0, or -1 with a message in err naming the field ("cluster.machines: ..."). */
int sim_cluster_check(const sim_cluster *c, char *err, size_t errlen);
/* With the I/O send and read on the message's path, for a lone message's
 * calibrated latency and one I/O pass (cost.io_wakeup_s +
 * cost.io_per_message_s): the fraction of its work on a message after which
 * a node's I/O actor passes it on, min(1, latency / (2 pass)) (1 without I/O
 * work); and the wire's part of the latency beyond the two passes up to
 * their handoffs, latency - 2 handoff pass (0 unless latency > 2 pass). */
double sim_io_handoff(double latency, double pass);
double sim_io_wire_latency(double latency, double pass);
/* The machine node runs on: with placement (machines.count > 0) its
 * machines.place entry, or in blocks (node i on i * count / nodes); without
 * it, machine `node`. */
uint32_t sim_node_machine(const sim_cluster *c, uint32_t node);

/* The run's shape as a cluster gives it: sets a's nodes, workers_per_node,
 * servers, worker_nodes and scaling schedule (borrowed) from c, and
 * nothing else. */
void sim_cluster_shape(const sim_cluster *c, run_args *a);

typedef struct {
  /* What the run is made of (run/run.h). Its shape is the cluster's:
   * sim_run takes nodes, workers_per_node, servers, worker_nodes and scale
   * from `cluster` (sim_cluster_shape), whatever run holds of them. Of
   * run.memory only `limit` is the caller's (bytes the run may use; 0: no
   * check): a run estimated to need more is refused before it starts. */
  run_args run;
  const sim_cluster *cluster;
  /* Called now and then with simulated time and progress in [0,1]; may be NULL. */
  void (*progress)(void *ctx, double sim_time_s, double fraction);
  void *progress_ctx;
} sim_run_args;

/* Runs one simulation and returns its metrics as a new JSON object (caller
 * frees): run_metrics (run/run.h) of every node's report, time_s being the
 * simulated time when every worker was done and no message was in flight.
 * NULL with a message in err on error. */
struct cJSON *sim_run(const sim_run_args *args, char *err, size_t errlen);

#endif
