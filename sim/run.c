/*
 * sim_run: one experiment run on a simulated cluster, from configuration to
 * metrics.
 *
 * Order of events: configure the policy and create the workload (so a bad
 * spec fails before SimGrid starts); start SimGrid with its configuration;
 * load the platform (written from the cluster, or the user's file); create a
 * ps_node per node and a stream per worker; spawn a receiver actor per
 * node (CM02, LV08: sim/inbox.c), a server actor per node (and its I/O
 * actor, with placement and an I/O cost: sim/io_thread.c), then an actor per
 * straggler with phases, then a worker actor per worker (receivers first:
 * actors first run in creation order, so every inbox has its receiver
 * before anything is sent; stragglers before workers, so a phase from 0
 * holds before any work starts); run; check that every worker finished
 * and nothing was lost; collect metrics; free everything.
 *
 * SimGrid configuration (all through simgrid_init's command line):
 *   network/model          CM02 or LV08, as the cluster says (latency_bandwidth:
 *                          CM02, never used: sim/latency_bandwidth.c carries messages).
 *   With CM02, the plain textbook model: a lone message of S bytes on a route
 *   of latency L and bottleneck bandwidth B takes L + S/B, and flows share a
 *   link max-min fairly:
 *     network/crosstraffic:0   no 5% reverse-direction traffic per flow
 *                              (SimGrid's compound host model turns it on);
 *     network/TCP-gamma:0      no TCP window bound gamma/(2L) on a flow's
 *                              rate (4 MiB by default, which caps a 10 ms
 *                              route at 210 MB/s); SimGrid's solver ignores
 *                              bounds <= 0, so 0 removes it;
 *     network/weight-S:0       CM02's own default, said explicitly: a flow's
 *                              share is weighted by its route latency only.
 *   LV08 keeps SimGrid's calibrated defaults (latency factor 13.01, bandwidth
 *   factor 0.97, weight-S 20537, cross-traffic): that is what LV08 means.
 *   --log=root.thresh:critical keeps SimGrid quiet (stdout stays clean;
 *   a deadlock report, which is critical, still reaches stderr).
 */
#include "sim/platform.h"
#include "sim/sim_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/cond.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/mutex.h>

/* What sim_run sets up before the simulation and tears down after. */
typedef struct {
  const sim_run_args *args;
  run_setup *setup; /* policy, workload, layout, hot keys, samples (run/) */
  sim_state run;
  char *err;
  size_t errlen;
} sim_setup;

static int fail(sim_setup *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->err, s->errlen, fmt, ap);
  va_end(ap);
  return -1;
}

/* --------------------------------------------------------------- engine */

static int engine_start(sim_setup *s) {
  static bool started; /* SimGrid allows one engine per process */
  if (started) return fail(s, "sim_run: SimGrid runs once per process (fork a child per run)");
  started = true;
  const char *name = s->args->cluster->network_model;
  /* latency_bandwidth carries no message through SimGrid's network (its
   * model is then never asked): the plain CM02 below stands in. */
  const bool cm02 = strcmp(name, "CM02") == 0 || strcmp(name, SIM_MODEL_LATENCY_BANDWIDTH) == 0;
  static char model[64]; /* SimGrid may keep pointers into argv */
  snprintf(model, sizeof model, "--cfg=network/model:%s", cm02 ? "CM02" : name);
  char *argv[] = {"pslab-sim", "--log=root.thresh:critical", model,
                  "--cfg=network/crosstraffic:0", "--cfg=network/TCP-gamma:0",
                  "--cfg=network/weight-S:0", NULL};
  int argc = cm02 ? 6 : 3;
  argv[argc] = NULL;
  simgrid_init(&argc, argv);
  return 0;
}

static int platform_load(sim_setup *s) {
  const sim_cluster *c = s->args->cluster;
  if (c->platform_file) {
    if (access(c->platform_file, R_OK) != 0)
      return fail(s, "cluster.platform_file: cannot read %s", c->platform_file);
    simgrid_load_platform(c->platform_file);
    return 0;
  }
  char path[512];
  if (sim_platform_write_temp(c, path, sizeof path, s->err, s->errlen) != 0) return -1;
  simgrid_load_platform(path);
  unlink(path);
  return 0;
}

static sg_host_t node_host(sim_setup *s, uint32_t i) {
  const sim_cluster *c = s->args->cluster;
  char name[24];
  if (!c->platform_file) sim_machine_name(c, sim_node_machine(c, i), name, sizeof name);
  const char *host = c->platform_file ? c->hosts[i] : name;
  sg_host_t h = sg_host_by_name(host);
  if (!h) fail(s, "cluster.hosts[%u]: no host \"%s\" in the platform", (unsigned)i, host);
  return h;
}

void sim_actor_spawn(const char *name, sg_host_t host, void (*entry)(int, char **),
                     sim_outbox *out) {
  sg_actor_t a = sg_actor_init(name, host);
  sg_actor_set_data(a, out);
  sg_actor_start(a, entry, 0, NULL);
}

void sim_note_cpu(const sim_state *run, const sim_node *n, double seconds) {
  if (n && run->cpu_s && seconds > 0) run->cpu_s[n->id] += seconds;
}

void sim_execute(const sim_state *run, const sim_node *n, double flops) {
  if (n && sim_run_queue(run)) {
    sim_cpu_run(run, sim_self_thread(), n->machine, flops / run->core_speed);
    return;
  }
  bool counted = run->shared_cores && n && run->executing;
  if (counted) run->executing[n->machine]++;
  sg_actor_execute(flops);
  if (counted) run->executing[n->machine]--;
}

bool sim_machine_busy(const sim_state *run, const sim_node *n) {
  return run->shared_cores && run->executing &&
         run->executing[n->machine] >= run->machine_cores;
}

void sim_spend(const sim_state *run, const sim_node *n, double seconds) {
  if (!(seconds > 0)) return;
  sim_note_cpu(run, n, seconds); /* the charge, not its stretch by a straggler */
  if (run->shared_cores) { /* the host's pstate paces it, phases or not */
    sim_execute(run, n, seconds * run->core_speed);
  } else if (n && n->slow) {
    double now = simgrid_get_clock();
    sg_actor_sleep_for(run_phase_stretch(n->slow->phases, n->slow->n_phases, now, seconds));
  } else {
    sg_actor_sleep_for(seconds);
  }
}

static void server_entry(int argc, char **argv) {
  (void)argc;
  (void)argv;
  sim_outbox *out = sg_actor_self_get_data();
  sim_server_main(out->owner);
}

static void worker_entry(int argc, char **argv) {
  (void)argc;
  (void)argv;
  sim_outbox *out = sg_actor_self_get_data();
  sim_worker_main(out->owner);
}

/* ---------------------------------------------------------------- setup */

static int check_args(sim_setup *s) {
  const sim_run_args *a = s->args;
  if (!a || !a->cluster) return fail(s, "sim_run: no cluster");
  const sim_cluster *c = a->cluster;
  if (sim_cluster_check(c, s->err, s->errlen) != 0) return -1;
  if (!c->platform_file) return 0;
  if (c->n_stragglers)
    return fail(s, "cluster.stragglers: expected none with platform_file (slow its hosts and "
                   "links in the platform itself), found %zu", c->n_stragglers);
  if (!c->hosts || c->n_hosts != c->nodes)
    return fail(s, "cluster.hosts: expected %u host names with platform_file, found %zu",
                (unsigned)c->nodes, c->hosts ? c->n_hosts : (size_t)0);
  for (size_t i = 0; i < c->n_hosts; i++)
    if (!c->hosts[i]) return fail(s, "cluster.hosts[%zu]: expected a host name", i);
  return 0;
}

static int configure(sim_setup *s) {
  run_args a = s->args->run;
  sim_cluster_shape(s->args->cluster, &a);
  /* Measured: a node with one worker costs SimGrid about 96 KiB (host,
   * link, the actors' stacks as far as they are touched), its receiver
   * actor (inbox.c) about 16 KiB more, and each pair of nodes that talks
   * under CM02 or LV08 (its mailbox, the receiver's posted get, its entry)
   * about 0.9 KiB: 47 MB more at 256 nodes that all talk to each other
   * (latency_bandwidth makes no mailbox); with placement, each node's I/O
   * actor keeps two stamps per peer (io_thread.c). */
  const sim_cluster *c = s->args->cluster;
  a.memory = (run_memory){.limit = s->args->run.memory.limit,
                          .per_node = 80 << 10,
                          .per_worker = 32 << 10,
                          .per_pair = (strcmp(c->network_model, SIM_MODEL_LATENCY_BANDWIDTH)
                                           ? 1 << 10 : 0) +
                                      (c->machines.count ? 2 * sizeof(uint32_t) : 0),
                          .shared_sends = true}; /* messages.c: env_send_shared */
  /* Random per run, and never read by the simulation: a seal's bytes change
   * nothing simulated (only a message's length does, and that is fixed). */
  run_secret_new(a.secret);
  /* One process, one CPU: GMAC where it has AES-NI and PCLMUL. */
  if (run_seal_choose(ps_seal_gmac_available(), &a.seal, s->err, s->errlen) != 0) return -1;
  s->setup = run_setup_new(&a, s->err, s->errlen);
  return s->setup ? 0 : -1;
}

static int node_init(sim_setup *s, sim_node *n, uint32_t id) {
  sim_state *run = &s->run;
  n->run = run;
  n->id = id;
  n->timer_armed = INFINITY;
  /* Worker nodes are the last ones (layout roles): node id's workers, if
   * it runs any, are those of worker node id - first. */
  const ps_layout *l = run_setup_layout(s->setup);
  n->num_workers = run_node_workers(s->setup, id);
  n->workers = n->num_workers ? &run->workers[(size_t)(id - ps_layout_first_worker_node(l)) *
                                              run->workers_per_node]
                              : NULL;
  n->workers_running = n->num_workers;
  sim_outbox *outs[] = {&n->server_out, &n->timer_out, &n->receiver_out, &n->io_out};
  for (size_t k = 0; k < sizeof outs / sizeof outs[0]; k++) {
    sim_outbox_init(outs[k], run, n);
    outs[k]->node = n;
  }
  const sim_cluster *c = s->args->cluster;
  if (!c->platform_file) n->slow = sim_machine_phases(c, sim_node_machine(c, id));
  n->machine = c->machines.count ? sim_node_machine(c, id) : id;
  if (!(n->host = node_host(s, id))) return -1;
  if ((run->direct ? sim_arrivals_init(n) : sim_inbox_init(n)) != 0)
    return fail(s, "sim_run: out of memory");
  ps_node_config cfg;
  run_node_config(s->setup, id, &cfg);
  sim_node_env(n, &cfg.env);
  n->core = ps_node_new(&cfg);
  if (!n->core) return fail(s, "node %u: the core refused its configuration", (unsigned)id);
  if (ps_node_count_shared(n->core, sim_counts_shared(&run->cost)) != PS_OK)
    return fail(s, "node %u: cost.shared_per_key_s and shared_per_byte_s need fewer than "
                   "65,534 workers a node", (unsigned)id);
  return 0;
}

static int worker_init(sim_setup *s, sim_worker *w, sim_node *n, uint32_t index) {
  w->node = n;
  sim_outbox_init(&w->out, &s->run, w);
  w->out.node = n;
  if (run_worker_init(&w->rw, s->setup, n->core, index, s->err, s->errlen) != 0) return -1;
  w->done_cond = sg_cond_init();
  w->mutex = sg_mutex_init();
  return 0;
}

static int run_init(sim_setup *s) {
  const sim_cluster *c = s->args->cluster;
  sim_state *run = &s->run;
  run->setup = s->setup;
  run->cost = c->cost;
  run->direct = strcmp(c->network_model, SIM_MODEL_LATENCY_BANDWIDTH) == 0;
  run->route_epoch = 1; /* a sim_pair's 0: never looked up */
  run->shared_cores = c->machines.count > 0;
  run->io_read_on_path = run->shared_cores && c->machines.io_read_on_path;
  run->io_send_on_path = run->io_read_on_path && c->machines.io_send_on_path;
  run->io_handoff = run->io_send_on_path
                        ? sim_io_handoff(c->machines.loopback_latency,
                                         c->cost.io_wakeup_s + c->cost.io_per_message_s)
                        : 1;
  run->core_speed = c->host_speed;
  run->workers_per_node = c->workers_per_node;
  run->num_nodes = c->nodes;
  run->num_workers = run_setup_workers(s->setup);
  run->nodes = calloc(run->num_nodes, sizeof *run->nodes);
  run->workers = calloc(run->num_workers, sizeof *run->workers);
  run->cpu_s = calloc(run->num_nodes, sizeof *run->cpu_s);
  run->machine_cores = c->machines.cores;
  run->executing = run->shared_cores ? calloc(c->machines.count, sizeof *run->executing) : NULL;
  if (!run->nodes || !run->workers || !run->cpu_s || (run->shared_cores && !run->executing))
    return fail(s, "sim_run: out of memory");
  run->slice = c->machines.slice > 0 ? c->machines.slice : SIM_SLICE_DEFAULT;
  run->preempt = c->machines.preempt;
  run->preempt_wait_s = c->machines.preempt_wait_s;
  run->preempt_per_thread_s = c->machines.preempt_per_thread_s;
  run->timeout_s = c->timeout_s > 0 ? c->timeout_s : SIM_TIMEOUT_DEFAULT;
  if (run->shared_cores && c->machines.scheduler == SIM_SCHED_RUN_QUEUE &&
      sim_cores_init(run, c->machines.count) != 0)
    return fail(s, "sim_run: out of memory");
  run->workers_running = run->num_workers;
  run->steps_total = run_setup_steps(s->setup);
  run->next_report = (run->steps_total + SIM_PROGRESS_STEPS - 1) / SIM_PROGRESS_STEPS;
  run->progress = s->args->progress;
  run->progress_ctx = s->args->progress_ctx;
  run->quiet_cond = sg_cond_init();
  run->quiet_mutex = sg_mutex_init();
  for (uint32_t i = 0; i < run->num_nodes; i++)
    if (node_init(s, &run->nodes[i], i) != 0) return -1;
  for (uint32_t i = 0; i < run->num_nodes; i++)
    for (uint32_t k = 0; k < run->nodes[i].num_workers; k++)
      if (worker_init(s, &run->nodes[i].workers[k], &run->nodes[i], k) != 0) return -1;
  return 0;
}

static int spawn_actors(sim_setup *s) {
  sim_state *run = &s->run;
  char name[48];
  for (uint32_t i = 0; i < run->num_nodes && !run->direct; i++) sim_inbox_spawn(&run->nodes[i]);
  for (uint32_t i = 0; i < run->num_nodes; i++) {
    snprintf(name, sizeof name, "server-%u", (unsigned)i);
    sim_actor_spawn(name, run->nodes[i].host, server_entry, &run->nodes[i].server_out);
    if (sim_io_spawn(&run->nodes[i]) != 0) return fail(s, "sim_run: out of memory");
  }
  if (sim_stragglers_spawn(run, s->args->cluster, s->err, s->errlen) != 0) return -1;
  for (uint32_t i = 0; i < run->num_nodes; i++) sim_node_poke_timer(&run->nodes[i]);
  if (run->num_nodes) sim_watchdog_spawn(run, run->nodes[0].host);
  for (uint32_t i = 0; i < run->num_workers; i++) {
    sim_worker *w = &run->workers[i];
    snprintf(name, sizeof name, "worker-%u.%u", (unsigned)w->node->id, (unsigned)w->rw.index);
    sim_actor_spawn(name, w->node->host, worker_entry, &w->out);
  }
  return 0;
}

/* ------------------------------------------------------------- outcome */

static int check_outcome(sim_setup *s) {
  sim_state *run = &s->run;
  if (run->stuck[0]) return fail(s, "%s", run->stuck);
  for (uint32_t i = 0; i < run->num_workers; i++) {
    const sim_worker *w = &run->workers[i];
    if (!w->finished)
      return fail(s, "simulation deadlocked at %g s: worker %u.%u never finished (%lld steps "
                     "done)", simgrid_get_clock(), (unsigned)w->node->id, (unsigned)w->rw.index,
                  (long long)ps_worker_clock(w->rw.handle));
    if (w->rw.status != PS_OK)
      return fail(s, "worker %u.%u failed: %s", (unsigned)w->node->id, (unsigned)w->rw.index,
                  run_worker_error(&w->rw));
  }
  if (run->send_failed) return fail(s, "a message could not be sent (out of memory or bad node)");
  uint64_t bad = 0;
  for (uint32_t i = 0; i < run->num_nodes; i++) {
    ps_node_stats st;
    ps_node_get_stats(run->nodes[i].core, &st);
    bad += st.bad_messages;
  }
  if (bad) return fail(s, "%llu messages were rejected by the core", (unsigned long long)bad);
  return 0;
}

static void teardown(sim_setup *s) {
  sim_state *run = &s->run;
  for (uint32_t i = 0; run->workers && i < run->num_workers; i++) {
    sim_worker *w = &run->workers[i];
    run_worker_free(&w->rw);
    if (w->done_cond) sg_cond_destroy(w->done_cond);
    if (w->mutex) sg_mutex_destroy(w->mutex);
  }
  for (uint32_t i = 0; run->nodes && i < run->num_nodes; i++) {
    sim_node *n = &run->nodes[i];
    ps_node_free(n->core);
    if (n->timer_started) {
      sg_cond_destroy(n->timer_cond);
      sg_mutex_destroy(n->timer_mutex);
    }
  }
  if (run->quiet_cond) sg_cond_destroy(run->quiet_cond);
  if (run->quiet_mutex) sg_mutex_destroy(run->quiet_mutex);
  sim_messages_free(run);
  free(run->slow_actors);
  free(run->workers);
  free(run->nodes);
  free(run->cpu_s);
  free(run->executing);
  sim_cores_free(run);
  run_setup_free(s->setup);
}

/* Every node's part (its owned values of some keys, as bytes), concatenated
 * into *all (malloc'd; NULL when empty), as the real backend gathers them. */
static bool gather_parts(sim_setup *s, bool final, uint8_t **all, size_t *len) {
  sim_state *run = &s->run;
  bool ok = true;
  *all = NULL;
  *len = 0;
  for (uint32_t i = 0; ok && i < run->num_nodes; i++) {
    uint8_t *mine;
    size_t n;
    ps_node *core = run->nodes[i].core;
    ok = (final ? run_final_part(s->setup, core, &mine, &n) : run_replica_owned(core, &mine, &n)) ==
         PS_OK;
    uint8_t *grown = ok && n ? realloc(*all, *len + n) : *all;
    ok = ok && (grown || !n);
    if (ok && n) {
      memcpy(grown + *len, mine, n);
      *all = grown;
      *len += n;
    }
    free(mine);
  }
  return ok;
}

/* The replica check: every node's owned values of replicated keys, together,
 * against every node's replicas (the real backend sends them round). */
static bool check_replicas(sim_setup *s, run_node_report *reports) {
  uint8_t *all;
  size_t len;
  bool ok = gather_parts(s, false, &all, &len);
  for (uint32_t i = 0; ok && i < s->run.num_nodes; i++)
    ok = run_replica_check(&reports[i], s->run.nodes[i].core, all, len) == PS_OK;
  free(all);
  return ok;
}

/* The final evaluation (run/final_eval.c) from every node's owned values,
 * in node 0's report, as rank 0 makes it on the real backend. */
static bool final_eval(sim_setup *s, run_node_report *reports) {
  uint8_t *all;
  size_t len;
  bool ok = gather_parts(s, true, &all, &len);
  ok = ok && run_final_eval(s->setup, all, len, &reports[0]) == PS_OK;
  free(all);
  return ok;
}

/* The trained parameters, when the run saves them: every node's part, then
 * the merge (run/), as the real backend's nodes and rank 0 do. */
static int save_params(sim_setup *s) {
  sim_state *run = &s->run;
  int rc = 0;
  for (uint32_t i = 0; rc == 0 && i < run->num_nodes; i++)
    rc = run_params_save_part(s->setup, run->nodes[i].core, i, s->err, s->errlen);
  if (rc == 0) return run_params_merge(s->setup, s->err, s->errlen);
  run_params_discard(s->setup);
  return rc;
}

/* What the run queue counted of a thread (no turns without one). */
static run_thread_sched thread_sched(const sim_thread *t) {
  return (run_thread_sched){
      .turns = t->turns, .ran_s = t->ran_s, .wait_s = t->wait_s, .blocked_s = t->blocked_s};
}

/* Every node's report, reduced by the run layer as the real backend's are. */
static cJSON *collect_metrics(sim_setup *s) {
  sim_state *run = &s->run;
  run_node_report *reports = calloc(run->num_nodes, sizeof *reports);
  /* The keys homed on each node, counted once for all (every node has the
   * setup's layout): a pass over the key space per node took longer than
   * a short run of a large cluster. */
  const ps_layout *layout = run_setup_layout(s->setup);
  uint64_t *homed = malloc(ps_layout_homes(layout) * sizeof *homed);
  bool ok = reports != NULL && homed != NULL;
  if (ok) ps_layout_homed_counts(layout, homed);
  for (uint32_t i = 0; ok && i < run->num_nodes; i++) {
    sim_node *n = &run->nodes[i];
    ok = run_report_make(&reports[i], n->core, n->num_workers, homed) == PS_OK;
    if (ok) reports[i].cpu_s = run->cpu_s[i];
    if (ok) reports[i].io_wakeups = (double)n->io.wakeups;
    if (ok) reports[i].io_cpu_s = n->io.cpu_s;
    if (ok) reports[i].io_sched = thread_sched(&n->io_out.thread);
    for (uint32_t k = 0; ok && k < n->num_workers; k++) {
      ok = run_report_worker(&reports[i], &n->workers[k].rw) == PS_OK;
      run_thread_sched w = thread_sched(&n->workers[k].out.thread);
      run_thread_sched_add(&reports[i].worker_sched, &w);
    }
  }
  ok = ok && check_replicas(s, reports) && final_eval(s, reports);
  cJSON *m = ok ? run_metrics(reports, run->num_nodes, run->quiet_time,
                                  run_setup_quality(s->setup), s->err, s->errlen)
                : NULL;
  if (!ok) fail(s, "sim_run: out of memory building metrics");
  for (uint32_t i = 0; reports && i < run->num_nodes; i++) run_report_free(&reports[i]);
  free(reports);
  free(homed);
  return m;
}

cJSON *sim_run(const sim_run_args *args, char *err, size_t errlen) {
  sim_setup s = {.args = args, .err = err, .errlen = errlen};
  cJSON *metrics = NULL;
  if (check_args(&s) == 0 && configure(&s) == 0 && engine_start(&s) == 0 &&
      platform_load(&s) == 0 && run_init(&s) == 0 && spawn_actors(&s) == 0) {
    /* Set up, no step taken: a report at 0, which tells the setup's wall
     * time from the steps' (the runner's estimate calibrates on it). */
    if (args->progress) args->progress(args->progress_ctx, 0, 0);
    simgrid_run();
    if (check_outcome(&s) == 0 && save_params(&s) == 0) metrics = collect_metrics(&s);
  }
  teardown(&s);
  return metrics;
}
