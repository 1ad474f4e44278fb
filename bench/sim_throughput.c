/*
 * sim_throughput: how fast the simulator simulates, against bare SimGrid.
 *
 * For 8, 64 and 256 simulated nodes (1 worker each) with 100-key steps, and
 * for 8 nodes with 1000-key steps, it runs, each in its own child process
 * (SimGrid allows one engine per process):
 *
 *   pslab  sim_run on a zipf workload with batched keys (`batch` reads and
 *          `batch` writes per step, skew 1.1, 100k keys of 16 floats, no
 *          locality, static hash partition, fast local access, the default
 *          cost model): simulated key accesses and messages per wall-clock
 *          second;
 *   raw    bare SimGrid on the same platform with (to rounding) the same
 *          number of messages of the same mean size, all of that size and
 *          then (but at 256 nodes) varied uniformly within +-50%, as pslab's
 *          sizes vary with the keys each message carries (SimGrid's cost
 *          depends on it: distinct sizes end at distinct times, so more
 *          events re-solve the flow model): per ordered pair of
 *          nodes (i, j) a client actor on i that puts a request and gets the
 *          reply, and a server actor on j that gets it and puts the reply,
 *          all blocking calls on the pair's own two mailboxes; payloads are
 *          never touched. Like pslab's pulls, every node talks to all others
 *          at once, so SimGrid's flow model has a similar load. Then (but
 *          at 256 nodes) uniform sizes again with a sleep per message at
 *          its receiver, the handling time of pslab's cost model (about its
 *          mean per message): pslab's receivers sleep so for every message,
 *          one more SimGrid activity per message that the plain loop does
 *          not simulate. Not a goal's yardstick: it tells how much of the
 *          gap is SimGrid simulating pslab's cost model;
 *   cheap  (but at 256 nodes) pslab again, the same run under the network
 *          model latency_bandwidth (sim/latency_bandwidth.c: no flow sharing,
 *          so no flow model to solve), against the same bare loops under
 *          CM02: what a user who picks the cheap model for a scale study pays
 *          per message, since that model is offered for runs where SimGrid's
 *          solver dominates. Under CM02 SimGrid alone, simulating pslab's
 *          messages (sizes and times that vary, a handling sleep each), takes
 *          more wall time per message than the whole bare loop at 8 nodes
 *          (about 43% of pslab's time in a profile).
 *
 * and prints wall time per simulated message of each and pslab / raw, pslab's
 * overhead per message over raw SimGrid (bench/bench.h's lines; with rounds,
 * pslab and raw interleaved). Targets: that ratio <= 2 (judged on the
 * 100-key rows: with 1000-key steps a message carries ~100 keys of core
 * work), <= 1.5 on the 100-key rows at 8 and 64 nodes (under CM02, and
 * under latency_bandwidth against the same CM02 loops), and >= 1 million
 * simulated key accesses per wall second with batched keys. Wall time covers engine start, platform load and the run,
 * in both children; pslab's also covers building its nodes and the metrics.
 * Usage: sim_throughput [scale] [rounds], scale (default 1) multiplying the
 * steps, rounds (default 1) the measurements of each row.
 */
#include "bench/bench.h"
#include "sim/platform.h"
#include "sim/sim.h"
#include "run/run.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

typedef struct {
  double wall_s, accesses, messages, bytes, sim_s;
} figures;

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void bench_cluster(sim_cluster *c, uint32_t nodes) {
  sim_cluster_default(c);
  c->nodes = nodes;
  c->workers_per_node = 1;
}

/* ---------------------------------------------------------------- pslab */

typedef struct {
  uint32_t nodes;
  uint32_t batch; /* keys read, and written, per step */
  uint64_t steps;
  const char *model; /* cluster.network.model; NULL: the default, CM02 */
} pslab_case;

static double metric(const cJSON *m, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, name);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static int pslab_child(void *ctx, void *out_) {
  figures *out = out_;
  const pslab_case *pc = ctx;
  sim_cluster c;
  bench_cluster(&c, pc->nodes);
  if (pc->model) snprintf(c.network_model, sizeof c.network_model, "%s", pc->model);
  char wl_text[512];
  snprintf(wl_text, sizeof wl_text,
           "{\"type\":\"zipf\",\"keys\":100000,\"skew\":1.1,\"value_length\":16,"
           "\"reads_per_step\":%u,\"writes_per_step\":%u,\"steps_per_worker\":%llu,"
           "\"locality\":0}",
           (unsigned)pc->batch, (unsigned)pc->batch, (unsigned long long)pc->steps);
  cJSON *wl = cJSON_Parse(wl_text), *pol = cJSON_Parse("{\"type\":\"static\"}");
  sim_run_args a = {.run = {.workload = wl, .policy = pol, .seed = 1}, .cluster = &c};
  char err[512];
  double t0 = wall_now();
  cJSON *m = sim_run(&a, err, sizeof err);
  out->wall_s = wall_now() - t0;
  if (!m) fprintf(stderr, "sim_throughput: %s\n", err);
  out->accesses = metric(m, "accesses");
  out->messages = metric(m, "messages");
  out->bytes = metric(m, "bytes");
  out->sim_s = metric(m, "time_s");
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  return m ? 0 : -1;
}

/* ------------------------------------------------------------------ raw */

typedef struct {
  uint32_t nodes;
  uint64_t rounds; /* request/reply pairs per ordered pair of nodes */
  long size;       /* mean bytes per message */
  bool vary;       /* sizes uniform in [size/2, 3 size/2) instead of size */
  double handle_s; /* > 0: each receiver sleeps this long per message */
} raw_case;

/* One ordered pair of nodes (i, j): a client on i and a server on j. */
typedef struct {
  sg_mailbox_t requests, replies;
  const raw_case *rc;
  uint64_t rng;
} raw_pair;

static int raw_token; /* what travels: payloads are never touched */

/* The next message's size (a per-pair LCG: deterministic). */
static long raw_size(raw_pair *p) {
  if (!p->rc->vary) return p->rc->size;
  p->rng = p->rng * 6364136223846793005ULL + 1442695040888963407ULL;
  double u = (double)(p->rng >> 11) / 9007199254740992.0;
  return (long)((double)p->rc->size * (0.5 + u));
}

static void raw_server(int argc, char **argv) {
  (void)argc;
  (void)argv;
  raw_pair *p = sg_actor_self_get_data();
  sg_actor_daemonize(sg_actor_self());
  for (;;) {
    sg_mailbox_get(p->requests);
    if (p->rc->handle_s > 0) sg_actor_sleep_for(p->rc->handle_s);
    sg_mailbox_put(p->replies, &raw_token, raw_size(p));
  }
}

static void raw_client(int argc, char **argv) {
  (void)argc;
  (void)argv;
  raw_pair *p = sg_actor_self_get_data();
  for (uint64_t r = 0; r < p->rc->rounds; r++) {
    sg_mailbox_put(p->requests, &raw_token, raw_size(p));
    sg_mailbox_get(p->replies);
    if (p->rc->handle_s > 0) sg_actor_sleep_for(p->rc->handle_s);
  }
}

static void raw_spawn(const char *name, uint32_t node, void (*code)(int, char **), raw_pair *p) {
  char host[24];
  sim_cluster plain; /* bench_cluster's: no placement, a machine per node */
  sim_cluster_default(&plain);
  sim_machine_name(&plain, node, host, sizeof host);
  sg_actor_t actor = sg_actor_init(name, sg_host_by_name(host));
  sg_actor_set_data(actor, p);
  sg_actor_start(actor, code, 0, NULL);
}

static void raw_start_pairs(const raw_case *rc, raw_pair *pairs) {
  char name[48];
  size_t k = 0;
  for (uint32_t i = 0; i < rc->nodes; i++)
    for (uint32_t j = 0; j < rc->nodes; j++) {
      if (i == j) continue;
      raw_pair *p = &pairs[k++];
      snprintf(name, sizeof name, "req-%u-%u", (unsigned)i, (unsigned)j);
      p->requests = sg_mailbox_by_name(name);
      snprintf(name, sizeof name, "rep-%u-%u", (unsigned)i, (unsigned)j);
      p->replies = sg_mailbox_by_name(name);
      p->rc = rc;
      p->rng = k;
      raw_spawn("server", j, raw_server, p);
      raw_spawn("client", i, raw_client, p);
    }
}

static int raw_child(void *ctx, void *out_) {
  figures *out = out_;
  const raw_case *rc = ctx;
  sim_cluster c;
  bench_cluster(&c, rc->nodes);
  char path[512], err[256];
  /* 2 N (N - 1) actors (130k for 256 nodes): small stacks without guard
   * pages, or the process runs out of memory mappings. */
  int argc = 8;
  char *argv[] = {"raw", "--log=root.thresh:critical", "--cfg=network/model:CM02",
                  "--cfg=network/crosstraffic:0", "--cfg=network/TCP-gamma:0",
                  "--cfg=network/weight-S:0", "--cfg=contexts/stack-size:64", "--cfg=contexts/guard-size:0", NULL};
  double t0 = wall_now();
  simgrid_init(&argc, argv);
  if (sim_platform_write_temp(&c, path, sizeof path, err, sizeof err) != 0) return -1;
  simgrid_load_platform(path);
  unlink(path);
  size_t n_pairs = (size_t)rc->nodes * (rc->nodes - 1);
  raw_pair *pairs = calloc(n_pairs, sizeof *pairs);
  if (!pairs) return -1;
  raw_start_pairs(rc, pairs);
  simgrid_run();
  out->wall_s = wall_now() - t0;
  out->messages = 2.0 * (double)rc->rounds * (double)n_pairs;
  out->bytes = out->messages * (double)rc->size;
  out->sim_s = simgrid_get_clock();
  free(pairs);
  return 0;
}

/* ---------------------------------------------------------------- main */

/* A row's figures over its rounds: wall microseconds per simulated message
 * (pslab, raw with uniform sizes, raw with varied sizes) and simulated key
 * accesses per wall second. */
typedef struct {
  char names[6][112];
  bench_fig pslab, raw, vary, keys, handled, cheap;
} row_figs;

static void row_init(row_figs *r, const pslab_case *pc) {
  snprintf(r->names[0], sizeof r->names[0], "sim pslab, %u nodes, %u keys per step, per message",
           (unsigned)pc->nodes, (unsigned)pc->batch);
  snprintf(r->names[1], sizeof r->names[1], "bare SimGrid, %u nodes, uniform sizes, per message",
           (unsigned)pc->nodes);
  snprintf(r->names[2], sizeof r->names[2], "bare SimGrid, %u nodes, varied sizes, per message",
           (unsigned)pc->nodes);
  snprintf(r->names[3], sizeof r->names[3], "sim pslab, %u nodes, %u keys per step, accesses",
           (unsigned)pc->nodes, (unsigned)pc->batch);
  r->pslab = (bench_fig){.name = r->names[0], .unit = "us"};
  r->raw = (bench_fig){.name = r->names[1], .unit = "us"};
  r->vary = (bench_fig){.name = r->names[2], .unit = "us"};
  r->keys = (bench_fig){.name = r->names[3], .unit = "per wall s"};
  snprintf(r->names[4], sizeof r->names[4],
           "bare SimGrid, %u nodes, uniform sizes, a handling sleep per message, per message",
           (unsigned)pc->nodes);
  r->handled = (bench_fig){.name = r->names[4], .unit = "us"};
  snprintf(r->names[5], sizeof r->names[5],
           "sim pslab, %u nodes, %u keys per step, latency_bandwidth, per message",
           (unsigned)pc->nodes, (unsigned)pc->batch);
  r->cheap = (bench_fig){.name = r->names[5], .unit = "us"};
}

/* One round of a row: pslab, then raw with uniform sizes, then (if vary)
 * with varied ones and with uniform sizes and a handling sleep per message,
 * then (if vary) pslab again under the network model of sim/latency_bandwidth.c,
 * each in its own child. */
static int measure(const pslab_case *pc, bool vary, row_figs *r) {
  figures p, u, v = {0}, h = {0}, l = {0};
  if (bench_in_child(pslab_child, (void *)pc, &p, sizeof p) != 0) return -1;
  double pairs = (double)pc->nodes * (pc->nodes - 1);
  raw_case rc = {.nodes = pc->nodes,
                 .rounds = (uint64_t)(p.messages / (2.0 * pairs) + 0.5),
                 .size = (long)(p.bytes / p.messages + 0.5)};
  if (rc.rounds == 0) rc.rounds = 1;
  if (bench_in_child(raw_child, &rc, &u, sizeof u) != 0) return -1;
  rc.vary = true;
  if (vary && bench_in_child(raw_child, &rc, &v, sizeof v) != 0) return -1;
  /* pslab's cost model makes every message one more SimGrid activity: its
   * receiver sleeps for the handling (per message, key and byte) before the
   * core sees it. The same sleep in the bare loop: what SimGrid itself
   * charges for pslab's simulated activities. */
  sim_cluster c;
  sim_cluster_default(&c);
  rc.vary = false;
  rc.handle_s = c.cost.per_message_s + c.cost.per_byte_s * (double)rc.size +
                c.cost.per_key_s * (p.accesses / p.messages);
  if (vary && bench_in_child(raw_child, &rc, &h, sizeof h) != 0) return -1;
  pslab_case cheap = *pc;
  cheap.model = "latency_bandwidth";
  if (vary && bench_in_child(pslab_child, &cheap, &l, sizeof l) != 0) return -1;
  bench_add(&r->pslab, p.wall_s / p.messages * 1e6);
  bench_add(&r->raw, u.wall_s / u.messages * 1e6);
  if (vary) bench_add(&r->vary, v.wall_s / v.messages * 1e6);
  if (vary) bench_add(&r->handled, h.wall_s / h.messages * 1e6);
  if (vary) bench_add(&r->cheap, l.wall_s / l.messages * 1e6);
  bench_add(&r->keys, p.accesses / p.wall_s);
  return 0;
}

/* `sim_throughput --only pslab|raw|vary|handled NODES STEPS`: one child's
 * work in this process and nothing else (100-key steps), for instruction
 * counts (valgrind --tool=callgrind); pslab takes a network model (default
 * CM02) and the keys read, and written, per step (default 100) as further
 * arguments; raw (uniform sizes), vary (varied
 * sizes) and handled take the message count and mean size of a pslab run of
 * the same row, given as MESSAGES BYTES (handled also its ACCESSES, for the
 * handling cost per key; pslab prints all three). */
static int only(int argc, char **argv) {
  if (argc < 5) return 2;
  pslab_case pc = {.nodes = (uint32_t)atoi(argv[3]), .batch = 100,
                   .steps = (uint64_t)atoll(argv[4])};
  figures f;
  if (!strcmp(argv[2], "pslab")) {
    if (argc > 5 && strcmp(argv[5], "CM02")) pc.model = argv[5];
    if (argc > 6) pc.batch = (uint32_t)atoi(argv[6]);
    if (pc.batch == 0 || pc.nodes == 0) return 2;
    if (pslab_child(&pc, &f) != 0) return 1;
    printf("pslab: %.0f messages, %.0f bytes, %.0f accesses, simulated %.17g s\n", f.messages,
           f.bytes, f.accesses, f.sim_s);
    return 0;
  }
  if (argc < 7 || pc.nodes < 2) return 2;
  double messages = atof(argv[5]), bytes = atof(argv[6]);
  double pairs = (double)pc.nodes * (pc.nodes - 1);
  raw_case rc = {.nodes = pc.nodes, .rounds = (uint64_t)(messages / (2.0 * pairs) + 0.5),
                 .size = (long)(bytes / messages + 0.5)};
  if (!strcmp(argv[2], "handled")) {
    sim_cluster c;
    sim_cluster_default(&c);
    /* ACCESSES (the pslab run's key accesses) adds the per-key cost, as
     * measure() does; without it the sleep leaves that part out. */
    double accesses = argc > 7 ? atof(argv[7]) : 0;
    rc.handle_s = c.cost.per_message_s + c.cost.per_byte_s * (double)rc.size +
                  c.cost.per_key_s * (accesses / messages);
  } else if (!strcmp(argv[2], "vary")) {
    rc.vary = true;
  } else if (strcmp(argv[2], "raw")) {
    return 2;
  }
  if (raw_child(&rc, &f) != 0) return 1;
  printf("%s: %.0f messages\n", argv[2], f.messages);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--only")) {
    int rc = only(argc, argv);
    if (rc == 2)
      fprintf(stderr, "usage: sim_throughput --only pslab NODES STEPS [NETWORK_MODEL "
                      "[KEYS_PER_STEP]] | --only raw|vary NODES STEPS MESSAGES BYTES | --only handled NODES "
                      "STEPS MESSAGES BYTES [ACCESSES]\n");
    return rc;
  }
  double scale = argc > 1 ? atof(argv[1]) : 1.0;
  int rounds = argc > 2 ? atoi(argv[2]) : 1;
  if (!(scale > 0)) scale = 1.0;
  if (rounds < 1 || rounds > BENCH_MAX_ROUNDS) {
    fprintf(stderr, "usage: sim_throughput [scale] [rounds 1..%d]\n", BENCH_MAX_ROUNDS);
    return 2;
  }
  /* Steps per worker at scale 1: each row takes seconds to tens of seconds
   * (SimGrid's flow model costs more per message as the number of concurrent
   * flows grows with the cluster). Raw with varied sizes is skipped at 256
   * nodes: its 65k concurrent flows of distinct sizes take ~10 minutes. */
  /* sparse: messages carry about a key each (accesses per message 1.1 at 8
   * nodes with 12-key steps, 1.2 at 64 nodes with 100-key steps; 8 nodes
   * with 100-key steps: about 6), so per message they weigh the simulator
   * more than the core's work per key. */
  static const struct {
    pslab_case pc;
    bool vary, sparse;
  } rows[] = {{{8, 100, 2000, NULL}, true, false}, {{8, 12, 16000, NULL}, true, true},
              {{64, 100, 40, NULL}, true, true}, {{256, 100, 6, NULL}, false, false},
              {{8, 1000, 200, NULL}, true, false}};
  printf("sim_throughput: pslab (zipf, `batch` reads + writes per step, static hash) against "
         "bare SimGrid request/reply per node pair (uniform, then varied sizes), CM02, 1 "
         "worker per node; wall time per simulated message, medians of %d rounds\n", rounds);
  double worst = 0, worst_vary = 0, best_keys = 0, keys_100 = 1e300;
  /* The per-message goal, at 8 and 64 nodes: CM02 against uniform and varied
   * sizes, then latency_bandwidth against the same; on the 100-key rows and
   * on the sparse ones. */
  double small[4] = {0}, sparse[4] = {0};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    pslab_case pc = rows[i].pc;
    pc.steps = (uint64_t)(pc.steps * scale);
    if (pc.steps == 0) pc.steps = 1;
    row_figs r;
    row_init(&r, &pc);
    for (int k = 0; k < rounds; k++)
      if (measure(&pc, rows[i].vary, &r) != 0) {
        fprintf(stderr, "sim_throughput: %u nodes, %u keys per step: failed\n",
                (unsigned)pc.nodes, (unsigned)pc.batch);
        return 1;
      }
    bench_print(&r.raw);
    double ratio = bench_print_ratio(&r.pslab, &r.raw, false), ratio_vary = 0;
    if (rows[i].vary) {
      bench_print(&r.vary);
      ratio_vary = bench_print_ratio(&r.pslab, &r.vary, false);
      bench_print(&r.handled);
      bench_print_ratio(&r.pslab, &r.handled, false);
    }
    double cheap = 0, cheap_vary = 0;
    if (rows[i].vary) {
      cheap = bench_print_ratio(&r.cheap, &r.raw, false);
      cheap_vary = bench_print_ratio(&r.cheap, &r.vary, false);
    }
    bench_print(&r.keys);
    fflush(stdout);
    double keys = bench_median(r.keys.v, r.keys.n, NULL, NULL);
    if (keys > best_keys) best_keys = keys;
    if (pc.nodes <= 64 && (pc.batch == 100 || rows[i].sparse)) {
      double *w = rows[i].sparse ? sparse : small, got[4] = {ratio, ratio_vary, cheap, cheap_vary};
      for (int g = 0; g < 4; g++)
        if (got[g] > w[g]) w[g] = got[g];
      if (rows[i].sparse && pc.batch == 100)
        for (int g = 0; g < 4; g++)
          if (got[g] > small[g]) small[g] = got[g];
    }
    if (pc.batch != 100) continue;
    if (ratio > worst) worst = ratio;
    if (ratio_vary > worst_vary) worst_vary = ratio_vary;
    if (keys < keys_100) keys_100 = keys;
  }
  /* With 1000-key steps a message carries ~100 keys of core work: per
   * message, that row measures the core, not the simulator. */
  bench_goal("sim pslab per message against bare SimGrid, uniform sizes, worst 100-key row",
             worst, "<=", 2);
  bench_goal("sim pslab per message against bare SimGrid, varied sizes, worst 100-key row",
             worst_vary, "<=", 2);
  /* The per-message goal: within 1.5x of bare SimGrid at 8 and 64 nodes. Also
   * with pslab under latency_bandwidth, the model offered for when
   * SimGrid's flow model dominates (the yardstick keeps CM02): what a user
   * who picks the cheap model pays per message. */
  static const char *const goal_names[4] = {
      "sim pslab per message against bare SimGrid, uniform sizes, 8 and 64 nodes",
      "sim pslab per message against bare SimGrid, varied sizes, 8 and 64 nodes",
      "sim pslab under latency_bandwidth per message against bare SimGrid, uniform sizes, 8 "
      "and 64 nodes",
      "sim pslab under latency_bandwidth per message against bare SimGrid, varied sizes, 8 "
      "and 64 nodes"};
  char name[200];
  for (int g = 0; g < 4; g++) {
    bench_goal(goal_names[g], small[g], "<=", 1.5);
    snprintf(name, sizeof name, "%s, about a key per message", goal_names[g]);
    bench_goal(name, sparse[g], "<=", 1.5);
  }
  printf("goal simulated key accesses per wall second with batched keys: best %.3g (lowest "
         "with 100-key steps %.3g) >= 1e+06: %s\n", best_keys, keys_100,
         best_keys >= 1e6 ? "met" : "missed");
  return 0;
}
